"""A VDE client of the tests' own, speaking the protocol fabric/mnic_switch.c's
header comment documents (the control stream's request, then one datagram
per Ethernet frame), and the ECN-capable IPv4/UDP test frames the switch
tests send.  Imported by tests/integration/switch_queue_ecn.sh and
switch_rate.sh (python3 with tests/tools on sys.path)."""
import os
import socket
import struct


def join(sw, name, magic=0xfeedface, tag="switch test"):
    """Join the switch at directory sw: (control stream, data socket), or
    (None, None) when the switch refuses."""
    me = f"{sw}/.py-{os.getpid()}-{name}"
    d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    d.bind(me)
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.connect(f"{sw}/ctl")
    # u32 magic | u32 version 3 | u32 type 0 (new control) | sockaddr_un | description
    try:
        c.send(struct.pack("=III", magic, 3, 0) + struct.pack("=H108s", socket.AF_UNIX, me.encode())
               + f"{tag} {name}".encode())
        reply = c.recv(110)
    except ConnectionError:             # refused: the switch closed the stream
        reply = b""
    os.unlink(me)
    if len(reply) != 110:
        return None, None
    fam, path = struct.unpack("=H108s", reply)
    assert fam == socket.AF_UNIX, fam
    d.connect(path.rstrip(b"\0").decode())
    return c, d


def csum(h):
    """The IPv4 header checksum of the 20 bytes h (checksum field included)."""
    s = sum(struct.unpack("!10H", h))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def frame(dst, src, seq, payload_len=1000):
    """An ECT(0) IPv4/UDP frame to port 4791 carrying seq in its first 4
    payload bytes (payload_len bytes of payload)."""
    payload = struct.pack("!I", seq) + bytes(payload_len - 4)
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0x02, 20 + 8 + len(payload), seq & 0xffff,
                               0x4000, 64, 17, 0, bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])))
    ip[10:12] = struct.pack("!H", csum(bytes(ip)))
    udp = struct.pack("!HHHH", 49152, 4791, 8 + len(payload), 0)
    return dst + src + b"\x08\x00" + bytes(ip) + udp + payload
