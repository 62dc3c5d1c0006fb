#!/usr/bin/env bash
# leap-timeout: 30
# SPDX-License-Identifier: MIT
# shellcheck disable=SC2154 # NAME_pid and NAME_addr (A_pid, B_addr...) are set by backend_memd
# leap-swapd --state FILE (user/memclient/pstate.h): a leap-swapd that is
# SIGKILLed and started again with the same state file, servers and size
# serves every page its servers still hold, never a stale or a zeroed one.
# The FUSE frontend carries the data here (no swap: the kernel side of a
# FUSE device dies with its daemon, see docs/backend.md; the NBD frontend's
# survival under live swap is tests/vm/guest-nbd-restart.sh, in
# tests/sys/guest-6.1.t).
#
#   r = 2 over two leap-memd: 16 MiB of random pages written through the
#   FUSE file, leap-swapd SIGKILLed, restarted with --state: every page
#   reads back, unwritten ones as zeros.
#   A stale replica: pages rewritten while server B is frozen (B keeps the
#   old version), leap-swapd SIGKILLed, B thawed, restart: the new version
#   is served, and copied back to B (the old one never shows, even once A
#   is gone).
#   A server restarted empty while leap-swapd was dead: its instance id
#   changed, its pages are forgotten and copied back from the other
#   replica; then the other one dies and every page still reads back.
#   r = 1, the only server restarted empty: written pages fail with EIO and
#   a log line, never zeros.
#   A write in flight at the SIGKILL (its server frozen): that page reads
#   as an error after the restart, the others are intact.
#   A server down when leap-swapd restarts at r = 2: it starts anyway,
#   serves from the other replica, and refills the server when it is back.
#   Refusals: another size, replication, server list or order; a damaged
#   header or page byte; a second leap-swapd on the same file.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/fixture.sh
. "$root/tests/lib/fixture.sh"
# shellcheck source=tests/lib/backend.sh
. "$root/tests/lib/backend.sh"

require_root
for b in leap-swapd leap-memd; do
	[ -x "$root/bin/$b" ] || bail_out "bin/$b not built (run make)"
done
[ -e /dev/fuse ] || skip_all "no /dev/fuse"
fixture_init
backend_init || bail_out "backend_init failed"
tmp=$FX_STATE
# The state file on a disk filesystem, as documented (FX_SWAP_DIR is
# checked not to be memory-backed by backend_init).
state=$FX_SWAP_DIR/$FX_TAG.state
fixture_register rm -f "$state" "$state.bad"
SIZE=64M

# kill_swapd: SIGKILL leap-swapd, drop its dead FUSE mount.
kill_swapd()
{
	kill -KILL "$swapd_pid" 2>/dev/null
	wait "$swapd_pid" 2>/dev/null
	umount -l "$BK_MNT" 2>/dev/null
	swapd_pid=
}

# stop_swapd: SIGTERM (a clean stop: the file is not open).
stop_swapd()
{
	local i
	kill -TERM "$swapd_pid" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		kill -0 "$swapd_pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$swapd_pid" 2>/dev/null
	wait "$swapd_pid" 2>/dev/null
	umount -l "$BK_MNT" 2>/dev/null
	swapd_pid=
}

# start_swapd ARGS...: leap-swapd on the servers so far, with the state file.
start_swapd()
{
	backend_swapd "$SIZE" --state "$state" "$@"
}

# pages FIRST COUNT OUT: COUNT pages of the device from page FIRST into OUT.
pages()
{
	run_timeout 60 dd if="$BK_MNT/swap" of="$3" bs=256K skip=$(($1 * 4096)) \
		count=$(($2 * 4096)) iflag=direct,skip_bytes,count_bytes status=none 2>>"$tmp/dd.err"
}

# put FILE FIRST: FILE's pages to the device at page FIRST.
put()
{
	run_timeout 60 dd if="$1" of="$BK_MNT/swap" bs=256K seek=$(($2 * 4096)) \
		oflag=direct,seek_bytes conv=notrunc status=none 2>>"$tmp/dd.err"
}

head -c $((16 << 20)) /dev/urandom >"$tmp/v1"
head -c $((1 << 20)) /dev/urandom >"$tmp/v2"
head -c $((48 << 20)) /dev/zero >"$tmp/zeros"

backend_memd A "" 128M || bail_out "leap-memd A did not start"
backend_memd B "" 128M || bail_out "leap-memd B did not start"

# ---- r = 2: SIGKILL and reattach ------------------------------------------
start_swapd -r 2 || bail_out "leap-swapd did not start"
[ -s "$state" ]
ok $? "--state created the file"
put "$tmp/v1" 0
ok $? "16 MiB of random pages written"
kill_swapd
start_swapd -r 2 || bail_out "leap-swapd did not restart: $(cat "$BK_DIR/swapd.log")"
like "$(cat "$BK_DIR/swapd.log")" "reattaching \(its leap-swapd died\): 4096 pages written, 0 of them" \
	"the restarted leap-swapd reattaches to 4096 written pages"
