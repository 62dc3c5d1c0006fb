// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * leap observer: sees the page faults of watched tasks and streams them to
 * the userspace agent through a ring buffer (struct leap_event).
 *
 * Two hook sets live in this one CO-RE object; the loader (user/observer.c)
 * probes which one the running kernel accepts and turns the other off with
 * bpf_program__set_autoload() before loading:
 *
 *  fentry path   fentry/fexit do_swap_page(struct vm_fault *vmf), plus
 *                fentry on the swap read function (swap_readpage up to
 *                ~6.7, swap_read_folio from ~6.8; only the one the kernel
 *                has is loaded).  Sees swap faults only, with their swap
 *                entry.  Needs BPF trampolines.
 *
 *  tracepoint    tp_btf/page_fault_user (x86, every user fault, before it
 *  path          is handled; and page_fault_kernel for kernel-mode faults on
 *                user addresses) opens a pending record per thread;
 *                tp_btf/count_memcg_events, which fires in the faulting
 *                task's context while the fault is handled, marks it major
 *                (PGMAJFAULT), as having read swap (PSWPIN) or zero-filled
 *                entries (SWPIN_ZERO), and closes it
 *                (PGFAULT, counted once at the end of every completed
 *                fault).  Sees every not-present fault, swap entry unknown.
 *
 * Both produce the same struct leap_event, with the per-stream delta
 * computed here, and count into the per-target slot of leap_stats.
 *
 * Kernel facts relied upon, read in torvalds/linux (6.18):
 *  - arch/x86/mm/fault.c: trace_page_fault_entries() calls
 *    trace_page_fault_user(address, regs, error_code) for user-mode faults
 *    before do_user_addr_fault(); the tracepoint is TRACE_EVENT_FN with a
 *    reg function, so attaching enables it.  error_code bit 0 (X86_PF_PROT)
 *    clear = page not present, bit 1 (X86_PF_WRITE) = write access.
 *    The BTF prototype is (address, regs, error_code), in that order.
 *  - mm/memory.c mm_account_fault(): returns early on VM_FAULT_RETRY
 *    ("Incomplete faults will be accounted upon completion"), then
 *    count_vm_event(PGFAULT) + count_memcg_event_mm(mm, PGFAULT) for every
 *    completed fault, successful or failed.  do_swap_page() counts
 *    PGMAJFAULT through count_memcg_event_mm() when the folio was not in
 *    the swap cache and had to be read, before that.
 *  - mm/page_io.c: swap_read_folio_bdev_{sync,async}() count PSWPIN with
 *    count_memcg_folio_events() when they submit the read (task context).
 *    swap_read_folio_zeromap() fills a folio whose entries were swapped
 *    out zero-filled (no I/O) and counts SWPIN_ZERO with
 *    count_objcg_events() instead (zeromap since 6.12, the memcg count
 *    since ~6.14): LEAP_EV_SWAPIN_ZERO.
 *  - mm/memcontrol.c count_memcg_events(): trace_count_memcg_events(memcg,
 *    idx, count) after updating the per-cpu counter, unless
 *    mem_cgroup_disabled().  include/trace/events/memcg.h: prototype
 *    (struct mem_cgroup *memcg, int item, unsigned long val); item is an
 *    enum vm_event_item (PGFAULT, PGMAJFAULT and PSWPIN are all there).
 *    The tracepoint was added in late 2024 ("memcg: add tracing for memcg
 *    stat updates", ~6.13, not in 6.12); older kernels use the fentry path.
 *  - mm/memory.c do_swap_page(): VM_FAULT_RETRY (0x400) = it will be called
 *    again for the same fault; VM_FAULT_MAJOR (0x4) = read from swap.
 *    vmf->orig_pte holds the swap pte.
 *  - block/blk-core.c submit_bio_noacct_nocheck(): trace_block_bio_queue(bio)
 *    in the submitter's context; mm/page_io.c swap_read_folio_bdev_*()
 *    submit the swap-in read from the faulting task with bi_sector =
 *    swap_folio_sector() = the slot's byte position >> 9, and a swap
 *    partition maps slot N to device page N (mm/swapfile.c
 *    setup_swap_extents(): one extent from block 0 for a block device).
 *    bio.bi_bdev since 5.12; bi_disk + bi_partno before; the tracepoint
 *    took (request_queue, bio) before ~5.11.
 *  - arch/x86/include/asm/pgtable_64.h: swap pte = type in bits 59-63,
 *    inverted offset in bits 9-58: __swp_type(x) = x >> 59,
 *    __swp_offset(x) = ~x << 5 >> 14.  The flag bits pte_swp_clear_flags()
 *    drops (soft-dirty, uffd-wp, exclusive) are below bit 9.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "leap_event.h"
#include "leap_observer.h"

/* GPL-compatible for the kernel (license_is_gpl_compatible()), which the
 * GPL-only helpers used here require; MIT like the rest of leap. */
char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Set by the loader before load: the agent's own tgid is never watched. */
const volatile __u32 leap_agent_tgid = 0;
/*
 * Consumer wake-up policy.  Waking the reader costs an IPI and a context
 * switch per event when it keeps up (measured here: ~0.9-1.7 us of BPF run
 * time per event and a 2.5x slower faulting workload with libbpf's
 * adaptive wake-up on every event).  With leap_wakeup_bytes = T > 0:
 * major faults, the ones a prefetcher must react to, wake the reader at
 * once (unless !leap_wake_major); other events wake it once per T bytes
 * produced (the record that crosses a multiple of T), else they wait for
 * the next wake-up or the reader's poll timeout.  0 = libbpf's adaptive
 * mode for every event (wake when the reader has caught up).
 */
const volatile __u32 leap_wakeup_bytes = 0;
/* Whether major-fault events wake the reader at once (with leap_wakeup_bytes). */
const volatile bool leap_wake_major = true;
/*
 * Send only faults that can matter to a prefetcher: major ones, known swap
 * faults (fentry path) and faults on pages in leap_prefetched.  Minor faults
 * on other pages are counted but not sent.
 */
const volatile bool leap_swap_events_only = false;
/*
 * A major fault wakes the reader at once only if it is at most this many
 * pages from one of its stream key's newest faults (leap_last; 0: any
 * distance).  A prefetcher can act on a near fault (a trend may start or
 * go on); a far jump, the normal case under random access, waits for the
 * next batch instead of costing a wake-up per fault.
 */
const volatile __u64 leap_wake_delta_max = 0;
/*
 * Backend mode: the kernel dev_t (MKDEV(major, minor) = major << 20 | minor)
 * of the block device the watched tasks swap to, whose reads give the swap
 * offset on every hook path (leap_bio_queue); 0 = off (not loaded).
 */
const volatile __u32 leap_backend_dev = 0;

/*
 * Arming (tracepoint path, the agent): the fault hooks (page_fault_user,
 * page_fault_kernel, count_memcg_events) run for every fault of every task
 * on the machine once attached, ~11% of a first-touch fault here even as
 * empty programs (docs/bench-overhead.md).  With arming (the loader's
 * arm_on_swap) it attaches them only while a target swaps in: until then
 * only leap_arm_bio runs, once per block I/O, and asks for them
 * (LEAP_EV_ARM) when a watched task reads a page in from swap.
 * The loader sets leap_fault_hooks_on while they are attached.
 */
volatile __u32 leap_fault_hooks_on = 0;

/*
 * Set by the agent while it is awake and will look at the ring again before
 * it sleeps (user/observer_ring.c); a wake-up then changes nothing, and each
 * one costs the faulting thread an irq_work self-IPI (kernel/bpf/ringbuf.c:
 * bpf_ringbuf_commit() queues rb->work for BPF_RB_FORCE_WAKEUP whatever
 * the reader does), in a PVM guest a hypervisor exit: 3.8% of Node.js's
 * main thread in a run of its full collection under leap (perf, this
 * machine, 2026-11-30).  The reader clears it, then looks at the producer
 * position; this program advances the producer position (reserve), then
 * makes an atomic add, then reads it: one of the two sees the other's
 * write, so an event is either woken for or seen before the reader sleeps.
 * The x86 JIT emits that add with a lock prefix (arch/x86/net/bpf_jit_comp.c,
 * emit_atomic()), a full barrier; other JITs may emit an atomic without a
 * fetch relaxed (only those with BPF_FETCH must be fully ordered: the
 * powerpc and riscv JIT fixes of 2024), and BPF_FETCH needs 5.12.  Hence
 * leap_wake_skip_busy, the loader's choice: on x86-64 only.
 */
volatile __u32 leap_reader_busy = 0;
const volatile bool leap_wake_skip_busy = false;
/* Wake-ups asked for and skipped (leap_observer.h), a slot a CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct leap_wake_counts);
} leap_wake_counts SEC(".maps");

/* Where the agent recorded prefetched pages (include/leap_event.h). */
__u8 leap_pf_regions[LEAP_PF_REGIONS];
/* When leap_arm_bio last asked (bpf_ktime_get_ns()): once per ms at most. */
__u64 leap_arm_sent_ns = 0;
#define LEAP_ARM_RESEND_NS (1000ULL * 1000)

/* Ring buffer bytes one event takes: the 8-byte record header + payload. */
#define LEAP_EV_RECORD_BYTES ((sizeof(struct leap_event) + 8 + 7) & ~7)

/* x86 page fault error code bits (arch/x86/include/asm/trap_pf.h). */
#define LEAP_X86_PF_PROT  0x1
#define LEAP_X86_PF_WRITE 0x2

/* vm_fault_t bits (include/linux/mm_types.h enum vm_fault_reason). */
#define LEAP_VM_FAULT_MAJOR 0x4
#define LEAP_VM_FAULT_RETRY 0x400
/* FAULT_FLAG_WRITE: a #define before 5.13, enum fault_flag since; 0x1 in both. */
#define LEAP_FAULT_FLAG_WRITE 0x1
/* task_struct.flags (include/linux/sched.h). */
#define LEAP_PF_KTHREAD 0x00200000

/* x86_64 swap pte layout (see above). */
#define LEAP_SWP_TYPE_BITS    5
#define LEAP_SWP_OFFSET_SHIFT 14
/*
 * Swap types at and above MAX_SWAPFILES are special entries (migration,
 * device-private, hwpoison, pte markers), not swap slots.  MAX_SWAPFILES is
 * 32 minus a config-dependent count of those, at least 23 on every kernel
 * we target; treat 23 and up as "not a swap slot".
 */
#define LEAP_SWP_TYPE_LIMIT 23
/*
 * A retried do_swap_page() call for the same thread and page within this
 * long continues the earlier attempt; an older record is a leftover.
 */
#define LEAP_RETRY_WINDOW_NS (2ULL * 1000 * 1000 * 1000)

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LEAP_TARGETS_MAX);
	__type(key, __u64); /* cgroup v2 id */
	__type(value, struct leap_target);
} leap_cgroups SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LEAP_TARGETS_MAX);
	__type(key, __u32); /* tgid */
	__type(value, struct leap_target);
} leap_pids SEC(".maps");

