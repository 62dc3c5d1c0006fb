#!/usr/bin/env bash
# leap-timeout: 20
# SPDX-License-Identifier: MIT
# Nested strides (leap_find_period) with real swap and a real program:
# numpy (tools/real/npscan.py) over a row-major matrix of 16-page rows at
# 25% of its data.  Its slice a[::4, ::1024] reads pages 0, 2, ..., 14 of
# every 4th row (+2 seven times, then +50): windows follow that period
# (nested_stride_windows), the program hits them, and every value it
# checks is right.  A plain strided scan (CPython, stride 16) is one
# stride, which FINDTREND follows: nested-stride windows stay a minority
# there and its prefetches are hit.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/fixture.sh
. "$root/tests/lib/fixture.sh"
# shellcheck source=tests/lib/agent.sh
. "$root/tests/lib/agent.sh"

prefetch_fixture 512
"$PY" -c 'import numpy' 2>/dev/null || bail_out "python3-numpy missing (make deps)"

# numpy backs arrays of 4 MiB and more with transparent huge pages
# (MADV_HUGEPAGE); here its transpose writes a 32 MiB one into the 32 MiB
# cgroup, and memcg v1 OOM-killed the program in 15 of 36 runs, 8 of 18
# with leap and 7 of 18 with --policy off (2026-11-27; at a 48 MiB limit
# still 3 of 16, the kernel log showing rss_huge 34 MiB).  Without huge
# pages, 0 of 16.  They are not what this test is about, and a run the
# OOM killer ends says nothing.
run_unless_oom "$tmp/np.out" "$tmp/np.err" "$AGENT" run --policy leap --memory-limit 32M \
	--json "$tmp/np.json" -- env NUMPY_MADVISE_HUGEPAGE=0 "$PY" "$root/tools/real/npscan.py" 128
is "$?" 0 "numpy ran to completion under leap-agent" || diag "$(cat "$tmp/np.err")"
like "$(cat "$tmp/np.out")" '"bad": 0' "every value numpy checked was right"
nested=$(jq -r .nested_stride_windows "$tmp/np.json")
diag "numpy: nested-stride windows $nested, prefetched $(jq -r .prefetched "$tmp/np.json")," \
	"hits $(jq -r .hits "$tmp/np.json"), misses $(jq -r .swapin_misses "$tmp/np.json")"
# Measured 2026-11-25 at 256 MiB in 68 MiB: 3,140 windows (slice and
# transpose).  This run's half: 201-418 in 10 runs here (median ~280,
# 2026-11-28, the code before and after that day's cost change alike),
# and 100 in a fresh-clone CI run on this machine the same day, with the
# same hits (35,877): how many windows are nested strides moves with
# timing, not with what is prefetched.  With the periodic candidates
# removed (leap_candidates_periodic() writing none): 0.  So > 20, a
# fifth of the lowest seen.
cmp_ok "$nested" '>' 20 "windows followed the slice's period"
cmp_ok "$(jq -r .hits "$tmp/np.json")" '>' 5000 "and the program hit what was prefetched"

run_unless_oom "$tmp/py.out" "$tmp/py.err" "$AGENT" run --policy leap --memory-limit 32M \
	--json "$tmp/py.json" -- "$PY" "$root/tools/real/pyscan.py" 64 stride:16
is "$?" 0 "a CPython strided scan ran to completion" || diag "$(cat "$tmp/py.err")"
like "$(cat "$tmp/py.out")" '"bad": 0' "... with every byte intact"
cmp_ok "$(jq -r .prefetched "$tmp/py.json")" '>' 3000 "its stride was prefetched"
diag "stride:16: prefetched $(jq -r .prefetched "$tmp/py.json") hits $(jq -r .hits "$tmp/py.json")" \
	"misses $(jq -r .swapin_misses "$tmp/py.json")"
pynested=$(jq -r .nested_stride_windows "$tmp/py.json")
pywin=$(jq -r .prefetch_syscalls "$tmp/py.json")
diag "stride:16: nested-stride windows $pynested of $pywin windows"
# Not none: where pages between strides are still resident, the faults
# seen can repeat a pattern for a while (+16, +32, +16, ...), and windows
# follow it; 0-78 of 535-1,119 windows (0-10%) in 13 runs, 2026-11-25.
# Resident pages are left out of a stride's window anyway (pagemap).
cmp_ok "$((pynested * 100))" '<' "$((pywin * 20))" \
	"a plain stride mostly gets stride windows (nested-stride windows < 20%)"
# Its prefetches serve most of its page-ins: hits / (hits + misses) 74-84%
# in 6 runs (2026-11-26).  Under 60% in one
# fresh-clone CI run and 4 of 50 here (45-53%, windows of 1024): the lead
# a late pass grew sent the next pass's windows up to 1,024 steps ahead;
# 76-84% in 25 with the lead capped at 256 steps (LEAP_LEAD_MAX).
# On 2026-11-29's machine, which ran everything CPU-bound ~1.8x slower,
# 57-72% in 15 runs, the code of that night and the code before it alike,
# and 59.7% in a fresh-clone CI run: the program's pace against a
# window's landing moved with the CPU.  The claim is "most": over half.
# The lead bug (45-53%) is caught where policy belongs, deterministically:
# tests/unit/test_lead.c, test_lead_capped.
# A window restarted over one still in flight
# leaves out the pages issued under 20 ms before (leap/recent.h), so each
# page is issued (and counted) about once.  Counted against the scan's
# page-ins (hits + misses), not its 16,384 pages: a page reclaimed after
# its hit is paged in, and may be prefetched, again (one CI run: 18,552
# issued, 17,889 hit).  Issued / page-ins 0.86-0.87 in 5 runs
# (2026-11-29); with the filter taken out (leap_recent_filter() keeping
# every page) 1.07, 1.13 and 1.40 in 3 runs, the same day.
hits=$(jq -r .hits "$tmp/py.json")
misses=$(jq -r .swapin_misses "$tmp/py.json")
issued=$(jq -r .prefetched "$tmp/py.json")
cmp_ok "$((hits * 100))" '>' "$(((hits + misses) * 50))" \
	"its prefetches served most of its page-ins (hits > 50% of hits + misses)"
cmp_ok "$issued" '<' "$((hits + misses))" \
	"each page issued about once: $issued pages for $((hits + misses)) page-ins ($(jq -r .prefetch_reissues_skipped "$tmp/py.json") not issued again)"
cmp_ok "$((hits * 100))" '>' "$((issued * 60))" \
	"and most of the pages issued were hit (> 60%)"

done_testing
