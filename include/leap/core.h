/* SPDX-License-Identifier: MIT */
/*
 * The agent's decision core: every policy point between a fault event and
 * what the agent does about it, as one pure, single-threaded state machine.
 * The agent runs in four stages, one direction (docs/architecture.md):
 *
 *   observe (BPF, ring buffer, which target)
 *     -> decide  (this: classify, cost model, gates, window -> one plan)
 *     -> execute (the plan's system calls and BPF map changes)
 *     -> account (counters, latency; worker completions come back here)
 *
 * Nothing here reads a clock, a file or a map: time is the events' and the
 * ticks' own, and the two facts that need I/O (are these pages mapped? is
 * this page in shared memory?) are asked through an injected port, lazily,
 * only when the answer can change the plan.  So a recording of the inputs
 * (events, ticks, completions, the port's answers: user/agent/recording.c)
 * replays to the same plans, byte for byte, and leap-sim's leap policy is
 * this same code.
 */
#ifndef LEAP_CORE_H
#define LEAP_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "leap/cost.h"
#include "leap/decide.h"
#include "leap/engine.h"
#include "leap/outcome.h"
#include "leap/sweep.h"
#include "leap_event.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LEAP_CORE_TARGETS     256u	 /* targets at once */
#define LEAP_CORE_NO_TARGET   UINT32_MAX /* an event of no (known) target */
#define LEAP_CORE_QUIET_SLOTS 64u	 /* threads kept quiet, by tid % slots */
/* How long a held stream's thread wakes nobody (the observer's quiet map),
 * renewed when half of it is gone, not per miss. */
#define LEAP_CORE_QUIET_NS (50ULL * 1000 * 1000)

/* What the agent does for a target (the config file's `mode`). */
enum leap_core_mode {
	LEAP_CORE_LEAP = 0, /* observe and prefetch */
	LEAP_CORE_OBSERVE,  /* observe and decide, never prefetch */
	LEAP_CORE_OFF,	    /* not watched */
};

/* A target's policy, as far as deciding goes. */
struct leap_core_policy {
	enum leap_core_mode mode;
	struct leap_params params;
	/* Pages behind a served fill made cold after this many pages (0: off). */
	uint32_t cold_behind;
	/* Mode leap: stand down where prefetching does not pay (cost.h). */
	bool stand_down;
	/* ... and where held epochs show the windows do not make it faster
	 * (outcome.h; with stand_down). */
	bool judge_outcome;
};

/* Fixed for the core's life (the agent's start-up options). */
struct leap_core_config {
	uint32_t streams;   /* stream table capacity */
	uint64_t idle_ns;   /* streams idle this long go at a tick (0: never) */
	uint32_t hsize_max; /* history storage per stream (0: LEAP_HSIZE_MAX) */
	bool hold_all;	    /* --kernel-readahead defer: every served stream held */
	/* Backend mode (leap-swapd): a late miss does not lead (its windows
	 * land in tens of us); pushes_only (--backend-into cache): no swap
	 * slot of ours to race the kernel for, never held, and a major fault
	 * on a page we pushed is the hit. */
	bool backend;
	bool pushes_only;
	uint32_t cold_chunk; /* pages per MADV_COLD run, at least */
	uint32_t kra_trust;  /* served misses taken on trust (decide.h) */
	/* Shared regions read by several processes at once are followed
	 * where the data is (sweep.h), their readers' windows replaced by
	 * the region's. */
	bool sweeps;
	/* The outcome judge adds the counts of swap-cache hits not ours that
	 * the tracepoint path's events carry (leap_event.swap_cache_hits):
	 * `leap-agent run|attach --swap-cache-hits`.  Recorded (version 5);
	 * `replay --events-only` turns it off. */
	bool outcome_swap_cache;
	/* A held epoch's settle waits out our windows' lead (outcome.h,
	 * leap_outcome_lead_hit()).  On in the agent; recorded (version 6;
	 * a version 5 recording's is its outcome_swap_cache, which turned
	 * both on). */
	bool outcome_lead;
	struct leap_cost_params cost;
	struct leap_outcome_params outcome;
};

/* What changes under the core (the execute stage's findings, the tick). */
struct leap_core_env {
	struct leap_cost_swap swap; /* /proc/swaps */
	uint32_t ra_pages;	    /* the kernel's swap readahead reach (0: off) */
	bool can_prefetch;	    /* windows reach the kernel (or leap-swapd) */
	bool can_cold;		    /* MADV_COLD is taken */
};

