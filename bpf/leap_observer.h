/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * Internals shared by the BPF observer (bpf/leap_observer.bpf.c) and its
 * loader (user/observer.c) only.  The public contract, the event, target
 * and stats layouts, is include/leap_event.h; nothing here is part of it.
 */
#ifndef LEAP_OBSERVER_H
#define LEAP_OBSERVER_H

#ifdef __BPF__
/* vmlinux.h provides __u64 and friends */
#else
#include <linux/types.h>
#endif

#include "leap_event.h"

/* Capacity of the target maps leap_cgroups and leap_pids. */
#define LEAP_TARGETS_MAX 1024
/* Resolved cgroups remembered (leap_cg_match): watched and not alike. */
#define LEAP_MATCH_CACHE_MAX 8192
/* Cgroup levels walked up from a fault's cgroup to find its target. */
#define LEAP_CGROUP_DEPTH_MAX 32
/* Per-stream last fault address (key: tgid, or tid for per-thread deltas). */
#define LEAP_STREAMS_MAX 65536
/* Faults in flight, one per thread (key: tid). */
#define LEAP_PENDING_MAX 16384
/* Threads whose misses need no wake-up now (leap_quiet, key: tid). */
#define LEAP_QUIET_MAX 4096
/* Default ring buffer size; the loader may change it before load. */
#define LEAP_RINGBUF_DEFAULT (1u << 20)
/* Default unread backlog that wakes the reader for non-major events. */
#define LEAP_WAKEUP_DEFAULT 4096u

/*
 * Value of leap_cg_match (key: __u64 cgroup v2 id of a faulting task): the
 * target that cgroup resolved to.  The agent reads it when leap_leaves is
 * full.
 */
struct leap_match {
	struct leap_target t;
	__u64 target_id; /* 0: no target covers this cgroup */
	__u64 gen;	 /* leap_targets_gen when resolved */
};

/* leap_owner.hook */
#define LEAP_OWNER_HOOK_FENTRY	   1
#define LEAP_OWNER_HOOK_TRACEPOINT 2

/*
 * The single value of the pinned array map leap_owner
 * (LEAP_PIN_DIR "/owner"): which process owns the pins.  A later instance
 * treats the pins as live while that process exists with the same start
 * time, and as stale leftovers of a crash otherwise.
 */
struct leap_owner {
	__u32 pid;	  /* tgid of the loader */
	__u32 hook;	  /* LEAP_OWNER_HOOK_* */
	__u64 start_time; /* /proc/<pid>/stat field 22 (clock ticks since boot) */
};

/*
 * Value of the per-CPU array leap_wake_counts (one entry): ring wake-ups
 * the hooks asked for, and those they skipped because the reader was busy
 * (leap_reader_busy).  One slot a CPU, so that the near major faults of
 * every target on a many-core host do not all write one cache line; the
 * agent sums them (leap_observer_wakeups()).
 */
struct leap_wake_counts {
	__u64 sent;
	__u64 skipped;
};

#endif /* LEAP_OBSERVER_H */
