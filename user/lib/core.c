// SPDX-License-Identifier: MIT
/* The agent's decision core (include/leap/core.h). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leap/core.h"

struct core_target {
	bool in_use;
	struct leap_core_policy pol;
	struct leap_cost cost;
	struct leap_outcome out;
	/* stand-downs for no gain since the outcome last said gain: the
	 * next probe waits twice as long each time */
	uint32_t no_gain_streak;
	/* The newest leap_event.swap_cache_hits seen (cache_hits_known: one was). */
	uint32_t cache_hits_last;
	bool cache_hits_known;
};

/* A thread whose stream the kernel's readahead serves: quiet until `until`. */
struct core_quiet {
	uint32_t tid;
	uint64_t until;	 /* ns, the events' clock; 0: not quiet */
	uint64_t lifted; /* when its quiet was last lifted */
};

struct leap_core {
	struct leap_core_config cfg;
	struct leap_core_env env;
	struct leap_table streams;
	struct core_target targets[LEAP_CORE_TARGETS];
	struct core_quiet quiet[LEAP_CORE_QUIET_SLOTS];
	struct leap_sweeps sweeps;
	struct leap_core_counters cnt;
	struct leap_core_plan plan;
};

struct leap_core *leap_core_new(const struct leap_core_config *cfg)
{
	struct leap_core *c;
	uint32_t hsize_max = cfg->hsize_max ? cfg->hsize_max : LEAP_HSIZE_MAX;

	if (cfg->streams == 0 || hsize_max > LEAP_HSIZE_MAX ||
	    !leap_outcome_params_valid(&cfg->outcome))
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->cfg = *cfg;
	c->cfg.hsize_max = hsize_max;
	if (leap_table_init(&c->streams, cfg->streams, hsize_max)) {
		free(c);
		return NULL;
	}
	return c;
}

void leap_core_free(struct leap_core *c)
{
	if (!c)
		return;
	leap_table_free(&c->streams);
	free(c);
}

const struct leap_core_config *leap_core_config(const struct leap_core *c)
{
	return &c->cfg;
}

/* ---- targets ------------------------------------------------------------------ */

static struct core_target *target_at(const struct leap_core *c, uint32_t id)
{
	if (id >= LEAP_CORE_TARGETS || !c->targets[id].in_use)
		return NULL;
	return (struct core_target *)&c->targets[id];
}

/* Whether the target's verdict is the core's to make: mode leap with
 * stand_down on. */
static bool cost_aware(const struct core_target *t)
{
	return t->pol.mode == LEAP_CORE_LEAP && t->pol.stand_down;
}

/* Whether held epochs judge the target's windows now: it prefetches. */
static bool outcome_judged(const struct core_target *t)
{
	return cost_aware(t) && t->pol.judge_outcome &&
	       t->cost.state == LEAP_COST_PREFETCH;
}

uint32_t leap_core_target_add(struct leap_core *c, const struct leap_core_policy *p)
{
	for (uint32_t id = 0; id < LEAP_CORE_TARGETS; id++) {
		struct core_target *t = &c->targets[id];

		if (t->in_use)
			continue;
		memset(t, 0, sizeof(*t));
		t->in_use = true;
		t->pol = *p;
		leap_cost_init(&t->cost, &c->cfg.cost);
		leap_outcome_init(&t->out, &c->cfg.outcome, LEAP_OUTCOME_FIRST);
		return id;
	}
	return LEAP_CORE_NO_TARGET;
}

bool leap_core_target_set(struct leap_core *c, uint32_t id,
			  const struct leap_core_policy *p)
{
	struct core_target *t = target_at(c, id);

	if (!t)
		return false;
	t->pol = *p;
	leap_outcome_init(&t->out, &c->cfg.outcome, LEAP_OUTCOME_FIRST);
	/* Now prefetching whatever it costs: no longer standing down. */
	if (!cost_aware(t) && t->cost.state == LEAP_COST_STANDBY) {
		leap_cost_init(&t->cost, &c->cfg.cost);
		return true;
	}
	return false;
}

