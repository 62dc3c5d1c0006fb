#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# GNU sort program for tools/bench-real.sh: sorts INPUT with a MIB MiB
# in-memory buffer (one heap, streamed in, sorted, written out), then checks
# the output is ordered and has every line.  Prints one JSON line; exits 3
# when the output is wrong.
#     sortrun.sh MIB INPUT
set -u
mib=$1 in=$2
out=$(mktemp "${TMPDIR:-/var/tmp}/leap-sort.XXXXXX") || exit 1
trap 'rm -f "$out"' EXIT
t0=$(date +%s.%N)
LC_ALL=C sort -S "${mib}M" --parallel=1 -T "$(dirname "$out")" -o "$out" "$in" || exit $?
t1=$(date +%s.%N)
bad=0
LC_ALL=C sort -c "$out" 2>/dev/null || bad=1
[ "$(wc -l <"$out")" = "$(wc -l <"$in")" ] || bad=1
printf '{"phases": {"sort": %s}, "bad": %d}\n' "$(awk -v a="$t1" -v b="$t0" 'BEGIN { printf "%.6f", a - b }')" "$bad"
[ $bad -eq 0 ] || exit 3
