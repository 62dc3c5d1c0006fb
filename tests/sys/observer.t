#!/usr/bin/env bash
# leap-timeout: 20
# SPDX-License-Identifier: MIT
# System test of the BPF observer (bpf/leap_observer.bpf.c, user/observer.c)
# through bin/leap-observe.  Needs root.  Sets up its own swap file on the
# root filesystem, a cgroup v1 memory limit and a cgroup v2 directory, runs
# a small page-touching program (tests/sys/helpers/leap-touch.c) that swaps,
# and checks what the observer reports.  Tears everything down on exit.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
OBS=$root/bin/leap-observe
TOUCH=$root/.output/sys-helpers/leap-touch
PIN=/sys/fs/bpf/leap
BPFTOOL=$(command -v bpftool || echo /usr/sbin/bpftool)

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root (loads BPF, sets up swap and cgroups)"
	exit 0
fi
for f in "$OBS" "$TOUCH"; do
	[ -x "$f" ] || { echo "Bail out! $f is not built (run make)"; exit 1; }
done
[ -d /sys/fs/cgroup/memory ] || { echo "1..0 # SKIP no cgroup v1 memory controller"; exit 0; }
cg2root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
[ -n "$cg2root" ] || { echo "1..0 # SKIP no cgroup2 mount"; exit 0; }

tag=leap-obs-$$
SWAP=/var/tmp/$tag.swap
MEMCG=/sys/fs/cgroup/memory/$tag
CG2=$cg2root/$tag
TMP=$(mktemp -d /tmp/$tag.XXXXXX)
pids=()

cleanup() {
	local p
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	# Pins a killed observer of ours left behind; never a live owner's.
	if [ -d "$PIN" ] && [ -n "${pin_was_ours:-}" ] && ! pin_owner_alive; then
		rm -f "$PIN"/* 2>/dev/null
		rmdir "$PIN" 2>/dev/null
	fi
	if grep -q "^$SWAP " /proc/swaps 2>/dev/null; then swapoff "$SWAP"; fi
	rm -f "$SWAP"
	[ -d "$MEMCG" ] && rmdir "$MEMCG" 2>/dev/null
	[ -d "$CG2" ] && rmdir "$CG2" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $*"; return 1; }
check() {
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else nok "$desc"; fi
}
diag() { sed 's/^/# /' "$@" | head -n 40; }

# The pid in the pinned owner record, if that process is alive.
pin_owner_alive() {
	owner_pid=$("$BPFTOOL" -j map dump pinned "$PIN/owner" 2>/dev/null |
		sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' | head -n 1)
	[ -n "$owner_pid" ] && kill -0 "$owner_pid" 2>/dev/null
}

# Never step on a live observer or agent that owns the pins.
if [ -d "$PIN" ] && pin_owner_alive; then
	echo "1..0 # SKIP a leap observer (pid $owner_pid) is running and owns $PIN"
	exit 0
fi
pin_was_ours=1

echo "1..26"

# ---- set-up: swap file, memcg limit, cgroup v2 dir ---------------------------
setup_ok=1
{
	fallocate -l 512M "$SWAP" && chmod 600 "$SWAP" && mkswap "$SWAP" >/dev/null &&
		swapon "$SWAP"
} 2>"$TMP/setup.err" || setup_ok=0
if [ $setup_ok = 1 ]; then
	mkdir "$MEMCG" && echo $((48 << 20)) >"$MEMCG/memory.limit_in_bytes" &&
		mkdir "$CG2" || setup_ok=0
fi
if [ $setup_ok = 0 ]; then
	echo "Bail out! cannot set up swap/cgroups: $(head -c 300 "$TMP/setup.err")"
	exit 1
fi

# Starts leap-touch inside both cgroups; sets $touch_pid, output in $TMP/$1.
start_touch() {
	local out=$1
	shift
	sh -c 'echo $$ >"$1/cgroup.procs" && echo $$ >"$2/cgroup.procs" && shift 2 && exec "$@"' \
		sh "$MEMCG" "$CG2" "$TOUCH" "$@" >"$TMP/$out" 2>&1 &
	touch_pid=$!
	pids+=("$touch_pid")
}

# Waits (up to $3 s) until file $1 contains a line matching $2.
wait_for() {
	local i
	for ((i = 0; i < $3 * 20; i++)); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# Starts leap-observe with the given args; sets $obs_pid; output $TMP/$1.{out,err}.
start_obs() {
	local name=$1
	shift
	"$OBS" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	obs_pid=$!
	pids+=("$obs_pid")
	if ! wait_for "$TMP/$name.err" "attached" 30; then
		diag "$TMP/$name.err"
		return 1
	fi
}

# Waits for a process with a deadline; returns its exit status (124 on timeout).
wait_pid() {
	local pid=$1 limit=$2 i
	for ((i = 0; i < limit * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid"
		wait "$pid" 2>/dev/null
		return 124
	fi
	wait "$pid"
}

field() { # field NAME FILE: value of NAME=... on the summary line
	sed -n "s/^# summary:.* $1=\([0-9]*\).*/\1/p" "$2" | tail -n 1
}

