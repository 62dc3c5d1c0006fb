#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench-swap: swap-in prefetching, side by side, on this machine.
#
# For each workload (leap-workload patterns) and memory limit (a percentage
# of the footprint), runs these rows, repeated R times with the rows
# interleaved (and rotated each repetition) so background noise hits all:
#   a     no prefetch: vm.page-cluster=0
#   b     Linux default swap readahead: vm.page-cluster=3   (the baseline)
#   c     leap-agent run --policy leap (page-cluster per --agent-page-cluster)
#   c0    leap-agent run --policy leap at page-cluster=0 (Leap alone; optional)
#   off   leap-agent run --policy off (the agent's set-up cost; optional)
#   d     oracle: leap-workload --oracle N under Linux default readahead
#   e     leap-agent run --backend (needs --swap backend): the engine on
#         virtual addresses, each window process_madvise'd and its swap slots
#         (from pagemap) pushed to leap-swapd's prefetch cache (pc=0)
#   ec    the same with --backend-into cache: slots pushed only; the
#         kernel's readahead kept (pc=3), as leap-agent does in that mode
#   ek    row e with --kernel-readahead keep (pc=3): write streams the
#         kernel's, read streams Leap's past it (optional)
# Rows a, b, d run in a fresh v1 memory cgroup from tests/lib/fixture.sh;
# agent rows let `leap-agent run --memory-limit` make its own.  Swap is a
# preallocated file on the root filesystem (async block I/O, so Linux's
# readahead is active), or with --swap backend the remote swap backend
# (tests/lib/backend.sh: leap-memd on loopback, leap-swapd, a direct-I/O
# loop device).  Reports medians: wall time of the measured pass,
# ratio to row b, major faults (swap-in misses), and the agent's accuracy
# and coverage.  Table on stdout, CSVs in bench/out/.
#
# Usage: tools/bench-swap.sh [options]      (root; see --help)
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
# shellcheck source=tests/lib/fixture.sh
. "$root/tests/lib/fixture.sh"

FOOTPRINT_MIB=256
PCTS="50 25"
WORKLOADS="seq stride:16 stride:64 random"
ROWS=
REPS=3
PASSES=1
ORACLE=64
AGENT_PC=3
RUN_TIMEOUT=600
OUTDIR=$root/bench/out
WL=$root/bin/leap-workload
AGENT=$root/bin/leap-agent
EXTRA_WL_ARGS=()
SWAP='file'
BK_MEMD_ARGS=

usage()
{
	cat <<EOF
Usage: tools/bench-swap.sh [OPTION...]
  --quick                 CI size: 64 MiB footprint, 1 repetition, seq and stride:16
  --footprint MIB         footprint in MiB (default $FOOTPRINT_MIB)
  --limits "P..."         memory limits in % of the footprint (default "$PCTS")
  --workloads "W..."      leap-workload patterns (default "$WORKLOADS")
  --rows "R..."           rows among a b c c0 off d (default "a b c d"; c rows
                          are skipped with a note when bin/leap-agent is missing)
  --reps N                repetitions, median reported (default $REPS)
  --passes N              measured passes per run (default $PASSES)
  --oracle N              oracle window in pages for row d (default $ORACLE)
  --agent PATH            leap-agent binary (default bin/leap-agent)
  --agent-page-cluster N  vm.page-cluster for row c (default $AGENT_PC)
  --compute-ns NS         passed to leap-workload (work between accesses)
  --timeout S             per-run limit in seconds (default $RUN_TIMEOUT)
  --out DIR               output directory (default bench/out)
  --swap file|backend     swap on a file on the root filesystem (default) or on
                          leap-swapd + leap-memd (enables rows e, ec, ek)
  --memd-delay-us US      with --swap backend: leap-memd holds each reply US
                          microseconds (an emulated network; default 0)
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
	--footprint | --limits | --workloads | --rows | --reps | --passes | --oracle | --agent | \
		--agent-page-cluster | --compute-ns | --timeout | --out | --swap | --memd-delay-us)
		[ $# -ge 2 ] || {
			echo "bench-swap: $1 needs a value" >&2
			exit 1
		}
		;;
	esac
	case $1 in
	--quick)
		FOOTPRINT_MIB=64
		REPS=1
		WORKLOADS="seq stride:16"
		;;
	--footprint) FOOTPRINT_MIB=${2%M} && shift ;;
	--limits) PCTS=${2//%/} && shift ;;
	--workloads) WORKLOADS=$2 && shift ;;
	--rows) ROWS=$2 && shift ;;
	--reps) REPS=$2 && shift ;;
	--passes) PASSES=$2 && shift ;;
	--oracle) ORACLE=$2 && shift ;;
	--agent) AGENT=$2 && shift ;;
	--agent-page-cluster) AGENT_PC=$2 && shift ;;
	--compute-ns) EXTRA_WL_ARGS+=(--compute-ns "$2") && shift ;;
	--timeout) RUN_TIMEOUT=$2 && shift ;;
	--out) OUTDIR=$2 && shift ;;
	--swap) SWAP=$2 && shift ;;
	--memd-delay-us) BK_MEMD_ARGS="--delay-us $2" && shift ;;
	-h | --help)
		usage
		exit 0
		;;
	*)
		echo "bench-swap: unknown option '$1'" >&2
		usage >&2
		exit 1
		;;
	esac
	shift
