#!/usr/bin/env bash
# leap-timeout: 60
# SPDX-License-Identifier: MIT
# shellcheck disable=SC2154 # NAME_pid and NAME_addr (A_pid, B_addr...) are set by backend_memd
# Real swap through the remote backend: two leap-memd servers, leap-swapd
# (FUSE file, r = 2 replication) behind a loop device with direct I/O,
# swapped to at the highest priority.  leap-workload (every page
# checksummed) runs seq and stride:16 over 128M in a 48M memory cgroup, two
# processes at once, and once more while one of the two servers is killed:
# every run must exit 0.
#
# The backend's set-up and its safety rules: tests/lib/backend.sh.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/fixture.sh
. "$root/tests/lib/fixture.sh"

require_root
MEMD=$root/bin/leap-memd
SWAPD=$root/bin/leap-swapd
CTL=$root/bin/leap-memctl
WL=$root/bin/leap-workload
for b in "$MEMD" "$SWAPD" "$CTL" "$WL"; do
	[ -x "$b" ] || bail_out "$b not built (run make)"
done
[ -c /dev/fuse ] || skip_all "no /dev/fuse"
command -v losetup >/dev/null || skip_all "no losetup"
for d in /sys/fs/cgroup/memory /sys/fs/cgroup/unified; do
	[ -d "$d" ] || skip_all "no $d"
done
case $(stat -f -c %T "$FX_SWAP_DIR") in
tmpfs | ramfs | overlayfs) skip_all "$FX_SWAP_DIR is memory-backed" ;;
esac

fixture_init
# shellcheck source=tests/lib/backend.sh
. "$root/tests/lib/backend.sh"
backend_init || bail_out "backend_init failed"
tmp=$BK_DIR
mnt=$BK_MNT

backend_memd A || bail_out "leap-memd A did not start"
backend_memd B || bail_out "leap-memd B did not start"
backend_swapd 256M -r 2 --cache-pages 4096 || bail_out "leap-swapd did not start"
note "leap-swapd serves $mnt/swap ($(stat -c %s "$mnt/swap") bytes, mode $(stat -c %a "$mnt/swap"))"
like "$(cat "$tmp/swapd.log")" "serving" "leap-swapd started (it is not in a limited memcg)"

