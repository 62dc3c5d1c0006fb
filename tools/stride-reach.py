#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""How far ahead a stride's pages stay right, on a recorded run.

    tools/stride-reach.py RECORDING TREND [SKIP]

RECORDING: a `leap-agent run|attach --record` file, best of a run with
--policy observe (the program's own misses, no windows of ours among
them).  TREND: the stride in pages the misses' majority shows (e.g. 17 for
sqlite4k.py's stride phase).  SKIP: the share of the events to leave out
first (default 0.33: the load before the phase).

For every 37th miss from there, with the stride measured over the 32
deltas before it as leap_stride_fine() does (include/leap/engine.h), it
asks whether the page j steps ahead was among the pages of the next 3,000
misses, along the whole TREND and along the measured stride (rounded to
the nearest page), for j = 1..64, and prints the share of yes.  This is
what LEAP_LEAD_FINE_MAX rests on (docs/agent.md, "Strides with a
fraction").
"""
import sys

import leaprec

HISTORY = 32  # LEAP_DEFAULT_HSIZE
K_MAX = 8  # LEAP_FINE_K_MAX
MIN_STEPS = 8  # LEAP_FINE_MIN_STEPS
AHEAD = 3000
STEPS = (1, 2, 4, 8, 12, 16, 32, 64)


def miss_pages(path):
    """The events' pages, in order."""
    return [addr >> 12 for _ts, addr, _flags, _lat in
            leaprec.events(path, "stride-reach")]


def fine_stride(deltas, trend):
    """leap_stride_fine(): the stride in pages, with its fraction."""
    mag = abs(trend)
    pages = steps = exact = 0
    for d in deltas:
        m = abs(d)
        k = (m + mag // 2) // mag
        if (d < 0) != (trend < 0):
            continue
        if k == 0 and m <= 1:
            pages += m
        elif 1 <= k <= K_MAX and abs(m - k * mag) <= k:
            pages += m
            steps += k
            exact += k if m == k * mag else 0
    if mag < 2 or steps < MIN_STEPS or exact == steps or \
            abs(pages - steps * mag) <= 1:
        return float(trend)
    return (pages / steps) * (1 if trend > 0 else -1)


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__.strip().splitlines()[2].strip())
    trend = int(sys.argv[2])
    skip = float(sys.argv[3]) if len(sys.argv) == 4 else 0.33
    pages = miss_pages(sys.argv[1])
    pages = pages[int(len(pages) * skip):]
    deltas = [b - a for a, b in zip(pages, pages[1:])]
    whole = {j: 0 for j in STEPS}
    fine = {j: 0 for j in STEPS}
    asked = 0
    for i in range(HISTORY, len(pages) - AHEAD, 37):
        page, later = pages[i], set(pages[i + 1:i + AHEAD])
        stride = fine_stride(deltas[i - HISTORY:i], trend)
        asked += 1
        for j in STEPS:
            whole[j] += page + j * trend in later
            off = int(j * abs(stride) + 0.5)  # candidates.c rounds so
            fine[j] += (page + off if stride > 0 else page - off) in later
    if not asked:
        sys.exit("stride-reach: too few events")
    print(f"{asked} misses asked; share of pages j steps ahead used")
    print("steps j    " + " ".join(f"{j:>5}" for j in STEPS))
    for name, got in ((f"whole {trend:+d}", whole), ("fine stride", fine)):
        print(f"{name:<11}" + " ".join(f"{got[j] / asked:5.2f}" for j in STEPS))


if __name__ == "__main__":
    main()
