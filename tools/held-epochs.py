#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""What each of the outcome judge's comparisons measured, on a recorded run.

    tools/held-epochs.py RECORDING [AGENT]

RECORDING: a `leap-agent run|attach --record` file of a target the judge
compared (outcome = judge).  AGENT: the leap-agent to replay it with
(default: bin/leap-agent beside this script).

For each comparison the replay prints (`epoch ... ratio=N%`), it shows the
three segments the ratio came from, from the recorded events: the tail
(100 ms with windows, before the hold), the held epoch (50 ms, the last
before the comparison), and the head (100 ms with windows, after it), each
as its swap accesses, how many of them were misses (the page read from the
device), how many hits on pages our windows read, the misses' mean fault
time, and, in a recording made with --swap-cache-hits, the faults on
swap-cache pages not ours (Linux's readahead read them; not among the
accesses, which are the events: the judge adds them to its count).  A
held epoch whose accesses are mostly hits on our pages did not measure
Linux alone: it measured what our windows had left ahead of the program
(include/leap/outcome.h, leap_outcome_lead_hit()).

The segments' bounds are the judge's defaults (LEAP_OUTCOME_DEFAULT_*):
the comparison is made at the end of the head, which follows a 10 ms
settle after the held epoch.  The tail is placed as if the held epoch's
settle lasted 10 ms; where it was stretched by our windows' lead, the
tail shown is later than the one measured.
"""
import bisect
import os
import re
import subprocess
import sys

import leaprec

EV_MAJOR, EV_PREFETCHED = leaprec.EV_MAJOR, leaprec.EV_PREFETCHED
MS = 1000 * 1000
REF, HELD, SETTLE = 100 * MS, 50 * MS, 10 * MS


def events(path):
    """(ts_ns, flags, latency_ns, swap-cache count) of each recorded event,
    in order."""
    return [(ts, flags, lat, sch) for ts, _addr, flags, lat, sch in
            leaprec.events(path, "held-epochs", swap_cache=True)]


def segment(evs, stamps, start, end):
    lo, hi = bisect.bisect_left(stamps, start), bisect.bisect_left(stamps, end)
    seg = evs[lo:hi]
    misses = [e for e in seg if e[1] & EV_MAJOR]
    ours = sum(1 for e in seg if e[1] & EV_PREFETCHED and not e[1] & EV_MAJOR)
    wait = sum(e[2] for e in misses) / len(misses) / 1000 if misses else 0
    text = (f"{len(seg):6d} accesses {len(misses):6d} misses "
            f"{ours:6d} hits on ours  misses {wait:6.0f} us")
    # The count is the target's so far: its advance from the event before
    # the segment to the segment's last (one target a recording, as the
    # judge's runs have).  Not shown where it is absent (before version 5)
    # or still 0 (not counted: the run had no --swap-cache-hits).
    if seg and lo > 0 and seg[-1][3] and evs[lo - 1][3] is not None:
        text += f"  swap-cache hits {seg[-1][3] - evs[lo - 1][3]:6d}"
    return text


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip().splitlines()[2].strip())
    here = os.path.dirname(os.path.abspath(__file__))
    agent = sys.argv[2] if len(sys.argv) == 3 else \
        os.path.join(here, "..", "bin", "leap-agent")
    evs = events(sys.argv[1])
    stamps = [e[0] for e in evs]
    replay = subprocess.run([agent, "replay", sys.argv[1]], capture_output=True,
                            text=True, check=True).stdout
    for line in replay.splitlines():
        m = re.match(r"epoch t=(\d+) .* ratio=(\d+)% median=\d+% (.*)", line)
        if line.startswith("verdict"):
            print(line)
        if not m:
            continue
        t = int(m.group(1))
        held_end = t - REF - SETTLE
        print(f"t={t} ratio {m.group(2)}% ({m.group(3)})")
        print("  tail ", segment(evs, stamps, held_end - HELD - SETTLE - REF,
                                 held_end - HELD - SETTLE))
        print("  held ", segment(evs, stamps, held_end - HELD, held_end))
        print("  head ", segment(evs, stamps, t - REF, t))


if __name__ == "__main__":
    main()
