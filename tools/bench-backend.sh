#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench-backend: the remote swap backend at several emulated round trips.
#
# For each RTT (leap-memd --delay-us: every reply leaves RTT us after its
# request arrived, each on its own, so requests in flight overlap -- the
# latency of a network, not its occupancy):
#  1. Page-in: single-page O_DIRECT reads at random pages of 64 MiB
#     (tools/pagein-latency.py), p50/p99 and pages/s with 1 reader and
#     pages/s with 4 readers at once, for
#       - loop device -> leap-swapd -> leap-memd over loopback (a miss),
#       - loop device -> leap-swapd prefetch-cache hit,
#       - a file on the root filesystem (what a swap file costs),
#     and the most requests leap-swapd had in flight on one connection.
#  2. seq and stride:16 on the backend as swap (tools/bench-swap.sh --swap
#     backend): Linux readahead (b), leap through process_madvise (c0),
#     leap in backend mode (e: engine on addresses, process_madvise then
#     slots pushed to leap-swapd; ec: slots pushed only), the rows
#     interleaved and rotated
#     within one bench-swap invocation, median of --reps.
# Then one table of speedups (b / row) against RTT, a CSV and, with
# gnuplot, a PNG plot of them (bench/out/bench-backend-*).
#
# Usage: tools/bench-backend.sh [--rtts "0 5 20 50"] [--reps N] [--samples N]
#                                [--skip-stride] [--skip-pagein] [--knobs]
#                                [--rows "b c0 e ec"]
#                                [BENCH-SWAP ARGS...]
# --knobs: instead, 4-reader page-in at the first RTT for each FUSE /
# memclient parallelism knob of leap-swapd, one at a time.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
# shellcheck source=tests/lib/fixture.sh
. "$root/tests/lib/fixture.sh"

SAMPLES=2000
STRIDE=1
PAGEIN=1
KNOBS=0
RTTS="0 5 20 50"
REPS=3
ROWS="b c0 e ec"
OUTDIR=$root/bench/out
while [ $# -gt 0 ]; do
	case $1 in
	--samples) SAMPLES=$2 && shift 2 ;;
	--skip-stride) STRIDE=0 && shift ;;
	--skip-pagein) PAGEIN=0 && shift ;;
	--knobs) KNOBS=1 && shift ;;
	--rtts) RTTS=$2 && shift 2 ;;
	--delay-us) RTTS=$2 && shift 2 ;; # the old single-RTT option
	--reps) REPS=$2 && shift 2 ;;
	--rows) ROWS=$2 && shift 2 ;;
	--out) OUTDIR=$2 && shift 2 ;;
	*) break ;;
	esac
done
[ "$(id -u)" -eq 0 ] || {
	echo "bench-backend: needs root (FUSE, loop devices, swap)" >&2
	exit 1
}
for b in leap-memd leap-swapd; do
	[ -x "$root/bin/$b" ] || {
		echo "bench-backend: bin/$b not built (make)" >&2
		exit 1
	}
done
mkdir -p "$OUTDIR" || exit 1
stamp=$(date +%Y%m%d-%H%M%S)
pagein_csv=$OUTDIR/bench-backend-$stamp-pagein.csv
speed_csv=$OUTDIR/bench-backend-$stamp-speedup.csv
PAGES=16384 # 64 MiB of data on each path
lat=$root/tools/pagein-latency.py

