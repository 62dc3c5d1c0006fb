// SPDX-License-Identifier: MIT
/* The report of a stopped agent (summary.h). */
#include <sys/resource.h>

#include "account.h"
#include "agent.h"
#include "cgroup.h"
#include "counters.h"
#include "latency.h"
#include "state.h"
#include "summary.h"

struct cpu_time cpu_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (struct cpu_time){
		.user = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
		.sys = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
	};
}

struct cpu_time cpu_since(struct cpu_time t0)
{
	struct cpu_time t = cpu_now();

	return (struct cpu_time){.user = t.user - t0.user, .sys = t.sys - t0.sys};
}

static double per_event_us(double seconds, uint64_t events)
{
	return events ? seconds * 1e6 / (double)events : 0;
}

static void add_double(json_object *o, const char *key, double v)
{
	json_object_object_add(o, key, json_object_new_double(v));
}

uint64_t host_faults_now(void)
{
	uint64_t faults = 0;

	read_keyed("/proc", "vmstat", "pgfault", &faults);
	return faults;
}

/*
 * BPF run time per page fault, and per program: where the BPF time goes.
 * The programs run for every fault, swap-in and bio on the host, not only
 * the targets', and some stay on after every target stood down; so their
 * time is divided by the host's faults over the same span (pgfault), not
 * by the targets' faults seen while the fault hooks were on, which made a
 * stood-down target's few faults carry all of it (4,000-47,000 ns "a
 * fault" on zram, 2026-11-26).  Without /proc/vmstat (bpf_host_faults 0):
 * the targets' faults.
 */
static void add_bpf_stats(json_object *o, struct agent *a, const struct leap_cg_stats *s)
{
	struct leap_prog_stats ps[16];
	json_object *progs = json_object_new_object();
	int n = leap_observer_prog_stats(a->obs, ps, 16);
	uint64_t ns = 0, cnt = 0, now = host_faults_now();
	uint64_t host =
		a->host_faults0 && now > a->host_faults0 ? now - a->host_faults0 : 0;
	uint64_t faults = host ? host : s->faults;

	for (int i = 0; i < n; i++) {
		json_object *p = json_object_new_object();

		ns += ps[i].run_time_ns;
		cnt += ps[i].run_cnt;
		json_object_object_add(p, "run_cnt",
				       json_object_new_uint64(ps[i].run_cnt));
		add_double(p, "ns_per_run",
			   ps[i].run_cnt
				   ? (double)ps[i].run_time_ns / (double)ps[i].run_cnt
				   : 0);
		json_object_object_add(progs, ps[i].name, p);
	}
	add_double(o, "bpf_ns_per_fault",
		   faults ? (double)ns / (double)faults
			  : (cnt ? (double)ns / (double)cnt : 0));
	add_double(o, "bpf_run_s", ns / 1e9);
	json_object_object_add(o, "bpf_host_faults", json_object_new_uint64(host));
	json_object_object_add(o, "bpf_progs", progs);
}

/* The ring's wake-ups of the agent: those BPF forced, those it skipped
 * because the agent was awake (--wakeups). */
static void add_wakeups(json_object *o, const struct agent *a)
{
	__u64 sent, skipped;

	leap_observer_wakeups(a->obs, &sent, &skipped);
	json_object_object_add(o, "wakeups", json_object_new_uint64(sent));
	json_object_object_add(o, "wakeups_skipped", json_object_new_uint64(skipped));
}

