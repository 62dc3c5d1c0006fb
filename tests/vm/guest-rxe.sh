# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# Sourced by guest scripts (tests/vm/rdma-guest.sh, rdma-fh-guest.sh):
# soft-RoCE inside a guest.
#
#   guest_rxe_up VM_CACHE   rxe0 over a dummy netdev at $RXE_IP; 0 when
#                           ibv_devices lists it
#   guest_rxe_down          both removed again (the next script in the same
#                           guest, tests/vm/suite.sh, makes its own)
#
# The guest's modules live in the kernel cache under the host path; the
# kernel's own module autoloading (rxe needs crc32, ucma needs ib_uverbs)
# must find them too, hence a modprobe wrapper as /proc/sys/kernel/modprobe.
RXE_IP=10.77.0.1

guest_rxe_up()
{
	local vm_cache=$1 kv mroot= d m
	kv=$(uname -r)
	for d in "$vm_cache"/kernels/*/root "$vm_cache"/kernels/*/root/usr; do
		[ -d "$d/lib/modules/$kv" ] && mroot=$d && break
	done
	printf '#!/bin/sh\nexec /sbin/modprobe -d %s "$@"\n' "$mroot" >/tmp/modprobe
	chmod +x /tmp/modprobe
	echo /tmp/modprobe >/proc/sys/kernel/modprobe
	for m in dummy crc32_generic rdma_rxe ib_uverbs rdma_ucm fuse loop; do
		/tmp/modprobe "$m" 2>/dev/null
	done
	ip link set lo up
	guest_rxe_down # a leftover would make the next lines fail
	ip link add leaprd0 type dummy && ip addr add "$RXE_IP/24" dev leaprd0 &&
		ip link set leaprd0 up && rdma link add rxe0 type rxe netdev leaprd0
	ibv_devices 2>/dev/null | grep -q rxe0
}

guest_rxe_down()
{
	rdma link show 2>/dev/null | grep -q 'link rxe0' && rdma link delete rxe0
	ip link show leaprd0 >/dev/null 2>&1 && ip link del leaprd0
	return 0
}
