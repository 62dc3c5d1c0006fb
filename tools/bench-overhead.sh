#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench-overhead: what watching faults costs programs that never swap.
#
# Two programs, neither of which swaps:
#   fault   tools/overhead/fault-touch.c: maps, touches and unmaps MiB of
#           anonymous memory ROUNDS times (one first-touch fault a page);
#           its own wall time.
#   cc      a compile job: gcc -O2 -c of leap's own userspace sources, two
#           at a time; wall time.
# Rows, interleaved, each program in a cgroup2 directory of its own:
#   bare    nothing loaded
#   floor   empty BPF programs on the observer's tracepoint hooks
#           (tools/overhead/hook-floor.bpf.c): what any program there costs
#   beside  leap-agent attach watching another, empty cgroup
#   under   leap-agent attach watching the program's own cgroup (policy
#           leap; nothing swaps, so nothing is prefetched)
#   beside-armed, under-armed
#           the same with --fault-hooks always: what every program pays
#           while some target swaps in (the hooks attached)
# Reports the median of REPS per row and its ratio to bare, then one more
# pass of beside and under with --bpf-stats: runs and ns per run of each
# BPF program (bpf_enable_stats adds its own clock reads, so those times
# are upper bounds).
#
# LEAP_OVERHEAD_AGENT=PATH runs another build's leap-agent (the code
# before a change) in the agent rows.
#
#   tools/bench-overhead.sh [--reps N] [--mib M] [--rounds R] [--programs "fault cc"]
#                           [--rows "bare floor beside under beside-armed under-armed"]
#                           [--hook auto|fentry|tracepoint]
#                           [--csv FILE]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
AGENT=${LEAP_OVERHEAD_AGENT:-$root/bin/leap-agent}
FAULT=$root/.output/overhead/fault-touch
FLOOR=$root/.output/overhead/hook-floor
FLOOR_OBJ=$root/.output/overhead/hook-floor.bpf.o

reps=5 mib=256 rounds=8 programs="fault cc" rows="bare floor beside under beside-armed under-armed"
hook=auto csv=
while [ $# -gt 0 ]; do
	case $1 in
	--reps) reps=$2; shift 2 ;;
	--mib) mib=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--programs) programs=$2; shift 2 ;;
	--rows) rows=$2; shift 2 ;;
	--hook) hook=$2; shift 2 ;;
	--csv) csv=$2; shift 2 ;;
	-h | --help) sed -n '3,29p' "$0"; exit 0 ;;
	*) echo "bench-overhead: unknown option $1" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "bench-overhead: needs root (loads BPF)" >&2; exit 2; }
for b in "$AGENT" "$FAULT" "$FLOOR" "$FLOOR_OBJ"; do
	[ -e "$b" ] || { echo "bench-overhead: $b not built (make all)" >&2; exit 2; }
done
[ -e /sys/fs/bpf/leap ] && { echo "bench-overhead: an agent is running (/sys/fs/bpf/leap)" >&2; exit 2; }
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
[ -n "$cg2" ] || { echo "bench-overhead: no cgroup2 mount" >&2; exit 2; }

work=$(mktemp -d /tmp/leap-overhead.XXXXXX)
mine=$cg2/leap-overhead-$$
other=$cg2/leap-overhead-other-$$
helper=
cleanup() {
	[ -n "$helper" ] && kill -INT "$helper" 2>/dev/null && wait "$helper" 2>/dev/null
	for d in "$mine" "$other"; do
		[ -d "$d" ] || continue
		while read -r p; do echo "$p" >"$cg2/cgroup.procs" 2>/dev/null || true; done <"$d/cgroup.procs"
		rmdir "$d" 2>/dev/null || true
	done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
mkdir "$mine" "$other"
if [ -z "$csv" ]; then
	mkdir -p "$root/bench/out"
	csv=$root/bench/out/overhead-$(date +%Y%m%d-%H%M%S).csv
fi
echo "program,row,rep,seconds" >"$csv"

# The compile job's inputs: leap's userspace C files (no generated headers).
# (No process substitution: the VM test bed's guests have no /dev/fd.)
read -ra cc_srcs <<<"$(cd "$root" && echo user/lib/*.c user/agent/*.c user/reg/*.c tools/sim/*.c)"

# Runs program $1 in $mine; prints its wall seconds.
run_program() {
	case $1 in
	fault)
		sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$mine" \
			"$FAULT" "$mib" "$rounds"
		;;
	cc)
		local t0 t1 out=$work/cc
		rm -rf "$out" && mkdir -p "$out"
		t0=$(date +%s.%N)
		sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$mine" \
			sh -c "cd '$root' && printf '%s\n' ${cc_srcs[*]} |
				xargs -P2 -I{} sh -c 'gcc -O2 -std=gnu11 -D_GNU_SOURCE -Iinclude -I.output -Iuser -Ibpf -Iuser/agent -c {} -o \"$out/\$(echo {} | tr / _).o\"'"
		t1=$(date +%s.%N)
		awk -v a="$t1" -v b="$t0" 'BEGIN { printf "%.6f\n", a - b }'
		;;
	esac
}

