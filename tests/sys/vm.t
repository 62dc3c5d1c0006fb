#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# leap-timeout: 120
# tests/sys/vm.t: the VM test bed's runner itself (tests/vm/boot.sh): a
# boot past its timeout, a guest kernel that panics before our init, and a
# runner killed by a signal each end as documented and leave no qemu
# behind.  The guests' checks (the matrix of Debian's 5.10, 6.1 and 6.12
# kernels, the backends, the package) run in one boot per kernel:
# tests/sys/guest-5.10.t, guest-6.1.t, guest-6.12.t (tests/lib/guest.sh).
# Its limit: 53.1 s and 55.8 s in the fresh-clone CI runs of bd5348f and
# 056283c (70 s was the limit then), and the guest boots it times ran
# 1.7-1.8x slower on some days (GUEST_LIMIT_PCT, tests/lib/guest.sh).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/tap.sh
. "$repo/tests/lib/tap.sh"
. "$repo/tests/vm/lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root"
bash "$repo/tests/vm/deps.sh" >&2 || bail_out "cannot install qemu/busybox (tests/vm/deps.sh)"
first=6.1
bash "$repo/tests/vm/fetch-kernel.sh" "$first" >/dev/null || bail_out "cannot fetch the $first kernel"

runs=$VM_CACHE/runs/vm-t-$$
mkdir -p "$runs"
trap 'rm -rf "$runs"' EXIT

qemu_left()
{
	pgrep -f -- "$1" 2>/dev/null | grep -v "^$$\$" || true
}

# ---- no qemu outlives the runner ------------------------------------------------
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
