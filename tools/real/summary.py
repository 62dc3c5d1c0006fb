#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Summary of a tools/bench-real.sh run: medians per program, limit and row,
speedups over row b (Linux readahead), a Markdown table, a CSV and a PNG.

    summary.py --csv RUNS.csv --out DIR [--check --max-slowdown PCT]

Speedup = median time of row b / median time of the row (> 1: faster than
Linux readahead), for the whole run and for each phase the program timed.
Runs with status "oom", "oom-prefetch" or "timeout" are never counted; the
table says how many of each a row lost ("oom-prefetch": an OOM kill the
kernel log shows invoked by the agent's own prefetch charge, counted among
the OOM kills and named apart).  With --check, exits 1 when row c is slower
than row b by more than PCT percent on any program and limit, when row b or
c has no counted run, when row c lost a run to an OOM kill that leap's
prefetch invoked, or when row c lost a run to an OOM kill or to the
timeout while row b (Linux alone, the same program and limit) lost none
that way: only then is the loss proven to be the kernel's, not leap's.
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys

ROW_NAMES = {
    "a": "no prefetch",
    "b": "Linux readahead",
    "b6": "Linux readahead, vm.page-cluster=6",
    "c": "leap + readahead",
    "c6": "leap + readahead, vm.page-cluster=6",
    "c0": "leap alone",
    "cd": "leap + readahead, every stream it serves left to it",
    "cn": "leap + readahead, no MADV_COLD behind fills",
    "o": "observe only (no prefetch, readahead kept)",
    "f": "the agent's set-up only (--policy off)",
    "e": "backend mode (leap-swapd), readahead kept",
    "e0": "backend mode (leap-swapd), readahead off",
    "x": "leap + readahead, the other build (--agent-x)",
}
METRICS = [
    ("swapin_misses", "misses", "{:.0f}"),
    ("prefetched", "prefetched", "{:.0f}"),
    ("wasted", "wasted", "{:.0f}"),
    # faults on swap-cache pages not ours (Linux's readahead, or pages
    # never freed from the swap cache): only with --swap-cache-hits
    ("swap_cache_hits", "swap-cache hits", "{:.0f}"),
    ("agent_user_us_per_event", "agent usr us/ev", "{:.2f}"),
    ("agent_sys_us_per_event", "agent sys us/ev", "{:.2f}"),
    # the agent's CPU apart from process_madvise (the kernel's work for
    # the windows: page allocation, memcg charge and reclaim, reads)
    ("agent_own_us_per_event", "agent own us/ev", "{:.2f}"),
    ("bpf_ns_per_fault", "BPF ns/fault", "{:.0f}"),
    ("reaction_p50_us", "react p50 us", "{:.0f}"),
    ("reaction_p99_us", "react p99 us", "{:.0f}"),
    # the program's own user CPU (the Python programs say it)
    ("user_s", "prog usr s", "{:.2f}"),
    # the swap disk's I/O in the run (bench-real.sh's disk_counts): how
    # the page-ins were read, in how many reads, how large, waiting how long
    ("disk_reads", "disk reads", "{:.0f}"),
    ("disk_read_kib_avg", "read KiB", "{:.1f}"),
    ("disk_read_us_avg", "read us", "{:.0f}"),
    ("disk_writes", "disk writes", "{:.0f}"),
]
# Shown for every row, Linux's included (the rest are the agent's own).
EVERY_ROW = {"swapin_misses", "user_s", "disk_reads", "disk_read_kib_avg",
             "disk_read_us_avg", "disk_writes"}


def med(xs):
    return statistics.median(xs) if xs else None


