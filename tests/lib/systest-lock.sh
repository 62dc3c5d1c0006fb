# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# The machine-wide lock of the system tests: tests/run-one holds it for
# each system test, tests/run-tests for its sweep of stale leftovers, so
# both must name the same file.  LEAP_TEST_LOCK names another.
systest_lockfile()
{
	local f=${LEAP_TEST_LOCK:-/run/lock/leap-systest.lock}
	[ -w "$(dirname "$f")" ] || f=${TMPDIR:-/tmp}/leap-systest.lock
	echo "$f"
}
