/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * The one layout shared by the BPF observer (bpf/leap_observer.bpf.c) and
 * userspace (user/).  Fixed-width fields only, no pointers, explicit padding:
 * the same bytes on every kernel and compiler.
 */
#ifndef LEAP_EVENT_H
#define LEAP_EVENT_H

#ifdef __BPF__
/* vmlinux.h provides __u64 and friends */
#else
#include <linux/types.h>
#endif

#define LEAP_PAGE_SHIFT	    12
#define LEAP_NO_SWAP_OFFSET (~0ULL)

/* leap_event.flags */
#define LEAP_EV_MAJOR	   (1u << 0) /* the fault read from swap (swap-in miss) */
#define LEAP_EV_SWAP	   (1u << 1) /* known to be a swap fault (fentry path) */
#define LEAP_EV_WRITE	   (1u << 2) /* write fault */
#define LEAP_EV_SWAPIN_IO  (1u << 3) /* a swap read was issued during the fault */
#define LEAP_EV_FENTRY	   (1u << 4) /* produced by the fentry/fexit path */
#define LEAP_EV_PREFETCHED (1u << 5) /* the page was in leap_prefetched */
/*
 * A read of the backend's swap block device (observer option backend_dev)
 * was submitted during the fault: swap_offset is the page index of that
 * read on the device, which for a swap partition is the swap offset.
 */
#define LEAP_EV_DEV_READ (1u << 6)
/* More than one such read in one fault (kernel readahead): swap_offset is
 * the first one's, which need not be the faulting page. */
#define LEAP_EV_DEV_MULTI (1u << 7)

/* A major fault on a page the agent had prefetched (its window issued,
 * leap_issued): it was read into the swap cache and reclaimed again
 * before use. */
#define LEAP_EV_WASTED (1u << 8)
/* The fault's swap-in (or its readahead) found zero-filled entries, which
 * the kernel fills without I/O (SWPIN_ZERO, mm/page_io.c
 * swap_read_folio_zeromap(); counted per memcg since ~6.14; tracepoint
 * path only). */
#define LEAP_EV_SWAPIN_ZERO (1u << 9)
/*
 * Not a fault: a watched task submitted a swap read while the observer's
 * fault hooks were off (tracepoint path, observer option arm_on_swap).
 * The reader attaches them (leap_observer_set_armed()); addr is 0.
 */
#define LEAP_EV_ARM (1u << 10)
/*
 * The faulting thread blocked during the fault (its voluntary context
 * switches went up: task_struct.nvcsw): it waited for I/O or a lock.  A
 * page-in that never blocks is CPU work in the faulting thread (zram),
 * which a prefetch cannot hide, only move (include/leap/cost.h).
 */
#define LEAP_EV_SLEPT (1u << 11)
/*
 * Tracepoint path: the fault took a swap entry out of its page table
 * (leap_rss_stat: MM_SWAPENTS went down in the faulting task): a swap
 * access, a miss or a hit.
 */
#define LEAP_EV_SWAP_ENTRY_FREED (1u << 12)

/* One user page fault of a watched task, sent through the ring buffer. */
struct leap_event {
	__u64 ts_ns;	   /* bpf_ktime_get_ns() at fault entry */
	__u64 cgroup_id;   /* cgroup v2 id of the faulting task */
	__u64 addr;	   /* faulting address, page aligned */
	__s64 delta;	   /* pages since the same stream's previous event; 0 if first */
	__u64 swap_offset; /* swap slot offset, or LEAP_NO_SWAP_OFFSET */
	__u32 tgid;
	__u32 tid;
	__u32 flags;	  /* LEAP_EV_* */
	__u32 swap_type;  /* swap device index when swap_offset is known */
	__u64 latency_ns; /* fault entry to exit, 0 when unknown */
	/* The CPU the faulting thread was on when the fault completed
	 * (bpf_get_smp_processor_id()): where the agent issues its window. */
	__u32 cpu;
	/*
	 * Tracepoint path: the target's leap_cg_stats.swap_cache_hits (low 32
	 * bits) when this fault completed; 0 where they are not counted (the
	 * fentry path sends them as events).  Those hits send no event, so
	 * the outcome judge adds the count's advance between events to the
	 * swap accesses the events show (include/leap/outcome.h).
	 */
	__u32 swap_cache_hits;
};

