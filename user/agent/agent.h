/* SPDX-License-Identifier: MIT */
/*
 * The agent: observer events in, prefetches out, in four stages
 * (docs/architecture.md):
 *
 *   observe  agent.c (agent_on_event, the driver), targets.c, hooks.c,
 *            leaves.c; BPF through user/observer*.c only
 *   decide   decision.c: the pure core (include/leap/core.h) fed, and
 *            recorded (recording.c); its facts from procs.c
 *   execute  execute.c: a plan performed (quiet map, MADV_COLD, windows to
 *            issuer.c's workers or inline through prefetch.c / backend.c,
 *            a verdict's BPF flags)
 *   account  account.c: results applied (counters, latency.c, one
 *            errno-to-policy function); worker completions land here
 *
 * No CLI, no signals: session.c drives it.
 */
#ifndef LEAP_AGENT_AGENT_H
#define LEAP_AGENT_AGENT_H

#include <stdbool.h>
#include <stdint.h>

#include <pthread.h>

#include "backend.h"
#include "config.h"
#include "issuer.h"
#include "latency.h"
#include "leap/core.h"
#include "leap/recent.h"
#include "leaves.h"
#include "memflush.h"
#include "observer.h"
#include "placement.h"
#include "prefetch.h"
#include "procs.h"

#define AGENT_MAX_TARGETS LEAP_CORE_TARGETS

struct recording;

enum target_kind { TARGET_CGROUP, TARGET_PID };

struct agent_target {
	enum target_kind kind;
	uint64_t cgroup_id;  /* TARGET_CGROUP */
	uint32_t tgid;	     /* TARGET_PID */
	char path[PATH_MAX]; /* cgroup directory, for messages and reloads */
	struct agent_policy policy;
	uint32_t slot;	    /* leap_stats slot */
	uint32_t core_id;   /* its id in the decision core */
	bool exact_forced;  /* --cgroup-exact: exact whatever the config says */
	bool gone;	    /* TARGET_CGROUP: removed; watched again once re-created */
	bool overflow_said; /* its window queue overflowed, and we said so */
};

/* Observe: when the fault hooks are on (hooks.c; CLOCK_MONOTONIC, the
 * events' clock). */
struct agent_arming {
	uint64_t arm_win_ns; /* the window of ARM requests: its first one's time */
	uint32_t arm_win_reads;
	uint64_t keep_win_ns; /* while armed, the window of device page-ins and hits */
	uint32_t keep_win_reads;
	uint64_t armed_ns;	     /* when the hooks came on */
	uint64_t armed_keeps;	     /* device page-ins and hits seen since */
	uint64_t arm_latency_max_ns; /* the longest swap read to attach */
	uint64_t arms;	  /* fault hooks attached (a target began swapping in) */
	uint64_t disarms; /* ... and detached (its targets stopped) */
};

/* Decide: the core, its facts port and the recording of its inputs. */
struct agent_decision {
	struct leap_core *core;
	struct procs_facts facts_ctx; /* the event thread's */
	struct leap_core_facts port;  /* procs.c's */
	struct leap_core_facts facts; /* what the core asks: port, or its tap */
	struct recording *rec;	      /* --record FILE; NULL: not recording */
};

/*
 * Execute: what performs plans.  Windows go to worker threads (issuer.h;
 * iss NULL: this thread issues them, as in backend mode).  Backend mode
 * (be, NULL: process_madvise): the engine runs on virtual addresses as in
 * process_madvise mode; each window's pages become their swap slots
 * through /proc/PID/pagemap, and those on the backend device are pushed to
 * leap-swapd's prefetch cache.  With be_swapcache the same pages are also
 * process_madvise'd (first): the kernel's reads meet leap-swapd's fetch of
 * the window and the page waits in the swap cache, so the fault is minor.
 * (The engine on the swap offsets of the device's reads, as Leap ran in
 * the kernel, was removed: slower in every row measured, docs/backend.md.)
 */
struct agent_exec {
	struct procs *procs; /* every process's files, shared with the workers */
	struct leap_records *records;
	struct prefetch_records records_port;
	struct prefetcher pf;	   /* this thread's */
	struct leap_recent recent; /* pages issued a moment ago (pf.recent) */
	struct issuer *iss;
	struct backend *be;
	bool be_swapcache;
	bool be_warned_no_offset;
	uint64_t be_hits0;   /* leap-swapd's cache hits at start */
	struct placement at; /* the CPU this thread issues on (placement.h) */
	bool prefetch_ok;    /* the kernel takes process_madvise(WILLNEED) */
	bool cold_ok;	     /* ... and MADV_COLD (cold_behind) */
	const char *prefetch_why;
};

