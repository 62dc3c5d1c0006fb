#!/usr/bin/env bash
# leap-timeout: 300
# SPDX-License-Identifier: MIT
# Judged by the outcome (include/leap/outcome.h, the default outcome =
# judge) on a real program with real swap: SQLite (tools/real/sqlite4k.py,
# rows of a page each, 128 MiB in 96 MiB) looks up random keys for 18 s,
# then scans its table backwards for 20 s, under the paper's flavour
# (flavor = paper): since 2026-11-29 ours leaves a miss with no trend to
# the kernel's readahead (docs/agent.md, "No trend: around the miss is
# the kernel's"), so the lookups get no window and the cost model stands
# them down within ~1,000 page-ins ("nothing to add"; CI's run of this test
# with ours, 2026-11-29); the paper keeps its windows "around Pt" there,
# the case the judge is for.
#  - In the lookups, where leap's windows are used (86% here) and still do
#    not make the program faster, the target stands down by outcome: the
#    verdict says "no gain", on stderr and in the recording.  Held epochs
#    there ran at 87-126% of the prefetching rate (the first 20
#    comparisons of 4 runs, 2026-11-28), the first verdicts' medians at
#    101-111% (no gain from 97%).
#  - In the scan it prefetches again after a probe, and its last
#    judgement says "gain" (held epochs at 8-80% there, five runs,
#    2026-12-01): windows go out after the last probe.  Before a held
#    epoch's settle waited out our windows' lead by default (core config
#    outcome_lead), 3 runs of 6 had held epochs of 131-255% there (hits
#    on pages our windows had read before the hold), and in CI's run that
#    stood the scan down for "no gain" (tools/held-epochs.py shows them).
#  - Every row read back is the one written; the replay of the run's
#    recording makes the same decisions.
# The live kernel is the subject: the phases are long enough for the
# first verdict (4 s, then five comparisons of ~1.06 s each) with 8 s to
# spare, and for a probe (5 or 10 s after a stand-down) and three
# comparisons in the scan with ~8 s to spare.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/fixture.sh
. "$root/tests/lib/fixture.sh"
# shellcheck source=tests/lib/agent.sh
. "$root/tests/lib/agent.sh"

prefetch_fixture 1024
"$PY" -c 'import sqlite3' 2>/dev/null || bail_out "python3's sqlite3 module missing (make deps)"

printf '[default]\nflavor = paper\n' >"$tmp/paper.ini" # why: above
# memcg v1 OOM-kills this SQLite at 96 MiB now and then, agent or not: in
# the look-ups for 12 s, Linux alone 3 of 8 runs, leap with the paper's
# flavour 4 of 8, ours 2 of 20 (2026-11-30); five tries, each counted.
OOM_TRIES=5
# The paper's window falls to zero for good when a miss has no trend and
# no hit came since the last (GETPREFETCHWINDOWSIZE: PW 0 after PW 1,
# user/lib/window.c); where the look-ups start that way they get no window
# at all (8 pages for 1,066 page-ins) and the cost model stands them down
# ("nothing to add") before the judge could: the judge's case did not
# arise.  1 run in 5 on 2026-11-29, 1 in 11 on 2026-11-30.  Such a run is
# run again (at most twice, counted); any other first verdict is judged.
first=
: >"$tmp/replay.txt"
for run in 1 2 3; do
	run_unless_oom "$tmp/run.out" "$tmp/run.err" "$AGENT" run --memory-limit 96M \
		-c "$tmp/paper.ini" --record "$tmp/run.rec" --json "$tmp/run.json" -- \
		"$PY" "$root/tools/real/sqlite4k.py" 128 point,reverse 1 18
	rc=$?
	{ [ "$rc" -eq 0 ] && grep -q '"bad": 0' "$tmp/run.out"; } || break # checked below
	"$AGENT" replay --plans "$tmp/run.rec" >"$tmp/replay.txt" 2>&1
	first=$(grep -m1 '^verdict' "$tmp/replay.txt")
	pages=$(sed -n 's/.* stand-down: nothing to add: windows of \([0-9]*\) pages\{0,1\} .*/\1/p' \
		<<<"$first")
	{ [ -n "$pages" ] && [ "$pages" -lt 64 ] && [ "$run" -lt 3 ]; } || break
	diag "run $run: the look-ups got no window (the paper's PW fell to 0: $first); run again, $run of 2"
done
is "$rc" 0 "SQLite ran to completion under leap-agent" || diag "$(cat "$tmp/run.err")"
like "$(cat "$tmp/run.out")" '"bad": 0' "every row read back is the one written"
diag "$(tail -1 "$tmp/run.out")"
diag "$(jq -c '{prefetched, hits, stand_downs, probes, held_epochs, outcome_comparisons,
	outcome_stand_downs, outcome: .targets[0].outcome}' "$tmp/run.json")"

grep -E '^(epoch|verdict)' "$tmp/replay.txt" | while read -r line; do diag "$line"; done

like "$first" 'stand-down: no gain: with its windows held' \
	"the lookups: the first verdict is a stand-down by outcome (no gain)"
like "$(cat "$tmp/run.err")" 'standing down \(no gain' "... said on stderr"
cmp_ok "$(jq .outcome_stand_downs "$tmp/run.json")" '>=' 1 "... counted (outcome_stand_downs)"

# Every held epoch since the last probe was compared or dropped, but the
# last, which the run's end may cut short.
pending=$(jq '.targets[0].outcome | .held_epochs - .comparisons - .dropped' "$tmp/run.json")
ok "$([ "${pending:-x}" = 0 ] || [ "${pending:-x}" = 1 ]; echo $?)" \
	"the outcome's held epochs add up: compared, dropped ($(jq -c '.targets[0].outcome |
	{held_epochs, comparisons, dropped, dropped_for_lead}' "$tmp/run.json")), one at most cut short"

is "$(jq -r '.targets[0].prefetch' "$tmp/run.json")" prefetching \
	"the scan: the target prefetches at the end"
is "$(jq -r '.targets[0].outcome.verdict' "$tmp/run.json")" gain \
	"... and its last judgement says gain"
after=$(awk '/^verdict .* probe:/ { probed = 1; n = 0; next }
	probed && / window=/ { sub(/.* n=/, ""); n += $1 } END { print n + 0 }' "$tmp/replay.txt")
cmp_ok "$after" '>' 1000 "... windows went out after the last probe ($after pages in the windows planned)"

"$AGENT" replay --check "$tmp/run.rec" >/dev/null 2>&1
is "$?" 0 "the replay of the recording makes the same decisions"

done_testing
