#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Sweeps leap-sim over local memory sizes for several policies on one
# synthetic pattern; writes a CSV and (with gnuplot) a PNG of coverage and
# estimated time against memory size.  See docs/sim.md.
set -euo pipefail

usage() {
	cat <<USAGE
usage: $0 [-o DIR] [-t PATTERN] [-n PAGES] [-P PASSES] [-p POLICIES] [-m "PCTS"] [-s SEED]
  -o DIR       output directory (default bench/out in the source tree)
  -t PATTERN   leap-tracegen pattern (default stride:8)
  -n PAGES     footprint in pages (default 32768)
  -P PASSES    passes over the pattern (default 3)
  -p POLICIES  comma-separated leap-sim policies (default none,linux,linux-cluster,leap)
  -m PCTS      memory sizes in % of the footprint (default "10 20 ... 90 100")
  -s SEED      generator seed (default 1)
  -b BINDIR    where leap-sim and leap-tracegen are (default: bin/ next to tools/)
Writes DIR/sweep-PATTERN.csv and DIR/sweep-PATTERN.png.
USAGE
}

here=$(cd "$(dirname "$0")/.." && pwd)
out=$here/bench/out pattern=stride:8 pages=32768 passes=3 seed=1
policies=none,linux,linux-cluster,leap
pcts="10 20 30 40 50 60 70 80 90 100"
bindir=$here/bin
while getopts "o:t:n:P:p:m:s:b:h" opt; do
	case $opt in
	o) out=$OPTARG ;;
	t) pattern=$OPTARG ;;
	n) pages=$OPTARG ;;
	P) passes=$OPTARG ;;
	p) policies=$OPTARG ;;
	m) pcts=$OPTARG ;;
	s) seed=$OPTARG ;;
	b) bindir=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
for b in leap-sim leap-tracegen; do
	[ -x "$bindir/$b" ] || { echo "sim-sweep: $bindir/$b missing (run make)" >&2; exit 1; }
done

mkdir -p "$out"
name=sweep-${pattern//[^A-Za-z0-9_-]/-}
csv=$out/$name.csv png=$out/$name.png
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bindir/leap-tracegen" --pattern "$pattern" --pages "$pages" --passes "$passes" \
	--seed "$seed" --format bin -o "$tmp/trace.bin"

# leap-sim's CSV with the pattern and memory % in front of every row.
first=1
for pct in $pcts; do
	"$bindir/leap-sim" --policy "$policies" --memory "$pct%" --csv "$tmp/trace.bin" >"$tmp/run.csv"
	if [ $first = 1 ]; then
		echo "pattern,memory_pct,$(head -n 1 "$tmp/run.csv")" >"$csv"
		first=0
	fi
	tail -n +2 "$tmp/run.csv" | sed "s/^/$pattern,$pct,/" >>"$csv"
done
echo "sim-sweep: wrote $csv"

if ! command -v gnuplot >/dev/null; then
	echo "sim-sweep: gnuplot not installed, no PNG" >&2
	exit 0
fi
# One data file per policy, so each curve is one connected line.
header=$(head -n 1 "$csv")
col() { echo "$header" | tr ',' '\n' | grep -nx "$1" | cut -d: -f1; }
c_pct=$(col memory_pct) c_pol=$(col policy) c_cov=$(col coverage) c_time=$(col est_time_us)
plots_cov='' plots_time=''
for p in ${policies//,/ }; do
	awk -F, -v c="$c_pol" -v p="$p" 'NR > 1 && $c == p' "$csv" >"$tmp/$p.dat"
	plots_cov+="${plots_cov:+, }'$tmp/$p.dat' using $c_pct:(100*\$$c_cov) with linespoints title '$p'"
	plots_time+="${plots_time:+, }'$tmp/$p.dat' using $c_pct:(\$$c_time/1000) with linespoints title '$p'"
done
gnuplot <<GNUPLOT
set terminal pngcairo size 1100,450 noenhanced
set output '$png'
set datafile separator ','
set multiplot layout 1,2 title '$pattern, $pages pages x $passes passes (leap-sim)'
set xlabel 'local memory (% of footprint)'
set grid
set key below
set ylabel 'coverage (% of faults served by prefetch)'
set yrange [0:105]
plot $plots_cov
set ylabel 'estimated fault time (ms)'
set yrange [0:*]
plot $plots_time
unset multiplot
GNUPLOT
echo "sim-sweep: wrote $png"
