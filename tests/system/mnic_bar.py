#!/usr/bin/env python3
"""Read a NIC's init segment from its BAR file, as a host would (layout:
abi/include/mnic/abi.h).  Prints key=value lines; exit 1 if the magic is
wrong.  usage: mnic_bar.py BAR_FILE"""
import struct
import sys

MAGIC = 0x43494e4d
FMT = "<IIIIII6s2x32sIIQQQQQQ"   # init segment up to health.rx_dropped


def main():
    with open(sys.argv[1], "rb") as f:
        raw = f.read(struct.calcsize(FMT))
    (magic, fw, rev, board_id, state, _r0, mac, name, fatal, _detail, pc,
     uptime, heartbeat, rx, tx, drop) = struct.unpack(FMT, raw)
    print("magic=0x%08x" % magic)
    print("fw_version=%d.%d.%d" % (fw >> 24, (fw >> 16) & 0xff, fw & 0xffff))
    print("cmdif_rev=%d board_id=%d state=%d" % (rev, board_id, state))
    print("mac=%s board=%s" % (":".join("%02x" % b for b in mac),
                               name.split(b"\0")[0].decode()))
    print("uptime_ns=%d heartbeat=%d rx=%d tx=%d drop=%d fatal=%d" %
          (uptime, heartbeat, rx, tx, drop, fatal))
    return 0 if magic == MAGIC else 1


if __name__ == "__main__":
    sys.exit(main())
