#!/usr/bin/env bash
# leap-timeout: 20
# SPDX-License-Identifier: MIT
# The README's results table is what `make bench-real` measured: made again
# from the run it kept (docs/results/bench-real.csv and .json,
# tools/real/readme-table.py check), it is the README's, byte for byte.
# Then the check's own failure: a copy of the README with one ratio changed,
# and one whose table lost a row, must be refused; remake puts the kept
# run's table back.  No root.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/tap.sh
. "$root/tests/lib/tap.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3) || bail_out "python3 missing"
tool=$root/tools/real/readme-table.py
tmp=$(mktemp -d) || bail_out "cannot create a temporary directory"
trap 'rm -rf "$tmp"' EXIT

out=$("$PY" "$tool" check --readme "$root/README.md" --results "$root/docs/results" 2>&1)
ok $? "README.md's table is the one docs/results/bench-real.csv makes" || diag "$out"

# One ratio changed (py-stride's, in its row of the table).
sed '/^| py-stride |/s/\*\*[0-9.]*x\*\*/**9.99x**/' "$root/README.md" >"$tmp/ratio.md"
isnt "$(cmp -s "$root/README.md" "$tmp/ratio.md" && echo same)" same "the changed copy differs"
"$PY" "$tool" check --readme "$tmp/ratio.md" --results "$root/docs/results" >/dev/null 2>&1
is $? 1 "a ratio typed in is refused"

# remake writes the kept run's table again: the changed copy passes after.
"$PY" "$tool" remake --readme "$tmp/ratio.md" --results "$root/docs/results" >/dev/null 2>&1
is $? 0 "remake writes the table again"
"$PY" "$tool" check --readme "$tmp/ratio.md" --results "$root/docs/results" >/dev/null 2>&1
is $? 0 "  and the copy it wrote passes the check"
cmp -s "$root/README.md" "$tmp/ratio.md"
ok $? "  and is the README again, byte for byte"

# A program's row taken out.
awk '/^\| py-stride \|/ && !done {done = 1; next} {print}' "$root/README.md" >"$tmp/row.md"
isnt "$(cmp -s "$root/README.md" "$tmp/row.md" && echo same)" same "the copy lost a row"
"$PY" "$tool" check --readme "$tmp/row.md" --results "$root/docs/results" >/dev/null 2>&1
is $? 1 "a row left out is refused"

# No markers: said, status 2.
grep -v 'bench-real table' "$root/README.md" >"$tmp/none.md"
out=$("$PY" "$tool" check --readme "$tmp/none.md" --results "$root/docs/results" 2>&1)
is $? 2 "a README without the markers: status 2"
like "$out" "needs one pair of markers" "  and says so"
done_testing