void leap_core_target_remove(struct leap_core *c, uint32_t id)
{
	struct core_target *t = target_at(c, id);

	if (t)
		t->in_use = false;
}

const struct leap_core_policy *leap_core_target_policy(const struct leap_core *c,
						       uint32_t id)
{
	const struct core_target *t = target_at(c, id);

	return t ? &t->pol : NULL;
}

const struct leap_cost *leap_core_target_cost(const struct leap_core *c, uint32_t id)
{
	const struct core_target *t = target_at(c, id);

	return t ? &t->cost : NULL;
}

const struct leap_outcome *leap_core_target_outcome(const struct leap_core *c,
						    uint32_t id)
{
	const struct core_target *t = target_at(c, id);

	return t ? &t->out : NULL;
}

bool leap_core_target_standby(const struct leap_core *c, uint32_t id)
{
	const struct core_target *t = target_at(c, id);

	return t && t->cost.state == LEAP_COST_STANDBY;
}

bool leap_core_target_followed(const struct leap_core *c, uint32_t id)
{
	const struct core_target *t = target_at(c, id);

	return t && t->pol.mode != LEAP_CORE_OFF && t->cost.state != LEAP_COST_STANDBY;
}

void leap_core_set_env(struct leap_core *c, const struct leap_core_env *env)
{
	c->env = *env;
}

const struct leap_core_env *leap_core_env(const struct leap_core *c)
{
	return &c->env;
}

const struct leap_core_counters *leap_core_counters(const struct leap_core *c)
{
	return &c->cnt;
}

/* ---- one event ------------------------------------------------------------------ */

/*
 * A miss whose swap-in found only zero-filled entries (no I/O).  A miss of
 * a fill is a write fault (a read-modify-write stream), or one of these (a
 * fill that reads each page first: Perl's vec()).  A read miss that also
 * read the device is not one: SWPIN_ZERO comes for any page of the
 * kernel's readahead around the miss, and CPython's scan meets a page its
 * fill left zero every 256 pages ((i * 7 + 1) & 0xff), each of which had
 * made the whole stretch of scan behind it cold (kernel-ra.t:
 * 49,154-64,535 cold pages with the scan left to the kernel, twice the
 * fill's 32,273; a CI run failed on the backward scan with its windows).
 */
static bool zero_filled_only(const struct leap_event *ev)
{
	return (ev->flags & (LEAP_EV_SWAPIN_ZERO | LEAP_EV_SWAPIN_IO)) ==
	       LEAP_EV_SWAPIN_ZERO;
}

/* A write fault, or a swap-in of zero-filled entries alone. */
static bool fill_miss(const struct leap_event *ev)
{
	return (ev->flags & LEAP_EV_WRITE) || zero_filled_only(ev);
}

/*
 * What the event was.  The observer sends major faults, known swap faults
 * (fentry path) and faults on pages in the prefetched-page map:
 *  - major: a swap-in miss (on a page of ours: we were late, or it was
 *    reclaimed again before use); pushed only (--backend-into cache), the
 *    read of a page we pushed is the hit: leap-swapd's cache serves it;
 *  - minor on a page of ours: a prefetch hit (in the swap cache, mapped
 *    without I/O); pushed only, the kernel's readahead read it from
 *    leap-swapd's cache: it drives the window, but only faults whose own
 *    read we served count as hits, so coverage stays hits / major faults;
 *  - minor, a known swap fault: a swap-cache hit not of ours;
 *  - anything else: not a swap access.
 */
static enum leap_class classify(const struct leap_core *c, const struct leap_event *ev,
				bool *count_hit)
{
	bool ours = ev->flags & LEAP_EV_PREFETCHED;

	*count_hit = false;
	if (ev->flags & LEAP_EV_MAJOR) {
		if (ours && c->cfg.pushes_only) {
			*count_hit = true;
			return LEAP_CLASS_HIT;
		}
		if (ours)
			return LEAP_CLASS_LATE;
		return fill_miss(ev) ? LEAP_CLASS_FILL : LEAP_CLASS_READ;
	}
	if (ours) {
		*count_hit = !c->cfg.pushes_only;
		return LEAP_CLASS_HIT;
	}
	return ev->flags & LEAP_EV_SWAP ? LEAP_CLASS_SWAP : LEAP_CLASS_IGNORED;
}

