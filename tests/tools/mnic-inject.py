#!/usr/bin/env python3
"""Inject one MigrOS RESUME frame on a vde switch, as an attacker on the
wire would (tests/integration/migrate_posix.sh, scenario "forged").

  mnic-inject.py --switch DIR --src-mac MAC --src-ip IP --dst-mac MAC
                 --dst-ip IP --qp QPN:PSN [--qp ...] [--epoch N]
                 (--mac HEX16 | --no-mac)

One frame per --qp (the receiver's QPN and the PSN the RESUME carries).

  mnic-inject.py --switch DIR --replay PCAP --replay-from MAC
                 [--rewrite-ip IP | --rewrite-eth-src MAC]

sends again every RESUME the NIC with Ethernet address MAC sent in the
capture PCAP (MNIC_PCAP of the POSIX NIC), as captured, or rewritten as an
attacker would: --rewrite-ip puts another IPv4 address into the RESUME's
payload (its "new address") and computes the ICRC again (anyone can; the
MAC covers the field), --rewrite-eth-src changes only the Ethernet source
(covered by neither the ICRC nor the MAC).

The frame is built independently of the firmware, from the specs:
Ethernet II, IPv4 (RFC 791, DF, checksum), UDP to 4791 (checksum 0),
BTH (IBA 9.2: opcode 0x19 = MigrOS RESUME, P_Key 0xffff, AckReq), a zero
AETH (MigrOS sends it so), the version-1 payload (rocev2/migrate.c header
comment: version 1, flags bit 0 = MAC, epoch --epoch, the new IPv4 and
Ethernet addresses = --src-ip/--src-mac), the 8-byte MAC unless
--no-mac, and the ICRC
(IBA A17.3.3: CRC-32 over 8 bytes of 0xff, the IPv4 header with TOS, TTL
and checksum as ones, UDP with checksum as ones, BTH with byte 4 as ones,
and the rest; stored least significant byte first).  A frame with a good
ICRC reaches the RESUME check itself, so a drop is the MAC check's.
Sent with libvdeplug (the switch's own client library) through ctypes."""
import argparse
import ctypes
import struct
import sys
import time
import zlib


def mac_bytes(s):
    b = bytes(int(x, 16) for x in s.split(":"))
    if len(b) != 6:
        raise ValueError("bad MAC " + s)
    return b


def ip_bytes(s):
    b = bytes(int(x) for x in s.split("."))
    if len(b) != 4 or any(x > 255 for x in b):
        raise ValueError("bad IPv4 " + s)
    return b


def ipv4_csum(hdr):
    s = sum(struct.unpack("!10H", hdr))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


def build(a, dqpn, psn):
    payload = struct.pack("!BBHI4s6sH", 1, 0 if a.no_mac else 1, 0, a.epoch,
                          ip_bytes(a.src_ip), mac_bytes(a.src_mac), 0)
    if not a.no_mac:
        payload += bytes.fromhex(a.mac)
    bth = struct.pack("!BBHBBHBBH", 0x19, 0, 0xffff, 0, (dqpn >> 16) & 0xff,
                      dqpn & 0xffff, 0x80, (psn >> 16) & 0xff, psn & 0xffff)
    aeth = bytes(4)
    transport = bth + aeth + payload
    udp_len = 8 + len(transport) + 4
    udp = struct.pack("!HHHH", 0xc000 | (dqpn & 0x3fff), 4791, udp_len, 0)
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, 0, 0x4000, 64, 17, 0,
                               ip_bytes(a.src_ip), ip_bytes(a.dst_ip)))
    ip[10:12] = struct.pack("!H", ipv4_csum(bytes(ip)))
    eth = mac_bytes(a.dst_mac) + mac_bytes(a.src_mac) + b"\x08\x00"
    return eth + bytes(ip) + udp + transport + struct.pack("<I", icrc_of(bytes(ip) + udp + transport))


def icrc_of(ip_to_payload):
    """IBA A17.3.3 over the IPv4 header .. payload (no ICRC)."""
    masked = bytearray(ip_to_payload)
    for off in (1, 8, 10, 11, 20 + 6, 20 + 7, 28 + 4):
        masked[off] = 0xff
    return zlib.crc32(b"\xff" * 8 + bytes(masked)) & 0xffffffff


RESUME_PAYLOAD = 14 + 20 + 8 + 12 + 4     # Ethernet, IPv4, UDP, BTH, AETH


