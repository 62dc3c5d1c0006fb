#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""numpy program for tools/bench-real.sh: a row-major float64 matrix with
rows of 64 KiB (16 pages), filled, then read across its rows.

    npscan.py MIB

Phases: fill (a[i, j] = i * COLS + j, written row by row), colsum (eight
single-column sums: one element per row, a stride of 16 pages), slice
(a[::4, ::1024].copy(): every 4th row, a stride of 64 pages), transpose
(the first quarter of the rows copied transposed: column-wise reads).
Every result is checked against the closed form; exits 3 on a mismatch.
Prints one JSON line.  Values stay below 2**53, so float sums are exact.
"""
import json
import resource
import sys
import time

import numpy as np

COLS = 8192


def user_cpu_s():
    """The program's user-mode CPU time, all threads (bench-real's user_s):
    a prefetcher's cross-CPU work on its memory shows up here."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_utime


def main():
    mib = int(sys.argv[1])
    rows = (mib << 20) // (8 * COLS)
    t = [time.monotonic()]
    a = np.empty((rows, COLS))
    base = np.arange(COLS, dtype=np.float64)
    for i in range(rows):
        a[i] = base + float(i * COLS)
    t.append(time.monotonic())
    bad = 0
    r = np.arange(rows, dtype=np.float64) * COLS
    for j in range(0, COLS, COLS // 8):
        bad += a[:, j].sum() != (r + j).sum()
    t.append(time.monotonic())
    s = a[::4, ::1024].copy()
    want = (np.arange(0, rows, 4, dtype=np.float64)[:, None] * COLS
            + np.arange(0, COLS, 1024, dtype=np.float64)[None, :])
    bad += not np.array_equal(s, want)
    t.append(time.monotonic())
    q = rows // 4
    tr = a[:q].T.copy()
    bad += tr.shape != (COLS, q) or tr[COLS - 1, q - 1] != (q - 1) * COLS + COLS - 1
    bad += tr[:, ::max(1, q // 16)].sum() != a[:q:max(1, q // 16)].sum()
    t.append(time.monotonic())
    names = ["fill", "colsum", "slice", "transpose"]
    print(json.dumps({"phases": {names[i]: t[i + 1] - t[i] for i in range(4)},
                      "bad": int(bad),
                      "user_s": user_cpu_s()}))
    sys.exit(3 if bad else 0)


main()