/*
 * Cgroup trees.  A fault's cgroup (the leaf: bpf_get_current_cgroup_id())
 * is resolved to the deepest target among itself and its ancestors once,
 * then remembered here, so the common case costs one lookup as the exact
 * match did.  Negative answers (cgroups no target covers) are remembered
 * too: every fault on the machine passes through watched().  Entries carry
 * leap_targets_gen; the loader bumps it after every change to
 * leap_cgroups, which makes all older entries stale at once.  Cgroup ids
 * are never reused (64-bit kernfs ids), so an id always names one cgroup.
 * Value: struct leap_match (leap_observer.h).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LEAP_MATCH_CACHE_MAX);
	__type(key, __u64); /* cgroup v2 id of the faulting task */
	__type(value, struct leap_match);
} leap_cg_match SEC(".maps");

/* Cgroups that matched a target, for status and stats (include/leap_event.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LEAP_LEAVES_MAX);
	__type(key, __u64);
	__type(value, struct leap_leaf);
} leap_leaves SEC(".maps");

/* Bumped by the loader after each change of leap_cgroups (see leap_match). */
volatile __u64 leap_targets_gen = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, LEAP_STATS_SLOTS);
	__type(key, __u32);
	__type(value, struct leap_cg_stats);
} leap_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, LEAP_RINGBUF_DEFAULT);
} leap_events SEC(".maps");

/* Pages the agent prefetched, not yet faulted on (include/leap_event.h). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LEAP_PREFETCHED_MAX);
	__type(key, struct leap_pf_key);
	__type(value, __u32); /* LEAP_PF_* */
} leap_prefetched SEC(".maps");

