#!/usr/bin/env bash
# leap-timeout: 40
# SPDX-License-Identifier: MIT
# Leap beside Linux's swap readahead (vm.page-cluster=3, the default
# --kernel-readahead keep), with real swap and a real program (CPython,
# tools/real/pyscan.py: a read-modify-write fill, then a scan), in the
# default arming mode (the fault hooks on while a target reads its swap
# device):
#  - a sequential or backward scan, a read stream the kernel's readahead
#    serves, gets Leap's windows past the kernel's
#    (windows_beyond_kernel_readahead), which the program then hits, and
#    it takes fewer major faults than under Linux alone (the kernel's
#    count), for both scans; with every served stream left to the kernel
#    (--kernel-readahead defer) no window goes past the kernel's;
#  - every byte the scan reads is the one the fill wrote;
#  - no page behind a scan is made cold (cold_behind is for fills), and
#    with --cold-behind 0 none at all;
#  - a program of another user (nobody) is served as root's are: the
#    agent reads its pagemap;
#  - shared memory: a served sequential scan gets no window past the
#    kernel's, a stride does, and hits;
#  - Perl (tools/real/perlscan.pl), whose fill reads zero-filled entries,
#    gets (almost) no window past the kernel's readahead.
#  - Tracepoint path, --swap-cache-hits: the swap-cache hits on pages not
#    ours, which send no event there (swap_cache_hits, leap_rss_stat), are
#    counted: observing the sequential scan, at least as many as the
#    kernel's own count of its readahead hits (swap_ra_hit), and no more
#    than the faults; without the option, none (the hook not loaded).
# What the agent decides for a fill (held for the kernel's readahead, the
# pages behind it made cold, zero-filled misses told apart) is checked on
# recorded runs of these same programs, deterministically
# (tests/unit/test_replay.c: py-seq, py-reverse, perl-stride): armed by
# device reads (hooks.h), the hooks see a fill only while its neighbours
# read the device, which some runs never do (23 of Perl's zero-filled
# misses seen in one run of six here, 2 of CPython's backward-scan fill in
# another, 2026-11-28), so a live check of them fails by chance.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/fixture.sh
. "$root/tests/lib/fixture.sh"
# shellcheck source=tests/lib/agent.sh
. "$root/tests/lib/agent.sh"

prefetch_fixture 512

# run NAME RA PATTERN: pyscan.py 128 PATTERN in 64 MiB under leap-agent
# --kernel-readahead RA (PATTERN perl: perlscan.pl 128 8); the JSON in
# $tmp/NAME.json (run_unless_oom: an OOM kill the program's own allocation
# invoked is tried again, said and counted).
run()
{
	local name=$1 ra=$2 pat=$3
	shift 3 # the rest: more leap-agent run options
	local -a words prog hook=()
	read -ra words <<<"$pat" # "seq shm": the scan over shared memory
	prog=("$PY" "$root/tools/real/pyscan.py" 128 "${words[@]}")
	# "seq nobody": as user nobody (65534), the script on its standard
	# input (the checkout may lie where nobody cannot read it), opened
	# again for each try.
	[ "${words[1]:-}" = nobody ] &&
		prog=(sh -c 'f=$1; shift; exec setpriv --reuid 65534 --regid 65534 --clear-groups -- "$@" <"$f"'
			sh "$root/tools/real/pyscan.py" "$PY" - 128 "${words[0]}")
	# SWPIN_ZERO reaches the agent on the tracepoint path only.
	[ "$pat" = perl ] && prog=(perl "$root/tools/real/perlscan.pl" 128 8) hook=(--hook tracepoint)
	# The kernel's counts from the start of the try that counts: an
	# OOM-killed try's page-ins are not the run's (CI, 2026-11-30: reverse
	# 9,478 major faults against Linux's 6,858, two tries' worth,
	# swpin_zero 65,637 against 32,841).
	vm0=$tmp/$name.vm0
	OOM_EACH_TRY=snapshot_counts run_unless_oom "$tmp/$name.out" "$tmp/$name.err" "$AGENT" run --policy leap "${hook[@]}" \
		"$@" --kernel-readahead "$ra" --memory-limit 64M --json "$tmp/$name.json" -- \
		"${prog[@]}"
	is "$?" 0 "$name: the program ran to completion under leap-agent"
	kernel_counts | paste -d' ' "$vm0" - |
		awk '{printf "%s=%d ", $1, $4 - $2}' >"$tmp/$name.vm"
	echo "page_cluster=$(cat /proc/sys/vm/page-cluster)" >>"$tmp/$name.vm"
	like "$(cat "$tmp/$name.out")" '"bad": 0' "$name: every page read back had the value the fill wrote"
	diag "$name: $(jq -c '{swapin_misses, prefetched, hits, prefetch_wasted,
		held_for_kernel_readahead, windows_beyond_kernel_readahead,
		zero_filled_misses, swapin_unarmed, cold_behind_pages}' "$tmp/$name.json"); kernel: $(cat "$tmp/$name.vm")"
}
val() { jq -r ".$2" "$tmp/$1.json"; }
snapshot_counts() { kernel_counts >"$vm0"; }
# The kernel's own counts over a run (system-wide; nothing else runs), a
# witness for the hooks' counts; run() adds vm.page-cluster at its end.
kernel_counts()
{
	grep -E '^(pswpin|pgmajfault|swpin_zero|swap_ra_hit) ' /proc/vmstat
}

