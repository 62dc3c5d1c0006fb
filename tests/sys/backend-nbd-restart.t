#!/usr/bin/env bash
# leap-timeout: 1500
# SPDX-License-Identifier: MIT
# A swap device that survives its daemon (docs/backend.md, "Surviving a
# restart"): in the Debian 6.1 guest (TCG), swap on /dev/nbdN through
# leap-swapd --state --nbd-connections 2 --nbd-dead-timeout 120, a
# self-verifying workload four times its memory cgroup's limit, and
# leap-swapd SIGKILLed during heavy swapping, then taken over by a new one
# (--reconnect /dev/nbdN, same --state): the workload must finish with every
# page verified and without an OOM kill.  tests/vm/guest-nbd-restart.sh
# does it; its TAP lines are relayed here as "6.1: ...".
# NBD_RESTART_ROUNDS (default 2) workload runs, NBD_RESTART_KILLS (default
# 2) kills each.  Measured: about 4-8 minutes (a request in flight at a kill
# waits for the driver's 30 s request timer before it is sent again).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/tap.sh
. "$repo/tests/lib/tap.sh"
. "$repo/tests/vm/lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root"
for b in leap-swapd leap-memd leap-workload; do
	[ -x "$repo/bin/$b" ] || bail_out "bin/$b not built (run make)"
done
command -v mkfs.ext4 >/dev/null || skip_all "no mkfs.ext4 (e2fsprogs) for the guest's state disk"
run=
cleanup()
{
	[ -n "$run" ] && rm -rf "$run"
}
trap cleanup EXIT

# ---- host: usage errors ------------------------------------------------------
tmp=$(mktemp -d)
head -c 48 /dev/urandom | base64 >"$tmp/secret"
chmod 600 "$tmp/secret"
run_timeout 10 "$repo/bin/leap-swapd" --frontend nbd --reconnect /dev/nbd0 --size 64M \
	-s 127.0.0.1:1 --secret-file "$tmp/secret" 2>"$tmp/err"
is "$?" 2 "--reconnect without --state is a usage error"
like "$(cat "$tmp/err")" "needs the --state FILE" "... saying why (every page would read as zeros)"
run_timeout 10 "$repo/bin/leap-swapd" --reconnect /dev/nbd0 --state "$tmp/st" --mount /tmp \
	--size 64M -s 127.0.0.1:1 --secret-file "$tmp/secret" 2>/dev/null
is "$?" 2 "--reconnect with the FUSE frontend is a usage error"
run_timeout 10 "$repo/bin/leap-swapd" --frontend nbd --nbd-connections 17 --size 64M \
	-s 127.0.0.1:1 --secret-file "$tmp/secret" 2>/dev/null
is "$?" 2 "--nbd-connections 17 is a usage error"
rm -rf "$tmp"

# ---- the 6.1 guest -----------------------------------------------------------
bash "$repo/tests/vm/deps.sh" >&2 || bail_out "cannot install qemu/busybox (tests/vm/deps.sh)"
env=$(bash "$repo/tests/vm/fetch-kernel.sh" 6.1) || bail_out "cannot fetch the 6.1 kernel"
# shellcheck source=/dev/null
. "$env"
modroot=${MODDIR%/lib/modules/*}
ls "$MODDIR"/kernel/drivers/block/nbd.ko* >/dev/null 2>&1 ||
	bail_out "the 6.1 kernel package has no nbd module under $MODDIR"
mkdir -p "$VM_CACHE/runs"
run=$(mktemp -d "$VM_CACHE/runs/backend-nbd-restart-t.XXXXXX")
t0=$(date +%s)
# --swap-mib: the scratch disk /dev/vda, which the guest formats for the
# state file (it does not swap to it).
bash "$repo/tests/vm/boot.sh" --quiet --timeout 1400 --mem 1024 --swap-mib 64 --run-dir "$run" \
	6.1 "$repo/tests/vm/guest-nbd-restart.sh" "$repo" "$modroot" \
	"${NBD_RESTART_ROUNDS:-2}" "${NBD_RESTART_KILLS:-2}"
rc=$?
note "6.1 guest: status $rc after $(($(date +%s) - t0))s"
vm_relay_tap "$run/out/guest.tap" "6.1: "
ok $? "6.1: the guest ran to its plan line"
is "$rc" 0 "6.1: the guest script exited 0" || {
	diag "$(tail -n 20 "$run/console.log" 2>/dev/null)"
	for f in "$run"/out/swapd-*.log; do
		[ -f "$f" ] && diag "$(basename "$f"): $(tail -n 8 "$f")"
	done
	diag "$(grep -iE 'nbd|swap' "$run/out/dmesg.txt" 2>/dev/null | tail -n 30)"
}
done_testing
