# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# The remote swap backend as a fixture (source after tests/lib/fixture.sh
# and fixture_init): leap-memd servers and leap-swapd (FUSE file behind a
# direct-I/O loop device) swapped to at the highest priority, torn down in
# order however the caller ends.  Used by tests/sys/backend-*.t,
# tools/bench-swap.sh --swap backend and tools/demo.sh.
#
#   backend_init                     state under $FX_STATE, teardown registered
#   backend_memd NAME [ADDR] [SIZE]  a leap-memd; sets NAME_pid, NAME_addr
#                                    (BK_MEMD_ARGS: more options, e.g. --delay-us 20)
#   backend_swapd SIZE [ARGS...]     leap-swapd over every server started so far
#                                    (ARGS: -r 2, --cache-pages N, ...), with its
#                                    control socket at $BK_CTL; sets swapd_pid
#   backend_loop                     the loop device over the file (BK_LOOP)
#   backend_swapon                   backend_loop, mkswap, swapon
#   backend_up_for_bench MIB         init, one leap-memd holding every slot of a
#                                    MIB device, leap-swapd with a 4096-page
#                                    prefetch cache, swapon: the benches' and
#                                    demo's set-up
#   backend_ctl "CMD"                one control-socket command, its reply line
#   backend_stat KEY                 one counter of leap-swapd's STATS
#   backend_stats KEY...             several, from one STATS, space-separated
#   backend_teardown                 swapoff, loop detach, daemons, unmount
#
# Safety (docs/backend.md, design.md section 3): the daemons run outside any
# limited cgroup, in their own session (a timeout killing the caller's
# process group must not take them down while swap sits on them); the FUSE
# mount is checked before the loop device is attached (a loop over tmpfs
# wedges the machine); teardown swapoffs first and stops the daemons only if
# swapoff and the loop detach succeeded.

BK_BIN=${BK_BIN:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/bin}

backend_init()
{
	BK_DIR=$FX_STATE
	BK_MNT=$FX_SWAP_DIR/$FX_TAG-mnt
	BK_CTL=$BK_DIR/ctl
	BK_SECRET=$BK_DIR/secret
	BK_SERVERS=()
	case $(stat -f -c %T "$FX_SWAP_DIR") in
	tmpfs | ramfs | overlayfs)
		echo "backend: $FX_SWAP_DIR is memory-backed: refusing" >&2
		return 1
		;;
	esac
	echo "$BK_MNT" >"$BK_DIR/mnt"
	: >"$BK_DIR/daemons"
	head -c 48 /dev/urandom | base64 >"$BK_SECRET"
	chmod 600 "$BK_SECRET"
	fixture_register backend_teardown
}

backend_teardown()
{
	local loop mnt pid i ok=1
	loop=$(cat "$FX_STATE/loop" 2>/dev/null)
	mnt=$(cat "$FX_STATE/mnt" 2>/dev/null)
	if [ -n "$loop" ]; then
		if grep -q "^$loop " /proc/swaps; then
			for i in 1 2 3; do
				swapoff "$loop" && break
				sleep 1
			done
		fi
		if grep -q "^$loop " /proc/swaps; then
			ok=0
		else
			losetup -d "$loop" 2>/dev/null
			for i in 1 2 3 4 5; do
				losetup "$loop" >/dev/null 2>&1 || break
				sleep 0.2
			done
			losetup "$loop" 2>/dev/null | grep -qF "$mnt/" && ok=0
		fi
	fi
	if [ "$ok" = 0 ]; then
		echo "# backend: $loop still in use: leaving leap-swapd and leap-memd" \
			"running (pids in /var/tmp/$FX_TAG-daemons) so its pages stay readable" >&2
		cp "$FX_STATE/daemons" "/var/tmp/$FX_TAG-daemons" 2>/dev/null
		return 1
	fi
	for pid in $(cat "$FX_STATE/daemons" 2>/dev/null); do
		kill -TERM "$pid" 2>/dev/null
	done
	for ((i = 0; i < 50; i++)); do
		pid=
		for pid in $(cat "$FX_STATE/daemons" 2>/dev/null); do
			kill -0 "$pid" 2>/dev/null && break
			pid=
		done
		[ -z "$pid" ] && break
		sleep 0.1
	done
	for pid in $(cat "$FX_STATE/daemons" 2>/dev/null); do
		kill -KILL "$pid" 2>/dev/null
	done
	: >"$FX_STATE/daemons"
	rm -f "$FX_STATE/loop"
	if [ -n "$mnt" ]; then
		mountpoint -q "$mnt" && umount -l "$mnt"
		rmdir "$mnt" 2>/dev/null
	fi
	return 0
}