def phases_of(s):
    out = {}
    for part in filter(None, s.split(";")):
        k, v = part.split("=")
        out[k] = float(v)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--max-slowdown", type=float, default=10.0)
    args = ap.parse_args()

    runs = list(csv.DictReader(open(args.csv)))
    groups = {}
    ooms = {}
    lost = {}  # (program, pct, row) -> {"oom": n, "oom-prefetch": n, "timeout": n}
    bpf_ns = {}
    for r in runs:
        key = (r["program"], int(r["pct"]), r["row"])
        if r["status"] in ("oom", "oom-prefetch", "timeout"):
            ooms[key] = ooms.get(key, 0) + 1  # never counted (bench-real.sh)
            ls = lost.setdefault(key, {"oom": 0, "oom-prefetch": 0, "timeout": 0})
            ls[r["status"]] += 1
            if r["status"] == "oom-prefetch":
                ls["oom"] += 1  # an OOM kill like any other, named apart
            continue
        if r["status"] == "bpfstats":
            # untimed run with BPF statistics on: only its BPF ns per fault counts
            if r["bpf_ns_per_fault"] not in ("", "0"):
                bpf_ns.setdefault(key, []).append(float(r["bpf_ns_per_fault"]))
            continue
        if r["status"] != "ok":
            continue
        groups.setdefault(key, []).append(r)

    cases = sorted({(p, pct) for p, pct, _ in list(groups) + list(ooms)},
                   key=lambda k: (k[0], -k[1]))
    rows_seen = [x for x in ROW_NAMES if any(k[2] == x for k in list(groups) + list(ooms))]
    lines = []
    summary = []
    failed = []
    lines.append("| program | limit | row | runs | time s | vs b | phases (vs b) | "
                 + " | ".join(m[1] for m in METRICS) + " |")
    lines.append("|" + "---|" * (7 + len(METRICS)))
    for p, pct in cases:
        base = groups.get((p, pct, "b"), [])
        bwall = med([float(r["wall_s"]) for r in base])
        bph = {}
        for r in base:
            for k, v in phases_of(r["phases"]).items():
                bph.setdefault(k, []).append(v)
        bph = {k: med(v) for k, v in bph.items()}
        for row in rows_seen:
            g = groups.get((p, pct, row), [])
            n_oom = ooms.get((p, pct, row), 0)
            ls = lost.get((p, pct, row), {"oom": 0, "oom-prefetch": 0, "timeout": 0})
            byus = f" ({ls['oom-prefetch']} invoked by leap's prefetch)" if ls["oom-prefetch"] else ""
            losttxt = f"{ls['oom']} OOM-killed{byus}, {ls['timeout']} past --timeout"
            if args.check and row == "c" and ls["oom-prefetch"]:
                failed.append(f"{p} {pct}% row c: {losttxt}: leap's harm, not the kernel's")
            elif args.check and row == "c":
                bl = lost.get((p, pct, "b"), {"oom": 0, "oom-prefetch": 0, "timeout": 0})
                for kind in ("oom", "timeout"):
                    if ls[kind] and not bl[kind]:
                        failed.append(f"{p} {pct}% row c: {losttxt}, row b (Linux alone) "
                                      f"lost no run that way: not proven the kernel's")
                        break
            if not g:
                note = f"no counted run: {losttxt}" if n_oom else "no run"
                lines.append(f"| {p} | {pct}% | {row} | 0 | {note} |" + " |" * (2 + len(METRICS)))
                if args.check and row in ("b", "c"):
                    failed.append(f"{p} {pct}% row {row}: no counted run ({losttxt})")
                continue
            wall = med([float(r["wall_s"]) for r in g])
            ratio = bwall / wall if bwall and wall else None
            ph = {}
            for r in g:
                for k, v in phases_of(r["phases"]).items():
                    ph.setdefault(k, []).append(v)
            phtxt = " ".join(
                f"{k} {med(v):.2f}" + (f" ({bph[k] / med(v):.2f}x)" if bph.get(k) and med(v) else "")
                for k, v in ph.items())
            vals = []
            rec = {"program": p, "pct": pct, "row": row, "runs": len(g), "oom": n_oom,
                   "oom_killed": ls["oom"], "timed_out": ls["timeout"],
                   "wall_s": wall, "speedup": ratio if ratio else ""}
            for key, _, fmt in METRICS:
                if key == "bpf_ns_per_fault" and (p, pct, row) in bpf_ns:
                    v = med(bpf_ns[(p, pct, row)])
                else:
                    v = med([float(r[key]) for r in g if r.get(key) not in (None, "")])
                rec[key] = v
                vals.append(fmt.format(v) if v is not None and (row in ("c", "c6", "c0", "cd", "cn", "o", "f", "e", "e0", "x") or key in EVERY_ROW) else "")
            for k, v in ph.items():
                rec["phase_" + k] = med(v)
                if bph.get(k):
                    rec["phase_" + k + "_speedup"] = bph[k] / med(v)
            summary.append(rec)
            oomtxt = f" (+{losttxt})" if n_oom else ""
            lines.append(f"| {p} | {pct}% | {row} | {len(g)}{oomtxt} | {wall:.2f} | "
                         + (f"{ratio:.2f}x" if ratio else "-") + f" | {phtxt} | "
                         + " | ".join(vals) + " |")
            if args.check and row == "c" and ratio and ratio < 1 / (1 + args.max_slowdown / 100):
                failed.append(f"{p} {pct}%: leap {wall:.2f}s vs Linux readahead {bwall:.2f}s "
                              f"({ratio:.2f}x, allowed down to "
                              f"{1 / (1 + args.max_slowdown / 100):.2f}x)")

    os.makedirs(args.out, exist_ok=True)
    table = "\n".join(lines)
    print(table)
    with open(os.path.join(args.out, "real-summary.md"), "w") as f:
        f.write(f"Rows: " + ", ".join(f"{k} = {v}" for k, v in ROW_NAMES.items()) + ".\n")
        f.write("vs b = Linux readahead's median time / the row's (> 1: faster).\n\n")
        f.write(table + "\n")
    keys = sorted({k for r in summary for k in r}, key=lambda k: (k not in ("program", "pct", "row"), k))
    with open(os.path.join(args.out, "real-summary.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(summary)
    plot(summary, args.out)

    for msg in failed:
        print(f"bench-real: FAIL {msg}", file=sys.stderr)
    return 1 if failed else 0


def plot(summary, outdir):
    """Speedup over Linux readahead per program and limit, one bar per row."""
    rows = [r for r in ("a", "c", "c0", "e", "e0") if any(s["row"] == r and s["speedup"] for s in summary)]
    cases = []
    for s in summary:
        c = (s["program"], s["pct"])
        if c not in cases:
            cases.append(c)
    if not rows or not cases:
        return
    dat = os.path.join(outdir, "real-speedup.dat")
    with open(dat, "w") as f:
        f.write("case " + " ".join(rows) + "\n")
        for p, pct in cases:
            vals = []
            for r in rows:
                v = [s["speedup"] for s in summary
                     if (s["program"], s["pct"], s["row"]) == (p, pct, r) and s["speedup"]]
                vals.append(f"{v[0]:.3f}" if v else "NaN")
            f.write(f"{p}@{pct}% " + " ".join(vals) + "\n")
    titles = {"a": "no prefetch", "c": "leap + Linux readahead", "c0": "leap alone",
              "e": "backend mode", "e0": "backend mode, readahead off"}
    plots = ", ".join(
        f"'{dat}' using {i + 2}:xtic(1) title '{titles[r]}'" for i, r in enumerate(rows))
    script = f"""
set terminal pngcairo size 1100,480 noenhanced
set output '{os.path.join(outdir, "real-speedup.png")}'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel 'speedup over Linux readahead (x)'
set xtics rotate by -30
set grid ytics
set key top left
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 2
set title 'Real programs: median time of Linux readahead / median time of the row'
plot {plots}
"""
    try:
        subprocess.run(["gnuplot"], input=script, text=True, check=True,
                       capture_output=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"bench-real: no plot ({e})", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
