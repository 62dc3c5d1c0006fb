#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench-backend: the remote swap backend next to a swap file, on this machine.
#
#  1. Page-in: single-page O_DIRECT reads at random pages (what a swap-in
#     costs the device; tools/pagein-latency.py), p50/p99 and pages/s, for
#       - loop device -> leap-swapd -> leap-memd over loopback (a miss),
#       - loop device -> leap-swapd prefetch-cache hit,
#       - a file on the root filesystem (what a swap file costs),
#     with ratios to the file.
#  2. Stride workload wall time on the backend as swap: Linux readahead (b),
#     leap through process_madvise (c0), leap through the backend (e), via
#     tools/bench-swap.sh --swap backend.
#
# Usage: tools/bench-backend.sh [--samples N] [--delay-us US] [--skip-stride]
#                                [BENCH-SWAP ARGS...]
# --delay-us: leap-memd holds each reply US microseconds, an emulated
# network round trip (a loopback server on a 2-core machine has none to hide,
# only CPU to share); the stride rows run at 0 and at US.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
# shellcheck source=tests/lib/fixture.sh
. "$root/tests/lib/fixture.sh"

SAMPLES=2000
STRIDE=1
DELAY=20
while [ $# -gt 0 ]; do
	case $1 in
	--samples) SAMPLES=$2 && shift 2 ;;
	--skip-stride) STRIDE=0 && shift ;;
	--delay-us) DELAY=$2 && shift 2 ;;
	*) break ;;
	esac
done
[ "$(id -u)" -eq 0 ] || {
	echo "bench-backend: needs root (FUSE, loop devices, swap)" >&2
	exit 1
}
for b in leap-memd leap-swapd; do
	[ -x "$root/bin/$b" ] || {
		echo "bench-backend: bin/$b not built (make)" >&2
		exit 1
	}
done

PAGES=16384 # 64 MiB of data on each path
fixture_init
# shellcheck source=tests/lib/backend.sh
. "$root/tests/lib/backend.sh"
{ backend_init && backend_memd A 127.0.0.1:0 320M &&
	backend_swapd 256M --cache-pages 4096 && backend_loop; } || {
	echo "bench-backend: the backend did not come up" >&2
	exit 1
}
file=$FX_SWAP_DIR/$FX_TAG-pagein
fixture_register rm -f "$file"
dd if=/dev/urandom of="$BK_LOOP" bs=1M count=$((PAGES / 256)) oflag=direct status=none
dd if=/dev/urandom of="$file" bs=1M count=$((PAGES / 256)) oflag=direct status=none
sync

lat=$root/tools/pagein-latency.py
{
	echo "bench-backend: page-in, $SAMPLES single-page O_DIRECT reads at random pages of 64 MiB;" \
		"$(uname -r), $(nproc) cpus, file on $(stat -f -c %T "$FX_SWAP_DIR")"
	python3 "$lat" "$file" --pages $PAGES --samples "$SAMPLES" --threads 4 \
		--name "file-on-root-fs"
	python3 "$lat" "$BK_LOOP" --pages $PAGES --samples "$SAMPLES" --threads 4 \
		--name "leap-swapd-miss(memd-loopback)"
	python3 "$lat" "$BK_LOOP" --pages $PAGES --samples "$SAMPLES" --ctl "$BK_CTL" --hit \
		--seed 2 --name "leap-swapd-cache-hit"
} >"$FX_STATE/pagein.txt" || {
	echo "bench-backend: page-in measurement failed" >&2
	exit 1
}
awk 'NR == 1 { print; next }
{
	for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	if (!f50) { f50 = v["p50_us"]; f99 = v["p99_us"]; fps = v["pages_per_s"] }
	if (!hdr++) printf "%-32s %8s %8s %10s %10s %12s %14s\n", "path", "p50_us", "p99_us",
		"p50/file", "pages/s", "ratio/file", "4-reader pg/s"
	printf "%-32s %8s %8s %10.2f %10s %12.2f %14s\n", v["name"], v["p50_us"], v["p99_us"],
		v["p50_us"] / f50, v["pages_per_s"], v["pages_per_s"] / fps,
		("mt_pages_per_s" in v) ? v["mt_pages_per_s"] : "-"
	delete v
}' "$FX_STATE/pagein.txt"
fixture_teardown

[ "$STRIDE" = 1 ] || exit 0
for d in 0 $DELAY; do
	echo
	echo "bench-backend: stride:16 with swap on the backend, leap-memd --delay-us $d" \
		"(tools/bench-swap.sh --swap backend --memd-delay-us $d)"
	bash "$here/bench-swap.sh" --swap backend --memd-delay-us "$d" --workloads stride:16 \
		--limits 50 --rows "b c0 e" "$@"
done
