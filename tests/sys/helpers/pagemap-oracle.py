#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pagemap-oracle.py PID CTL [--select S] [--max N] [--interval S]

A prefetch oracle for the backend tests: reads PID's /proc/PID/pagemap over
its largest mapping (bit 62 swapped, bits 0-4 swap type, 5-54 offset) and
pushes swapped slots to leap-swapd's control socket CTL ("PREFETCH ..."),
again and again until the process is gone.  Which slots:
  all            every swapped page, in address order
  majority-type  those of the swap type most of the first 4096 are on
                 (another swap device may hold some)
  ahead          those after the last resident page (the pages ahead of a
                 sequential scan; those before it were evicted behind it),
                 or from the start when none is resident
Prints "oracle sent N slots" at the end.
"""
import argparse
import os
import socket
import struct
import time

OFFSET_MASK = (1 << 50) - 1


def pick(ents, select):
    swapped = [e for e in ents if e >> 62 & 1]
    if select == "majority-type":
        if not swapped:
            return []
        types = {}
        for e in swapped[:4096]:
            types[e & 0x1f] = types.get(e & 0x1f, 0) + 1
        t = max(types, key=types.get)
        return [e for e in swapped if e & 0x1f == t]
    if select == "ahead":
        last = max((i for i, e in enumerate(ents) if e >> 63 & 1), default=-1)
        return [e for e in ents[last + 1:] if e >> 62 & 1] or swapped
    return swapped


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pid", type=int)
    ap.add_argument("ctl")
    ap.add_argument("--select", choices=("all", "majority-type", "ahead"), default="all")
    ap.add_argument("--max", type=int, default=256, help="slots per PREFETCH")
    ap.add_argument("--interval", type=float, default=0.01, help="seconds between rounds")
    a = ap.parse_args()
    s = socket.socket(socket.AF_UNIX)
    s.connect(a.ctl)
    f = s.makefile("rwb")

    def cmd(c):
        f.write(c.encode() + b"\n")
        f.flush()
        return f.readline()

    try:
        lo, hi = max(((int(x, 16), int(y, 16)) for x, y in
                      (l.split()[0].split("-") for l in open("/proc/%d/maps" % a.pid))),
                     key=lambda r: r[1] - r[0])
        pm = os.open("/proc/%d/pagemap" % a.pid, os.O_RDONLY)
    except OSError:
        return
    sent = 0
    while True:
        try:
            raw = os.pread(pm, (hi - lo) // 4096 * 8, lo // 4096 * 8)
        except OSError:
            break
        if not raw:
            break
        ents = struct.unpack("<%dQ" % (len(raw) // 8), raw)
        offs = [(e >> 5) & OFFSET_MASK for e in pick(ents, a.select)][:a.max]
        if offs and cmd("PREFETCH " + " ".join(map(str, offs))).startswith(b"OK"):
            sent += len(offs)
        time.sleep(a.interval)
    print("oracle sent %d slots" % sent)


if __name__ == "__main__":
    main()