def replayed(a):
    """The RESUMEs --replay-from sent in the capture, as --rewrite-* says."""
    with open(a.replay, "rb") as f:
        data = f.read()
    magic = data[:4]
    order = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    src = mac_bytes(a.replay_from)
    frames, seen, off = [], set(), 24
    while off + 16 <= len(data):
        incl = struct.unpack(order + "I", data[off + 8:off + 12])[0]
        fr = data[off + 16:off + 16 + incl]
        off += 16 + incl
        if (len(fr) > RESUME_PAYLOAD + 20 and fr[6:12] == src and fr[12:14] == b"\x08\x00" and
                fr[23] == 17 and fr[36:38] == b"\x12\xb7" and fr[42] == 0x19 and fr not in seen):
            seen.add(fr)
            fr = bytearray(fr)
            if a.rewrite_ip:
                fr[RESUME_PAYLOAD + 8:RESUME_PAYLOAD + 12] = ip_bytes(a.rewrite_ip)
                fr[-4:] = struct.pack("<I", icrc_of(bytes(fr[14:-4])))
            if a.rewrite_eth_src:
                fr[6:12] = mac_bytes(a.rewrite_eth_src)
            frames.append(bytes(fr))
    return frames


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--switch", required=True)
    p.add_argument("--replay", help="a capture (pcap) to take RESUMEs from")
    p.add_argument("--replay-from", help="the Ethernet source of the RESUMEs to replay")
    r = p.add_mutually_exclusive_group()
    r.add_argument("--rewrite-ip", help="replay with this IPv4 as the payload's new address")
    r.add_argument("--rewrite-eth-src", help="replay with this Ethernet source")
    p.add_argument("--src-mac")
    p.add_argument("--src-ip")
    p.add_argument("--dst-mac")
    p.add_argument("--dst-ip")
    p.add_argument("--qp", action="append",
                   type=lambda s: tuple(int(x, 0) for x in s.split(":", 1)),
                   help="QPN:PSN (repeat for more frames)")
    p.add_argument("--repeat", type=int, default=1, help="send every frame N times")
    p.add_argument("--epoch", type=lambda s: int(s, 0), default=1,
                   help="the RESUME's epoch (default 1: a first migration)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--mac", help="8-byte RESUME MAC as 16 hex digits")
    g.add_argument("--no-mac", action="store_true")
    a = p.parse_args()
    if a.replay:
        if not a.replay_from:
            p.error("--replay needs --replay-from")
        frames = replayed(a)
        if not frames:
            p.error("no RESUME from %s in %s" % (a.replay_from, a.replay))
    else:
        if not (a.src_mac and a.src_ip and a.dst_mac and a.dst_ip and a.qp) or \
                (a.mac is None and not a.no_mac):
            p.error("--src-mac, --src-ip, --dst-mac, --dst-ip, --qp and --mac or --no-mac")
        frames = None
    if a.mac is not None and len(bytes.fromhex(a.mac)) != 8:
        p.error("--mac takes 16 hex digits")
    for t in a.qp or []:
        if len(t) != 2 or not (0 < t[0] <= 0xffffff and 0 <= t[1] <= 0xffffff):
            p.error("--qp QPN:PSN, both 24-bit")
    try:
        lib = ctypes.CDLL("libvdeplug.so.2")
    except OSError as e:
        print("mnic-inject: cannot load libvdeplug.so.2 (%s): run scripts/deps.sh" % e,
              file=sys.stderr)
        return 3
    lib.vde_open_real.restype = ctypes.c_void_p
    lib.vde_open_real.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p]
    lib.vde_send.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]
    lib.vde_close.argtypes = [ctypes.c_void_p]
    # vde_open() is a macro for vde_open_real(url, descr, LIBVDEPLUG_INTERFACE_VERSION, args)
    conn = lib.vde_open_real(a.switch.encode(), b"mnic-inject", 1, None)
    if not conn:
        print("mnic-inject: cannot join the switch at %s" % a.switch, file=sys.stderr)
        return 3
    rc = 0
    # The switch learns a new port asynchronously, and each port's socket
    # queues only a few datagrams (net.unix.max_dgram_qlen): a burst from a
    # port that was just opened is dropped.  Settle, then pace.
    time.sleep(0.05)
    if frames is not None:
        for frame in frames * max(1, min(a.repeat, 100)):
            time.sleep(0.002)
            if lib.vde_send(conn, frame, len(frame), 0) != len(frame):
                print("mnic-inject: vde_send failed", file=sys.stderr)
                rc = 3
                break
        print("replayed %d RESUMEs from %s%s, %d times each" %
              (len(frames), a.replay_from,
               " with payload address " + a.rewrite_ip if a.rewrite_ip else
               " with Ethernet source " + a.rewrite_eth_src if a.rewrite_eth_src else "",
               max(1, min(a.repeat, 100))))
    for dqpn, psn in (a.qp or []) * max(1, min(a.repeat, 100)) if frames is None else []:
        frame = build(a, dqpn, psn)
        time.sleep(0.002)
        n = lib.vde_send(conn, frame, len(frame), 0)
        if n != len(frame):
            print("mnic-inject: vde_send returned %d for %d bytes" % (n, len(frame)),
                  file=sys.stderr)
            rc = 3
            break
        print("injected RESUME to qpn 0x%06x psn 0x%06x epoch %u from %s (%s), %s, %d bytes" %
              (dqpn, psn, a.epoch, a.src_ip, a.src_mac,
               "no MAC" if a.no_mac else "MAC " + a.mac, len(frame)))
    time.sleep(0.05)   # let the switch forward the last frames before the port goes
    lib.vde_close(conn)
    return rc


if __name__ == "__main__":
    sys.exit(main())
