#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# shellcheck disable=SC2154 # NAME_pid and NAME_addr (A_addr...) are set by backend_memd
# leap's main job on an embedded default: the whole path of the remote swap
# backend on this one machine (a leap-memd memory server on loopback,
# leap-swapd, a direct-I/O loop device swapped to), a memory-limited
# workload run with Linux's readahead, under leap-agent prefetching through
# process_madvise, and under leap-agent in backend mode (process_madvise
# plus the slots pushed to leap-swapd, then the slots pushed only); a
# comparison; a clean machine afterwards.
#
#   sudo make demo
#   sudo bash tools/demo.sh [--swap backend|file] [FOOTPRINT] [LIMIT]
#
# --swap file uses a swap file on the root filesystem instead (no backend
# row).  Every workload checksums its pages: a lost or corrupted page fails
# the demo.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
SWAP=backend
if [ "${1:-}" = --swap ]; then
	SWAP=${2:-}
	shift 2
fi
FOOT=${1:-256M}
LIMIT=${2:-64M}
AGENT=$root/bin/leap-agent
WL=$root/bin/leap-workload

die() {
	echo "demo: $*" >&2
	exit 1
}
[ "$(id -u)" -eq 0 ] || die "needs root (BPF, swap, cgroups): sudo make demo"
case $SWAP in backend | file) ;; *) die "--swap takes backend or file" ;; esac
for b in "$AGENT" "$WL" "$root/bin/leap-memd" "$root/bin/leap-swapd"; do
	[ -x "$b" ] || die "$b missing: run make first"
done
command -v jq >/dev/null || die "jq missing: sudo make deps"
others=$(swapon --noheadings --show=NAME | tr '\n' ' ')
[ -z "$others" ] || echo "demo: note: other swap ($others) stays on, below the demo's" \
	"own device in priority"

# shellcheck source=tests/lib/fixture.sh
. "$root/tests/lib/fixture.sh"
fixture_init || exit 1
work=$FX_STATE
foot_mib=$(numfmt --from=iec "$FOOT") || die "bad footprint $FOOT"
foot_mib=$((foot_mib / 1048576))
swap_mib=$((foot_mib * 2 + 64))

if [ "$SWAP" = backend ]; then
	# shellcheck source=tests/lib/backend.sh
	. "$root/tests/lib/backend.sh"
	backend_up_for_bench "$swap_mib" ||
		die "the backend did not come up"
	echo "demo: leap-memd on $A_addr (loopback, authenticated), leap-swapd on $BK_MNT," \
		"swap on $BK_LOOP (${swap_mib} MiB)"
else
	FX_SWAP_PRIO=32767
	swap=$(swap_file_on "$swap_mib") || die "no swap file"
	echo "demo: swap file $swap (${swap_mib} MiB) on the root filesystem"
fi

run()
{ # name policy extra-agent-args... -- workload-args...
	local name=$1 pol=$2
	shift 2
	local args=()
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	timeout --kill-after=10 600 "$AGENT" run --memory-limit "$LIMIT" --policy "$pol" "${args[@]}" \
		--json "$work/$name.json" -- "$WL" --footprint "$FOOT" "$@" \
		>"$work/$name.out" 2>"$work/$name.err" || {
		echo "demo: $name failed:" >&2
		cat "$work/$name.err" >&2
		exit 1
	}
}
field() { jq -r ".$2" "$work/$1.json"; }
# The workload's own wall time for its measured pass (the agent's includes the fill).
wl_wall() { grep -o 'wall_s=[0-9.]*' "$work/$1.out" | head -n 1 | cut -d= -f2; }

rows="linux leap"
[ "$SWAP" = backend ] && rows="linux leap backend backend-cache"
printf '\n%-10s %-34s %8s %8s %10s %10s %7s %7s\n' workload setup wall_s speedup \
	swapin_miss prefetched acc% cov%
for pat in stride:16 seq; do
	for row in $rows; do
		case $row in
		linux) run "$pat-$row" off -- --pattern "$pat" ;;
		leap) run "$pat-$row" leap --kernel-readahead off -- --pattern "$pat" ;;
		backend) run "$pat-$row" leap --backend "$BK_CTL" --backend-dev "$BK_LOOP" \
			-- --pattern "$pat" ;;
		backend-cache) run "$pat-$row" leap --backend "$BK_CTL" --backend-dev "$BK_LOOP" \
			--backend-into cache -- --pattern "$pat" ;;
		esac
	done
	base=$(wl_wall "$pat-linux")
	for row in $rows; do
		n=$pat-$row
		case $row in
		linux) label="Linux readahead" ;;
		leap) label="leap-agent, process_madvise" ;;
		backend) label="backend mode, swap cache" ;;
		backend-cache) label="backend mode, leap-swapd cache" ;;
		esac
		printf '%-10s %-34s %8.3f %7.2fx %10s %10s %7.1f %7.1f\n' "$pat" "$label" \
			"$(wl_wall "$n")" "$(jq -n "$base / $(wl_wall "$n")")" \
			"$(field "$n" swapin_misses)" "$(field "$n" prefetched)" \
			"$(jq -r '.accuracy * 100' "$work/$n.json")" "$(jq -r '.coverage * 100' "$work/$n.json")"
	done
done
echo
echo "footprint $FOOT in a $LIMIT memory cgroup; wall_s is the workload's measured pass" \
	"(every page checksummed); speedup is over Linux readahead."
[ "$SWAP" = backend ] && echo "leap-swapd: $(backend_ctl STATS | cut -c4- | tr ' ' '\n' |
	grep -E '^(reads|hits|misses|prefetched|errors)=' | tr '\n' ' ')"
fixture_teardown