/*
 * The agent's windows whose process_madvise returned (include/leap_event.h),
 * slot window % LEAP_ISSUED_WINDOWS.  The agent writes them through an
 * mmap of this array (5.5+), with no bpf() call: a map update per window
 * was ~1.2 us of its CPU.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, LEAP_ISSUED_WINDOWS);
	__type(key, __u32);
	__type(value, struct leap_issued_slot);
} leap_issued SEC(".maps");

/*
 * Whether a recorded page was in the swap cache before a fault that began
 * at fault_ns (include/leap_event.h): its window's process_madvise had
 * returned by then.  A fault that began earlier and read the page itself
 * raced the prefetch: late, not wasted.  A slot that holds another window
 * (not written yet, or reused) says nothing: not wasted.
 */
static __always_inline bool pf_issued_before(__u32 pflags, __u64 fault_ns)
{
	__u32 window = pflags >> LEAP_PF_WINDOW_SHIFT;
	__u32 slot = window % LEAP_ISSUED_WINDOWS;
	struct leap_issued_slot *done;

	if (!window)
		return false;
	done = bpf_map_lookup_elem(&leap_issued, &slot);
	/* The agent stores done_ns before window. */
	return done && *(volatile __u32 *)&done->window == window &&
	       *(volatile __u64 *)&done->done_ns <= fault_ns;
}

/*
 * The newest faulting pages of each stream key: leap_event.delta is taken
 * from the newest, and a major fault near any of them wakes the reader at
 * once (leap_wake_delta_max): it may continue any of the streams one
 * process walks in turns, which the agent follows apart (its lanes,
 * user/lib/lanes.c).  With the newest page alone, each fault of two
 * arrays read in lock-step is a far jump from the other's.
 */
#define LEAP_LAST_PAGES 4 /* a power of two, as many as the agent's lanes */
struct leap_last_pages {
	__u64 page[LEAP_LAST_PAGES];
	__u32 newest; /* index of the newest page */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LEAP_STREAMS_MAX);
	__type(key, __u32); /* tgid, or tid with LEAP_TGT_THREAD_DELTAS */
	__type(value, struct leap_last_pages);
} leap_last SEC(".maps");

static __always_inline __u64 page_distance(__u64 a, __u64 b)
{
	return a > b ? a - b : b - a;
}

/*
 * Threads whose misses need no wake-up, until the time stored (ns, the
 * clock of bpf_ktime_get_ns()).  Written by the agent when it holds a
 * thread's stream back because the kernel's own readahead serves it: the
 * agent would only record those misses, so they wait for the next batch
 * instead of preempting the program (a wake-up costs the faulting program
 * ~17 us on this 2-core machine, docs/bench-real.md).  Read only for misses
 * that would otherwise force a wake-up.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LEAP_QUIET_MAX);
	__type(key, __u32);   /* tid */
	__type(value, __u64); /* quiet until */
} leap_quiet SEC(".maps");

/* A fault seen at entry and not yet completed. */
struct leap_pending {
	__u64 addr; /* page aligned */
	__u64 ts_ns;
	__u64 cgroup_id;
	__u64 swap_offset;
	__u32 flags; /* LEAP_EV_* gathered so far */
	__u32 swap_type;
	__u32 slot;   /* leap_target.stats_slot of the matching target */
	__u32 tflags; /* leap_target.flags of the matching target */
	__u32 active; /* task-storage records stay allocated: 0 = none open */
	__u32 pad;
	__u64 nvcsw; /* the thread's voluntary context switches at entry */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LEAP_PENDING_MAX);
	__type(key, __u32); /* tid */
	__type(value, struct leap_pending);
} leap_pending SEC(".maps");

/*
 * Per task on the tracepoint path: the open fault, and whether the task is
 * watched, as watched() last answered for its cgroup.  page_fault_user
 * runs for every fault on the machine; with the answer cached beside the
 * record it costs one task-storage lookup (a pointer chase) instead of the
 * leap_pids and leap_cg_match hash lookups per fault.  Valid while the
 * task's cgroup and leap_targets_gen are the ones it was taken under
 * (the loader bumps the generation after every change of leap_cgroups or
 * leap_pids).  Every task that faults gets one (~100 bytes, freed with
 * the task), not only watched ones: the "no" answers are what most faults
 * on the machine need.
 */
struct leap_task_state {
	struct leap_pending p;
	__u64 w_cgid;		/* cgroup the answer was taken for */
	__u64 w_gen;		/* leap_targets_gen + 1 then; 0: no answer yet */
	struct leap_target w_t; /* the target, when w_watched */
	__u32 w_watched;
	__u32 w_pad;
};

/*
 * The tracepoint path keeps its pending fault in task-local storage
 * instead: count_memcg_events fires several times per fault for every task
 * on the machine (reclaim counters too), and a lookup there must be as
 * cheap as a pointer chase; opening and closing a record is a store, not
 * an LRU hash update and delete.  Not created on the fentry path (task
 * storage for tracing programs is missing on 5.10); leap_task_pending
 * makes the code that uses it dead there.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct leap_task_state);
} leap_pending_task SEC(".maps");

/* Set by the loader: the pending record lives in leap_pending_task. */
const volatile bool leap_task_pending = false;

/* The current thread's open pending record, or NULL. */
static __always_inline struct leap_pending *pending_current(__u32 tid)
{
	struct leap_pending *p;

	if (leap_task_pending) {
		struct leap_task_state *ts = bpf_task_storage_get(
			&leap_pending_task, bpf_get_current_task_btf(), 0, 0);

		p = ts ? &ts->p : 0;
		return p && p->active ? p : 0;
	}
	return bpf_map_lookup_elem(&leap_pending, &tid);
}

/* Closes the current thread's record (after the caller copied it). */
static __always_inline void pending_close(struct leap_pending *p, __u32 tid)
{
	if (leap_task_pending)
		p->active = 0;
	else
		bpf_map_delete_elem(&leap_pending, &tid);
}

/* Who owns the pins; written by the loader, never read here. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct leap_owner);
} leap_owner SEC(".maps");

static __always_inline struct leap_cg_stats *stats_slot(__u32 slot)
{
	if (slot >= LEAP_STATS_SLOTS)
		return 0;
	return bpf_map_lookup_elem(&leap_stats, &slot);
}

/*
 * The deepest target covering the current task's cgroup v2 (cgid): the
 * cgroup itself, or an ancestor whose target is not LEAP_TGT_EXACT.
 * Fills *m (target_id 0: none).  Walks at most LEAP_CGROUP_DEPTH_MAX
 * levels up: a target farther above is not found.
 */
