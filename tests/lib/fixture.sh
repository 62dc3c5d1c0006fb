# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# tests/lib/fixture.sh: swap, memory cgroups and sysctls for leap's system
# tests and benchmarks, with teardown that runs however the script ends.
#
#   fixture_init               state dir, an EXIT trap and a guardian process
#                              that tear down everything registered below
#                              however the script ends (exit, error, signal)
#   require_root               skip_all "needs root" unless uid 0
#   fixture_register CMD...    run CMD at teardown (LIFO); works from subshells
#   fixture_track_pid PID      SIGKILL PID at teardown if still alive
#   fixture_teardown           run all registered cleanups now (idempotent)
#   fixture_leftovers          print what this test left behind (empty = clean)
#   swap_file_on SIZE_MIB      preallocated swap file on the root fs, swapon;
#                              prints its path.  With FX_SWAP_DEV set (a
#                              guest's scratch disk: its root filesystem is
#                              read-only 9p, /tmp tmpfs), that block device
#                              instead, whatever SIZE_MIB
#   zram_swap_on SIZE_MIB      a free zram device as swap, above the files'
#                              priority (a fast, CPU-bound swap device);
#                              prints its path; swapoff and reset at teardown
#   memcg_create LIMIT         v1 memory cgroup (limit, swappiness 60) + a v2
#                              dir of the same name; prints a handle.  On a
#                              pure cgroup v2 host (no v1 memory controller;
#                              most users' hosts) one v2 cgroup with
#                              memory.max, and both paths below name it
#   memcg_destroy H            kill H's tasks, remove both dirs (also at teardown)
#   memcg_path_v1 H / memcg_path_v2 H    directories of handle H
#   memcg_run H CMD...         run CMD inside both cgroups of H
#   memcg_run_timeout SECS H CMD...  the same under timeout(1), tracked so a
#                              teardown stops it; returns CMD's status
#   memcg_stat H [FIELD]       memory.stat of H, or one field (also: usage,
#                              max_usage, limit, swap_usage, failcnt)
#   memcg_pids H               pids in H
#   vmstat_get FIELD           a /proc/vmstat counter (pswpin, swap_ra, ...)
#   page_cluster_set N         vm.page-cluster = N, restored at teardown
#
# Registration goes through a file in the state dir, so helpers called in
# command substitutions ($(memcg_create 64M)) still register their cleanup
# with the parent shell.  Names carry "leap-test-$$" so concurrent tests and
# sessions do not collide and leftovers are attributable.

_fx_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/lib/tap.sh
. "$_fx_dir/tap.sh"

FX_STATE=
FX_GUARDIAN=
FX_MEMCG_V1_ROOT=${FX_MEMCG_V1_ROOT:-/sys/fs/cgroup/memory}
# The v2 hierarchy: beside the v1 controllers (a hybrid host, this
# development machine) or at the top (pure cgroup v2).
if [ -z "${FX_CG2_ROOT:-}" ]; then
	FX_CG2_ROOT=/sys/fs/cgroup/unified
	[ -f /sys/fs/cgroup/cgroup.controllers ] && FX_CG2_ROOT=/sys/fs/cgroup
fi
# Pure v2 when there is no v1 memory controller: then a handle is one v2
# cgroup whose limit is memory.max.
FX_MEMCG_V2_ONLY=
[ -f "$FX_MEMCG_V1_ROOT/memory.limit_in_bytes" ] || FX_MEMCG_V2_ONLY=1
FX_SWAP_DIR=${FX_SWAP_DIR:-/var/tmp}
FX_SWAP_PRIO=${FX_SWAP_PRIO:-1000}
# In a guest of tests/vm/suite.sh: its scratch disk (swap_file_on).
FX_SWAP_DEV=${FX_SWAP_DEV:-${LEAPVM_DISK:-}}
FX_TAG="leap-test-$$"

_fx_err()
{
	echo "fixture: $*" >&2
}

fixture_init()
{
	FX_STATE=$(mktemp -d "${TMPDIR:-/tmp}/$FX_TAG.XXXXXX") || {
		_fx_err "cannot create a state dir"
		return 1
	}
	: >"$FX_STATE/cleanup"
	: >"$FX_STATE/pids"
	echo 0 >"$FX_STATE/counter"
	trap '_fx_on_exit' EXIT
	_fx_guardian_start
}

