#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The README's results table, made from one tools/bench-real.sh run.

    readme-table.py write --csv RUNS.csv --command CMD [--skipped "P: why;..."]
                          [--readme README.md] [--results docs/results]
    readme-table.py check [--readme README.md] [--results docs/results]
    readme-table.py remake [--readme README.md] [--results docs/results]

write copies the run's CSV to RESULTS/bench-real.csv, writes what the
table says about the run beside it (RESULTS/bench-real.json: the date,
the machine, the command, the programs left out and why), and puts the
table between the README's markers.  check makes the table again from
those two files and exits 1 unless the README holds exactly that: the
table is what the command measured, not numbers typed in
(tests/sys/readme-table.t).  remake writes the table again from those
two files (after a change to this script's columns; the run stays the one
kept).

A program's ratio is Linux readahead's median time over leap's (row b over
row c, > 1: leap is faster), for the whole run and for each phase the
program times; runs lost to an OOM kill or the run limit are not counted
and are said.  Beside the ratio, two columns say how far to trust it:
Linux's own spread (its slowest run less its fastest, over its median): a
ratio that far from 1 may be the machine, not leap; and the share of the
program's page-ins leap's prefetches served (the agent's coverage, median
of its runs): where it is about 0, leap stood aside and the ratio can only
be the agent's observation cost or noise.
"""
import argparse
import csv
import datetime
import json
import os
import platform
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summary import med, phases_of  # noqa: E402 (bench-real's summary, beside this)

BEGIN = "<!-- bench-real table: made by `make bench-real` (tools/real/readme-table.py); do not edit -->"
END = "<!-- bench-real table end -->"

# What each program is, in the table's words, in the table's order.
PROGRAMS = [
    ("py-stride", "CPython: strided scan of a bytearray (16 pages)"),
    ("perl-stride", "Perl: strided scan of a string (8 pages)"),
    ("py-shm-stride", "CPython: the strided scan over shared memory"),
    ("numpy", "numpy: column sums, strided slice, transpose"),
    ("py-seq", "CPython: sequential scan"),
    ("py-reverse", "CPython: backward scan"),
    ("py-shm-seq", "CPython: sequential scan of shared memory"),
    ("py-random", "CPython: random half of the pages"),
    ("java-gc", "OpenJDK G1: full collection, walk of the links"),
    ("node-gc", "Node.js V8: the same"),
    ("sqlite", "SQLite: load, full scan, ORDER BY, index"),
    ("sqlite-rev", "SQLite: table read by descending key"),
    ("sqlite-index", "SQLite: table read in an index's order"),
    ("sqlite-point", "SQLite: look-ups of random keys"),
    ("np-dot", "numpy: a . b (two arrays in lock-step)"),
    ("pagerank", "numpy: PageRank over an edge list"),
    ("pg-index", "PostgreSQL: buffer pool, table in key order through its index"),
    ("pg-seqscan", "PostgreSQL: buffer pool, parallel sequential scan (3 processes)"),
    ("pg-point", "PostgreSQL: buffer pool, look-ups of random keys"),
    ("kv-snapshot", "Redis: snapshot (BGSAVE: a forked child walks every key)"),
    ("kv-get", "Redis: GETs of random keys"),
    ("kv-scan", "Redis: cursor scan of the whole keyspace"),
    ("sort", "GNU sort, its input in one in-memory buffer"),
]


def table(runs, meta):
    """The Markdown the README holds between its markers."""
    ok, lost, pcts = {}, {}, set()
    for r in runs:
        if r["rep"] == "0":  # the untimed run with BPF statistics on
            continue
        key = (r["program"], r["row"])
        pcts.add(r["pct"])
        if r["status"] in ("oom", "oom-prefetch", "timeout"):
            lost[key] = lost.get(key, 0) + 1
        elif r["status"] == "ok":
            ok.setdefault(key, []).append(r)
    reps = max((len(v) + lost.get(k, 0) for k, v in ok.items()), default=0)
    lines = [
        f"Made by `{meta['command']}` on {meta['date']}, {meta['machine']}: "
        f"each program at {'/'.join(sorted(pcts))}% of its own peak memory, "
        f"medians of {reps} interleaved runs a row. Linux s: the median time with "
        "Linux's readahead alone (vm.page-cluster 3); leap: that over the median "
        "with `leap-agent run` (> 1: faster). Linux's spread: its slowest run less its "
        "fastest, over its median (a ratio within it may be the machine's noise); "
        "served: the share of the program's page-ins that leap's prefetches served "
        "(near 0: leap stood aside). Raw runs: "
        "[docs/results/bench-real.csv](docs/results/bench-real.csv); dates, "
        "spreads and history: the [run log](docs/bench-real.md#run-log).",
        "",
        "| program | what it does | Linux s | Linux's spread | leap | served | phases, leap "
        "| runs Linux / leap |",
        "|---|---|---|---|---|---|---|---|",
    ]
    known = dict(PROGRAMS)
    order = [p for p, _ in PROGRAMS] + sorted(
        {r["program"] for r in runs} - set(known))
    skipped = dict(meta.get("skipped", {}))
    for p in order:
        what = known.get(p, p)
        if p in skipped:
            lines.append(f"| {p} | {what} | not run: {skipped[p]} | | | | | |")
            continue
        b, c = ok.get((p, "b"), []), ok.get((p, "c"), [])
        if not b and not c and not lost.get((p, "b")) and not lost.get((p, "c")):
            continue
        runs_txt = " / ".join(
            f"{len(g)}" + (f" (+{lost[(p, row)]} lost)" if lost.get((p, row)) else "")
            for row, g in (("b", b), ("c", c)))
        if not b or not c:
            lines.append(f"| {p} | {what} | no counted run | | | | | {runs_txt} |")
            continue
        bws = [float(r["wall_s"]) for r in b]
        bw = med(bws)
        cw = med([float(r["wall_s"]) for r in c])
        spread = (max(bws) - min(bws)) / bw if bw else 0
        served = med([float(r.get("coverage") or 0) for r in c])
        bph, cph = {}, {}
        for rs, into in ((b, bph), (c, cph)):
            for r in rs:
                for k, v in phases_of(r["phases"]).items():
                    into.setdefault(k, []).append(v)
        phtxt = ", ".join(f"{k} {med(bph[k]) / med(v):.2f}x" for k, v in cph.items()
                          if bph.get(k) and med(v))
        lines.append(f"| {p} | {what} | {bw:.2f} | {100 * spread:.0f}% | **{bw / cw:.2f}x** "
                     f"| {100 * served:.0f}% | {phtxt} | {runs_txt} |")
    return "\n".join(lines) + "\n"


def machine():
    cores = os.cpu_count()
    with open("/proc/meminfo") as f:
        kib = int(next(line for line in f if line.startswith("MemTotal")).split()[1])
    return f"{cores} CPUs, {kib / 1048576:.0f} GiB, Linux {platform.release()}, swap file"


def read_results(results):
    with open(os.path.join(results, "bench-real.csv")) as f:
        runs = list(csv.DictReader(f))
    with open(os.path.join(results, "bench-real.json")) as f:
        meta = json.load(f)
    return runs, meta


def readme_block(text):
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        return None
    a = text.index(BEGIN) + len(BEGIN) + 1
    return a, text.index(END)


def put_table(readme, text, where, block):
    """Writes text to readme with block between the markers (where)."""
    with open(readme, "w") as f:
        f.write(text[:where[0]] + block + text[where[1]:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("action", choices=("write", "check", "remake"))
    ap.add_argument("--csv")
    ap.add_argument("--command", default="make bench-real")
    ap.add_argument("--skipped", default="", help='"PROGRAM: why; ..."')
    ap.add_argument("--readme", default="README.md")
    ap.add_argument("--results", default="docs/results")
    args = ap.parse_args()

    with open(args.readme) as f:
        text = f.read()
    where = readme_block(text)
    if where is None:
        print(f"readme-table: {args.readme} needs one pair of markers:\n{BEGIN}\n{END}",
              file=sys.stderr)
        return 2
    if args.action in ("check", "remake"):
        runs, meta = read_results(args.results)
        want = table(runs, meta)
        if args.action == "remake":
            put_table(args.readme, text, where, want)
            print(f"readme-table: {args.readme}'s table made again from {args.results}")
            return 0
        if text[where[0]:where[1]] != want:
            print(f"readme-table: {args.readme}'s table is not the one {args.results}'s "
                  "run makes (run `make bench-real`, or edit neither by hand)", file=sys.stderr)
            return 1
        return 0

    if not args.csv:
        ap.error("write needs --csv")
    skipped = {}
    for part in filter(None, (x.strip() for x in args.skipped.split(";"))):
        p, _, why = part.partition(":")
        skipped[p.strip()] = why.strip()
    meta = {"date": datetime.date.today().isoformat(), "machine": machine(),
            "command": args.command, "csv": os.path.basename(args.csv), "skipped": skipped}
    os.makedirs(args.results, exist_ok=True)
    shutil.copyfile(args.csv, os.path.join(args.results, "bench-real.csv"))
    with open(os.path.join(args.results, "bench-real.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    runs, meta = read_results(args.results)
    put_table(args.readme, text, where, table(runs, meta))
    print(f"readme-table: {args.readme}'s table written from {args.csv} "
          f"(kept as {args.results}/bench-real.csv)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
