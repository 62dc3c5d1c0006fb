# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# shellcheck disable=SC2034 # the VM_ variables are for the scripts that source this file
# tests/vm/lib.sh: shared paths and helpers of the VM test bed (sourced).
#
#   VM_REPO     the checkout (the guest sees it at the same path)
#   VM_CACHE    downloads, extracted kernels, initramfs images, run dirs
#               ($LEAP_VM_CACHE, default tests/vm/cache, ignored by git)
#   vm_log MSG / vm_die MSG
#   vm_kernel_suites    the matrix: Debian suites, oldest kernel first
#   vm_suite_of NAME    5.10|6.1|6.12|host-suite|SUITE -> Debian suite

VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VM_REPO=$(cd "$VM_DIR/../.." && pwd)
VM_CACHE=${LEAP_VM_CACHE:-$VM_DIR/cache}

vm_log()
{
	echo "vm: $*" >&2
}

vm_die()
{
	echo "vm: error: $*" >&2
	exit 1
}

# The codename of this machine's own release (the "configured suite").
vm_host_suite()
{
	local c
	c=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[ -n "$c" ] || c=$(sed -n 's/^VERSION=.*(\(.*\)).*/\1/p' /etc/os-release)
	[ -n "$c" ] || vm_die "cannot tell this machine's release codename from /etc/os-release"
	echo "$c"
}

# Kernel names used by the matrix -> Debian suites.  6.1 is whatever the
# machine's configured suite ships (bookworm here).
vm_suite_of()
{
	case $1 in
	5.10) echo bullseye ;;
	6.1 | host-suite) vm_host_suite ;;
	6.12) echo trixie ;;
	*) echo "$1" ;;
	esac
}

vm_kernel_suites()
{
	echo "5.10 6.1 6.12"
}

# The workload every row of the matrix runs (tests/vm/checks.sh options):
# stride-16 over 16 MiB under an 8 MiB limit (32 in 16 until 2026-11-28:
# half the compute; the checks ask for misses, prefetches and hits, not
# for how many), with 0.3 ms
# of work after each
# page.  TCG slows the CPU 20-50x but not the virtio disk, so without that
# think time the agent (reaction ~0.5 ms under TCG) is late for every page
# and the run shows the emulator, not the prefetcher; the host row runs the
# same for comparability.
VM_CHECK_ARGS=(--footprint 16M --compute-ns 300000 --run-timeout 90)

# vm_relay_tap FILE PREFIX: re-emits a guest's TAP file through tap.sh (the
# caller sources it): each result as pass/fail with PREFIX, a bail-out as a
# failure, comments as they are.  Returns 1 if FILE has no plan line (the
# guest script did not finish).
vm_relay_tap()
{
	vm_relay_tap_lines "$@" || return 1
	grep -q '^1\.\.[0-9]' "$1"
}

# vm_relay_tap_lines FILE PREFIX: the same without the plan check.
vm_relay_tap_lines()
{
	local file=$1 prefix=$2 line
	[ -f "$file" ] || return 1
	while IFS= read -r line; do
		case $line in
		"ok "*) pass "$prefix${line#ok * - }" ;;
		"not ok "*) fail "$prefix${line#not ok * - }" ;;
		"Bail out!"*) fail "$prefix$line" ;;
		"#"*) echo "$line" ;;
		esac
	done <"$file"
}
