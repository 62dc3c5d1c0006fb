/* SPDX-License-Identifier: MIT */
/*
 * The agent's core: turns observer events into engine accesses and engine
 * candidates into prefetches.  No CLI, no signals: leap-agent.c drives it.
 */
#ifndef LEAP_AGENT_AGENT_H
#define LEAP_AGENT_AGENT_H

#include <stdbool.h>
#include <stdint.h>

#include <pthread.h>

#include "backend.h"
#include "config.h"
#include "issuer.h"
#include "leap/cost.h"
#include "leap/engine.h"
#include "leap/recent.h"
#include "leaves.h"
#include "observer.h"
#include "prefetch.h"

#define AGENT_MAX_TARGETS     256
#define AGENT_LATENCY_SAMPLES 65536
/* Reaction latency histogram: upper bounds in microseconds, then +Inf. */
#define AGENT_LAT_BUCKETS 14
extern const uint32_t agent_lat_bounds_us[AGENT_LAT_BUCKETS];

enum target_kind { TARGET_CGROUP, TARGET_PID };

struct agent_target {
	enum target_kind kind;
	uint64_t cgroup_id;  /* TARGET_CGROUP */
	uint32_t tgid;	     /* TARGET_PID */
	char path[PATH_MAX]; /* cgroup directory, for messages and reloads */
	struct agent_policy policy;
	uint32_t slot;	       /* leap_stats slot */
	bool exact_forced;     /* --cgroup-exact: exact whatever the config says */
	bool gone;	       /* TARGET_CGROUP: removed; watched again once re-created */
	struct leap_cost cost; /* whether prefetching pays (mode leap) */
	bool overflow_said;    /* its window queue overflowed, and we said so */
};

struct agent_counters {
	uint64_t events;	   /* events read from the ring */
	uint64_t swap_faults;	   /* events fed to the engine */
	uint64_t ignored;	   /* minor faults that were not swap faults */
	uint64_t hits;		   /* faults on pages we prefetched */
	uint64_t late;		   /* major faults on pages we had prefetched */
	uint64_t lookaheads;	   /* windows issued by a hit on a marker */
	uint64_t nested_strides;   /* windows along a nested stride */
	uint64_t prefetched;	   /* pages issued */
	uint64_t exited;	   /* processes seen gone */
	uint64_t ambiguous;	   /* backend mode: several device reads in one fault */
	uint64_t held_kernel_ra;   /* pages not prefetched: the kernel's readahead serves
				      the stream */
	uint64_t beyond_kernel_ra; /* windows issued past the kernel's readahead on a
				      read stream it serves */
	uint64_t zero_misses;	   /* misses that found zero-filled swap entries */
	uint64_t quiet_sets;	   /* threads told not to wake us (leap_quiet) */
	uint64_t quiet_lifts;	   /* ... and told to again */
	uint64_t arms;		   /* fault hooks attached (a target began swapping in) */
	uint64_t disarms;	   /* ... and detached (its targets stopped) */
	uint64_t stand_downs;	   /* a target stood down (cost.h) */
	uint64_t probes;	   /* ... and prefetched again to see whether it pays */
};

/*
 * A thread whose stream the kernel's readahead serves: its misses wake
 * nobody until `until` (leap_observer_set_quiet()).  Remembered here so
 * the map is written once per AGENT_QUIET_NS / 2, not per miss.
 */
struct agent_quiet {
	uint32_t tid;
	uint64_t until; /* ns, bpf_ktime_get_ns() clock; 0: not quiet */
};

#define AGENT_QUIET_SLOTS 64
#define AGENT_QUIET_NS	  (50ULL * 1000 * 1000)

