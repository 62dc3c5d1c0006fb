#!/usr/bin/env bash
# leap-timeout: 20
# SPDX-License-Identifier: MIT
# The agent's pagemap filter on real swap: the unit test's region
# (tests/unit/test_prefetch.c, test_pagemap_readers) half paged out with
# MADV_PAGEOUT onto a swap file, so that PAGEMAP_SCAN (6.7+) and pread
# must agree on swapped pages, not only on resident ones, across more
# regions than one PAGEMAP_SCAN call returns.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/fixture.sh
. "$root/tests/lib/fixture.sh"

require_root
unit=$root/.output/tests/test_prefetch
[ -x "$unit" ] || bail_out "$unit is missing: run make check (it builds the unit tests)"

fixture_init
swap=$(swap_file_on 64) || bail_out "cannot set up a swap file"
note "swap file $swap is on"

LEAP_TEST_REQUIRE_SWAP=1 run_timeout 60 "$unit" >"$FX_STATE/out" 2>&1
rc=$?
while IFS= read -r line; do diag "$line"; done < <(grep -E '^# pagemap|FAIL|Error' "$FX_STATE/out")
is "$rc" 0 "PAGEMAP_SCAN and pread agree on which pages are swapped out"

done_testing
