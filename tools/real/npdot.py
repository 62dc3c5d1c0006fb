#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""numpy program for tools/bench-real.sh: two arrays read in lock-step.

    npdot.py MIB

Phases: fill (a[i] = i, b[i] = 1 + i % 3, each MIB/2 of float64, written in
turn), dot (a . b: BLAS reads a[i] and b[i] together, so the faults go to
two arrays mapped far apart in turns, two ascending streams interleaved,
as an index scan's index and table pages are), then dot again (the same,
after the first pass pushed the start of both out again).  Every result
is checked against the closed form; exits 3 on a mismatch.  Prints one
JSON line.  Values and partial sums stay below 2**53, so float sums are
exact in any order.
"""
import json
import resource
import sys
import time

import numpy as np


def user_cpu_s():
    """The program's user-mode CPU time, all threads (bench-real's user_s):
    a prefetcher's cross-CPU work on its memory shows up here."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_utime


def main():
    mib = int(sys.argv[1])
    n = (mib << 20) // 2 // 8
    t = [time.monotonic()]
    a = np.arange(n, dtype=np.float64)
    b = np.arange(n, dtype=np.float64) % 3 + 1
    t.append(time.monotonic())
    # sum over i of i * (1 + i % 3), exact in Python integers
    want = 0
    for r in range(3):
        m = (n - r + 2) // 3  # count of i < n with i % 3 == r
        # i = r + 3j, j < m: sum (r + 3j) * (1 + r)
        want += (1 + r) * (r * m + 3 * m * (m - 1) // 2)
    bad = 0
    for _ in range(2):
        got = float(np.dot(a, b))
        bad += got != float(want)
        t.append(time.monotonic())
    names = ["fill", "dot", "dot2"]
    print(json.dumps({"phases": {names[i]: t[i + 1] - t[i] for i in range(3)},
                      "bad": int(bad),
                      "user_s": user_cpu_s()}))
    sys.exit(3 if bad else 0)


main()