# ---- 1-4: clear errors ----------------------------------------------------------
sh -c 'exit 0' &
dead=$!
wait $dead
"$OBS" --pid "$dead" --duration 1 >"$TMP/dead.out" 2>"$TMP/dead.err"
rc=$?
check "a dead pid is refused (exit $rc)" test $rc -ne 0
check "... with a clear message" grep -q "pid $dead: no such process" "$TMP/dead.err" ||
	diag "$TMP/dead.err"

"$OBS" --cgroup "$cg2root/no-such-cgroup-$$" --duration 1 >"$TMP/nocg.out" 2>"$TMP/nocg.err"
rc=$?
check "an unknown cgroup path is refused with a clear message (exit $rc)" \
	sh -c "[ $rc -ne 0 ] && grep -q 'no-such-cgroup-$$: No such file or directory' '$TMP/nocg.err'" ||
	diag "$TMP/nocg.err"

"$OBS" --cgroup "$MEMCG" --duration 1 >"$TMP/v1cg.out" 2>"$TMP/v1cg.err"
rc=$?
check "a cgroup v1 directory is refused as not cgroup2 (exit $rc)" \
	sh -c "[ $rc -ne 0 ] && grep -q 'not a cgroup2 directory' '$TMP/v1cg.err'" ||
	diag "$TMP/v1cg.err"

# ---- 5: forcing the fentry hooks ---------------------------------------------------
"$OBS" --hook fentry --pid $$ --duration 0.2 --quiet >"$TMP/fentry.out" 2>"$TMP/fentry.err"
rc=$?
if [ $rc -eq 0 ]; then
	check "--hook fentry works on this kernel" grep -q "hook=fentry" "$TMP/fentry.out"
else
	check "--hook fentry fails cleanly where trampolines are refused" \
		grep -q "fentry hooks are not available on this kernel" "$TMP/fentry.err" ||
		diag "$TMP/fentry.err"
fi
check "no pins left after that" test ! -e "$PIN"

# ---- main run: cgroup target, events, major faults, live pinned stats ----------------
start_touch touch1.out 96 3 "$TMP/go1"
wait_for "$TMP/touch1.out" filled 120 || diag "$TMP/touch1.out"
start_obs main --cgroup "$CG2" --hook auto --prog-stats
hook=$(sed -n 's/.*attached, hook=\([a-z]*\).*/\1/p' "$TMP/main.err")
touch "$TMP/go1"
wait_pid "$touch_pid" 120
rc=$?
check "the workload ran (exit $rc)" test $rc -eq 0

# A second instance told to pin in the same directory must refuse while
# the first owns it (without --pin-dir it pins in one of its own, below).
"$OBS" --cgroup "$CG2" --duration 1 --pin-dir "$PIN" >"$TMP/second.out" 2>"$TMP/second.err"
rc=$?
check "a second observer is refused the pins of a live one (exit $rc)" \
	sh -c "[ $rc -ne 0 ] && grep -q 'in use by another leap observer (pid $obs_pid)' '$TMP/second.err'" ||
	diag "$TMP/second.err"

