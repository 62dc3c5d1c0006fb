#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/vm/matrix.sh [--kernels "5.10 6.1 6.12 host"] [--timeout S]
#                    [-- checks.sh options]
#
# Runs tests/vm/checks.sh in a TCG guest of each Debian kernel (tests/vm/
# boot.sh) and directly on this machine ("host"), then prints the table:
# kernel x {BPF loads, hook path, events seen, prefetches issued, hits,
# tests passed}.  Per-row artefacts (status.txt, the agent's JSON, the TAP
# log, the guest's dmesg, console.log) stay in $VM_CACHE/runs/ROW/; the
# table also goes to $VM_CACHE/matrix.md.  Exit status 0 when every check of
# every row passed.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

kernels="$(vm_kernel_suites) host"
timeout_s=300
while [ $# -gt 0 ]; do
	case $1 in
	--kernels) kernels=$2; shift 2 ;;
	--timeout) timeout_s=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "matrix.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
check_args=("${VM_CHECK_ARGS[@]}" "$@")
[ "$(id -u)" -eq 0 ] || vm_die "needs root"

declare -A secs
t_all=$(date +%s)
for k in $kernels; do
	run=$VM_CACHE/runs/$k
	t0=$(date +%s)
	if [ "$k" = host ]; then
		rm -rf "$run"
		mkdir -p "$run/out"
		vm_log "host: running the checks on $(uname -r)"
		bash "$VM_DIR/checks.sh" "$run/out" "${check_args[@]}" >"$run/out/checks.tap" 2>&1
	else
		# Fetch first, so the boot's timeout covers only the boot.
		bash "$VM_DIR/fetch-kernel.sh" "$k" >/dev/null || vm_die "$k: cannot fetch the kernel"
		bash "$VM_DIR/boot.sh" --quiet --timeout "$timeout_s" --run-dir "$run" "$k" \
			"$VM_DIR/guest-checks.sh" "$VM_REPO" "${check_args[@]}"
	fi
	rc=$?
	secs[$k]=$(($(date +%s) - t0))
	echo "$rc" >"$run/status"
	vm_log "$k: status $rc after ${secs[$k]}s (details: $run/out/checks.tap)"
	grep -E '^not ok' "$run/out/checks.tap" 2>/dev/null | sed "s/^/  $k: /" >&2
done
total=$(($(date +%s) - t_all))

# ---- the table ----------------------------------------------------------------
row()
{
	local k=$1 run=$VM_CACHE/runs/$1 rc label notes
	local KERNEL= BPF_LOADS= HOOK= EVENTS= PREFETCHED= HITS= PASSED= TOTAL= MADVISE=
	local OBSERVE_ONLY= TRACEPOINT= FENTRY= MISSES_LEAP= MISSES_OFF= CGROUP= V2_ATTACH_HITS=
	rc=$(cat "$run/status" 2>/dev/null || echo '?')
	if [ -f "$run/out/results.env" ]; then
		# shellcheck disable=SC1091
		. "$run/out/results.env"
	fi
	label=$k
	[ "$k" = host ] && label="host"
	notes=()
	[ -n "$MADVISE" ] && [ "$MADVISE" != "WILLNEED supported" ] && notes+=("$MADVISE")
	[ "$OBSERVE_ONLY" = yes ] && notes+=("agent: \"observing only\"")
	[ "$FENTRY" = no ] && notes+=("fentry refused")
	[ "$TRACEPOINT" = no ] && notes+=("no count_memcg_events tracepoint")
	[ -n "$MISSES_LEAP" ] && [ -n "$MISSES_OFF" ] &&
		notes+=("swap-in misses $MISSES_LEAP vs $MISSES_OFF without prefetch")
	case $rc in
	124) notes+=("TIMEOUT") ;;
	125) notes+=("guest crashed") ;;
	esac
	[ "$CGROUP" = v2 ] && notes+=("attach on cgroup v2: $V2_ATTACH_HITS hits")
	printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s/%s | %s | %s |\n' \
		"$label" "${KERNEL:-?}" "${CGROUP:-?}" "${BPF_LOADS:-?}" "${HOOK:-?}" "${EVENTS:--}" \
		"${PREFETCHED:--}" "${HITS:--}" "${PASSED:-0}" "${TOTAL:-?}" "${secs[$k]}s" \
		"$(IFS=';'; echo "${notes[*]}" | sed 's/;/; /g')"
}
{
	echo "| kernel | uname -r | cgroups | BPF loads | hook path | events seen | prefetches issued | hits | tests passed | time | notes |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	for k in $kernels; do
		row "$k"
	done
	echo
	echo "Total: ${total}s (guests under TCG: boot, swap on a virtio disk, checks)."
} | tee "$VM_CACHE/matrix.md"

fail=0
for k in $kernels; do
	[ "$(cat "$VM_CACHE/runs/$k/status")" = 0 ] || fail=1
done
exit $fail
