#!/usr/bin/env python3
"""Turn a capture into a libFuzzer seed corpus for tests/fuzz/fuzz_rx.c:
one file per distinct BTH opcode (up to PER_OPCODE each), written as mode 2
(byte 0x02, then the frame from the BTH on: the fuzzer re-wraps it in a
valid Ethernet/IPv4/UDP header, forces the DestQP to its QP and recomputes
the ICRC) plus one raw frame (mode 0) per opcode.

usage: pcap-to-corpus.py CAPTURE.pcap OUT_DIR [PER_OPCODE]"""
import hashlib
import os
import struct
import sys


def frames(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack_from("<I", data, 0)[0]
    if magic not in (0xA1B2C3D4, 0xA1B23C4D):
        sys.exit("pcap-to-corpus: %s is not a little-endian pcap file" % path)
    off = 24
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack_from("<IIII", data, off)
        off += 16
        yield data[off:off + incl]
        off += incl


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    per = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    os.makedirs(sys.argv[2], exist_ok=True)
    seen = {}
    for fr in frames(sys.argv[1]):
        # Ethernet/IPv4/UDP 4791 only
        if len(fr) < 42 + 12 or fr[12:14] != b"\x08\x00" or fr[23] != 17:
            continue
        if struct.unpack_from(">H", fr, 36)[0] != 4791:
            continue
        op = fr[42]
        if seen.get(op, 0) >= per:
            continue
        seen[op] = seen.get(op, 0) + 1
        for mode, body in ((2, fr[42:]), (0, fr)):
            blob = bytes([mode]) + body
            name = "op%02x-%s" % (op, hashlib.sha1(blob).hexdigest()[:12])
            with open(os.path.join(sys.argv[2], name), "wb") as f:
                f.write(blob)
    print("pcap-to-corpus: %d opcodes, %d files" % (len(seen), 2 * sum(seen.values())))


if __name__ == "__main__":
    main()
