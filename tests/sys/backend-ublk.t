#!/usr/bin/env bash
# leap-timeout: 20
# SPDX-License-Identifier: MIT
# leap-swapd's ublk frontend (docs/backend.md).  This machine's kernel has
# no ublk driver, so here --frontend ublk fails at once, with a message that
# names the missing driver, before it contacts any server, and its options
# are checked.  In the Debian 6.12 guest, tests/vm/guest-ublk.sh loads
# ublk_drv and swaps to /dev/ublkbN through leap-memd with 4 queues of depth
# 64, then SIGKILLs leap-swapd under swap and recovers it with --recover:
# tests/sys/guest-6.12.t, part ublk.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/tap.sh
. "$repo/tests/lib/tap.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root"
for b in leap-swapd leap-memd leap-workload; do
	[ -x "$repo/bin/$b" ] || bail_out "bin/$b not built (run make)"
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -c 48 /dev/urandom | base64 >"$tmp/secret"
chmod 600 "$tmp/secret"
swapd()
{
	run_timeout 10 "$repo/bin/leap-swapd" "$@" --secret-file "$tmp/secret" 2>"$tmp/err"
}

# ---- host: no ublk driver ----------------------------------------------------
if [ -e /dev/ublk-control ]; then
	skip "host without ublk: clean failure" "this host has the ublk driver loaded"
else
	# Port 1 would refuse: the daemon must fail before trying it.
	swapd --frontend ublk --size 64M -s 127.0.0.1:1
	is "$?" 1 "host without ublk: leap-swapd --frontend ublk exits 1"
	like "$(cat "$tmp/err")" "ublk driver is not loaded.*modprobe ublk_drv" \
		"... naming the missing driver"
	is "$(grep -c '127.0.0.1:1' "$tmp/err")" 0 "... before contacting any server"
fi
swapd --frontend ublk --mount /tmp --size 64M -s 127.0.0.1:1
is "$?" 2 "--mount with --frontend ublk is a usage error"
swapd --frontend nbd --ublk-depth 8 --size 64M -s 127.0.0.1:1
is "$?" 2 "--ublk-depth without --frontend ublk is a usage error"
swapd --frontend ublk --ublk-depth 0 --size 64M -s 127.0.0.1:1
is "$?" 2 "--ublk-depth 0 is a usage error"
swapd --frontend ublk --ublk-block 1024 --size 64M -s 127.0.0.1:1
is "$?" 2 "--ublk-block 1024 is a usage error"
swapd --frontend ublk --recover 0 -r 2 --size 64M -s 127.0.0.1:1 -s 127.0.0.1:2
is "$?" 2 "--recover with two replicas and no --state is refused"
like "$(cat "$tmp/err")" "needs the --state FILE" "... saying why"

done_testing
