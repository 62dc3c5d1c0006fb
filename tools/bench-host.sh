#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench-host: leap on a host, not a program: N CPython strided scans
# (tools/real/pyscan.py, 256 MiB each, data checked) at once, in one of
# two layouts (--layout, either or both):
#   one       one cgroup of N x 64 MiB under `leap-agent run`;
#   siblings  N sibling cgroups of 64 MiB each under one parent, the
#             parent watched by one `leap-agent attach --cgroup` (cgroup
#             v2 memory.max, or the v1 controller's limit on a hybrid host)
# and these rows, interleaved:
#   off      Linux's readahead alone: --policy off under run (the same
#            cgroup and observer, no prefetch); no agent at all in siblings
#   leap     leap, the default workers
#   leap-wK  leap with --workers K (each K of --workers)
# Reports the whole run's wall time (from the programs' start to the last
# one's end), its median over --reps and the ratio off / row, with the
# agent's prefetches, hits, late prefetches, reaction p99 (fault to the
# window's process_madvise returned), dispatch p99 (fault to it entered)
# and its queue's drops, and how busy the CPUs were over the programs' run
# (busy%: not idle nor in iowait, of all CPUs; iowt%: in iowait): a row at
# ~100% busy is bound by the CPUs, not by the agent's reaction.  The CSV
# also has the pages swapped in and out and the disks' reads, writes and
# read wait over the run; the table shows them as the disks' I/Os per
# second (kio/s) and a read's mean wait (rd_us): a row near the disk's
# ceiling of I/Os is bound by the disk.  Needs root, swap, python3; no jq
# (a machine without a package registry runs it too).
#
#   tools/bench-host.sh [--n "1 2 4 8"] [--reps 3] [--workers "0 4"] [--mib 256]
#                       [--layout "one siblings"] [--pattern stride:16] [--out FILE.csv]
#   tools/bench-host.sh --summary FILE.csv...   the table and plot of earlier runs
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
AGENT=${AGENT:-$root/bin/leap-agent}
PY=${PY:-python3}
ns="1 2 4 8" reps=3 workers='' mib=256 pattern=stride:16 out='' layouts=one summary=''
while [ $# -gt 0 ]; do
	case $1 in
	--n) ns=$2; shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--workers) workers=$2; shift 2 ;;
	--mib) mib=$2; shift 2 ;;
	--layout) layouts=$2; shift 2 ;;
	--pattern) pattern=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--summary) summary=1; shift; break ;;
	-h | --help) awk 'NR > 2 && /^#/ { print; next } NR > 2 { exit }' "$0"; exit 0 ;;
	*) echo "bench-host: unknown option $1" >&2; exit 2 ;;
	esac
