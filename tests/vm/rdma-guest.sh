#!/bin/sh
# shellcheck shell=bash
# shellcheck disable=SC2154 # NAME_pid and NAME_addr are set by the start functions (eval)
# SPDX-License-Identifier: MIT
# tests/vm/rdma-guest.sh REPO all|latency|bench VM_CACHE [LATENCY [SWAPD_ARGS]]
# (bench: [FOOTPRINT LIMIT REPS COMPUTE_NS]): runs inside a tests/vm/boot.sh
# guest (it needs soft-RoCE, which the host kernel lacks).  Creates an rxe
# device over a dummy netdev, then with MODE all (tests/sys/guest-6.1.t, part rdma):
# leap-memd A and B and leap-swapd with --transport rdma (r = 2), real swap
# through them with leap-workload (self-verifying: exit 3 on a wrong page):
# seq, seq with the prefetch path (a pagemap oracle pushing PREFETCH to the
# control socket), stride:16 with B SIGKILLed mid-run, B restarted empty and
# refilled then A killed; the access gate, authentication and registration
# counters; with LATENCY 1 then the page-in latency of RDMA against
# TCP (MODE latency does only that).  MODE bench: leap-workload rows b, c, e
# over RDMA and over TCP (tests/vm/rdma-bench.sh, `make bench-rdma`).
# Writes TAP lines to /run/leapvm/rdma.tap and the latency line to
# /run/leapvm/latency.txt; the host turns them into its own TAP.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
repo=$1 mode=${2:-all} vm_cache=${3:-$1/tests/vm/cache} with_latency=${4:-0}
# Extra leap-swapd options (LEAP_RDMA_T_SWAPD_ARGS, e.g. "--reg-cache mrrc").
read -r -a swapd_extra <<<"${5:-}"
# MODE bench: FOOTPRINT LIMIT REPS COMPUTE_NS instead of LATENCY SWAPD_ARGS.
if [ "$mode" = bench ]; then
	BENCH_FOOT=${4:-32M} BENCH_LIMIT=${5:-16M} BENCH_REPS=${6:-3} BENCH_COMPUTE_NS=${7:-250000}
	swapd_extra=()
fi
B=$repo/bin
out=${LEAPVM_OUT:-/run/leapvm} # where the TAP and the logs go
tap=$out/rdma.tap
: >"$tap"
n=0
t()
{
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi >>"$tap"
	[ "$1" = 0 ]
}
note() { echo "# $*" >>"$tap"; }
log() { echo "rdma-guest: $*" >&2; }

tmp=/tmp/leap-rdma
mkdir -p "$tmp"
pids=()
loop=
cleanup()
{
	if [ -n "$loop" ]; then
		swapoff "$loop" 2>/dev/null
		losetup -d "$loop" 2>/dev/null
	fi
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	for m in "$tmp"/mnt*; do mountpoint -q "$m" 2>/dev/null && umount -l "$m"; done
	guest_rxe_down
}
trap cleanup EXIT

# ---- soft-RoCE over a dummy netdev --------------------------------------------
# (tests/vm/guest-rxe.sh)
# shellcheck source=tests/vm/guest-rxe.sh
. "$repo/tests/vm/guest-rxe.sh"
guest_rxe_up "$vm_cache"
t $? "soft-RoCE: rxe0 over a dummy netdev ($RXE_IP) on $(uname -r)" || exit 1
IP=$RXE_IP

head -c 48 /dev/urandom | base64 >"$tmp/secret"
chmod 600 "$tmp/secret"
head -c 48 /dev/urandom | base64 >"$tmp/other"
chmod 600 "$tmp/other"

