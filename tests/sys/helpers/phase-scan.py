#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A program whose page-ins change speed while it runs.

    phase-scan.py MIB FLAG

For tests/sys/cost.t, run in a memory cgroup smaller than MIB: fills MIB
MiB (one byte per page), then scans it with a stride of 16 pages, pass
after pass, checking every byte.  Between passes it looks for the file
FLAG; once it exists, three more passes and it exits.  The test moves its
swap from zram to a disk under it (swapoff), so its page-ins get slow in
the middle of the run.  Prints {"passes": N, "bad": N}; exits 3 on a wrong
byte.
"""
import json
import os
import sys

mib, flag = int(sys.argv[1]), sys.argv[2]
n = mib * 256
buf = bytearray(mib << 20)
for i in range(n):
    buf[i << 12] = (i * 7 + 1) & 0xFF
bad = passes = left = 0
while True:
    for s in range(16):
        for i in range(s, n, 16):
            if buf[i << 12] != (i * 7 + 1) & 0xFF:
                bad += 1
    passes += 1
    if left:
        left -= 1
        if not left:
            break
    elif os.path.exists(flag):
        left = 3
    if passes > 2000:
        break
print(json.dumps({"passes": passes, "bad": bad}))
sys.exit(3 if bad else 0)
