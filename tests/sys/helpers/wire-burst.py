#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Sends N one-page READ requests back-to-back on one authenticated
connection to a leap-memd (TCP), then reads the N replies, and prints
"burst n=N elapsed_us=T spaced=K ids_ok=0|1".  K counts the replies that
came at least half of DELAY_US (the optional fourth argument) after the
one before (half: a server's timer fires a little late or early).
Used by tests/sys/backend.t to check that --delay-us is a latency (N
requests in flight each wait the delay at once: K near 0, however long a
stall of the machine delays them all), not an occupancy (one delay after
another: K = N - 1).  The wire format is include/leap/wire.h's: 24-byte
header, HELLO then AUTH (HMAC-SHA256)."""
import hashlib
import hmac
import os
import socket
import struct
import sys
import time

MAGIC, VERSION, REPLY = 0x5750414C, 1, 1
HELLO, AUTH, READ = 1, 2, 3


def hdr(op, rid, length):
    return struct.pack("<IHBBQII", MAGIC, VERSION, op, 0, rid, length, 0)


def recv_exact(s, n):
    b = bytearray()
    while len(b) < n:
        chunk = s.recv(n - len(b))
        if not chunk:
            sys.exit("wire-burst: connection closed")
        b += chunk
    return bytes(b)


def recv_msg(s):
    h = recv_exact(s, 24)
    magic, ver, op, flags, rid, length, _ = struct.unpack("<IHBBQII", h)
    if magic != MAGIC or not flags & REPLY:
        sys.exit("wire-burst: bad reply header")
    return op, rid, recv_exact(s, length)


def main():
    addr, secret_file, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    delay_s = int(sys.argv[4]) / 1e6 if len(sys.argv) > 4 else 0
    host, port = addr.rsplit(":", 1)
    secret = open(secret_file, "rb").read()
    if secret.endswith(b"\n"):
        secret = secret[:-1]
    s = socket.create_connection((host, int(port)))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    cn = os.urandom(32)
    s.sendall(hdr(HELLO, 1, 40) + struct.pack("<HHI", 1, 1, 0) + cn)
    op, _, p = recv_msg(s)
    if op != HELLO:
        sys.exit("wire-burst: HELLO refused")
    sn = p[24:56]
    mac = hmac.new(secret, b"C" + sn + cn, hashlib.sha256).digest()
    s.sendall(hdr(AUTH, 2, 32) + mac)
    op, _, _ = recv_msg(s)
    if op != AUTH:
        sys.exit("wire-burst: AUTH refused")
    reqs = b"".join(hdr(READ, 100 + i, 16) + struct.pack("<IIQ", 0, 1, i * 4096)
                    for i in range(n))
    t0 = time.monotonic()
    s.sendall(reqs)
    ids, spaced, last = [], 0, None
    for _ in range(n):
        ids.append(recv_msg(s)[1])
        now = time.monotonic()
        if delay_s and last is not None and now - last >= delay_s / 2:
            spaced += 1
        last = now
    us = int((time.monotonic() - t0) * 1e6)
    ok = sorted(ids) == [100 + i for i in range(n)]
    print(f"burst n={n} elapsed_us={us} spaced={spaced} ids_ok={int(ok)}")


main()