# The defer rows never stand down: with every stream left to the kernel
# they prefetch nothing, and the cost model would stop following them
# ("nothing to add"), which is no longer the comparison.
printf '[default]\nstand_down = never\n' >"$tmp/never.conf"
# Windows past the kernel's: a scan needs few, its windows being up to
# pw_max pages; 8-41 (seq), 27-28 (reverse) in two fresh-clone CI runs of
# 2026-11-29, where a miss with no trend stopped getting a window "around"
# it (the same recording replayed: 29 before, 25 after); defer: 0.
for pat in seq reverse; do
	run "$pat" keep "$pat"
	run "$pat-defer" defer "$pat" --config "$tmp/never.conf"
	run "$pat-linux" keep "$pat" --policy off
	cmp_ok "$(val "$pat" windows_beyond_kernel_readahead)" '>' 3 \
		"$pat: the scan (a read stream) got windows past the kernel's"
	is "$(val "$pat-defer" windows_beyond_kernel_readahead)" 0 \
		"$pat, defer: no window past the kernel's readahead"
	pf=$(val "$pat" prefetched)
	cmp_ok "$pf" '>' 5000 "$pat: thousands of pages prefetched"
	cmp_ok "$(val "$pat" hits)" '>' 5000 "$pat: thousands of them hit"
	cmp_ok "$(($(val "$pat" prefetch_wasted) * 100))" '<' "$((pf * 10))" \
		"$pat: under 10% reclaimed before use"
done
# A window restarted when the program catches up overlaps the one still in
# flight, whose pages are issued (and counted) again: on the backward scan
# that swings hits / prefetched from run to run (46-72%, and under 30% in
# one run of five), so the share is checked on the sequential scan, and
# both scans on their major faults.
cmp_ok "$(($(val seq hits) * 100))" '>' "$(($(val seq prefetched) * 60))" \
	"seq: most prefetched pages were hit (> 60%; measured 85-96%)"
# The major faults, as the kernel counts them (/proc/vmstat pgmajfault
# over the run), against Linux alone (--policy off: no hooks, no windows).
# Not the hooks' counts, nor the defer rows: the default arming mode sees a
# fill only once a neighbour read the device (seq-linux observed: 6,616
# of the kernel's 8,891), and a defer row takes a stream over once a gap
# between two misses was not the kernel's (its pages not all mapped):
# seq-defer prefetched 27,930 pages in one run of six here and read the
# device at 1,314 faults against 4,754 (2026-11-29; a CI run failed on
# that, 967 against 874).  Both rows take the fill's ~4,100 majors on
# zero-filled entries (no I/O, the kernel's alone), so the ratio is above
# what the windows save on the scan.  Measured in five runs here
# (2026-11-29): seq 4,654-4,719 against 8,878-8,940 (52-53%), reverse
# 4,463-4,969 against 7,172-7,214 (62-69%).
majors() { sed -n 's/.*pgmajfault=\([0-9]*\).*/\1/p' "$tmp/$1.vm"; }
for pat in seq reverse; do
	cmp_ok "$(($(majors "$pat") * 100))" '<' "$(($(majors "$pat-linux") * 85))" \
		"$pat: fewer major faults than Linux alone, by the kernel's count ($(majors "$pat") against $(majors "$pat-linux"))"
done

# Only the pages behind the fill may be made cold (32,768 at most, while
# the hooks see it), never the scans' (read streams).  The defer rows
# too: their scans miss on every page, and the fill left every 256th page
# zero, which the kernel's readahead around a scan miss meets
# (SWPIN_ZERO); such misses read the device as well and are no fill's
# (they had made 49,154-64,535 pages cold, the scan's with them).
for pat in seq reverse seq-defer reverse-defer; do
	cmp_ok "$(val "$pat" cold_behind_pages)" '<' 34000 \
		"$pat: no page behind the scan made cold ($(val "$pat" cold_behind_pages))"
done
run seq-warm keep seq --cold-behind 0
is "$(val seq-warm cold_behind_pages)" 0 "seq, --cold-behind 0: no page made cold"