/* The cost model's verdict changed: counted, and the change said.  A
 * probe judges the outcome afresh. */
static enum leap_verdict_change verdict_changed(struct leap_core *c,
						struct core_target *t)
{
	if (t->cost.state == LEAP_COST_STANDBY) {
		c->cnt.stand_downs++;
		return LEAP_VERDICT_STAND_DOWN;
	}
	c->cnt.probes++;
	leap_outcome_init(&t->out, &c->cfg.outcome,
			  t->no_gain_streak ? LEAP_OUTCOME_RECHECK : LEAP_OUTCOME_PROBE);
	return LEAP_VERDICT_PROBE;
}

/*
 * Time passes for a judged target (an event's, or a tick's): its epochs
 * advance; a no-gain verdict stands it down, the next probe waiting as
 * long as the cost model's would, doubling with each no-gain verdict in a
 * row (a probe costs a judgement's worth of epochs, ~6 s, with windows
 * that did not pay).
 */
static enum leap_verdict_change outcome_advance(struct leap_core *c,
						struct core_target *t, uint64_t now_ns)
{
	const struct leap_outcome *o = &t->out;
	uint64_t interval = c->cfg.cost.probe_first_ns, held, compared;
	char why[sizeof(t->cost.why)];
	bool no_gain;

	if (!outcome_judged(t))
		return LEAP_VERDICT_SAME;
	held = o->held_epochs;
	compared = o->comparisons;
	no_gain = leap_outcome_advance(&t->out, &c->cfg.outcome, now_ns);
	c->cnt.held_epochs += o->held_epochs - held;
	c->cnt.outcome_comparisons += o->comparisons - compared;
	if (!no_gain) {
		if (o->verdict == LEAP_OUTCOME_GAIN)
			t->no_gain_streak = 0;
		return LEAP_VERDICT_SAME;
	}
	for (uint32_t i = 0; i < t->no_gain_streak && interval < c->cfg.cost.probe_max_ns;
	     i++)
		interval *= 2;
	if (interval > c->cfg.cost.probe_max_ns)
		interval = c->cfg.cost.probe_max_ns;
	t->no_gain_streak++;
	snprintf(why, sizeof(why),
		 "no gain: with its windows held it consumed swapped pages at %u%% of "
		 "the rate with them (median of %u held epochs)",
		 o->median_pct, o->need);
	leap_cost_stand_down(&t->cost, now_ns, interval, why);
	c->cnt.outcome_stand_downs++;
	return verdict_changed(c, t);
}

/*
 * The event's sample for the cost model: a device page-in not of ours, or
 * a hit.  A miss is a device page-in.  On zram or pmem a zero-filled one
 * (no device read) counts too: every page-in there is CPU work, and the
 * hooks may come on after a fill's few device reads (the three that arm
 * them go unseen) to see only its zero-filled misses and hits of windows
 * over them, which alone never made a verdict (a strided scan on zram
 * prefetched 29,000-31,000 pages before it stood down in 3 of 11 runs of
 * tests/sys/cost.t).  Reports a verdict change; applying it (BPF flags,
 * the hooks) is the execute stage's.
 */