check "stats, cgroups, pids and owner are pinned under $PIN" \
	test -e "$PIN/stats" -a -e "$PIN/cgroups" -a -e "$PIN/pids" -a -e "$PIN/owner"
"$BPFTOOL" map dump pinned "$PIN/stats" >"$TMP/dump.txt" 2>&1
check "bpftool map dump pinned $PIN/stats prints named fields" \
	grep -q '"events_dropped":' "$TMP/dump.txt" || diag "$TMP/dump.txt"
check "... with nonzero faults for our slot" grep -Eq '"faults": [1-9]' "$TMP/dump.txt"
check "... and our cgroup id in the slot" \
	grep -Eq "\"cgroup_id\": $(stat -c %i "$CG2")," "$TMP/dump.txt"

kill -INT "$obs_pid"
wait_pid "$obs_pid" 30
rc=$?
check "leap-observe exits 0 on SIGINT (exit $rc)" test $rc -eq 0 || diag "$TMP/main.err"
check "pins and pin directory are gone after exit" test ! -e "$PIN"
grep '^# prog' "$TMP/main.err" # BPF run time per program, for the record

tp=$touch_pid
events=$(grep -cE '^[0-9]+\.[0-9]+ ' "$TMP/main.out")
wrong=$(awk -v p="$tp" '/^[0-9]+\.[0-9]+ / && $2 != p { n++ } END { print n + 0 }' "$TMP/main.out")
majors=$(awk '/^[0-9]+\.[0-9]+ / && $7 ~ /^M/ { n++ } END { print n + 0 }' "$TMP/main.out")
check "events arrived ($events, hook=$hook)" test "$events" -gt 1000
check "all of them from the workload's tgid $tp ($wrong others)" test "$wrong" -eq 0
check "major (swap-in miss) events appear ($majors)" test "$majors" -gt 0
top_delta=$(awk '/^[0-9]+\.[0-9]+ / { c[$5]++ } END { for (d in c) if (c[d] > m) { m = c[d]; t = d } print t }' \
	"$TMP/main.out")
check "a sequential scan shows delta +1 most often (top delta: $top_delta)" test "$top_delta" = 1
sum_events=$(field events "$TMP/main.out")
sum_faults=$(field faults "$TMP/main.out")
sum_miss=$(field swapin_misses "$TMP/main.out")
check "summary counts match (events=$sum_events lines=$events faults=$sum_faults misses=$sum_miss)" \
	sh -c "[ '$sum_events' = '$events' ] && [ '${sum_faults:-0}' -ge '$events' ] && [ '${sum_miss:-0}' -ge '$majors' ]"

# ---- pid target, JSON, per-thread deltas; exits by itself when the pid is gone ----
start_touch touch2.out 64 2 "$TMP/go2" 2
wait_for "$TMP/touch2.out" filled 120 || diag "$TMP/touch2.out"
start_obs pid --pid "$touch_pid" --json --thread-deltas
touch "$TMP/go2"
wait_pid "$touch_pid" 120
wait_pid "$obs_pid" 30
rc=$?
tids=$(grep -o '"tid":[0-9]*' "$TMP/pid.out" | sort -u | wc -l)
tg_bad=$(grep '"tgid":' "$TMP/pid.out" | grep -vc "\"tgid\":$touch_pid,")
check "pid target: leap-observe ends with its process, exit 0 ($rc)" test $rc -eq 0 ||
	diag "$TMP/pid.err"
check "pid target: JSON events from the right tgid, both worker threads seen ($tids tids, $tg_bad wrong)" \
	sh -c "[ $tids -ge 2 ] && [ $tg_bad -eq 0 ] && grep -q '\"summary\":' '$TMP/pid.out'"