backend_swapon || bail_out "loop device, mkswap or swapon failed"
loop=$BK_LOOP
is "$(cat "/sys/block/${loop#/dev/}/loop/dio")" 1 "$loop uses direct I/O"
top=$(awk 'NR > 1 {print $5, $1}' /proc/swaps | sort -n | tail -1 | cut -d' ' -f2)
is "$top" "$loop" "$loop is the highest-priority swap"
note "$(cat /proc/swaps)"

# run_wl PATTERN TAG [HANDLE]: leap-workload in a 48M memcg (HANDLE, or a new
# one).  Concurrent runs get handles made beforehand: the fixture's counter
# for names is not safe against concurrent memcg_create calls.
send_ctl() { backend_ctl "$1"; }

run_wl()
{
	local pat=$1 tag=$2 h=${3:-} rc
	[ -n "$h" ] || h=$(memcg_create 48M) || return 125
	memcg_run_timeout 100 "$h" "$WL" --pattern "$pat" --footprint 128M \
		>"$tmp/wl-$tag.out" 2>"$tmp/wl-$tag.err"
	rc=$?
	memcg_destroy "$h"
	return $rc
}

out0=$(awk '$1 == "pswpout" {print $2}' /proc/vmstat)
run_wl seq seq
is "$?" 0 "seq over 128M in a 48M memcg: exit 0, every page verified" ||
	diag "$(cat "$tmp/wl-seq.err")"
used=$(run_timeout 30 "$CTL" -k "$tmp/secret" -s "$A_addr" stats 2>/dev/null |
	awk '$2 == "pages_written" {print $3}')
cmp_ok "${used:-0}" '>' 10000 "pages went out to leap-memd A (pages_written $used)"
out1=$(awk '$1 == "pswpout" {print $2}' /proc/vmstat)
cmp_ok $((out1 - out0)) '>' 10000 "pswpout grew by $((out1 - out0))"
note "$(cat "$tmp/wl-seq.out")"

# Two processes at once, each in its own 48M memcg.
h1=$(memcg_create 48M) || bail_out "memcg_create failed"
h2=$(memcg_create 48M) || bail_out "memcg_create failed"
run_wl stride:16 s1 "$h1" &
p1=$!
run_wl seq s2 "$h2" &
p2=$!
wait "$p1"
is "$?" 0 "stride:16 alongside seq: exit 0" || diag "$(cat "$tmp/wl-s1.err")"
wait "$p2"
is "$?" 0 "seq alongside stride:16: exit 0" || diag "$(cat "$tmp/wl-s2.err")"
note "$(cat "$tmp/wl-s1.out" "$tmp/wl-s2.out")"

# Prefetching on: an oracle reads the workload's /proc/PID/pagemap (swap
# type and offset of each swapped-out page) and pushes the next swapped
# pages in address order to leap-swapd's control socket while seq runs.
# Pages get prefetched, hit, evicted, rewritten and invalidated under real
# swap traffic: the data must stay intact, and the cache must be hit.
oracle()
{
	timeout -k 5 100 python3 "$root/tests/sys/helpers/pagemap-oracle.py" "$1" "$tmp/ctl" \
		--select majority-type --max 256 --interval 0.002
}

h=$(memcg_create 48M) || bail_out "memcg_create failed"
rm -f "$tmp/ready" "$tmp/go"
memcg_run_timeout 100 "$h" "$WL" --pattern seq --footprint 128M --ready-file "$tmp/ready" \
	--wait-file "$tmp/go" >"$tmp/wl-pf.out" 2>"$tmp/wl-pf.err" &
p=$!
for ((i = 0; i < 300; i++)); do
	[ -e "$tmp/ready" ] && break
	sleep 0.1
done
wl_pid=$(pgrep -f -n "leap-workload --pattern seq --footprint 128M --ready-file $tmp/ready")
h0=$(send_ctl STATS | tr ' ' '\n' | sed -n 's/^hits=//p')
oracle "$wl_pid" >"$tmp/oracle.out" 2>&1 &
op=$!
touch "$tmp/go"
wait "$p"
is "$?" 0 "seq with backend prefetching on: exit 0, every page verified" ||
	diag "$(cat "$tmp/wl-pf.err")"
wait "$op"
memcg_destroy "$h"
st=$(send_ctl STATS)
h1=$(echo "$st" | tr ' ' '\n' | sed -n 's/^hits=//p')
cmp_ok $((h1 - h0)) '>' 100 "prefetch-cache hits during the run: $((h1 - h0))"
note "$(cat "$tmp/oracle.out") / $(cat "$tmp/wl-pf.out")"
note "$st"

# r = 2: kill one server in the middle of a run; nothing may be lost.
h=$(memcg_create 48M) || bail_out "memcg_create failed"
run_wl stride:16 kill "$h" &
p=$!
sleep 0.4
kill -KILL "$B_pid"
wait "$B_pid" 2>/dev/null
wait "$p"
is "$?" 0 "stride:16 with leap-memd B killed mid-run (r=2): exit 0, data intact" ||
	diag "$(cat "$tmp/wl-kill.err")"
like "$(cat "$tmp/swapd.log")" "127.0.0.1:[0-9]+" "leap-swapd logged the lost server"
note "$(grep -v '^leap-swapd: warning' "$tmp/swapd.log" | tail -5)"

# B comes back empty while a workload's pages sit in swap; leap-swapd copies
# every single-copy page back to it; then A dies and the workload reads its
# whole footprint (and swapoff everything left) from B alone.
backend_memd B "$B_addr" || bail_out "leap-memd B did not restart"
h=$(memcg_create 48M) || bail_out "memcg_create failed"
rm -f "$tmp/ready" "$tmp/go"
memcg_run_timeout 100 "$h" "$WL" --pattern stride:16 --footprint 128M \
	--ready-file "$tmp/ready" --wait-file "$tmp/go" >"$tmp/wl-rs.out" 2>"$tmp/wl-rs.err" &
p=$!
for ((i = 0; i < 300; i++)); do
	[ -e "$tmp/ready" ] && break
	sleep 0.1
done
stat_ctl() { backend_stat "$1"; }
for ((i = 0; i < 100; i++)); do
	[ "$(stat_ctl under_replicated)" = 0 ] && [ "$(stat_ctl resilvered)" -gt 0 ] && break
	sleep 0.2
done
is "$(stat_ctl under_replicated)" 0 "every swapped page is on both servers again"
cmp_ok "$(stat_ctl resilvered)" '>' 0 "... $(stat_ctl resilvered) pages copied back to B"
kill -KILL "$A_pid"
wait "$A_pid" 2>/dev/null
touch "$tmp/go"
wait "$p"
is "$?" 0 "A killed after B's re-replication: stride:16 reads back every page from B" ||
	diag "$(cat "$tmp/wl-rs.err")"
memcg_destroy "$h"

# Stopping leap-swapd under live swap is refused, however often asked.
kill -TERM "$swapd_pid"
sleep 0.3
kill -TERM "$swapd_pid"
sleep 0.3
kill -0 "$swapd_pid"
ok $? "leap-swapd refuses SIGTERM (twice) while the loop device holds its file"
like "$(cat "$tmp/swapd.log")" "not stopping: the swap file is still open" "... and says why"

backend_teardown
ok $? "swapoff, loop detached, daemons stopped"
grep -q "^$loop " /proc/swaps
isnt "$?" 0 "$loop is no longer swap"
like "$(cat "$tmp/swapd.log")" "leap-swapd: reads=[0-9]+ writes=[0-9]+ .*errors=0 .*io_errors=0" \
	"leap-swapd served every request (and prefetch) without an I/O error"
note "$(grep 'leap-swapd: reads=' "$tmp/swapd.log")"
mountpoint -q "$mnt"
isnt "$?" 0 "FUSE unmounted"
left=$(fixture_leftovers)
is "$left" "" "nothing left behind"
done_testing
