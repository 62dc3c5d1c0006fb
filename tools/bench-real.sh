#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench-real: leap against Linux readahead on real programs (docs/bench.md).
#
# Programs (tools/real/, all from Debian packages; each does its own work
# and checks its own result, exiting 3 if a value is wrong):
#   py-stride    CPython: bytearray filled, strided scan (16 pages)
#   py-reverse   CPython: the same, scanned backwards
#   py-random    CPython: the same, a random half of the pages
#   py-seq       CPython: the same, scanned forwards
#   py-fill      CPython: the fill alone (no scan): what the fill phase
#                of the scans costs by itself
#   py-shm-stride, py-shm-seq
#                CPython: the same scans over shared memory (mmap of
#                MAP_SHARED | MAP_ANONYMOUS: shmem pages, as PostgreSQL's
#                shared_buffers), strided (16 pages) and forwards
#   py-shm-par   CPython: 3 forked processes take chunks of 64 pages of one
#                shared buffer in turns from a shared counter
#                (tools/real/pyshmpar.py), as a parallel scan of a pool
#   java-gc      OpenJDK (G1): linked nodes, a full collection (System.gc),
#                a walk of the links (needs a JRE: not a build dependency)
#   node-gc      Node.js (V8): the same (global.gc; needs node)
#   perl-stride  Perl: a string filled, strided scan (8 pages)
#   sqlite       SQLite (Python's sqlite3): load, full scan, ORDER BY, index
#   sqlite-rev   SQLite with a row a page (tools/real/sqlite4k.py): load, then
#                the table read by descending key (a backward page stream)
#   sqlite-point ... load, then look-ups of a random tenth of the keys
#   sqlite-index ... load and an index on each row's first 900 bytes, then
#                the table read in that index's order (index and table pages
#                in turns: two ascending streams, as a server's index scan)
#   sqlite-service ... look-ups for 12 s (a service's steady queries: long
#                enough for the outcome judge, docs/agent.md)
#   sqlite-stride ... every key looked up, every 16th in turn, three times (a
#                strided walk over the table's pages)
#   numpy        numpy: row-major matrix, column sums, strided slice, transpose
#   np-dot       numpy: two arrays filled, then a . b twice (BLAS reads both
#                in lock-step: two streams interleaved in one thread)
#   pagerank     numpy: PageRank over an edge list (two int32 arrays sorted
#                by destination, tools/real/pagerank.py): built, then three
#                iterations, each streaming both arrays in lock-step and
#                gathering from a small resident array (graph analytics)
#   kv-snapshot, kv-get, kv-scan
#                Redis (tools/real/kvstore.sh): an in-memory key-value store
#                loaded with MIB MiB of keys, then a snapshot (BGSAVE: a
#                forked child walks every key), GETs of random keys, or a
#                cursor scan of the whole keyspace (needs redis-server and
#                redis-tools: not build dependencies)
#   sort         GNU sort with its whole input in one in-memory buffer
#   pg-seqscan, pg-index, pg-point
#                PostgreSQL (tools/real/pgpool.sh): a server whose buffer
#                pool (shmem) holds the whole table, read into it
#                (pg_prewarm), then a parallel sequential scan (leader + 2
#                workers), the table in key order through its index, or
#                look-ups of a random tenth of the keys (needs postgresql
#                and postgresql-contrib: not a build dependency)
# Each runs at --limits percent of its own peak RSS (measured first without
# a limit), in these rows, interleaved and rotated over --reps repetitions:
#   a    no prefetch: vm.page-cluster=0, no agent
#   b    Linux readahead: vm.page-cluster=3, no agent      (the baseline)
#   b6   Linux readahead with vm.page-cluster=6 (64 pages, read by the
#        faulting thread itself), no agent: prefetching as deep as leap's
#        windows, from the program's own CPU (not in the default rows)
#   c    leap-agent run --policy leap, readahead kept
#   c6   row c with vm.page-cluster=6 (the agent measures the kernel's
#        reach at its start, so it knows of the 64-page clusters): leap
#        on top of row b6 (not in the default rows)
#   c0   leap-agent run --policy leap --kernel-readahead off
#   cd   leap-agent run --policy leap --kernel-readahead defer: readahead
#        kept and every stream it serves left to it, read streams too (the
#        default before 2026-11-26; not in the default rows)
#   cn   row c with --cold-behind 0: pages behind fills are left to
#        reclaim (the default before 2026-11-25; not in the default rows)
#   o    leap-agent run --policy observe, readahead kept (what observing
#        alone costs; not in the default rows)
#   f    leap-agent run --policy off: the agent's cgroup and process, its
#        fault hooks never armed (an off target is not followed; until
#        2026-11-27 they armed and stayed on): what the set-up costs
#        against row b's fixture cgroup (not in the default rows)
#   e    with --swap backend: leap-agent run --backend (the engine on
#        addresses, each window process_madvise'd and its slots pushed to
#        leap-swapd), readahead kept (the default since 2026-11-25)
#   e0   row e with --kernel-readahead off (backend mode's default before)
#   x    row c with another leap-agent build (--agent-x PATH: the code
#        before a change, in the same sitting as the change) and/or other
#        options (--x-args "ARGS", e.g. --prefetch-cpu any)
# Rows a and b run in a memory cgroup from tests/lib/fixture.sh (the v1
# controller on a hybrid host, memory.max on pure cgroup v2) with no BPF at
# all; agent rows let leap-agent make its own.  Swap is a file on the
# root filesystem (async block I/O: Linux's readahead is active), or with
# --swap zram a zram device (CPU-bound, synchronous: the kernel skips its
# swap cache and readahead, row b is then "no prefetch"), or with
# --swap backend the remote swap backend of tests/lib/backend.sh (leap-memd
# on loopback, --memd-delay-us of emulated RTT, leap-swapd, a direct-I/O
# loop device), as in bench-swap.sh.
#
# A run killed by SIGKILL (the memcg OOM killer: memcg v1 here sometimes
# kills a fast allocator even with swap free, agent or not) is reported as
# "oom" ("oom-prefetch" where the kernel log shows the agent's own prefetch
# charge invoked the killer: leap-agent run's oom_kills_by_prefetch) and
# never counted; a run whose program reports a wrong value fails
# the benchmark.  Medians per row; ratios are row b's time over the row's
# (> 1: faster than Linux readahead), for the whole run and per phase.
# Output: table on stdout, bench/out/real-*.csv, real-summary.{csv,md},
# real-speedup.png (gnuplot).
#
# Host rows (--host, after the programs, on the same swap): N CPython
# strided scans at once, in one cgroup and in N sibling cgroups under one
# attach, off against leap (tools/bench-host.sh, docs/bench-real.md#host-rows);
# their table is printed and their CSV and plot written beside the others.
#
# --readme: the README's table (`make bench-real`): README_PROGRAMS at 50%,
# rows b and c, medians of 5, no host rows; a program whose runtime is not
# installed (a JDK, Node.js, PostgreSQL, Redis) is left out and the table
# says why; then tools/real/readme-table.py writes the table into README.md
# and keeps the run's CSV as docs/results/bench-real.csv
# (tests/sys/readme-table.t checks that the README holds the table that
# CSV makes).
#
# --quick: the check variant (tests/sys/bench-real-quick.t): small sizes,
# py-stride and perl-stride, rows b and c only, and exit 1 if a median of c is more than --max-slowdown
# percent slower than b's.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
# shellcheck source=tests/lib/fixture.sh
. "$root/tests/lib/fixture.sh"