/* Where a page of a process lies in a shared object (shmem). */
struct leap_region_at {
	uint64_t id;	     /* the object (device and inode), not 0 */
	uint64_t index;	     /* the page's index in it */
	uint64_t first, end; /* the mapping, in the process's pages: [first, end) */
};

/* The port for facts that need I/O; any function may be NULL (no). */
struct leap_core_facts {
	/* Whether the n pages from first of tgid are all mapped. */
	bool (*mapped)(void *ctx, uint32_t tgid, uint64_t first, uint32_t n);
	/* Whether page of tgid lies in shared memory (shmem). */
	bool (*shmem)(void *ctx, uint32_t tgid, uint64_t page);
	/* Whether it does, and where (*at); asked with config sweeps. */
	bool (*region)(void *ctx, uint32_t tgid, uint64_t page,
		       struct leap_region_at *at);
	void *ctx;
};

/* What an event was, to the decision. */
enum leap_class {
	LEAP_CLASS_NONE = 0, /* no target, or its mode is off: not looked at */
	LEAP_CLASS_IGNORED,  /* not a swap access (a minor fault of nothing ours) */
	LEAP_CLASS_HIT,	     /* served by a page we prefetched */
	LEAP_CLASS_LATE,     /* a read of a page we prefetched: late, or wasted */
	LEAP_CLASS_READ,     /* a swap-in miss of a read stream */
	LEAP_CLASS_FILL,     /* ... of a fill (a write, or zero-filled entries) */
	LEAP_CLASS_SWAP,     /* a swap-cache hit not of ours (kernel readahead) */
	LEAP_CLASS_COUNT,
};

/* Why a window the engine decided is not issued (LEAP_GATE_NONE: it is). */
enum leap_gate {
	LEAP_GATE_NONE = 0,
	LEAP_GATE_MODE,	   /* the target observes only */
	LEAP_GATE_STANDBY, /* the target stands down (this event's verdict, too) */
	LEAP_GATE_CHANNEL, /* nothing can prefetch (refused, or the backend lost) */
	LEAP_GATE_HELD,	   /* the kernel's readahead serves the stream */
	LEAP_GATE_EPOCH,   /* a held epoch: the outcome is being measured */
	LEAP_GATE_COUNT,
};

enum leap_verdict_change {
	LEAP_VERDICT_SAME = 0,
	LEAP_VERDICT_STAND_DOWN, /* the target stands down from now on */
	LEAP_VERDICT_PROBE,	 /* ... and prefetches again to see whether it pays */
};

enum leap_quiet {
	LEAP_QUIET_KEEP = 0, /* nothing to write */
	LEAP_QUIET_SET,	     /* the thread's misses wake nobody until quiet_until */
	LEAP_QUIET_LIFT,     /* ... they wake the agent again */
};

/* A stream, as another thread may name it: its table slot and the
 * generation of the stream in it (a reused slot has another). */
struct leap_stream_ref {
	uint32_t id;
	uint32_t gen;
};

/* One event's plan: everything the execute stage is to do for it. */
struct leap_core_plan {
	enum leap_class cls;
	uint32_t target; /* the core's target id, or LEAP_CORE_NO_TARGET */
	bool count_hit;	 /* a prefetch hit, for the target's stats slot */
	enum leap_verdict_change verdict; /* its sample changed the verdict */
	enum leap_quiet quiet;
	uint32_t quiet_tid;
	uint64_t quiet_until;
	/* pages a served fill went past: MADV_COLD on [cold_first, +cold_n) */
	uint64_t cold_first;
	uint32_t cold_n;
	/* The window: pages[0..n) to issue; decided pages not issued are
	 * counted in `decided` with the gate that stopped them. */
	uint32_t n;
	uint32_t decided;
	enum leap_gate gate;
	uint64_t marker; /* its look-ahead page (UINT64_MAX: none) */
	bool swept;	 /* the window is a swept region's (sweep.h) */
	/* pages added between a two-page stride's in shared memory (core.c,
	 * close_shared_gaps()) */
	uint32_t gap_pages;
	/* the stream and its newest page: a window's pages behind it are
	 * stale by the time a worker takes it */
	struct leap_stream_ref stream;
	uint64_t progress;
	struct leap_plan step; /* the stream's decision (decide.h) */
	uint64_t pages[LEAP_PW_LIMIT];
};

