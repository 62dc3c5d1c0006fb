#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/vm/rdma-bench.sh [KERNEL [FOOTPRINT LIMIT REPS COMPUTE_NS]]:
# bench-backend's comparison over RDMA, in a soft-RoCE guest (default 6.1,
# 32M in 16M, 3 repetitions, 250 us of work per page: TCG makes the agent
# late for a tight loop): leap-workload seq and stride:16 with swap on leap-swapd,
# once with leap-memd over RDMA and once over TCP, rows b (Linux
# readahead), c (leap-agent, process_madvise) and e (backend mode),
# interleaved (tests/vm/rdma-guest.sh bench).  Prints the medians and the
# speedup over b per transport; TCG timings: only the ratios mean anything,
# and rxe loops back inside the guest, so RTT is 0 only.  `make bench-rdma`
# runs this and keeps the raw lines in bench/out/.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || vm_die "needs root"
kernel=${1:-6.1} foot=${2:-32M} limit=${3:-16M} reps=${4:-3} compute=${5:-250000}
run=$(mktemp -d /var/tmp/leap-rdma-bench.XXXXXX)
trap 'rm -rf "$run"' EXIT
bash "$VM_DIR/boot.sh" --quiet --timeout 2400 --swap-mib 0 --run-dir "$run" "$kernel" \
	"$VM_DIR/rdma-guest.sh" "$VM_REPO" bench "$VM_CACHE" "$foot" "$limit" "$reps" "$compute" >&2 || true
[ -s "$run/out/bench.txt" ] || {
	tail -n 20 "$run/out/rdma.tap" "$run/console.log" >&2
	vm_die "no bench runs recorded"
}
grep '^not ok' "$run/out/rdma.tap" >&2 || true
outdir=$VM_REPO/bench/out
mkdir -p "$outdir"
raw=$outdir/bench-rdma-$(date +%Y%m%d-%H%M%S).txt
cp "$run/out/bench.txt" "$raw"
echo "bench-rdma: $kernel guest (TCG), $foot in $limit, $compute ns of work per page," \
	"median of $reps; raw: $raw"
awk '
{
	for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	if (v["rc"] != 0 || v["wall_s"] == "") next
	k = v["transport"] SUBSEP v["workload"] SUBSEP v["row"]
	n[k]++; w[k, n[k]] = v["wall_s"]; m[k, n[k]] = v["majflt"]
	tw[v["transport"] SUBSEP v["workload"]] = 1
}
function median(a, k, c,    i, j, t, x) {
	for (i = 1; i <= c; i++) x[i] = a[k, i]
	for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++)
		if (x[j] + 0 < x[i] + 0) { t = x[i]; x[i] = x[j]; x[j] = t }
	return c % 2 ? x[(c + 1) / 2] : (x[c / 2] + x[c / 2 + 1]) / 2
}
END {
	printf "%-9s %-10s %8s %8s %8s %6s %6s %8s %8s %8s\n", "transport", "workload",
		"b_s", "c_s", "e_s", "c", "e", "b_maj", "c_maj", "e_maj"
	split("rdma tcp", trs, " "); split("seq stride:16", wls, " ")
	for (a = 1; a <= 2; a++) for (b = 1; b <= 2; b++) {
		tk = trs[a] SUBSEP wls[b]
		if (!(tk in tw)) continue
		split("b c e", rows, " ")
		for (r = 1; r <= 3; r++) {
			k = tk SUBSEP rows[r]
			s[r] = n[k] ? median(w, k, n[k]) : ""
			mj[r] = n[k] ? median(m, k, n[k]) : ""
		}
		printf "%-9s %-10s %8.3f %8.3f %8.3f %6.2f %6.2f %8d %8d %8d\n", trs[a], wls[b],
			s[1], s[2], s[3], s[2] ? s[1] / s[2] : 0, s[3] ? s[1] / s[3] : 0,
			mj[1], mj[2], mj[3]
	}
}' "$raw"