/* Account: what the workers learnt, handed to the event thread. */
struct agent_pending {
	uint64_t spent_pages[LEAP_CORE_TARGETS], spent_ns[LEAP_CORE_TARGETS];
	uint32_t touched[LEAP_CORE_TARGETS]; /* targets with spent_* set */
	uint32_t ntouched;
	uint32_t gone[64]; /* processes found gone */
	unsigned ngone;
	bool refused;	      /* the kernel refused WILLNEED */
	int cold_refused;     /* MADV_COLD's error, 0: none */
	uint32_t denied_tgid; /* the first process we may not prefetch for */
};

struct agent_account {
	pthread_mutex_t lock; /* pending, lat */
	struct agent_pending pending;
	struct agent_latency lat;
	uint64_t ambiguous; /* backend mode: several device reads in one fault */
	/* this thread's and the workers' counters summed (agent_refresh()) */
	struct prefetch_stats pf_sum;
	struct pagemap_reader pm_sum;
	struct issuer_counters issued;
	uint64_t cpu_moves; /* issuing threads moved to a fault's CPU */
	bool denied_said;   /* "not permitted to prefetch", said once */
};

struct agent {
	struct agent_config config;
	bool verbose;
	bool bpf_stats;	       /* --bpf-stats: BPF run time is measured */
	bool swap_cache_hits;  /* --swap-cache-hits (core config outcome_swap_cache) */
	uint64_t host_faults0; /* /proc/vmstat pgfault when it started */
	/* --kernel-readahead defer: no window on any stream the kernel's
	 * readahead serves, read streams included */
	bool hold_all_kernel_ra;
	/* targets or matched cgroups changed: the state file is out of date */
	bool state_dirty;
	/* What the core's environment is made of besides execution's
	 * findings, read at each tick: the swap devices (/proc/swaps) and
	 * the kernel's swap readahead reach (vm.page-cluster). */
	struct leap_cost_swap swap;
	uint32_t ra_pages;

	/* observe */
	struct leap_observer *obs;
	struct agent_target targets[AGENT_MAX_TARGETS];
	int ntargets;
	uint32_t next_slot;
	struct agent_leaves leaves; /* cgroups under the cgroup targets that faulted */
	struct agent_arming arm;

	struct agent_decision dec;
	struct agent_exec ex;
	struct agent_account acct;
	struct memflush memflush; /* the swapping targets' memory.stat, read */
};

/* Backend mode with --backend-into cache: windows are pushed to leap-swapd
 * only, so a hit is a fault whose read leap-swapd's cache served. */
static inline bool agent_pushes_only(const struct agent *a)
{
	return a->ex.be && !a->ex.be_swapcache;
}

/* Sets up everything but the observer (opened by the caller); 0 or -errno.
 * follow_cpu: windows are issued on their fault's CPU (placement.h). */
int agent_init(struct agent *a, const struct agent_config *cfg, bool follow_cpu);
/* Once the observer is open: its maps to the prefetchers, then the decision
 * core (recording to record_path unless NULL); 0 or -errno. */
int agent_attach_observer(struct agent *a, struct leap_observer *obs,
			  const char *record_path);
/* Then: workers issue the windows (workers 0: this thread does); 0 or -errno. */
int agent_start_issuer(struct agent *a, unsigned workers);
/* Discards queued windows and joins the workers (before the observer goes). */
void agent_stop_issuer(struct agent *a);
void agent_fini(struct agent *a);
/*
 * Adds a cgroup (by v2 directory: it and, unless pol->exact, its
 * descendants) or a pid with its policy.  force_exact: pol->exact also
 * after a reload (--cgroup-exact).
 */
int agent_add_cgroup(struct agent *a, const char *path, const struct agent_policy *pol,
		     char *err, size_t errlen);
int agent_add_cgroup_opts(struct agent *a, const char *path,
			  const struct agent_policy *pol, bool force_exact, char *err,
			  size_t errlen);
int agent_add_pid(struct agent *a, uint32_t tgid, const struct agent_policy *pol,
		  char *err, size_t errlen);
/* Applies a freshly parsed config to the existing targets (SIGHUP). */
void agent_apply_config(struct agent *a, const struct agent_config *cfg);
/* The observer's event callback (ctx = struct agent *). */
int agent_on_event(void *ctx, const struct leap_event *ev);
/* Periodic housekeeping: verdicts, idle streams, exited pid targets,
 * removed and re-created cgroup targets, matched cgroups (sets
 * state_dirty). */
void agent_tick(struct agent *a, uint64_t now_ns);
/* The core's environment from what the agent knows now: swap devices and
 * readahead (read at each tick), whether windows and MADV_COLD go out. */
void agent_update_env(struct agent *a);
/* Totals over every target's stats slot. */
void agent_totals(const struct agent *a, struct leap_cg_stats *sum);
/* How windows reach the kernel, for people: "process_madvise", "off", ... */
const char *agent_prefetch_via(const struct agent *a);

#endif
