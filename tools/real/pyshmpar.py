#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""CPython program for tools/bench-real.sh: a shared buffer scanned by
several processes at once, as a database's parallel sequential scan reads
its buffer pool.

    pyshmpar.py MIB [WORKERS [CHUNK]]   WORKERS 3, CHUNK 64 pages by default

Fill: MIB MiB of shared memory (mmap of MAP_SHARED | MAP_ANONYMOUS, as
PostgreSQL's shared_buffers: shmem pages), one byte written per page in
order.  Scan: WORKERS forked processes take chunks of CHUNK pages in turns
from a shared counter (PostgreSQL's parallel scan does the same with
blocks) and read one byte per page, each checked against what the fill
wrote.  Prints one JSON line with the phase times and the pages each
worker read; exits 3 if a byte is wrong or a page was read twice or never.
"""
import json
import mmap
import multiprocessing
import os
import resource
import sys
import time

PAGE = 4096


def value(i):
    return (i * 7 + 1) & 0xFF


def worker(buf, counter, lock, pages, chunk, out):
    seen = bad = 0
    total = 0
    while True:
        with lock:
            first = counter.value
            counter.value = first + chunk
        if first >= pages:
            break
        for i in range(first, min(first + chunk, pages)):
            if buf[i * PAGE] != value(i):
                bad += 1
            seen += 1
            total += i
    out.put((os.getpid(), seen, bad, total))


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: pyshmpar.py MIB [WORKERS [CHUNK]]")
    mib = int(sys.argv[1])
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    chunk = int(sys.argv[3]) if len(sys.argv) > 3 else 64
    if mib < 1 or workers < 1 or chunk < 1:
        sys.exit("pyshmpar.py: MIB, WORKERS and CHUNK must be positive")
    pages = mib * 256
    buf = mmap.mmap(-1, pages * PAGE, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
    t0 = time.monotonic()
    for i in range(pages):
        buf[i * PAGE] = value(i)
    t1 = time.monotonic()
    ctx = multiprocessing.get_context("fork")
    counter = ctx.Value("q", 0, lock=False)
    lock = ctx.Lock()
    out = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(buf, counter, lock, pages, chunk, out))
             for _ in range(workers)]
    for p in procs:
        p.start()
    results = [out.get() for _ in procs]
    for p in procs:
        p.join()
    t2 = time.monotonic()
    seen = sum(r[1] for r in results)
    bad = sum(r[2] for r in results)
    # Every page once: the sum of the indices read is the sum of 0..pages-1.
    if seen != pages or sum(r[3] for r in results) != pages * (pages - 1) // 2:
        bad += 1
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({
        "phases": {"fill": round(t1 - t0, 3), "scan": round(t2 - t1, 3)},
        "workers": workers, "chunk": chunk, "pages": pages,
        "per_worker": sorted(r[1] for r in results),
        "user_s": round(resource.getrusage(resource.RUSAGE_SELF).ru_utime + ru.ru_utime, 3),
        "bad": bad,
    }))
    sys.exit(3 if bad or any(p.exitcode for p in procs) else 0)


if __name__ == "__main__":
    main()
