#!/usr/bin/env bash
# leap-timeout: 300
# SPDX-License-Identifier: MIT
# Leap beside Linux's swap readahead (vm.page-cluster=3, the default
# --kernel-readahead keep), with real swap and a real program (CPython,
# tools/real/pyscan.py: a read-modify-write fill, then a scan):
#  - the fill, a write stream the kernel's readahead serves, is left to it
#    (held_for_kernel_readahead);
#  - a sequential or backward scan, a read stream it serves, gets Leap's
#    windows past the kernel's (windows_beyond_kernel_readahead), which the
#    program then hits, and it takes fewer major faults than with every
#    served stream left to the kernel (--kernel-readahead defer, which
#    issues no such window);
#  - every byte the scan reads is the one the fill wrote.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/fixture.sh
. "$root/tests/lib/fixture.sh"
# shellcheck source=tests/lib/agent.sh
. "$root/tests/lib/agent.sh"

require_root
require_agent_prefetch

fixture_init
tmp=$FX_STATE
swap=$(swap_file_on 512) || bail_out "cannot set up a swap file"
ok 0 "swap file $swap is on"
page_cluster_set 3 || bail_out "cannot set vm.page-cluster"

# run NAME RA PATTERN: pyscan.py 128 PATTERN in 64 MiB under leap-agent
# --kernel-readahead RA; the JSON in $tmp/NAME.json.  Up to three tries:
# memcg v1 here sometimes OOM-kills a fast allocator even with swap free
# (never counted as a result).
run()
{
	local name=$1 ra=$2 pat=$3 rc try
	for try in 1 2 3; do
		"$AGENT" run --policy leap --kernel-readahead "$ra" --memory-limit 64M \
			--json "$tmp/$name.json" -- "$PY" "$root/tools/real/pyscan.py" 128 "$pat" \
			>"$tmp/$name.out" 2>"$tmp/$name.err"
		rc=$?
		[ $rc -eq 137 ] || break
		diag "$name, try $try: the program was OOM-killed (memcg v1), not counted; again"
	done
	is "$rc" 0 "$name: the program ran to completion under leap-agent"
	like "$(cat "$tmp/$name.out")" '"bad": 0' "$name: every page read back had the value the fill wrote"
	diag "$name: $(jq -c '{swapin_misses, prefetched, hits, prefetch_wasted,
		held_for_kernel_readahead, windows_beyond_kernel_readahead}' "$tmp/$name.json")"
}
val() { jq -r ".$2" "$tmp/$1.json"; }

for pat in seq reverse; do
	run "$pat" keep "$pat"
	cmp_ok "$(val "$pat" held_for_kernel_readahead)" '>' 500 \
		"$pat: the fill (a write stream) was left to the kernel's readahead"
	cmp_ok "$(val "$pat" windows_beyond_kernel_readahead)" '>' 10 \
		"$pat: the scan (a read stream) got windows past the kernel's"
	pf=$(val "$pat" prefetched)
	cmp_ok "$pf" '>' 5000 "$pat: thousands of pages prefetched"
	cmp_ok "$(($(val "$pat" hits) * 100))" '>' "$((pf * 30))" \
		"$pat: a good share of them were hit (> 30%; measured 45-95%)"
	cmp_ok "$(($(val "$pat" prefetch_wasted) * 100))" '<' "$((pf * 10))" \
		"$pat: under 10% reclaimed before use"
done

run seq-defer defer seq
is "$(val seq-defer windows_beyond_kernel_readahead)" 0 \
	"defer: no window past the kernel's readahead"
# Measured: 128 MiB in 64 MiB, ~8,500 majors with defer, ~4,500 without.
cmp_ok "$(($(val seq swapin_misses) * 100))" '<' "$(($(val seq-defer swapin_misses) * 85))" \
	"the sequential run took fewer major faults than with the stream left to the kernel"

done_testing
