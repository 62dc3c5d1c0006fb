#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench-host: leap on a host, not a program: N CPython strided scans
# (tools/real/pyscan.py, 256 MiB each, data checked) at once in one cgroup
# of N x 64 MiB under `leap-agent run`, rows interleaved:
#   off      --policy off (the same cgroup and observer, no prefetch):
#            Linux's readahead alone
#   leap     --policy leap, the default workers
#   leap-wK  --policy leap --workers K (each K of --workers)
# Reports the whole run's wall time (the slowest program's), its median
# over --reps and the ratio off / row, with the agent's prefetches, hits,
# late prefetches, reaction p99 and its queue's drops.  Needs root, swap,
# python3; no jq (a machine without a package registry runs it too).
#
#   tools/bench-host.sh [--n "1 2 4 8"] [--reps 3] [--workers "0 4"] [--mib 256]
#                       [--pattern stride:16] [--out FILE.csv]
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
AGENT=${AGENT:-$root/bin/leap-agent}
PY=${PY:-python3}
ns="1 2 4 8" reps=3 workers= mib=256 pattern=stride:16 out=
while [ $# -gt 0 ]; do
	case $1 in
	--n) ns=$2; shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--workers) workers=$2; shift 2 ;;
	--mib) mib=$2; shift 2 ;;
	--pattern) pattern=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h | --help) sed -n '3,18p' "$0"; exit 0 ;;
	*) echo "bench-host: unknown option $1" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "bench-host: needs root" >&2; exit 2; }
[ -x "$AGENT" ] || { echo "bench-host: $AGENT not built" >&2; exit 2; }
awk 'NR > 1' /proc/swaps | grep -q . || { echo "bench-host: no swap on" >&2; exit 2; }
[ -n "$out" ] || { mkdir -p "$root/bench/out" && out=$root/bench/out/host-$(date +%Y%m%d-%H%M%S).csv; }
tmp=$(mktemp -d /tmp/leap-bench-host.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

rows="off leap"
for w in $workers; do rows="$rows leap-w$w"; done
echo "n,row,rep,wall_s,prefetched,hits,late,reaction_p99_us,stale,overflow,bad" >"$out"

# One run of N programs under row $2; appends a CSV line.
run() {
	local n=$1 row=$2 rep=$3 policy=leap wargs=()
	case $row in
	off) policy=off ;;
	leap-w*) wargs=(--workers "${row#leap-w}") ;;
	esac
	"$AGENT" run --memory-limit $((n * 64))M --policy "$policy" "${wargs[@]}" \
		--json "$tmp/run.json" -- sh -c '
			n=$1 py=$2 prog=$3 mib=$4 pat=$5 tmp=$6
			for i in $(seq "$n"); do "$py" "$prog" "$mib" "$pat" >"$tmp/p$i.out" & done
			wait' sh "$n" "$PY" "$root/tools/real/pyscan.py" "$mib" "$pattern" "$tmp" \
		>/dev/null 2>"$tmp/run.err"
	"$PY" - "$tmp/run.json" "$n" "$row" "$rep" "$tmp" >>"$out" <<'EOF'
import glob, json, sys
js, n, row, rep, tmp = sys.argv[1:]
a = json.load(open(js))
bad = 0
for f in glob.glob(tmp + "/p*.out"):
    try:
        bad += json.loads(open(f).read().strip().splitlines()[-1])["bad"]
    except Exception:
        bad += 1
print(",".join(str(x) for x in (n, row, rep, a["wall_s"], a["prefetched"], a["hits"],
    a["late_prefetches"], a["reaction_p99_us"], a.get("windows_stale", 0),
    a.get("windows_overflow", 0), bad)))
EOF
	rm -f "$tmp"/p*.out
}

echo "bench-host: $(uname -r), $(nproc) CPUs, $mib MiB $pattern per program, reps $reps"
for rep in $(seq "$reps"); do
	for n in $ns; do
		for row in $rows; do
			run "$n" "$row" "$rep"
		done
	done
done

"$PY" - "$out" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def med(xs):
    return statistics.median(xs) if xs else float("nan")
print("%-3s %-9s %8s %7s %9s %9s %8s %9s %7s %8s %4s" % ("n", "row", "wall_s", "vs_off",
      "prefetch", "hits", "late", "p99_us", "stale", "overflow", "bad"))
for n in sorted({int(r["n"]) for r in rows}):
    g = [r for r in rows if int(r["n"]) == n]
    off = med([float(r["wall_s"]) for r in g if r["row"] == "off"])
    for row in dict.fromkeys(r["row"] for r in g):
        h = [r for r in g if r["row"] == row]
        w = med([float(r["wall_s"]) for r in h])
        print("%-3d %-9s %8.2f %7.2f %9d %9d %8d %9.0f %7d %8d %4d" % (n, row, w, off / w,
              med([int(r["prefetched"]) for r in h]), med([int(r["hits"]) for r in h]),
              med([int(r["late"]) for r in h]), med([float(r["reaction_p99_us"]) for r in h]),
              med([int(r["stale"]) for r in h]), med([int(r["overflow"]) for r in h]),
              sum(int(r["bad"]) for r in h)))
EOF
echo "bench-host: runs in $out"
