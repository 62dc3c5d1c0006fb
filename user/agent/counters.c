// SPDX-License-Identifier: MIT
/* The agent's counter table and the outputs it drives (counters.h). */
#include <string.h>

#include "agent.h"
#include "counters.h"
#include "state.h"

#define SLOT(key, field, prom, help)                                                     \
	{                                                                                \
		key, prom, help, COUNTER_SLOT, offsetof(struct leap_cg_stats, field),    \
			false                                                            \
	}
#define AGENT(key, field, prom, help)                                                    \
	{                                                                                \
		key, prom, help, COUNTER_AGENT, offsetof(struct agent, field), false     \
	}
#define CORE(key, field, prom, help)                                                     \
	{                                                                                \
		key, prom, help, COUNTER_CORE,                                           \
			offsetof(struct leap_core_counters, field), false                \
	}
#define BACKEND(key, field, prom, help)                                                  \
	{                                                                                \
		key, prom, help, COUNTER_BACKEND, offsetof(struct backend_stats, field), \
			true                                                             \
	}

const struct agent_counter agent_counters[] = {
	SLOT("faults", faults, "leap_faults_total",
	     "User page faults of the target's tasks."),
	SLOT("swapin_misses", swapin_misses, "leap_swapin_misses_total",
	     "Faults that had to read from swap (major faults; in backend mode every "
	     "read of the backend device)."),
	SLOT("prefetched", prefetches, "leap_prefetched_pages_total",
	     "Pages the agent asked to prefetch."),
	SLOT("hits", prefetch_hits, "leap_prefetch_hits_total",
	     "Faults served by a page the agent prefetched."),
	SLOT("prefetch_wasted", prefetch_wasted, "leap_prefetch_wasted_pages_total",
	     "Prefetched pages read from swap again before use (reclaimed under "
	     "memory pressure)."),
	SLOT("swapin_unarmed", swapin_unarmed, "leap_swapin_unarmed_total",
	     "Swap reads of the target's tasks while the fault hooks were off "
	     "(tracepoint path): page-ins the agent did not see."),
	SLOT("swap_cache_hits", swap_cache_hits, "leap_swap_cache_hits_total",
	     "Swap-cache hits on pages the agent did not prefetch (Linux's readahead "
	     "read them, or they had not left the swap cache; tracepoint path with "
	     "--swap-cache-hits: the fentry path sends them to the agent as events)."),
	SLOT("events_sent", events_sent, "leap_events_sent_total",
	     "Fault events BPF sent to the agent."),
	SLOT("events_dropped", events_dropped, "leap_events_dropped_total",
	     "Fault events lost because the ring buffer was full."),
	CORE("events", events, "leap_agent_events_total", "Fault events the agent read."),
	CORE("events_ignored", ignored, "leap_agent_events_ignored_total",
	     "Events that were not swap accesses."),
	CORE("swap_faults", swap_faults, "leap_agent_swap_faults_total",
	     "Swap accesses fed to the prefetch engine."),
	CORE("late_prefetches", late, "leap_agent_late_prefetches_total",
	     "Major faults on pages the agent had asked to prefetch (too late)."),
	CORE("lookaheads", lookaheads, "leap_agent_lookaheads_total",
	     "Prefetch windows issued early by a hit on a look-ahead marker."),
	CORE("nested_stride_windows", nested_strides,
	     "leap_agent_nested_stride_windows_total",
	     "Prefetch windows along a nested stride (a repeating period of deltas)."),
	CORE("held_for_kernel_readahead", held_kernel_ra,
	     "leap_agent_held_for_kernel_readahead_pages_total",
	     "Window pages not prefetched because Linux's readahead serves the stream."),
	CORE("windows_beyond_kernel_readahead", beyond_kernel_ra,
	     "leap_agent_windows_beyond_kernel_readahead_total",
	     "Windows issued past the kernel's readahead on a read stream it serves."),
	CORE("around_left_to_kernel", around_left,
	     "leap_agent_around_left_to_kernel_total",
	     "Misses with no trend whose window around the fault was left to the "
	     "kernel's readahead, which reads around it already."),
	CORE("zero_filled_misses", zero_misses, "leap_agent_zero_filled_misses_total",
	     "Misses that found only zero-filled swap entries (no device read)."),
	CORE("quiet_sets", quiet_sets, "leap_agent_quiet_sets_total",
	     "Threads told not to wake the agent for their misses."),
	CORE("quiet_lifts", quiet_lifts, "leap_agent_quiet_lifts_total",
	     "Threads told to wake the agent again."),
	AGENT("prefetch_syscalls", acct.pf_sum.willneed.calls,
	      "leap_agent_prefetch_syscalls_total", "process_madvise calls made."),
	AGENT("memcg_stat_reads", memflush.reads, "leap_agent_memcg_stat_reads_total",
	      "Reads of a swapping target's memory.stat, which refresh its reclaim "
	      "statistics (memcg_flush_ms)."),
	AGENT("prefetch_not_swapped", acct.pf_sum.not_swapped,
	      "leap_agent_prefetch_not_swapped_pages_total",
	      "Candidate pages skipped because they were not swapped out."),
	AGENT("prefetch_reissues_skipped", acct.pf_sum.reissues_skipped,
	      "leap_agent_prefetch_reissues_skipped_pages_total",
	      "Window pages not issued again: issued under 20 ms before, still on their "
	      "way."),
	AGENT("prefetch_record_calls", acct.pf_sum.record_calls,
	      "leap_agent_prefetch_record_calls_total",
	      "Runs of the leap_record BPF program (one per window)."),
	AGENT("prefetch_map_errors", acct.pf_sum.map_errors,
	      "leap_agent_prefetch_map_errors_total",
	      "Prefetched-page map updates that failed."),
	AGENT("pagemap_scans", acct.pm_sum.scans, "leap_agent_pagemap_scans_total",
	      "PAGEMAP_SCAN ioctls of the pagemap filter."),
	AGENT("pagemap_reads", acct.pm_sum.reads, "leap_agent_pagemap_reads_total",
	      "pread calls of the pagemap filter."),
	AGENT("shmem_windows", acct.pf_sum.shmem_windows,
	      "leap_agent_shmem_windows_total",
	      "Windows in shared memory (shmem), whose swapped pages the pagemap shows "
	      "as none."),
	AGENT("windows_queued", acct.issued.queued, "leap_agent_windows_queued_total",
	      "Windows queued for the workers that issue them."),
	AGENT("windows_issued", acct.issued.issued, "leap_agent_windows_issued_total",
	      "Windows the workers issued (several coalesced count once)."),
	AGENT("windows_coalesced", acct.issued.coalesced,
	      "leap_agent_windows_coalesced_total",
	      "Windows issued together with the one before them (same process)."),
	AGENT("windows_stale", acct.issued.stale, "leap_agent_windows_stale_total",
	      "Windows dropped because the program had faulted past them."),
	AGENT("pages_stale", acct.issued.stale_pages, "leap_agent_stale_pages_total",
	      "Pages trimmed off windows because the program had faulted past them."),
	AGENT("windows_overflow", acct.issued.overflow,
	      "leap_agent_windows_overflow_total",
	      "Windows dropped from a target's full queue (the oldest go)."),
	AGENT("pages_over_budget", acct.issued.budget_pages,
	      "leap_agent_budget_dropped_pages_total",
	      "Pages cut from windows by a prefetch_rate budget."),
	AGENT("queue_depth_max", acct.issued.max_depth, "leap_agent_queue_depth_max",
	      "The most windows queued at once."),
	AGENT("worker_busy_ns", acct.issued.busy_ns,
	      "leap_agent_worker_busy_nanoseconds_total",
	      "Time the workers spent issuing windows, all workers."),
	AGENT("prefetch_cpu_moves", acct.cpu_moves, "leap_agent_prefetch_cpu_moves_total",
	      "Times an issuing thread moved to the CPU a window's fault completed on "
	      "(--prefetch-cpu fault)."),
	AGENT("cold_behind_pages", acct.pf_sum.cold_pages,
	      "leap_agent_cold_behind_pages_total",
	      "Pages behind fills given MADV_COLD (cold_behind)."),
	AGENT("cold_syscalls", acct.pf_sum.cold.calls, "leap_agent_cold_syscalls_total",
	      "process_madvise(MADV_COLD) calls made."),
	AGENT("fault_hook_arms", arm.arms, "leap_agent_fault_hook_arms_total",
	      "Times the fault hooks were attached because a target began swapping in "
	      "(tracepoint path)."),
	AGENT("fault_hook_disarms", arm.disarms, "leap_agent_fault_hook_disarms_total",
	      "Times they came off because no target had missed or hit for 2 s."),
	CORE("stand_downs", stand_downs, "leap_agent_stand_downs_total",
	     "Times a target stood down: prefetching cost more than it saved, or "
	     "nothing was worth prefetching."),
	CORE("probes", probes, "leap_agent_probes_total",
	     "Times a target that stood down prefetched again to see whether it pays."),
	CORE("processes_exited", exited, "leap_agent_processes_exited_total",
	     "Watched processes seen gone."),
	CORE("windows_planned", windows, "leap_agent_windows_planned_total",
	     "Windows the decision core planned (before the workers' trimming and "
	     "budgets)."),
	CORE("pages_planned", pages, "leap_agent_pages_planned_total",
	     "Pages in the windows the decision core planned."),
	CORE("windows_after_stand_down", gated[LEAP_GATE_STANDBY],
	     "leap_agent_windows_after_stand_down_total",
	     "Windows decided for a target that stood down (not issued)."),
	CORE("held_epochs", held_epochs, "leap_agent_held_epochs_total",
	     "Epochs in which a target's windows were held to measure whether they "
	     "make it faster (outcome = judge)."),
	CORE("windows_held_for_epochs", gated[LEAP_GATE_EPOCH],
	     "leap_agent_windows_held_for_epochs_total",
	     "Windows decided in a held epoch (not issued)."),
	CORE("outcome_comparisons", outcome_comparisons,
	     "leap_agent_outcome_comparisons_total",
	     "Held epochs compared with the prefetching epochs around them."),
	CORE("outcome_stand_downs", outcome_stand_downs,
	     "leap_agent_outcome_stand_downs_total",
	     "Times a target stood down because its held epochs ran as fast as its "
	     "prefetching ones (part of stand_downs)."),
	CORE("sweep_windows", sweep_windows, "leap_agent_sweep_windows_total",
	     "Windows ahead of a shared region's front, which several processes "
	     "read upwards at once (a parallel scan of a buffer pool)."),
	CORE("sweep_pages", sweep_pages, "leap_agent_sweep_pages_total",
	     "Pages in those windows (part of pages_planned)."),
	CORE("sweep_replaced", sweep_replaced, "leap_agent_sweep_replaced_total",
	     "Windows of a process's own stream that a swept region's replaced."),
	CORE("shared_gap_pages", shared_gap_pages, "leap_agent_shared_gap_pages_total",
	     "Pages added between the pages of a window two pages a step in shared "
	     "memory, whose misses come two apart where the kernel reads pairs "
	     "(part of pages_planned)."),
	{"backend_ambiguous", "leap_agent_backend_ambiguous_faults_total",
	 "Faults with several backend reads (kernel readahead), not used.", COUNTER_AGENT,
	 offsetof(struct agent, acct.ambiguous), true},
	BACKEND("backend_queued", queued, "leap_agent_backend_queued_pages_total",
		"Pages leap-swapd queued for prefetching."),
	BACKEND("backend_dropped", dropped, "leap_agent_backend_dropped_pages_total",
		"Pages leap-swapd dropped because its prefetch queue was full."),
	BACKEND("backend_out_of_range", out_of_range,
		"leap_agent_backend_out_of_range_pages_total",
		"Candidates beyond the backend device, never sent."),
	BACKEND("backend_errors", errors, "leap_agent_backend_errors_total",
		"Failed commands to leap-swapd."),
	BACKEND("backend_other_device", other_device,
		"leap_agent_backend_other_device_pages_total",
		"Candidates swapped to another swap area than the backend's."),
	BACKEND("backend_left_to_kernel", left_to_kernel,
		"leap_agent_backend_left_to_kernel_pages_total",
		"Slots in runs, read by process_madvise alone, not pushed."),
	BACKEND("backend_no_offset", no_offset,
		"leap_agent_backend_no_offset_pages_total",
		"Swapped candidates pagemap showed without their swap slot."),
	BACKEND("backend_type_votes", type_votes, "leap_agent_backend_type_votes_total",
		"Device reads that confirmed a candidate's swap type."),
	BACKEND("backend_type_switches", type_switches,
		"leap_agent_backend_type_switches_total",
		"Times the evidence changed the backend's swap type."),
};

