#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# leap-timeout: 1200
# tests/sys/vm.t: one binary across kernels.  Boots Debian's 5.10, 6.1 and
# 6.12 kernels under qemu TCG (tests/vm/, docs/vm.md) with this checkout's
# binaries reached over the 9p root, and runs tests/vm/checks.sh in each:
# the BPF observer loads and picks its hooks (fentry where the kernel allows
# it), leap-agent run sees events, prefetches and hits on a swapping
# workload with swap on a virtio disk, and says "observing only" where
# process_madvise refuses WILLNEED.  Each guest check is one TAP line here.
# Also: a boot past its timeout and a boot whose runner is killed leave no
# qemu behind.
#
# Measured here: ~20-40 s per guest, ~2 min for the three with downloads,
# so CI runs the full guest matrix (the host row is sys/agent.t's job, and
# `make vm-check` prints the table with it).
#   LEAP_VM_T_KERNELS  kernels to boot (default "6.1 6.12 5.10")
#
# Known failures are reported as TAP TODO (visible, not fatal) and listed in
# vm_todo below with the reason; they apply only while the known symptom
# (no BPF hook loads on that kernel) is there, and only to failing checks,
# so a fix shows as those lines turning "ok" and anything else on that
# kernel still fails; remove the entry after the fix.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/tap.sh
. "$repo/tests/lib/tap.sh"
. "$repo/tests/vm/lib.sh"

kernels=${LEAP_VM_T_KERNELS:-6.1 6.12 5.10}
declare -A vm_todo=()

[ "$(id -u)" -eq 0 ] || skip_all "needs root"
[ -x "$repo/bin/leap-agent" ] && [ -x "$repo/bin/leap-workload" ] ||
	skip_all "build first (make): bin/leap-agent, bin/leap-workload"
bash "$repo/tests/vm/deps.sh" >&2 || bail_out "cannot install qemu/busybox (tests/vm/deps.sh)"

runs=$VM_CACHE/runs/vm-t-$$
trap 'rm -rf "$runs"' EXIT

# Prints a result line; a failure under a known issue is a TODO (not counted).
result()
{
	local good=$1 desc=$2 todo=${3:-}
	if [ "$good" = 1 ]; then
		pass "$desc"
	elif [ -z "$todo" ]; then
		fail "$desc"
	else
		_tap_n=$((_tap_n + 1))
		echo "not ok $_tap_n - $desc # TODO known issue, see the note above"
	fi
}

qemu_left()
{
	pgrep -f -- "$1" 2>/dev/null | grep -v "^$$\$" || true
}