static enum leap_verdict_change cost_sample(struct leap_core *c, struct core_target *t,
					    const struct leap_event *ev, bool hit)
{
	bool device;

	/* A held epoch's page-ins are Linux's alone: not the windows' sample. */
	if (!cost_aware(t) || !ev->latency_ns ||
	    (outcome_judged(t) && leap_outcome_holding(&t->out)))
		return LEAP_VERDICT_SAME;
	device = (ev->flags & LEAP_EV_SWAPIN_IO) ||
		 (c->env.swap.sync_pct >= LEAP_COST_SYNC_PCT &&
		  (ev->flags & LEAP_EV_SWAPIN_ZERO));
	if ((ev->flags & LEAP_EV_MAJOR) && device && !(ev->flags & LEAP_EV_PREFETCHED))
		leap_cost_miss(&t->cost, ev->latency_ns, ev->flags & LEAP_EV_SLEPT,
			       !fill_miss(ev));
	else if (hit && !(ev->flags & LEAP_EV_MAJOR))
		leap_cost_hit(&t->cost, ev->latency_ns);
	else
		return LEAP_VERDICT_SAME;
	if (!leap_cost_update(&t->cost, &c->cfg.cost, ev->ts_ns, &c->env.swap))
		return LEAP_VERDICT_SAME;
	return verdict_changed(c, t);
}

/*
 * How the stream's step treats the kernel's readahead and fills, for
 * target t.  A served stream gets no window of ours (held) when it is a
 * write stream (a read-modify-write fill: every page read back, dirtied
 * and evicted again).  Measured (docs/bench-real.md, "Why leap lost on
 * real programs"): a page the program reaches while our process_madvise
 * still holds its swap slot (claimed by swapcache_prepare(), not yet in
 * the swap cache while its memcg charge reclaims, and with dirty pages to
 * evict memcg v1 reclaim waits for their write-back) costs the faulting
 * thread a jiffy (4 ms at HZ=250) of sleep in __read_swap_cache_async()
 * (mm/swap_state.c, the -EEXIST retry).  So does a stream whose misses
 * find zero-filled swap entries: the kernel fills those without I/O
 * (zeromap), so a window hides nothing and only moves the reclaim into
 * our process_madvise.  Perl's fill (vec() reads each page of a zeroed
 * string before writing it) is such a stream and looks like a read
 * stream otherwise: on 6.11+ the read fault maps the page writable, so
 * the write takes no fault.  A read stream's window goes out past the
 * kernel's instead (leap_stream_access_after_ra(); CPython's sequential
 * and backward scans 1.3-1.5x in their scan phase, docs/bench-real.md),
 * unless --kernel-readahead defer.  Pushed only: no slot of ours to race
 * for, the kernel's readahead reads what we pushed from leap-swapd's
 * cache: never held, but the window still goes past the kernel's reach on
 * the stream's real trend.  An agent that cannot make pages cold (the
 * kernel refuses MADV_COLD, or process_madvise altogether) leaves reclaim
 * alone.
 */
static struct leap_decide_cfg step_cfg(const struct leap_core *c,
				       const struct core_target *t)
{
	return (struct leap_decide_cfg){
		.ra_pages = c->env.ra_pages,
		.follow_kernel_ra = t->pol.params.flavor == LEAP_FLAVOR_OURS &&
				    t->pol.mode == LEAP_CORE_LEAP,
		.hold_all = c->cfg.hold_all,
		.hold_none = c->cfg.pushes_only,
		/* Not in backend mode, whose windows come from leap-swapd's
		 * cache in tens of us: late by that little, a lead only left
		 * its gap's pages to major faults (backend-agent.t: 472-3,973
		 * against 218-514, 2026-11-26). */
		.lead_on_late = !c->cfg.backend,
		.cold_behind = c->env.can_cold ? t->pol.cold_behind : 0,
		.cold_chunk = c->cfg.cold_chunk,
		.kra_trust = c->cfg.kra_trust,
	};
}

/*
 * Misses that can wait (miss_can_wait(): a held stream's, most) are only
 * recorded: the observer is asked not to wake us for the thread's misses
 * (they come with the next batch), and to wake us again at its first miss
 * we would act on.  Written when the thread's quiet time is half gone, not
 * per miss; and not for a thread whose quiet was lifted within the quiet
 * time: it has another stream (lane) we act on, which a quiet would make
 * wait for the next batch, and its held and acted-on misses in turns
 * would write the map at each.
 */
static void plan_quiet(struct leap_core *c, const struct leap_event *ev, bool can_wait,
		       struct leap_core_plan *plan)
{
	struct core_quiet *q = &c->quiet[ev->tid % LEAP_CORE_QUIET_SLOTS];
	bool mine = q->tid == ev->tid && q->until > ev->ts_ns;