SORT_INPUT= # set once the scratch dir exists
PG_DIR=     # the same
KV_DIR=     # the same
JAVA_CLASSES= # GcWalk compiled there, once the scratch dir exists
# Debian's interpreter (with python3-numpy), not a PATH one; LEAP_BENCH_PY
# names another (a host whose numpy lives in a virtual environment).
PY=${LEAP_BENCH_PY:-/usr/bin/python3}
PROGRAMS="py-stride py-reverse py-random perl-stride sqlite numpy sort"
# The README's table (--readme), in its order (tools/real/readme-table.py).
README_PROGRAMS="py-stride perl-stride py-shm-stride numpy py-seq py-reverse py-shm-seq
py-random java-gc node-gc sqlite sqlite-rev sqlite-index sqlite-point np-dot pagerank
pg-index pg-seqscan pg-point kv-snapshot kv-get kv-scan sort"
README=0
SKIPPED= # --readme: "PROGRAM: why; ..." for programs whose runtime is missing
PCTS="50 25"
ROWS="a b c c0"
REPS=3
MIB=256
QUICK=0
MAX_SLOWDOWN=10
RUN_TIMEOUT=300
OUTDIR=$root/bench/out
AGENT=$root/bin/leap-agent
AGENT_X= # --agent-x: row x's leap-agent
X_ARGS=() # --x-args: row x's extra leap-agent run options
AGENT_ARGS=()
# BPF run time per fault (bpf_enable_stats): the timing itself costs some
# tens of ns per program run, so the quick check leaves it off.
BPF_STATS=1 # one extra, untimed run per agent row (see the end)
SWAP='file'
PIN= # --pin: the CPU every program runs on, in every row
BK_MEMD_ARGS=
HOST_NS="1 2 4" # programs at once in the host rows ("" for none)

