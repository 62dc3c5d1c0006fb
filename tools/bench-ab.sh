#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench-ab: two (or more) builds of leap-agent on one real program,
# interleaved and rotated: medians and means (with their standard error)
# of the program's own phase times; raw runs in bench/out/ab-*.tsv.
# For a change whose effect is a few percent: one program's phases spread
# by 20-30% between runs here, so variants must share the sitting.
#
#   sudo tools/bench-ab.sh [--reps N] [--limit SIZE] [--pin CPU] \
#       NAME=AGENT[:POLICY] ... -- PROGRAM [ARG...]
#
# Each variant runs `AGENT run --policy POLICY (default leap)
# --memory-limit SIZE -- PROGRAM...`, or with AGENT `none` the program
# alone in a memory cgroup of SIZE (Linux's readahead, bench-real's row
# b), pinned to CPU with --pin; the
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
	[ "$agent" = none ] || [ -x "$agent" ] ||
		{ echo "bench-ab: $agent is not an executable" >&2; exit 2; }
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
		if [ "$agent" = none ]; then
			# Linux alone: a memory cgroup of our own, no agent (bench-real's row b).
			h=$(memcg_create "$LIMIT") || { echo "bench-ab: cannot create a memory cgroup" >&2; exit 1; }
			memcg_run_timeout "$RUN_TIMEOUT" "$h" "${prog[@]}" >"$work/run.out" 2>"$work/err"
			memcg_destroy "$h"
			line=$(grep '"phases"' "$work/run.out" | tail -n 1)
		else
			line=$(timeout --kill-after=10 "$RUN_TIMEOUT" "$agent" run --policy "$policy" \
				--memory-limit "$LIMIT" -- "${prog[@]}" 2>"$work/err" | grep '"phases"' | tail -n 1)
		fi
		[ -n "$line" ] || echo "bench-ab: $name, run $rep: no phases ($(tail -n 2 "$work/err"))" >&2
		printf '%s\t%s\n' "$name" "$line" >>"$out"
	done
	echo "# repetition $rep of $REPS done" >&2
done

mkdir -p "$root/bench/out"
raw=$root/bench/out/ab-$(date +%Y%m%d-%H%M%S).tsv
cp "$out" "$raw"
echo "# raw runs: $raw" >&2
python3 - "$out" <<'EOF'
import collections, json, math, statistics, sys

# Per variant and phase (and their sum): median (min-max), and mean with
# its standard error, since a few percent is what these A/Bs look for and
# one program's phases spread 20-30% here.
phases = collections.defaultdict(lambda: collections.defaultdict(list))
keys = []
for line in open(sys.argv[1]):
    name, _, js = line.rstrip("\n").partition("\t")
    try:
        ph = json.loads(js)["phases"]
    except (ValueError, KeyError):
        continue
    for k, t in ph.items():
        if k not in keys:
            keys.append(k)
        phases[name][k].append(t)
    phases[name]["total"].append(sum(ph.values()))
keys.append("total")


def cell(v):
    if not v:
        return ""
    se = statistics.stdev(v) / math.sqrt(len(v)) if len(v) > 1 else 0.0
    return f"{statistics.median(v):.3f} ({min(v):.3f}-{max(v):.3f}), {statistics.mean(v):.3f} ± {se:.3f}"


print("| variant | runs | " + " | ".join(f"{k}: median (min-max), mean ± s.e. s" for k in keys) + " |")
print("|---|---|" + "---|" * len(keys))
for name, ph in phases.items():
    print(f"| {name} | {len(ph['total'])} | " + " | ".join(cell(ph.get(k, [])) for k in keys) + " |")
EOF
