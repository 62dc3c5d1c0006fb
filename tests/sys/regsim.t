#!/usr/bin/env bash
# leap-timeout: 120
# SPDX-License-Identifier: MIT
# leap-regsim's claims (docs/registration.md), asserted so a regression in
# the registration library fails the build.  Cost model T = a*pages + b.
#  - every cache beats registering per operation on every trace;
#  - overlapping traces (sliding window, grown/partial buffers): MRRC's
#    modelled registration time well below the LRU pin-down cache's, and a
#    higher share of referenced pages served without registering;
#  - a trace without overlaps (repeated buffers): MRRC within 5% of LRU (no
#    win claimed there);
#  - a trace with frees: invalidations happen, no stale or double
#    deregistration (the tool checks the fake backend and fails otherwise);
#  - Firehose under a pin budget M: never pins more than M, costs far less
#    than registering per operation (< 1/3), while registering everything
#    would exceed M;
#  - bad input fails cleanly (exit 1 naming file:line; exit 2 for a budget
#    that gives no client a region).
# No root needed; a few seconds.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -x "$bin/leap-regsim" ]; then
	make -C "$root" -s bin/leap-regsim >&2 || { echo "Bail out! cannot build leap-regsim"; exit 1; }
fi

echo "1..14"
n=0
pass() { n=$((n + 1)); echo "ok $n - $*"; }
failt() { n=$((n + 1)); echo "not ok $n - $*"; }

gen() { # NAME KIND [args...]
	local name=$1 kind=$2
	shift 2
	"$bin/leap-regsim" gen --kind "$kind" --ops 40000 --space 256M --max-len 256K \
		--buffers 256 --seed 7 "$@" -o "$tmp/$name.tr"
}

# check DESC FILE KEY EXPR: EXPR is Python over r(name) -> that row (rows
# keyed by KEY: "policy" or "strategy").
check() {
	local desc=$1 file=$2 key=$3 expr=$4 out
	if out=$(python3 - "$file" "$key" "$expr" <<'PY'
import json, sys
rows = {}
for line in open(sys.argv[1]):
    o = json.loads(line)
    rows[o[sys.argv[2]]] = o
r = lambda p: rows[p]
summary = "; ".join("%s %.0fus pg_hit %.3f peak %d" % (p, o["modelled_us"],
                    o.get("page_hit_ratio", 0), o["pinned_peak"]) for p, o in rows.items())
ok = eval(sys.argv[3])
print(summary)
sys.exit(0 if ok else 1)
PY
	); then
		pass "$desc ($out)"
	else
		failt "$desc ($out)"
	fi
}

cache() { # NAME [args...]
	local name=$1
	shift
	"$bin/leap-regsim" cache --json "$@" "$tmp/$name.tr" >"$tmp/$name.json" ||
		echo '{"policy":"error","modelled_us":0,"pinned_peak":0}' >"$tmp/$name.json"
}

for k in repeat sliding overlap random unmap; do
	gen "$k" "$k"
	cache "$k" --capacity 16M
done

for k in repeat sliding overlap random; do
	check "$k: LRU and MRRC both cost less than no cache" "$tmp/$k.json" policy \
		"r('lru')['modelled_us'] < r('nocache')['modelled_us'] and r('mrrc')['modelled_us'] < r('nocache')['modelled_us']"
done
check "sliding window: MRRC modelled time < 1/2 of LRU's" "$tmp/sliding.json" policy \
	"r('mrrc')['modelled_us'] < 0.5 * r('lru')['modelled_us'] and r('mrrc')['page_hit_ratio'] > r('lru')['page_hit_ratio'] + 0.3"
check "overlapping buffers: MRRC modelled time < 0.8 x LRU's, more pages served from cache" \
	"$tmp/overlap.json" policy \
	"r('mrrc')['modelled_us'] < 0.8 * r('lru')['modelled_us'] and r('mrrc')['page_hit_ratio'] > r('lru')['page_hit_ratio'] and r('mrrc')['overlaps'] > 0"
