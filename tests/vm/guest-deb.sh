#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/vm/guest-deb.sh REPO MODROOT DEB: what tests/sys/guest-6.1.t (part deb) runs in the
# 6.1 guest (tests/vm/boot.sh): the Debian package DEB (a path the guest
# sees: the checkout is shared at its host path) installed with dpkg -i, the leap-agent service run, then dpkg --purge,
# and nothing left behind.
#
# The guest's root is the host's, read-only over 9p, so the package goes
# into an overlay of it (overlayfs, upper layer on tmpfs, loaded from the
# guest kernel's tree with modprobe -d MODROOT), entered with chroot, with
# the guest's own /proc, /sys (BTF, bpffs, cgroup2) and /dev and fresh
# tmpfs /run and /tmp.  dpkg there is the real thing: the maintainer
# scripts from debhelper run as on any Debian machine.  The guest's init is
# a shell, not systemd, so postinst enables the unit (deb-systemd-helper
# writes the multi-user.target.wants link) but cannot start it; the test
# starts the agent the way systemd would, from the installed unit's
# ExecStart line, and stops it with the unit's KillSignal before removing
# the package (what prerm asks systemd to do).  "Nothing left" is checked
# on the overlay's upper layer: after the purge it must hold no path
# naming leap.  TAP goes to /run/leapvm/guest.tap.
# boot.sh runs it with /bin/sh (dash).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -uo pipefail
repo=${1:?usage: guest-deb.sh REPO MODROOT DEB}
modroot=${2:?usage: guest-deb.sh REPO MODROOT DEB}
deb=${3:?usage: guest-deb.sh REPO MODROOT DEB}
# shellcheck source=tests/lib/tap.sh
. "$repo/tests/lib/tap.sh"
out=${LEAPVM_OUT:-/run/leapvm} # where the TAP and the logs go
exec >"$out/guest.tap" 2>&1
O=/run/ovl
M=$O/merged
agent_pid=

teardown()
{
	set +e
	[ -n "$agent_pid" ] && kill -TERM "$agent_pid" 2>/dev/null && sleep 2
	dmesg >"$out/dmesg.txt" 2>&1
}
trap teardown EXIT

# in_root CMD...: CMD inside the overlay root.
in_root()
{
	chroot "$M" "$@"
}

note "kernel $(uname -r); init is $(cat /proc/1/comm)"
cp "$deb" "$out/leap.deb" || bail_out "cannot read $deb"

# ---- a writable root: overlay over the read-only 9p root ------------------------
modprobe -d "$modroot" overlay
ok $? "modprobe overlay" || bail_out "no overlayfs"
mkdir -p "$O/upper" "$O/work" "$M"
mount -t overlay overlay -o "lowerdir=/,upperdir=$O/upper,workdir=$O/work" "$M"
ok $? "overlay root on $M" || bail_out "cannot mount the overlay"
mount -t proc proc "$M/proc" && mount --rbind /sys "$M/sys" && mount --rbind /dev "$M/dev" &&
	mount -t tmpfs -o mode=755 tmpfs "$M/run" && mount -t tmpfs -o mode=1777 tmpfs "$M/tmp" &&
	mkdir -p "$M/run/leapvm" "$M/run/lock" && mount --bind "$out" "$M/run/leapvm"
ok $? "chroot has the guest's /proc, /sys, /dev and fresh /run, /tmp" || bail_out "chroot mounts"
# man-db's trigger would rebuild its index under TCG for minutes; the page
# itself is checked below.
rm -f "$M/var/lib/man-db/auto-update"
in_root dpkg-query -W -f='${Status}' leap >/dev/null 2>&1
isnt "$?" 0 "leap is not installed before the test"

# ---- install ------------------------------------------------------------------------
in_root dpkg -i /run/leapvm/leap.deb >"$out/dpkg-i.log" 2>&1
ok $? "dpkg -i leap.deb" || diag "$(tail -n 20 "$out/dpkg-i.log")"
is "$(in_root dpkg-query -W -f='${Status}' leap 2>/dev/null)" "install ok installed" \
	"dpkg: leap installed"
in_root dpkg -L leap >"$out/files.txt"
unit=/lib/systemd/system/leap-agent.service
[ -f "$M$unit" ]
ok $? "unit installed at $unit"
is "$(readlink "$M/etc/systemd/system/multi-user.target.wants/leap-agent.service")" "$unit" \
	"postinst enabled the unit (multi-user.target.wants link)"
