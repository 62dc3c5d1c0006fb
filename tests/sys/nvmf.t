#!/usr/bin/env bash
# leap-timeout: 900
# SPDX-License-Identifier: MIT
# The standard remote block path (issue 6), in the Debian 6.1 guest
# (tests/vm/boot.sh, TCG): a brd ramdisk exported by the kernel's NVMe-oF
# target over RDMA on soft-RoCE (rdma_rxe on a dummy netdev), connected
# with nvme-cli, swapped to; leap-agent's prefetching through
# process_madvise must work there (tests/vm/guest-nvmf.sh: hits > 0,
# swap-in misses at most half of --policy off's, the workload's data
# intact), and the teardown must leave nothing (swap, controller, nvmet
# configfs, rxe link, dummy netdev).  Each guest TAP line is relayed here
# as "6.1: ...".  The host kernel is not involved (and has no nvmet here).
#   LEAP_NVMF_FOOTPRINT / LEAP_NVMF_LIMIT / LEAP_NVMF_COMPUTE_NS: the
#   workload (default 32M / 16M / 1000000: under TCG the agent is late for
#   a loop without think time, and soft-RoCE's I/O competes with it for the
#   emulated CPUs; docs/nvmf.md)
# Measured: ~1.5 min.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/tap.sh
. "$repo/tests/lib/tap.sh"
. "$repo/tests/vm/lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root"
for b in leap-agent leap-workload; do
	[ -x "$repo/bin/$b" ] || bail_out "bin/$b not built (run make)"
done
for t in nvme rdma jq; do
	command -v "$t" >/dev/null || bail_out "$t missing on the host (tools/install-deps.sh)"
done
run=
trap '[ -n "$run" ] && rm -rf "$run"' EXIT

bash "$repo/tests/vm/deps.sh" >&2 || bail_out "cannot install qemu/busybox (tests/vm/deps.sh)"
env=$(bash "$repo/tests/vm/fetch-kernel.sh" 6.1) || bail_out "cannot fetch the 6.1 kernel"
# shellcheck source=/dev/null
. "$env"
modroot=${MODDIR%/lib/modules/*}
for m in drivers/nvme/target/nvmet drivers/nvme/target/nvmet-rdma drivers/nvme/host/nvme-rdma \
	drivers/infiniband/sw/rxe/rdma_rxe drivers/block/brd; do
	ls "$MODDIR/kernel/$m.ko"* >/dev/null 2>&1
	ok $? "6.1 kernel package has $m" || bail_out "missing $m under $MODDIR"
done
mkdir -p "$VM_CACHE/runs"
run=$(mktemp -d "$VM_CACHE/runs/nvmf-t.XXXXXX")
t0=$(date +%s)
bash "$repo/tests/vm/boot.sh" --quiet --timeout 800 --mem 1024 --swap-mib 0 --run-dir "$run" \
	6.1 "$repo/tests/vm/guest-nvmf.sh" "$repo" "$modroot" \
	"${LEAP_NVMF_FOOTPRINT:-32M}" "${LEAP_NVMF_LIMIT:-16M}" "${LEAP_NVMF_COMPUTE_NS:-1000000}"
rc=$?
note "6.1 guest: status $rc after $(($(date +%s) - t0))s"
vm_relay_tap "$run/out/guest.tap" "6.1: "
ok $? "6.1: the guest ran to its plan line"
is "$rc" 0 "6.1: the guest script exited 0" || {
	diag "$(tail -n 20 "$run/console.log" 2>/dev/null)"
	diag "$(grep -iE 'nvme|rxe|rdma' "$run/out/dmesg.txt" 2>/dev/null | tail -n 20)"
}
[ -f "$run/out/results.env" ] && note "$(tr '\n' ' ' <"$run/out/results.env")"
done_testing