static __always_inline void resolve_cgroup(struct task_struct *task, __u64 cgid,
					   struct leap_match *m)
{
	struct cgroup *cg = BPF_CORE_READ(task, cgroups, dfl_cgrp);
	struct leap_target *t;

	t = bpf_map_lookup_elem(&leap_cgroups, &cgid);
	if (t) {
		m->t = *t;
		m->target_id = cgid;
		return;
	}
	/*
	 * Up through the parents.  include/linux/cgroup-defs.h (5.10 to 6.18):
	 * a cgroup's own css is its member `self`, whose `parent` is the
	 * parent cgroup's `self` (NULL at the root) and whose `cgroup` points
	 * back to the cgroup; kn->id is the v2 id (a u64 since 5.5), what
	 * bpf_get_current_cgroup_id() returns.  One field path on every
	 * kernel, unlike ancestors[] (6.1+) / ancestor_ids[] (before), and
	 * unlike bpf_get_current_ancestor_cgroup_id(), which
	 * bpf_tracing_func_proto() (kernel/trace/bpf_trace.c) offers to
	 * tracing programs (fentry, tp_btf) only since 5.14: commit
	 * 95b861a7935b "bpf: Allow bpf_get_current_ancestor_cgroup_id for
	 * tracing" (dated by its Fixes: in "bpf: don't call
	 * bpf_get_current_[ancestor_]cgroup_id() in sleepable progs"); the
	 * 5.10 verifier would refuse the fentry programs.
	 */
	for (int i = 1; i < LEAP_CGROUP_DEPTH_MAX; i++) {
		__u64 id;

		cg = BPF_CORE_READ(cg, self.parent, cgroup);
		if (!cg)
			break;
		id = BPF_CORE_READ(cg, kn, id);
		t = bpf_map_lookup_elem(&leap_cgroups, &id);
		if (t && !(t->flags & LEAP_TGT_EXACT)) {
			m->t = *t;
			m->target_id = id;
			return;
		}
	}
}

/*
 * Whether the current task is watched; its target entry into *out.  The
 * tgid entry wins over the cgroup entries.  Kernel threads and the agent
 * are never watched.
 */
static __always_inline bool watched(__u32 tgid, __u64 *cgid, struct leap_target *out)
{
	struct leap_match *cached, m = {};
	struct task_struct *task;
	struct leap_target *t;
	__u64 gen;

	if (tgid == 0 || tgid == leap_agent_tgid)
		return false;
	task = (struct task_struct *)bpf_get_current_task();
	if (BPF_CORE_READ(task, flags) & LEAP_PF_KTHREAD)
		return false;
	*cgid = bpf_get_current_cgroup_id();
	t = bpf_map_lookup_elem(&leap_pids, &tgid);
	if (t) {
		*out = *t;
		return true;
	}
	/* Read before the targets: an answer from older targets stays stale. */
	gen = leap_targets_gen;
	cached = bpf_map_lookup_elem(&leap_cg_match, cgid);
	if (cached && cached->gen == gen) {
		if (!cached->target_id)
			return false;
		*out = cached->t;
		return true;
	}
	resolve_cgroup(task, *cgid, &m);
	m.gen = gen;
	bpf_map_update_elem(&leap_cg_match, cgid, &m, BPF_ANY);
	if (!m.target_id) {
		bpf_map_delete_elem(&leap_leaves, cgid);
		return false;
	}
	{
		struct leap_leaf leaf = {.target_id = m.target_id,
					 .stats_slot = m.t.stats_slot,
					 .flags = m.t.flags};

		bpf_map_update_elem(&leap_leaves, cgid, &leaf, BPF_ANY);
	}
	*out = m.t;
	return true;
}

/* watched(), answered from the task's cache when still valid (leap_task_state). */
static __always_inline bool watched_cached(struct leap_task_state *ts, __u32 tgid,
					   __u64 *cgid, struct leap_target *out)
{
	/* Read before resolving: an answer from older targets stays stale. */
	__u64 gen = leap_targets_gen + 1;
	bool w;

	*cgid = bpf_get_current_cgroup_id();
	if (ts->w_gen == gen && ts->w_cgid == *cgid) {
		*out = ts->w_t;
		return ts->w_watched;
	}
	w = watched(tgid, cgid, out);
	ts->w_cgid = *cgid;
	ts->w_watched = w;
	if (w)
		ts->w_t = *out;
	ts->w_gen = gen;
	return w;
}

/* Whether the agent asked not to be woken for this thread's misses now. */
static __always_inline bool thread_quiet(__u32 tid, __u64 now)
{
	__u64 *until = bpf_map_lookup_elem(&leap_quiet, &tid);

	return until && *until > now;
}

/*
 * A fault completed: count it, advance its stream and send the event.
 * @p is a copy the caller owns (the pending entry is already deleted).
 */