grep -qx /etc/leap/leap.conf "$M/var/lib/dpkg/info/leap.conffiles"
ok $? "/etc/leap/leap.conf is a conffile"
like "$(in_root leap-agent --version 2>&1)" '^leap-agent [0-9]' "/usr/bin/leap-agent runs"
like "$(zcat "$M/usr/share/man/man8/leap-agent.8.gz" | grep '^\.TH')" 'LEAP-AGENT.*8' \
	"man page leap-agent(8)"
for p in leap-memd leap-swapd leap-memctl; do
	[ -f "$M/usr/share/man/man8/$p.8.gz" ] && [ -x "$M/usr/bin/$p" ]
	ok $? "$p and its man page installed"
done

# ---- the service, started as systemd would start it -----------------------------------
if [ -d /run/systemd/system ]; then
	bail_out "systemd runs in this guest: use systemctl (not written for that)"
fi
exec_start=$(sed -n 's/^ExecStart=//p' "$M$unit")
like "$exec_start" '^/usr/bin/leap-agent attach .*--config /etc/leap/leap.conf' \
	"ExecStart has the installed paths: $exec_start"
# start_service LOG: runs ExecStart in the root, waits for the agent's
# state file (written once attached).
start_service()
{
	local i
	# shellcheck disable=SC2086 # ExecStart is a command line
	chroot "$M" $exec_start >"$1" 2>&1 &
	agent_pid=$!
	for ((i = 0; i < 120; i++)); do
		[ -s "$M/run/leap/agent.json" ] && return 0
		kill -0 "$agent_pid" 2>/dev/null || return 1
		sleep 0.5
	done
	return 1
}
# stop_service: the unit's KillSignal, and the exit status.
stop_service()
{
	local sig rc
	sig=$(sed -n 's/^KillSignal=SIG//p' "$M$unit")
	kill -"${sig:-TERM}" "$agent_pid"
	wait "$agent_pid"
	rc=$?
	agent_pid=
	return $rc
}

start_service "$out/agent1.log"
ok $? "the service's agent starts with the shipped config" || diag "$(cat "$out/agent1.log")"
st=$(in_root leap-agent status 2>&1)
echo "$st" >"$out/status1.txt"
like "$(grep '^agent: ' <<<"$st")" "^agent: +pid $agent_pid\$" \
	"leap-agent status sees the running agent (pid $agent_pid)" || diag "$st"
like "$(cat "$out/agent1.log")" 'nothing to watch yet' "... which says it watches nothing yet"
stop_service
is "$?" 0 "SIGTERM stops it, exit 0"

# A cgroup in the config (what an administrator does), then a restart and a
# reload as systemctl would do them.
cg=/sys/fs/cgroup/leap-deb-test
mkdir -p "$cg"
printf '\n[cgroup %s]\nstream = thread\n' "$cg" >>"$M/etc/leap/leap.conf"
start_service "$out/agent2.log"
ok $? "restarted with a [cgroup] section" || diag "$(cat "$out/agent2.log")"
like "$(cat "$out/agent2.log")" 'attached to 1 target' "... it watches that cgroup"
like "$(in_root leap-agent status 2>&1)" "$cg" "status lists the cgroup"
kill -HUP "$agent_pid" # ExecReload
sleep 2
like "$(cat "$out/agent2.log")" 'reloaded /etc/leap/leap.conf' "ExecReload (SIGHUP) reloads the config"
stop_service
is "$?" 0 "stopped, exit 0"
rmdir "$cg"
[ ! -e "$M/sys/fs/bpf/leap" ]
ok $? "no BPF pins left after the stop"

# ---- purge ------------------------------------------------------------------------------
in_root dpkg --purge leap >"$out/dpkg-purge.log" 2>&1
ok $? "dpkg --purge leap" || diag "$(tail -n 20 "$out/dpkg-purge.log")"
in_root dpkg-query -W -f='${Status}' leap >/dev/null 2>&1
isnt "$?" 0 "dpkg no longer knows leap"
left=
while IFS= read -r f; do
	# Directories the package shares with others (/usr/bin, ...) stay.
	[ -d "/$f" ] && continue
	[ -e "$M$f" ] || [ -L "$M$f" ] && left+=" $f"
done <"$out/files.txt"
is "$left" "" "every file of the package is gone"
for p in /etc/leap /usr/share/doc/leap /run/leap /etc/systemd/system/multi-user.target.wants/leap-agent.service; do
	[ ! -e "$M$p" ] && [ ! -L "$M$p" ]
	ok $? "$p is gone"
done
stray=$(cd "$O/upper" && find . -iname '*leap*' | grep -v '^\./run' | head -n 20)
is "$stray" "" "the overlay's upper layer holds nothing naming leap"
pgrep -x leap-agent >/dev/null
isnt "$?" 0 "no leap-agent process left"
done_testing