# pagein RTT [SWAPD ARGS...]: one page-in block at RTT; appends CSV rows
# rtt,path,p50_us,p99_us,pages_per_s,pages_per_s_4,peak_inflight.
pagein()
{
	local d=$1 file peak
	shift
	fixture_init
	# shellcheck source=tests/lib/backend.sh
	. "$root/tests/lib/backend.sh"
	BK_MEMD_ARGS="--delay-us $d"
	{ backend_init && backend_memd A 127.0.0.1:0 320M &&
		backend_swapd 256M --cache-pages 4096 "$@" && backend_loop; } || {
		echo "bench-backend: the backend did not come up" >&2
		fixture_teardown
		return 1
	}
	file=$FX_SWAP_DIR/$FX_TAG-pagein
	fixture_register rm -f "$file"
	dd if=/dev/urandom of="$BK_LOOP" bs=1M count=$((PAGES / 256)) oflag=direct status=none
	dd if=/dev/urandom of="$file" bs=1M count=$((PAGES / 256)) oflag=direct status=none
	sync
	{
		python3 "$lat" "$file" --pages $PAGES --samples "$SAMPLES" --threads 4 \
			--name "file-on-root-fs"
		python3 "$lat" "$BK_LOOP" --pages $PAGES --samples "$SAMPLES" --threads 4 \
			--name "leap-swapd-miss"
		python3 "$lat" "$BK_LOOP" --pages $PAGES --samples "$SAMPLES" --ctl "$BK_CTL" \
			--hit --seed 2 --name "leap-swapd-cache-hit"
	} >"$FX_STATE/pagein.txt"
	peak=$(backend_stat peak_inflight)
	awk -v d="$d" -v peak="${peak:-}" '{
		for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		printf "%s,%s,%s,%s,%s,%s,%s\n", d, v["name"], v["p50_us"], v["p99_us"],
			v["pages_per_s"], ("mt_pages_per_s" in v) ? v["mt_pages_per_s"] : "",
			(v["name"] ~ /leap/) ? peak : ""
		delete v
	}' "$FX_STATE/pagein.txt"
	fixture_teardown
	rm -rf "$FX_STATE"
}

echo "bench-backend: $(uname -r), $(nproc) cpus, swap dir on $(stat -f -c %T /var/tmp);" \
	"RTT emulated by leap-memd --delay-us (per reply, overlapping)"
echo "leap-swapd: FUSE max_background 64 (congestion 48), clone_fd, 16 threads;" \
	"memclient 2 connections x window 32 (queue depth 64 per server, prefetches <= 16 per connection)"

if [ "$KNOBS" = 1 ]; then
	d=${RTTS%% *}
	echo
	echo "bench-backend: FUSE/memclient knobs, 4-reader page-in at RTT $d us ($SAMPLES samples)"
	printf '%-44s %8s %8s %10s %12s %6s\n' knob p50_us p99_us pages/s 4-reader-pg/s peak
	while IFS='|' read -r name args; do
		# shellcheck disable=SC2086
		pagein "$d" $args | awk -F, -v n="$name" '$2 == "leap-swapd-miss" {
			printf "%-44s %8s %8s %10s %12s %6s\n", n, $3, $4, $5, $6, $7 }'
	done <<'EOF'
