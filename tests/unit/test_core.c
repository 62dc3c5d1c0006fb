// SPDX-License-Identifier: MIT
/*
 * The decision core (user/lib/core.c): one event in, one plan out.  Events
 * are made here as the observer would send them; the facts port is a
 * stand-in that counts its questions.
 */
#include <string.h>

#include "core_test.h"

static struct {
	bool mapped, shmem;
	unsigned mapped_asked, shmem_asked;
} port_state;

static bool fake_mapped(void *ctx, uint32_t tgid, uint64_t first, uint32_t n)
{
	(void)ctx;
	(void)tgid;
	(void)first;
	(void)n;
	port_state.mapped_asked++;
	return port_state.mapped;
}

static bool fake_shmem(void *ctx, uint32_t tgid, uint64_t page)
{
	(void)ctx;
	(void)tgid;
	(void)page;
	port_state.shmem_asked++;
	return port_state.shmem;
}

static const struct leap_core_facts port = {.mapped = fake_mapped, .shmem = fake_shmem};

/* swap_cache: config outcome_swap_cache (--swap-cache-hits); lead: config
 * outcome_lead (the agent's default). */
static struct leap_core *core_new_judging(bool swap_cache, bool lead)
{
	struct leap_core_config cfg = {.streams = 8,
				       .cold_chunk = 16,
				       .kra_trust = 3,
				       .outcome_swap_cache = swap_cache,
				       .outcome_lead = lead};
	struct leap_core_env env = {.swap = {.sync_pct = 0},
				    .ra_pages = 8,
				    .can_prefetch = true,
				    .can_cold = true};

	memset(&port_state, 0, sizeof(port_state));
	return test_core_new(cfg, &env);
}

static struct leap_core *core_new(void)
{
	return core_new_judging(false, false);
}

static uint32_t add_target(struct leap_core *c, enum leap_core_mode mode, bool stand_down)
{
	struct leap_core_policy p = {.mode = mode, .stand_down = stand_down};
	uint32_t id;

	leap_params_default(&p.params);
	id = leap_core_target_add(c, &p);
	assert_true(id < LEAP_CORE_TARGETS);
	return id;
}

static struct leap_event event(uint64_t page, uint32_t flags, uint64_t ts)
{
	return (struct leap_event){.ts_ns = ts,
				   .cgroup_id = 7,
				   .addr = page << LEAP_PAGE_SHIFT,
				   .tgid = 100,
				   .tid = 100,
				   .flags = flags};
}

#define MISS (LEAP_EV_MAJOR | LEAP_EV_SWAPIN_IO)

static const struct leap_core_plan *feed(struct leap_core *c, uint32_t t, uint64_t page,
					 uint32_t flags, uint64_t ts)
{
	struct leap_event ev = event(page, flags, ts);

	return leap_core_event(c, t, &ev, &port);
}

/* A stride of 16 pages (past the kernel's reach): windows, never a question. */
static void test_stride_windows(void **state)
{
	struct leap_core *c = core_new();
	uint32_t t = add_target(c, LEAP_CORE_LEAP, true);
	const struct leap_core_plan *pl = NULL;
	uint32_t windows = 0;
	(void)state;

	for (int i = 0; i < 40; i++) {
		pl = feed(c, t, 1000 + 16 * (uint64_t)i, MISS, 1000 + (uint64_t)i);
		assert_int_equal(pl->cls, LEAP_CLASS_READ);
		windows += pl->n > 0;
		if (pl->n) {
			assert_int_equal(pl->gate, LEAP_GATE_NONE);
			assert_int_equal((pl->pages[0] - (1000 + 16 * (uint64_t)i)) % 16,
					 0);
		}
	}
	assert_true(windows > 30);
	assert_int_equal(port_state.mapped_asked, 0);
	assert_int_equal(port_state.shmem_asked, 0);
	assert_int_equal(leap_core_counters(c)->windows, windows);
	assert_int_equal(leap_core_counters(c)->swap_faults, 40);
	/* The stream is named for the workers, with its newest page. */
	assert_true(pl->stream.gen != 0);
	assert_int_equal(pl->progress, 1000 + 16 * 39);
	leap_core_free(c);
}

