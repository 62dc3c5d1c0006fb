#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# tests/sys/helpers/nbd-peer.py SWAPD SECRET ADDR LOG MODE: plays the kernel's
# side of NBD's transmission phase against `leap-swapd --frontend nbd
# --nbd-socket FD` over a socketpair (tests/sys/backend-nbd.t), with valid,
# pipelined and hostile requests.  Prints "ok N - ..." / "not ok N - ...".
#   MODE normal: I/O, refusals, TRIM, then NBD_CMD_DISC (exit 0 expected)
#   MODE magic:  a request with a wrong magic (connection closed, exit 1)
import os, random, socket, struct, subprocess, sys, time

swapd, secret, addr, log, mode = sys.argv[1:6]
SIZE = 16 << 20
PAGE = 4096
REQ_MAGIC, REP_MAGIC = 0x25609513, 0x67446698
READ, WRITE, DISC, FLUSH, TRIM = 0, 1, 2, 3, 4
FUA = 1
EINVAL, ENOSPC, EOVERFLOW = 22, 28, 75
n = 0


def check(cond, desc):
    global n
    n += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", n, desc), flush=True)
    return cond


a, b = socket.socketpair()
a.settimeout(20)
p = subprocess.Popen([swapd, "--frontend", "nbd", "--nbd-socket", str(b.fileno()),
                      "--size", str(SIZE), "-s", addr, "--secret-file", secret,
                      "--threads", "4", "--control", log + ".ctl", "--cache-pages", "64"],
                     pass_fds=[b.fileno()], stdin=subprocess.DEVNULL,
                     stderr=open(log, "w"))
b.close()
handle = 0


def send(typ, off, length, flags=0, data=b"", magic=REQ_MAGIC):
    global handle
    handle += 1
    a.sendall(struct.pack(">IHHQQI", magic, flags, typ, handle, off, length) + data)
    return handle


def recv_exact(k):
    buf = b""
    while len(buf) < k:
        c = a.recv(k - len(buf))
        if not c:
            raise EOFError
        buf += c
    return buf


def reply(expect_data=0):
    m, err, h = struct.unpack(">IIQ", recv_exact(16))
    assert m == REP_MAGIC, hex(m)
    data = recv_exact(expect_data) if (expect_data and not err) else b""
    return h, err, data


def io(typ, off, length, flags=0, data=b""):
    h = send(typ, off, length, flags, data)
    rh, err, d = reply(length if typ == READ else 0)
    assert rh == h, (rh, h)
    return err, d


if mode == "magic":
    err, _ = io(READ, 0, PAGE)
    check(err == 0, "a read before the bad request is served")
    send(READ, 0, PAGE, magic=0xdeadbeef)
    try:
        got = a.recv(16)
    except socket.timeout:
        got = b"timeout"
    check(got == b"", "a request with a wrong magic closes the connection, no reply")
    rc = p.wait(timeout=20)
    check(rc == 1, "leap-swapd exits 1 after losing the stream (exit %d)" % rc)
    check("bad magic 0xdeadbeef" in open(log).read(), "... and logs the bad magic")
    sys.exit(0)

random.seed(5)
pat = bytes(random.getrandbits(8) for _ in range(16 * PAGE))
check(io(WRITE, 0, len(pat), data=pat)[0] == 0, "WRITE of 16 pages")
err, d = io(READ, 0, len(pat))
check(err == 0 and d == pat, "READ returns them")

# Pipelined: 64 requests in flight, replies matched by handle.
want = {}
for i in range(64):
    pg = random.randrange(16)
    want[send(READ, pg * PAGE, PAGE)] = pat[pg * PAGE:(pg + 1) * PAGE]
good = 0
for _ in range(64):
    m, err, h = struct.unpack(">IIQ", recv_exact(16))
    good += m == REP_MAGIC and err == 0 and recv_exact(PAGE) == want.pop(h, None)
check(good == 64 and not want, "64 pipelined READs: every reply matched to its request (%d)" % good)

refusals = [
    ("READ at an unaligned offset", (READ, 512, PAGE), EINVAL),
    ("READ of length 0", (READ, 0, 0), EINVAL),
    ("READ of a partial block", (READ, 0, 1000), EINVAL),
    ("READ at the end of the device", (READ, SIZE, PAGE), EINVAL),
    ("READ across the end", (READ, SIZE - PAGE, 2 * PAGE), EINVAL),
    ("READ whose offset + length wraps", (READ, (1 << 64) - PAGE, 2 * PAGE), EINVAL),
    ("READ above the 1 MiB buffer", (READ, 0, 2 << 20), EOVERFLOW),
    ("unknown command 6 (WRITE_ZEROES)", (6, 0, PAGE), EINVAL),
    ("unknown command 0x7fff", (0x7fff, 0, PAGE), EINVAL),
    ("READ with FUA", (READ, 0, PAGE, FUA), EINVAL),
    ("TRIM of a partial block", (TRIM, 0, 100), EINVAL),
    ("TRIM across the end", (TRIM, SIZE - PAGE, 2 * PAGE), EINVAL),
]
for desc, req, e in refusals:
    err, _ = io(*req)
    check(err == e, "%s: error %d (want %d)" % (desc, err, e))
junk = b"\xee" * PAGE
for desc, off, length, flags, e in [
        ("WRITE at an unaligned offset", 100, PAGE, 0, EINVAL),
        ("WRITE past the end", SIZE, PAGE, 0, ENOSPC),
        ("WRITE with an unknown flag", 0, PAGE, 0x8000, EINVAL),
        ("WRITE above the 1 MiB buffer", 0, 2 << 20, 0, EOVERFLOW)]:
    err, _ = io(WRITE, off, length, flags, (junk * (length // PAGE + 1))[:length])
    check(err == e, "%s: error %d (want %d), its data consumed" % (desc, err, e))
err, d = io(READ, 0, len(pat))
check(err == 0 and d == pat, "after every refusal the stream is in step and no page changed")

page = bytes(range(256)) * 16
check(io(WRITE, 8 * PAGE, PAGE, FUA, page)[0] == 0, "WRITE with FUA")
pat = pat[:8 * PAGE] + page + pat[9 * PAGE:]
check(io(FLUSH, 0, 0)[0] == 0, "FLUSH")
check(io(TRIM, 4 * PAGE, 2 * PAGE)[0] == 0, "TRIM of pages 4-5")
pat = pat[:4 * PAGE] + bytes(2 * PAGE) + pat[6 * PAGE:]
err, d = io(READ, 0, len(pat))
check(err == 0 and d == pat, "trimmed pages read as zeros, the others (and the FUA write) intact")

send(DISC, 0, 0)
rc = p.wait(timeout=20)
check(rc == 0, "NBD_CMD_DISC: leap-swapd exits 0 (exit %d)" % rc)
text = open(log).read()
# Rate-limited: the first 8, then powers of two (a flood stays readable).
check(text.count("refused request") == 9 and "refused request #16:" in text,
      "refusals logged: #1-#8 and #16 of 16 (%d lines)" % text.count("refused request"))
check("errors=0" in text and "io_errors=0" in text and "pages_discarded=2" in text,
      "exit statistics: no I/O error, 2 pages discarded")