for k in $kernels; do
	todo=${vm_todo[$k]:-}
	t0=$(date +%s)
	env=
	for try in 1 2; do
		env=$(bash "$repo/tests/vm/fetch-kernel.sh" "$k") && break
		env=
		diag "fetch of $k failed (try $try)"
		sleep 5
	done
	ok "$([ -n "$env" ]; echo $?)" "$k: kernel package fetched from this machine's apt sources" || continue
	run=$runs/$k
	for try in 1 2; do
		bash "$repo/tests/vm/boot.sh" --quiet --timeout 300 --run-dir "$run" "$k" \
			"$repo/tests/vm/guest-checks.sh" "$repo" "${VM_CHECK_ARGS[@]}"
		rc=$?
		# A kernel that panics before our init runs (no "leapvm:" line
		# on the console) is an emulator flake, not a result: TCG has
		# been seen to oops in sched_clock_cpu at 1.7 s into a 6.12
		# boot.  Boot once more; a crash after init started counts.
		# A guest past its timeout boots once more too: under TCG a busy
		# host has taken one 6.1 guest past 300 s (its checks stopped in
		# the strided workload under leap; 109-134 s for each kernel that
		# run, 123 s on its own after it, 2026-11-28). A hang times out
		# twice and fails.
		if [ $rc -eq 124 ] && [ "$try" = 1 ]; then
			diag "$k: the guest ran past its timeout (try 1); its checks so far: $(tail -n 3 "$run/out/checks.tap" 2>/dev/null)"
			continue
		fi
		[ $rc -eq 125 ] && ! grep -q '^leapvm: kernel' "$run/console.log" 2>/dev/null ||
			break
		diag "$k: the kernel crashed before the guest's init ran (try $try):"
		diag "$(grep -m 3 -E 'Oops|panic|RIP' "$run/console.log" 2>/dev/null)"
	done
	note "$k: guest status $rc after $(($(date +%s) - t0))s"
	isnt "$rc" 124 "$k: the guest finished within its timeout" || {
		# Where the guest's checks were when it ran out of time (tee'd
		# live through the 9p run dir), and the newest of their logs.
		diag "$k: the guest's checks so far: $(tail -n 8 "$run/out/checks.tap" 2>/dev/null)"
		last=$(ls -t "$run/out"/*.err "$run/out"/*.log 2>/dev/null | head -n 1)
		[ -z "$last" ] || diag "$k: $last: $(tail -n 8 "$last")"
	}
	[ -f "$run/out/results.env" ]
	ok $? "$k: the guest reported results" || {
		diag "$(tail -n 30 "$run/console.log" 2>/dev/null)"
		continue
	}
	is "$(qemu_left "$run/console.log")" "" "$k: no qemu left running"
	# A known issue excuses only its own symptom: no BPF hook loads.
	if [ -n "$todo" ] && grep -q '^BPF_LOADS=no' "$run/out/results.env"; then
		note "known issue (the failures below are TODO): $todo"
	else
		todo=
	fi
	# The guest's own checks, one line each.
	while IFS= read -r line; do
		case $line in
		'ok '*) result 1 "$k: ${line#ok * - }" "$todo" ;;
		'not ok '*) result 0 "$k: ${line#not ok * - }" "$todo" ;;
		'# '*) note "$k: ${line#\# }" ;;
		esac
	done <"$run/out/checks.tap"
	if [ "$rc" != 0 ] && [ -z "$todo" ]; then
		diag "$k: guest kernel log (last lines):"
		diag "$(tail -n 20 "$run/out/dmesg.txt" 2>/dev/null)"
	fi
done

# ---- no qemu outlives the runner ------------------------------------------------
first=${kernels%% *}
cat >"$runs/sleep.sh" <<'EOF'
echo "guest: sleeping"
sleep 600
EOF
t0=$(date +%s)
bash "$repo/tests/vm/boot.sh" --quiet --swap-mib 0 --timeout 20 --run-dir "$runs/timeout" \
	"$first" "$runs/sleep.sh"
is $? 124 "a guest past its timeout: the runner exits 124"
cmp_ok $(($(date +%s) - t0)) '<' 60 "... promptly"
is "$(qemu_left "$runs/timeout/console.log")" "" "... and its qemu is gone"

# A kernel that panics before our init (here: no init to run) is booted
# once more, then reported as a guest with no exit status.
LEAP_VM_APPEND=rdinit=/leap-no-such-init bash "$repo/tests/vm/boot.sh" --quiet --swap-mib 0 \
	--timeout 60 --run-dir "$runs/panic" "$first" "$runs/sleep.sh" 2>"$runs/panic.err"
is $? 125 "a guest kernel that panics before init: the runner exits 125"
is "$(grep -c 'panicked before init.*booting again' "$runs/panic.err")" 1 "... after one more boot" ||
	diag "$(cat "$runs/panic.err")"
is "$(qemu_left "$runs/panic/console.log")" "" "... and no qemu is left"

bash "$repo/tests/vm/boot.sh" --quiet --swap-mib 0 --timeout 120 --run-dir "$runs/killed" \
	"$first" "$runs/sleep.sh" &
bpid=$!
for _ in $(seq 1 120); do
	grep -q 'guest: sleeping' "$runs/killed/console.log" 2>/dev/null && break
	sleep 0.5
done
grep -q 'guest: sleeping' "$runs/killed/console.log" 2>/dev/null
ok $? "a guest runs the given command"
kill -TERM "$bpid"
wait "$bpid"
is $? 143 "the runner killed by SIGTERM exits 143"
is "$(qemu_left "$runs/killed/console.log")" "" "... and its qemu is gone"

done_testing