done
# The table of the runs in the CSV files given (medians per layout, N and
# row) and a plot of the gain against N beside the first.
summarize() {
	"$PY" - "$@" <<'EOF'
import csv, statistics, subprocess, sys
files = sys.argv[1:]
out = files[0]
rows, machines = [], []
# Each file's runs carry its machine line (kernel, CPUs, swap): runs of
# different machines or swap devices are grouped apart.
for name in files:
    machine = "machine not recorded"
    with open(name) as f:
        lines = f.readlines()
    for l in lines:
        if l.startswith("# machine: "):
            machine = l[11:].strip()
    if machine not in machines:
        machines.append(machine)
    for r in csv.DictReader(l for l in lines if not l.startswith("#")):
        r["machine"] = machine
        rows.append(r)
# The disks' I/Os of a run and their reads' mean wait (nan in older files).
def disk_ios(r):
    return float(r.get("disk_reads") or "nan") + float(r.get("disk_writes") or "nan")
def read_wait_us(r):
    reads = float(r.get("disk_reads") or 0)
    return 1e3 * float(r.get("read_wait_ms") or 0) / reads if reads else float("nan")
def med(xs):
    return statistics.median(xs) if xs else float("nan")
gain = {}  # (machine, layout, row) -> [(n, off / row)]
for machine in machines:
    print(machine)
    print("%-8s %-3s %-9s %8s %7s %9s %9s %8s %9s %9s %7s %8s %4s %5s %6s %7s %6s" % ("layout", "n",
          "row", "wall_s", "vs_off", "prefetch", "hits", "late", "p99_us", "disp99_us", "stale",
          "overflow", "bad", "busy%", "iowt%", "kio/s", "rd_us"))
    mrows = [r for r in rows if r["machine"] == machine]
    for layout, n in sorted({(r["layout"], int(r["n"])) for r in mrows}):
        g = [r for r in mrows if r["layout"] == layout and int(r["n"]) == n]
        off = med([float(r["wall_s"]) for r in g if r["row"] == "off"])
        for row in dict.fromkeys(r["row"] for r in g):
            h = [r for r in g if r["row"] == row]
            w = med([float(r["wall_s"]) for r in h])
            if row != "off":
                gain.setdefault((machine, layout, row), []).append((n, off / w))
            print("%-8s %-3d %-9s %8.2f %7.2f %9d %9d %8d %9.0f %9.0f %7d %8d %4d %5.0f %6.0f %7.1f %6.0f" % (
                  layout, n, row, w, off / w, med([int(r["prefetched"]) for r in h]),
                  med([int(r["hits"]) for r in h]), med([int(r["late"]) for r in h]),
                  med([float(r["reaction_p99_us"]) for r in h]),
                  med([float(r.get("dispatch_p99_us") or 0) for r in h]),
                  med([int(r["stale"]) for r in h]), med([int(r["overflow"]) for r in h]),
                  sum(int(r["bad"]) for r in h),
                  med([float(r.get("cpu_busy_pct") or "nan") for r in h]),
                  med([float(r.get("iowait_pct") or "nan") for r in h]),
                  med([disk_ios(r) / float(r["wall_s"]) / 1e3 for r in h]),
                  med([read_wait_us(r) for r in h])))

# The gain against N, one line per machine, layout and row (gnuplot, if
# installed), beside the first CSV.
if gain:
    dat = out.rsplit(".", 1)[0] + "-gain.dat"
    png = out.rsplit(".", 1)[0] + "-gain.png"
    with open(dat, "w") as f:
        for key, pts in gain.items():
            f.write("# %s\n" % " / ".join(key))
            for n, g in pts:
                f.write(f"{n} {g:.3f}\n")
            f.write("\n\n")
    def title(machine, layout, row):
        t = f"{layout}, {row}"
        if len(machines) > 1:
            t += ": " + machine.rsplit(", ", 1)[-1]
        return t
    plots = ", ".join(f"'{dat}' index {i} with linespoints lw 2 title '{title(*key)}'"
                      for i, key in enumerate(gain))
    common = machines[0].rsplit(", ", 1)[0] if len(machines) > 1 else machines[0]
    script = f"""
set terminal pngcairo size 800,480 noenhanced
set output '{png}'
set logscale x 2
set yrange [0:*]
set xlabel 'programs at once (N)'
set ylabel 'gain over Linux readahead (x)'
set grid
set key bottom left
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 2
set title "N CPython strided scans at once, median off / median row\\n{common}"
plot {plots}
"""
    try:
        subprocess.run(["gnuplot"], input=script, text=True, check=True, capture_output=True)
        print(f"bench-host: plot in {png}")
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"bench-host: no plot ({e})", file=sys.stderr)
EOF
}

if [ -n "$summary" ]; then
	[ $# -gt 0 ] || { echo "bench-host: --summary takes CSV files" >&2; exit 2; }
	summarize "$@"
	exit
fi
for l in $layouts; do
	case $l in
	one | siblings) ;;
	*) echo "bench-host: --layout takes one and/or siblings, not '$l'" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "bench-host: needs root" >&2; exit 2; }
[ -x "$AGENT" ] || { echo "bench-host: $AGENT not built" >&2; exit 2; }
awk 'NR > 1' /proc/swaps | grep -q . || { echo "bench-host: no swap on" >&2; exit 2; }
[ -n "$out" ] || { mkdir -p "$root/bench/out" && out=$root/bench/out/host-$(date +%Y%m%d-%H%M%S).csv; }
tmp=$(mktemp -d /tmp/leap-bench-host.XXXXXX)
agent_pid=
# The siblings' cgroups: v2 directories (memory.max where the v2 hierarchy
# has the memory controller), and v1 ones for the limit on a hybrid host.
cg_name=leap-bench-host-$$
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	cg2=/sys/fs/cgroup/$cg_name cg1=
else
	cg2=/sys/fs/cgroup/unified/$cg_name cg1=/sys/fs/cgroup/memory/$cg_name