static __always_inline void complete_fault(const struct leap_pending *p, __u32 tgid,
					   __u32 tid, bool count_fault)
{
	struct leap_cg_stats *st = stats_slot(p->slot);
	struct leap_event *ev;
	__u64 page = p->addr >> LEAP_PAGE_SHIFT;
	__u32 key = (p->tflags & LEAP_TGT_THREAD_DELTAS) ? tid : tgid;
	struct leap_last_pages *last;
	__u64 prod = 0, wake, near = 0;
	struct leap_pf_key pk = {.tgid = tgid, .page = page};
	__u32 flags = p->flags, *pf = 0;
	bool marker = false;
	__s64 delta = 0;

	if (st) {
		if (count_fault)
			__sync_fetch_and_add(&st->faults, 1);
		if (flags & LEAP_EV_MAJOR)
			__sync_fetch_and_add(&st->swapin_misses, 1);
	}

	/* A page the agent prefetched: a hit, or (major) a late prefetch.
	 * Looked up only where the agent recorded a window. */
	if (*(volatile __u8 *)&leap_pf_regions[leap_pf_region(tgid, page) &
					       (LEAP_PF_REGIONS - 1)])
		pf = bpf_map_lookup_elem(&leap_prefetched, &pk);
	if (pf) {
		__u32 pflags = *pf;

		flags |= LEAP_EV_PREFETCHED;
		marker = pflags & LEAP_PF_MARKER;
		bpf_map_delete_elem(&leap_prefetched, &pk);
		if ((flags & LEAP_EV_MAJOR) && pf_issued_before(pflags, p->ts_ns)) {
			flags |= LEAP_EV_WASTED;
			if (st)
				__sync_fetch_and_add(&st->prefetch_wasted, 1);
		}
	}
	/* A swap-cache hit on a page not ours (tracepoint path, leap_rss_stat):
	 * counted, not sent.  One on a page of our windows is our hit. */
	if (st && (flags & (LEAP_EV_SWAP_ENTRY_FREED | LEAP_EV_MAJOR |
			    LEAP_EV_PREFETCHED)) == LEAP_EV_SWAP_ENTRY_FREED)
		__sync_fetch_and_add(&st->swap_cache_hits, 1);
	if (leap_swap_events_only &&
	    !(flags & (LEAP_EV_MAJOR | LEAP_EV_SWAP | LEAP_EV_PREFETCHED)))
		return;
	if (BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), nvcsw) !=
	    p->nvcsw)
		flags |= LEAP_EV_SLEPT;

	last = bpf_map_lookup_elem(&leap_last, &key);
	if (last) {
		__u32 newest = last->newest & (LEAP_LAST_PAGES - 1);

		delta = (__s64)(page - last->page[newest]);
		near = page_distance(page, last->page[0]);
#pragma unroll
		for (int i = 1; i < LEAP_LAST_PAGES; i++) {
			__u64 d = page_distance(page, last->page[i]);

			if (d < near)
				near = d;
		}
		newest = (newest + 1) & (LEAP_LAST_PAGES - 1);
		last->page[newest] = page;
		last->newest = newest;
	} else {
		struct leap_last_pages first = {};

#pragma unroll
		for (int i = 0; i < LEAP_LAST_PAGES; i++)
			first.page[i] = page;
		bpf_map_update_elem(&leap_last, &key, &first, BPF_ANY);
	}

	if (!(p->tflags & LEAP_TGT_EVENTS))
		return;

	/*
	 * Producer position before our record: another CPU may reserve in
	 * between, then the boundary falls in its record or the next one.
	 */
	if (leap_wakeup_bytes)
		prod = bpf_ringbuf_query(&leap_events, BPF_RB_PROD_POS);
	ev = bpf_ringbuf_reserve(&leap_events, sizeof(*ev), 0);
	if (!ev) {
		if (st)
			__sync_fetch_and_add(&st->events_dropped, 1);
		return;
	}
	ev->ts_ns = p->ts_ns;
	ev->cgroup_id = p->cgroup_id;
	ev->addr = p->addr;
	ev->delta = delta;
	ev->swap_offset = p->swap_offset;
	ev->tgid = tgid;
	ev->tid = tid;
	ev->flags = flags;
	ev->swap_type = p->swap_type;
	ev->latency_ns = bpf_ktime_get_ns() - p->ts_ns;
	ev->cpu = bpf_get_smp_processor_id();
	ev->swap_cache_hits = st ? (__u32) * (volatile __u64 *)&st->swap_cache_hits : 0;
	if (!leap_wakeup_bytes)
		wake = 0; /* libbpf's default: adaptive, wake when the reader caught up */
	else if ((leap_wake_major && !(p->tflags & LEAP_TGT_NO_WAKE) &&
		  (flags & LEAP_EV_MAJOR) &&
		  (!leap_wake_delta_max || near <= leap_wake_delta_max) &&
		  !thread_quiet(tid, p->ts_ns)) ||
		 marker ||
		 prod / leap_wakeup_bytes !=
			 (prod + LEAP_EV_RECORD_BYTES) / leap_wakeup_bytes)
		wake = BPF_RB_FORCE_WAKEUP;
	else
		wake = BPF_RB_NO_WAKEUP;
	/* Counted before the submit: this locked add is the barrier between
	 * the reservation and the read of leap_reader_busy. */
	if (st)
		__sync_fetch_and_add(&st->events_sent, 1);
	if (wake == BPF_RB_FORCE_WAKEUP) {
		__u32 zero = 0;
		struct leap_wake_counts *wc =
			bpf_map_lookup_elem(&leap_wake_counts, &zero);

		if (leap_wake_skip_busy && st && leap_reader_busy) {
			wake = BPF_RB_NO_WAKEUP;
			if (wc)
				wc->skipped++;
		} else if (wc) {
			wc->sent++;
		}
	}
	bpf_ringbuf_submit(ev, wake);
}

/* ---- tracepoint path ---------------------------------------------------- */

/*
 * Fault entry (user mode, or kernel mode on a user address): counts the
 * fault and opens a pending record for a not-present fault of a watched
 * task.
 */
static __always_inline int fault_entry(unsigned long address, unsigned long error_code)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct leap_task_state *ts = 0;
	struct leap_pending p = {};
	struct leap_cg_stats *st;
	struct leap_target t;
	__u64 cgid = 0;

	if (leap_task_pending) {
		ts = bpf_task_storage_get(&leap_pending_task, bpf_get_current_task_btf(),
					  0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!ts || !watched_cached(ts, tgid, &cgid, &t))
			return 0;
	} else if (!watched(tgid, &cgid, &t)) {
		return 0;
	}

	/*
	 * Every fault of a watched task counts; only not-present ones (a page
	 * to bring in) become events.  Protection faults (COW and friends)
	 * never touch swap.
	 */
	st = stats_slot(t.stats_slot);
	if (st)
		__sync_fetch_and_add(&st->faults, 1);
	if ((error_code & LEAP_X86_PF_PROT) || (t.flags & LEAP_TGT_STANDBY))
		return 0;

	p.addr = address & ~((1ULL << LEAP_PAGE_SHIFT) - 1);
	p.ts_ns = bpf_ktime_get_ns();
	p.cgroup_id = cgid;
	p.swap_offset = LEAP_NO_SWAP_OFFSET;
	p.flags = (error_code & LEAP_X86_PF_WRITE) ? LEAP_EV_WRITE : 0;
	p.nvcsw = BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), nvcsw);
	p.slot = t.stats_slot;
	p.tflags = t.flags;
	/*
	 * A record left over from a fault that never completed (e.g. a
	 * SIGSEGV before handle_mm_fault) is simply replaced.
	 */
	if (ts) {
		p.active = 1;
		ts->p = p;
	} else {
		bpf_map_update_elem(&leap_pending, &tid, &p, BPF_ANY);
	}
	return 0;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(leap_pf_user, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	return fault_entry(address, error_code);
}