check "repeated buffers (no overlap): MRRC within 5% of LRU" "$tmp/repeat.json" policy \
	"r('mrrc')['modelled_us'] < 1.05 * r('lru')['modelled_us'] and r('mrrc')['overlaps'] == 0"
check "frees in the trace: both caches invalidate, pinned never above capacity" \
	"$tmp/unmap.json" policy \
	"r('mrrc')['invalidations'] > 0 and r('lru')['invalidations'] > 0 and max(r('mrrc')['pinned_peak'], r('lru')['pinned_peak']) <= 16 << 20"

"$bin/leap-regsim" cache --json --entries 64 "$tmp/overlap.tr" >"$tmp/overlap-entries.json" ||
	echo '{"policy":"error","modelled_us":0,"pinned_peak":0}' >"$tmp/overlap-entries.json"
check "overlapping buffers, 64-entry cache: MRRC modelled time below LRU's" \
	"$tmp/overlap-entries.json" policy \
	"r('mrrc')['modelled_us'] < 0.9 * r('lru')['modelled_us']"

gen again overlap
if cmp -s "$tmp/overlap.tr" "$tmp/again.tr"; then
	pass "gen: the same seed gives the same trace ($(grep -c '^r' "$tmp/again.tr") records)"
else
	failt "gen: the same seed gave different traces"
fi

# Firehose: 4 clients, client 0 streams through far more than its share.
"$bin/leap-regsim" gen --kind clients --ops 40000 --space 1G --max-len 64K --clients 4 \
	--seed 3 -o "$tmp/clients.tr"
"$bin/leap-regsim" firehose --budget 64M --region 256K --json "$tmp/clients.tr" \
	>"$tmp/fh.json" || echo '{"strategy":"error","modelled_us":0,"pinned_peak":0}' >"$tmp/fh.json"
check "firehose M=64M: peak <= M, cost < 1/3 of per-op registration, everything over M" \
	"$tmp/fh.json" strategy \
	"r('firehose')['pinned_peak'] <= 64 << 20 and not r('firehose')['over_budget'] and r('firehose')['modelled_us'] < r('per-op')['modelled_us'] / 3 and r('everything')['over_budget'] and r('firehose')['moves'] > 0"
"$bin/leap-regsim" firehose --budget 16M --region 1M --rtt-us 5 --json "$tmp/clients.tr" \
	>"$tmp/fh2.json" || echo '{"strategy":"error","modelled_us":0,"pinned_peak":0}' >"$tmp/fh2.json"
check "firehose M=16M, 1M regions, 5us per message: peak <= M, fewer messages and less time than per-op" \
	"$tmp/fh2.json" strategy \
	"r('firehose')['pinned_peak'] <= 16 << 20 and r('firehose')['messages'] < r('per-op')['messages'] / 4 and r('firehose')['modelled_us'] < r('per-op')['modelled_us']"

# Bad input.
printf 'r 0x1000 4096\n# fine\n\nr 0x2000 0\n' >"$tmp/bad.tr"
"$bin/leap-regsim" cache "$tmp/bad.tr" >/dev/null 2>"$tmp/bad.err"
rc=$?
if [ $rc -eq 1 ] && grep -q "bad.tr:4:" "$tmp/bad.err"; then
	pass "malformed trace: exit 1, $(cat "$tmp/bad.err")"
else
	failt "malformed trace: rc $rc, stderr: $(cat "$tmp/bad.err")"
fi
"$bin/leap-regsim" firehose --budget 1M --region 1M --clients 4 "$tmp/clients.tr" \
	>/dev/null 2>"$tmp/budget.err"
rc=$?
if [ $rc -eq 2 ] && grep -q "gives no region" "$tmp/budget.err"; then
	pass "budget below one region per client: exit 2, $(cat "$tmp/budget.err")"
else
	failt "budget below one region per client: rc $rc, stderr: $(cat "$tmp/budget.err")"
fi
[ "$n" -eq 14 ] || echo "# ran $n tests, planned 14"
