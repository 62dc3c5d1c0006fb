#!/usr/bin/env bash
# leap-timeout: 20
# SPDX-License-Identifier: MIT
# leap-swapd's NBD frontend (docs/backend.md).  This machine's kernel has
# no NBD driver, so:
#   - here: --frontend nbd fails at once, with a message that names the
#     missing driver, before it contacts any server;
#   - the request handling, with a test peer in the kernel's place.
# In the Debian 6.1 guest, tests/vm/guest-nbd.sh loads nbd from the
# extracted kernel tree and swaps to /dev/nbdN through leap-memd, with and
# without prefetching, TRIM included: tests/sys/guest-6.1.t, part nbd.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/tap.sh
. "$repo/tests/lib/tap.sh"
. "$repo/tests/vm/lib.sh" # vm_relay_tap_lines

[ "$(id -u)" -eq 0 ] || skip_all "needs root"
for b in leap-swapd leap-memd leap-workload; do
	[ -x "$repo/bin/$b" ] || bail_out "bin/$b not built (run make)"
done
tmp=$(mktemp -d)
memd_pid=''
cleanup()
{
	[ -n "$memd_pid" ] && kill "$memd_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
head -c 48 /dev/urandom | base64 >"$tmp/secret"
chmod 600 "$tmp/secret"

# ---- host: no NBD driver ---------------------------------------------------
if [ -d /sys/module/nbd ]; then
	skip "host without nbd: clean failure" "this host has the nbd driver loaded"
else
	# Port 1 would refuse: the daemon must fail before trying it.
	run_timeout 10 "$repo/bin/leap-swapd" --frontend nbd --size 64M -s 127.0.0.1:1 \
		--secret-file "$tmp/secret" 2>"$tmp/err"
	is "$?" 1 "host without nbd: leap-swapd --frontend nbd exits 1"
	like "$(cat "$tmp/err")" "NBD driver is not loaded.*modprobe nbd" "... naming the missing driver"
	unlike_connect=$(grep -c '127.0.0.1:1' "$tmp/err")
	is "$unlike_connect" 0 "... before contacting any server"
fi
run_timeout 10 "$repo/bin/leap-swapd" --frontend nbd --mount /tmp --size 64M -s 127.0.0.1:1 \
	--secret-file "$tmp/secret" 2>/dev/null
is "$?" 2 "--mount with --frontend nbd is a usage error"
run_timeout 10 "$repo/bin/leap-swapd" --frontend bogus --size 64M -s 127.0.0.1:1 \
	--secret-file "$tmp/secret" 2>/dev/null
is "$?" 2 "an unknown --frontend is a usage error"

# ---- host: the request handling, with a test peer in the kernel's place ----
# leap-swapd --nbd-socket serves an inherited socketpair end (no device);
# tests/sys/helpers/nbd-peer.py sends valid, pipelined and hostile requests.
"$repo/bin/leap-memd" --size 64M --listen 127.0.0.1:0 --port-file "$tmp/memd.port" \
	--secret-file "$tmp/secret" </dev/null 2>"$tmp/memd.log" &
memd_pid=$!
for ((i = 0; i < 50; i++)); do
	[ -s "$tmp/memd.port" ] && break
	sleep 0.1
done
[ -s "$tmp/memd.port" ] || bail_out "leap-memd did not start: $(cat "$tmp/memd.log")"
for mode in normal magic; do
	timeout -k 5 60 python3 "$here/helpers/nbd-peer.py" "$repo/bin/leap-swapd" "$tmp/secret" \
		"$(cat "$tmp/memd.port")" "$tmp/peer-$mode.log" "$mode" >"$tmp/peer-$mode.tap" 2>&1
	prc=$?
	vm_relay_tap_lines "$tmp/peer-$mode.tap" "nbd peer ($mode): "
	is "$prc" 0 "nbd peer ($mode) ran to the end" ||
		diag "$(tail -n 5 "$tmp/peer-$mode.tap"; tail -n 5 "$tmp/peer-$mode.log")"
done
kill "$memd_pid"
wait "$memd_pid"
memd_pid=

done_testing