# ---- faults the kernel takes on user memory inside syscalls are seen too ------------
start_touch touch4.out 64 1 "$TMP/go4" 1 syscall
wait_for "$TMP/touch4.out" filled 120 || diag "$TMP/touch4.out"
start_obs sys --pid "$touch_pid" --quiet
touch "$TMP/go4"
wait_pid "$touch_pid" 120
wait_pid "$obs_pid" 30
rc=$?
sys_events=$(field events "$TMP/sys.out")
sys_major=$(field swapin_misses "$TMP/sys.out")
check "syscall copies from swapped-out memory: events ${sys_events:-none}, misses ${sys_major:-none} (exit $rc)" \
	sh -c "[ $rc -eq 0 ] && [ '${sys_events:-0}' -gt 1000 ] && [ '${sys_major:-0}' -gt 0 ]" ||
	diag "$TMP/sys.err" "$TMP/sys.out"

# ---- tiny ring and a slow reader: drops are counted, nothing breaks -----------------
start_touch touch3.out 96 2 "$TMP/go3"
wait_for "$TMP/touch3.out" filled 120 || diag "$TMP/touch3.out"
start_obs tiny --cgroup "$CG2" --ring-size 4096 --poll-interval 300 --quiet
touch "$TMP/go3"
wait_pid "$touch_pid" 120
kill -TERM "$obs_pid"
wait_pid "$obs_pid" 30
rc=$?
dropped=$(field events_dropped "$TMP/tiny.out")
check "tiny ring: exit 0 on SIGTERM ($rc) and events_dropped counted (${dropped:-none})" \
	sh -c "[ $rc -eq 0 ] && [ '${dropped:-0}' -gt 0 ]" || diag "$TMP/tiny.err" "$TMP/tiny.out"

# ---- a crashed observer's pins are stale: the next one removes them -------------------
start_obs crash --cgroup "$CG2"
kill -KILL "$obs_pid"
wait "$obs_pid" 2>/dev/null
stale=no
[ -e "$PIN/stats" ] && stale=yes
"$OBS" --cgroup "$CG2" --duration 0.5 --quiet >"$TMP/after.out" 2>"$TMP/after.err"
rc=$?
check "after a SIGKILL (pins left: $stale) the next observer starts (exit $rc) and cleans up" \
	sh -c "[ $rc -eq 0 ] && [ ! -e '$PIN' ]" || diag "$TMP/after.err"

# ---- beside a running agent (which owns $PIN), leap-observe pins elsewhere ----------
AGENT=$root/bin/leap-agent
"$AGENT" attach --keep-running >"$TMP/agent.out" 2>"$TMP/agent.err" &
agent_pid=$!
pids+=("$agent_pid")
wait_for "$TMP/agent.err" "attached" 30 || diag "$TMP/agent.err"
start_touch touch5.out 96 1 "$TMP/go5"
wait_for "$TMP/touch5.out" filled 120 || diag "$TMP/touch5.out"
start_obs beside --pid "$touch_pid" --quiet
own=$PIN-observe-$obs_pid
pinned=no
[ -e "$own/stats" ] && [ -e "$PIN/stats" ] && pinned=yes
touch "$TMP/go5"
wait_pid "$touch_pid" 120
wait_pid "$obs_pid" 30
rc=$?
check "leap-observe runs beside an agent (exit $rc, events $(field events "$TMP/beside.out"))" \
	sh -c "[ $rc -eq 0 ] && [ '$(field events "$TMP/beside.out")' -gt 0 ] && grep -q 'belongs to a running agent' '$TMP/beside.err'" ||
	diag "$TMP/beside.err"
check "... pinning under $own while the agent keeps $PIN (pinned: $pinned), removed after" \
	sh -c "[ $pinned = yes ] && [ ! -e '$own' ]"
kill -INT "$agent_pid"
wait_pid "$agent_pid" 30

[ "$n" -eq 26 ] || echo "# planned 26 tests, ran $n"
exit $((fails > 0))
