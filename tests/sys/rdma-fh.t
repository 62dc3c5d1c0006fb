#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# leap-timeout: 600
# tests/sys/rdma-fh.t: Firehose in leap-memd for real, on soft-RoCE in a
# Debian 6.1 guest (tests/vm/rdma-fh-guest.sh): a pin budget far below the
# store, three clients at once (one needing 16x its share), fill/verify
# across processes, real swap through leap-swapd; moves happen and the
# server never pins more than its budget (STATS).  leap-swapd's registration
# trace is replayed by leap-regsim.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/tap.sh
. "$repo/tests/lib/tap.sh"
. "$repo/tests/vm/lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root (qemu's 9p root, swap in the guest)"
for b in leap-memd leap-swapd leap-memctl leap-workload leap-regsim; do
	[ -x "$repo/bin/$b" ] || bail_out "build first (make): bin/$b"
done
tmp=$(mktemp -d /var/tmp/leap-rdma-fh-t.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
bash "$repo/tests/vm/deps.sh" >&2 || bail_out "cannot install qemu/busybox (tests/vm/deps.sh)"
run=$tmp/run
t0=$(date +%s)
bash "$repo/tests/vm/boot.sh" --quiet --timeout 500 --swap-mib 0 --mem 1024 \
	--run-dir "$run" 6.1 "$repo/tests/vm/rdma-fh-guest.sh" "$repo" "$VM_CACHE"
rc=$?
note "guest status $rc after $(($(date +%s) - t0))s"
isnt "$rc" 124 "the guest finished within its timeout"
[ -s "$run/out/rdma-fh.tap" ]
ok $? "the guest reported results" || diag "$(tail -n 30 "$run/console.log" 2>/dev/null)"
while IFS= read -r line; do
	case $line in
	'ok '*) pass "${line#ok * - }" ;;
	'not ok '*) fail "${line#not ok * - }" ;;
	'# '*) note "${line#\# }" ;;
	esac
done <"$run/out/rdma-fh.tap"
grep -q '^# guest done' "$run/out/rdma-fh.tap"
ok $? "the guest ran to the end" || diag "$(grep -v '^\[' "$run/console.log" | tail -n 20)"
# The recorded registration traces (docs/registration.md replays them):
# LEAP_RDMA_FH_TRACE=FILE keeps swapd.tr, LEAP_RDMA_FH_TRACES=DIR keeps all.
[ -s "$run/out/swapd.tr" ] && cp "$run/out/swapd.tr" "${LEAP_RDMA_FH_TRACE:-/dev/null}"
[ -n "${LEAP_RDMA_FH_TRACES:-}" ] && cp "$run/out/"*.tr "$LEAP_RDMA_FH_TRACES/"
left=$(pgrep -f -- "$run/" 2>/dev/null | grep -v "^$$\$" || true)
is "$left" "" "no qemu left running"
done_testing