/* What each kind of event is, and what it counts. */
static void test_classify(void **state)
{
	struct leap_core *c = core_new();
	uint32_t t = add_target(c, LEAP_CORE_LEAP, true);
	const struct leap_core_counters *k = leap_core_counters(c);
	(void)state;

	assert_int_equal(feed(c, t, 10, MISS, 1)->cls, LEAP_CLASS_READ);
	assert_int_equal(feed(c, t, 11, MISS | LEAP_EV_WRITE, 2)->cls, LEAP_CLASS_FILL);
	assert_int_equal(feed(c, t, 12, LEAP_EV_MAJOR | LEAP_EV_SWAPIN_ZERO, 3)->cls,
			 LEAP_CLASS_FILL);
	assert_int_equal(feed(c, t, 13, LEAP_EV_PREFETCHED, 4)->cls, LEAP_CLASS_HIT);
	assert_true(feed(c, t, 14, LEAP_EV_PREFETCHED, 5)->count_hit);
	assert_int_equal(feed(c, t, 15, MISS | LEAP_EV_PREFETCHED, 6)->cls,
			 LEAP_CLASS_LATE);
	assert_int_equal(feed(c, t, 16, LEAP_EV_SWAP, 7)->cls, LEAP_CLASS_SWAP);
	assert_int_equal(feed(c, t, 17, 0, 8)->cls, LEAP_CLASS_IGNORED);
	assert_int_equal(feed(c, LEAP_CORE_NO_TARGET, 18, MISS, 9)->cls, LEAP_CLASS_NONE);
	assert_int_equal(k->events, 9);
	assert_int_equal(k->swap_faults, 7);
	assert_int_equal(k->ignored, 1);
	assert_int_equal(k->hits, 2);
	assert_int_equal(k->late, 1);
	assert_int_equal(k->zero_misses, 1);
	leap_core_free(c);
}

/* Gates: observe decides but never issues; nothing issues without a
 * channel. */
static void test_gates(void **state)
{
	struct leap_core *c = core_new();
	uint32_t obs = add_target(c, LEAP_CORE_OBSERVE, true);
	struct leap_core_env env = *leap_core_env(c);
	const struct leap_core_plan *pl;
	uint32_t decided = 0;
	(void)state;

	for (int i = 0; i < 20; i++) {
		pl = feed(c, obs, 5000 + 16 * (uint64_t)i, MISS, (uint64_t)i);
		assert_int_equal(pl->n, 0);
		if (pl->decided) {
			decided++;
			assert_int_equal(pl->gate, LEAP_GATE_MODE);
		}
	}
	assert_true(decided > 10);
	assert_int_equal(leap_core_counters(c)->gated[LEAP_GATE_MODE], decided);

	env.can_prefetch = false;
	leap_core_set_env(c, &env);
	obs = add_target(c, LEAP_CORE_LEAP, false);
	decided = 0;
	for (int i = 0; i < 20; i++) {
		pl = feed(c, obs, 9000 + 16 * (uint64_t)i, MISS, (uint64_t)i);
		assert_int_equal(pl->n, 0);
		decided += pl->decided > 0;
	}
	assert_true(decided > 10);
	assert_int_equal(leap_core_counters(c)->gated[LEAP_GATE_CHANNEL], decided);
	assert_int_equal(leap_core_counters(c)->windows, 0);
	leap_core_free(c);
}

/*
 * The event whose sample makes its target stand down issues nothing: the
 * verdict comes in the same plan, and the window the engine decided is
 * stopped by it.  (Before the core, the agent applied the verdict inside
 * the cost sample and then issued that event's window all the same.)
 * On zram one timed page-in decides; the stride's earlier misses carry
 * no latency, so they build the trend without a sample.
 */
static void test_no_window_after_stand_down(void **state)
{
	struct leap_core *c = core_new();
	uint32_t t = add_target(c, LEAP_CORE_LEAP, true);
	struct leap_core_env env = *leap_core_env(c);
	const struct leap_core_plan *pl;
	struct leap_event ev;
	uint64_t page = 20000;
	(void)state;

	env.swap.sync_pct = 100;
	env.swap.top_sync = true;
	leap_core_set_env(c, &env);
	for (int i = 0; i < 10; i++, page += 16)
		assert_int_equal(feed(c, t, page, MISS, (uint64_t)i)->verdict,
				 LEAP_VERDICT_SAME);
	assert_true(leap_core_counters(c)->windows > 0);
	ev = event(page, MISS, 100);
	ev.latency_ns = 5000;
	pl = leap_core_event(c, t, &ev, &port);
	assert_int_equal(pl->verdict, LEAP_VERDICT_STAND_DOWN);
	assert_true(pl->decided > 0);
	assert_int_equal(pl->gate, LEAP_GATE_STANDBY);
	assert_int_equal(pl->n, 0);
	assert_true(leap_core_target_standby(c, t));
	assert_false(leap_core_target_followed(c, t));
	assert_int_equal(leap_core_counters(c)->stand_downs, 1);
	assert_int_equal(leap_core_counters(c)->gated[LEAP_GATE_STANDBY], 1);
	/* Events still in the ring after it: decided, never issued. */
	pl = feed(c, t, page + 16, MISS, 101);
	assert_int_equal(pl->n, 0);
	leap_core_free(c);
}

