/* SPDX-License-Identifier: MIT */
/*
 * leap observer loader: opens, probes, loads and attaches the BPF observer
 * (bpf/leap_observer.bpf.c), manages its targets, pins its maps under
 * LEAP_PIN_DIR and hands out its events and stats.
 *
 * One observer per process (libbpf's print callback is process-wide).
 * Every function returning int returns 0 (or a count) on success and
 * -errno on failure; the reason is also reported through opts.log.
 * Nothing here writes to stdout.
 */
#ifndef LEAP_OBSERVER_LIB_H
#define LEAP_OBSERVER_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>

#include "leap_event.h"

#ifdef __cplusplus
extern "C" {
#endif

struct leap_observer;

/* leap_observer_opts.wakeup_bytes: wake the reader whenever it caught up. */
#define LEAP_WAKEUP_ADAPTIVE 1u

enum leap_hook {
	LEAP_HOOK_AUTO = 0,   /* fentry if the kernel allows it, else tracepoint */
	LEAP_HOOK_FENTRY,     /* fentry/fexit do_swap_page (+ swap read) */
	LEAP_HOOK_TRACEPOINT, /* tp_btf page_fault_{user,kernel} + count_memcg_events */
};

enum leap_log_level {
	LEAP_LOG_ERROR = 0,
	LEAP_LOG_WARN,
	LEAP_LOG_INFO,
	LEAP_LOG_DEBUG,
};

/* @msg has no trailing newline. */
typedef void (*leap_observer_log_fn)(void *ctx, enum leap_log_level level,
				     const char *msg);

/*
 * Called for every event by leap_observer_poll()/_consume(); a negative
 * return stops that call, which then returns it (libbpf ignores positive
 * returns).
 */
typedef int (*leap_observer_event_fn)(void *ctx, const struct leap_event *ev);

struct leap_observer_opts {
	enum leap_hook hook;
	/* Ring buffer bytes: power of two, >= page size; 0 = 1 MiB. */
	__u32 ringbuf_bytes;
	/*
	 * Reader wake-ups.  Major-fault events wake the reader at once; other
	 * events once per wakeup_bytes of events produced (an event takes 72
	 * bytes), so the reader must also poll with a timeout to pick up a
	 * quiet tail.  0 = 4096 (at most a quarter of the ring).
	 * LEAP_WAKEUP_ADAPTIVE (1) = libbpf's adaptive mode for every event:
	 * wake whenever the reader has caught up (one wake-up per burst; each
	 * costs an IPI and a context switch, ~1-2 us of BPF time here).
	 */
	__u32 wakeup_bytes;
	/* Major-fault events wait for the backlog like the others (cheapest;
	 * the reader then sees misses up to its poll timeout late). */
	bool no_wake_on_major;
	/*
	 * Send only major faults, known swap faults and faults on pages in the
	 * "prefetched" map (see include/leap_event.h); other minor faults are
	 * counted, not sent.  The agent sets it; leap-observe shows everything.
	 */
	bool swap_events_only;
	/* A major fault wakes the reader at once only within this many pages
	 * of its stream's previous fault; 0 = always. */
	__u64 wake_delta_max;
	/*
	 * Ask for every wake-up above even while the reader is awake in
	 * leap_observer_poll() (between its return and the next call).  Off,
	 * those are skipped on x86-64: each costs the faulting thread an
	 * irq_work self-IPI (bpf/leap_observer.bpf.c, leap_reader_busy).
	 */
	bool wake_when_busy;
	/*
	 * Tracepoint path: load leap_rss_stat, which marks a fault that takes
	 * a swap entry out of its page table, so that swap-cache hits not ours
	 * are counted (leap_cg_stats.swap_cache_hits) and carried in every
	 * event.  One more hook on every fault while the hooks are on.
	 */
	bool count_swap_cache_hits;
	/*
	 * Backend mode: the block device the watched tasks swap to, as a
	 * kernel dev_t (leap_observer_kdev()); reads of it during a fault set
	 * LEAP_EV_DEV_READ and the swap offset on every hook path.  0 = off.
	 */
	__u32 backend_dev;
	/*
	 * Tracepoint path: attach the fault hooks only while a watched task
	 * swaps in (they cost every fault of every task while attached).
	 * Until then a block I/O hook sends LEAP_EV_ARM when a watched task
	 * reads a swap page; the reader then calls leap_observer_set_armed(),
	 * and turns them off again when its targets stop swapping.  Ignored on
	 * the fentry path (swap faults only) and in backend mode.
	 */
	bool arm_on_swap;
	/* Never watched (the agent itself); 0 = getpid(). */
	__u32 self_tgid;
	/* Pin directory; NULL = LEAP_PIN_DIR.  Its parent must be (or, for
	 * /sys/fs/bpf, is mounted as) a bpffs. */
	const char *pin_dir;
	/* Do not pin anything (tests, benchmarks). */
	bool no_pin;
	/* Forward libbpf's debug output to log at LEAP_LOG_DEBUG. */
	bool libbpf_debug;
	/* NULL: errors and warnings go to stderr as "leap-observer: ...". */
	leap_observer_log_fn log;
	void *log_ctx;
	/* May be NULL (then poll just drains the ring). */
	leap_observer_event_fn on_event;
	void *event_ctx;
};

/*
 * Opens, probes the hook set (for LEAP_HOOK_AUTO: test-loads the fentry
 * programs alone, falls back to the tracepoint ones), loads, attaches and
 * pins.  -EBUSY when another live instance owns the pin directory (stale
 * pins of a dead one are removed); -EOPNOTSUPP when the requested hook set
 * cannot be loaded on this kernel.
 */
int leap_observer_open(const struct leap_observer_opts *opts, struct leap_observer **out);

/*
 * The live process that owns the pins in pin_dir (NULL: LEAP_PIN_DIR), or
 * 0 when there is none or its owner is gone (stale pins).  Another
 * observer (leap-observe beside a running agent) pins elsewhere.
 */
pid_t leap_observer_pin_owner(const char *pin_dir);

/* Detaches, unpins, removes the pin directory and frees; NULL is fine. */
void leap_observer_close(struct leap_observer *obs);

/* A userspace dev_t (st_rdev) in the kernel's MKDEV encoding, 0 if it does
 * not fit (major >= 4096 or minor >= 2^20). */
__u32 leap_observer_kdev(unsigned long long rdev);

/* "fentry" or "tracepoint". */
const char *leap_observer_hook_name(const struct leap_observer *obs);
enum leap_hook leap_observer_hook(const struct leap_observer *obs);
/* Whether swap-cache hits not ours are counted (leap_cg_stats.
 * swap_cache_hits): asked for, on the tracepoint path; else they stay 0. */
bool leap_observer_counts_swap_cache_hits(const struct leap_observer *obs);

/*
 * Targets.  t->stats_slot must be < LEAP_STATS_SLOTS.  A cgroup target
 * covers its descendants unless t->flags has LEAP_TGT_EXACT; the deepest
 * covering target wins.  Adding a cgroup
 * also stores its id into the slot's cgroup_id.  Adding a pid checks that
 * it exists (-ESRCH).  Re-adding replaces the entry.  Removing a pid also
 * forgets its delta stream.  Remove returns -ENOENT for an unknown key.
 */
int leap_observer_add_cgroup(struct leap_observer *obs, __u64 cgroup_id,
			     const struct leap_target *t);
int leap_observer_remove_cgroup(struct leap_observer *obs, __u64 cgroup_id);
int leap_observer_add_pid(struct leap_observer *obs, __u32 tgid,
			  const struct leap_target *t);
int leap_observer_remove_pid(struct leap_observer *obs, __u32 tgid);

/*
 * Arming (opts.arm_on_swap): attaches (on) or detaches the fault hooks.
 * 0 or -errno; a no-op without arming.
 */
int leap_observer_set_armed(struct leap_observer *obs, bool on);
/* 1 armed, 0 not, -1 when the observer does not arm (hooks always on). */
int leap_observer_armed(const struct leap_observer *obs);
/*
 * Arming: attaches (on) or detaches the block I/O hook that asks for the
 * fault hooks.  While every target stands down nobody is to be armed, and
 * the hook would still run at every block I/O of the host (on zram, at
 * every page-in: ~3% of a program's time).  0 or -errno; a no-op without
 * arming.
 */
int leap_observer_set_arming(struct leap_observer *obs, bool on);
/* 1 when the block I/O hook is attached, 0 not, -1 without arming. */
int leap_observer_arming(const struct leap_observer *obs);

/*
 * Misses of thread tid wake no reader before until_ns (bpf_ktime_get_ns()
 * clock, as leap_event.ts_ns); they arrive with the next batch.  until_ns
 * 0 lifts it.  For a thread whose stream the agent leaves to the kernel's
 * readahead, whose misses it only records.
 */
int leap_observer_set_quiet(struct leap_observer *obs, __u32 tid, __u64 until_ns);

/*
 * The cgroup v2 id of a cgroup2 directory (what bpf_get_current_cgroup_id()
 * returns for tasks in it).  -ENOENT if missing, -ENOTDIR, -EINVAL if it
 * is not on a cgroup2 filesystem.  Needs no observer.
 */
int leap_cgroup_id_from_path(const char *path, __u64 *id);

/*
 * The live stats slot, mmapped from leap_stats (shared with BPF, which
 * adds atomically to faults..events_dropped; the caller owns prefetches
 * and prefetch_hits).  NULL if slot >= LEAP_STATS_SLOTS.
 */
struct leap_cg_stats *leap_observer_stats(struct leap_observer *obs, __u32 slot);

/* Sum of all slots into *sum (a snapshot, not atomic as a whole). */
void leap_observer_stats_sum(struct leap_observer *obs, struct leap_cg_stats *sum);

/*
 * Ring buffer: poll waits up to timeout_ms (-1 forever) and calls
 * on_event for each event; consume does not wait.  Both return the number
 * of events handled, or -errno (-EINTR when a signal interrupted the wait).
 */
int leap_observer_poll(struct leap_observer *obs, int timeout_ms);
int leap_observer_consume(struct leap_observer *obs);
/*
 * The wake-ups BPF asked the ring for, and those it skipped because the
 * reader was awake in leap_observer_poll() (opts.wake_when_busy: none).
 */
void leap_observer_wakeups(const struct leap_observer *obs, __u64 *sent, __u64 *skipped);
/* Readable when events are waiting (for the caller's own epoll loop). */
int leap_observer_epoll_fd(const struct leap_observer *obs);

/* Map fds for callers that want raw access (name: "cgroups", "pids",
 * "stats", "events", "owner", "prefetched", "issued", "leaves", "match"),
 * and the fd of the leap_record program ("record"; -ENOENT on kernels
 * without syscall programs, < 5.14); -ENOENT for other names. */
int leap_observer_map_fd(const struct leap_observer *obs, const char *name);

/* leap_issued, mmapped: LEAP_ISSUED_WINDOWS slots the agent writes
 * (include/leap_event.h). */
struct leap_issued_slot *leap_observer_issued(struct leap_observer *obs);

/* leap_pf_regions, LEAP_PF_REGIONS bytes in the .bss the programs read:
 * set byte leap_pf_region(tgid, page) before recording page in
 * "prefetched", or a fault on it is not seen as ours
 * (include/leap_event.h). */
__u8 *leap_observer_pf_regions(struct leap_observer *obs);

/* ---- records of prefetched pages (observer_maps.c) ----------------------- */

/*
 * The prefetched-page map as the agent's threads write it: each window's
 * pages go in before the kernel is asked for them (so a fault racing the
 * request is still seen as ours), tagged with the window's number
 * (LEAP_PF_WINDOW_SHIFT) and their look-ahead marker; pages the kernel
 * refused come back out.  One leap_record program run per window where
 * the kernel runs syscall programs (5.14+), else map updates.  Safe to
 * use from several threads.
 */
struct leap_records;

/* NULL when out of memory. */
struct leap_records *leap_records_open(const struct leap_observer *obs);
void leap_records_close(struct leap_records *r);
/* Records pages[0..n) of tgid (n <= LEAP_RECORD_MAX); how many could not
 * be (the map full); *by_program: one leap_record run did it. */
uint32_t leap_records_add(struct leap_records *r, uint32_t tgid, const uint64_t *pages,
			  uint32_t n, uint64_t marker, uint32_t window, bool *by_program);
/* Takes the n pages from first of tgid back out. */
void leap_records_remove(struct leap_records *r, uint32_t tgid, uint64_t first,
			 uint32_t n);

/* ---- matched cgroups (observer_maps.c) ------------------------------------ */

/*
 * The target cgroup BPF matched leaf_id to: from leap_leaves (*in_leaves)
 * or, when that map is full, from the per-cgroup match cache; -ENOENT if
 * neither knows it.
 */
int leap_observer_leaf_target(const struct leap_observer *obs, __u64 leaf_id,
			      __u64 *target_id, bool *in_leaves);
/* Forgets leaf_id in both maps (BPF matches it afresh at its next fault). */
void leap_observer_leaf_forget(const struct leap_observer *obs, __u64 leaf_id);
/* Walks leap_leaves: the key after *prev (NULL: the first) and its value
 * (target_id 0 when it went meanwhile); -ENOENT at the end. */
int leap_observer_leaf_next(const struct leap_observer *obs, const __u64 *prev,
			    __u64 *next, struct leap_leaf *leaf);

/* ---- BPF program statistics, for benchmarks ---------------------------- */

struct leap_prog_stats {
	char name[32]; /* program name in the object, e.g. "leap_pf_user" */
	__u32 prog_id;
	__u64 run_time_ns; /* cumulative, only while stats are enabled */
	__u64 run_cnt;
	__u64 recursion_misses;
};

/* Turns on kernel-wide BPF run-time stats (bpf_enable_stats) until close. */
int leap_observer_enable_prog_stats(struct leap_observer *obs);

/* Fills up to max entries for the loaded programs that run on faults
 * (not leap_record, which the agent runs); returns how many. */
int leap_observer_prog_stats(struct leap_observer *obs, struct leap_prog_stats *out,
			     int max);

#ifdef __cplusplus
}
#endif

#endif /* LEAP_OBSERVER_LIB_H */
