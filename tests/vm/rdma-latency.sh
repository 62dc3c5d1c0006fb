#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/vm/rdma-latency.sh [KERNEL]: page-in latency of the RDMA transport
# against TCP, measured in a soft-RoCE guest (default 6.1): 4K O_DIRECT
# reads through leap-swapd (p50/p99 of 500 random slots each, alternating slot by slot)
# and single-page READs through memclient alone (leap-memctl stress).  TCG
# timings: only the ratios mean anything.  `make rdma-latency` runs this.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || vm_die "needs root"
run=$(mktemp -d /var/tmp/leap-rdma-lat.XXXXXX)
trap 'rm -rf "$run"' EXIT
bash "$VM_DIR/boot.sh" --quiet --timeout 400 --swap-mib 0 --run-dir "$run" "${1:-6.1}" \
	"$VM_DIR/rdma-guest.sh" "$VM_REPO" latency "$VM_CACHE" >&2 || true
[ -s "$run/out/latency.txt" ] || {
	tail -n 20 "$run/out/rdma.tap" "$run/console.log" >&2
	vm_die "no latency measured"
}
tr ' ' '\n' <"$run/out/latency.txt"