/*
 * outcome = judge: a strided stream whose windows do not change its pace
 * (a miss every 50 us, held or not).  Every second or so a held epoch
 * gates its windows (LEAP_GATE_EPOCH, the cost model not fed); after
 * `judged` comparisons at 100% the target stands down, saying why; the
 * probe comes after probe_first_ns, and a second no-gain verdict in a row
 * waits twice as long.  The same stream without the judge never stands
 * down.
 */
static uint64_t feed_paced(struct leap_core *c, uint32_t t, uint64_t *page, uint64_t from,
			   uint64_t until, enum leap_verdict_change *first)
{
	uint64_t ts;

	*first = LEAP_VERDICT_SAME;
	for (ts = from; ts < until; ts += 50000, *page += 16) {
		struct leap_event ev = event(*page, MISS | LEAP_EV_SLEPT, ts);
		const struct leap_core_plan *pl;

		ev.latency_ns = 100000;
		pl = leap_core_event(c, t, &ev, &port);
		if (pl->n)
			leap_core_spent(c, t, pl->n, pl->n * 5000ULL);
		if (pl->verdict != LEAP_VERDICT_SAME) {
			*first = pl->verdict;
			return ts;
		}
	}
	return ts;
}

static void test_outcome_judged(void **state)
{
	struct leap_core *c = core_new();
	uint32_t t = add_target(c, LEAP_CORE_LEAP, true);
	struct leap_core_policy p = *leap_core_target_policy(c, t);
	const struct leap_core_counters *k = leap_core_counters(c);
	const struct leap_outcome_params *op = &leap_core_config(c)->outcome;
	enum leap_verdict_change how[LEAP_CORE_TARGETS], v;
	uint32_t changed[LEAP_CORE_TARGETS];
	uint64_t page = 1000, down, probe;
	(void)state;

	/* Without the judge: prefetching for 20 s. */
	feed_paced(c, t, &page, 1, 20ULL * 1000000000, &v);
	assert_int_equal(v, LEAP_VERDICT_SAME);
	assert_int_equal(k->held_epochs, 0);
	assert_int_equal(k->gated[LEAP_GATE_EPOCH], 0);

	p.judge_outcome = true;
	leap_core_target_set(c, t, &p);
	down = feed_paced(c, t, &page, 20ULL * 1000000000, 40ULL * 1000000000, &v);
	assert_int_equal(v, LEAP_VERDICT_STAND_DOWN);
	assert_int_equal(k->outcome_comparisons, op->judged);
	assert_true(k->held_epochs >= op->judged);
	assert_true(k->gated[LEAP_GATE_EPOCH] > 0);
	assert_int_equal(k->outcome_stand_downs, 1);
	assert_int_equal(k->stand_downs, 1);
	assert_int_equal(leap_core_target_outcome(c, t)->median_pct, 100);
	assert_non_null(strstr(leap_core_target_cost(c, t)->why, "no gain"));
	/* the first on epoch, then judged cycles of on epoch + held epoch */
	assert_true(down - 20ULL * 1000000000 <=
		    op->first_on_ns +
			    op->judged * (op->on_ns + op->held_ns + 2 * op->settle_ns));

	/* The probe after probe_first_ns; the judge starts afresh. */
	assert_int_equal(
		leap_core_tick(c, down + LEAP_COST_DEFAULT_PROBE_NS - 1, changed, how),
		0);
	probe = down + LEAP_COST_DEFAULT_PROBE_NS;
	assert_int_equal(leap_core_tick(c, probe, changed, how), 1);
	assert_int_equal(how[0], LEAP_VERDICT_PROBE);
	assert_int_equal(leap_core_target_outcome(c, t)->comparisons, 0);
	down = feed_paced(c, t, &page, probe, probe + 20ULL * 1000000000, &v);
	assert_int_equal(v, LEAP_VERDICT_STAND_DOWN);
	assert_int_equal(k->outcome_stand_downs, 2);
	/* judged again in three comparisons */
	assert_int_equal(leap_core_target_outcome(c, t)->comparisons,
			 LEAP_OUTCOME_GAIN_RUN);
	/* Again no gain: the next probe waits twice as long. */
	assert_int_equal(
		leap_core_tick(c, down + LEAP_COST_DEFAULT_PROBE_NS, changed, how), 0);
	assert_int_equal(
		leap_core_tick(c, down + 2 * LEAP_COST_DEFAULT_PROBE_NS, changed, how),
		1);
	leap_core_free(c);
}