usage()
{
	cat <<EOF
Usage: tools/bench-real.sh [OPTION...]          (root)
  --programs "P..."   among: $PROGRAMS py-seq py-fill py-shm-stride py-shm-seq py-shm-par
                      java-gc node-gc sqlite-rev sqlite-point sqlite-index
                      sqlite-service sqlite-stride np-dot pagerank pg-seqscan pg-index pg-point
                      kv-snapshot kv-get kv-scan
                      (default: the first seven)
  --limits "P..."     memory limits in % of each program's peak RSS (default "$PCTS")
  --rows "R..."       among a b b6 c c6 c0 cd cn o f e e0 x (default "$ROWS"; o = observe only,
                      b6 = Linux readahead with vm.page-cluster=6, c6 = row c with it,
                      cn = row c with --cold-behind 0, x = row c with --agent-x's build,
                      e, e0 = backend mode with readahead kept, off: --swap backend)
  --reps N            interleaved repetitions, median reported (default $REPS)
  --mib N             data size of each program in MiB (default $MIB)
  --agent-arg ARG     extra leap-agent run argument (repeatable)
  --agent-x PATH      row x's leap-agent (another build: the code before a change)
  --x-args "ARGS"     row x's extra leap-agent run options (with this build
                      unless --agent-x)
  --timeout S         per-run limit in seconds (default $RUN_TIMEOUT)
  --out DIR           output directory (default bench/out)
  --readme            the README's table (make bench-real): its programs at
                      50%, rows b c, 5 repetitions, then README.md and
                      docs/results/bench-real.csv written
  --quick             check variant: 96 MiB, py-stride perl-stride at 50%,
                      rows b c, and fail if c is slower than b by more than
                      --max-slowdown percent (default $MAX_SLOWDOWN)
  --max-slowdown PCT  with --quick
  --swap file|zram|backend
                      swap on a file on the root filesystem (default), on
                      zram, or on leap-swapd + leap-memd (enables row e)
  --memd-delay-us US  with --swap backend: leap-memd holds each reply US
                      microseconds (an emulated network; default 0)
  --host "N..."       host rows: N strided scans at once, for each N (default
                      "$HOST_NS"; "" for none; not with --quick or --swap backend)
  --pin CPU           run each program on that CPU only, in every row (taskset;
                      the agent is not pinned): takes out the runs where
                      reclaim's TLB flushes interrupt a CPU the program left
                      (docs/bench-real.md, "Why zram runs were bimodal")
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
	--programs | --limits | --rows | --reps | --mib | --agent-arg | --timeout | --out | \
		--max-slowdown | --swap | --memd-delay-us | --host | --pin | --agent-x | --x-args)
		[ $# -ge 2 ] || {
			echo "bench-real: $1 needs a value" >&2
			exit 2
		}
		case $1 in
		--programs) PROGRAMS=$2 ;;
		--limits) PCTS=$2 ;;
		--rows) ROWS=$2 ;;
		--reps) REPS=$2 ;;
		--mib) MIB=$2 ;;
		--agent-arg) AGENT_ARGS+=("$2") ;;
		--timeout) RUN_TIMEOUT=$2 ;;
		--out) OUTDIR=$2 ;;
		--max-slowdown) MAX_SLOWDOWN=$2 ;;
		--swap) SWAP=$2 ;;
		--memd-delay-us) BK_MEMD_ARGS="--delay-us $2" ;;
		--host) HOST_NS=$2 ;;
		--pin) PIN=$2 ;;
		--agent-x) AGENT_X=$2 ;;
		--x-args) read -ra X_ARGS <<<"$2" ;;
		esac
		shift 2
		;;
	--readme)
		README=1
		PROGRAMS=$README_PROGRAMS
		PCTS=50
		ROWS="b c"
		REPS=5
		HOST_NS=
		shift
		;;
	--quick)
		QUICK=1
		# Where leap must not regress; reverse and random scans still pay
		# the tracepoint path's observation cost (docs/bench-real.md).
		PROGRAMS="py-stride perl-stride"
		PCTS=50
		ROWS="b c"
		MIB=96 # smaller, and the fill (observation cost only) dominates
		BPF_STATS=0
		shift
		;;
	-h | --help)
		usage
		exit 0
		;;
	*)
		echo "bench-real: unknown option $1 (see --help)" >&2
		exit 2
		;;
	esac
done

# The host rows run on a file or zram, and not in the check variant.
[ "$SWAP" != backend ] && [ "$QUICK" = 0 ] || HOST_NS=
if [ -n "$PIN" ]; then
	[[ $PIN =~ ^[0-9]+$ ]] && taskset -c "$PIN" true 2>/dev/null || {
		echo "bench-real: --pin takes a CPU this process may run on, not '$PIN'" >&2
		exit 2
	}
