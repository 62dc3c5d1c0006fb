#!/usr/bin/env bash
# leap-timeout: 450
# SPDX-License-Identifier: MIT
# (The parts' limits are scaled by GUEST_LIMIT_PCT, tests/lib/guest.sh;
# this file's limit with them: parts 120 s given, 326 s at 250%, with the
# boot's 20 and 3 a part; the kernel's download and the guest image
# after.)
# The guest checks of Debian 11's kernel (5.10, the fentry path), in one
# emulated boot (qemu TCG, tests/vm/boot.sh; tests/lib/guest.sh); each
# part's TAP lines relayed here as "5.10 PART: ...":
#   checks   the matrix row (tests/vm/checks.sh): the observer loads with
#            fentry, and process_madvise refuses WILLNEED (< 5.15), so
#            leap-agent says it observes only
#   arming   tests/sys/arming.t: skipped there, with that reason
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/tap.sh
. "$repo/tests/lib/tap.sh"
. "$repo/tests/vm/lib.sh"
# shellcheck source=tests/lib/guest.sh
. "$repo/tests/lib/guest.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root (qemu's 9p root, swap in the guest)"
for b in leap-agent leap-workload; do
	[ -x "$repo/bin/$b" ] || bail_out "bin/$b not built (run make)"
done
command -v jq >/dev/null || bail_out "jq missing on the host (tools/install-deps.sh)"
bash "$repo/tests/vm/deps.sh" >&2 || bail_out "cannot install qemu/busybox (tests/vm/deps.sh)"
bash "$repo/tests/vm/fetch-kernel.sh" 5.10 >/dev/null || bail_out "cannot fetch the 5.10 kernel"

# Checks took 50.1-68.0 s in six fresh-clone runs (2026-11-28): 90.
guest_part checks 90 checks.tap "$repo/tests/vm/guest-checks.sh" "$repo" "${VM_CHECK_ARGS[@]}"
guest_part arming 30 stdout.log "$repo/tests/sys/arming.t"
guest_boot 5.10 --mem 1024 --smp 2 --swap-mib 256
guest_report
done_testing