# Starts leap-memd NAME and sets ${NAME}_pid and ${NAME}_addr (host:port).
backend_memd()
{
	local name=$1 addr=${2:-127.0.0.1:0} size=${3:-320M} i
	rm -f "$BK_DIR/$name.port"
	setsid "$BK_BIN/leap-memd" --size "$size" --listen "$addr" \
		--port-file "$BK_DIR/$name.port" --secret-file "$BK_SECRET" ${BK_MEMD_ARGS:-} \
		</dev/null 2>>"$BK_DIR/$name.log" &
	eval "${name}_pid=$!"
	echo "$!" >>"$BK_DIR/daemons"
	for ((i = 0; i < 50; i++)); do
		[ -s "$BK_DIR/$name.port" ] && break
		sleep 0.1
	done
	[ -s "$BK_DIR/$name.port" ] || {
		echo "backend: leap-memd $name did not start: $(cat "$BK_DIR/$name.log")" >&2
		return 1
	}
	eval "${name}_addr=$(cat "$BK_DIR/$name.port")"
	# The first start of NAME decides the swapd's server list.
	[[ " ${BK_SERVERS[*]} " == *" $name "* ]] || BK_SERVERS+=("$name")
}

backend_swapd()
{
	local size=$1 i name
	shift
	local -a srv=()
	for name in "${BK_SERVERS[@]}"; do
		srv+=(-s "$(eval echo "\$${name}_addr")")
	done
	mkdir -p "$BK_MNT" || return 1
	setsid "$BK_BIN/leap-swapd" --mount "$BK_MNT" --size "$size" "${srv[@]}" \
		--retry-ms 1000 --secret-file "$BK_SECRET" --control "$BK_CTL" "$@" \
		</dev/null 2>"$BK_DIR/swapd.log" &
	swapd_pid=$!
	echo "$swapd_pid" >>"$BK_DIR/daemons"
	for ((i = 0; i < 50; i++)); do
		[ "$(stat -f -c %T "$BK_MNT" 2>/dev/null)" = fuseblk ] && [ -f "$BK_MNT/swap" ] &&
			[ -S "$BK_CTL" ] && break
		sleep 0.1
	done
	[ "$(stat -f -c %T "$BK_MNT" 2>/dev/null)" = fuseblk ] && mountpoint -q "$BK_MNT" || {
		echo "backend: leap-swapd did not mount $BK_MNT: $(cat "$BK_DIR/swapd.log")" >&2
		return 1
	}
}

backend_loop()
{
	# Direct I/O: no page-cache copy of swapped pages.
	BK_LOOP=$(losetup --direct-io=on --show -f "$BK_MNT/swap") || return 1
	echo "$BK_LOOP" >"$BK_DIR/loop"
}

backend_swapon()
{
	backend_loop || return 1
	mkswap -q "$BK_LOOP" >/dev/null || return 1
	swapon -p 32767 "$BK_LOOP"
}

backend_up_for_bench()
{
	local mib=$1
	# The server holds every slot the device has (no discard on this path).
	backend_init && backend_memd A 127.0.0.1:0 $((mib + 64))M &&
		backend_swapd "${mib}M" --cache-pages 4096 && backend_swapon
}

backend_ctl()
{
	timeout -k 5 20 python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n"); print(s.makefile().readline().strip())' "$BK_CTL" "$1"
}

backend_stat()
{
	backend_ctl STATS | tr ' ' '\n' | sed -n "s/^$1=//p"
}

backend_stats()
{
	backend_ctl STATS | tr ' ' '\n' | awk -F= -v keys="$*" '
		{ v[$1] = $2 }
		END { n = split(keys, k, " "); for (i = 1; i <= n; i++) printf "%s%s", v[k[i]], (i < n ? " " : "\n") }'
}
