#!/usr/bin/env bash
# leap-timeout: 55
# SPDX-License-Identifier: MIT
# Runs the wire protocol's libFuzzer target (tests/fuzz/fuzz_wire.c) for a
# bounded time: any crash, sanitizer report or broken invariant fails.
# Skips with the reason when clang's fuzzer runtime (libclang-rt-14-dev) is
# missing, so the target was not built.  LEAP_FUZZ_SECONDS overrides 20 s.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/tap.sh
. "$root/tests/lib/tap.sh"

bin=$root/.output/backend/fuzz_wire
secs=${LEAP_FUZZ_SECONDS:-20}
[ -x "$bin" ] || skip_all "fuzz_wire not built: clang's libFuzzer runtime (libclang-rt-14-dev) missing?"

work=$(mktemp -d "${TMPDIR:-/tmp}/leap-fuzz.XXXXXX") || bail_out "mktemp"
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"

run_timeout $((secs + 60)) "$bin" -max_total_time="$secs" -rss_limit_mb=1024 \
	-timeout=10 -print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" \
	>"$work/log" 2>&1
rc=$?
is "$rc" 0 "fuzz_wire ran ${secs}s without a crash" || diag "$(tail -40 "$work/log")"
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
cmp_ok "${runs:-0}" '>' 10000 "fuzz_wire executed ${runs:-0} inputs"
crashes=$(find "$work" -maxdepth 1 -name 'crash-*' -o -maxdepth 1 -name 'leak-*' | wc -l)
is "$crashes" 0 "no crash or leak artifacts"
done_testing