done

num='^[0-9]+$'
for v in "$FOOTPRINT_MIB" "$REPS" "$PASSES" "$ORACLE" "$AGENT_PC" "$RUN_TIMEOUT"; do
	[[ $v =~ $num ]] || {
		echo "bench-swap: not a number: '$v'" >&2
		exit 1
	}
done
for p in $PCTS; do
	[[ $p =~ $num ]] && [ "$p" -gt 0 ] && [ "$p" -lt 100 ] || {
		echo "bench-swap: limit must be a percentage 1..99: '$p'" >&2
		exit 1
	}
done
case $SWAP in
file | backend) ;;
*)
	echo "bench-swap: --swap takes file or backend, not '$SWAP'" >&2
	exit 1
	;;
esac
[ "$(id -u)" -eq 0 ] || {
	echo "bench-swap: needs root (swapon, cgroups, vm.page-cluster)" >&2
	exit 1
}
[ -x "$WL" ] || {
	echo "bench-swap: $WL not built (make)" >&2
	exit 1
}

have_agent=0
[ -x "$AGENT" ] && have_agent=1
[ -n "$ROWS" ] || ROWS="a b c c0 d"
rows=()
for r in $ROWS; do
	case $r in
	a | b | d) rows+=("$r") ;;
	c | c0 | off | e | ec | ek)
		if [ "${r#e}" != "$r" ] && [ "$SWAP" != backend ]; then
			echo "bench-swap: row $r needs --swap backend" >&2
			exit 1
		fi
		if [ $have_agent = 1 ]; then
			rows+=("$r")
		else
			echo "bench-swap: note: $AGENT does not exist (yet): skipping row $r" >&2
		fi
		;;
	*)
		echo "bench-swap: unknown row '$r' (a b c c0 off d e ec ek)" >&2
		exit 1
		;;
	esac
done

row_label()
{
	case $1 in
	a) echo "no prefetch (pc=0)" ;;
	b) echo "linux readahead (pc=3)" ;;
	c) echo "leap-agent (pc=$AGENT_PC)" ;;
	c0) echo "leap-agent (pc=0)" ;;
	off) echo "agent policy off (pc=3)" ;;
	d) echo "oracle $ORACLE (pc=3)" ;;
	e) echo "backend, swapcache (pc=0)" ;;
	ec) echo "backend, cache only (pc=3)" ;;
	ek) echo "backend, swapcache, readahead kept (pc=3)" ;;
	esac
}

# First value of "key": in a JSON file (flat enough for our objects).
json_num()
{
	[ -f "$1" ] || return 0
	tr -d '\n' <"$1" | grep -o "\"$2\"[[:space:]]*:[[:space:]]*[^,}]*" |
		head -n 1 | sed 's/^[^:]*:[[:space:]]*//; s/"//g'
}

fixture_init
mkdir -p "$OUTDIR" || exit 1
stamp=$(date +%Y%m%d-%H%M%S)
raw=$OUTDIR/bench-swap-$stamp-raw.csv
summary=$OUTDIR/bench-swap-$stamp.csv
table=$OUTDIR/bench-swap-$stamp.txt
faillog=$OUTDIR/bench-swap-$stamp-failures.log
work=$FX_STATE

# Swap: the whole footprint plus room for the swap cache's duplicates.
swap_mib=$((FOOTPRINT_MIB * 2 + 64))
if [ "$SWAP" = file ]; then
	swap=$(swap_file_on "$swap_mib") || exit 1
