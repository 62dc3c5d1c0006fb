#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""numpy program for tools/bench-real.sh: PageRank over an edge list.

    pagerank.py MIB [ITERATIONS]

The graph: N nodes, each with a Poisson(16) number of in-edges from
uniformly random sources (a seeded generator: the same graph every run),
stored as an edge list of two int32 arrays sorted by destination, src and
dst, MIB MiB together (as a graph engine's shard: GraphChi, X-Stream).
Phases: load (the edge list built, out-degrees counted), then rank
(ITERATIONS, default 3, of pull-style PageRank, damping 0.85: each streams
the whole edge list, src and dst in lock-step, a chunk at a time, and
gathers the sources' contributions from an array of N that stays
resident: two ascending streams interleaved, and random reads of a small
hot array).  The ranks must sum to 1 after every iteration (dangling
mass spread evenly), and the edge list must read back at the end as it
was built (sums and an xor of both arrays, taken after the load): exits 3
on a mismatch.  Prints one JSON line.
"""
import json
import resource
import sys
import time

import numpy as np

DAMPING = 0.85
MEAN_IN_DEGREE = 16
CHUNK_EDGES = 1 << 20


def user_cpu_s():
    """The program's user-mode CPU time, all threads (bench-real's user_s):
    a prefetcher's cross-CPU work on its memory shows up here."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_utime


def fingerprint(a):
    """What an int32 array holds, to tell a page read back wrong."""
    return int(a.sum(dtype=np.int64)), int(np.bitwise_xor.reduce(a))


def main():
    mib = int(sys.argv[1])
    iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    edges_wanted = (mib << 20) // 8
    n = max(edges_wanted // MEAN_IN_DEGREE, 16)
    rng = np.random.Generator(np.random.PCG64(20261129))
    t = [time.monotonic()]

    in_deg = rng.poisson(MEAN_IN_DEGREE, n).astype(np.int64)
    dst = np.repeat(np.arange(n, dtype=np.int32), in_deg)
    src = rng.integers(0, n, dst.size, dtype=np.int32)
    # Counted a chunk at a time: bincount copies its input to intp, and a
    # copy of the whole of src would make the load's peak twice the graph.
    out_deg = np.zeros(n)
    for a in range(0, src.size, CHUNK_EDGES):
        out_deg += np.bincount(src[a:a + CHUNK_EDGES], minlength=n)
    del in_deg
    want = (fingerprint(src), fingerprint(dst))
    dangling = out_deg == 0
    inv_out = np.zeros(n)
    np.divide(1.0, out_deg, out=inv_out, where=~dangling)
    del out_deg
    t.append(time.monotonic())

    rank = np.full(n, 1.0 / n)
    bad = 0
    e = dst.size
    for _ in range(iterations):
        contrib = rank * inv_out
        new = np.zeros(n)
        for a in range(0, e, CHUNK_EDGES):
            b = min(a + CHUNK_EDGES, e)
            d = dst[a:b]
            lo, hi = int(d[0]), int(d[-1]) + 1
            new[lo:hi] += np.bincount(d - lo, weights=contrib[src[a:b]], minlength=hi - lo)
        leaked = rank[dangling].sum()
        rank = (1.0 - DAMPING) / n + DAMPING * (new + leaked / n)
        bad += abs(rank.sum() - 1.0) > 1e-9
    t.append(time.monotonic())
    bad += (fingerprint(src), fingerprint(dst)) != want

    names = ["load", "rank"]
    print(json.dumps({"phases": {names[i]: t[i + 1] - t[i] for i in range(2)},
                      "edges": int(e), "nodes": int(n), "bad": int(bad),
                      "user_s": user_cpu_s()}))
    sys.exit(3 if bad else 0)


main()
