#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# leap-timeout: 20
# tests/sys/rdma.t: the RDMA verbs transport where there is none: this host
# kernel has no rxe and the machine no RDMA hardware, so --transport rdma
# must fail with a clear message.  The transport for real, on soft-RoCE
# (tests/vm/rdma-guest.sh: leap-memd A and B and leap-swapd with
# --transport rdma, r = 2, real swap through them, failover, a client with
# another secret refused, one-sided access refused before AUTH and outside
# the exported region, registration counters), runs in the Debian 6.1
# guest: tests/sys/guest-6.1.t, part rdma (LEAP_RDMA_T_SWAPD_ARGS adds
# leap-swapd options there, LEAP_RDMA_T_LATENCY=1 the RDMA/TCP latency
# comparison, which is `make rdma-latency`).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/tap.sh
. "$repo/tests/lib/tap.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root (qemu's 9p root, swap in the guest)"
for b in leap-memd leap-swapd leap-memctl leap-workload; do
	[ -x "$repo/bin/$b" ] || bail_out "build first (make): bin/$b"
done

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

done_testing