# Normal ends (done_testing, exit, set -e, the end of the script) tear down
# in the EXIT trap.  Signals are deliberately not trapped: bash 5.2 can run
# a trap while it is parsing a command substitution and then corrupts its
# parser state ("unexpected EOF while looking for matching `)'"), leaving a
# script that goes on running without its functions' remaining commands.
# Instead the shell dies on the signal as usual and a guardian process,
# which ignores HUP/INT/TERM, notices and tears down from the state dir.
_fx_on_exit()
{
	local rc=$?
	fixture_teardown
	[ -n "$FX_STATE" ] && rm -rf "$FX_STATE"
	FX_STATE=
	_fx_guardian_stop
	exit $rc
}

# Torn down already: the guardian has nothing left to do.  Left to notice
# the test's end itself, it and its `sleep 0.2` outlived the test by up to
# 0.2 s, and a guest part's leftover check (tests/vm/suite.sh) found them
# "still running" (a fresh-clone run of guest-6.1.t's arming, 2026-12-01).
# Stopped first, so it forks no new sleep while its children are killed;
# it ignores TERM (below), not KILL.
_fx_guardian_stop()
{
	[ -n "${FX_GUARDIAN:-}" ] || return 0
	kill -STOP "$FX_GUARDIAN" 2>/dev/null || return 0
	pkill -KILL -P "$FX_GUARDIAN" 2>/dev/null
	kill -KILL "$FX_GUARDIAN" 2>/dev/null
	wait "$FX_GUARDIAN" 2>/dev/null
	FX_GUARDIAN=
}