struct agent {
	struct agent_config config;
	struct leap_cost_params cost_params;
	/* The swap devices as the cost model needs them (/proc/swaps),
	 * read every tick. */
	struct leap_cost_swap swap;
	struct leap_observer *obs;
	struct leap_table streams;
	struct prefetcher pf;
	struct leap_recent recent; /* pages issued a moment ago (pf.recent) */
	/*
	 * Backend mode (NULL: process_madvise): the engine runs on virtual
	 * addresses as in process_madvise mode; each window's pages become
	 * their swap slots through /proc/PID/pagemap, and those on the backend
	 * device are pushed to leap-swapd's prefetch cache.  With be_swapcache
	 * the same pages are also process_madvise'd (first): the kernel's
	 * reads meet leap-swapd's fetch of the window and the page waits in
	 * the swap cache, so the fault is minor.  (The engine on the swap
	 * offsets of the device's reads, as Leap ran in the kernel, was
	 * removed: slower in every row measured, docs/backend.md.)
	 */
	struct backend *be;
	bool be_swapcache;
	bool be_warned_no_offset;
	uint64_t be_hits0; /* leap-swapd's cache hits at start */
	bool prefetch_ok;  /* the kernel takes process_madvise(WILLNEED) */
	bool cold_ok;	   /* ... and MADV_COLD (cold_behind) */
	const char *prefetch_why;
	struct agent_target targets[AGENT_MAX_TARGETS];
	int ntargets;
	uint32_t next_slot;
	struct agent_counters c;
	/* fault-to-prefetch reaction latency, ns (ring of the newest samples) */
	uint32_t lat_us[AGENT_LATENCY_SAMPLES];
	uint64_t nlat;
	/* the miss's event (fault completed) to its window entering the
	 * kernel (process_madvise called): the agent's part of the reaction */
	uint32_t dispatch_us[AGENT_LATENCY_SAMPLES];
	uint64_t ndispatch;
	bool verbose;
	bool bpf_stats;	       /* --bpf-stats: BPF run time is measured */
	uint64_t host_faults0; /* /proc/vmstat pgfault when it started */
	uint32_t ra_pages;     /* the kernel's swap readahead reach (vm.page-cluster) */
	/* --kernel-readahead defer: no window on any stream the kernel's
	 * readahead serves, read streams included */
	bool hold_all_kernel_ra;
	/* reaction latency since start per stats slot (pid targets share 0, so
	 * nothing goes down when one exits): counts per bucket of
	 * agent_lat_bounds_us (the last one: +Inf), and their sum */
	uint64_t lat_hist[LEAP_STATS_SLOTS][AGENT_LAT_BUCKETS + 1];
	uint64_t lat_sum_us[LEAP_STATS_SLOTS];
	/* cgroups under the cgroup targets that faulted (leaves.h) */
	struct agent_leaves leaves;
	/* targets or matched cgroups changed: the state file is out of date */
	bool state_dirty;
	struct agent_quiet quiet[AGENT_QUIET_SLOTS]; /* by tid % AGENT_QUIET_SLOTS */
	/*
	 * Windows issued by worker threads (issuer.h; NULL: by this thread,
	 * as in backend mode).  What the workers learn comes back under
	 * done_lock: what each stats slot's windows cost (for its cost
	 * model), processes found gone, and whether the kernel refused
	 * WILLNEED.  pf_sum and pm_sum: this thread's and the workers'
	 * prefetch counters summed, for the outputs (agent_refresh()).
	 */
	struct issuer *iss;
	struct issuer_counters issued;
	pthread_mutex_t done_lock;
	uint64_t spent_pages[LEAP_STATS_SLOTS], spent_ns[LEAP_STATS_SLOTS];
	uint32_t gone[64];
	unsigned ngone;
	bool refused;
	int cold_refused; /* MADV_COLD's error, 0: none */
	struct prefetch_stats pf_sum;
	struct pagemap_reader pm_sum;
	/* Arming (hooks.c; CLOCK_MONOTONIC, the events' clock): the window of ARM
	 * requests (its first one's time, and how many), and while armed the
	 * window of device page-ins and hits. */
	uint64_t arm_win_ns;
	uint32_t arm_win_reads;
	uint64_t keep_win_ns;
	uint32_t keep_win_reads;
	uint64_t armed_ns;	     /* when the hooks came on */
	uint64_t armed_keeps;	     /* device page-ins and hits seen since */
	uint64_t arm_latency_max_ns; /* the longest swap read to attach */
};

/* Backend mode with --backend-into cache: windows are pushed to leap-swapd
 * only, so a hit is a fault whose read leap-swapd's cache served. */
static inline bool agent_pushes_only(const struct agent *a)
{
	return a->be && !a->be_swapcache;
}

/* Sets up everything but the observer (opened by the caller). */
int agent_init(struct agent *a, const struct agent_config *cfg);
/* Once the observer is open: hand its prefetched-page map to the prefetcher. */
void agent_attach_observer(struct agent *a, struct leap_observer *obs);
/* Then: workers issue the windows (workers 0: this thread does); 0 or -errno. */
int agent_start_issuer(struct agent *a, unsigned workers);
/* Discards queued windows and joins the workers (before the observer goes). */
void agent_stop_issuer(struct agent *a);
/* Sums this thread's and the workers' prefetch counters into pf_sum, pm_sum
 * and issued: call before reading them. */
void agent_refresh(struct agent *a);
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
/* Periodic housekeeping: idle streams, exited pid targets, removed and
 * re-created cgroup targets, matched cgroups (sets state_dirty). */
void agent_tick(struct agent *a, uint64_t now_ns);
/* Totals over every target's stats slot. */
void agent_totals(const struct agent *a, struct leap_cg_stats *sum);
/* How windows reach the kernel, for people: "process_madvise", "off", ... */
const char *agent_prefetch_via(const struct agent *a);

#endif