/* The core's counters; every output shows them (user/agent/counters.c). */
struct leap_core_counters {
	uint64_t events;	   /* events decided on */
	uint64_t ignored;	   /* ... not swap accesses */
	uint64_t swap_faults;	   /* ... fed to the engine */
	uint64_t hits;		   /* prefetch hits counted */
	uint64_t late;		   /* major faults on pages we had prefetched */
	uint64_t zero_misses;	   /* misses that found zero-filled swap entries */
	uint64_t lookaheads;	   /* windows issued by a hit on a marker */
	uint64_t nested_strides;   /* windows along a nested stride */
	uint64_t held_kernel_ra;   /* pages held: the kernel's readahead serves them */
	uint64_t beyond_kernel_ra; /* windows past the kernel's readahead */
	uint64_t around_left;	   /* no-trend misses left to the kernel's readahead */
	uint64_t windows;	   /* windows planned (issued) */
	uint64_t pages;		   /* their pages */
	uint64_t gated[LEAP_GATE_COUNT]; /* decided windows stopped, by gate */
	uint64_t cold_pages;		 /* pages planned for MADV_COLD */
	uint64_t quiet_sets, quiet_lifts;
	uint64_t stand_downs, probes;
	uint64_t exited; /* processes forgotten */
	/* Judged by the outcome (outcome.h): held epochs, comparisons made,
	 * stand-downs for no gain (part of stand_downs). */
	uint64_t held_epochs, outcome_comparisons, outcome_stand_downs;
	/* Windows of swept regions (sweep.h), their pages, and the readers'
	 * own windows they replaced. */
	uint64_t sweep_windows, sweep_pages, sweep_replaced;
	/* Pages added between a two-page stride's in shared memory (part
	 * of pages). */
	uint64_t shared_gap_pages;
};

struct leap_core;

/* NULL on bad config or no memory. */
struct leap_core *leap_core_new(const struct leap_core_config *cfg);
void leap_core_free(struct leap_core *c);
const struct leap_core_config *leap_core_config(const struct leap_core *c);

/* Targets: an id < LEAP_CORE_TARGETS, or LEAP_CORE_NO_TARGET when full. */
uint32_t leap_core_target_add(struct leap_core *c, const struct leap_core_policy *p);
/* A new policy (a reload): a target that may no longer stand down and
 * stands down prefetches again.  Whether its verdict changed. */
bool leap_core_target_set(struct leap_core *c, uint32_t id,
			  const struct leap_core_policy *p);
void leap_core_target_remove(struct leap_core *c, uint32_t id);
const struct leap_core_policy *leap_core_target_policy(const struct leap_core *c,
						       uint32_t id);
/* The target's cost model (verdict, why); NULL for an unknown id. */
const struct leap_cost *leap_core_target_cost(const struct leap_core *c, uint32_t id);
/* The target's outcome judge (outcome.h); NULL for an unknown id. */
const struct leap_outcome *leap_core_target_outcome(const struct leap_core *c,
						    uint32_t id);
/* Whether the agent follows the target's faults: not off, not stood down. */
bool leap_core_target_followed(const struct leap_core *c, uint32_t id);
bool leap_core_target_standby(const struct leap_core *c, uint32_t id);

void leap_core_set_env(struct leap_core *c, const struct leap_core_env *env);
const struct leap_core_env *leap_core_env(const struct leap_core *c);

/*
 * One event of target (LEAP_CORE_NO_TARGET: none known), decided.  The plan
 * is the core's, valid until the next call.
 */
const struct leap_core_plan *leap_core_event(struct leap_core *c, uint32_t target,
					     const struct leap_event *ev,
					     const struct leap_core_facts *facts);

/* Completions: target's windows brought pages in at a CPU cost of ns. */
void leap_core_spent(struct leap_core *c, uint32_t target, uint32_t pages, uint64_t ns);
/* A process is gone: its streams go. */
void leap_core_forget(struct leap_core *c, uint32_t tgid);

/*
 * The periodic tick: probes come due, samples the swap devices decide,
 * epochs end (a target that stopped swapping), idle streams go.  Writes the ids of
 * targets whose verdict changed to changed[] (room for LEAP_CORE_TARGETS), their changes
 * to how[]; returns how many.
 */
uint32_t leap_core_tick(struct leap_core *c, uint64_t now_ns, uint32_t *changed,
			enum leap_verdict_change *how);

const struct leap_core_counters *leap_core_counters(const struct leap_core *c);

/* Names, for people and recordings. */
const char *leap_class_name(enum leap_class k);
const char *leap_gate_name(enum leap_gate g);
const char *leap_verdict_change_name(enum leap_verdict_change v);

#ifdef __cplusplus
}
#endif

#endif
