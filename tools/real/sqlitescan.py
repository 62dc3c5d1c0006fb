#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""SQLite program for tools/bench-real.sh (Python's sqlite3 module, Debian's
libsqlite3): a table built in an in-memory database with a page cache as
large as the data, then scanned, sorted and indexed.

    sqlitescan.py MIB

Phases: load (MIB MiB of rows), scan (a full-table aggregate), sort
(ORDER BY over a non-key column, streamed back and checked for order),
index (CREATE INDEX, then point look-ups).  Every result is checked against
what the load wrote; exits 3 on a mismatch.  Prints one JSON line.
"""
import json
import random
import resource
import sqlite3
import sys
import time

ROW_BYTES = 240  # text payload per row; with overhead ~256 bytes a row


def user_cpu_s():
    """The program's user-mode CPU time, all threads (bench-real's user_s):
    a prefetcher's cross-CPU work on its memory shows up here."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_utime


def main():
    mib = int(sys.argv[1])
    n = (mib << 20) // 256
    rng = random.Random(7)
    keys = [rng.getrandbits(40) for _ in range(n)]
    t = [time.monotonic()]
    db = sqlite3.connect(":memory:")
    db.execute(f"PRAGMA cache_size=-{mib * 2 * 1024}")  # KiB: never evict
    db.execute("PRAGMA temp_store=MEMORY")
    db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v TEXT)")
    pad = "x" * (ROW_BYTES - 16)
    db.executemany(
        "INSERT INTO t VALUES(?,?,?)",
        ((i, keys[i], f"{keys[i]:016x}{pad}") for i in range(n)),
    )
    db.commit()
    t.append(time.monotonic())
    bad = 0
    cnt, ksum, vlen = db.execute(
        "SELECT count(*), sum(k), sum(length(v)) FROM t WHERE v NOT LIKE '%zz%'"
    ).fetchone()
    bad += cnt != n or ksum != sum(keys) or vlen != n * ROW_BYTES
    t.append(time.monotonic())
    prev, seen = -1, 0
    for (k,) in db.execute("SELECT k FROM t ORDER BY v"):
        # v starts with k in fixed-width hex: ordering by v orders by k
        bad += k < prev
        prev, seen = k, seen + 1
    bad += seen != n
    t.append(time.monotonic())
    db.execute("CREATE INDEX t_k ON t(k)")
    for i in rng.sample(range(n), min(n, 2000)):
        (got,) = db.execute("SELECT id FROM t WHERE k = ? ORDER BY id LIMIT 1",
                            (keys[i],)).fetchone()
        bad += keys[got] != keys[i]
    t.append(time.monotonic())
    names = ["load", "scan", "sort", "index"]
    print(json.dumps({"phases": {names[i]: t[i + 1] - t[i] for i in range(4)},
                      "bad": int(bad),
                      "user_s": user_cpu_s()}))
    sys.exit(3 if bad else 0)


main()
