#!/usr/bin/env bash
# leap-timeout: 30
# SPDX-License-Identifier: MIT
# System test for bin/leap-workload and the test fixtures: under a 64 MiB
# memory cgroup with a swap file on the root fs, seq, stride:16 and random
# runs over 192 MiB must really swap and find their data intact; the
# corruption self-test must exit 3; bad usage must exit 1 with a message; and
# the fixture must leave nothing behind, also when its test is killed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/fixture.sh
. "$root/tests/lib/fixture.sh"

require_root
WL=$root/bin/leap-workload
[ -x "$WL" ] || bail_out "$WL not built (run make)"
for d in /sys/fs/cgroup/memory /sys/fs/cgroup/unified; do
	[ -d "$d" ] || skip_all "no $d"
done

fixture_init
tmp=$FX_STATE

# Reads a number or string field of leap-workload's flat JSON object.
json_field()
{
	sed -n "s/.*\"$2\":\"\\{0,1\\}\\([^,\"}]*\\).*/\\1/p" "$1"
}

swap=$(swap_file_on 512) || bail_out "cannot set up a swap file"
note "swap file $swap is on"

FOOT=192M
LIMIT=64M
for pat in seq stride:16 random; do
	h=$(memcg_create $LIMIT) || bail_out "cannot create a memory cgroup"
	in0=$(vmstat_get pswpin)
	memcg_run_timeout 90 "$h" "$WL" --pattern "$pat" --footprint $FOOT --json \
		>"$tmp/out.json" 2>"$tmp/err"
	rc=$?
	in1=$(vmstat_get pswpin)
	is "$rc" 0 "$pat: exit 0" || diag "$(cat "$tmp/err")"
	is "$(json_field "$tmp/out.json" pattern)" "$pat" "$pat: JSON names the pattern"
	is "$(json_field "$tmp/out.json" errors)" 0 "$pat: no checksum errors"
	is "$(json_field "$tmp/out.json" footprint_bytes)" $((192 << 20)) \
		"$pat: JSON reports the footprint asked for ($FOOT)"
	is "$(json_field "$tmp/out.json" accesses)" 49152 "$pat: every page accessed once"
	maj=$(json_field "$tmp/out.json" majflt)
	cmp_ok "${maj:-0}" '>' 1000 "$pat: major faults in the measured pass ($maj)"
	cmp_ok $((in1 - in0)) '>' 1000 "$pat: pswpin grew by $((in1 - in0))"
	diag "$pat: $(cat "$tmp/err")"
	memcg_destroy "$h"
done

# Threads and the oracle, smaller: data must stay intact.
h=$(memcg_create 32M) || bail_out "cannot create a memory cgroup"
memcg_run_timeout 90 "$h" "$WL" -p interleave -f 64M -t 4 -n 2 --oracle 64 --json \
	>"$tmp/out.json" 2>"$tmp/err"
rc=$?
is "$rc" 0 "interleave x4 with --oracle 64, 2 passes (one rewriting): exit 0" ||
	diag "$(cat "$tmp/err")"
is "$(json_field "$tmp/out.json" errors)" 0 "interleave: no checksum errors"
cmp_ok "$(json_field "$tmp/out.json" oracle_madvise_calls)" '>' 0 "oracle issued madvise calls"
is "$(json_field "$tmp/out.json" oracle_madvise_failures)" 0 "no madvise failed"

# The checker catches corruption, also across swap.
memcg_run_timeout 90 "$h" "$WL" -p phase -f 64M --self-test-corrupt >"$tmp/out" 2>"$tmp/err"
rc=$?
is "$rc" 3 "--self-test-corrupt exits 3"
like "$(cat "$tmp/err")" "CORRUPT page [0-9]+" "corruption is reported on stderr"
like "$(cat "$tmp/out")" "errors=[1-9]" "summary line counts the error"

# Bad usage: exit 1 and a message saying what is wrong.
usage_case()
{
	local want=$1
	shift
	"$WL" "$@" >"$tmp/out" 2>"$tmp/err"
	is "$?" 1 "bad usage exits 1: $*"
	like "$(cat "$tmp/err")" "$want" "  and says why: /$want/"
}
usage_case "pattern 'bogus'" --pattern bogus --footprint 1M
usage_case "footprint is required" --pattern seq
usage_case "bad --footprint '12Q'" --pattern seq --footprint 12Q
usage_case "stride:K" --pattern stride:0 --footprint 1M
usage_case "unrecognized option" --pattern seq --footprint 1M --frobnicate
"$WL" --pattern seq --footprint 1M >"$tmp/out" 2>&1
is "$?" 0 "a tiny run without a cgroup exits 0"

# Cleanup: explicit teardown (the EXIT trap will find nothing left to do).
fixture_teardown
left=$(fixture_leftovers)
is "$left" "" "teardown leaves no swap, cgroups, files or processes"
is "$(grep -c "leap-test-$$-" /proc/swaps)" 0 "no swap of ours in /proc/swaps"
fixture_teardown
is "$(fixture_leftovers)" "" "teardown is idempotent"

# A test killed midway still cleans up: a child test sets everything up,
# starts a workload in its cgroup and is sent SIGTERM (as run-one's timeout
# would); its guardian must tear everything down.
cat >"$tmp/child.sh" <<EOF
. "$root/tests/lib/fixture.sh"
fixture_init
swap_file_on 64 >/dev/null || exit 2
h=\$(memcg_create 16M) || exit 2
page_cluster_set 1
memcg_run "\$h" "$WL" -p seq -f 48M -n 1000000 >/dev/null 2>&1 &
fixture_track_pid \$!
echo \$! >"$tmp/child.wl"
touch "$tmp/child.ready"
memcg_run_timeout 100 "\$h" sleep 100
EOF
pc_before=$(cat /proc/sys/vm/page-cluster)
bash "$tmp/child.sh" &
child=$!
for ((i = 0; i < 100; i++)); do
	[ -e "$tmp/child.ready" ] && break
	sleep 0.1
done
[ -e "$tmp/child.ready" ]
ok $? "child test set up swap, a cgroup and a workload"
sleep 1
kill -TERM "$child"
wait "$child"
is "$?" 143 "child test ended by SIGTERM"
wl=$(cat "$tmp/child.wl" 2>/dev/null)
child_leftovers()
{
	grep -F "leap-test-$child-" /proc/swaps
	ls -d /sys/fs/cgroup/memory/leap-test-"$child"-* /sys/fs/cgroup/unified/leap-test-"$child"-* \
		/var/tmp/leap-test-"$child"-* /tmp/leap-test-"$child".* 2>/dev/null
	[ -n "$wl" ] && [ -d "/proc/$wl" ] && echo "process $wl"
	[ "$(cat /proc/sys/vm/page-cluster)" != "$pc_before" ] && echo "page-cluster"
}
for ((i = 0; i < 150; i++)); do
	[ -z "$(child_leftovers)" ] && break
	sleep 0.1
done
is "$(child_leftovers)" "" "within 15 s the child's guardian removed its swap, cgroups, files, workload"
is "$(grep -c "leap-test-$child-" /proc/swaps)" 0 "the child's swap file is off"
is "$(cat /proc/sys/vm/page-cluster)" "$pc_before" "the child's page-cluster change was undone"

done_testing
