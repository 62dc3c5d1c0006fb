// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * The floor of watching faults: empty programs on the hooks the observer's
 * tracepoint path uses (bpf/leap_observer.bpf.c).  What any BPF program
 * there costs every fault of every task, before it does anything
 * (tools/bench-overhead.sh, row "floor").
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

SEC("tp_btf/page_fault_user")
int BPF_PROG(floor_pf_user)
{
	return 0;
}

SEC("tp_btf/page_fault_kernel")
int BPF_PROG(floor_pf_kernel)
{
	return 0;
}

SEC("tp_btf/count_memcg_events")
int BPF_PROG(floor_memcg_ev)
{
	return 0;
}
