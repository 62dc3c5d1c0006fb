#!/usr/bin/env bash
# leap-timeout: 20
# SPDX-License-Identifier: MIT
# tests/sweep-stale, which tests/run-tests runs before every `make check`:
# what a killed test run left behind (a swap file on, its cgroups with a
# program still in them, its state dir, an agent's run cgroup) goes; what
# belongs to a live test, and an agent run cgroup that still holds
# processes, stays.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/fixture.sh
. "$root/tests/lib/fixture.sh"

require_root
[ -d "$FX_MEMCG_V1_ROOT" ] || FX_MEMCG_V1_ROOT=/nonexistent
[ -d "$FX_CG2_ROOT" ] || skip_all "no cgroup v2 directory at $FX_CG2_ROOT"

fixture_init
tmp=$FX_STATE

# Pids that cannot be alive: above the kernel's pid_max.
gone=$(($(cat /proc/sys/kernel/pid_max) + 1))
# And one that lives for the test: a sleeper we own.
sleep 300 &
live=$!
fixture_track_pid "$live"

swap="$FX_SWAP_DIR/leap-test-$gone-swap1"
fixture_register _fx_swap_off "$swap"
fallocate -l 16M "$swap" && chmod 600 "$swap" && mkswap -q "$swap" >/dev/null &&
	swapon -p 5 "$swap" || bail_out "cannot set up $swap"
note "a dead test's swap file is on"

live_file="$FX_SWAP_DIR/leap-test-$live-swap1"
fixture_register rm -f "$live_file"
: >"$live_file"

# A dead test's cgroup with a sub-cgroup and a program still in it.
dead_cg="$FX_CG2_ROOT/leap-test-$gone-1"
mkdir -p "$dead_cg/child" || bail_out "cannot create $dead_cg"
sleep 300 &
orphan=$!
fixture_track_pid "$orphan"
echo "$orphan" >"$dead_cg/child/cgroup.procs" || bail_out "cannot move a task into $dead_cg"

# A gone agent's run cgroups: one empty, one with a program.
empty_run="$FX_CG2_ROOT/leap-run-$gone"
busy_run="$FX_CG2_ROOT/leap-run-$((gone + 1))"
mkdir "$empty_run" "$busy_run" || bail_out "cannot create run cgroups"
sleep 300 &
survivor=$!
fixture_track_pid "$survivor"
echo "$survivor" >"$busy_run/cgroup.procs" || bail_out "cannot move a task into $busy_run"

# Whatever the sweep did not remove goes at teardown, after the sleepers
# (a teardown stops tracked pids first).
remove_test_cgroups()
{
	local d
	for d in "$dead_cg/child" "$dead_cg" "$empty_run" "$busy_run"; do
		[ ! -d "$d" ] || rmdir "$d"
	done
}
fixture_register remove_test_cgroups

state="${TMPDIR:-/tmp}/leap-test-$gone.sweeptest"
fixture_register rm -rf "$state"
mkdir "$state"

bash "$root/tests/sweep-stale" 2>"$tmp/sweep.err"
is "$?" 0 "sweep-stale exits 0"
diag "$(cat "$tmp/sweep.err")"

ok "$(! grep -q "^$swap " /proc/swaps; echo $?)" "the dead test's swap is off"
ok "$([ ! -e "$swap" ]; echo $?)" "and its file removed"
ok "$([ -e "$live_file" ]; echo $?)" "a live test's file stays"
ok "$([ ! -d "$dead_cg" ]; echo $?)" "the dead test's cgroup tree is gone"
ok "$(! _fx_alive "$orphan"; echo $?)" "with the program left in it"
ok "$([ ! -d "$empty_run" ]; echo $?)" "a gone agent's empty run cgroup is removed"
ok "$([ -d "$busy_run" ]; echo $?)" "one that holds a program stays"
ok "$(_fx_alive "$survivor"; echo $?)" "and the program lives"
like "$(cat "$tmp/sweep.err")" "left $busy_run: it still holds processes" "and the sweep says so"
ok "$([ ! -d "$state" ]; echo $?)" "the dead test's state dir is removed"
like "$(cat "$tmp/sweep.err")" "removed $swap \\(test $gone is gone\\)" "each removal is reported"

done_testing