fi
cg_remove() {
	local d i
	for d in "$cg2"/c* ${cg1:+"$cg1"/c*} "$cg2" ${cg1:+"$cg1"}; do
		[ -d "$d" ] || continue
		for i in $(seq 50); do
			# shellcheck disable=SC2046
			kill -KILL $(cat "$d/cgroup.procs" 2>/dev/null) 2>/dev/null
			rmdir "$d" 2>/dev/null && break
			sleep 0.1
		done
	done
}
cleanup() {
	[ -n "$agent_pid" ] && kill -INT "$agent_pid" 2>/dev/null && wait "$agent_pid"
	cg_remove
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# What the CPUs and the swap have done so far, in the file $1: /proc/stat's
# first line; pages swapped in and out (/proc/vmstat); reads, writes and
# the reads' summed wait in ms of the block devices but loop ones
# (Documentation/block/stat.rst): the swap's device counts there.
cat >"$tmp/snap" <<'EOF'
#!/bin/sh
{
	head -n 1 /proc/stat
	awk '/^pswpin /{i=$2} /^pswpout /{o=$2} END{print "swap", i, o}' /proc/vmstat
	for d in /sys/block/*; do
		case ${d##*/} in loop* | ram*) ;; *) cat "$d/stat" ;; esac
	done | awk '{r += $1; ms += $4; w += $5} END {print "disk", r, w, ms}'
} >"$1"
EOF
chmod +x "$tmp/snap"

rows="off leap"
for w in $workers; do rows="$rows leap-w$w"; done
{
	echo "# machine: $(uname -r), $(nproc) CPUs, swap on $(awk 'NR > 1 {
		n = $1; sub(".*/", "", n); printf "%s%s (%s)", sep, n, $2; sep = " + " }' /proc/swaps)," \
		"swap readahead $("$AGENT" status 2>/dev/null | sed -n 's/^swap readahead: *//p')"
	echo "layout,n,row,rep,wall_s,prefetched,hits,late,reaction_p99_us,stale,overflow,bad,dispatch_p99_us,cpu_busy_pct,iowait_pct,pswpin,pswpout,disk_reads,disk_writes,read_wait_ms"
} >"$out"