fi
host_max=1
for v in "$REPS" "$MIB" "$RUN_TIMEOUT" "$MAX_SLOWDOWN" $HOST_NS; do
	[[ $v =~ ^[0-9]+$ ]] && [ "$v" -gt 0 ] || {
		echo "bench-real: '$v' is not a positive number" >&2
		exit 2
	}
done
case $SWAP in file | zram | backend) ;; *)
	echo "bench-real: --swap takes file, zram or backend, not '$SWAP'" >&2
	exit 2
	;;
esac
[ -z "$BK_MEMD_ARGS" ] || [ "$SWAP" = backend ] || {
	echo "bench-real: --memd-delay-us needs --swap backend" >&2
	exit 2
}
for r in $ROWS; do
	case $r in a | b | b6 | c | c6 | c0 | cd | cn | o | f) ;;
	x)
		[ -n "$AGENT_X" ] || [ ${#X_ARGS[@]} -gt 0 ] || {
			echo "bench-real: row x needs --agent-x PATH or --x-args ARGS" >&2
			exit 2
		}
		AGENT_X=${AGENT_X:-$AGENT}
		[ -x "$AGENT_X" ] || {
			echo "bench-real: --agent-x $AGENT_X is not an executable" >&2
			exit 2
		}
		;;
	e | e0)
		[ "$SWAP" = backend ] || {
			echo "bench-real: row $r needs --swap backend" >&2
			exit 2
		}
		;;
	*)
		echo "bench-real: unknown row '$r' (a b b6 c c6 c0 cd cn o f e e0 x)" >&2
		exit 2
		;;
	esac
done
[ "$(id -u)" -eq 0 ] || {
	echo "bench-real: needs root (swap, memory cgroups, BPF)" >&2
	exit 2
}
[ -x "$AGENT" ] || {
	echo "bench-real: $AGENT missing: run make first" >&2
	exit 2
}
# The interpreter runs every program's calibration; numpy and sqlite3 are
# needed only by the programs named after them, so a host without them
# can still run the others (--programs).
py_mods=()
for p in $PROGRAMS; do
	case $p in
	numpy | np-dot | pagerank) py_mods+=(numpy) ;;
	sqlite | sqlite-rev | sqlite-point | sqlite-index | sqlite-service | sqlite-stride) py_mods+=(sqlite3) ;;
	esac
done
[ -x "$PY" ] && "$PY" -c "import sys${py_mods[*]/#/, }" 2>/dev/null || {
	echo "bench-real: $PY${py_mods[*]:+ with ${py_mods[*]}} is needed by these programs" \
		"(make deps; or LEAP_BENCH_PY)" >&2
	exit 2
}

# The command line of program $1 (one word per line).
program_cmd()
{
	case $1 in
	py-stride) printf '%s\n' "$PY" "$here/real/pyscan.py" "$MIB" stride:16 ;;
	py-reverse) printf '%s\n' "$PY" "$here/real/pyscan.py" "$MIB" reverse ;;
	py-random) printf '%s\n' "$PY" "$here/real/pyscan.py" "$MIB" random ;;
	py-seq) printf '%s\n' "$PY" "$here/real/pyscan.py" "$MIB" seq ;;
	py-fill) printf '%s\n' "$PY" "$here/real/pyscan.py" "$MIB" none ;;
	py-shm-stride) printf '%s\n' "$PY" "$here/real/pyscan.py" "$MIB" stride:16 shm ;;
	py-shm-seq) printf '%s\n' "$PY" "$here/real/pyscan.py" "$MIB" seq shm ;;
	py-shm-par) printf '%s\n' "$PY" "$here/real/pyshmpar.py" "$MIB" 3 64 ;;
	# A fixed heap of twice the data (no resizing in the measured run).
	java-gc) printf '%s\n' java -Xms$((MIB * 2))m -Xmx$((MIB * 2))m -cp "$JAVA_CLASSES" \
		GcWalk "$MIB" ;;
	node-gc) printf '%s\n' node --expose-gc --max-old-space-size=$((MIB * 3)) \
		"$here/real/gcwalk.js" "$MIB" ;;
	perl-stride) printf '%s\n' perl "$here/real/perlscan.pl" "$MIB" 8 ;;
	# Half the data: SQLite's footprint is ~2.5x its data (page cache,
	# sorter, the checking keys).
	sqlite) printf '%s\n' "$PY" "$here/real/sqlitescan.py" $((MIB / 2)) ;;
	# Rows of a page each; the data takes ~1.3x its size in the process.
	sqlite-rev) printf '%s\n' "$PY" "$here/real/sqlite4k.py" "$MIB" reverse ;;
	sqlite-point) printf '%s\n' "$PY" "$here/real/sqlite4k.py" "$MIB" point ;;
	sqlite-index) printf '%s\n' "$PY" "$here/real/sqlite4k.py" "$MIB" index ;;
	sqlite-service) printf '%s\n' "$PY" "$here/real/sqlite4k.py" "$MIB" point 1 12 ;;
	sqlite-stride) printf '%s\n' "$PY" "$here/real/sqlite4k.py" "$MIB" stride 3 ;;
	numpy) printf '%s\n' "$PY" "$here/real/npscan.py" "$MIB" ;;
	np-dot) printf '%s\n' "$PY" "$here/real/npdot.py" "$MIB" ;;
	# The edge list is MIB MiB; the ranks and degrees ~1/3 of it more.
	pagerank) printf '%s\n' "$PY" "$here/real/pagerank.py" "$MIB" ;;
	sort) printf '%s\n' bash "$here/real/sortrun.sh" $((MIB / 2)) "$SORT_INPUT" ;;
	# The pool is MIB MiB, the table 3/4 of it.
	pg-seqscan | pg-index | pg-point)
		printf '%s\n' bash "$here/real/pgpool.sh" run "$PG_DIR" "$MIB" "${1#pg-}" ;;
	# The keys take MIB MiB in the server.
	kv-snapshot | kv-get | kv-scan)
		printf '%s\n' bash "$here/real/kvstore.sh" "$KV_DIR" "$MIB" "${1#kv-}" ;;
	*) return 1 ;;
	esac
}

