#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools/record-traces.sh [NAME...]: records the short real runs that the
# replay tests decide on (tests/unit/test_replay.c) into
# tests/data/recordings/NAME.rec, each with `leap-agent run --record`, and
# writes NAME.expected beside it: what `leap-agent replay` prints for it.
# Root, swap of its own (a swap file; zram for the zram row), real
# programs (CPython, Perl) in a fresh memory-limited cgroup each.
#
#   py-stride   CPython: a 64 MiB buffer filled, scanned 16 pages apart
#   py-seq      ... scanned forwards
#   py-reverse  ... scanned backwards
#   py-random   ... a random half of its pages
#   perl-stride Perl: a string filled (reading zero-filled entries), scanned
#               8 pages apart
#   two-procs   two CPython strided scans at once in one cgroup
#   shm-stride  CPython, the buffer in shared memory (MAP_SHARED anonymous)
#   shm-seq     ... scanned forwards (a stream the kernel's readahead serves)
#   zram        py-stride with swap on zram: the target stands down
#   np-dot      numpy: two arrays read in lock-step (a . b): two streams
#               interleaved in one thread, each its own lane
#   pg-scan     PostgreSQL: a parallel sequential scan (leader + 2 workers)
#               of its buffer pool (shmem) of 256 MiB in 107 MiB, the pool
#               filled by pg_prewarm first (tools/real/pgpool.sh): one front
#               for three processes, misses two pages apart
#
# After a deliberate policy change, `tools/record-traces.sh --expect`
# rewrites only the .expected files from the recordings as they are.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/lib/fixture.sh
. "$root/tests/lib/fixture.sh"
AGENT=$root/bin/leap-agent
DIR=$root/tests/data/recordings
# zram last: its swap stays on (first in line) until the script ends, and
# a row after it would record a stand-down (np-dot did once).
ALL="py-stride py-seq py-reverse py-random perl-stride two-procs shm-stride shm-seq np-dot pg-scan zram"
PY=python3
MIB=64 LIMIT=32M

expect_only=
if [ "${1:-}" = --expect ]; then
	expect_only=1
	shift
fi
names=${*:-$ALL}

expected()
{
	"$AGENT" replay "$DIR/$1.rec" >"$DIR/$1.expected.tmp"
	mv "$DIR/$1.expected.tmp" "$DIR/$1.expected"
}

if [ -n "$expect_only" ]; then
	for n in $names; do expected "$n"; done
	exit 0
fi

[ "$(id -u)" -eq 0 ] || { echo "record-traces: needs root" >&2; exit 1; }
[ -x "$AGENT" ] || { echo "record-traces: build first (make)" >&2; exit 1; }
mkdir -p "$DIR"
fixture_init
swap_file_on 1024 >/dev/null

# The program of trace $1, one word per line.
program()
{
	case $1 in
	py-stride | zram) printf '%s\n' $PY "$root/tools/real/pyscan.py" $MIB stride:16 ;;
	py-seq) printf '%s\n' $PY "$root/tools/real/pyscan.py" $MIB seq ;;
	py-reverse) printf '%s\n' $PY "$root/tools/real/pyscan.py" $MIB reverse ;;
	py-random) printf '%s\n' $PY "$root/tools/real/pyscan.py" $MIB random ;;
	perl-stride) printf '%s\n' perl "$root/tools/real/perlscan.pl" $MIB 8 ;;
	two-procs) printf '%s\n' sh -c "$PY $root/tools/real/pyscan.py 40 stride:16 & \
$PY $root/tools/real/pyscan.py 40 stride:8 & wait" ;;
	shm-stride) printf '%s\n' $PY "$root/tools/real/pyscan.py" $MIB stride:16 shm ;;
	shm-seq) printf '%s\n' $PY "$root/tools/real/pyscan.py" $MIB seq shm ;;
	# Debian's interpreter: numpy is its package
	np-dot) printf '%s\n' /usr/bin/python3 "$root/tools/real/npdot.py" $MIB ;;
	pg-scan) printf '%s\n' bash "$root/tools/real/pgpool.sh" run "$PG_DIR" 256 seqscan ;;
	*) return 1 ;;
	esac
}

# The memory limit of trace $1: the pool's run at half its peak, as
# bench-real runs it (--limits 50).
limit_of()
{
	case $1 in
	pg-scan) echo 107M ;;
	*) echo $LIMIT ;;
	esac
}

PG_DIR=
if [[ " $names " == *" pg-scan "* ]]; then
	# The server runs as the postgres user: a directory it can reach.
	PG_DIR=$FX_STATE/pg
	chmod 711 "$FX_STATE"
	fixture_register bash -c 'pkill -QUIT -f "$1"; [ $? -le 1 ]' pg-leftover \
		"[p]ostgres -D $PG_DIR/data"
	bash "$root/tools/real/pgpool.sh" setup "$PG_DIR" 256 >/dev/null
fi

for n in $names; do
	if [ -n "${zram_on:-}" ]; then
		echo "record-traces: $n after zram would swap to zram; give zram last" >&2
		exit 2
	fi
	mapfile -t cmd < <(program "$n") || { echo "record-traces: no trace $n" >&2; exit 2; }
	if [ "$n" = zram ]; then
		zram_swap_on 1024 >/dev/null
		zram_on=1
	fi
	"$AGENT" run --memory-limit "$(limit_of "$n")" --record "$DIR/$n.rec" -- "${cmd[@]}" \
		>/dev/null 2>"$FX_STATE/$n.err" || {
		echo "record-traces: $n failed:" >&2
		cat "$FX_STATE/$n.err" >&2
		exit 1
	}
	expected "$n"
	printf '%-12s %6d bytes  %s\n' "$n" "$(stat -c %s "$DIR/$n.rec")" \
		"$(grep '^windows and pages' "$DIR/$n.expected")"
done