/*
 * The tracepoint path's progress: while held, Linux's readahead serves 1 in
 * 2 of the stream's accesses, swap-cache hits that send no event there
 * (their count rides on the next event: leap_event.swap_cache_hits); with
 * windows on, every access is an event (a miss or our hit).  The
 * program's pace is the same either way: an access every 200 us.  Counted
 * by events alone (no count, or config outcome_swap_cache off), a held epoch
 * looks 2x slower and the windows "gain"; with the counts it runs as fast
 * held, and the target stands down for no gain.
 */
static enum leap_verdict_change feed_ra_served(struct leap_core *c, uint32_t t,
					       bool counts, uint64_t until)
{
	uint64_t page = 5000, ts;
	uint32_t ra_hits = 1, slot = 0;

	for (ts = 1; ts < until; ts += 200000, page += 16, slot++) {
		const struct leap_outcome *o = leap_core_target_outcome(c, t);
		struct leap_event ev;
		const struct leap_core_plan *pl;

		if (leap_outcome_holding(o) && slot % 2) {
			ra_hits++; /* Linux's readahead hit: counted, no event */
			continue;
		}
		ev = event(page, MISS | LEAP_EV_SLEPT, ts);
		ev.latency_ns = 100000;
		ev.swap_cache_hits = counts ? ra_hits : 0;
		pl = leap_core_event(c, t, &ev, &port);
		if (pl->n)
			leap_core_spent(c, t, pl->n, pl->n * 5000ULL);
		if (pl->verdict != LEAP_VERDICT_SAME)
			return pl->verdict;
		if (leap_core_target_outcome(c, t)->verdict == LEAP_OUTCOME_GAIN)
			break;
	}
	return LEAP_VERDICT_SAME;
}

static void test_outcome_counts_swap_cache_hits(void **state)
{
	/* the first on epoch, then five comparisons of ~1.06 s: ~9.4 s */
	const uint64_t until = 11ULL * 1000000000;
	struct leap_core *c = core_new_judging(true, false);
	uint32_t t = add_target(c, LEAP_CORE_LEAP, true);
	struct leap_core_policy p = *leap_core_target_policy(c, t);
	const struct leap_outcome_params *op = &leap_core_config(c)->outcome;
	const struct leap_outcome *o;
	(void)state;

	p.judge_outcome = true;
	leap_core_target_set(c, t, &p);
	/* outcome_swap_cache, with the counts: as fast held, no gain. */
	assert_int_equal(feed_ra_served(c, t, true, until), LEAP_VERDICT_STAND_DOWN);
	o = leap_core_target_outcome(c, t);
	assert_true(o->median_pct >= op->no_gain_pct);
	assert_true(o->median_pct <= 105);
	assert_int_equal(leap_core_counters(c)->outcome_stand_downs, 1);
	leap_core_free(c);

	/* Without counts (the fentry path's events, older recordings): by
	 * events, a "gain" that is not one. */
	c = core_new_judging(true, false);
	t = add_target(c, LEAP_CORE_LEAP, true);
	leap_core_target_set(c, t, &p);
	assert_int_equal(feed_ra_served(c, t, false, until), LEAP_VERDICT_SAME);
	o = leap_core_target_outcome(c, t);
	assert_int_equal(o->verdict, LEAP_OUTCOME_GAIN);
	assert_true(o->median_pct <= 60);
	leap_core_free(c);

	/* The same with the counts there and the option off (the default;
	 * replay --events-only). */
	c = core_new();
	t = add_target(c, LEAP_CORE_LEAP, true);
	leap_core_target_set(c, t, &p);
	assert_int_equal(feed_ra_served(c, t, true, until), LEAP_VERDICT_SAME);
	assert_int_equal(leap_core_target_outcome(c, t)->verdict, LEAP_OUTCOME_GAIN);
	leap_core_free(c);
}

