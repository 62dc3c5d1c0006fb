#!/usr/bin/env bash
# leap-timeout: 20
# SPDX-License-Identifier: MIT
# `make install` / `make uninstall` into a DESTDIR: exactly the expected
# files (programs, the systemd unit with the installed paths, leap.conf,
# man pages, bash completion, docs), for the default PREFIX and for
# PREFIX=/usr; an edited leap.conf survives a reinstall and an uninstall,
# the shipped one is removed; uninstall removes exactly what install wrote.
# Also: the man pages render, and the completion completes.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/tap.sh
. "$repo/tests/lib/tap.sh"

for b in leap-agent leap-memd leap-swapd leap-memctl; do
	[ -x "$repo/bin/$b" ] || bail_out "bin/$b not built (run make)"
done
command -v help2man >/dev/null || bail_out "help2man missing (tools/install-deps.sh installs it)"
d=$(mktemp -d /var/tmp/leap-install.XXXXXX) || bail_out "mktemp"
trap 'rm -rf "$d"' EXIT

progs="leap-agent leap-memd leap-swapd leap-memctl leap-observe leap-sim leap-tracegen leap-workload"
# expected PREFIX UNITDIR: the file list install must write.
expected()
{
	local p
	{
		echo /etc/leap/leap.conf
		for p in $progs; do
			echo "$1/bin/$p"
			echo "$1/share/bash-completion/completions/$p"
		done
		echo "$2/leap-agent.service"
		for p in leap-agent leap-memd leap-swapd leap-memctl; do
			echo "$1/share/man/man8/$p.8"
		done
		echo "$1/share/doc/leap/README.md"
		echo "$1/share/doc/leap/leap.conf.example"
	} | sort
}
# files DIR: what is under DIR (not directories), as absolute paths.
files()
{
	(cd "$1" && find . -not -type d | sed 's|^\.||' | sort)
}
mk()
{
	make -C "$repo" --no-print-directory "$@" >"$d/make.log" 2>&1
}

# ---- default PREFIX (/usr/local) ------------------------------------------------
dest=$d/a
mk install DESTDIR="$dest"
ok $? "make install DESTDIR=..." || diag "$(tail -n 20 "$d/make.log")"
is "$(files "$dest")" "$(expected /usr/local /usr/local/lib/systemd/system)" \
	"exactly the expected files under /usr/local and /etc"
unit=$dest/usr/local/lib/systemd/system/leap-agent.service
is "$(sed -n 's/^ExecStart=//p' "$unit")" \
	"/usr/local/bin/leap-agent attach --keep-running --config /etc/leap/leap.conf" \
	"the unit runs the installed agent with the installed config"
is "$(grep -c '@[A-Z]*@' "$unit")" 0 "no @PLACEHOLDER@ left in the unit"
if command -v systemd-analyze >/dev/null; then
	# Only the unit's syntax: the binary and the man page are not
	# installed on this machine, only under DESTDIR.
	out=$(systemd-analyze verify "$unit" 2>&1 |
		grep -v 'Command .* is not executable\|No such file\|man leap-agent(8)')
	is "$out" "" "systemd-analyze verify: no complaints about the unit" || diag "$out"
else
	skip "systemd-analyze verify" "no systemd-analyze"
fi
cmp -s "$repo/dist/leap.conf" "$dest/etc/leap/leap.conf"
ok $? "the shipped leap.conf is installed"
for p in $progs; do
	cmp -s "$repo/bin/$p" "$dest/usr/local/bin/$p" && [ -x "$dest/usr/local/bin/$p" ]
	ok $? "$p installed, executable" || break
done
for p in leap-agent leap-memd leap-swapd leap-memctl; do
	page=$(MANWIDTH=100 man -l "$dest/usr/local/share/man/man8/$p.8" 2>&1)
	like "$page" "^${p^^}\(8\)" "man $p renders" || diag "$(head -n 5 <<<"$page")"
	like "$page" 'EXAMPLES' "... with the hand-written EXAMPLES"
done
like "$(MANWIDTH=100 man -l "$dest/usr/local/share/man/man8/leap-memd.8" 2>&1)" '--secret-file' \
	"leap-memd(8) has the options from --help"
like "$(MANWIDTH=100 man -l "$dest/usr/local/share/man/man8/leap-agent.8" 2>&1)" \
	'leap-agent attach.*--keep-running' "leap-agent(8) has each command's options"

# ---- bash completion ---------------------------------------------------------------
comp()
{
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _leap_complete; echo "${COMPREPLY[*]}"' \
		sh "$dest/usr/local/share/bash-completion/completions/leap-agent" "$@"
}
is "$(comp "$repo/bin/leap-agent" at)" attach "completion: leap-agent at -> attach"
like "$(comp "$repo/bin/leap-agent" attach --keep)" '--keep-running' \
	"completion: leap-agent attach --keep -> --keep-running"
like "$(comp "$repo/bin/leap-memd" --secr)" '--secret-file' "completion: leap-memd --secr -> --secret-file"

# ---- an edited leap.conf survives reinstall and uninstall -------------------------------
printf '\n[cgroup /sys/fs/cgroup/unified/db]\npw_max = 64\n' >>"$dest/etc/leap/leap.conf"
edited=$(cat "$dest/etc/leap/leap.conf")
mk install DESTDIR="$dest"
ok $? "reinstall"
is "$(cat "$dest/etc/leap/leap.conf")" "$edited" "the edited leap.conf is kept on reinstall"
like "$(cat "$d/make.log")" 'keeping .*/etc/leap/leap.conf' "... and install says so"
mk uninstall DESTDIR="$dest"
ok $? "make uninstall"
is "$(files "$dest")" /etc/leap/leap.conf "uninstall removes every file but the edited leap.conf"
like "$(cat "$d/make.log")" 'keeping .*leap.conf: it differs' "... and says why it keeps it"
cp "$repo/dist/leap.conf" "$dest/etc/leap/leap.conf"
mk uninstall DESTDIR="$dest"
is "$(files "$dest")" "" "an unedited leap.conf is removed: nothing is left"
[ ! -e "$dest/etc/leap" ] && [ ! -e "$dest/usr/local/share/doc/leap" ]
ok $? "leap's own directories are removed"

# ---- PREFIX=/usr, the unit where the distribution keeps units ----------------------------
dest=$d/b
mk install DESTDIR="$dest" PREFIX=/usr UNITDIR=/lib/systemd/system
ok $? "make install PREFIX=/usr UNITDIR=/lib/systemd/system"
is "$(files "$dest")" "$(expected /usr /lib/systemd/system)" "exactly the expected files under /usr"
is "$(sed -n 's/^ExecStart=//p' "$dest/lib/systemd/system/leap-agent.service")" \
	"/usr/bin/leap-agent attach --keep-running --config /etc/leap/leap.conf" "ExecStart follows PREFIX"
like "$(sed -n 's/^Documentation=//p' "$dest/lib/systemd/system/leap-agent.service")" \
	'file:///usr/share/doc/leap/README.md' "Documentation follows PREFIX"
mk uninstall DESTDIR="$dest" PREFIX=/usr UNITDIR=/lib/systemd/system
is "$(files "$dest")" "" "uninstall with the same variables leaves nothing"
done_testing