# What program $1 needs that leap does not depend on, when it is missing.
program_missing()
{
	case $1 in
	java-gc) command -v java >/dev/null && command -v javac >/dev/null ||
		echo "needs a JDK (apt-get install openjdk-17-jdk-headless)" ;;
	node-gc) command -v node >/dev/null || echo "needs Node.js (apt-get install nodejs)" ;;
	pg-*) compgen -G "/usr/lib/postgresql/*/lib/pg_prewarm.so" >/dev/null ||
		echo "needs PostgreSQL (apt-get install postgresql postgresql-contrib)" ;;
	kv-*) command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null &&
		command -v redis-check-rdb >/dev/null ||
		echo "needs Redis (apt-get install redis-server redis-tools)" ;;
	esac
}

kept=
for p in $PROGRAMS; do
	program_cmd "$p" >/dev/null || {
		echo "bench-real: unknown program '$p'" >&2
		exit 2
	}
	# The managed runtimes are not leap's dependencies: say what is missing.
	why=$(program_missing "$p")
	if [ -z "$why" ]; then
		kept+=" $p"
	elif [ "$README" = 1 ]; then
		echo "bench-real: $p left out of the table: it $why" >&2
		SKIPPED+="$p: $why; "
	else
		echo "bench-real: $p $why" >&2
		exit 2
	fi