_fx_guardian_start()
{
	local main=$$
	(
		trap - EXIT
		trap '' HUP INT TERM
		exec </dev/null >/dev/null
		# Until the test is gone or a zombie.  Run by bare prove, the
		# test stays a zombie until prove reaps it, which prove does only
		# at EOF on the test's stderr, which we hold (tail --pid waited
		# for ever there).  A builtin read: no fork per poll.
		local st
		while read -r st 2>/dev/null <"/proc/$main/stat" && [[ ${st##*) } != Z* ]]; do
			sleep 0.2
		done
		if [ -d "$FX_STATE" ]; then
			echo "# fixture: test $main died, tearing down its fixtures" >&2
			fixture_teardown
			rm -rf "$FX_STATE"
		fi
	) &
	# shellcheck disable=SC2034 # for callers
	FX_GUARDIAN=$!
}

require_root()
{
	[ "$(id -u)" -eq 0 ] || skip_all "needs root"
}

# A number unique within this test (shared with subshells through the file).
_fx_next()
{
	local n
	n=$(($(cat "$FX_STATE/counter") + 1))
	echo "$n" >"$FX_STATE/counter"
	echo "$n"
}

_fx_need_init()
{
	[ -n "$FX_STATE" ] && [ -d "$FX_STATE" ] && return 0
	_fx_err "fixture_init was not called"
	return 1
}

fixture_register()
{
	_fx_need_init || return 1
	printf '%q ' "$@" >>"$FX_STATE/cleanup"
	echo >>"$FX_STATE/cleanup"
}

fixture_track_pid()
{
	_fx_need_init || return 1
	echo "$1" >>"$FX_STATE/pids"
}

_fx_alive()
{
	[ -d "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}

_fx_stop_pids()
{
	local pid i live
	# shellcheck disable=SC2046
	live=$(while read -r pid; do
		[ -n "$pid" ] && _fx_alive "$pid" && echo "$pid"
	done <"$1")
	[ -n "$live" ] || return 0
	# shellcheck disable=SC2086
	kill -TERM $live 2>/dev/null
	for ((i = 0; i < 30; i++)); do
		for pid in $live; do
			_fx_alive "$pid" && break
			pid=
		done
		[ -z "$pid" ] && return 0
		sleep 0.1
	done
	# shellcheck disable=SC2086
	kill -KILL $live 2>/dev/null
	return 0
}

fixture_teardown()
{
	local -a cmds
	local i pid
	[ -n "$FX_STATE" ] && [ -d "$FX_STATE" ] || return 0
	# TERM first (timeout(1) passes it on, an agent can clean up), KILL after 3 s.
	_fx_stop_pids "$FX_STATE/pids"
	mapfile -t cmds <"$FX_STATE/cleanup"
	for ((i = ${#cmds[@]} - 1; i >= 0; i--)); do
		# Drop the entry first: whoever finishes an interrupted teardown (the
		# guardian) resumes with the rest and never runs one twice.
		printf '%s\n' "${cmds[@]:0:i}" >"$FX_STATE/cleanup"
		[ -n "${cmds[i]}" ] || continue
		eval "${cmds[i]}" || _fx_err "cleanup failed: ${cmds[i]}"
	done
	: >"$FX_STATE/cleanup"
	# Reap our own children so none outlive the test.
	while read -r pid; do
		[ -n "$pid" ] && wait "$pid" 2>/dev/null
	done <"$FX_STATE/pids"
	return 0
}

fixture_leftovers()
{
	local d pid
	grep -F "$FX_TAG-" /proc/swaps | awk '{print "swap " $1}'
	for d in "$FX_MEMCG_V1_ROOT"/"$FX_TAG"-* "$FX_CG2_ROOT"/"$FX_TAG"-*; do
		[ -e "$d" ] && echo "cgroup $d"
	done
	for d in "$FX_SWAP_DIR"/"$FX_TAG"-*; do
		[ -e "$d" ] && echo "file $d"
	done
	if [ -n "$FX_STATE" ] && [ -f "$FX_STATE/pids" ]; then
		while read -r pid; do
			[ -n "$pid" ] && _fx_alive "$pid" && echo "process $pid"
		done <"$FX_STATE/pids"
	fi
	if [ -n "$FX_STATE" ] && [ -f "$FX_STATE/page_cluster.initial" ] &&
		[ "$(cat /proc/sys/vm/page-cluster)" != "$(cat "$FX_STATE/page_cluster.initial")" ]; then
		echo "sysctl vm.page-cluster=$(cat /proc/sys/vm/page-cluster)" \
			"(was $(cat "$FX_STATE/page_cluster.initial"))"
	fi
	return 0
}

# ---- swap ------------------------------------------------------------------

_fx_swap_off()
{
	local f=$1 i
	if grep -q "^$f " /proc/swaps; then
		for i in 1 2 3; do
			swapoff "$f" && break
			sleep 1
		done
	fi
	rm -f "$f"
	! grep -q "^$f " /proc/swaps
}

_fx_zram_off()
{
	local d=$1
	grep -q "^$d " /proc/swaps && swapoff "$d"
	echo 1 >"/sys/block/${d#/dev/}/reset"
	! grep -q "^$d " /proc/swaps
}

zram_swap_on()
{
	local mib=$1 z
	_fx_need_init || return 1
	[ -e /sys/class/zram-control ] || modprobe zram num_devices=1 2>/dev/null
	for z in /sys/block/zram*; do
		[ -e "$z/disksize" ] && [ "$(cat "$z/disksize")" = 0 ] && break
		z=
	done
	[ -n "$z" ] || {
		_fx_err "zram_swap_on: no free zram device (no zram module, or all in use)"
		return 1
	}
	fixture_register _fx_zram_off "/dev/${z##*/}"
	echo "${mib}M" >"$z/disksize" && mkswap -q "/dev/${z##*/}" >/dev/null &&
		swapon -p $((FX_SWAP_PRIO + 1000)) "/dev/${z##*/}" || {
		_fx_err "zram_swap_on: cannot enable swap on /dev/${z##*/}"
		return 1
	}
	echo "/dev/${z##*/}"
}

# swapoff for a device of FX_SWAP_DEV (not removed, unlike a file).
_fx_swapdev_off()
{
	grep -q "^$1 " /proc/swaps && swapoff "$1"
	! grep -q "^$1 " /proc/swaps
}

swap_file_on()
{
	local mib=$1 fstype f
	_fx_need_init || return 1
	if [ -n "$FX_SWAP_DEV" ]; then
		fixture_register _fx_swapdev_off "$FX_SWAP_DEV"
		mkswap -q "$FX_SWAP_DEV" >/dev/null && swapon -p "$FX_SWAP_PRIO" "$FX_SWAP_DEV" || {
			_fx_err "swap_file_on: cannot enable swap on $FX_SWAP_DEV"
			return 1
		}
		echo "$FX_SWAP_DEV"
		return 0
	fi
	[[ $mib =~ ^[0-9]+$ ]] && [ "$mib" -gt 0 ] || {
		_fx_err "swap_file_on: size in MiB expected, got '$mib'"
		return 1
	}
	fstype=$(stat -f -c %T "$FX_SWAP_DIR") || return 1
	case $fstype in
	tmpfs | ramfs | overlayfs)
		# Swapping onto memory-backed storage deadlocks (design.md, section 3).
		_fx_err "swap_file_on: refusing, $FX_SWAP_DIR is on $fstype"
		return 1
		;;
	esac
	f="$FX_SWAP_DIR/$FX_TAG-swap$(_fx_next)"
	fixture_register _fx_swap_off "$f"
	# fallocate leaves unwritten extents, which ext4/iomap swapon accepts;
	# fall back to writing zeros where it is refused.
	if ! { fallocate -l "${mib}M" "$f" && chmod 600 "$f" && mkswap -q "$f" >/dev/null &&
		swapon -p "$FX_SWAP_PRIO" "$f"; } 2>/dev/null; then
		rm -f "$f"
		dd if=/dev/zero of="$f" bs=1M count="$mib" status=none &&
			chmod 600 "$f" && mkswap -q "$f" >/dev/null && swapon -p "$FX_SWAP_PRIO" "$f" || {
			_fx_err "swap_file_on: cannot enable swap on $f"
			return 1
		}
	fi
	if [ "$(awk 'NR > 1' /proc/swaps | grep -vcF "$f")" -gt 0 ]; then
		_fx_err "note: other swap devices are active:" \
			"$(awk 'NR > 1 {printf "%s ", $1}' /proc/swaps | sed "s|$f ||")"
	fi
	echo "$f"
}

# ---- memory cgroups --------------------------------------------------------

memcg_path_v1()
{
	if [ -n "$FX_MEMCG_V2_ONLY" ]; then
		echo "$FX_CG2_ROOT/$1"
	else
		echo "$FX_MEMCG_V1_ROOT/$1"
	fi
}

memcg_path_v2()
{
	echo "$FX_CG2_ROOT/$1"
}

memcg_pids()
{
	local d
	for d in "$(memcg_path_v1 "$1")" "$(memcg_path_v2 "$1")"; do
		[ -f "$d/cgroup.procs" ] && cat "$d/cgroup.procs"
	done | sort -un
}

_fx_memcg_destroy()
{
	local h=$1 d i pids ok=0
	for ((i = 0; i < 100; i++)); do
		pids=$(memcg_pids "$h")
		[ -z "$pids" ] && break
		# shellcheck disable=SC2086
		kill -KILL $pids 2>/dev/null
		sleep 0.1
	done
	for d in "$(memcg_path_v1 "$h")" "$(memcg_path_v2 "$h")"; do
		[ -d "$d" ] || continue
		for ((i = 0; i < 50; i++)); do
			rmdir "$d" 2>/dev/null && break
			sleep 0.1
		done
		[ -d "$d" ] && {
			_fx_err "cannot remove $d"
			ok=1
		}
	done
	return $ok
}

memcg_destroy()
{
	_fx_memcg_destroy "$1"
}

# memcg_create LIMIT: LIMIT as memory.limit_in_bytes takes it (bytes, K/M/G).
# memory.swappiness is set to 60 explicitly: a v1 child inherits its parent's
# value, and 60 (the kernel default) keeps results independent of whatever
# the host or a parent cgroup was tuned to; 0 would forbid swapping in a v1
# memcg and turn every test into an OOM kill.
memcg_create()
{
	local limit=$1 h v1 v2
	_fx_need_init || return 1
	h="$FX_TAG-$(_fx_next)"
	v1=$(memcg_path_v1 "$h")
	v2=$(memcg_path_v2 "$h")
	fixture_register _fx_memcg_destroy "$h"
	if [ -n "$FX_MEMCG_V2_ONLY" ]; then
		# The children of the root get the memory controller only where
		# the root's subtree_control names it (systemd's hosts do).
		grep -qw memory "$FX_CG2_ROOT/cgroup.subtree_control" ||
			echo +memory >"$FX_CG2_ROOT/cgroup.subtree_control" || {
			_fx_err "memcg_create: no memory controller in $FX_CG2_ROOT"
			return 1
		}
		# cgroup v2 has no per-cgroup swappiness: the host's vm.swappiness.
		mkdir "$v2" && echo "$limit" >"$v2/memory.max" || return 1
		echo "$h"
		return 0
	fi
	mkdir "$v1" || return 1
	echo "$limit" >"$v1/memory.limit_in_bytes" || return 1
	echo 60 >"$v1/memory.swappiness" || return 1
	mkdir "$v2" || return 1
	echo "$h"
}

# memcg_run H CMD...: CMD runs with its pid in both cgroups.  Called in a
# subshell already (CMD &, $(...), a pipeline) it moves that subshell and
# execs, so $! is CMD's own pid; otherwise it forks one subshell to do so.
memcg_run()
{
	local h=$1
	shift
	if [ "$BASHPID" != "$$" ]; then
		echo "$BASHPID" >"$(memcg_path_v1 "$h")/cgroup.procs" &&
			echo "$BASHPID" >"$(memcg_path_v2 "$h")/cgroup.procs" || exit 126
		exec "$@"
	fi
	(
		echo "$BASHPID" >"$(memcg_path_v1 "$h")/cgroup.procs" &&
			echo "$BASHPID" >"$(memcg_path_v2 "$h")/cgroup.procs" || exit 126
		exec "$@"
	)
}

memcg_run_timeout()
{
	local secs=$1 h=$2 pid rc
	shift 2
	memcg_run "$h" timeout --kill-after=5 "$secs" "$@" &
	pid=$!
	fixture_track_pid "$pid"
	wait_through_signals "$pid"
	rc=$?
	[ $rc -eq 124 ] && _fx_err "timed out after ${secs}s: $*"
	return $rc
}

# The file behind each of memcg_stat's names, v1 or pure v2
# (Documentation/admin-guide/cgroup-v2.rst; memory.peak is Linux 5.19+).
_fx_memcg_file()
{
	if [ -n "$FX_MEMCG_V2_ONLY" ]; then
		case $1 in
		usage) echo memory.current ;;
		max_usage) echo memory.peak ;;
		limit) echo memory.max ;;
		esac
	else
		case $1 in
		limit) echo memory.limit_in_bytes ;;
		*) echo "memory.${1}_in_bytes" ;;
		esac
	fi
}

memcg_stat()
{
	local d f=${2:-} n
	d=$(memcg_path_v1 "$1")
	case $f in
	'')
		cat "$d/memory.stat"
		for n in usage max_usage limit; do
			echo "$n $(cat "$d/$(_fx_memcg_file $n)" 2>/dev/null || echo 0)"
		done
		;;
	usage | max_usage | limit)
		cat "$d/$(_fx_memcg_file "$f")"
		;;
	failcnt)
		# v2 counts the times usage hit memory.max in memory.events.
		if [ -n "$FX_MEMCG_V2_ONLY" ]; then
			awk '$1 == "max" {print $2}' "$d/memory.events"
		else
			cat "$d/memory.failcnt"
		fi
		;;
	swap_usage)
		if [ -n "$FX_MEMCG_V2_ONLY" ]; then
			cat "$d/memory.swap.current"
		else
			echo $(($(cat "$d/memory.memsw.usage_in_bytes") - $(cat "$d/memory.usage_in_bytes")))
		fi
		;;
	*)
		awk -v f="$f" '$1 == f {print $2; found = 1} END {exit !found}' "$d/memory.stat"
		;;
	esac
}