/* leap_target.flags */
#define LEAP_TGT_EVENTS	       (1u << 0) /* send events (modes leap and observe) */
#define LEAP_TGT_THREAD_DELTAS (1u << 1) /* BPF deltas per thread, not per process */
#define LEAP_TGT_EXACT	       (1u << 2) /* cgroup: only itself, not its descendants */
/* No event wakes the reader at once (mode observe). */
#define LEAP_TGT_NO_WAKE (1u << 3)
/*
 * The agent stood down for this target (prefetching costs more than it
 * saves, include/leap/cost.h): its faults are counted but followed no
 * further, and its swap reads do not arm the fault hooks.
 */
#define LEAP_TGT_STANDBY (1u << 4)

/*
 * Value of the target maps: leap_cgroups (key: __u64 cgroup v2 id) and
 * leap_pids (key: __u32 tgid).  A task is watched when its tgid is present
 * (that entry wins) or when its cgroup or one of the cgroup's ancestors is:
 * a cgroup target covers its whole subtree, cgroups created later
 * included, unless it has LEAP_TGT_EXACT.  The deepest matching cgroup
 * (the most specific target) wins.
 */
struct leap_target {
	__u32 stats_slot; /* index into leap_stats */
	__u32 flags;	  /* LEAP_TGT_* */
};

#define LEAP_STATS_SLOTS 256

/*
 * One slot of the pinned, mmap-able array map leap_stats.  BPF adds to the
 * first counters with atomic adds; the agent owns prefetches and
 * prefetch_hits and adds to them through its mmap of the same map, so
 * nothing is ever overwritten by a whole-value update.
 */
struct leap_cg_stats {
	__u64 cgroup_id;      /* owner of the slot (0: pid targets only / unused) */
	__u64 faults;	      /* user page faults of watched tasks */
	__u64 swapin_misses;  /* faults that read from swap (major) */
	__u64 events_sent;    /* events that reached the ring buffer */
	__u64 events_dropped; /* events lost because the ring buffer was full */
	__u64 prefetches;     /* pages the agent asked the kernel to prefetch */
	__u64 prefetch_hits;  /* faults served by a page the agent prefetched */
	/*
	 * Pages the agent prefetched (their window issued) that were read from
	 * swap again by a major fault: reclaimed before use.  Prefetched
	 * pages that are reclaimed and never faulted on are not seen.
	 */
	__u64 prefetch_wasted;
	/*
	 * Swap reads a watched task submitted while the fault hooks were off
	 * (tracepoint path, arming: leap_arm_bio, which sees every block I/O
	 * then): the page-ins the agent did not see, before the hooks came on.
	 * Counted per read (a fault reading a cluster may submit several).
	 */
	__u64 swapin_unarmed;
	/*
	 * Tracepoint path with leap_rss_stat loaded: swap-cache hits on pages
	 * the agent did not prefetch (LEAP_EV_SWAP_ENTRY_FREED, neither a miss
	 * nor ours), which send no event.  The fentry path sends them as
	 * events (LEAP_EV_SWAP) and leaves this 0.
	 */
	__u64 swap_cache_hits;
};

/*
 * Value of the pinned hash map leap_leaves (LEAP_PIN_DIR "/leaves", key:
 * the __u64 cgroup v2 id of a cgroup whose tasks faulted): which target
 * that cgroup matched.  BPF adds an entry the first time it resolves a
 * cgroup to a target (and after targets change); the agent removes the
 * entries of cgroups that are gone.  Counters stay per target (leap_stats):
 * this map only says which cgroups a target's counts came from.
 */
struct leap_leaf {
	__u64 target_id;  /* cgroup v2 id of the matched target */
	__u32 stats_slot; /* that target's slot in leap_stats */
	__u32 flags;	  /* its LEAP_TGT_* when matched */
};

#define LEAP_LEAVES_MAX 4096

/*
 * leap_prefetched (LRU hash): the pages the agent asked the kernel to
 * prefetch and that have not been faulted on since.  The agent adds them
 * before process_madvise; BPF looks each fault up, sets LEAP_EV_PREFETCHED
 * and deletes the entry.  A non-major fault on such a page is a prefetch
 * hit.  With swap_events_only, BPF drops minor faults on other pages (first
 * touches, file pages) instead of sending them, so the agent is woken only
 * for what can matter to it: misses, hits and, at once, hits on a
 * look-ahead marker.
 */
