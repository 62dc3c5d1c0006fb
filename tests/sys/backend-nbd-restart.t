#!/usr/bin/env bash
# leap-timeout: 20
# SPDX-License-Identifier: MIT
# A swap device that survives its daemon (docs/backend.md, "Surviving a
# restart"): here, the options that ask for it are refused where they
# cannot work.  The survival itself (leap-swapd SIGKILLed under heavy
# swapping to /dev/nbdN and taken over with --reconnect and --state, every
# page verified, no OOM kill) runs in the Debian 6.1 guest:
# tests/sys/guest-6.1.t, part nbd-restart (tests/vm/guest-nbd-restart.sh).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/tap.sh
. "$repo/tests/lib/tap.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root"
[ -x "$repo/bin/leap-swapd" ] || bail_out "bin/leap-swapd not built (run make)"

# ---- host: usage errors ------------------------------------------------------
tmp=$(mktemp -d)
head -c 48 /dev/urandom | base64 >"$tmp/secret"
chmod 600 "$tmp/secret"
run_timeout 10 "$repo/bin/leap-swapd" --frontend nbd --reconnect /dev/nbd0 --size 64M \
	-s 127.0.0.1:1 --secret-file "$tmp/secret" 2>"$tmp/err"
is "$?" 2 "--reconnect without --state is a usage error"
like "$(cat "$tmp/err")" "needs the --state FILE" "... saying why (every page would read as zeros)"
run_timeout 10 "$repo/bin/leap-swapd" --reconnect /dev/nbd0 --state "$tmp/st" --mount /tmp \
	--size 64M -s 127.0.0.1:1 --secret-file "$tmp/secret" 2>/dev/null
is "$?" 2 "--reconnect with the FUSE frontend is a usage error"
run_timeout 10 "$repo/bin/leap-swapd" --frontend nbd --nbd-connections 17 --size 64M \
	-s 127.0.0.1:1 --secret-file "$tmp/secret" 2>/dev/null
is "$?" 2 "--nbd-connections 17 is a usage error"
rm -rf "$tmp"

done_testing
