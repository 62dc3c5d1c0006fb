#!/usr/bin/env bash
# leap-timeout: 20
# SPDX-License-Identifier: MIT
# The shell tests' checks can fail: tests/lint-tap.py over tests/sys/*.t
# and tests/vm/*.sh flags an unconditional `pass` or `ok 0` (outside any
# if/else branch or case arm, not after && or ||) and a comparison of a
# value with itself (is/isnt/cmp_ok whose two sides are the same text, or
# one falls back to the other).  A deliberate exception carries
# `# lint: ok (REASON)`.  First the lint's own self-test: a file of known
# bad and good lines, and exactly the bad ones must be flagged.  Then one
# test a file.  No root.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/tap.sh
. "$root/tests/lib/tap.sh"
lint=$root/tests/lint-tap.py
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3) || bail_out "python3 missing"
tmp=$(mktemp -d) || bail_out "cannot create a temporary directory"
trap 'rm -rf "$tmp"' EXIT

# ---- self-test: the lines marked BAD are flagged, none other ----------------
cat >"$tmp/self.t" <<'EOF'
for k in a b; do
	[ -e "$k" ] || fail "no $k"
done
pass "all there" # BAD
ok 0 "swap is on" # BAD
ok 0 "a deliberate one" # lint: ok (the self-test's exception)
while read -r l; do
	pass "per line $l" # BAD
done <x
f() {
	pass "in a function" # BAD
}
is "$(cat /proc/x)" "$(cat "$d/orig" 2>/dev/null || cat /proc/x)" "restored" # BAD
is "$a" "$a" "same" # BAD
cmp_ok "$n" '==' $n "same" # BAD
isnt "$v" $v "same" # BAD
if [ -e x ]; then pass "in a branch"; else fail "not"; fi
[ -e x ] && pass "after &&"
[ -e x ] ||
	pass "after || on the line before"
case $x in
'ok '*) pass "an arm" ;;
esac
ok $? "a status"
cmp_ok "${n:-0}" '>' 0 "a default is no fallback"
is "$got" "$want" "two values"
x=$(python3 - <<'PY'
pass
PY
)
cat <<EOF2
pass "in a here-document"
EOF2
EOF
want=$(grep -n '# BAD$' "$tmp/self.t" | cut -d: -f1 | tr '\n' ' ')
"$PY" "$lint" "$tmp/self.t" >"$tmp/self.out" 2>&1
rc=$?
got=$(sed -n 's/^[^:]*:\([0-9]*\): .*/\1/p' "$tmp/self.out" | tr '\n' ' ')
is "$got" "$want" "self-test: the lint flags exactly the lines marked BAD" || diag "$(cat "$tmp/self.out")"
is "$rc" 1 "self-test: and exits 1"
printf 'is "$a" "$b" "fine"\n' >"$tmp/good.t"
"$PY" "$lint" "$tmp/good.t" >"$tmp/good.out" 2>&1
is "$?:$(cat "$tmp/good.out")" "0:" "self-test: a clean file passes silently"

# ---- the tests themselves ----------------------------------------------------
cd "$root" || bail_out "no checkout at $root"
files=(tests/sys/*.t tests/vm/*.sh)
cmp_ok "${#files[@]}" '>' 40 "found the test scripts (${#files[@]})"
for f in "${files[@]}"; do
	out=$("$PY" "$lint" "$f" 2>&1)
	ok $? "lint $f" || diag "$out"
done
done_testing
