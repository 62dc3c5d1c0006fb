#!/usr/bin/env bash
# leap-timeout: 20
# SPDX-License-Identifier: MIT
# leap-sim's "must show" numbers (docs/sim.md), asserted so a regression in
# the engine or the model fails the build:
#  - stride k = 2..64: leap coverage >= 90% where Linux readahead is ~0;
#  - sequential: leap coverage >= Linux's, leap accuracy >= 90%;
#  - random: leap issues <= 5% of the prefetches Linux issues;
#  - 4 interleaved sequential threads: every thread's leap-thread coverage
#    >= 80%, and leap-thread above per-process leap with one history per
#    process (--lanes 1, the paper's); per-process leap with lanes (the
#    default) finds the threads' streams too: within 1% of leap-thread;
#  - two regions read in lock-step by one thread: lanes cover >= 90%,
#    one history per process <= 10%;
#  - the simulator's speed (events/s) is printed;
# plus: malformed traces fail cleanly naming the line, the three formats
# agree, and the sweep writes its CSV and PNG.  No root needed; ~10 s.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pages=16384 passes=3 mem=50%

if [ ! -x "$bin/leap-sim" ] || [ ! -x "$bin/leap-tracegen" ]; then
	make -C "$root" -s bin/leap-sim bin/leap-tracegen >&2 ||
		{ echo "Bail out! cannot build leap-sim"; exit 1; }
fi

strides=(2 3 4 8 16 32 64)
echo "1..$((${#strides[@]} + 13))"
n=0
pass() { n=$((n + 1)); echo "ok $n - $*"; }
failt() { n=$((n + 1)); echo "not ok $n - $*"; }

gen() { # NAME PATTERN [tracegen args...]
	local name=$1 pat=$2
	shift 2
	"$bin/leap-tracegen" --pattern "$pat" --pages "$pages" --passes "$passes" "$@" \
		-o "$tmp/$name"
}

sim() { # NAME POLICIES [leap-sim args...] -> $tmp/NAME.json (one JSON object per policy)
	local name=$1 pols=$2
	shift 2
	"$bin/leap-sim" --policy "$pols" --memory "$mem" --json "$@" "$tmp/$name" \
		>"$tmp/$name.json"
}

# check DESC FILE EXPR: EXPR is Python over r('policy') -> that row.
check() {
	local desc=$1 file=$2 expr=$3 out
	if out=$(python3 - "$file" "$expr" <<'PY'
import json, sys
rows = {}
for line in open(sys.argv[1]):
    o = json.loads(line)
    rows[o["policy"]] = o
r = lambda p: rows[p]
summary = "; ".join("%s cov %.3f acc %.3f pf %d" % (p, o["coverage"], o["accuracy"],
                    o["prefetched"]) for p, o in rows.items())
ok = eval(sys.argv[2])
print(summary)
sys.exit(0 if ok else 1)
PY
	); then
		pass "$desc ($out)"
	else
		failt "$desc ($out)"
	fi
}

for k in "${strides[@]}"; do
	gen "stride$k" "stride:$k"
	sim "stride$k" leap,linux
	check "stride:$k: leap coverage >= 0.90, linux <= 0.05" "$tmp/stride$k.json" \
		"r('leap')['coverage'] >= 0.90 and r('linux')['coverage'] <= 0.05"
done

gen seq seq
sim seq leap,linux
check "seq: leap coverage >= linux's" "$tmp/seq.json" \
	"r('leap')['coverage'] >= r('linux')['coverage']"
check "seq: leap accuracy >= 0.90" "$tmp/seq.json" "r('leap')['accuracy'] >= 0.90"

gen random random
sim random leap,linux
check "random: leap prefetches <= 5% of linux's" "$tmp/random.json" \
	"r('linux')['prefetched'] > 0 and r('leap')['prefetched'] <= 0.05 * r('linux')['prefetched']"

gen inter interleave:4
sim inter leap-thread,leap
check "interleave:4: every thread's leap-thread coverage >= 0.80" "$tmp/inter.json" \
	"len(r('leap-thread')['threads']) == 4 and all(t['coverage'] >= 0.80 for t in r('leap-thread')['threads'])"
