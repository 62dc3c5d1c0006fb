#!/usr/bin/env bash
# leap-timeout: 150
# SPDX-License-Identifier: MIT
# Every shell script of the repository (the tracked *.sh files and the
# tracked files whose first line runs sh or bash: tests, tools, CI) passes the
# linter at warning level (shellcheck).  One rule is off for all: SC1007, which
# reads `local a= b=` (several empty assignments, the style of these
# scripts) as a possible typo.  A script quiets a rule only with a
# directive that says why.  One test a file.  No root.
# Its limit: 31.8 s in the fresh-clone CI run of 079249d, 43.3 and 63.3 s in
# the two fresh-clone CI runs of 2026-11-30 (70 s was the limit then).
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/tap.sh
. "$repo/tests/lib/tap.sh"
cd "$repo" || bail_out "no checkout at $repo"
command -v shellcheck >/dev/null ||
	skip_all "shellcheck is not installed (tools/install-deps.sh installs it)"
git rev-parse --git-dir >/dev/null 2>&1 || skip_all "not a git checkout: no list of tracked files"

mapfile -t scripts < <({
	git ls-files '*.sh'
	git ls-files | while read -r f; do
		[ -f "$f" ] && head -n 1 "$f" | grep -qE '^#!.*\b(ba)?sh\b' && echo "$f"
	done
} | sort -u)
cmp_ok "${#scripts[@]}" '>' 50 "found the scripts (${#scripts[@]})"
for f in "${scripts[@]}"; do
	out=$(shellcheck -S warning -e SC1007 -x -f gcc "$f" 2>&1)
	ok $? "shellcheck $f" || diag "$out"
done
done_testing