done
PROGRAMS=${kept# }

fixture_init || exit 1
mkdir -p "$OUTDIR" || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/leap-bench-real.XXXXXX") || exit 1
fixture_register rm -rf "$work"
# Scratch files on the root filesystem, never on tmpfs (the sort input is
# read through the page cache of the limited cgroup; tmpfs would be swap).
scratch=$(mktemp -d /var/tmp/leap-bench-real.XXXXXX) || exit 1
fixture_register rm -rf "$scratch"
export TMPDIR=$scratch

# Swap: every program's data, plus the swap cache's duplicates.
# Host rows: N programs' data at once.
for n in $HOST_NS; do [ "$n" -le "$host_max" ] || host_max=$n; done
swap_mib=$((MIB * (host_max > 4 ? host_max : 4) + 256))
swaps_before=$(awk 'NR > 1 { print $1 }' /proc/swaps)
if [ "$SWAP" = file ]; then
	swap_file_on "$swap_mib" >/dev/null || exit 1
elif [ "$SWAP" = zram ]; then
	zram_swap_on "$swap_mib" >/dev/null || exit 1
else
	# shellcheck source=tests/lib/backend.sh
	. "$root/tests/lib/backend.sh"
	backend_up_for_bench "$swap_mib" || {
		echo "bench-real: the backend did not come up" >&2
		exit 1
	}
fi
page_cluster_set 3 || exit 1

# The disk under the swap area this run turned on (a swap file's file
# system's device, or the zram or loop device itself), as /proc/diskstats
# names it: each run's reads and writes there go in the CSV (disk_*), so
# that a sitting shows how the swap I/O was made (how many reads, of what
# size, waiting how long), not only how long the program took.
# Empty, with a warning, when it cannot be told.
swap_disk()
{
	local area dev
	area=$(awk 'NR > 1 { print $1 }' /proc/swaps | grep -vxF -f <(printf '%s\n' "$swaps_before") |
		head -n 1)
	[ -n "$area" ] || return 0
	if [ -b "$area" ]; then
		dev=$area
	else
		dev=$(df --output=source "$area" 2>/dev/null | tail -n 1)
	fi
	dev=$(readlink -f "$dev" 2>/dev/null)
	dev=${dev##*/}
	[ -n "$dev" ] && awk -v d="$dev" '$3 == d { f = 1 } END { exit !f }' /proc/diskstats && echo "$dev"
}
SWAP_DISK=$(swap_disk)
if [ -n "$SWAP_DISK" ]; then
	echo "# swap I/O counted on: $SWAP_DISK (/proc/diskstats)"
else
	echo "bench-real: warning: the swap area's disk is not in /proc/diskstats: no disk_* columns" >&2
fi
# The disk's reads, sectors read, ms reading, writes, sectors written.
disk_counts()
{
	[ -n "$SWAP_DISK" ] || return 0
	awk -v d="$SWAP_DISK" '$3 == d { print $4, $6, $7, $8, $10 }' /proc/diskstats
}

# Row b's readahead: VMA-based, or swap-slot clusters while a rotational
# swap area is on (docs/agent.md, "Memory pressure and the kernel's readahead").
echo "# swap readahead: $("$AGENT" status 2>/dev/null | sed -n 's/^swap readahead: *//p')"

JAVA_CLASSES=$scratch/java
if [[ " $PROGRAMS " == *" java-gc "* ]]; then
	mkdir -p "$JAVA_CLASSES" && javac -d "$JAVA_CLASSES" "$here/real/GcWalk.java" || exit 1
fi

# At the fixture's teardown, signal SIG to what a killed run left behind
# whose command line matches PATTERN (pkill -f).  pkill's 1, nothing left,
# is no failure; a pattern written "[p]ostgres" does not match the
# teardown's own command line, which holds it.
register_leftover_kill() # SIG PATTERN
{
	fixture_register bash -c 'pkill -"$1" -f "$2"; [ $? -le 1 ]' leftover "$1" "$2"
}

PG_DIR=$scratch/pg
if [[ " $PROGRAMS " == *" pg-"* ]]; then
	chmod 711 "$scratch" || exit 1 # the server runs as the postgres user
	# A server a killed run left behind (its shared memory, its cgroup).
	register_leftover_kill QUIT "[p]ostgres -D $PG_DIR/data"
	bash "$here/real/pgpool.sh" setup "$PG_DIR" "$MIB" || exit 1
	echo "# pg: table of $(cut -d' ' -f1 "$PG_DIR/expected") rows in $PG_DIR"
fi

KV_DIR=$scratch/kv
# A server a killed run left behind (Redis names itself by its socket).
[[ " $PROGRAMS " == *" kv-"* ]] && register_leftover_kill KILL "[r]edis-server unixsocket:$KV_DIR"

SORT_INPUT=$scratch/sort-input
if [[ " $PROGRAMS " == *" sort "* ]]; then
	# 3/4 of the buffer: the whole input is sorted in memory, in one heap.
	"$PY" - "$SORT_INPUT" $((MIB * 3 / 8)) <<'EOF' || exit 1
import random, sys
path, mib = sys.argv[1], int(sys.argv[2])
rng = random.Random(11)
with open(path, "w") as f:
    for _ in range((mib << 20) // 64):
        f.write("%016x %s\n" % (rng.getrandbits(64), "y" * 46))
EOF
fi

# Peak RSS of each program alone, in KiB: the largest resident set among
# the run's processes (getrusage's RUSAGE_CHILDREN, as GNU time's %M, which
# a host may lack; sort's is its own process, the wrapper shell's is small).
declare -A PEAK
for p in $PROGRAMS; do
	mapfile -t cmd < <(program_cmd "$p")
	peak=$("$PY" -c 'import resource, subprocess, sys
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss if rc == 0 else f"exit status {rc}")' \
		"${cmd[@]}" 2>&1 | tail -n 1)
	[[ $peak =~ ^[0-9]+$ ]] || {
		echo "bench-real: $p failed its calibration run: $peak" >&2
		exit 1
	}
	PEAK[$p]=$peak
	echo "# $p: peak RSS $((peak / 1024)) MiB"
done
[ -n "$PIN" ] && echo "# every program runs on CPU $PIN alone, in every row (the agent is not pinned)"

CSV=$OUTDIR/real-$(date +%Y%m%d-%H%M%S).csv
echo "program,pct,limit_mib,row,rep,status,wall_s,phases,swapin_misses,prefetched,hits,wasted,accuracy,coverage,agent_user_us_per_event,agent_sys_us_per_event,agent_own_us_per_event,bpf_ns_per_fault,reaction_p50_us,reaction_p99_us,user_s,disk_reads,disk_read_kib_avg,disk_read_us_avg,disk_writes,disk_write_kib_avg,swap_cache_hits" >"$CSV"

# One run: program $1 at limit $2 MiB, row $3, repetition $4; appends a CSV line.
run_one()
{
	local p=$1 lim=$2 row=$3 rep=$4 pct=$5 stats=${6:-} out=$work/out err=$work/err js=$work/agent.json
	local rc status h t0 t1 wall miss=0 disk0 disk1
	local -a cmd bpf_stats=()
	[ -n "$stats" ] && bpf_stats=(--bpf-stats)
	mapfile -t cmd < <(program_cmd "$p")
	[ -n "$PIN" ] && cmd=(taskset -c "$PIN" "${cmd[@]}")
	rm -f "$js"
	disk0=$(disk_counts)
	case $row in
	a | b | b6)
		case $row in a) page_cluster_set 0 ;; b) page_cluster_set 3 ;; b6) page_cluster_set 6 ;; esac
		h=$(memcg_create "${lim}M") || return 1
		t0=$(date +%s.%N)
		memcg_run_timeout "$RUN_TIMEOUT" "$h" "${cmd[@]}" >"$out" 2>"$err"
		rc=$?
		t1=$(date +%s.%N)
		miss=$(memcg_stat "$h" pgmajfault)
		memcg_destroy "$h"
		page_cluster_set 3
		;;
	c | c6 | c0 | cd | cn | o | f | e | e0 | x)
		local ra=keep policy=leap be=() cold=() agent=$AGENT xa=()
		# c6: before the agent starts, which reads the kernel's reach then.
		[ "$row" = c6 ] && page_cluster_set 6
		[ "$row" = c0 ] && ra=off
		[ "$row" = cd ] && ra=defer
		[ "$row" = o ] && policy=observe
		[ "$row" = f ] && policy=off
		[ "$row" = cn ] && cold=(--cold-behind 0)
		[[ $row == e* ]] && be=(--backend "$BK_CTL" --backend-dev "$BK_LOOP")
		[ "$row" = e0 ] && ra=off
		[ "$row" = x ] && agent=$AGENT_X xa=("${X_ARGS[@]}")
		t0=$(date +%s.%N)
		timeout --kill-after=10 "$RUN_TIMEOUT" "$agent" run --policy "$policy" \
			--kernel-readahead "$ra" --memory-limit "${lim}M" "${bpf_stats[@]}" "${cold[@]}" \
			"${be[@]}" --json "$js" "${AGENT_ARGS[@]}" "${xa[@]}" -- "${cmd[@]}" >"$out" 2>"$err"
		rc=$?
		t1=$(date +%s.%N)
		[ "$row" = c6 ] && page_cluster_set 3
		;;
	esac
	disk1=$(disk_counts)
	wall=$(awk -v a="$t1" -v b="$t0" 'BEGIN { printf "%.6f", a - b }')
	status=ok
	if [ $rc -eq 124 ]; then
		status=timeout # thrashing past --timeout: reported, never counted
	elif [ $rc -eq 137 ] || [ $rc -eq 9 ] || grep -q '"exit_status": *137' "$js" 2>/dev/null ||
		grep -q '"oom_kills": *[1-9]' "$js" 2>/dev/null; then
		status=oom # never counted (see the header)
		# The kernel log says the agent's own prefetch charge invoked it:
		# leap's harm, never the kernel's (summary.py --check).
		grep -q '"oom_kills_by_prefetch": *[1-9]' "$js" 2>/dev/null && status=oom-prefetch
	elif [ $rc -eq 3 ]; then
		echo "bench-real: $p row $row returned a WRONG RESULT: $(cat "$out")" >&2
		status=wrong
	elif [ $rc -ne 0 ]; then
		echo "bench-real: $p row $row failed ($rc): $(tail -n 3 "$err")" >&2
		status=fail
	fi
	# A run with kernel.bpf_stats_enabled pays for the accounting itself
	# (two clock reads per program run, ~12 runs per fault): it gives the
	# BPF ns per fault only, and its time is never counted.
	[ -n "$stats" ] && [ "$status" = ok ] && status=bpfstats
	"$PY" - "$p" "$pct" "$lim" "$row" "$rep" "$status" "$wall" "$miss" "$out" "$js" \
		"$disk0" "$disk1" >>"$CSV" <<'EOF'