/*
 * Windows that pay, and run ahead: with them a swap access every 50 us,
 * held every 250 us (a 5x gain, as a strided scan's).  But the windows
 * issued before a hold left pages ahead of the program, which it uses for
 * the first `lead` ns of the hold at their pace (hits on our pages: an
 * SQLite reverse scan's, tests/sys/outcome.t, 255% in one held epoch).
 * With config outcome_lead the held epoch's settle waits them out and the
 * judge sees the gain; without it the held epoch measures the lead and
 * reads "no gain".
 */
static enum leap_verdict_change feed_with_lead(struct leap_core *c, uint32_t t,
					       uint64_t lead, uint64_t until)
{
	uint64_t page = 9000, ts = 1, hold_start = 0;

	while (ts < until) {
		const struct leap_outcome *o = leap_core_target_outcome(c, t);
		bool holding = leap_outcome_holding(o), lead_hit;
		const struct leap_core_plan *pl;
		struct leap_event ev;

		if (holding && !hold_start)
			hold_start = ts;
		else if (!holding)
			hold_start = 0;
		lead_hit = holding && ts - hold_start < lead;
		ev = event(page, lead_hit ? LEAP_EV_PREFETCHED : MISS | LEAP_EV_SLEPT,
			   ts);
		ev.latency_ns = lead_hit ? 0 : 100000;
		pl = leap_core_event(c, t, &ev, &port);
		if (pl->n)
			leap_core_spent(c, t, pl->n, pl->n * 5000ULL);
		if (pl->verdict != LEAP_VERDICT_SAME)
			return pl->verdict;
		if (o->verdict == LEAP_OUTCOME_GAIN)
			break;
		ts += holding && !lead_hit ? 250000 : 50000;
		page += 16;
	}
	return LEAP_VERDICT_SAME;
}

static void test_outcome_waits_out_the_lead(void **state)
{
	const uint64_t until = 15ULL * 1000000000, lead = 120ULL * 1000000;
	struct leap_core *c = core_new_judging(false, true);
	uint32_t t = add_target(c, LEAP_CORE_LEAP, true);
	struct leap_core_policy p = *leap_core_target_policy(c, t);
	const struct leap_outcome *o;
	(void)state;

	p.judge_outcome = true;
	leap_core_target_set(c, t, &p);
	assert_int_equal(feed_with_lead(c, t, lead, until), LEAP_VERDICT_SAME);
	o = leap_core_target_outcome(c, t);
	assert_int_equal(o->verdict, LEAP_OUTCOME_GAIN);
	assert_true(o->median_pct <= 30);
	leap_core_free(c);

	/* No lead, the same gain. */
	c = core_new_judging(false, true);
	t = add_target(c, LEAP_CORE_LEAP, true);
	leap_core_target_set(c, t, &p);
	assert_int_equal(feed_with_lead(c, t, 0, until), LEAP_VERDICT_SAME);
	assert_int_equal(leap_core_target_outcome(c, t)->verdict, LEAP_OUTCOME_GAIN);
	leap_core_free(c);

	/* Without the lead's settle: the held epochs measure the lead. */
	c = core_new_judging(false, false);
	t = add_target(c, LEAP_CORE_LEAP, true);
	leap_core_target_set(c, t, &p);
	assert_int_equal(feed_with_lead(c, t, lead, until), LEAP_VERDICT_STAND_DOWN);
	o = leap_core_target_outcome(c, t);
	assert_true(o->median_pct >= LEAP_OUTCOME_DEFAULT_NO_GAIN_PCT);
	leap_core_free(c);
}

/* A probe comes due at the tick; a policy that may not stand down ends a
 * stand-down at once. */
