#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""SQLite with pages of rows (Python's sqlite3 module, Debian's
libsqlite3), for tools/bench-real.sh: a table of ~4 KiB rows built in an
in-memory database whose page cache holds it all, then read two ways.

    sqlite4k.py MIB [PHASE[,PHASE...]] [ROUNDS] [SECONDS]

Phases: load (MIB MiB of rows, one row a page or so), then in the order
given (default reverse,point; "both" is that too): reverse (the whole
table read by descending primary key: SQLite walks its B-tree backwards,
a backward stream of pages), point (look-ups of a fixed-seed random tenth
of the keys: random page-ins), index (the whole table read in the order
of an index on the first KEY_BYTES of each row, built by the load when the
phase is asked for: SQLite walks the index's leaves, four entries a page,
and fetches each row from the table by its rowid, so the page-ins are two
ascending streams in turns, the index's and the table's, as in a
database server's index-order scan), stride (every key looked up by
primary key, every STRIDE-th in turn: a strided walk over the table's
pages, which Linux's readahead does not follow).  Each phase runs ROUNDS times over
(default 1), and again until it has run SECONDS (default 0): a service's
steady stream of queries.  Every row read is checked against what the
load wrote; exits 3 on a mismatch.  Prints one JSON line with the phase
times and rounds.
"""
import json
import random
import resource
import sqlite3
import sys
import time

ROW_BYTES = 3900  # payload per row: with SQLite's overhead, one 4 KiB page
KEY_BYTES = 900  # index key: four entries to an index page
STRIDE = 16  # the stride phase's step, in rows (pages)


def user_cpu_s():
    """The program's user-mode CPU time, all threads (bench-real's user_s):
    a prefetcher's cross-CPU work on its memory shows up here."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_utime


def payload(i):
    head = f"{i:016x}"
    return head + head[::-1] * ((ROW_BYTES - 16) // 16)


def reverse_scan(db, n):
    """Rows read backwards; the mismatches."""
    bad = 0
    expect = n - 1
    for i, v in db.execute("SELECT id, v FROM t ORDER BY id DESC"):
        if i != expect or v != payload(i):
            bad += 1
        expect -= 1
    return bad + (expect != -1)


def index_scan(db, n):
    """Rows read in index order (the index's order is the rowid's); the
    mismatches."""
    bad = 0
    expect = 0
    for i, v in db.execute(
        f"SELECT id, v FROM t INDEXED BY tk WHERE substr(v, 1, {KEY_BYTES}) >= '' "
        f"ORDER BY substr(v, 1, {KEY_BYTES})"
    ):
        if i != expect or v != payload(i):
            bad += 1
        expect += 1
    return bad + (expect != n)


def stride_lookups(db, n, k=STRIDE):
    """Every key looked up once, every k-th key in turn (0, k, 2k, ...,
    then 1, k+1, ...): a strided walk over the table's pages; the
    mismatches."""
    bad = 0
    for i in (j for s in range(k) for j in range(s, n, k)):
        row = db.execute("SELECT v FROM t WHERE id = ?", (i,)).fetchone()
        if row is None or row[0] != payload(i):
            bad += 1
    return bad


def point_lookups(db, n, rng):
    """A random tenth of the keys looked up; the mismatches."""
    bad = 0
    for i in (rng.randrange(n) for _ in range(n // 10)):
        row = db.execute("SELECT v FROM t WHERE id = ?", (i,)).fetchone()
        if row is None or row[0] != payload(i):
            bad += 1
    return bad


def main():
    mib = int(sys.argv[1])
    what = sys.argv[2] if len(sys.argv) > 2 else "both"
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
    phases = ["reverse", "point"] if what == "both" else what.split(",")
    for ph in phases:
        if ph not in ("reverse", "point", "index", "stride"):
            raise SystemExit(f"sqlite4k: unknown phase {ph}")
    n = (mib << 20) // 4096
    t = {}
    done = {}
    t0 = time.monotonic()
    db = sqlite3.connect(":memory:")
    db.execute("PRAGMA page_size=4096")
    db.execute(f"PRAGMA cache_size=-{mib * 2 * 1024}")  # KiB: never evict
    db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
    db.executemany("INSERT INTO t VALUES(?,?)", ((i, payload(i)) for i in range(n)))
    if "index" in phases:
        db.execute(f"CREATE INDEX tk ON t(substr(v, 1, {KEY_BYTES}))")
    db.commit()
    t["load"] = time.monotonic() - t0
    bad = 0
    rng = random.Random(11)
    for ph in phases:
        t0 = time.monotonic()
        r = 0
        while r < rounds or time.monotonic() - t0 < seconds:
            if ph == "reverse":
                bad += reverse_scan(db, n)
            elif ph == "index":
                bad += index_scan(db, n)
            elif ph == "stride":
                bad += stride_lookups(db, n)
            else:
                bad += point_lookups(db, n, rng)
            r += 1
        t[ph] = time.monotonic() - t0
        done[ph] = r
    print(json.dumps({"phases": t, "rounds": done, "rows": n, "bad": bad,
                      "user_s": user_cpu_s()}))
    sys.exit(3 if bad else 0)


main()