import json, sys
p, pct, lim, row, rep, status, wall, miss, out, js, disk0, disk1 = sys.argv[1:]
# The swap disk's I/O during the run (whole run, set-up included; other
# I/O on that disk counts too): reads, their average size and wait, writes.
disk = [""] * 5
try:
    d = [b - a for a, b in zip(map(int, disk0.split()), map(int, disk1.split()))]
    if len(d) == 5 and min(d) >= 0:
        reads, rsect, rms, writes, wsect = d
        disk = [reads, f"{rsect / 2 / reads:.1f}" if reads else "",
                f"{rms * 1000 / reads:.0f}" if reads else "",
                writes, f"{wsect / 2 / writes:.1f}" if writes else ""]
except ValueError:
    pass
phases, user_s = {}, ""
try:
    said = json.loads(open(out).read().strip().splitlines()[-1])
    phases = said["phases"]
    # The program's own user CPU (the Python programs say it): empty when
    # it does not.
    user_s = f"{said['user_s']:.3f}" if "user_s" in said else ""
except Exception:
    pass
a = {}
try:
    a = json.load(open(js))
    wall = a.get("wall_s", wall)  # the program's own run, without set-up
except Exception:
    pass
g = lambda k: a.get(k, 0)
user = g("agent_user_us_per_event")
cpu = g("agent_cpu_us_per_event")
ph = ";".join(f"{k}={v:.4f}" for k, v in phases.items())
print(",".join(str(x) for x in [
    p, pct, lim, row, rep, status, f"{float(wall):.4f}", ph,
    a.get("major_faults", a.get("swapin_misses", miss)), g("prefetched"), g("hits"), g("prefetch_wasted"),
    f"{g('accuracy'):.4f}", f"{g('coverage'):.4f}", f"{user:.3f}",
    f"{max(cpu - user, 0):.3f}", f"{g('agent_own_cpu_us_per_event'):.3f}",
    f"{g('bpf_ns_per_fault'):.0f}",
    g("reaction_p50_us"), g("reaction_p99_us"), user_s] + disk
    # Linux's swap-cache hits (--agent-arg --swap-cache-hits): empty
    # where the agent did not count them.
    + [g("swap_cache_hits") if a.get("swap_cache_hits_counted") else ""]))
