#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make bench-sim`: the simulator's speed (events/s) and every policy side by
# side on the standard patterns.  Usage: bench.sh BINDIR WORKDIR
set -euo pipefail
bindir=${1:-bin} work=${2:-.output/sim/bench}
pages=${SIM_BENCH_PAGES:-65536} passes=${SIM_BENCH_PASSES:-3} memory=${SIM_BENCH_MEMORY:-50%}
patterns=(seq reverse stride:2 stride:8 stride:64 interleave:4 phase noise:10 random)
mkdir -p "$work"

rows=$work/results.csv
: >"$rows"
for pat in "${patterns[@]}"; do
	trace=$work/${pat//:/-}.bin
	"$bindir/leap-tracegen" --pattern "$pat" --pages "$pages" --passes "$passes" \
		--format bin -o "$trace"
	"$bindir/leap-sim" --policy all --memory "$memory" --csv --bench "$trace" \
		2>/dev/null | tail -n +2 | sed "s/^/$pat,/" >>"$rows"
done

# Columns after the pattern: policy,footprint,memory_pages,accesses,misses,
# hits,prefetched,accuracy,coverage,unused_evicted,est_time_us,
# min_thread_coverage,events_per_s
echo "leap-sim: $pages pages x $passes passes per pattern, memory $memory of the footprint"
for what in coverage accuracy; do
	echo
	echo "$what (%):"
	awk -F, -v what="$what" '
	{
		col = what == "coverage" ? 10 : 9
		if (!($1 in seen_pat)) { seen_pat[$1] = 1; pats[np++] = $1 }
		if (!($2 in seen_pol)) { seen_pol[$2] = 1; pols[nq++] = $2 }
		v[$1, $2] = 100 * $col
	}
	END {
		printf "%-13s", "pattern"
		for (j = 0; j < nq; j++) printf " %13s", pols[j]
		printf "\n"
		for (i = 0; i < np; i++) {
			printf "%-13s", pats[i]
			for (j = 0; j < nq; j++) printf " %13.1f", v[pats[i], pols[j]]
			printf "\n"
		}
	}' "$rows"
done
echo
echo "simulator speed (events/s, mean over patterns):"
awk -F, '{ s[$2] += $14; n[$2]++; if (!($2 in seen)) { seen[$2] = 1; o[k++] = $2 } }
	END { for (j = 0; j < k; j++) printf "  %-13s %6.1fM\n", o[j], s[o[j]] / n[o[j]] / 1e6 }' "$rows"
echo "(rows: $rows)"
