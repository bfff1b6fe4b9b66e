#!/usr/bin/env python3
"""A hostile host on a POSIX NIC's doorbell channel (mnic/dbch.h;
tests/integration/doorbell_irq_posix.sh).

  dbch-hostile.py SOCKET

Connects to SOCKET ("<bar>.db") and sends, each answered or ignored as the
protocol says, never crashing the NIC:
  garbage      a 7-byte message, a 64-byte one, a wrong magic, a wrong
               version, a WELCOME (a type hosts may not send)
               -> dbch_bad_messages, no reply
  fds          a VECTOR without an fd, with two eventfds, with a pipe
               -> dbch_bad_fds, REPLY status BAD_FD (2)
  vector       a VECTOR for vector 9 -> dbch_bad_vectors, REPLY BAD_VECTOR (1)
  good         a VECTOR 0 with an eventfd -> REPLY OK (0)
  flood        40 connections at once (the NIC takes 16)
               -> dbch_hosts_refused: the rest see EOF without a WELCOME
Exit 0 when every reply was the one the protocol gives, 1 otherwise.
"""
import os
import socket
import struct
import sys

MAGIC, VERSION = 0x4843424D, 1
WELCOME, VECTOR, REPLY = 1, 2, 3
MSG = struct.Struct("<IHHHHI")   # struct mnic_dbch_msg: 16 bytes


def msg(typ, vector=0, magic=MAGIC, version=VERSION):
    return MSG.pack(magic, version, typ, vector, 0, 0)


def recv(s, timeout=5.0):
    s.settimeout(timeout)
    data, fds, _flags, _addr = socket.recv_fds(s, 64, 4)
    for fd in fds:
        os.close(fd)
    if not data:
        return None, len(fds)
    return MSG.unpack(data), len(fds)


def expect_reply(s, status, what):
    m, nfd = recv(s)
    if m is None or m[2] != REPLY or m[5] != status or nfd:
        sys.exit(f"dbch-hostile: {what}: got {m} with {nfd} fds, want REPLY status {status}")
    print(f"dbch-hostile: {what}: REPLY status {status}")


def main():
    path = sys.argv[1]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    m, nfd = recv(s)
    if m is None or m[0] != MAGIC or m[2] != WELCOME or nfd != 1 or m[4] < 1:
        sys.exit(f"dbch-hostile: no WELCOME with the ring eventfd: {m}, {nfd} fds")
    print(f"dbch-hostile: WELCOME, {m[4]} vector(s), ring eventfd")

    efd = os.eventfd(0)
    r, w = os.pipe()
    s.send(b"garbage")
    s.send(msg(VECTOR) + bytes(48))
    socket.send_fds(s, [msg(VECTOR, magic=0x12345678)], [efd])
    s.send(msg(VECTOR, version=7))
    s.send(msg(WELCOME))
    s.send(msg(VECTOR))                                  # no fd
    socket.send_fds(s, [msg(VECTOR)], [efd, efd])        # two
    socket.send_fds(s, [msg(VECTOR)], [w])               # a pipe
    for what in ("VECTOR without an fd", "VECTOR with two fds", "VECTOR with a pipe"):
        expect_reply(s, 2, what)
    socket.send_fds(s, [msg(VECTOR, vector=9)], [efd])
    expect_reply(s, 1, "VECTOR for vector 9")
    socket.send_fds(s, [msg(VECTOR)], [efd])
    expect_reply(s, 0, "VECTOR 0 with an eventfd")

    flood, welcomed, refused = [], 0, 0
    for _ in range(40):
        c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        c.connect(path)
        flood.append(c)
    for c in flood:
        m, _nfd = recv(c)
        if m is None:
            refused += 1
        elif m[2] == WELCOME:
            welcomed += 1
    print(f"dbch-hostile: flood of 40: {welcomed} welcomed, {refused} refused")
    if refused == 0 or welcomed + refused != 40:
        sys.exit("dbch-hostile: the NIC took every connection of the flood")
    for c in flood:
        c.close()
    s.close()
    for fd in (efd, r, w):
        os.close(fd)


if __name__ == "__main__":
    main()