/*
 * Same tracepoint class for faults taken in kernel mode
 * (trace_page_fault_kernel in arch/x86/mm/fault.c).  Kernel addresses have
 * the top bit set on x86_64 and are never ours.
 */
SEC("tp_btf/page_fault_kernel")
int BPF_PROG(leap_pf_kernel, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	if ((long)address < 0)
		return 0;
	return fault_entry(address, error_code);
}

SEC("tp_btf/count_memcg_events")
int BPF_PROG(leap_memcg_ev, struct mem_cgroup *memcg, int item, unsigned long val)
{
	int pgfault = bpf_core_enum_value(enum vm_event_item, PGFAULT);
	int pgmajfault = bpf_core_enum_value(enum vm_event_item, PGMAJFAULT);
	int pswpin = bpf_core_enum_value(enum vm_event_item, PSWPIN);
	int swpin_zero = -1;
	struct leap_pending *p, done;
	__u64 id;
	__u32 tid;

	if (bpf_core_enum_value_exists(enum vm_event_item, SWPIN_ZERO))
		swpin_zero = bpf_core_enum_value(enum vm_event_item, SWPIN_ZERO);
	/* This fires for every memcg event system-wide: filter cheaply first. */
	if (item != pgfault && item != pgmajfault && item != pswpin && item != swpin_zero)
		return 0;
	id = bpf_get_current_pid_tgid();
	tid = (__u32)id;
	p = pending_current(tid);
	if (!p)
		return 0;
	if (item == pgmajfault) {
		p->flags |= LEAP_EV_MAJOR;
		return 0;
	}
	if (item == pswpin) {
		p->flags |= LEAP_EV_SWAPIN_IO;
		return 0;
	}
	if (item == swpin_zero) {
		p->flags |= LEAP_EV_SWAPIN_ZERO;
		return 0;
	}
	/* PGFAULT: mm_account_fault() at the end of the completed fault. */
	done = *p;
	pending_close(p, tid);
	/* faults were counted at entry on this path */
	complete_fault(&done, id >> 32, tid, false);
	return 0;
}

/*
 * Tracepoint path: the fault took a swap entry out of its page table.  A
 * minor fault on a swapped page whose folio is in the swap cache, not
 * read by the agent (Linux's readahead read it, or it never left), sends
 * no event there, yet it is a swap access like any other, and the outcome
 * judge must count it in a held epoch as it counts our hits with windows
 * on (include/leap/outcome.h).  include/linux/mm.h: add_mm_counter() and
 * friends call mm_trace_rss_stat() -> trace_rss_stat(mm, member) on every
 * change of an mm's counters (since 5.5; the percpu counters of 6.2 keep
 * it), and mm/memory.c do_swap_page() moves MM_SWAPENTS down by the pages
 * it maps, in the faulting task, during the fault.  The other changes of
 * MM_SWAPENTS are a fork's (the child's mm, not current's), zapping
 * (munmap, not inside a fault) and reclaim's swap-outs, which run with
 * PF_MEMALLOC (try_to_free_mem_cgroup_pages(), __perform_reclaim()), also
 * in a fault's direct reclaim: skipped.  Shared memory's swap-ins count
 * MM_SHMEMPAGES, not this, and stay unseen.  MM_SWAPENTS is 2 in the
 * anonymous enum of include/linux/mm_types_task.h since 2.6.34 (an
 * anonymous enum has no CO-RE relocation).
 */
#define LEAP_MM_SWAPENTS 2
#define LEAP_PF_MEMALLOC 0x00000800 /* include/linux/sched.h */

SEC("tp_btf/rss_stat")
int BPF_PROG(leap_rss_stat, struct mm_struct *mm, int member)
{
	struct task_struct *task;
	struct leap_pending *p;

	if (member != LEAP_MM_SWAPENTS)
		return 0;
	task = bpf_get_current_task_btf();
	if ((task->flags & LEAP_PF_MEMALLOC) || task->mm != mm)
		return 0;
	p = pending_current((__u32)bpf_get_current_pid_tgid());
	if (p)
		p->flags |= LEAP_EV_SWAP_ENTRY_FREED;
	return 0;
}

/* ---- fentry path ------------------------------------------------------- */

/* Before ~5.16 vm_fault.flags is an unsigned int, not enum fault_flag. */
struct vm_fault___u32 {
	unsigned int flags;
} __attribute__((preserve_access_index));

/*
 * A fault's start on the fentry path: pending until its exit.  swap_pte:
 * vmf->orig_pte is the swap entry (do_swap_page()); a shmem fault's PTE is
 * none, its swap entry in the file's page cache.
 */
static __always_inline int fentry_fault(struct vm_fault *vmf, bool swap_pte)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct leap_pending p = {}, *old;
	struct leap_target t;
	__u64 cgid = 0, pte, addr, now;
	__u32 type;

	if (!watched(tgid, &cgid, &t))
		return 0;
	if (t.flags & LEAP_TGT_STANDBY) {
		struct leap_cg_stats *st = stats_slot(t.stats_slot);

		if (st)
			__sync_fetch_and_add(&st->faults, 1);
		return 0;
	}
	addr = BPF_CORE_READ(vmf, address) & ~((1ULL << LEAP_PAGE_SHIFT) - 1);
	/*
	 * Called again after VM_FAULT_RETRY for the same fault: keep the
	 * first entry time and what the earlier attempts found.
	 */
	now = bpf_ktime_get_ns();
	old = bpf_map_lookup_elem(&leap_pending, &tid);
	if (old && old->addr == addr && now - old->ts_ns < LEAP_RETRY_WINDOW_NS)
		return 0;

	p.addr = addr;
	p.ts_ns = now;
	p.cgroup_id = cgid;
	p.flags = LEAP_EV_FENTRY;
	p.nvcsw = BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), nvcsw);
	if (bpf_core_field_exists(vmf->flags)) {
		if (BPF_CORE_READ(vmf, flags) & LEAP_FAULT_FLAG_WRITE)
			p.flags |= LEAP_EV_WRITE;
	} else if (bpf_core_field_exists(((struct vm_fault___u32 *)vmf)->flags)) {
		if (BPF_CORE_READ((struct vm_fault___u32 *)vmf, flags) &
		    LEAP_FAULT_FLAG_WRITE)
			p.flags |= LEAP_EV_WRITE;
	}
	p.slot = t.stats_slot;
	p.tflags = t.flags;
	p.swap_offset = LEAP_NO_SWAP_OFFSET;
	if (!swap_pte)
		goto out;

	pte = BPF_CORE_READ(vmf, orig_pte.pte);
