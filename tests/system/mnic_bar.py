#!/usr/bin/env python3
"""Read a NIC's init segment from its BAR file, as a host would (layout:
abi/include/mnic/abi.h).  Prints key=value lines; exit 1 if the magic is
wrong.  usage: mnic_bar.py BAR_FILE"""
import struct
import sys

MAGIC = 0x43494e4d
FMT = "<IIIIII6s2x32sIIQQQQQQ"   # init segment up to health.rx_dropped
IRQ_OFF = 176                     # offsetof(struct mnic_init_seg, irq_nic_id)
IRQ_VALID = 0x80000000


def main():
    with open(sys.argv[1], "rb") as f:
        raw = f.read(struct.calcsize(FMT))
        f.seek(IRQ_OFF)
        irq = struct.unpack("<9I", f.read(36))
        irq_nic_id, hosts = irq[0], [h & 0xffff for h in irq[1:] if h & IRQ_VALID]
    (magic, fw, rev, board_id, state, _r0, mac, name, fatal, _detail, pc,
     uptime, heartbeat, rx, tx, drop) = struct.unpack(FMT, raw)
    print("magic=0x%08x" % magic)
    print("fw_version=%d.%d.%d" % (fw >> 24, (fw >> 16) & 0xff, fw & 0xffff))
    print("cmdif_rev=%d board_id=%d state=%d" % (rev, board_id, state))
    print("mac=%s board=%s" % (":".join("%02x" % b for b in mac),
                               name.split(b"\0")[0].decode()))
    print("uptime_ns=%d heartbeat=%d rx=%d tx=%d drop=%d fatal=%d" %
          (uptime, heartbeat, rx, tx, drop, fatal))
    print("irq_nic_id=%s irq_hosts=%s" %
          ((irq_nic_id & 0xffff) if irq_nic_id & IRQ_VALID else "none",
           ",".join(map(str, hosts)) or "none"))
    return 0 if magic == MAGIC else 1


if __name__ == "__main__":
    sys.exit(main())
