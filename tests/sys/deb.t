#!/usr/bin/env bash
# leap-timeout: 150
# SPDX-License-Identifier: MIT
# The Debian package: `make deb` builds it (dpkg-buildpackage, debhelper),
# and its contents and maintainer scripts are checked here.  The Debian 6.1
# guest installs it with dpkg -i into an overlay of its root, runs the
# leap-agent service from the installed unit, and purges it, leaving
# nothing: tests/sys/guest-6.1.t, part deb (tests/vm/guest-deb.sh).
# Measured: ~20 s; the build alone took 51 s in a fresh-clone CI run on
# 2026-11-30 night (unit tests ran 1.5-2x their usual times that hour), past
# the 40 s limit of then.  The build's own limit stays under the test's, so
# a killed test leaves no build running.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/tap.sh
. "$repo/tests/lib/tap.sh"
. "$repo/tests/vm/lib.sh" # VM_CACHE: where the build log goes

[ "$(id -u)" -eq 0 ] || skip_all "needs root (qemu's 9p root; make deb installs debhelper)"
git -C "$repo" rev-parse --git-dir >/dev/null 2>&1 || skip_all "not a git checkout (make deb copies git ls-files)"

# ---- build -----------------------------------------------------------------------
mkdir -p "$VM_CACHE"
timeout 120 make -C "$repo" --no-print-directory deb >"$VM_CACHE/deb-build.log" 2>&1
ok $? "make deb" || bail_out "make deb failed: $(tail -n 20 "$VM_CACHE/deb-build.log")"
deb=$(ls "$repo"/.output/deb/leap_*_amd64.deb 2>/dev/null | head -n 1)
[ -f "$deb" ]
ok $? "one .deb: ${deb#"$repo"/}" || bail_out "no .deb"
files=$(dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|')
for f in /usr/bin/leap-agent /usr/bin/leap-memd /usr/bin/leap-swapd /usr/bin/leap-memctl \
	/lib/systemd/system/leap-agent.service /etc/leap/leap.conf \
	/usr/share/man/man8/leap-agent.8.gz /usr/share/man/man8/leap-memd.8.gz \
	/usr/share/man/man8/leap-swapd.8.gz /usr/share/man/man8/leap-memctl.8.gz \
	/usr/share/bash-completion/completions/leap-agent /usr/share/doc/leap/copyright; do
	grep -qx "$f" <<<"$files"
	ok $? "package has $f"
done
is "$(grep -c '^/usr/lib/debug' <<<"$files")" 0 "no debug files in the package"
ctl=$(mktemp -d)
dpkg-deb -e "$deb" "$ctl"
is "$(cat "$ctl/conffiles")" /etc/leap/leap.conf "conffiles: /etc/leap/leap.conf"
grep -q "deb-systemd-helper enable 'leap-agent.service'" "$ctl/postinst"
ok $? "postinst enables the unit"
grep -q "deb-systemd-invoke \$_dh_action 'leap-agent.service'" "$ctl/postinst"
ok $? "postinst starts it (where systemd runs)"
grep -q "deb-systemd-invoke stop 'leap-agent.service'" "$ctl/prerm"
ok $? "prerm stops it"
grep -q 'rm -rf /etc/leap' "$ctl/postrm"
ok $? "postrm purge removes /etc/leap"
rm -rf "$ctl"
unit=$(dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ./lib/systemd/system/leap-agent.service)
like "$(grep '^ExecStart=' <<<"$unit")" \
	'^ExecStart=/usr/bin/leap-agent attach --keep-running --config /etc/leap/leap.conf$' \
	"the unit's ExecStart has the installed paths"
is "$(grep -c '@[A-Z]*@' <<<"$unit")" 0 "no @PLACEHOLDER@ left in the unit"

done_testing