vmstat_get()
{
	awk -v f="$1" '$1 == f {print $2; found = 1} END {exit !found}' /proc/vmstat
}

# ---- sysctls ---------------------------------------------------------------

# page_cluster.orig: the value to restore at the next teardown (removed once
# restored, so a later page_cluster_set registers again);
# page_cluster.last: the value we last wrote; page_cluster.initial: the value
# before the first change, for leftovers.
# vm.page-cluster is global and other actors (a concurrent test, an agent's
# --kernel-readahead off) save and restore it too.  Restoring only while it
# still holds our own last value keeps us from writing back a value we found
# in the middle of someone else's change, after they restored theirs.
_fx_page_cluster_restore()
{
	local cur
	[ -f "$FX_STATE/page_cluster.orig" ] || return 0
	cur=$(cat /proc/sys/vm/page-cluster)
	if [ "$cur" = "$(cat "$FX_STATE/page_cluster.last" 2>/dev/null)" ]; then
		cat "$FX_STATE/page_cluster.orig" >/proc/sys/vm/page-cluster || return 1
	else
		_fx_err "vm.page-cluster is $cur, set by someone else since; leaving it"
	fi
	rm -f "$FX_STATE/page_cluster.orig" "$FX_STATE/page_cluster.last"
}

page_cluster_set()
{
	_fx_need_init || return 1
	[[ $1 =~ ^[0-9]+$ ]] || {
		_fx_err "page_cluster_set: integer expected, got '$1'"
		return 1
	}
	if [ ! -f "$FX_STATE/page_cluster.orig" ]; then
		cat /proc/sys/vm/page-cluster >"$FX_STATE/page_cluster.orig" || return 1
		[ -f "$FX_STATE/page_cluster.initial" ] ||
			cp "$FX_STATE/page_cluster.orig" "$FX_STATE/page_cluster.initial"
		fixture_register _fx_page_cluster_restore
	fi
	echo "$1" >/proc/sys/vm/page-cluster && echo "$1" >"$FX_STATE/page_cluster.last"
}