struct leap_pf_key {
	__u32 tgid;
	__u32 pad; /* zero */
	__u64 page;
};

#define LEAP_PF_MARKER (1u << 0) /* value flag: a hit here wakes the agent at once */

/*
 * Where leap_prefetched may hold a page: one byte per hash bucket of
 * (tgid, 2 MiB of address space), in the observer's .bss
 * (leap_pf_regions), which the agent sets through mmap before it records
 * a window's pages and never clears.  A fault whose bucket is 0 cannot be
 * on a prefetched page and skips the leap_prefetched lookup: that map's
 * 262,144 buckets (4 MiB) cost a cache miss a fault, the largest single
 * cost perf found in a watched fault's BPF (fault-touch under the agent,
 * 2026-11-27: leap_memcg_ev 252 -> 106 ns a run, the program 1.37x ->
 * 1.13-1.23x of its time without hooks; docs/bench-overhead.md).
 * 16 KiB stays in cache; a bucket set by another region only costs that
 * region the lookup it had before.
 */
#define LEAP_PF_REGION_SHIFT 9 /* pages: 2 MiB regions */
#define LEAP_PF_REGION_BITS  14
#define LEAP_PF_REGIONS	     (1u << LEAP_PF_REGION_BITS)

/* The leap_pf_regions bucket of page (a virtual page number) of tgid:
 * Fibonacci hashing of the region and the tgid. */
static inline __u32 leap_pf_region(__u32 tgid, __u64 page)
{
	__u64 h = ((page >> LEAP_PF_REGION_SHIFT) ^ ((__u64)tgid << 40)) *
		  0x9E3779B97F4A7C15ULL;

	return (__u32)(h >> (64 - LEAP_PF_REGION_BITS));
}
/*
 * The agent's window that recorded the page, in the value's bits from
 * LEAP_PF_WINDOW_SHIFT (30 bits, wrapping, never 0; 0: pushed to
 * leap-swapd only, never issued).  Once process_madvise returned with the
 * window accepted, the agent puts its number in leap_issued (an array it
 * writes through mmap), with the CLOCK_MONOTONIC time it returned: its
 * pages are in the swap cache (reads submitted).  A major fault on a
 * recorded page that began before that time is a late prefetch (the
 * program got there first, or raced the prefetch for the slot); one that
 * began after it means the page was reclaimed before use: wasted.
 * (Judged by when the fault completed, a 1-page window on the page a
 * program reaches next was counted wasted nearly every time, and each
 * waste halves a window: pressure.t's stride, 2026-11-25.)  Two stores
 * per window, not a map update per page.  The newest LEAP_ISSUED_WINDOWS
 * windows are remembered, far more than the prefetched-page map can hold
 * pages of.  (Bit 1 was a per-page "issued" flag before; unused.)
 */
#define LEAP_PF_WINDOW_SHIFT 2
#define LEAP_ISSUED_WINDOWS  65536
#define LEAP_PREFETCHED_MAX  262144

/* leap_issued's value, slot window % LEAP_ISSUED_WINDOWS. */
struct leap_issued_slot {
	__u64 done_ns; /* CLOCK_MONOTONIC: when process_madvise returned */
	__u32 window;  /* whose time done_ns is (0: none yet) */
	__u32 pad;
};

/*
 * The context of the leap_record program (BPF_PROG_TEST_RUN): one window's
 * pages to put into leap_prefetched, tagged with the window.
 */
#define LEAP_RECORD_MAX 1024 /* pages per call (one engine window at most) */
struct leap_record_args {
	__u64 pages;  /* user address of n __u64 page numbers */
	__u64 marker; /* the page to flag LEAP_PF_MARKER (~0: none) */
	__u32 tgid;
	__u32 n;      /* 1..LEAP_RECORD_MAX */
	__u32 window; /* as in the value, from LEAP_PF_WINDOW_SHIFT */
	__u32 pad;
};

#define LEAP_PIN_DIR "/sys/fs/bpf/leap"

#endif /* LEAP_EVENT_H */