json_object *summary_build(struct agent *a, double wall_s, struct cpu_time cpu)
{
	json_object *o = json_object_new_object();
	double willneed_cpu, own_cpu, acc, cov;
	struct leap_cg_stats s;

	agent_refresh(a);
	willneed_cpu = a->acct.pf_sum.willneed.cpu_ns / 1e9;
	own_cpu = cpu.user + cpu.sys - willneed_cpu;
	if (own_cpu < 0)
		own_cpu = 0;
	agent_totals(a, &s);
	add_double(o, "wall_s", wall_s);
	json_object_object_add(o, "hook",
			       json_object_new_string(leap_observer_hook_name(a->obs)));
	agent_counters_json(o, a, &s);
	agent_rates(&s, agent_pushes_only(a), &acc, &cov);
	add_double(o, "accuracy", acc);
	add_double(o, "coverage", cov);
	json_object_object_add(o, "prefetch_via",
			       json_object_new_string(agent_prefetch_via(a)));
	/* Whether swap_cache_hits above was counted (--swap-cache-hits, on
	 * the tracepoint path): its 0 otherwise means not counted, not none. */
	json_object_object_add(
		o, "swap_cache_hits_counted",
		json_object_new_boolean(leap_observer_counts_swap_cache_hits(a->obs)));
	if (a->ex.be) {
		uint64_t hits = a->ex.be_hits0;

		/* leap-swapd's own count, asked once now (not a counter of ours). */
		if (a->ex.be->fd >= 0)
			backend_stat(a->ex.be, "hits", &hits);
		json_object_object_add(o, "backend_cache_hits",
				       json_object_new_uint64(hits - a->ex.be_hits0));
		json_object_object_add(o, "backend_swap_type",
				       json_object_new_int(a->ex.be->swap_type));
	}
	add_double(o, "agent_cpu_us_per_event",
		   per_event_us(cpu.user + cpu.sys,
				leap_core_counters(a->dec.core)->events));
	add_double(o, "agent_user_us_per_event",
		   per_event_us(cpu.user, leap_core_counters(a->dec.core)->events));
	/* What the kernel did inside process_madvise for the windows (page
	 * allocation, memcg charge and its reclaim, read submission) apart
	 * from the agent's own work. */
	add_double(o, "prefetch_syscall_cpu_s", willneed_cpu);
	add_double(o, "prefetch_syscall_wall_s", a->acct.pf_sum.willneed.wall_ns / 1e9);
	json_object_object_add(o, "workers",
			       json_object_new_int((int)issuer_workers(a->ex.iss)));
	agent_workers_json(o, a);
	add_double(o, "cold_syscall_cpu_s", a->acct.pf_sum.cold.cpu_ns / 1e9);
	add_double(o, "agent_own_cpu_us_per_event",
		   per_event_us(own_cpu, leap_core_counters(a->dec.core)->events));
	add_double(o, "reaction_p50_us", agent_latency_us(&a->acct.lat, 50));
	add_double(o, "reaction_p99_us", agent_latency_us(&a->acct.lat, 99));
	/* The agent's part of the reaction: the miss's event sent to its
	 * window handed to the kernel (agent_record_dispatch()). */
	add_double(o, "dispatch_p50_us", agent_dispatch_us(&a->acct.lat, 50));
	add_double(o, "dispatch_p99_us", agent_dispatch_us(&a->acct.lat, 99));
	add_double(o, "fault_hooks_arm_max_us", a->arm.arm_latency_max_ns / 1e3);
	add_wakeups(o, a);
	json_object_object_add(o, "targets", state_targets_json(a));
	if (a->bpf_stats)
		add_bpf_stats(o, a, &s);
	return o;
}

static double get_double(json_object *o, const char *key)
{
	return json_object_get_double(json_object_object_get(o, key));
}

static const char *get_string(json_object *o, const char *key)
{
	return json_object_get_string(json_object_object_get(o, key));
}

void summary_print(FILE *f, json_object *o)
{
	fprintf(f,
		"leap-agent: wall %.2fs  faults %s  swap-in misses %s  prefetched %s  "
		"hits %s  accuracy %.1f%%  coverage %.1f%%  dropped %s  reaction p50 "
		"%.0fus p99 %.0fus\n",
		get_double(o, "wall_s"), get_string(o, "faults"),
		get_string(o, "swapin_misses"), get_string(o, "prefetched"),
		get_string(o, "hits"), 100 * get_double(o, "accuracy"),
		100 * get_double(o, "coverage"), get_string(o, "events_dropped"),
		get_double(o, "reaction_p50_us"), get_double(o, "reaction_p99_us"));
	agent_counters_line(f, o);
}

void summary_write(const char *path, json_object *o)
{
	if (path && json_object_to_file_ext(path, o, JSON_C_TO_STRING_PRETTY))
		fprintf(stderr, "leap-agent: cannot write %s: %s\n", path,
			json_util_get_last_err());
}