	if (can_wait) {
		if (mine && q->until - ev->ts_ns > LEAP_CORE_QUIET_NS / 2)
			return;
		if (!mine && q->tid == ev->tid && ev->ts_ns >= q->lifted &&
		    ev->ts_ns - q->lifted < LEAP_CORE_QUIET_NS)
			return;
		c->cnt.quiet_sets += !mine;
		if (q->tid != ev->tid)
			q->lifted = 0;
		q->tid = ev->tid;
		q->until = ev->ts_ns + LEAP_CORE_QUIET_NS;
		plan->quiet = LEAP_QUIET_SET;
		plan->quiet_until = q->until;
	} else if (mine) {
		q->until = 0;
		q->lifted = ev->ts_ns;
		c->cnt.quiet_lifts++;
		plan->quiet = LEAP_QUIET_LIFT;
	} else {
		return;
	}
	plan->quiet_tid = ev->tid;
}

/*
 * Whether a miss's plan gains nothing from the agent waking at once: a
 * held stream (the kernel's readahead serves it), no window of ours (no
 * trend: around the miss is the kernel's), or one no larger than what
 * the kernel reads around the miss itself (its readahead reach, the
 * environment's ra_pages: none where it reads nothing).  SQLite's random
 * look-ups planned 1-page windows now and then, and each lifted the quiet:
 * the agent woke for every miss, on the program's CPU, and the program
 * ran ~2,500 more time slices in the 0.9 s phase (2026-12-02,
 * docs/bench-real.md).  A look-ahead's hit wakes the agent by its marker,
 * quiet or not (bpf/leap_observer.bpf.c), so a stride's windows go on.
 * In a shared region (sweep_step() found one) only a held stream's miss
 * waits: a sweep's front moves with every process's misses, and its
 * windows are renewed at them.
 */
static bool miss_can_wait(const struct leap_plan *step, bool in_region, uint32_t ra_pages)
{
	return step->hold ||
	       (!in_region &&
		(step->dec.around_left || (step->n <= ra_pages && !step->dec.lookahead)));
}

/* The port, for one process: what the stream's step asks. */
struct step_facts {
	const struct leap_core_facts *port;
	uint32_t tgid;
};

static bool step_mapped(void *ctx, uint64_t first, uint32_t n)
{
	const struct step_facts *f = ctx;

	return f->port && f->port->mapped &&
	       f->port->mapped(f->port->ctx, f->tgid, first, n);
}

static bool step_shmem(void *ctx, uint64_t page)
{
	const struct step_facts *f = ctx;

	return f->port && f->port->shmem && f->port->shmem(f->port->ctx, f->tgid, page);
}

/*
 * A read of a shared region (sweep.h): where several processes sweep it,
 * the region's window, in the faulting process's pages, replaces the
 * stream's (one front for all, past the kernel's reach: never held).
 * Whether it did.  Asked of flavour OURS, mode-leap-or-observe reads
 * only: a fill writes its own pages, and the paper has no regions.
 */