const size_t agent_ncounters = sizeof(agent_counters) / sizeof(agent_counters[0]);

static uint64_t u64_at(const void *base, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)base + off, sizeof(v));
	return v;
}

uint64_t agent_counter_of_slot(const struct leap_cg_stats *s,
			       const struct agent_counter *c)
{
	return c->src == COUNTER_SLOT ? u64_at(s, c->off) : 0;
}

bool agent_counter_shown(const struct agent *a, const struct agent_counter *c)
{
	return !c->backend_only || a->ex.be;
}

uint64_t agent_counter_value(const struct agent *a, const struct leap_cg_stats *tot,
			     const struct agent_counter *c)
{
	switch (c->src) {
	case COUNTER_SLOT:
		return u64_at(tot, c->off);
	case COUNTER_AGENT:
		return u64_at(a, c->off);
	case COUNTER_CORE:
		return u64_at(leap_core_counters(a->dec.core), c->off);
	case COUNTER_BACKEND:
		return a->ex.be ? u64_at(&a->ex.be->st, c->off) : 0;
	}
	return 0;
}

void agent_counters_json(json_object *o, const struct agent *a,
			 const struct leap_cg_stats *tot)
{
	for (size_t i = 0; i < agent_ncounters; i++) {
		const struct agent_counter *c = &agent_counters[i];

		if (agent_counter_shown(a, c))
			json_object_object_add(
				o, c->key,
				json_object_new_uint64(agent_counter_value(a, tot, c)));
	}
}