#if defined(__TARGET_ARCH_x86)
	type = pte >> (64 - LEAP_SWP_TYPE_BITS);
	if (type < LEAP_SWP_TYPE_LIMIT) {
		p.flags |= LEAP_EV_SWAP;
		p.swap_type = type;
		p.swap_offset = ~pte << LEAP_SWP_TYPE_BITS >> LEAP_SWP_OFFSET_SHIFT;
	}
#else
	/* Other architectures encode swap ptes differently: offset unknown. */
	(void)type;
	(void)pte;
	p.flags |= LEAP_EV_SWAP;
#endif
out:
	bpf_map_update_elem(&leap_pending, &tid, &p, BPF_ANY);
	return 0;
}

/* A fault's end on the fentry path: the event, unless it will be retried. */
static __always_inline int fexit_fault(vm_fault_t ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct leap_pending *p, done;

	p = bpf_map_lookup_elem(&leap_pending, &tid);
	if (!p || !(p->flags & LEAP_EV_FENTRY))
		return 0;
	if (ret & LEAP_VM_FAULT_MAJOR)
		p->flags |= LEAP_EV_MAJOR;
	/* It will be called again for this fault: wait for the last call. */
	if (ret & LEAP_VM_FAULT_RETRY)
		return 0;
	done = *p;
	bpf_map_delete_elem(&leap_pending, &tid);
	complete_fault(&done, id >> 32, tid, true);
	return 0;
}

SEC("fentry/do_swap_page")
int BPF_PROG(leap_swap_entry, struct vm_fault *vmf)
{
	return fentry_fault(vmf, true);
}

SEC("fexit/do_swap_page")
int BPF_PROG(leap_swap_exit, struct vm_fault *vmf, vm_fault_t ret)
{
	return fexit_fault(ret);
}

/*
 * Shared memory (MAP_SHARED anonymous, memfd, SysV shm, tmpfs) swaps in
 * through its own path: shmem_fault() -> shmem_get_folio_gfp() ->
 * shmem_swapin_folio() (mm/shmem.c), never do_swap_page(), which leaves
 * its PTE none and the swap entry in the file's page cache.  Whether such
 * a fault read swap is known at its exit: shmem_swapin_folio() sets
 * VM_FAULT_MAJOR (and counts PGMAJFAULT) for a folio it had to read.  A
 * minor one is sent only when it hit a page we prefetched
 * (swap_events_only); first touches of shared memory are counted, not
 * sent.
 */
SEC("fentry/shmem_fault")
int BPF_PROG(leap_shmem_entry, struct vm_fault *vmf)
{
	return fentry_fault(vmf, false);
}

SEC("fexit/shmem_fault")
int BPF_PROG(leap_shmem_exit, struct vm_fault *vmf, vm_fault_t ret)
{
	return fexit_fault(ret);
}

/* ---- backend mode: swap offsets from the device reads ------------------ */

/* Before 5.12 a bio names its disk and partition, not a block_device. */
struct bio___disk {
	struct gendisk *bi_disk;
	__u8 bi_partno;
} __attribute__((preserve_access_index));

static __always_inline __u32 bio_dev(struct bio *bio)
{
	if (bpf_core_field_exists(bio->bi_bdev))
		return BPF_CORE_READ(bio, bi_bdev, bd_dev);
	if (bpf_core_field_exists(((struct bio___disk *)bio)->bi_disk)) {
		struct bio___disk *old = (struct bio___disk *)bio;
		__u32 major = BPF_CORE_READ(old, bi_disk, major);
		__u32 minor = BPF_CORE_READ(old, bi_disk, first_minor) +
			      BPF_CORE_READ(old, bi_partno);

		return major << 20 | minor;
	}
	return 0;
}

#define LEAP_REQ_OP_MASK	    0xff /* REQ_OP_BITS = 8 (include/linux/blk_types.h) */
#define LEAP_REQ_OP_READ	    0
#define LEAP_SECTORS_PER_PAGE_SHIFT (LEAP_PAGE_SHIFT - 9)

/*
 * A read of the backend device while a watched fault is in flight on this
 * thread: that fault's swap offset.  With kernel readahead off (the
 * agent's default in backend mode) it is the only read of the fault.
 */
static __always_inline int bio_queued(struct bio *bio)
{
	struct leap_pending *p;
	__u32 tid;

	if (bio_dev(bio) != leap_backend_dev ||
	    (BPF_CORE_READ(bio, bi_opf) & LEAP_REQ_OP_MASK) != LEAP_REQ_OP_READ)
		return 0;
	tid = (__u32)bpf_get_current_pid_tgid();
	p = pending_current(tid);
	if (!p)
		return 0;
	if (p->flags & LEAP_EV_DEV_READ) {
		p->flags |= LEAP_EV_DEV_MULTI;
		return 0;
	}
	p->flags |= LEAP_EV_DEV_READ | LEAP_EV_SWAPIN_IO;
	p->swap_offset =
		BPF_CORE_READ(bio, bi_iter.bi_sector) >> LEAP_SECTORS_PER_PAGE_SHIFT;
	return 0;
}

SEC("tp_btf/block_bio_queue")
int BPF_PROG(leap_bio_queue, struct bio *bio)
{
	return bio_queued(bio);
}

/* Before ~5.11 the tracepoint also passed the request_queue, first; the
 * loader picks this one there (from the tracepoint's BTF prototype). */
SEC("tp_btf/block_bio_queue")
int BPF_PROG(leap_bio_queue_q, struct request_queue *q, struct bio *bio)
{
	return bio_queued(bio);
}

/* ---- arming: the fault hooks on while a target swaps in ----------------- */