# Swap-cache hits not ours (tracepoint path; the fentry path sends them as
# events and leaves the count 0).  Observing, with the hooks on from the
# start (arming would miss the fill's first hits), every readahead hit of
# the run (the kernel's swap_ra_hit, system-wide: nothing else runs) is
# the scan's, and a swap-cache hit; ours also counts hits on pages that
# had not left the swap cache since their swap-out.
if [ "$(val seq hook)" = tracepoint ]; then
	is "$(val seq swap_cache_hits)" 0 "seq: no swap-cache hit counted without --swap-cache-hits"
	is "$(val seq swap_cache_hits_counted)" false "... and the JSON says they were not counted"
	run seq-observe keep seq --policy observe --fault-hooks always --swap-cache-hits
	is "$(val seq-observe swap_cache_hits_counted)" true "seq, observing with --swap-cache-hits: the JSON says they were counted"
	ra=$(sed -n 's/.*swap_ra_hit=\([0-9]*\).*/\1/p' "$tmp/seq-observe.vm")
	cmp_ok "$(val seq-observe swap_cache_hits)" '>=' "$((ra * 9 / 10))" \
		"seq, observing: swap-cache hits counted ($(val seq-observe swap_cache_hits)), at least 90% of the kernel's readahead hits ($ra)"
	cmp_ok "$(val seq-observe swap_cache_hits)" '<=' "$(val seq-observe faults)" \
		"... and no more than the faults ($(val seq-observe faults))"
else
	skip "seq: no swap-cache hit counted without --swap-cache-hits" "the fentry path sends them as events"
	is "$(val seq swap_cache_hits_counted)" false "fentry path: the JSON says no swap-cache hit was counted"
	skip "seq, observing with --swap-cache-hits: the JSON says they were counted" "the fentry path sends them as events"
	skip "seq, observing: swap-cache hits counted" "the fentry path sends them as events"
	skip "... and no more than the faults" "the fentry path sends them as events"
fi

# A program of another user (a server's, as PostgreSQL's backends run as
# postgres): the agent, root with its capabilities dropped, must still
# read its pagemap (mode 0400, that user's: caps.h), which tells a stream
# the kernel's readahead serves.  Before, refused: every window went out
# unfiltered (no window past the kernel's, no pagemap scan), the fill was
# never held nor made cold (2026-11-29).  How much of the fill is held is
# the kernel's reclaim's to decide (a gap counts as served only while
# every page of it is still mapped): 0-3,182 pages in the seq rows of 8
# runs here, root's and nobody's, this code and 50e5cc4's alike
# (2026-11-30; a bound of 1,000 failed CI once at 953), so no bound is
# set on it; the windows past the kernel's ask the same pagemap and
# came out 12-78 in the same runs.
run seq-nobody keep "seq nobody"
cmp_ok "$(val seq-nobody windows_beyond_kernel_readahead)" '>' 3 \
	"seq, user nobody: the scan got windows past the kernel's (its pagemap read)"
cmp_ok "$(val seq-nobody pagemap_scans)" '>' 0 "seq, user nobody: its pagemap was read"

# Shared memory (pyscan.py's shm: MAP_SHARED | MAP_ANONYMOUS): the
# sequential scan, a read stream the kernel's readahead serves, is left to
# it too (windows past the kernel's made CPython's scan of 256 MiB 13-26%
# slower than the kernel alone, 2026-11-28); a stride past its reach still
# gets windows, which the program hits.
# A fresh-clone CI run of 2026-12-01 failed both checks (10 windows past
# the kernel's, 34,172 pages prefetched, 33,309 hit; the kernel's own
# swap_ra_hit 90 against ~29,000 in passing runs), 0 of 7 runs here: the
# recording's plans say, next time, whether those windows' pages were
# taken for shared memory ("shmem") and where the stream went past.
run shm-seq keep "seq shm" --record "$tmp/shm-seq.rec"
is "$(val shm-seq windows_beyond_kernel_readahead)" 0 \
	"shm-seq: no window past the kernel's readahead in shared memory" ||
	diag "$("$AGENT" replay --plans "$tmp/shm-seq.rec" 2>&1 | grep -E ' window=' | head -n 40)"
cmp_ok "$(val shm-seq prefetched)" '<' 500 \
	"shm-seq: (almost) nothing prefetched ($(val shm-seq prefetched))"
run shm-stride keep "stride:16 shm"
cmp_ok "$(val shm-stride prefetched)" '>' 5000 "shm-stride: thousands of pages prefetched"
cmp_ok "$(val shm-stride hits)" '>' 5000 "shm-stride: thousands of them hit"

# SWPIN_ZERO is counted per memcg (and in /proc/vmstat) since ~6.14, which
# all have the count_memcg_events tracepoint (~6.13).
if grep -q '^swpin_zero ' /proc/vmstat && command -v perl >/dev/null; then
	run perl keep perl
	# Measured: 4-8 windows past the kernel's (5,300-5,600 per 256 MiB run
	# before its fill's zero-filled misses were told apart).
	cmp_ok "$(val perl windows_beyond_kernel_readahead)" '<' 50 \
		"perl: (almost) no window past the kernel's readahead"
	cmp_ok "$(val perl hits)" '>' 5000 "perl: its strided scan hits ($(val perl hits))"
else
	for c in "perl ran" "perl read back" "perl no window past the kernel's" "perl scan hits"; do
		skip "$c" "kernel $(uname -r) does not count zero-filled swap-ins (swpin_zero)"
	done
fi

note "OOM kills tried again: $OOM_RETRIES"
done_testing