else
	# shellcheck source=tests/lib/backend.sh
	. "$root/tests/lib/backend.sh"
	backend_up_for_bench "$swap_mib" || {
		echo "bench-swap: the backend did not come up" >&2
		exit 1
	}
	swap=$BK_LOOP
fi
pc_orig=$(cat /proc/sys/vm/page-cluster)

echo "rep,workload,limit_pct,limit_bytes,row,page_cluster,disturbed,exit,errors,wall_s,majflt,minflt," \
	"fill_s,pswpin,swap_ra,swap_ra_hit,prefetched,hits,accuracy,coverage,agent_faults," \
	"agent_swapin_misses,bpf_ns_per_fault,agent_cpu_us_per_event,reaction_p50_us," \
	"reaction_p99_us,bk_pages_in,bk_hits,bk_prefetched,bk_unused,bk_waited,bk_skipped_demand" | tr -d ' ' >"$raw"

failures=0
disturbed_runs=0

# leap-swapd's counters that tell how many pages crossed to leap-memd:
# pages_in (reads through the device, cache hits included), hits, prefetched,
# evicted_unused, waited, skipped_demand.  Empty on file swap.
BK_KEYS="pages_in hits prefetched evicted_unused waited skipped_demand"
bk_counters()
{
	[ "$SWAP" = backend ] || return 0
	# shellcheck disable=SC2086 # one word per key
	backend_stats $BK_KEYS
}

# run_row REP WORKLOAD PCT ROW
run_row()
{
	local rep=$1 wl=$2 pct=$3 row=$4 pc=3 limit h rc
	local out=$work/run.out err=$work/run.err ajson=$work/agent.json
	local -a wlcmd
	limit=$((FOOTPRINT_MIB * pct / 100))M
	case $row in
	a | c0 | e) pc=0 ;;
	c) pc=$AGENT_PC ;;
	esac
	page_cluster_set "$pc" || return 1
	wlcmd=("$WL" --pattern "$wl" --footprint "${FOOTPRINT_MIB}M" --passes "$PASSES" --json
		"${EXTRA_WL_ARGS[@]}")
	[ "$row" = d ] && wlcmd+=(--oracle "$ORACLE")
	rm -f "$out" "$err" "$ajson"
	local in0 ra0 rh0 bk0
	bk0=$(bk_counters)
	in0=$(vmstat_get pswpin)
	ra0=$(vmstat_get swap_ra)
	rh0=$(vmstat_get swap_ra_hit)
	case $row in
	a | b | d)
		h=$(memcg_create "$limit") || return 1
		memcg_run_timeout "$RUN_TIMEOUT" "$h" "${wlcmd[@]}" >"$out" 2>"$err"
		rc=$?
		memcg_destroy "$h"
		;;
	*)
		local policy=leap
		local -a extra=()
		[ "$row" = off ] && policy=off
		case $row in
		e) extra=(--backend "$BK_CTL" --backend-dev "$BK_LOOP") ;;
		ec) extra=(--backend "$BK_CTL" --backend-dev "$BK_LOOP" --backend-into cache) ;;
		ek) extra=(--backend "$BK_CTL" --backend-dev "$BK_LOOP" --kernel-readahead keep) ;;
		esac
		timeout --kill-after=5 "$RUN_TIMEOUT" "$AGENT" run --memory-limit "$limit" \
			--policy "$policy" --bpf-stats "${extra[@]}" --json "$ajson" -- "${wlcmd[@]}" \
			>"$out" 2>"$err" &
		local pid=$!
		fixture_track_pid "$pid"
		wait_through_signals "$pid"
		rc=$?
		;;
	esac
	local in1 ra1 rh1 bk1 bkd
	bk1=$(bk_counters)
	in1=$(vmstat_get pswpin)
	ra1=$(vmstat_get swap_ra)
	rh1=$(vmstat_get swap_ra_hit)
	# The workload's own JSON line (an agent may print more on stdout).
	grep '^{"pattern"' "$out" | tail -n 1 >"$work/wl.json"
	local errors wall
	errors=$(json_num "$work/wl.json" errors)
	wall=$(json_num "$work/wl.json" wall_s)
	# vm.page-cluster is global: another session (or an agent's
	# --kernel-readahead off) may change it under us.  Such runs are kept in
	# the raw CSV but left out of the medians.
	local disturbed=0
	bkd=$(awk -v a="$bk0" -v b="$bk1" 'BEGIN {
		n = split(a, x, " "); split(b, y, " ")
		for (i = 1; i <= n; i++) printf "%s%d", (i > 1 ? "," : ""), y[i] - x[i] }')
	[ -n "$bkd" ] || bkd=,,,,,
	[ "$(cat /proc/sys/vm/page-cluster)" = "$pc" ] || disturbed=1
	if [ $disturbed = 1 ]; then
		disturbed_runs=$((disturbed_runs + 1))
		echo "bench-swap: rep $rep $wl ${pct}% row $row: vm.page-cluster changed to" \
			"$(cat /proc/sys/vm/page-cluster) by someone else during the run; not counted" >&2
	fi
	if [ "$rc" != 0 ] || [ -z "$wall" ] || [ "${errors:-1}" != 0 ]; then
		failures=$((failures + 1))
		echo "bench-swap: FAILED rep $rep $wl ${pct}% row $row: exit $rc errors ${errors:-?}" \
			"(stderr in $faillog)" >&2
		{
			echo "=== rep $rep $wl ${pct}% row $row: exit $rc errors ${errors:-?}"
			cat "$err"
		} >>"$faillog"
		sed 's/^/  | /' "$err" | tail -n 5 >&2
	fi
	printf '%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n' \
		"$rep" "$wl" "$pct" $((${limit%M} * 1048576)) "$row" "$pc" "$disturbed" "$rc" \
		"${errors:-}" "${wall:-}" "$(json_num "$work/wl.json" majflt)" \
		"$(json_num "$work/wl.json" minflt)" "$(json_num "$work/wl.json" fill_s)" \
		$((in1 - in0)) $((ra1 - ra0)) $((rh1 - rh0)) \
		"$(json_num "$ajson" prefetched)" "$(json_num "$ajson" hits)" \
		"$(json_num "$ajson" accuracy)" "$(json_num "$ajson" coverage)" \
		"$(json_num "$ajson" faults)" "$(json_num "$ajson" swapin_misses)" \
		"$(json_num "$ajson" bpf_ns_per_fault)" "$(json_num "$ajson" agent_cpu_us_per_event)" \
		"$(json_num "$ajson" reaction_p50_us)" "$(json_num "$ajson" reaction_p99_us)" "$bkd" >>"$raw"
	printf '  rep %d %-10s %3s%% %-4s wall_s=%-8s majflt=%s%s\n' "$rep" "$wl" "$pct" "$row" \
		"${wall:-?}" "$(json_num "$work/wl.json" majflt)" \
		"${bk1:+ swapd(in,hit,pf,unused,wait,skip)=$bkd}" >&2
}