void agent_workers_json(json_object *o, const struct agent *a)
{
	json_object *each = json_object_new_array();
	unsigned n = issuer_workers(a->ex.iss);

	for (unsigned i = 0; i < n; i++)
		json_object_array_add(
			each, json_object_new_uint64(a->acct.issued.worker_busy_ns[i]));
	json_object_object_add(o, STATE_A_WORKER_BUSY, each);
	json_object_object_add(o, STATE_A_QUEUE_DEPTH,
			       json_object_new_uint64(a->acct.issued.depth));
}

void agent_counters_line(FILE *f, json_object *o)
{
	fputs("leap-agent: counters:", f);
	for (size_t i = 0; i < agent_ncounters; i++) {
		json_object *v;

		if (json_object_object_get_ex(o, agent_counters[i].key, &v))
			fprintf(f, " %s=%s", agent_counters[i].key,
				json_object_get_string(v));
	}
	fputc('\n', f);
}

void agent_counters_list(FILE *f)
{
	static const char *const where[] = {"per-target", "agent", "agent", "backend"};

	for (size_t i = 0; i < agent_ncounters; i++) {
		const struct agent_counter *c = &agent_counters[i];

		fprintf(f, "%s\t%s\t%s\t%s\n", c->key, c->prom,
			c->backend_only ? "backend" : where[c->src], c->help);
	}
}

void agent_rates(const struct leap_cg_stats *s, bool pushes_only, double *accuracy,
		 double *coverage)
{
	/* The misses the hooks did not see (read while they were off) are
	 * misses all the same. */
	uint64_t faults = s->swapin_misses + s->swapin_unarmed +
			  (pushes_only ? 0 : s->prefetch_hits);

	*accuracy = s->prefetches ? (double)s->prefetch_hits / (double)s->prefetches : 0;
	*coverage = faults ? (double)s->prefetch_hits / (double)faults : 0;
}
