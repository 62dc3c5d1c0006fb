# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# tests/lib/tap.sh: a small TAP producer for leap's shell tests (*.t).
#
#   plan N                    print the plan up front (or let done_testing do it)
#   ok RC DESC...             pass when RC is 0:  [ -f x ]; ok $? "x exists"
#   pass DESC / fail DESC     unconditional ok / not ok
#   is GOT WANT DESC          string equality (prints got/want on failure)
#   isnt GOT UNWANTED DESC    string inequality
#   like GOT ERE DESC         GOT matches the extended regex ERE
#   cmp_ok A OP B DESC        integer comparison, OP one of == != < <= > >=
#   skip DESC REASON          a test skipped for REASON
#   diag MSG / note MSG       comments, on stderr / stdout
#   skip_all REASON           "1..0 # SKIP REASON", exit 0 (call before any test)
#   bail_out MSG              "Bail out! MSG", exit 255
#   done_testing              print the plan if none yet, exit non-zero on failures
#   run_timeout SECS CMD...   run CMD, killed after SECS (TERM, KILL 5 s later);
#                             returns its status, 124 on timeout.  Under
#                             fixture.sh the command is tracked, so a teardown
#                             (also after a signal) stops it.
#   tap_failures              number of failed tests so far

_tap_n=0
_tap_failed=0
_tap_plan=

plan()
{
	_tap_plan=$1
	echo "1..$1"
}

_tap_result()
{
	local good=$1
	shift
	_tap_n=$((_tap_n + 1))
	if [ "$good" = 1 ]; then
		echo "ok $_tap_n - $*"
		return 0
	fi
	echo "not ok $_tap_n - $*"
	_tap_failed=$((_tap_failed + 1))
	return 1
}

ok()
{
	local rc=$1
	shift
	if [ "$rc" = 0 ]; then
		_tap_result 1 "$@"
	else
		_tap_result 0 "$@"
	fi
}

pass()
{
	_tap_result 1 "$@"
}

fail()
{
	_tap_result 0 "$@"
}

diag()
{
	local line
	while IFS= read -r line; do
		echo "# $line" >&2
	done <<<"$*"
}

note()
{
	local line
	while IFS= read -r line; do
		echo "# $line"
	done <<<"$*"
}

is()
{
	local got=$1 want=$2
	shift 2
	if [ "$got" = "$want" ]; then
		_tap_result 1 "$@"
	else
		_tap_result 0 "$@"
		diag "$(printf "     got: '%s'\n    expected: '%s'" "$got" "$want")"
		return 1
	fi
}

isnt()
{
	local got=$1 unwanted=$2
	shift 2
	if [ "$got" != "$unwanted" ]; then
		_tap_result 1 "$@"
	else
		_tap_result 0 "$@"
		diag "$(printf "     got: '%s'\n    expected anything else" "$got")"
		return 1
	fi
}

like()
{
	local got=$1 re=$2
	shift 2
	if [[ $got =~ $re ]]; then
		_tap_result 1 "$@"
	else
		_tap_result 0 "$@"
		diag "$(printf "     got: '%s'\n    doesn't match: /%s/" "$got" "$re")"
		return 1
	fi
}

cmp_ok()
{
	local a=$1 op=$2 b=$3 r=0
	shift 3
	local num='^-?[0-9]+$'
	if ! [[ $a =~ $num && $b =~ $num ]]; then
		_tap_result 0 "$@"
		diag "cmp_ok: not integers: '$a' $op '$b'"
		return 1
	fi
	case $op in
	'==' | -eq) ((a == b)) && r=1 ;;
	'!=' | -ne) ((a != b)) && r=1 ;;
	'<' | -lt) ((a < b)) && r=1 ;;
	'<=' | -le) ((a <= b)) && r=1 ;;
	'>' | -gt) ((a > b)) && r=1 ;;
	'>=' | -ge) ((a >= b)) && r=1 ;;
	*)
		_tap_result 0 "$@"
		diag "cmp_ok: unknown operator '$op'"
		return 1
		;;
	esac
	_tap_result "$r" "$@" && return 0
	diag "$(printf "    '%s'\n        %s\n    '%s'" "$a" "$op" "$b")"
	return 1
}

skip()
{
	local desc=$1 reason=${2:-}
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - $desc # skip $reason"
}

skip_all()
{
	echo "1..0 # SKIP $*"
	exit 0
}

bail_out()
{
	echo "Bail out! $*"
	exit 255
}

tap_failures()
{
	echo "$_tap_failed"
}

done_testing()
{
	if [ -z "$_tap_plan" ]; then
		echo "1..$_tap_n"
	elif [ "$_tap_plan" != "$_tap_n" ]; then
		diag "planned $_tap_plan tests but ran $_tap_n"
		exit 255
	fi
	[ "$_tap_failed" -gt 254 ] && exit 254
	exit "$_tap_failed"
}

# The pid of the command run_timeout is waiting for (for signal handlers).
TAP_BG_PID=

# Waits for a background PID and returns its status.  A trapped signal
# interrupts wait (status > 128) while the process runs on: wait again.
wait_through_signals()
{
	local pid=$1 rc
	wait "$pid"
	rc=$?
	while [ $rc -gt 128 ] && kill -0 "$pid" 2>/dev/null; do
		wait "$pid"
		rc=$?
	done
	return $rc
}

run_timeout()
{
	local secs=$1 rc
	shift
	timeout --kill-after=5 "$secs" "$@" &
	TAP_BG_PID=$!
	# Under fixture.sh, a teardown (also the guardian's) stops it too.
	if declare -F fixture_track_pid >/dev/null && [ -n "${FX_STATE:-}" ]; then
		fixture_track_pid "$TAP_BG_PID"
	fi
	wait_through_signals "$TAP_BG_PID"
	rc=$?
	TAP_BG_PID=
	[ $rc -eq 124 ] && diag "run_timeout: '$*' killed after ${secs}s"
	return $rc
}
