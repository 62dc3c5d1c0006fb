#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""SQLite with pages of rows (Python's sqlite3 module, Debian's
libsqlite3), for tools/bench-real.sh: a table of ~4 KiB rows built in an
in-memory database whose page cache holds it all, then read two ways.

    sqlite4k.py MIB [reverse|point|both]

Phases: load (MIB MiB of rows, one row a page or so), reverse (the whole
table read by descending primary key: SQLite walks its B-tree backwards,
a backward stream of pages), point (look-ups of a fixed-seed random tenth
of the keys: random page-ins).  Every row read is checked against what
the load wrote; exits 3 on a mismatch.  Prints one JSON line with the
phase times.
"""
import json
import random
import sqlite3
import sys
import time

ROW_BYTES = 3900  # payload per row: with SQLite's overhead, one 4 KiB page


def payload(i):
    head = f"{i:016x}"
    return head + head[::-1] * ((ROW_BYTES - 16) // 16)


def main():
    mib = int(sys.argv[1])
    what = sys.argv[2] if len(sys.argv) > 2 else "both"
    if what not in ("reverse", "point", "both"):
        raise SystemExit(f"sqlite4k: unknown phase set {what}")
    n = (mib << 20) // 4096
    t = {}
    t0 = time.monotonic()
    db = sqlite3.connect(":memory:")
    db.execute("PRAGMA page_size=4096")
    db.execute(f"PRAGMA cache_size=-{mib * 2 * 1024}")  # KiB: never evict
    db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
    db.executemany("INSERT INTO t VALUES(?,?)", ((i, payload(i)) for i in range(n)))
    db.commit()
    t["load"] = time.monotonic() - t0
    bad = 0
    if what in ("reverse", "both"):
        t0 = time.monotonic()
        expect = n - 1
        for i, v in db.execute("SELECT id, v FROM t ORDER BY id DESC"):
            if i != expect or v != payload(i):
                bad += 1
            expect -= 1
        bad += expect != -1
        t["reverse"] = time.monotonic() - t0
    if what in ("point", "both"):
        t0 = time.monotonic()
        rng = random.Random(11)
        for i in (rng.randrange(n) for _ in range(n // 10)):
            row = db.execute("SELECT v FROM t WHERE id = ?", (i,)).fetchone()
            if row is None or row[0] != payload(i):
                bad += 1
        t["point"] = time.monotonic() - t0
    print(json.dumps({"phases": t, "rows": n, "bad": bad}))
    sys.exit(3 if bad else 0)


main()