cp "$tmp/inter" "$tmp/inter1"
sim inter1 leap-thread,leap --lanes 1
check "interleave:4: leap-thread coverage above per-process leap, one history" \
	"$tmp/inter1.json" "r('leap-thread')['coverage'] > r('leap')['coverage']"
check "interleave:4: per-process leap with lanes within 1% of leap-thread" \
	"$tmp/inter.json" "r('leap')['coverage'] >= 0.99 * r('leap-thread')['coverage']"

gen lock lockstep:2
cp "$tmp/lock" "$tmp/lock1"
sim lock leap
sim lock1 leap --lanes 1
check "lockstep:2: leap with lanes covers >= 0.90" "$tmp/lock.json" \
	"r('leap')['coverage'] >= 0.90"
check "lockstep:2: one history per process covers <= 0.10" "$tmp/lock1.json" \
	"r('leap')['coverage'] <= 0.10"

# Speed: --bench prints events/s on stderr and in the JSON.
if "$bin/leap-sim" --policy leap --memory "$mem" --json --bench "$tmp/seq" \
	>"$tmp/bench.json" 2>"$tmp/bench.err" &&
	rate=$(python3 -c 'import json,sys; print("%.0f" % json.load(open(sys.argv[1]))["events_per_s"])' "$tmp/bench.json") &&
	[ "$rate" -gt 100000 ]; then
	pass "leap-sim --bench: $rate events/s ($(tr '\n' ' ' <"$tmp/bench.err"))"
else
	failt "leap-sim --bench gave no plausible events/s"
fi

# Malformed input: exit status 1 (not a signal), message naming file:line.
printf '0x10\n0x11\n# fine\n\n0x1g\n' >"$tmp/bad.txt"
"$bin/leap-sim" --policy leap --memory 10 "$tmp/bad.txt" >/dev/null 2>"$tmp/bad.err"
rc=$?
if [ $rc -eq 1 ] && grep -q "bad.txt:5:" "$tmp/bad.err"; then
	pass "malformed text trace: exit 1, $(cat "$tmp/bad.err")"
else
	failt "malformed text trace: rc $rc, stderr: $(cat "$tmp/bad.err")"
fi
gen good.bin seq --format bin
head -c 40 "$tmp/good.bin" >"$tmp/trunc.bin"
printf 'garbage' | dd of="$tmp/good.bin" bs=1 seek=8 conv=notrunc status=none
ok=1
for f in good.bin trunc.bin; do
	"$bin/leap-sim" --policy all --memory 10 "$tmp/$f" >/dev/null 2>"$tmp/$f.err"
	rc=$?
	[ $rc -eq 1 ] && grep -q "$f" "$tmp/$f.err" || ok=0
done
if [ $ok = 1 ]; then
	pass "bad binary header and truncated record rejected: $(cat "$tmp"/*.bin.err | tr '\n' ' ')"
else
	failt "binary trace errors: $(cat "$tmp"/*.bin.err | tr '\n' ' ')"
fi

# The three formats of one pattern give the same numbers.
for fmt in text memsim bin; do
	gen "phase.$fmt" phase --format "$fmt"
	"$bin/leap-sim" --policy all --memory "$mem" --csv "$tmp/phase.$fmt" >"$tmp/phase.$fmt.csv"
done
if [ -s "$tmp/phase.text.csv" ] && cmp -s "$tmp/phase.text.csv" "$tmp/phase.memsim.csv" &&
	cmp -s "$tmp/phase.text.csv" "$tmp/phase.bin.csv"; then
	pass "text, memsim and bin traces give identical results"
else
	failt "formats disagree: $(diff "$tmp/phase.text.csv" "$tmp/phase.bin.csv" | head -5)"
fi

# The sweep writes CSV and PNG.
if bash "$root/tools/sim-sweep.sh" -b "$bin" -o "$tmp/sweep" -t seq -n 4096 -P 2 \
	-m "25 50 100" >/dev/null 2>"$tmp/sweep.err" &&
	[ "$(wc -l <"$tmp/sweep/sweep-seq.csv")" -eq 13 ] &&
	{ ! command -v gnuplot >/dev/null || [ -s "$tmp/sweep/sweep-seq.png" ]; }; then
	pass "sim-sweep.sh writes CSV (3 sizes x 4 policies) and PNG"
else
	failt "sim-sweep.sh: $(cat "$tmp/sweep.err")"
fi