pages 0 4096 "$tmp/back"
cmp -s "$tmp/v1" "$tmp/back"
ok $? "after SIGKILL + restart: every written page reads back"
pages 4096 12288 "$tmp/back"
cmp -s "$tmp/zeros" "$tmp/back"
ok $? "... and the never-written ones read as zeros"

# ---- a stale replica is never served ---------------------------------------
# Pages 0..255 rewritten while B is frozen: B keeps v1 there, A has v2.
kill -STOP "$B_pid"
put "$tmp/v2" 0
ok $? "1 MiB rewritten while server B is frozen (degraded writes)"
kill_swapd
kill -CONT "$B_pid"
start_swapd -r 2 || bail_out "leap-swapd did not restart: $(cat "$BK_DIR/swapd.log")"
head -c $((1 << 20)) "$tmp/v1" >"$tmp/v1head"
pages 0 256 "$tmp/back"
cmp -s "$tmp/v2" "$tmp/back"
ok $? "the rewritten pages read as the new version (B's old copy is not claimed)"
for ((i = 0; i < 100; i++)); do
	[ "$(backend_stat under_replicated)" = 0 ] && [ "$(backend_stat resilvered)" -ge 256 ] && break
	sleep 0.1
done
cmp_ok "$(backend_stat resilvered)" '>=' 256 "the new version was copied back to B ($(backend_stat resilvered) pages)"

# ---- a server restarted empty while leap-swapd was dead ---------------------
kill_swapd
kill -KILL "$B_pid"
wait "$B_pid" 2>/dev/null
backend_memd B "$B_addr" 128M || bail_out "leap-memd B did not restart"
start_swapd -r 2 || bail_out "leap-swapd did not restart: $(cat "$BK_DIR/swapd.log")"
for ((i = 0; i < 200; i++)); do
	[ "$(backend_stat under_replicated)" = 0 ] && [ "$(backend_stat resilvered)" -ge 4096 ] && break
	sleep 0.1
done
like "$(cat "$BK_DIR/swapd.log")" "$B_addr restarted \(instance [0-9a-f]+ -> [0-9a-f]+\): its pages are lost" \
	"B's new instance id is noticed against the one in the state file"
cmp_ok "$(backend_stat resilvered)" '>=' 4096 "its 4096 pages were copied back from A"
is "$(backend_stat under_replicated)" 0 "... none left on one replica"
# Now A dies: B alone must serve every page, the newest version.
kill -KILL "$A_pid"
wait "$A_pid" 2>/dev/null
cat "$tmp/v2" >"$tmp/expect"
tail -c +$(((1 << 20) + 1)) "$tmp/v1" >>"$tmp/expect"
pages 0 4096 "$tmp/back"
cmp -s "$tmp/expect" "$tmp/back"
ok $? "with A dead, B serves every page, the newest version"
backend_memd A "$A_addr" 128M || bail_out "leap-memd A did not restart"
# A came back empty: reading through it notices its new instance id and the
# re-replication thread fills it from B.
pages 0 4096 "$tmp/back"
for ((i = 0; i < 200; i++)); do
	[ "$(backend_stat under_replicated)" = 0 ] && [ "$(backend_stat resilvered)" -ge 8192 ] && break
	sleep 0.1
done
is "$(backend_stat under_replicated)" 0 "A restarted empty is filled again from B"
stop_swapd

# ---- a server away when leap-swapd restarts (r = 2) -------------------------
kill -KILL "$B_pid"
wait "$B_pid" 2>/dev/null
start_swapd -r 2
ok $? "with B down, leap-swapd still reattaches (r = 2)" ||
	diag "$(tail -n 5 "$BK_DIR/swapd.log")"
like "$(cat "$BK_DIR/swapd.log")" "$B_addr unreachable at start .*going on without it" \
	"... saying it goes on without B"
pages 0 4096 "$tmp/back"
cmp -s "$tmp/expect" "$tmp/back"
ok $? "every page reads back from A alone"
backend_memd B "$B_addr" 128M || bail_out "leap-memd B did not restart"
for ((i = 0; i < 300; i++)); do
	[ "$(backend_stat under_replicated)" = 0 ] && [ "$(backend_stat resilvered)" -ge 4096 ] && break
	sleep 0.1
done
cmp_ok "$(backend_stat resilvered)" '>=' 4096 "B, back empty, is filled from A ($(backend_stat resilvered) pages)"
stop_swapd