defaults|
--fuse-max-background 0 (libfuse's 12)|--fuse-max-background 0
--fuse-clone-fd 0|--fuse-clone-fd 0
--threads 8|--threads 8
--conns 1|--conns 1
--conns 1 --window 2 (almost no pipelining)|--conns 1 --window 2
--conns 4|--conns 4
EOF
	exit 0
fi

if [ "$PAGEIN" = 1 ]; then
	echo "rtt_us,path,p50_us,p99_us,pages_per_s,pages_per_s_4,peak_inflight" >"$pagein_csv"
	for d in $RTTS; do
		pagein "$d" >>"$pagein_csv" || exit 1
	done
	echo
	echo "bench-backend: page-in, $SAMPLES single-page O_DIRECT reads at random pages of 64 MiB" \
		"(1 reader; 4 readers for pages/s-4)"
	awk -F, 'NR == 1 { next }
	$2 == "file-on-root-fs" { f50[$1] = $3; f4[$1] = $6 }
	{ row[NR] = $0 }
	END {
		printf "%6s %-22s %8s %8s %10s %12s %10s %6s\n", "rtt_us", "path", "p50_us", "p99_us",
			"pages/s", "pages/s-4", "4r/file", "peak"
		for (i = 2; i <= NR; i++) {
			split(row[i], v, ",")
			printf "%6s %-22s %8s %8s %10s %12s %10s %6s\n", v[1], v[2], v[3], v[4], v[5],
				v[6] == "" ? "-" : v[6],
				(v[6] != "" && f4[v[1]] > 0) ? sprintf("%.2f", v[6] / f4[v[1]]) : "-",
				v[7] == "" ? "-" : v[7]
		}
	}' "$pagein_csv"
fi

[ "$STRIDE" = 1 ] || exit 0
# Columns: wall of every row, then b / row for every row but b.
others=$(tr ' ' '\n' <<<"$ROWS" | grep -vx b | tr '\n' ' ')
{
	printf 'rtt_us,workload'
	for r in $ROWS; do printf ',%s_s' "$r"; done
	for r in $others; do printf ',speedup_%s' "$r"; done
	echo
} >"$speed_csv"
for d in $RTTS; do
	echo
	echo "bench-backend: seq and stride:16, swap on the backend, RTT $d us" \
		"(tools/bench-swap.sh --swap backend --memd-delay-us $d --reps $REPS --rows \"$ROWS\")"
	sub=$OUTDIR/bench-backend-$stamp-rtt$d
	mkdir -p "$sub"
	bash "$here/bench-swap.sh" --swap backend --memd-delay-us "$d" --workloads "seq stride:16" \
		--limits 50 --rows "$ROWS" --reps "$REPS" --out "$sub" "$@" || exit 1
	sum=$(ls "$sub"/bench-swap-*[0-9].csv | tail -1)
	awk -F, -v d="$d" -v rows="$ROWS" -v others="$others" 'NR > 1 { w[$1 SUBSEP $3] = $7; wl[$1] = 1 }
	END {
		nr = split(rows, R, " "); no = split(others, O, " ")
		for (x in wl) {
			b = w[x SUBSEP "b"]
			printf "%s,%s", d, x
			for (i = 1; i <= nr; i++) printf ",%s", w[x SUBSEP R[i]]
			for (i = 1; i <= no; i++) {
				v = w[x SUBSEP O[i]]
				printf ",%s", (b != "" && v > 0) ? sprintf("%.2f", b / v) : ""
			}
			printf "\n"
		}
	}' "$sum" >>"$speed_csv"
done
echo
echo "bench-backend: speedup over Linux readahead (wall b / wall row; >1 is faster), median of $REPS"
column -s, -t "$speed_csv"
echo "CSV: $speed_csv"
if command -v gnuplot >/dev/null; then
	png=$OUTDIR/bench-backend-$stamp-speedup.png
	# One line per workload and row: column speedup_ROW of the CSV.
	plot=""
	for w in seq stride:16; do
		for r in $others; do
			col=$(head -1 "$speed_csv" | tr ',' '\n' | grep -nx "speedup_$r" | cut -d: -f1)
			[ -n "$col" ] || continue
			awk -F, -v w="$w" -v c="$col" 'NR > 1 && $2 == w && $c != "" { print $1, $c }' \
				"$speed_csv" | sort -n >"$OUTDIR/.speed-$w-$r.dat"
			case $r in
			c0) label="process_madvise (c0)" ;;
			e) label="backend, swapcache (e)" ;;
			ec) label="backend, cache only (ec)" ;;
			*) label=$r ;;
			esac
			plot="$plot\"$OUTDIR/.speed-$w-$r.dat\" using 1:2 with linespoints title \"$w, $label\", "
		done
	done
	gnuplot <<EOF
set terminal pngcairo size 900,560 noenhanced
set output "$png"
set title "leap on the remote swap backend: speedup over Linux readahead"
set xlabel "emulated RTT (us, leap-memd --delay-us)"
set ylabel "wall(readahead) / wall(row)"
set key outside right
set grid
plot $plot 1 with lines dashtype 2 title "readahead"
EOF
	rm -f "$OUTDIR"/.speed-*.dat
	[ -s "$png" ] && echo "plot: $png"
fi