/*
 * Whether bio is a swap-in read: it reads into a swap-backed folio that is
 * locked and not yet uptodate, the state mm/memory.c do_swap_page() and
 * mm/swap_state.c __read_swap_cache_async() put a new folio in before
 * mm/page_io.c swap_read_folio() fills it (include/linux/page-flags.h:
 * PG_swapbacked is set for anonymous and shmem folios; a folio in the swap
 * cache has PG_swapcache too, but zram's direct swap-in skips the cache).
 * swap_read_folio_bdev_{sync,async}() submit the bio from the faulting
 * task (trace_block_bio_queue() in submit_bio_noacct_nocheck()), for a
 * disk and for zram alike; zero-filled entries and zswap hits read none.
 * An O_DIRECT read into a program's own (uptodate) anonymous buffer is not
 * one.  page->flags is an unsigned long, or a struct holding one
 * (memdesc_flags_t, 6.18): read the word at its offset either way.
 */
static __always_inline bool bio_reads_swap(struct bio *bio)
{
	struct page *page = BPF_CORE_READ(bio, bi_io_vec, bv_page);
	long locked = bpf_core_enum_value(enum pageflags, PG_locked);
	long uptodate = bpf_core_enum_value(enum pageflags, PG_uptodate);
	long swapbacked = bpf_core_enum_value(enum pageflags, PG_swapbacked);
	unsigned long flags = 0;

	if (!page || bpf_core_read(&flags, sizeof(flags), &page->flags))
		return false;
	return (flags >> swapbacked & 1) && (flags >> locked & 1) &&
	       !(flags >> uptodate & 1);
}

/*
 * Asks the reader for the fault hooks: a watched task reads a swap page
 * while they are off.  Targets the agent stood down for do not, nor do
 * those whose policy is off (no LEAP_TGT_EVENTS): an off target is not
 * followed, so an A/B's "off" row is Linux without our hooks, as it says.
 * The agent declines such requests too (agent.c arm()), for the flags it
 * has not written yet.
 */
SEC("tp_btf/block_bio_queue")
int BPF_PROG(leap_arm_bio, struct bio *bio)
{
	__u64 id, cgid = 0, now;
	struct leap_cg_stats *st;
	struct leap_task_state *ts;
	struct leap_target t;
	struct leap_event *ev;

	if (leap_fault_hooks_on ||
	    (BPF_CORE_READ(bio, bi_opf) & LEAP_REQ_OP_MASK) != LEAP_REQ_OP_READ ||
	    !bio_reads_swap(bio))
		return 0;
	id = bpf_get_current_pid_tgid();
	ts = bpf_task_storage_get(&leap_pending_task, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!ts || !watched_cached(ts, id >> 32, &cgid, &t) ||
	    (t.flags & LEAP_TGT_STANDBY) || !(t.flags & LEAP_TGT_EVENTS))
		return 0;
	st = stats_slot(t.stats_slot);
	if (st)
		__sync_fetch_and_add(&st->swapin_unarmed, 1);
	now = bpf_ktime_get_ns();
	if (now - leap_arm_sent_ns < LEAP_ARM_RESEND_NS)
		return 0;
	leap_arm_sent_ns = now;
	ev = bpf_ringbuf_reserve(&leap_events, sizeof(*ev), 0);
	if (!ev)
		return 0;
	__builtin_memset(ev, 0, sizeof(*ev));
	ev->ts_ns = now;
	ev->cgroup_id = cgid;
	ev->swap_offset = LEAP_NO_SWAP_OFFSET;
	ev->tgid = id >> 32;
	ev->tid = (__u32)id;
	ev->flags = LEAP_EV_ARM;
	bpf_ringbuf_submit(ev, BPF_RB_FORCE_WAKEUP);
	return 0;
}

/* A swap read issued while a watched fault is in flight on this thread. */
static __always_inline void mark_swap_read(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct leap_pending *p = bpf_map_lookup_elem(&leap_pending, &tid);

	if (p)
		p->flags |= LEAP_EV_SWAPIN_IO;
}

/* >= ~6.8: swap_read_folio(struct folio *, struct swap_iocb **) */
SEC("fentry/swap_read_folio")
int BPF_PROG(leap_read_folio)
{
	mark_swap_read();
	return 0;
}

/* <= ~6.7: swap_readpage(struct page *, bool, struct swap_iocb **) */
SEC("fentry/swap_readpage")
int BPF_PROG(leap_readpage)
{
	mark_swap_read();
	return 0;
}

/* ---- the agent's window records -------------------------------------------- */

/* leap_record's copy of the window's pages (one per CPU: it may sleep). */
struct leap_record_buf {
	__u64 pages[2 * LEAP_RECORD_MAX]; /* twice: see the mask below */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct leap_record_buf);
} leap_record_scratch SEC(".maps");

/*
 * Run by the agent (BPF_PROG_TEST_RUN, 5.14+) before each window's
 * process_madvise: puts the window's pages into leap_prefetched in one
 * call.  BPF_MAP_UPDATE_BATCH from userspace costs ~400 ns a page here
 * (two copies from userspace and the syscall's bookkeeping per element),
 * this ~250 (measured side by side on this kernel, LRU map, 64-page
 * windows).  Returns the pages recorded; fewer means the map refused some.
 */
SEC("syscall")
int leap_record(void *ctx)
{
	/* A void * context: 6.1's verifier refuses a typed one for the
	 * program's own argument ("reg type unsupported for arg#0"). */
	const struct leap_record_args *args = ctx;
	__u64 marker = args->marker, from = args->pages;
	__u32 n = args->n, tgid = args->tgid, zero = 0, done = 0;
	__u32 tag = args->window << LEAP_PF_WINDOW_SHIFT;
	struct leap_record_buf *buf;

	buf = bpf_map_lookup_elem(&leap_record_scratch, &zero);
	if (!buf || n == 0 || n > LEAP_RECORD_MAX)
		return 0;
	/* The mask bounds the size in the register the helper gets: 6.1's
	 * verifier loses the n <= LEAP_RECORD_MAX test above when the
	 * compiler spills n ("R2 unbounded memory access"). */
	if (bpf_copy_from_user(buf->pages,
			       (n & (2 * LEAP_RECORD_MAX - 1)) * sizeof(__u64),
			       (const void *)from))
		return 0;
	for (__u32 i = 0; i < LEAP_RECORD_MAX && i < n; i++) {
		struct leap_pf_key key = {.tgid = tgid, .page = buf->pages[i]};
		__u32 val = tag | (key.page == marker ? LEAP_PF_MARKER : 0);

		if (bpf_map_update_elem(&leap_prefetched, &key, &val, BPF_ANY) == 0)
			done++;
	}
	return done;
}
