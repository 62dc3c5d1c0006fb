#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/vm/guest-checks.sh REPO [checks.sh options]: what tests/vm/boot.sh
# runs inside a guest for the matrix: tests/vm/checks.sh with the guest's
# swap disk (/dev/vda) and /run/leapvm (the host's run dir) as OUTDIR, then
# the guest's kernel log next to the results.
repo=$1
shift
out=${LEAPVM_OUT:-/run/leapvm} disk=${LEAPVM_DISK:-/dev/vda}
bash "$repo/tests/vm/checks.sh" "$out" --swap-dev "$disk" "$@" 2>&1 | tee "$out/checks.tap"
rc=$(sed -n 's/^FAILED=//p' "$out/results.env" 2>/dev/null)
dmesg >"$out/dmesg.txt" 2>&1
[ -n "$rc" ] || rc=255
exit "$rc"
