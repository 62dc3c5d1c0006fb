#!/usr/bin/env bash
# leap-timeout: 1200
# SPDX-License-Identifier: MIT
# leap-swapd's ublk frontend (docs/backend.md).  This machine's kernel has
# no ublk driver, so:
#   - here: --frontend ublk fails at once, with a message that names the
#     missing driver, before it contacts any server; its options are
#     checked;
#   - in the Debian 6.12 guest (tests/vm/boot.sh, TCG, 4 CPUs):
#     tests/vm/guest-ublk.sh loads ublk_drv from the extracted kernel tree
#     and swaps to /dev/ublkbN through leap-memd with 4 queues of depth 64,
#     then SIGKILLs leap-swapd under swap LEAP_UBLK_CRASH_RUNS times
#     (default 3) and recovers it with --recover; each of its TAP lines is
#     relayed here as "6.12: ...".
# Skips the guest part only when the 6.12 kernel package cannot be had
# (tests/vm/fetch-kernel.sh fails: no package source for trixie).
# Measured: about 4-6 minutes (boot ~20 s, the rest is swapping under TCG).
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
tmp=$(mktemp -d)
run=
cleanup()
{
	rm -rf "$tmp"
	[ -n "$run" ] && rm -rf "$run"
}
trap cleanup EXIT
head -c 48 /dev/urandom | base64 >"$tmp/secret"
chmod 600 "$tmp/secret"
swapd()
{
	run_timeout 10 "$repo/bin/leap-swapd" "$@" --secret-file "$tmp/secret" 2>"$tmp/err"
}

# ---- host: no ublk driver ----------------------------------------------------
if [ -e /dev/ublk-control ]; then
	skip "host without ublk: clean failure" "this host has the ublk driver loaded"
else
	# Port 1 would refuse: the daemon must fail before trying it.
	swapd --frontend ublk --size 64M -s 127.0.0.1:1
	is "$?" 1 "host without ublk: leap-swapd --frontend ublk exits 1"
	like "$(cat "$tmp/err")" "ublk driver is not loaded.*modprobe ublk_drv" \
		"... naming the missing driver"
	is "$(grep -c '127.0.0.1:1' "$tmp/err")" 0 "... before contacting any server"
fi
swapd --frontend ublk --mount /tmp --size 64M -s 127.0.0.1:1
is "$?" 2 "--mount with --frontend ublk is a usage error"
swapd --frontend nbd --ublk-depth 8 --size 64M -s 127.0.0.1:1
is "$?" 2 "--ublk-depth without --frontend ublk is a usage error"
swapd --frontend ublk --ublk-depth 0 --size 64M -s 127.0.0.1:1
is "$?" 2 "--ublk-depth 0 is a usage error"
swapd --frontend ublk --ublk-block 1024 --size 64M -s 127.0.0.1:1
is "$?" 2 "--ublk-block 1024 is a usage error"
swapd --frontend ublk --recover 0 -r 2 --size 64M -s 127.0.0.1:1 -s 127.0.0.1:2
is "$?" 2 "--recover with two replicas and no --state is refused"
like "$(cat "$tmp/err")" "needs the --state FILE" "... saying why"

# ---- the 6.12 guest ---------------------------------------------------------------
bash "$repo/tests/vm/deps.sh" >&2 || bail_out "cannot install qemu/busybox (tests/vm/deps.sh)"
if ! env=$(bash "$repo/tests/vm/fetch-kernel.sh" 6.12 2>"$tmp/fetch.err"); then
	skip "6.12 guest: ublk swap and crash survival" \
		"no Debian 6.12 kernel package: $(tail -n 1 "$tmp/fetch.err")"
	done_testing
	exit 0
fi
# shellcheck source=/dev/null
. "$env"
modroot=${MODDIR%/lib/modules/*}
ls "$MODDIR"/kernel/drivers/block/ublk_drv.ko* >/dev/null 2>&1 ||
	bail_out "the 6.12 kernel package has no ublk_drv module under $MODDIR"
mkdir -p "$VM_CACHE/runs"
run=$(mktemp -d "$VM_CACHE/runs/backend-ublk-t.XXXXXX")
t0=$(date +%s)
bash "$repo/tests/vm/boot.sh" --quiet --timeout 1100 --mem 1536 --smp 4 --swap-mib 64 \
	--run-dir "$run" 6.12 "$repo/tests/vm/guest-ublk.sh" "$repo" "$modroot" \
	"${LEAP_UBLK_CRASH_RUNS:-3}" "${LEAP_UBLK_PAGEIN:-1}"
rc=$?
note "6.12 guest: status $rc after $(($(date +%s) - t0))s"
vm_relay_tap "$run/out/guest.tap" "6.12: "
ok $? "6.12: the guest ran to its plan line"
is "$rc" 0 "6.12: the guest script exited 0" || {
	diag "$(tail -n 20 "$run/console.log" 2>/dev/null)"
	diag "$(tail -n 20 "$run/out/swapd.log" 2>/dev/null)"
	diag "$(grep -i ublk "$run/out/dmesg.txt" 2>/dev/null | tail -n 20)"
}
done_testing
