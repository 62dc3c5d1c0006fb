#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# leap-timeout: 900
# tests/sys/rdma.t: the RDMA verbs transport for real, on soft-RoCE.  The
# host kernel has no rxe and the machine no RDMA hardware, so this boots a
# Debian guest (tests/vm/boot.sh) that creates rxe0 over a dummy netdev and
# runs tests/vm/rdma-guest.sh: leap-memd A and B and leap-swapd with
# --transport rdma (r = 2), real swap through them with leap-workload (exit 3
# on any wrong page): seq, seq with prefetching over the control socket, B
# killed mid-run, B restarted empty and refilled then A killed; a client
# with another secret refused; one-sided access refused before AUTH and
# outside the exported region (leap-rdma-gate); registration counters in
# both STATS.  On the host: --transport rdma fails with a clear message
# when there is no RDMA device.  The RDMA/TCP latency comparison is
# `make rdma-latency` (LEAP_RDMA_T_LATENCY=1 adds it here).
#   LEAP_RDMA_T_KERNELS  guests to boot (default "6.1"; "6.1 6.12" for both)
#   LEAP_RDMA_T_SWAPD_ARGS  extra leap-swapd options, e.g. "--reg-cache mrrc"
#                        (zero-copy through the registration cache)
# Measured here: ~2 min per guest under TCG.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/tap.sh
. "$repo/tests/lib/tap.sh"
. "$repo/tests/vm/lib.sh"

kernels=${LEAP_RDMA_T_KERNELS:-6.1}
[ "$(id -u)" -eq 0 ] || skip_all "needs root (qemu's 9p root, swap in the guest)"
for b in leap-memd leap-swapd leap-memctl leap-workload; do
	[ -x "$repo/bin/$b" ] || bail_out "build first (make): bin/$b"
done
[ -x "$repo/.output/sys-helpers/leap-rdma-gate" ] ||
	bail_out "build first (make): .output/sys-helpers/leap-rdma-gate"

tmp=$(mktemp -d /var/tmp/leap-rdma-t.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
head -c 48 /dev/urandom | base64 >"$tmp/secret"
chmod 600 "$tmp/secret"

# ---- host: no RDMA device -> a clear refusal ------------------------------------
if ibv_devices 2>/dev/null | grep -q '^ *[a-z]'; then
	skip "this host has an RDMA device: the no-device refusal is not testable here" 3
else
	timeout 20 "$repo/bin/leap-memd" --transport rdma --size 1M --listen 127.0.0.1:0 \
		--secret-file "$tmp/secret" 2>"$tmp/memd.err"
	rc=$?
	is "$rc:$(grep -c 'no RDMA device' "$tmp/memd.err")" "1:1" \
		"host: leap-memd --transport rdma refuses with 'no RDMA device' ($(cat "$tmp/memd.err"))"
	timeout 20 "$repo/bin/leap-memctl" --transport rdma -k "$tmp/secret" -s 127.0.0.1:7480 \
		stats 2>"$tmp/ctl.err"
	rc=$?
	isnt "$rc" 0 "host: leap-memctl --transport rdma fails (exit $rc)"
	like "$(cat "$tmp/ctl.err")" "no RDMA device" "... saying there is no RDMA device"
fi
mkdir "$tmp/mnt"
timeout 20 "$repo/bin/leap-swapd" --transport rdma --mount "$tmp/mnt" --size 1M \
	-s 127.0.0.1:7480 --secret-file "$tmp/secret" --retry-ms 100 2>"$tmp/swapd.err"
rc=$?
isnt "$rc" 0 "host: leap-swapd --transport rdma without a reachable server fails (exit $rc)"
mountpoint -q "$tmp/mnt"
isnt $? 0 "... and mounts nothing"
timeout 20 "$repo/bin/leap-memd" --transport nope --size 1M --secret-file "$tmp/secret" \
	2>"$tmp/bad.err"
is "$?" 2 "an unknown --transport is a usage error"

# ---- guests: soft-RoCE ------------------------------------------------------------
bash "$repo/tests/vm/deps.sh" >&2 || bail_out "cannot install qemu/busybox (tests/vm/deps.sh)"
for k in $kernels; do
	run=$tmp/run-$k
	t0=$(date +%s)
	bash "$repo/tests/vm/boot.sh" --quiet --timeout 780 --swap-mib 0 --mem 1024 \
		--run-dir "$run" "$k" "$repo/tests/vm/rdma-guest.sh" "$repo" all "$VM_CACHE" \
		"${LEAP_RDMA_T_LATENCY:-0}" "${LEAP_RDMA_T_SWAPD_ARGS:-}"
	rc=$?
	note "$k: guest status $rc after $(($(date +%s) - t0))s"
	isnt "$rc" 124 "$k: the guest finished within its timeout"
	[ -s "$run/out/rdma.tap" ]
	ok $? "$k: the guest reported results" || {
		diag "$(tail -n 30 "$run/console.log" 2>/dev/null)"
		continue
	}
	while IFS= read -r line; do
		case $line in
		'ok '*) pass "$k: ${line#ok * - }" ;;
		'not ok '*) fail "$k: ${line#not ok * - }" ;;
		'# '*) note "$k: ${line#\# }" ;;
		esac
	done <"$run/out/rdma.tap"
	# The guest's last line: all of its checks ran.
	grep -q '^# guest done' "$run/out/rdma.tap"
	ok $? "$k: the guest ran to the end" ||
		diag "$(grep -v '^\[' "$run/console.log" | tail -n 20)"
	[ -s "$run/out/latency.txt" ] && note "$k: $(cat "$run/out/latency.txt")"
	left=$(pgrep -f -- "$run/" 2>/dev/null | grep -v "^$$\$" || true)
	is "$left" "" "$k: no qemu left running"
done
done_testing