# ---- refusals ----------------------------------------------------------------
refuse()
{
	local what=$1 pattern=$2
	shift 2
	run_timeout 30 "$root/bin/leap-swapd" --mount "$BK_MNT" --secret-file "$BK_SECRET" \
		--retry-ms 1000 "$@" 2>"$tmp/refuse.err" </dev/null
	is "$?" 1 "refused: $what"
	like "$(cat "$tmp/refuse.err")" "$pattern" "... saying why"
	mountpoint -q "$BK_MNT" && umount -l "$BK_MNT"
}
refuse "another size" "device of 16384 pages, this one has 8192 \(--size\)" \
	--size 32M --state "$state" -s "$A_addr" -s "$B_addr" -r 2
refuse "another replication" "2 replica\(s\), not 1 \(--replicas\)" \
	--size "$SIZE" --state "$state" -s "$A_addr" -s "$B_addr" -r 1
refuse "the servers in another order" "server 0 = $A_addr, not $B_addr" \
	--size "$SIZE" --state "$state" -s "$B_addr" -s "$A_addr" -r 2
refuse "one server fewer" "2 server\(s\), not 1" \
	--size "$SIZE" --state "$state" -s "$A_addr"
cp "$state" "$state.bad"
printf '\x01' | dd of="$state.bad" bs=1 seek=40 conv=notrunc status=none
refuse "a damaged header" "damaged \(checksum mismatch\)" \
	--size "$SIZE" --state "$state.bad" -s "$A_addr" -s "$B_addr" -r 2
cp "$state" "$state.bad"
printf '\x80' | dd of="$state.bad" bs=1 seek=$((4096 + 77)) conv=notrunc status=none
refuse "a damaged page byte" "page 77 has state 0x8" \
	--size "$SIZE" --state "$state.bad" -s "$A_addr" -s "$B_addr" -r 2
printf 'not a state file\n' >"$state.bad"
refuse "a file that is no state file" "not a leap-swapd state file" \
	--size "$SIZE" --state "$state.bad" -s "$A_addr" -s "$B_addr" -r 2
start_swapd -r 2 || bail_out "leap-swapd did not restart"
mkdir -p "$BK_MNT.2"
fixture_register rmdir "$BK_MNT.2"
run_timeout 30 "$root/bin/leap-swapd" --mount "$BK_MNT.2" --secret-file "$BK_SECRET" \
	--size "$SIZE" --state "$state" -s "$A_addr" -s "$B_addr" -r 2 2>"$tmp/refuse.err" </dev/null
is "$?" 1 "refused: a second leap-swapd on a state file in use"
like "$(cat "$tmp/refuse.err")" "in use by another leap-swapd" "... saying why"
mountpoint -q "$BK_MNT.2" && umount -l "$BK_MNT.2"
like "$(cat "$BK_DIR/swapd.log")" "reattaching \(closed cleanly\)" \
	"after a clean stop the file says so"
stop_swapd

# ---- r = 1: the only replica restarted empty -> EIO, never zeros -----------
rm -f "$state"
BK_SERVERS=(A)
start_swapd || bail_out "leap-swapd (r = 1) did not start"
put "$tmp/v2" 0
ok $? "r = 1: 1 MiB written"
kill_swapd
kill -KILL "$A_pid"
wait "$A_pid" 2>/dev/null
backend_memd A "$A_addr" 128M || bail_out "leap-memd A did not restart"
start_swapd || bail_out "leap-swapd did not restart"
pages 3 1 "$tmp/back"
isnt "$?" 0 "a written page whose only replica restarted empty: the read fails"
like "$(cat "$BK_DIR/swapd.log")" "I/O error: read of page 3 .*no replica holding its latest version" \
	"... with a log line"
pages 300 1 "$tmp/back"
cmp -s <(head -c 4096 /dev/zero) "$tmp/back"
ok $? "... while a never-written page still reads as zeros"

# ---- a write in flight at the SIGKILL ---------------------------------------
# Page 600 written while A is frozen: the write waits for A (retry 1 s);
# leap-swapd dies meanwhile, its state byte says "in flight".
put "$tmp/v2" 512 # pages 512..767: a fresh version of a whole range first
ok $? "r = 1: pages 512..767 written"
kill -STOP "$A_pid"
head -c 4096 /dev/urandom >"$tmp/p600"
put "$tmp/p600" 600 &
dd_pid=$!
sleep 0.5
kill_swapd
wait "$dd_pid"
isnt "$?" 0 "the write in flight failed when leap-swapd died (the writer saw no success)"
kill -CONT "$A_pid"
start_swapd || bail_out "leap-swapd did not restart"
like "$(cat "$BK_DIR/swapd.log")" "1 of them had a write in flight" \
	"the restart counts one page with a write in flight"
pages 600 1 "$tmp/back"
isnt "$?" 0 "that page reads as an error, not a guess (old or new)"
pages 512 88 "$tmp/back"
cmp -s <(head -c $((88 * 4096)) "$tmp/v2") "$tmp/back"
ok $? "its neighbours read back intact"
put "$tmp/p600" 600
pages 600 1 "$tmp/back"
cmp -s "$tmp/p600" "$tmp/back"
ok $? "written again, the page is whole"
stop_swapd
done_testing