static void test_tick_probe_and_policy(void **state)
{
	struct leap_core *c = core_new();
	uint32_t t = add_target(c, LEAP_CORE_LEAP, true);
	struct leap_core_env env = *leap_core_env(c);
	enum leap_verdict_change how[LEAP_CORE_TARGETS];
	uint32_t changed[LEAP_CORE_TARGETS];
	struct leap_core_policy p = *leap_core_target_policy(c, t);
	struct leap_event ev = event(1, MISS, 1000);
	(void)state;

	env.swap.sync_pct = 100;
	leap_core_set_env(c, &env);
	ev.latency_ns = 3000;
	assert_int_equal(leap_core_event(c, t, &ev, &port)->verdict,
			 LEAP_VERDICT_STAND_DOWN);
	assert_int_equal(leap_core_tick(c, 2000, changed, how), 0);
	assert_int_equal(
		leap_core_tick(c, 1000 + LEAP_COST_DEFAULT_PROBE_NS, changed, how), 1);
	assert_int_equal(changed[0], t);
	assert_int_equal(how[0], LEAP_VERDICT_PROBE);
	assert_false(leap_core_target_standby(c, t));
	assert_int_equal(leap_core_counters(c)->probes, 1);

	ev.ts_ns = 2000 + LEAP_COST_DEFAULT_PROBE_NS;
	assert_int_equal(leap_core_event(c, t, &ev, &port)->verdict,
			 LEAP_VERDICT_STAND_DOWN);
	p.stand_down = false;
	assert_true(leap_core_target_set(c, t, &p));
	assert_false(leap_core_target_standby(c, t));
	leap_core_free(c);
}

/*
 * A fill the kernel's readahead serves: held (its pages counted, none
 * issued), its thread quieted once per half a quiet time, the pages
 * behind it made cold; a read stream there goes out past the kernel's,
 * unless it lies in shared memory, which is asked only then.
 */
static void test_served_streams(void **state)
{
	struct leap_core *c = core_new();
	uint32_t t = add_target(c, LEAP_CORE_LEAP, true);
	const struct leap_core_counters *k = leap_core_counters(c);
	const struct leap_core_plan *pl;
	uint64_t page = 50000, ts = 1, cold = 0;
	unsigned sets = 0;
	(void)state;

	port_state.mapped = true;
	{
		struct leap_core_policy p = *leap_core_target_policy(c, t);

		p.cold_behind = 64;
		leap_core_target_set(c, t, &p);
	}
	for (int i = 0; i < 60; i++, page += 8, ts += 1000) {
		pl = feed(c, t, page, MISS | LEAP_EV_WRITE, ts);
		assert_int_equal(pl->n, 0);
		sets += pl->quiet == LEAP_QUIET_SET;
		cold += pl->cold_n;
	}
	assert_int_equal(sets, 1); /* 60 us of misses: one quiet time */
	assert_true(k->held_kernel_ra > 0);
	assert_true(cold > 300);
	assert_int_equal(k->cold_pages, cold);
	assert_int_equal(port_state.shmem_asked, 0); /* a fill: never asked */

	/* A read stream: past the kernel's; the thread's quiet lifted. */
	for (int i = 0; i < 10; i++, page += 8, ts += 1000)
		pl = feed(c, t, page, MISS, ts);
	assert_true(k->quiet_lifts == 1);
	assert_true(k->beyond_kernel_ra > 0);
	assert_true(port_state.shmem_asked > 0);
	assert_true(pl->n > 0 && pl->pages[0] >= page - 8 + 7);

	/* The same in shared memory: held. */
	port_state.shmem = true;
	for (int i = 0; i < 10; i++, page += 8, ts += 1000) {
		pl = feed(c, t, page, MISS, ts);
		assert_true(pl->step.hold);
		assert_true(pl->step.shmem);
		assert_int_equal(pl->n, 0);
	}
	leap_core_free(c);
}

/*
 * One thread, two lanes the kernel's readahead serves in turns: a fill
 * (held: the thread goes quiet) and a read stream (acted on: the quiet is
 * lifted).  Once lifted, the fill does not quiet the thread again within
 * the quiet time (the read lane's misses would wait for a batch, and each
 * turn would write the map); after it, it does.
 */
static void test_quiet_with_two_lanes(void **state)
{
	struct leap_core *c = core_new();
	uint32_t t = add_target(c, LEAP_CORE_LEAP, false);
	const struct leap_core_counters *k = leap_core_counters(c);
	const struct leap_core_plan *pl;
	uint64_t fill = 50000, read = 900000, ts = 1;
	(void)state;

	port_state.mapped = true;
	for (int i = 0; i < 40; i++, fill += 8, read += 8) {
		/* each lane's first miss has no gap to be served across */
		pl = feed(c, t, fill, MISS | LEAP_EV_WRITE, ts += 1000);
		assert_true(pl->step.hold == (i > 0));
		pl = feed(c, t, read, MISS, ts += 1000);
		assert_false(pl->step.hold);
	}
	assert_int_equal(k->quiet_sets, 1);
	assert_int_equal(k->quiet_lifts, 1);
	/* The read lane stops; past the quiet time the fill quiets it again. */
	ts += LEAP_CORE_QUIET_NS;
	pl = feed(c, t, fill, MISS | LEAP_EV_WRITE, ts);
	assert_int_equal(pl->quiet, LEAP_QUIET_SET);
	assert_int_equal(k->quiet_sets, 2);
	leap_core_free(c);
}

