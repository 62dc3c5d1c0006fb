#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# leap's main job on an embedded default: a swap file of its own, a
# memory-limited workload run with Linux's readahead and then under
# leap-agent, a comparison, and a clean machine afterwards.
#
#   sudo make demo                 (or: sudo bash tools/demo.sh [FOOTPRINT] [LIMIT])
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
FOOT=${1:-256M}
LIMIT=${2:-64M}
AGENT=$root/bin/leap-agent
WL=$root/bin/leap-workload

[ "$(id -u)" -eq 0 ] || { echo "demo: needs root (BPF, swap, cgroups): sudo make demo" >&2; exit 1; }
for b in "$AGENT" "$WL"; do
	[ -x "$b" ] || { echo "demo: $b missing: run make first" >&2; exit 1; }
done

work=$(mktemp -d /tmp/leap-demo.XXXXXX)
swap=""
cleanup()
{
	if [ -n "$swap" ]; then
		swapoff "$swap" 2>/dev/null || true
		rm -f "$swap"
	fi
	rm -rf "$work"
}
trap cleanup EXIT

# A swap file on the root filesystem: an async block device, so Linux's own
# readahead is active and the comparison is fair (never a loop over tmpfs).
if [ "$(swapon --noheadings --show=NAME | wc -l)" -eq 0 ]; then
	dir=/var/tmp
	[ "$(stat -f -c %T $dir)" != tmpfs ] || { echo "demo: $dir is tmpfs; cannot swap there" >&2; exit 1; }
	swap=$(mktemp $dir/leap-demo-swap.XXXXXX)
	fallocate -l 1G "$swap"
	chmod 600 "$swap"
	mkswap -q "$swap"
	swapon "$swap"
	echo "demo: swap file $swap (1 GiB) is on"
else
	echo "demo: using the swap already configured"
fi

run()
{ # name policy extra-agent-args... -- workload-args...
	local name=$1 pol=$2
	shift 2
	local args=()
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	"$AGENT" run --memory-limit "$LIMIT" --policy "$pol" "${args[@]}" \
		--json "$work/$name.json" -- "$WL" --footprint "$FOOT" "$@" \
		>"$work/$name.out" 2>"$work/$name.err" ||
		{ echo "demo: $name failed:" >&2; cat "$work/$name.err" >&2; exit 1; }
}

field() { jq -r ".$2" "$work/$1.json"; }

printf '\n%-12s %-26s %8s %10s %10s %8s %8s\n' workload setup wall_s swapin_miss prefetched acc% cov%
for pat in stride:16 seq; do
	run "$pat-linux" off -- --pattern "$pat"
	run "$pat-leap" leap --kernel-readahead off -- --pattern "$pat"
	for row in linux leap; do
		n=$pat-$row
		label=$([ $row = linux ] && echo "Linux readahead" || echo "leap-agent (readahead off)")
		printf '%-12s %-26s %8.2f %10s %10s %8.1f %8.1f\n' "$pat" "$label" \
			"$(field "$n" wall_s)" "$(field "$n" swapin_misses)" "$(field "$n" prefetched)" \
			"$(jq -r '.accuracy * 100' "$work/$n.json")" "$(jq -r '.coverage * 100' "$work/$n.json")"
	done
	printf '%-12s speedup over Linux readahead: %.2fx\n' "$pat" \
		"$(jq -n --slurpfile a "$work/$pat-linux.json" --slurpfile b "$work/$pat-leap.json" \
			'$a[0].wall_s / $b[0].wall_s')"
done
echo
echo "footprint $FOOT in a $LIMIT memory cgroup; wall time is the agent's view of the whole run."
