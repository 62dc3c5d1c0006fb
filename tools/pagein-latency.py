#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Single-page O_DIRECT read latency and throughput of a swap device path.

What a swap-in costs the device: one 4 KiB direct read at a random page.
Measures --samples reads of distinct random pages (p50, p99 in us, and
single-reader pages/s = 1 / mean), and with --threads N the aggregate
pages/s of N readers at once.  With --ctl (leap-swapd's control socket)
and --hit, the pages are first pushed with PREFETCH and read once the
cache holds them: the prefetch-cache hit path.  Prints one line:
  name=... p50_us=... p99_us=... pages_per_s=... mt_pages_per_s=...
"""
import argparse
import mmap
import os
import random
import socket
import sys
import threading
import time


def ctl_cmd(path, line):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(path)
    f = s.makefile("rwb")
    f.write(line.encode() + b"\n")
    f.flush()
    reply = f.readline().decode().strip()
    s.close()
    return reply


def ctl_stat(path, key):
    for kv in ctl_cmd(path, "STATS").split()[1:]:
        k, _, v = kv.partition("=")
        if k == key:
            return int(v)
    raise KeyError(key)


def read_pages(fd, pages):
    buf = mmap.mmap(-1, 4096)
    lat = []
    for p in pages:
        t = time.perf_counter_ns()
        if os.preadv(fd, [buf], p * 4096) != 4096:
            sys.exit("short read at page %d" % p)
        lat.append((time.perf_counter_ns() - t) / 1000.0)
    return lat


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", help="device or file to read")
    ap.add_argument("--name", default=None)
    ap.add_argument("--pages", type=int, required=True, help="readable pages from 1")
    ap.add_argument("--samples", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--ctl", help="leap-swapd control socket")
    ap.add_argument("--hit", action="store_true", help="prefetch first: cache hits")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.samples > a.pages - 1:
        sys.exit("--samples must be below --pages")
    if a.hit and not a.ctl:
        sys.exit("--hit needs --ctl")
    fd = os.open(a.path, os.O_RDONLY | os.O_DIRECT)
    rnd = random.Random(a.seed)
    pages = rnd.sample(range(1, a.pages), a.samples)
    lat = []
    if a.hit:
        # In chunks the cache holds; wait until each chunk is in.
        chunk = 500
        for i in range(0, len(pages), chunk):
            part = pages[i:i + chunk]
            want = ctl_stat(a.ctl, "prefetched") + len(part)
            ctl_cmd(a.ctl, "PREFETCH " + " ".join(map(str, part)))
            for _ in range(500):
                if ctl_stat(a.ctl, "prefetched") >= want:
                    break
                time.sleep(0.01)
            h0 = ctl_stat(a.ctl, "hits")
            lat += read_pages(fd, part)
            if ctl_stat(a.ctl, "hits") - h0 != len(part):
                sys.exit("not every prefetched read was a cache hit")
    else:
        lat = read_pages(fd, pages)
    lat.sort()
    mean = sum(lat) / len(lat)
    out = "name=%s p50_us=%.1f p99_us=%.1f pages_per_s=%.0f" % (
        a.name or a.path, lat[len(lat) // 2], lat[len(lat) * 99 // 100], 1e6 / mean)
    if a.threads and not a.hit:
        per = [rnd.sample(range(1, a.pages), a.samples // a.threads) for _ in range(a.threads)]
        ts = [threading.Thread(target=read_pages, args=(fd, p)) for p in per]
        t0 = time.perf_counter()
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        out += " mt_pages_per_s=%.0f" % (sum(map(len, per)) / (time.perf_counter() - t0))
    print(out)


if __name__ == "__main__":
    main()