/*
 * Misses with nothing of ours to do (no trend: around them is the
 * kernel's; or a window no larger than the kernel's cluster) can wait for
 * the next batch of events: the thread goes quiet, once per half a quiet
 * time.  A stride's first window larger than that lifts the quiet, so a
 * strided scan that follows is seen at once again.
 */
static void test_quiet_while_nothing_to_do(void **state)
{
	struct leap_core *c = core_new();
	uint32_t t = add_target(c, LEAP_CORE_LEAP, false);
	const struct leap_core_counters *k = leap_core_counters(c);
	const uint32_t reach = leap_core_env(c)->ra_pages; /* 8 pages */
	const struct leap_core_plan *pl;
	uint64_t page = 0, ts = 1, x = 12345;
	unsigned sets = 0, lifted_at = 0;
	static uint64_t win[4096];
	uint32_t nwin = 0;
	(void)state;

	for (int i = 0; i < 200; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		page = 100000 + (x >> 33) % 50000; /* random look-ups */
		pl = feed(c, t, page, MISS, ts += 100000);
		assert_true(pl->n <= reach);
		sets += pl->quiet == LEAP_QUIET_SET;
	}
	/* 20 ms of misses: set once, renewed after half a quiet time */
	assert_int_equal(k->quiet_sets, 1);
	assert_true(sets >= 1 && sets <= 2);
	assert_int_equal(k->quiet_lifts, 0);

	/*
	 * A stride of 16 pages: its windows' pages are hit (their look-ahead
	 * markers wake the agent whether the thread is quiet or not: the
	 * observer's rule), the rest missed, so its windows grow to 16 pages
	 * without a miss.  Then its pages come late: the first such miss,
	 * its window past the kernel's cluster, lifts the quiet.
	 */
	page = 500000;
	for (unsigned i = 1; i <= 200 && !lifted_at; i++, page += 16) {
		bool ours = false;

		for (uint32_t j = 0; j < nwin; j++)
			ours = ours || win[j] == page;
		/* from the 30th page on, our pages come late (read, not yet in) */
		pl = feed(c, t, page,
			  !ours	   ? MISS
			  : i < 30 ? LEAP_EV_PREFETCHED
				   : MISS | LEAP_EV_PREFETCHED,
			  ts += 100000);
		for (uint32_t j = 0; j < pl->n && nwin < 4096; j++)
			win[nwin++] = pl->pages[j];
		if (pl->quiet == LEAP_QUIET_LIFT) {
			lifted_at = i;
			assert_true(pl->n > reach);
		}
	}
	assert_int_equal(k->quiet_lifts, 1);
	assert_true(lifted_at >= 30 && lifted_at <= 40);
	leap_core_free(c);
}

/* A process gone: its streams go, and a new stream in the same slot is
 * another (its generation). */
static void test_forget(void **state)
{
	struct leap_core *c = core_new();
	uint32_t t = add_target(c, LEAP_CORE_LEAP, false);
	struct leap_stream_ref a, b;
	(void)state;

	a = feed(c, t, 100, MISS, 1)->stream;
	leap_core_forget(c, 100);
	b = feed(c, t, 100, MISS, 2)->stream;
	assert_int_equal(a.id, b.id);
	assert_true(a.gen != b.gen);
	assert_int_equal(leap_core_counters(c)->exited, 1);
	leap_core_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stride_windows),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_gates),
		cmocka_unit_test(test_no_window_after_stand_down),
		cmocka_unit_test(test_tick_probe_and_policy),
		cmocka_unit_test(test_outcome_judged),
		cmocka_unit_test(test_outcome_counts_swap_cache_hits),
		cmocka_unit_test(test_outcome_waits_out_the_lead),
		cmocka_unit_test(test_served_streams),
		cmocka_unit_test(test_quiet_with_two_lanes),
		cmocka_unit_test(test_quiet_while_nothing_to_do),
		cmocka_unit_test(test_forget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