EOF
	[ "$status" = wrong ] && return 3
	return 0
}

# Memory limit in MiB of program $1 at $2 percent of its peak RSS (8 at least).
limit_mib()
{
	local lim=$((PEAK[$1] * $2 / 100 / 1024))
	[ "$lim" -ge 8 ] || lim=8
	echo "$lim"
}

bad=0
for rep in $(seq "$REPS"); do
	# Rotate the row order each repetition so drift hits every row.
	read -r -a rows <<<"$ROWS"
	shift_by=$(((rep - 1) % ${#rows[@]}))
	rows=("${rows[@]:shift_by}" "${rows[@]:0:shift_by}")
	for p in $PROGRAMS; do
		for pct in $PCTS; do
			lim=$(limit_mib "$p" "$pct")
			for row in "${rows[@]}"; do
				run_one "$p" "$lim" "$row" "$rep" "$pct" || bad=1
			done
		done
	done
	echo "# repetition $rep of $REPS done"
done

# One more run of each agent row with BPF run-time statistics on (kernel
# accounting that slows every program run, so these runs are not timed).
if [ "$BPF_STATS" = 1 ]; then
	for p in $PROGRAMS; do
		for pct in $PCTS; do
			lim=$(limit_mib "$p" "$pct")
			for row in $ROWS; do
				case $row in c | c6 | c0 | cd | cn | o | e | x) run_one "$p" "$lim" "$row" 0 "$pct" stats || bad=1 ;; esac
			done
		done
	done
	echo "# BPF statistics runs done"
fi

if [ -n "$HOST_NS" ]; then
	echo "# host rows: $HOST_NS programs at once, $REPS repetitions"
	AGENT=$AGENT PY=$PY bash "$here/bench-host.sh" --n "$HOST_NS" --reps "$REPS" --mib "$MIB" \
		--layout "one siblings" --out "${CSV%/*}/host-${CSV##*/real-}" || bad=1
fi

check=()
[ "$QUICK" = 1 ] && check=(--check --max-slowdown "$MAX_SLOWDOWN")
"$PY" "$here/real/summary.py" --csv "$CSV" --out "$OUTDIR" "${check[@]}" || bad=1
echo "# raw runs: $CSV"
if [ "$README" = 1 ]; then
	if [ "$bad" = 0 ]; then
		"$PY" "$here/real/readme-table.py" write --csv "$CSV" --command "make bench-real" \
			--skipped "$SKIPPED" --readme "$root/README.md" --results "$root/docs/results" || bad=1
	else
		echo "bench-real: a run failed: README.md left as it was" >&2
	fi
fi
exit $bad