static bool sweep_step(struct leap_core *c, const struct core_target *t,
		       const struct leap_event *ev, const struct leap_fault *f,
		       const struct leap_core_facts *facts, struct leap_core_plan *plan,
		       bool *in_region)
{
	struct leap_sweep_params sp;
	struct leap_sweep_step st;
	struct leap_region_at at;
	struct leap_sweep *s;
	uint32_t n = 0;

	if (!c->cfg.sweeps || f->fill || t->pol.params.flavor != LEAP_FLAVOR_OURS ||
	    !facts || !facts->region)
		return false;
	if (!facts->region(facts->ctx, ev->tgid, f->page, &at) || !at.id ||
	    f->page < at.first || f->page >= at.end || at.index < f->page - at.first)
		return false;
	*in_region = true;
	leap_sweep_params_default(&sp);
	sp.ra_pages = c->env.ra_pages;
	sp.pw_max = t->pol.params.pw_max;
	if (sp.pw_first > sp.pw_max)
		sp.pw_first = sp.pw_max;
	if (t->pol.params.max_delta)
		sp.ahead = (uint32_t)t->pol.params.max_delta;
	s = leap_sweeps_get(&c->sweeps, at.id);
	leap_sweep_access(s, &sp, ev->tgid, at.index, ev->ts_ns, &st);
	if (!st.sweeping)
		return false;
	/* Index i of the object is page f->page + (i - at.index) here; the
	 * mapping may hold less of the object than the window. */
	for (uint32_t i = 0; i < st.n && n < LEAP_PW_LIMIT; i++) {
		uint64_t idx = st.first + i;
		uint64_t page;

		if (idx <= at.index)
			continue;
		page = f->page + (idx - at.index);
		if (page >= at.end || page < f->page)
			break;
		plan->pages[n++] = page;
	}
	c->cnt.sweep_replaced += plan->step.n != 0;
	plan->step.n = n;
	plan->step.hold = false;
	plan->step.ra_gap = 0;
	plan->step.dec.lookahead = false;
	plan->step.dec.periodic = false;
	if (n) {
		c->cnt.sweep_windows++;
		c->cnt.sweep_pages += n;
	}
	return true;
}

/*
 * A stream's window two pages a step in shared memory gets the pages
 * between.  A fault on a shmem page the kernel's readahead brought in
 * sends no event on either hook path (leap_observer.bpf.c: a minor shmem
 * fault is sent only on a page of ours), and the kernel sizes its swap
 * cluster by its own recent readahead hits (swapin_nr_pages(),
 * mm/swap_state.c): with our windows taking a scan's pages it falls to 2,
 * the aligned pair around a miss.  So a scan shows misses two pages apart,
 * the engine finds a stride of 2, and a window along it reads every other
 * page: one read request a page, the pages between read a few ms later by
 * the next window or the kernel's pair, one request each again.
 * PostgreSQL's parallel scan of its pool: 80% of the agent's read
 * requests were a single page, and for 58% of those both neighbouring
 * slots were read by the agent, one request each, within 50 ms (33%
 * before this rule and 11% with it in a later pair of runs;
 * docs/bench-real.md, 2026-12-02, night).  Only shared memory: measured
 * there, and in private memory a stride of 2 (every other page of an
 * array) is a real pattern whose pages between nobody wants.
 */
static void close_shared_gaps(struct leap_core *c, struct leap_core_plan *plan)
{
	uint32_t n = leap_window_close_gaps(plan->pages, plan->n, LEAP_PW_LIMIT);

	plan->gap_pages = n - plan->n;
	c->cnt.shared_gap_pages += plan->gap_pages;
	plan->n = n;
}

/*
 * The swap accesses the target made, as of this swap event: its progress,
 * which the outcome judge compares held and not.  The event is one.  On
 * the tracepoint path a swap-cache hit on a page not ours (one Linux's
 * readahead read) sends no event, so with windows on the target's
 * accesses would count its misses and our hits, and held its misses
 * alone: a ratio that flatters the windows wherever the kernel's
 * readahead serves a stream (Node.js's collector: docs/agent.md, "Judged
 * by the outcome").  There each event carries the target's count of those
 * hits (leap_event.swap_cache_hits), whose advance since its last event
 * is added, so that every swap access counts once, as on the fentry path,
 * where they are events (config outcome_swap_cache: the agent's
 * --swap-cache-hits, which loads the hook that counts them).  Without a
 * count (the fentry path, the option off, older recordings): one.
 */
static uint32_t consumed(const struct leap_core *c, struct core_target *t,
			 const struct leap_event *ev)
{
	int32_t advance;

	if (!c->cfg.outcome_swap_cache || !ev->swap_cache_hits)
		return 1;
	if (!t->cache_hits_known) {
		t->cache_hits_known = true;
		t->cache_hits_last = ev->swap_cache_hits;
		return 1;
	}
	/* Another CPU's event may carry an older count: nothing to add. */
	advance = (int32_t)(ev->swap_cache_hits - t->cache_hits_last);
	if (advance <= 0)
		return 1;
	t->cache_hits_last = ev->swap_cache_hits;
	return 1 + (uint32_t)advance;
}

