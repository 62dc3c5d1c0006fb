#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""CPython program for tools/bench-real.sh: a buffer filled, then scanned.

    pyscan.py MIB PATTERN [shm]  PATTERN: seq | reverse | stride:K | random | none

Fill: bytearray(MIB MiB) (zero pages), then one byte written per page in
order: a read-modify-write stream that, past the memory limit, reads every
page back from swap, dirties it and evicts it again.  Scan: one byte read
per page in PATTERN's order (random: a fixed-seed half of the pages), each
checked against what the fill wrote.  Prints one JSON line with the phase
times; exits 3 if a byte is wrong.  With shm the buffer is shared memory
(mmap of MAP_SHARED | MAP_ANONYMOUS, as PostgreSQL's shared_buffers):
shmem pages, which swap through shmem's own path.
"""
import json
import mmap
import random
import resource
import sys
import time


def user_cpu_s():
    """The program's user-mode CPU time, all threads (bench-real's user_s):
    a prefetcher's cross-CPU work on its memory shows up here."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_utime


def order(pattern, n):
    if pattern == "none":  # the fill alone
        return ()
    if pattern == "seq":
        return range(n)
    if pattern == "reverse":
        return range(n - 1, -1, -1)
    if pattern.startswith("stride:"):
        k = int(pattern.split(":", 1)[1])
        return (j for s in range(k) for j in range(s, n, k))
    if pattern == "random":
        return random.Random(42).sample(range(n), n // 2)
    raise SystemExit(f"pyscan: unknown pattern {pattern}")


def main():
    mib, pattern = int(sys.argv[1]), sys.argv[2]
    shm = sys.argv[3:] == ["shm"]
    n = mib * 256
    t0 = time.monotonic()
    # mmap.mmap(-1, ...) is MAP_SHARED | MAP_ANONYMOUS: zero-filled shmem.
    buf = mmap.mmap(-1, mib << 20) if shm else bytearray(mib << 20)
    for i in range(n):
        buf[i << 12] = (i * 7 + 1) & 0xFF
    t1 = time.monotonic()
    bad = 0
    for i in order(pattern, n):
        if buf[i << 12] != (i * 7 + 1) & 0xFF:
            bad += 1
    t2 = time.monotonic()
    print(json.dumps({"phases": {"fill": t1 - t0, "scan": t2 - t1}, "bad": bad,
                      "user_s": user_cpu_s()}))
    sys.exit(3 if bad else 0)


main()
