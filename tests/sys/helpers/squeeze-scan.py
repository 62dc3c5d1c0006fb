#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A strided scan whose prefetched pages are reclaimed before use.

    squeeze-scan.py MIB

For tests/sys/pressure.t, run under `leap-agent run --memory-limit`: fills
MIB MiB (one byte per page), squeezes its own v1 memory cgroup's limit to
4 MiB and back (everything goes out to swap), starts a strided scan (16
pages), and twice on its way waits 0.3 s while leap's windows land in the
swap cache, squeezes again (the unmapped swap-cache pages, leap's, go
first) and scans on through them: each such fault is a prefetched page
reclaimed before use.
Checks every byte; prints {"bad": N}; exits 3 on a wrong byte.
"""
import sys
import time

# Each squeeze reclaims the one or two windows ahead of the scan: ~30-40
# wasted pages each (2026-11-25, with late prefetches told apart).
SQUEEZE_AT = (64, 640, 1300, 2100, 2900, 3700, 4500, 5300)


def memcg_limit_file():
    for line in open("/proc/self/cgroup"):
        _, ctrl, path = line.rstrip("\n").split(":", 2)
        if "memory" in ctrl.split(","):
            return "/sys/fs/cgroup/memory" + path + "/memory.limit_in_bytes"
    raise SystemExit("squeeze-scan: not in a v1 memory cgroup")


def squeeze(limit_file):
    old = open(limit_file).read().strip()
    with open(limit_file, "w") as f:
        f.write(str(4 << 20))
    with open(limit_file, "w") as f:
        f.write(old)


def main():
    mib = int(sys.argv[1])
    n = mib * 256
    limit_file = memcg_limit_file()
    buf = bytearray(mib << 20)
    for i in range(n):
        buf[i << 12] = (i * 7 + 1) & 0xFF
    squeeze(limit_file)
    bad = 0
    order = [j for s in range(16) for j in range(s, n, 16)]
    for step, i in enumerate(order):
        if buf[i << 12] != (i * 7 + 1) & 0xFF:
            bad += 1
        if step in SQUEEZE_AT:
            time.sleep(0.3)
            squeeze(limit_file)
    print('{"bad": %d}' % bad)
    sys.exit(3 if bad else 0)


main()
