# SPDX-License-Identifier: MIT
"""Reading a `leap-agent run|attach --record` file from Python: the events.

user/agent/recording.h: a gzip stream of a magic, then records of a type
byte, a 16-bit length and the payload; an event's payload is the target
(u32), then the fields of struct leap_event (include/leap_event.h) that
recording.c's put_event() writes, in its order.
Imported by tools/stride-reach.py and tools/held-epochs.py.
"""
import gzip
import struct
import sys

REC_EVENT = 6  # user/agent/recording.c, enum rec_type
EV_MAJOR = 1 << 0  # include/leap_event.h, LEAP_EV_MAJOR
EV_PREFETCHED = 1 << 5  # LEAP_EV_PREFETCHED
# put_event()'s fields from ts_ns to latency_ns (64 bytes), past the
# target; swap_cache_hits (version 5) follows, the cpu is not recorded
EVENT = struct.Struct("<QQQqQIIIIQ")
SWAP_CACHE = struct.Struct("<I")  # swap_cache_hits, version 5


def events(path, who, swap_cache=False):
    """Each recorded event as (ts_ns, addr, flags, latency_ns), in order;
    who names the caller in the error for a file that is not one.  With
    swap_cache, a fifth field: the target's count of faults on swap-cache
    pages not ours so far (recorded from version 5, counted only under
    --swap-cache-hits), None where the event does not carry it."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    if not data.startswith(b"LEAPREC\0"):
        sys.exit(f"{who}: {path}: not a leap-agent recording")
    pos = 8
    while pos + 3 <= len(data):
        kind, length = data[pos], data[pos + 1] | data[pos + 2] << 8
        payload = data[pos + 3:pos + 3 + length]
        pos += 3 + length
        if kind == REC_EVENT and length >= 4 + EVENT.size:
            ts, _cg, addr, _delta, _off, _tgid, _tid, flags, _type, latency = \
                EVENT.unpack_from(payload, 4)
            if not swap_cache:
                yield ts, addr, flags, latency
                continue
            sch = None
            if length >= 4 + EVENT.size + SWAP_CACHE.size:
                sch = SWAP_CACHE.unpack_from(payload, 4 + EVENT.size)[0]
            yield ts, addr, flags, latency, sch