/* Which gate, if any, stops the window the stream's step decided. */
static enum leap_gate gate_of(const struct leap_core *c, const struct core_target *t,
			      const struct leap_plan *step)
{
	if (t->pol.mode != LEAP_CORE_LEAP)
		return LEAP_GATE_MODE;
	/* Stood down, by this very event's sample too: nothing goes out. */
	if (t->cost.state == LEAP_COST_STANDBY)
		return LEAP_GATE_STANDBY;
	if (!c->env.can_prefetch)
		return LEAP_GATE_CHANNEL;
	if (step->hold)
		return LEAP_GATE_HELD;
	if (outcome_judged(t) && leap_outcome_holding(&t->out))
		return LEAP_GATE_EPOCH;
	return LEAP_GATE_NONE;
}

const struct leap_core_plan *leap_core_event(struct leap_core *c, uint32_t target,
					     const struct leap_event *ev,
					     const struct leap_core_facts *facts)
{
	struct leap_core_plan *plan = &c->plan;
	struct core_target *t = target_at(c, target);
	struct step_facts sf = {.port = facts, .tgid = ev->tgid};
	struct leap_decide_facts df = {
		.mapped = step_mapped, .shmem = step_shmem, .ctx = &sf};
	struct leap_stream_key_t key;
	struct leap_decide_cfg dcfg;
	struct leap_fault f;
	struct leap_stream *s;
	bool hit, swept, in_region = false;

	memset(plan, 0, offsetof(struct leap_core_plan, pages));
	plan->target = t ? target : LEAP_CORE_NO_TARGET;
	plan->marker = UINT64_MAX;
	c->cnt.events++;
	if (!t || t->pol.mode == LEAP_CORE_OFF)
		return plan;
	plan->cls = classify(c, ev, &plan->count_hit);
	if (plan->cls == LEAP_CLASS_IGNORED) {
		c->cnt.ignored++;
		return plan;
	}
	hit = plan->cls == LEAP_CLASS_HIT;
	c->cnt.hits += plan->count_hit;
	c->cnt.late += plan->cls == LEAP_CLASS_LATE;
	c->cnt.swap_faults++;
	/* A miss that read the device as well (its readahead met a zero-filled
	 * entry beside a written one) is not one: kernel-ra.t counts the
	 * device reads as the misses less these. */
	c->cnt.zero_misses += !hit && zero_filled_only(ev);
	plan->verdict = outcome_advance(c, t, ev->ts_ns);
	if (outcome_judged(t)) {
		leap_outcome_pages(&t->out, consumed(c, t, ev));
		if (hit && c->cfg.outcome_lead)
			leap_outcome_lead_hit(&t->out, &c->cfg.outcome, ev->ts_ns);
	}
	if (plan->verdict == LEAP_VERDICT_SAME)
		plan->verdict = cost_sample(c, t, ev, hit);

	key = leap_key_make(t->pol.params.key, ev->cgroup_id, ev->tgid, ev->tid);
	s = leap_lane_get(&c->streams, key, &t->pol.params, ev->addr >> LEAP_PAGE_SHIFT,
			  ev->ts_ns);
	dcfg = step_cfg(c, t);
	f = (struct leap_fault){.page = ev->addr >> LEAP_PAGE_SHIFT,
				.hit = hit,
				.late = plan->cls == LEAP_CLASS_LATE,
				.wasted = ev->flags & LEAP_EV_WASTED,
				.fill = fill_miss(ev)};
	leap_decide(s, &t->pol.params, &dcfg, &f, &df, plan->pages, LEAP_PW_LIMIT,
		    &plan->step);
	swept = plan->swept = sweep_step(c, t, ev, &f, facts, plan, &in_region);
	plan->stream = (struct leap_stream_ref){.id = leap_table_slot(&c->streams, s),
						.gen = s->gen};
	plan->progress = s->hist.last_page;
	if (plan->step.kra_checked)
		plan_quiet(c, ev, miss_can_wait(&plan->step, in_region, c->env.ra_pages),
			   plan);
	if (plan->step.cold_n) {
		plan->cold_first = plan->step.cold_first;
		plan->cold_n = plan->step.cold_n;
		c->cnt.cold_pages += plan->cold_n;
	}

	c->cnt.around_left += plan->step.dec.around_left;
	plan->decided = plan->step.n;
	if (plan->decided == 0)
		return plan;
	plan->gate = gate_of(c, t, &plan->step);
	c->cnt.gated[plan->gate]++;
	if (plan->gate == LEAP_GATE_HELD)
		c->cnt.held_kernel_ra += plan->decided;
	if (plan->gate != LEAP_GATE_NONE)
		return plan;
	plan->n = plan->decided;
	if (!swept && (in_region || plan->step.shmem))
		close_shared_gaps(c, plan);
	plan->marker = s->ra_armed && !swept ? s->ra_marker : UINT64_MAX;
	c->cnt.lookaheads += plan->step.dec.lookahead;
	c->cnt.nested_strides += plan->step.dec.periodic;
	c->cnt.beyond_kernel_ra += plan->step.ra_gap != 0;
	c->cnt.windows++;
	c->cnt.pages += plan->n;
	if (cost_aware(t) && !f.fill)
		leap_cost_planned(&t->cost, plan->n);
	if (outcome_judged(t))
		leap_outcome_window(&t->out, plan->n);
	return plan;
}

