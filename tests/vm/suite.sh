#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/vm/suite.sh PLAN: what tests/sys/guest-*.t boots a guest for: every
# guest check of one kernel in one boot (tests/vm/boot.sh runs this inside).
# PLAN (a file the guest reads through the 9p root) has one part a line:
#
#   NAME TIMEOUT SCRIPT [ARGS...]      (words as the shell splits them)
#
# Each part runs in turn: SCRIPT (a guest script of tests/vm, or a system
# test of tests/sys) with LEAPVM_OUT=/run/leapvm/NAME (where it writes its
# TAP and logs; the host reads them from the run dir) and LEAPVM_DISK (the
# boot's scratch disk, /dev/vda, which each part may swap to or format and
# must release), under TIMEOUT seconds.  NAME/exit gets its status (124 on
# timeout), NAME/seconds its time.  Between parts what a part left behind
# is taken away and written to NAME/leftovers (the next part must find the
# guest as the first did): processes of the part still running (each part
# runs in a session of its own, so a helper that made its own process
# group, as timeout(1) does, is found too), swap still on, the disk still
# mounted, leap processes still running.  Parts are independent: one that
# fails or times out does not stop the next, and each step of taking away
# has a limit of its own (CI, 2026-11-29: the rdma part killed at its
# limit while it swapped through leap-swapd, and the three parts after it
# never ran, the boot's time gone; here, a part killed at that point leaves
# its workload alive, in the process group of its own timeout(1)).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
plan=${1:?usage: suite.sh PLAN}
root=/run/leapvm
export LEAPVM_DISK=${LEAPVM_DISK:-/dev/vda}

# The live processes of session sid (not its zombies, whose parent may be
# an init that reaps late).
session_procs()
{
	ps -e -o pid=,sid=,stat= 2>/dev/null | awk -v s="$1" '$2 == s && $3 !~ /^Z/ {print $1}'
}

# What a part left: said, and taken away.  Its processes go first: a
# workload still alive keeps its pages in swap, and swapoff would have to
# read them all back, through a backend the part's end may have killed.
leftovers()
{
	local d=$1 sid=$2 p i
	for p in $(session_procs "$sid"); do
		echo "$(cat "/proc/$p/comm" 2>/dev/null) still running"
		kill -KILL "$p" 2>/dev/null
	done
	for ((i = 0; i < 50; i++)); do
		[ -n "$(session_procs "$sid")" ] || break
		sleep 0.1
	done
	[ -n "$(session_procs "$sid")" ] && echo "processes of the part survived SIGKILL 5 s"
	if grep -q "^$LEAPVM_DISK " /proc/swaps 2>/dev/null; then
		echo "swap still on $LEAPVM_DISK"
		timeout -k 5 60 swapoff "$LEAPVM_DISK" || echo "swapoff $LEAPVM_DISK: status $?"
	fi
	for p in $(awk 'NR > 1 {print $1}' /proc/swaps 2>/dev/null); do
		echo "swap still on $p"
		timeout -k 5 60 swapoff "$p" || echo "swapoff $p: status $?"
	done
	if grep -q "^$LEAPVM_DISK " /proc/mounts 2>/dev/null; then
		echo "$LEAPVM_DISK still mounted"
		timeout -k 5 20 umount -l "$LEAPVM_DISK"
	fi
	if rdma link show 2>/dev/null | grep -q 'link rxe'; then
		echo "an rxe device left: $(rdma link show 2>/dev/null | tr '\n' ' ')"
		for p in $(rdma link show 2>/dev/null | sed -n 's|^link \(rxe[0-9]*\)/.*|\1|p'); do
			timeout -k 5 20 rdma link delete "$p"
		done
	fi
	for p in leap-agent leap-swapd leap-memd leap-workload; do
		if pgrep -x "$p" >/dev/null; then
			echo "$p still running"
			pkill -KILL -x "$p"
		fi
	done
	sleep 0.2
	# A dead leap-agent's pins, which would make the next one refuse.
	[ -d /sys/fs/bpf/leap ] && echo "/sys/fs/bpf/leap left" && rm -rf /sys/fs/bpf/leap
	: "$d"
}

echo "suite: kernel $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo) MiB"
failed=0
words=()
while IFS= read -r line; do
	# The host wrote each word quoted (printf %q): the shell's own reading.
	eval "words=($line)"
	[ ${#words[@]} -ge 3 ] || continue
	name=${words[0]} limit=${words[1]} script=${words[2]}
	dir=$root/$name
	mkdir -p "$dir"
	echo "suite: $name: $script ${words[*]:3} (${limit}s)"
	t0=$(date +%s.%N)
	# A session of its own (setsid: its id is the pid it starts with, as
	# a background job of a shell without job control is no group leader).
	LEAPVM_OUT=$dir setsid timeout -k 10 "$limit" bash "$script" "${words[@]:3}" \
		>"$dir/stdout.log" 2>&1 </dev/null &
	part=$!
	wait "$part"
	rc=$?
	awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f\n", b - a }' >"$dir/seconds"
	echo "$rc" >"$dir/exit"
	leftovers "$dir" "$part" >"$dir/leftovers" 2>&1
	echo "suite: $name: status $rc after $(cat "$dir/seconds")s$([ -s "$dir/leftovers" ] && echo ", left: $(tr '\n' ';' <"$dir/leftovers")")"
	[ "$rc" = 0 ] || failed=$((failed + 1))
done <"$plan"
dmesg >"$root/dmesg.txt" 2>&1
exit $((failed > 0))
