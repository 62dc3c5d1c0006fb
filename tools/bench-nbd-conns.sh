#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools/bench-nbd-conns.sh [REPS]: page-in throughput of leap-swapd's NBD
# frontend with 1, 2 and 4 connections (--nbd-connections) in the Debian
# 6.1 guest (TCG, 2 vCPUs; ratios only), at 0 and 20 us of emulated RTT,
# 1 and 4 readers (tests/vm/guest-nbd-conns.sh does the work).  Prints the
# raw lines and the median per row.  Root; boots qemu: run it under
# flock /run/lock/leap-systest.lock when other tests may run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/vm/lib.sh"
REPS=${1:-3}
bash "$root/tests/vm/deps.sh" >&2
env=$(bash "$root/tests/vm/fetch-kernel.sh" 6.1)
# shellcheck source=/dev/null
. "$env"
modroot=${MODDIR%/lib/modules/*}
mkdir -p "$VM_CACHE/runs"
run=$(mktemp -d "$VM_CACHE/runs/bench-nbd-conns.XXXXXX")
trap 'rm -rf "$run"' EXIT
bash "$root/tests/vm/boot.sh" --quiet --timeout 1200 --mem 1024 --swap-mib 0 --run-dir "$run" \
	6.1 "$root/tests/vm/guest-nbd-conns.sh" "$root" "$modroot" "$REPS" >&2
cat "$run/out/conns.txt"
grep -q '^# done' "$run/out/conns.txt" || { echo "bench-nbd-conns: the guest did not finish" >&2; exit 1; }
echo
echo "median of $REPS (pages/s; TCG guest: compare within a column)"
printf '%-7s %-6s %12s %14s %8s %8s\n' rtt_us conns 1_reader 4_readers p50_us p99_us
awk '!/^#/ {
	for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	k = v["rtt_us"] " " v["conns"]; n[k]++
	one[k, n[k]] = v["pages_per_s"]; four[k, n[k]] = v["mt_pages_per_s"]
	p50[k, n[k]] = v["p50_us"]; p99[k, n[k]] = v["p99_us"]; keys[k] = 1
}
function med(a, k, m,   i, j, t, x) {
	for (i = 1; i <= m; i++) x[i] = a[k, i]
	for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (x[j] + 0 < x[i] + 0) { t = x[i]; x[i] = x[j]; x[j] = t }
	return x[int((m + 1) / 2)]
}
END {
	for (k in keys) {
		split(k, p, " ")
		printf "%-7s %-6s %12s %14s %8s %8s\n", p[1], p[2], med(one, k, n[k]), med(four, k, n[k]), med(p50, k, n[k]), med(p99, k, n[k])
	}
}' "$run/out/conns.txt" | sort -k1,1n -k2,2n