# Appends the CSV line of one run: the agent's JSON (none: no agent) and
# the programs' own verdicts (pyscan.py's last line).
record() {
	"$PY" - "$tmp/run.json" "$@" "$tmp" >>"$out" <<'EOF'
import glob, json, os, sys
js, layout, n, row, rep, wall, tmp = sys.argv[1:]
a = json.load(open(js)) if os.path.exists(js) else {}
# The CPUs over the programs' run (/proc/stat's first line before and
# after): busy = not idle nor waiting for I/O, as a share of all CPUs.
# The swap's pages and the disks' I/Os between the same two points.
busy = iowait = 0.0
io = [0] * 5
try:
    snaps = [open(f"{tmp}/{w}.stat").read().splitlines() for w in ("start", "end")]
    t0, t1 = ([int(x) for x in lines[0].split()[1:9]] for lines in snaps)
    d = [y - x for x, y in zip(t0, t1)]
    total = sum(d)
    busy = 100.0 * (total - d[3] - d[4]) / total
    iowait = 100.0 * d[4] / total
    c0, c1 = ([int(x) for l in lines[1:] for x in l.split()[1:]] for lines in snaps)
    io = [y - x for x, y in zip(c0, c1)]
except Exception:
    pass
if wall == "-":
    wall = a.get("wall_s", 0)
bad = 0
for f in glob.glob(tmp + "/p*.out"):
    try:
        bad += json.loads(open(f).read().strip().splitlines()[-1])["bad"]
    except Exception:
        bad += 1
print(",".join(str(x) for x in (layout, n, row, rep, wall, a.get("prefetched", 0),
    a.get("hits", 0), a.get("late_prefetches", 0), a.get("reaction_p99_us", 0),
    a.get("windows_stale", 0), a.get("windows_overflow", 0), bad, a.get("dispatch_p99_us", 0),
    f"{busy:.1f}", f"{iowait:.1f}", *io)))
EOF
	rm -f "$tmp"/p*.out "$tmp/run.json" "$tmp"/*.stat
}

# One run of N programs in one cgroup under `leap-agent run`, row $2.
run_one() {
	local n=$1 row=$2 rep=$3 policy=leap wargs=()
	case $row in
	off) policy=off ;;
	leap-w*) wargs=(--workers "${row#leap-w}") ;;
	esac
	"$AGENT" run --memory-limit $((n * 64))M --policy "$policy" "${wargs[@]}" \
		--json "$tmp/run.json" -- sh -c '
			n=$1 py=$2 prog=$3 mib=$4 pat=$5 tmp=$6
			"$tmp/snap" "$tmp/start.stat"
			for i in $(seq "$n"); do "$py" "$prog" "$mib" "$pat" >"$tmp/p$i.out" & done
			wait
			"$tmp/snap" "$tmp/end.stat"' sh "$n" "$PY" "$root/tools/real/pyscan.py" "$mib" "$pattern" "$tmp" \
		>/dev/null 2>"$tmp/run.err"
	record one "$n" "$row" "$rep" -
}

# One run of N programs in N sibling cgroups, the parent watched by one
# `leap-agent attach` (no agent for off), row $2.
run_siblings() {
	local n=$1 row=$2 rep=$3 wargs=() i t0 t1 pids=()
	case $row in
	leap-w*) wargs=(--workers "${row#leap-w}") ;;
	esac
	mkdir -p "$cg2" ${cg1:+"$cg1"} || exit 1
	if [ -z "$cg1" ]; then
		grep -qw memory /sys/fs/cgroup/cgroup.subtree_control ||
			echo +memory >/sys/fs/cgroup/cgroup.subtree_control || exit 1
		echo +memory >"$cg2/cgroup.subtree_control" || exit 1
	fi
	for i in $(seq "$n"); do
		mkdir "$cg2/c$i" || exit 1
		if [ -n "$cg1" ]; then
			mkdir "$cg1/c$i" && echo 64M >"$cg1/c$i/memory.limit_in_bytes" &&
				echo 60 >"$cg1/c$i/memory.swappiness" || exit 1
		else
			echo 64M >"$cg2/c$i/memory.max" || exit 1
		fi
	done
	if [ "$row" != off ]; then
		"$AGENT" attach --cgroup "$cg2" "${wargs[@]}" --json "$tmp/run.json" \
			>/dev/null 2>"$tmp/run.err" &
		agent_pid=$!
		for i in $(seq 100); do
			grep -q "attached to" "$tmp/run.err" && break
			kill -0 "$agent_pid" 2>/dev/null || break
			sleep 0.1
		done
		grep -q "attached to" "$tmp/run.err" || {
			echo "bench-host: the agent did not attach:" >&2
			cat "$tmp/run.err" >&2
			exit 1
		}
	fi
	t0=$(date +%s%N)
	"$tmp/snap" "$tmp/start.stat"
	for i in $(seq "$n"); do
		# shellcheck disable=SC2016 # $$ and $1 are the child shell's
		sh -c 'for f in "$1" "$2"; do [ -z "$f" ] || echo $$ >"$f/cgroup.procs"; done
			shift 2; exec "$@"' sh "$cg2/c$i" "${cg1:+$cg1/c$i}" \
			"$PY" "$root/tools/real/pyscan.py" "$mib" "$pattern" >"$tmp/p$i.out" &
		pids+=($!)
	done
	wait "${pids[@]}"
	t1=$(date +%s%N)
	"$tmp/snap" "$tmp/end.stat"
	if [ -n "$agent_pid" ]; then
		kill -INT "$agent_pid"
		wait "$agent_pid"
		agent_pid=
	fi
	cg_remove
	record siblings "$n" "$row" "$rep" "$(awk -v a="$t0" -v b="$t1" \
		'BEGIN { printf "%.3f", (b - a) / 1e9 }')"
}

echo "bench-host: $(uname -r), $(nproc) CPUs, $mib MiB $pattern per program," \
	"reps $reps, layouts $layouts"
for rep in $(seq "$reps"); do
	for n in $ns; do
		for layout in $layouts; do
			for row in $rows; do
				"run_$layout" "$n" "$row" "$rep"
			done
		done
	done
done

summarize "$out"
echo "bench-host: runs in $out"