# Starts what row $1 needs (extra args go to the agent); waits until attached.
start_row() {
	local row=$1 err=$work/helper.err
	shift
	helper=
	case $row in
	bare) return 0 ;;
	floor) "$FLOOR" "$FLOOR_OBJ" 2>"$err" & ;;
	beside) "$AGENT" attach --hook "$hook" --cgroup "$other" "$@" 2>"$err" & ;;
	under) "$AGENT" attach --hook "$hook" --cgroup "$mine" "$@" 2>"$err" & ;;
	beside-armed) "$AGENT" attach --hook "$hook" --fault-hooks always --cgroup "$other" \
		"$@" 2>"$err" & ;;
	under-armed) "$AGENT" attach --hook "$hook" --fault-hooks always --cgroup "$mine" \
		"$@" 2>"$err" & ;;
	esac
	helper=$!
	for _ in $(seq 100); do
		grep -q attached "$err" 2>/dev/null && return 0
		kill -0 "$helper" 2>/dev/null || break
		sleep 0.1
	done
	echo "bench-overhead: row $row did not start: $(cat "$err")" >&2
	exit 1
}

stop_row() {
	[ -n "$helper" ] || return 0
	kill -INT "$helper" 2>/dev/null || true
	wait "$helper" 2>/dev/null || true
	helper=
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "bench-overhead: $(uname -r), $(nproc) CPUs, reps $reps, fault-touch ${mib} MiB x $rounds," \
	"compile job ${#cc_srcs[@]} files"
read -ra row_list <<<"$rows"
for rep in $(seq "$reps"); do
	for prog in $programs; do
		# Rows in a rotating order, so that no row always runs first.
		k=$(((rep - 1) % ${#row_list[@]}))
		for row in "${row_list[@]:k}" "${row_list[@]:0:k}"; do
			start_row "$row"
			s=$(run_program "$prog")
			stop_row
			echo "$prog,$row,$rep,$s" >>"$csv"
		done
	done
done

printf '\n%-8s %-13s %10s %8s   %s\n' program row median vs-bare "all runs (s)"
for prog in $programs; do
	base=$(awk -F, -v p="$prog" '$1 == p && $2 == "bare" { print $4 }' "$csv" | median)
	for row in $rows; do
		m=$(awk -F, -v p="$prog" -v r="$row" '$1 == p && $2 == r { print $4 }' "$csv" | median)
		all=$(awk -F, -v p="$prog" -v r="$row" '$1 == p && $2 == r { printf "%.3f ", $4 }' "$csv")
		printf '%-8s %-13s %10.4f %8.3f   %s\n' "$prog" "$row" "$m" \
			"$(awk -v m="$m" -v b="$base" 'BEGIN { print m / b }')" "$all"
	done
done

# Where the BPF time goes: one pass of the agent's rows with --bpf-stats.
for row in beside under beside-armed under-armed; do
	case " $rows " in *" $row "*) ;; *) continue ;; esac
	start_row "$row" --bpf-stats
	run_program fault >/dev/null
	sleep 1.2 # a state file with the counts
	cp /run/leap/agent.json "$work/$row.state" 2>/dev/null || true
	stop_row
	printf '\nBPF programs, %s (fault-touch, --bpf-stats):\n' "$row"
	jq -r '.agent.bpf_progs // {} | to_entries[] |
		"  \(.key): \(.value.run_cnt) runs, \(if .value.run_cnt > 0 then
		(.value.run_time_ns / .value.run_cnt * 10 | floor / 10) else 0 end) ns/run"' \
		"$work/$row.state" 2>/dev/null || echo "  (no state file)"
done
echo
echo "bench-overhead: raw runs in $csv"
