#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench-ab: two (or more) builds of leap-agent on one real program,
# interleaved and rotated, medians of the program's own phase times.
# For a change whose effect is a few percent: one program's phases spread
# by 20-30% between runs here, so variants must share the sitting.
#
#   sudo tools/bench-ab.sh [--reps N] [--limit SIZE] [--pin CPU] \
#       NAME=AGENT[:POLICY] ... -- PROGRAM [ARG...]
#
# Each variant runs `AGENT run --policy POLICY (default leap)
# --memory-limit SIZE -- PROGRAM...` (pinned to CPU with --pin); the
# program prints one JSON line with "phases" (tools/real/*). Swap: a file
# made for the run (tests/lib/fixture.sh), removed after. Example, the
# build in bin/ against an older one, CPython's fill:
#
#   sudo tools/bench-ab.sh --pin 1 new=bin/leap-agent old=/tmp/old/leap-agent \
#       off=bin/leap-agent:off -- /usr/bin/python3 tools/real/pyscan.py 256 none
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
# shellcheck source=tests/lib/fixture.sh
. "$root/tests/lib/fixture.sh"

REPS=7
LIMIT=132M
PIN=
RUN_TIMEOUT=300

usage()
{
	sed -n '3,18p' "$0" | sed 's/^# \{0,1\}//'
}

while [ $# -gt 0 ]; do
	case $1 in
	--reps) REPS=$2; shift 2 ;;
	--limit) LIMIT=$2; shift 2 ;;
	--pin) PIN=$2; shift 2 ;;
	--timeout) RUN_TIMEOUT=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	--) shift; break ;;
	*=*) break ;;
	*) echo "bench-ab: unknown option $1" >&2; usage >&2; exit 2 ;;
	esac
done
variants=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	variants+=("$1")
	shift
done
[ "${1:-}" = -- ] && shift
if [ ${#variants[@]} -lt 1 ] || [ $# -lt 1 ]; then
	usage >&2
	exit 2
fi
[[ $REPS =~ ^[1-9][0-9]*$ ]] || { echo "bench-ab: --reps takes a count, not '$REPS'" >&2; exit 2; }
for v in "${variants[@]}"; do
	[[ $v == *=* ]] || { echo "bench-ab: a variant is NAME=AGENT[:POLICY], not '$v'" >&2; exit 2; }
	agent=${v#*=}
	agent=${agent%%:*}
	[ -x "$agent" ] || { echo "bench-ab: $agent is not an executable" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "bench-ab: run as root (swap, cgroups, BPF)" >&2; exit 2; }
prog=("$@")
[ -n "$PIN" ] && prog=(taskset -c "$PIN" "${prog[@]}")

fixture_init
work=$FX_STATE
swap_file_on 2048 >/dev/null || { echo "bench-ab: cannot set up a swap file" >&2; exit 1; }
out=$work/runs.txt
: >"$out"

n=${#variants[@]}
for rep in $(seq "$REPS"); do
	for i in $(seq 0 $((n - 1))); do
		v=${variants[$(((i + rep) % n))]}
		name=${v%%=*}
		agent=${v#*=}
		policy=leap
		[[ $agent == *:* ]] && policy=${agent#*:} agent=${agent%%:*}
		line=$(timeout --kill-after=10 "$RUN_TIMEOUT" "$agent" run --policy "$policy" \
			--memory-limit "$LIMIT" -- "${prog[@]}" 2>"$work/err" | grep '"phases"' | tail -n 1)
		[ -n "$line" ] || echo "bench-ab: $name, run $rep: no phases ($(tail -n 2 "$work/err"))" >&2
		printf '%s\t%s\n' "$name" "$line" >>"$out"
	done
	echo "# repetition $rep of $REPS done" >&2
done

python3 - "$out" <<'EOF'
import collections, json, statistics, sys

phases = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    name, _, js = line.rstrip("\n").partition("\t")
    try:
        for k, t in json.loads(js)["phases"].items():
            phases[name][k].append(t)
    except (ValueError, KeyError):
        pass
print("| variant | runs | " + " | ".join(f"{k} median (min-max) s" for k in ("fill", "scan")) + " |")
print("|---|---|---|---|")
for name, ph in phases.items():
    cells = []
    for k in ("fill", "scan"):
        v = ph.get(k, [])
        cells.append(f"{statistics.median(v):.3f} ({min(v):.3f}-{max(v):.3f})" if v else "")
    print(f"| {name} | {len(ph.get('fill', []))} | " + " | ".join(cells) + " |")
EOF