nruns=$((REPS * $(wc -w <<<"$WORKLOADS") * $(wc -w <<<"$PCTS") * ${#rows[@]}))
{
	echo "bench-swap: $(uname -r), $(nproc) cpus, footprint ${FOOTPRINT_MIB} MiB," \
		"limits ${PCTS// /% }% of it, $REPS reps, $PASSES pass(es), $nruns runs"
	[ "$SWAP" = file ] || echo "bench-swap: leap-memd ${BK_MEMD_ARGS:-without --delay-us}"
	echo "bench-swap: swap $SWAP $swap (${swap_mib} MiB, $(stat -f -c %T "$(dirname "$swap")"))," \
		"vma_ra_enabled=$(cat /sys/kernel/mm/swap/vma_ra_enabled 2>/dev/null)," \
		"page-cluster was $pc_orig"
	echo "bench-swap: other swap: $(awk 'NR > 1 {print $1}' /proc/swaps | grep -vF "$swap" |
		tr '\n' ' ')"
	others=$(pgrep -x leap-agent | tr '\n' ' ')
	[ -z "$others" ] || echo "bench-swap: warning: other leap-agent processes run ($others):" \
		"expect noise, and vm.page-cluster changes if they use --kernel-readahead off"
} >&2

for ((rep = 1; rep <= REPS; rep++)); do
	for wl in $WORKLOADS; do
		for pct in $PCTS; do
			# Rotate the row order each repetition.
			n=${#rows[@]}
			for ((k = 0; k < n; k++)); do
				run_row "$rep" "$wl" "$pct" "${rows[(k + rep - 1) % n]}"
			done
		done
	done
done

fixture_teardown

# ---- medians -----------------------------------------------------------------
# shellcheck disable=SC2016
median_awk='
function median(list,   n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j > 0 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
	if (n == 0) return ""
	if (n % 2) return a[(n + 1) / 2]
	return (a[n / 2] + a[n / 2 + 1]) / 2
}
BEGIN { FS = "," }
NR == 1 { next }
{
	k = $2 SUBSEP $3 SUBSEP $5
	if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
	pc[k] = $6
	if ($7 != 0) { dist[k]++; next }
	if ($8 == 0 && $9 == 0 && $10 != "") { wall[k] = wall[k] " " $10; maj[k] = maj[k] " " $11 }
	else { bad[k]++; next }
	if ($19 != "") acc[k] = acc[k] " " $19
	if ($20 != "") cov[k] = cov[k] " " $20
	in_[k] = in_[k] " " $14; ra[k] = ra[k] " " $16
	if ($23 != "") { bpf[k] = bpf[k] " " $23; cpu[k] = cpu[k] " " $24; p50[k] = p50[k] " " $25; p99[k] = p99[k] " " $26 }
}
END {
	print "workload,limit_pct,row,page_cluster,runs_failed,runs_disturbed,wall_s,ratio_to_b,majflt,pswpin,swap_ra_hit,accuracy,coverage,bpf_ns_per_fault,agent_cpu_us_per_event,reaction_p50_us,reaction_p99_us"
	for (i = 1; i <= nk; i++) {
		split(keys[i], f, SUBSEP)
		m[keys[i]] = median(wall[keys[i]])
	}
	for (i = 1; i <= nk; i++) {
		k = keys[i]; split(k, f, SUBSEP)
		b = m[f[1] SUBSEP f[2] SUBSEP "b"]
		ratio = (b != "" && b > 0 && m[k] != "") ? sprintf("%.2f", m[k] / b) : ""
		printf "%s,%s,%s,%s,%d,%d,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", f[1], f[2], f[3], pc[k], bad[k] + 0, dist[k] + 0,
			m[k], ratio, median(maj[k]), median(in_[k]), median(ra[k]), median(acc[k]), median(cov[k]),
			median(bpf[k]), median(cpu[k]), median(p50[k]), median(p99[k])
	}
}'
awk "$median_awk" "$raw" >"$summary"

{
	echo "footprint ${FOOTPRINT_MIB} MiB, median of $REPS, wall_s = measured pass(es) only," \
		"ratio = wall / wall(b: linux readahead), majflt = swap-in misses"
	printf '%-10s %5s  %-26s %8s %6s %8s %8s %8s %8s %7s %7s %7s %7s\n' workload limit row wall_s \
		ratio majflt ra_hit accuracy coverage bpf_ns cpu_us p50_us p99_us
	awk -F, 'NR > 1 { print }' "$summary" |
		while IFS=, read -r w p r _pc bad dist wall ratio maj _in rah acc cov bpf cpu p50 p99; do
			[ -n "$wall" ] && wall=$(printf '%.3f' "$wall")
			[ -n "$acc" ] && acc=$(printf '%.3f' "$acc")
			[ -n "$cov" ] && cov=$(printf '%.3f' "$cov")
			[ -n "$bpf" ] && bpf=$(printf '%.0f' "$bpf")
			[ -n "$cpu" ] && cpu=$(printf '%.2f' "$cpu")
			printf '%-10s %4s%%  %-26s %8s %6s %8s %8s %8s %8s %7s %7s %7s %7s%s\n' "$w" "$p" \
				"$r $(row_label "$r")" "${wall:--}" "${ratio:--}" "${maj:--}" "${rah:--}" \
				"${acc:--}" "${cov:--}" "${bpf:--}" "${cpu:--}" "${p50:--}" "${p99:--}" \
				"$([ "$bad" != 0 ] && echo "  ($bad failed)")$(
					[ "$dist" != 0 ] && echo "  ($dist disturbed)")"
		done
	[ $have_agent = 1 ] || echo "(row c skipped: $AGENT does not exist yet)"
} | tee "$table"
echo "bench-swap: raw $raw" >&2
echo "bench-swap: summary $summary, table $table" >&2
[ $disturbed_runs -eq 0 ] ||
	echo "bench-swap: $disturbed_runs run(s) disturbed by a concurrent vm.page-cluster change" >&2
[ $failures -eq 0 ] || {
	echo "bench-swap: $failures run(s) failed" >&2
	exit 1
}
exit 0