/* ---- what comes back, and time ------------------------------------------------- */

void leap_core_spent(struct leap_core *c, uint32_t target, uint32_t pages, uint64_t ns)
{
	struct core_target *t = target_at(c, target);

	if (t && pages)
		leap_cost_spent(&t->cost, pages, ns);
}

void leap_core_forget(struct leap_core *c, uint32_t tgid)
{
	c->cnt.exited++;
	leap_table_drop_tgid(&c->streams, tgid);
}

/*
 * A probe comes due; or a sample the swap devices just read decide (one
 * page-in on zram): the page-ins it holds may be the last the hooks saw
 * before they came off (a fill's first reads, its zero-filled rest
 * unseen), and the swap in use is known only once something swapped out.
 */
uint32_t leap_core_tick(struct leap_core *c, uint64_t now_ns, uint32_t *changed,
			enum leap_verdict_change *how)
{
	uint32_t n = 0;

	for (uint32_t id = 0; id < LEAP_CORE_TARGETS; id++) {
		struct core_target *t = &c->targets[id];
		enum leap_verdict_change v;

		if (!t->in_use)
			continue;
		v = outcome_advance(c, t, now_ns);
		if (v == LEAP_VERDICT_SAME &&
		    leap_cost_update(&t->cost, &c->cfg.cost, now_ns, &c->env.swap))
			v = verdict_changed(c, t);
		if (v == LEAP_VERDICT_SAME)
			continue;
		how[n] = v;
		changed[n++] = id;
	}
	if (c->cfg.idle_ns)
		leap_table_expire(&c->streams, now_ns, c->cfg.idle_ns);
	return n;
}

/* ---- names ---------------------------------------------------------------------- */

const char *leap_class_name(enum leap_class k)
{
	static const char *const names[LEAP_CLASS_COUNT] = {
		"none", "ignored", "hit", "late", "read", "fill", "swap"};

	return k < LEAP_CLASS_COUNT ? names[k] : "?";
}

const char *leap_gate_name(enum leap_gate g)
{
	static const char *const names[LEAP_GATE_COUNT] = {"none",    "mode", "standby",
							   "channel", "held", "epoch"};

	return g < LEAP_GATE_COUNT ? names[g] : "?";
}

const char *leap_verdict_change_name(enum leap_verdict_change v)
{
	return v == LEAP_VERDICT_STAND_DOWN ? "stand-down"
	       : v == LEAP_VERDICT_PROBE    ? "probe"
					    : "same";
}