# start_memd NAME TRANSPORT LISTEN: sets NAME_addr and NAME_pid.
start_memd()
{
	local name=$1 tr=$2 addr=$3 i
	rm -f "$tmp/$name.port"
	"$B/leap-memd" --transport "$tr" --size 160M --listen "$addr" \
		--port-file "$tmp/$name.port" --secret-file "$tmp/secret" \
		</dev/null 2>>"$tmp/$name.log" &
	eval "${name}_pid=$!"
	pids+=($!)
	for ((i = 0; i < 300; i++)); do
		[ -s "$tmp/$name.port" ] && break
		kill -0 "$!" 2>/dev/null || break
		sleep 0.1
	done
	eval "${name}_addr=$(cat "$tmp/$name.port" 2>/dev/null)"
	[ -s "$tmp/$name.port" ]
}
stat_of() # SERVER-ADDR NAME [TRANSPORT]
{
	"$B/leap-memctl" -t "${3:-rdma}" -k "$tmp/secret" -s "$1" stats 2>/dev/null |
		awk -v k="$2" '$2 == k {print $3}'
}

# start_swapd NAME TRANSPORT SERVER...: FUSE file at $tmp/mntNAME/swap.
start_swapd()
{
	local name=$1 tr=$2 i args=()
	shift 2
	for s in "$@"; do args+=(-s "$s"); done
	[ $# -ge 2 ] && args+=(-r 2)
	mkdir -p "$tmp/mnt$name"
	"$B/leap-swapd" --transport "$tr" --mount "$tmp/mnt$name" --size 128M "${args[@]}" \
		--retry-ms 1000 --secret-file "$tmp/secret" --control "$tmp/ctl$name" \
		--cache-pages 4096 "${swapd_extra[@]}" </dev/null 2>"$tmp/swapd$name.log" &
	eval "swapd${name}_pid=$!"
	pids+=($!)
	for ((i = 0; i < 100; i++)); do
		[ "$(stat -f -c %T "$tmp/mnt$name" 2>/dev/null)" = fuseblk ] &&
			[ -f "$tmp/mnt$name/swap" ] && return 0
		sleep 0.1
	done
	return 1
}
send_ctl() # NAME COMMAND
{
	timeout -k 5 20 python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n"); print(s.makefile().readline().strip())' "$tmp/ctl$1" "$2"
}
ctl_stat() { send_ctl "$1" STATS | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# ---- page-in latency, RDMA vs TCP ----------------------------------------------
# 4K O_DIRECT reads at random slots of the FUSE file (what a swap-in costs
# the backend), each path with its own leap-memd and leap-swapd, measured
# alternately, slot by slot, so both see the same machine.  TCG: only the ratio
# means anything.
latency()
{
	start_memd LR rdma "$IP:0" && start_memd LT tcp 127.0.0.1:0 || {
		t 1 "latency: servers started"
		return
	}
	start_swapd lr rdma "$LR_addr" && start_swapd lt tcp "$LT_addr" || {
		t 1 "latency: leap-swapd started"
		return
	}
	for x in lr lt; do
		dd if=/dev/urandom of="$tmp/mnt$x/swap" bs=1M count=16 oflag=direct \
			conv=notrunc status=none
	done
	lat=$(timeout -k 5 300 python3 - "$tmp/mntlr/swap" "$tmp/mntlt/swap" <<'PY'
import mmap, os, random, sys, time
fds = [os.open(p, os.O_RDONLY | os.O_DIRECT) for p in sys.argv[1:3]]
buf = mmap.mmap(-1, 4096)
random.seed(1)
v = [[], []]
# One slot through each path in turn (order alternating), so both see the
# same load on a shared machine.
for i, s in enumerate(random.sample(range(4096), 500)):
    for k in ((0, 1) if i % 2 else (1, 0)):
        t = time.perf_counter_ns(); os.preadv(fds[k], [buf], s * 4096)
        v[k].append((time.perf_counter_ns() - t) / 1000)
def q(x, p): x = sorted(x); return x[min(len(x) - 1, len(x) * p // 100)]
r50, r99, t50, t99 = q(v[0], 50), q(v[0], 99), q(v[1], 50), q(v[1], 99)
print("rdma_p50_us=%.1f rdma_p99_us=%.1f tcp_p50_us=%.1f tcp_p99_us=%.1f "
      "ratio_p50=%.2f ratio_p99=%.2f samples=%d" %
      (r50, r99, t50, t99, r50 / t50, r99 / t99, len(v[0])))
PY
)
	# memclient alone (leap-memctl stress: single-page READs, one client).
	mc=
	for x in LR:rdma LT:tcp; do
		a=${x%%:*}_addr
		r=$("$B/leap-memctl" -t "${x#*:}" -k "$tmp/secret" -s "${!a}" -d 9 -n 2048 \
			--seconds 3 --write-pct 0 stress 2>&1 | grep '^stress')
		mc+=" memctl_${x#*:}_p50_us=$(echo "$r" | sed -n 's/.*read_p50_us=\([0-9.]*\).*/\1/p')"
		mc+=" memctl_${x#*:}_p99_us=$(echo "$r" | sed -n 's/.*read_p99_us=\([0-9.]*\).*/\1/p')"
	done
	lat="$lat$mc"
	echo "$lat" >"$out/latency.txt"
	case $lat in
	rdma_p50_us=*) t 0 "page-in latency (rdma vs tcp): $lat" ;;
	*) t 1 "page-in latency measured" ;;
	esac
	note "rdma swapd: $(send_ctl lr STATS)"
}

# ---- leap-workload rows over RDMA and over TCP ----------------------------------
# bench-backend's comparison in the guest: for each transport its own
# leap-memd and leap-swapd (one server, defaults), swap on a direct-I/O loop
# device over the FUSE file, and seq and stride:16 over BENCH_FOOT in
# BENCH_LIMIT, BENCH_COMPUTE_NS of work per page (TCG makes the agent late
# for a tight loop: docs/vm.md), for the rows b (Linux readahead: a cgroup2 memory.max, no
# agent), c (leap-agent run, process_madvise, its defaults) and e (backend
# mode, --backend: its defaults), interleaved and rotated over BENCH_REPS.
# One line per run in /run/leapvm/bench.txt.  rxe talks to itself without
# the netdev (no netem): RTT 0 only.  TCG: only ratios mean anything.
bench()
{
	local foot=${BENCH_FOOT:-32M} limit=${BENCH_LIMIT:-16M} reps=${BENCH_REPS:-3}
	local compute=${BENCH_COMPUTE_NS:-250000}
	local tr srv addr lp rep k wl row wall maj rc nr=0
	local -a rows=(b c e) extra
	: >"$out/bench.txt"
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
	for tr in rdma tcp; do
		srv=M$tr
		[ "$tr" = rdma ] && addr=$IP:0 || addr=127.0.0.1:0
		start_memd "$srv" "$tr" "$addr" || {
			t 1 "bench: leap-memd over $tr started"
			return
		}
		addr=$(eval echo "\$${srv}_addr")
		start_swapd "b$tr" "$tr" "$addr" || {
			t 1 "bench: leap-swapd over $tr started"
			return
		}
		lp=$(losetup --direct-io=on --show -f "$tmp/mntb$tr/swap") &&
			mkswap -q "$lp" >/dev/null && swapon -p 32767 "$lp" || {
			t 1 "bench: swap on leap-swapd over $tr"
			return
		}
		loop=$lp
		for ((rep = 1; rep <= reps; rep++)); do
			for wl in seq stride:16; do
				for ((k = 0; k < ${#rows[@]}; k++)); do
					row=${rows[(k + rep - 1) % ${#rows[@]}]}
					local -a cmd=("$B/leap-workload" --pattern "$wl" \
						--footprint "$foot" --compute-ns "$compute" --json)
					case $row in
					b)
						nr=$((nr + 1))
						mkdir -p "/sys/fs/cgroup/leapbench$nr"
						echo "$limit" >"/sys/fs/cgroup/leapbench$nr/memory.max"
						timeout -k 5 600 sh -c \
							'echo $$ >"$0/cgroup.procs" && exec "$@"' \
							"/sys/fs/cgroup/leapbench$nr" "${cmd[@]}" \
							>"$tmp/bench.out" 2>"$tmp/bench.err"
						rc=$?
						rmdir "/sys/fs/cgroup/leapbench$nr" 2>/dev/null
						;;
					*)
						extra=()
						[ "$row" = e ] && extra=(--backend "$tmp/ctlb$tr"
							--backend-dev "$lp")
						timeout -k 5 600 "$B/leap-agent" run --memory-limit "$limit" \
							"${extra[@]}" -- "${cmd[@]}" \
							>"$tmp/bench.out" 2>"$tmp/bench.err"
						rc=$?
						;;
					esac
					wall=$(grep -o '"wall_s": *[0-9.]*' "$tmp/bench.out" | tail -n 1 |
						grep -o '[0-9.]*$')
					maj=$(grep -o '"majflt": *[0-9]*' "$tmp/bench.out" | tail -n 1 |
						grep -o '[0-9]*$')
					echo "transport=$tr workload=$wl row=$row rep=$rep rc=$rc" \
						"wall_s=${wall:-} majflt=${maj:-}" >>"$out/bench.txt"
					[ "$rc" = 0 ] && [ -n "$wall" ] || {
						t 1 "bench: $tr $wl row $row rep $rep (exit $rc)"
						note "$(tail -n 5 "$tmp/bench.err")"
					}
				done
			done
		done
		swapoff "$lp" && losetup -d "$lp"
		loop=
		eval "kill \$swapdb${tr}_pid \$${srv}_pid"
		sleep 0.5
		umount -l "$tmp/mntb$tr" 2>/dev/null
	done
	t 0 "bench: $(grep -c 'rc=0' "$out/bench.txt") runs over RDMA and TCP"
}

if [ "$mode" = latency ]; then
	latency
	exit 0
fi
if [ "$mode" = bench ]; then
	bench
	exit 0
fi

# ---- servers, authentication, registration ----------------------------------
start_memd A rdma "$IP:0"
t $? "leap-memd A --transport rdma listens on $A_addr" || {
	note "$(cat "$tmp/A.log")"
	exit 1
}
start_memd B rdma "$IP:0"
t $? "leap-memd B --transport rdma listens on $B_addr" || exit 1
"$B/leap-memd" --transport rdma --size 1M --listen 127.0.0.1:0 --secret-file "$tmp/secret" \
	2>"$tmp/lo.log"
rc=$?
[ "$rc" = 1 ] && grep -q "not an address of an RDMA device" "$tmp/lo.log"
t $? "an address without an RDMA device is refused clearly (exit $rc: $(cat "$tmp/lo.log"))"

# The server proves the secret first: a client with another one refuses
# it before sending anything, and the server never grants it access.
"$B/leap-memctl" -t rdma -k "$tmp/other" -s "$A_addr" stats >/dev/null 2>"$tmp/bad.log"
rc=$?
[ "$rc" != 0 ] && grep -q "does not know the secret" "$tmp/bad.log"
t $? "a client with another secret gets nothing over RDMA (exit $rc, refused the server)"

# The access gate: with the rkey and address an authenticated client got,
# connections that did not authenticate can neither read nor write.
"$repo/.output/sys-helpers/leap-rdma-gate" "$A_addr" "$tmp/secret" >"$tmp/gate.out" 2>&1
t $? "one-sided access only after AUTH: $(tr '\n' ';' <"$tmp/gate.out")"

"$B/leap-memctl" -t rdma -k "$tmp/secret" -s "$A_addr" -d 77 -n 2048 fill >"$tmp/fill.out" 2>&1 &&
	"$B/leap-memctl" -t rdma -k "$tmp/secret" -s "$A_addr" -d 77 -n 2048 verify \
		>"$tmp/verify.out" 2>&1
t $? "memclient over RDMA: 2048 pages filled and verified from separate processes" ||
	note "$(cat "$tmp/fill.out" "$tmp/verify.out")"
# Several QPs per server (--conns, default 2: lanes, one request each at a
# time): four threads of reads and rewrites at once, every read verified,
# two lanes busy at once at peak; with --conns 1 never more than one.
for conns in 2 1; do
	"$B/leap-memctl" -t rdma -k "$tmp/secret" -s "$A_addr" -d $((80 + conns)) -n 2048 \
		--conns "$conns" --threads 4 --seconds 3 --write-pct 30 stress \
		>"$tmp/lanes$conns.out" 2>&1
	rc=$?
	pk=$(sed -n 's/.*peak_inflight=\([0-9]*\).*/\1/p' "$tmp/lanes$conns.out")
	bad=$(sed -n 's/^stress .*corrupt=\([0-9]*\).*/\1/p' "$tmp/lanes$conns.out")
	ops=$(sed -n 's/^stress ops=\([0-9]*\).*/\1/p' "$tmp/lanes$conns.out")
	[ "$rc" = 0 ] && [ "${bad:-x}" = 0 ] && [ "${pk:-0}" = "$conns" ]
	t $? "--conns $conns over RDMA: 4 threads, $ops ops, corrupt=$bad, peak lanes in use $pk (exit $rc)" ||
		note "$(cat "$tmp/lanes$conns.out")"
done
pw=$(stat_of "$A_addr" pages_written)
pm=$(stat_of "$A_addr" pages_mapped)
[ "${pw:-x}" = 0 ] && [ "${pm:-0}" -ge 2048 ]
t $? "pages moved one-sided: no page through the stream (pages_written=$pw), $pm mapped"
regs=$(stat_of "$A_addr" mr_regs)
bytes=$(stat_of "$A_addr" mr_bytes)
[ "${regs:-0}" -ge 2 ] && [ "${bytes:-0}" -ge $((160 << 20)) ]
t $? "STATS counts registrations: mr_regs=$regs mr_bytes=$bytes (the store once, buffers pooled)"

# ---- real swap over RDMA --------------------------------------------------------
start_swapd s rdma "$A_addr" "$B_addr"
t $? "leap-swapd --transport rdma serves $tmp/mnts/swap (r = 2)" || {
	note "$(cat "$tmp/swapds.log")"
	exit 1
}
# The FUSE mount must be there before a loop device goes on it (a loop
# over tmpfs wedges the machine).
[ "$(stat -f -c %T "$tmp/mnts")" = fuseblk ] || exit 1

# Discard with two lanes: single-page reads alternate between the lanes, so
# both learn where pages X live; a punched hole frees X on both servers;
# new pages Y may then get X's old slots, and X is written again.  A lane
# that kept X's old answer would write X over Y.
f=$tmp/mnts/swap
for x in x1 y1 x2; do head -c $((64 * 4096)) /dev/urandom >"$tmp/$x"; done
fr0=$(stat_of "$A_addr" pages_freed)
dd if="$tmp/x1" of="$f" bs=4096 seek=1000 oflag=direct conv=notrunc status=none &&
	dd if="$f" of=/dev/null bs=4096 skip=1000 count=64 iflag=direct status=none &&
	fallocate -p -o $((1000 * 4096)) -l $((64 * 4096)) "$f" &&
	dd if="$tmp/y1" of="$f" bs=4096 seek=3000 oflag=direct conv=notrunc status=none &&
	dd if="$tmp/x2" of="$f" bs=4096 seek=1000 oflag=direct conv=notrunc status=none &&
	dd if="$f" of="$tmp/x2.back" bs=4096 skip=1000 count=64 iflag=direct status=none &&
	dd if="$f" of="$tmp/y1.back" bs=4096 skip=3000 count=64 iflag=direct status=none &&
	cmp -s "$tmp/x2" "$tmp/x2.back" && cmp -s "$tmp/y1" "$tmp/y1.back"
t $? "discard over RDMA with two lanes: pages freed, rewritten, and pages written since intact"
fr=$(($(stat_of "$A_addr" pages_freed) - fr0))
[ "$fr" = 64 ]
t $? "leap-memd A freed the 64 punched pages ($fr)"

loop=$(losetup --direct-io=on --show -f "$tmp/mnts/swap") || exit 1
mkswap -q "$loop" >/dev/null && swapon -p 32767 "$loop"
t $? "swap on $loop (direct I/O) over leap-swapd over RDMA (at ${SECONDS} s of the part)" || exit 1

echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
cg=0
# Small enough for TCG (~10 s a run), three times the memcg so most of it
# is in swap at any time.
FOOT=${LEAP_RDMA_FOOTPRINT:-36M} MEMCG=${LEAP_RDMA_MEMCG:-12M}
# start_wl PATTERN TAG [workload args]: in a new memcg; sets wl_pid.
start_wl()
{
	local pat=$1 tag=$2
	shift 2
	cg=$((cg + 1))
	mkdir -p "/sys/fs/cgroup/leaprdma$cg"
	echo "$MEMCG" >"/sys/fs/cgroup/leaprdma$cg/memory.max"
	timeout -k 5 400 sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' \
		"/sys/fs/cgroup/leaprdma$cg" "$B/leap-workload" --pattern "$pat" \
		--footprint "$FOOT" "$@" >"$tmp/wl-$tag.out" 2>"$tmp/wl-$tag.err" &
	wl_pid=$!
}
# The workload itself (timeout's child), for the pagemap oracle.
wl_child()
{
	local c i
	for ((i = 0; i < 100; i++)); do
		c=$(pgrep -P "$wl_pid" -x leap-workload) && echo "$c" && return 0
		sleep 0.1
	done
	return 1
}

out0=$(awk '$1 == "pswpout" {print $2}' /proc/vmstat)
start_wl seq seq
wait "$wl_pid"
rc=$?
t $rc "seq over $FOOT in a $MEMCG memcg through RDMA swap: exit $rc (every page verified)" ||
	note "$(cat "$tmp/wl-seq.err")"
note "$(cat "$tmp/wl-seq.out")"
out1=$(awk '$1 == "pswpout" {print $2}' /proc/vmstat)
[ $((out1 - out0)) -gt 3000 ]
t $? "pswpout grew by $((out1 - out0))"

# Prefetching: an oracle reads the workload's pagemap and pushes the
# swapped slots just ahead of it to leap-swapd's control socket (as
# backend-swap.t does, but aimed ahead of the workload: in a memcg a third
# of the footprint, the first swapped pages by address are the ones just
# evicted behind it).
oracle()
{
	timeout -k 5 300 python3 "$repo/tests/sys/helpers/pagemap-oracle.py" "$1" "$tmp/ctls" \
		--select ahead --max 256 --interval 0.01
}
wait_file() { for ((i = 0; i < 600; i++)); do [ -e "$1" ] && return 0; sleep 0.1; done; return 1; }

h0=$(ctl_stat s hits)
rm -f "$tmp/ready" "$tmp/go"
start_wl seq pf --ready-file "$tmp/ready" --wait-file "$tmp/go"
wait_file "$tmp/ready"
oracle "$(wl_child)" >"$tmp/oracle.out" 2>&1 &
op=$!
touch "$tmp/go"
wait "$wl_pid"
rc=$?
t $rc "seq with prefetching (PREFETCH over the control socket): exit $rc, data intact" ||
	note "$(cat "$tmp/wl-pf.err")"
wait "$op"
h1=$(ctl_stat s hits)
[ $((h1 - h0)) -gt 50 ]
t $? "prefetch-cache hits during the run: $((h1 - h0)) ($(cat "$tmp/oracle.out"))"

# r = 2: B killed in the middle of a run.  While leap-swapd fails over,
# swap-out stalls, and reclaim in a memcg at its limit can fail: the
# workload OOM-killed by its memcg (exit 137, memory.events oom_kill; seen
# once in CI, 6.1), its own allocation having invoked the OOM killer (the
# kernel's report says so), proves nothing either way and is not counted: B
# is restarted and the run done again, at most three times, each retry
# said and counted.  A kill any other allocation invoked is not retried.
# shellcheck source=tests/vm/guest-oom.sh
. "$repo/tests/vm/guest-oom.sh"
oom_retries=0
for ((try = 1; try <= 3; try++)); do
	start_wl stride:16 kill
	sleep 3
	kill -KILL "$B_pid"
	wait "$wl_pid"
	rc=$?
	oom=$(memcg_oom_kills "/sys/fs/cgroup/leaprdma$cg")
	{ own_oom_kill "$rc" 0 "$oom" && [ $try -lt 3 ]; } || break
	oom_retries=$((oom_retries + 1))
	note "try $try: the workload was OOM-killed by its memcg while B was down (oom_kill $oom, invoked by its own allocation): not counted; B restarted, run again (OOM retries: $oom_retries)"
	start_memd B rdma "$B_addr" || { note "leap-memd B did not restart: $(tail -n 2 "$tmp/B.log")"; break; }
done
[ "$rc" = 137 ] && [ "${oom:-0}" -gt 0 ] &&
	note "OOM-killed by its memcg in $try tries in a row (the last invoked by $(oom_invoker))"
note "B-killed runs OOM-killed and run again: $oom_retries"
t $rc "stride:16 with leap-memd B SIGKILLed mid-run (r = 2): exit $rc, data intact" ||
	note "$(cat "$tmp/wl-kill.err") (memcg oom_kill ${oom:-?}; kernel: $(dmesg | tail -n 5 | tr '\n' ';'))"
note "$(grep -v warning "$tmp/swapds.log" | tail -4)"

# B comes back empty on the same address; leap-swapd refills it; A dies;
# everything is read back from B over RDMA.
start_memd B rdma "$B_addr"
t $? "leap-memd B restarted on $B_addr (at ${SECONDS} s of the part)" || exit 1
rm -f "$tmp/ready" "$tmp/go"
start_wl stride:16 rs --ready-file "$tmp/ready" --wait-file "$tmp/go"
wait_file "$tmp/ready"
# At most 90 s by the clock (each look starts python3 twice: ~0.5 s under
# TCG, so a count of looks was no limit at all).  Every slot ever written
# is copied (swap without discard frees no slot): 29,291 pages in 13 s
# here (2026-11-29), in a part that took 79.9 s.
t0=$SECONDS
while ((SECONDS - t0 < 90)); do
	[ "$(ctl_stat s under_replicated)" = 0 ] && [ "$(ctl_stat s resilvered)" -gt 0 ] && break
	sleep 0.2
done
ur=$(ctl_stat s under_replicated)
rs=$(ctl_stat s resilvered)
[ "$ur" = 0 ] && [ "$rs" -gt 0 ]
t $? "every swapped page on both servers again ($rs pages copied back to B over RDMA in $((SECONDS - t0)) s; under-replicated $ur)"
kill -KILL "$A_pid"
touch "$tmp/go"
wait "$wl_pid"
rc=$?
t $rc "A killed after the refill: stride:16 reads every page back from B: exit $rc" ||
	note "$(cat "$tmp/wl-rs.err")"

st=$(send_ctl s STATS)
note "$st"
case $st in *mr_regs=[1-9]*) r=0 ;; *) r=1 ;; esac
t $r "leap-swapd's STATS counts registrations ($(echo "$st" | grep -o 'mr_regs=[0-9]* mr_deregs=[0-9]* mr_bytes=[0-9]*'))"

swapoff "$loop" && losetup -d "$loop"
t $? "swapoff (every page read back) and the loop device detached" && loop=
kill -TERM "$swapds_pid"
wait "$swapds_pid"
grep -Eq 'leap-swapd: reads=[0-9]+ writes=[0-9]+ .*errors=0 .*io_errors=0' "$tmp/swapds.log"
t $? "leap-swapd ended without an I/O error: $(grep 'leap-swapd: reads=' "$tmp/swapds.log")"

[ "$with_latency" = 1 ] && latency
note "guest done"
exit 0
