// SPDX-License-Identifier: MIT
/*
 * leap_outcome: held epochs against the prefetching ones around them, on
 * epoch series made here (a program consuming its pages at one rate with
 * windows and another without, with or without noise, gaps, no windows)
 * and deterministic (a fixed-seed generator).
 */
#include <string.h>

#include "engine_test.h"
#include "leap/outcome.h"

#define MS (1000ULL * 1000)
#define S  (1000ULL * MS)

struct series {
	struct leap_outcome o;
	struct leap_outcome_params p;
	uint64_t now;
	uint64_t on_time, held_time; /* ns spent in each */
	uint64_t no_gain_at;	     /* ns; 0: never */
	uint32_t seed;
	uint32_t noise_pct; /* each segment's rate off by up to this, +-  */
	bool windows;	    /* windows issued while on */
	enum leap_outcome_seg seg;
	uint32_t factor_pct; /* this segment's noise */
	uint32_t batch;	     /* pages a step (0: 1); long series take 8 */
	/* for this long from each hold, hits on our pages at the on rate
	 * (what windows issued before the hold left ahead of the program) */
	uint64_t lead_ns, hold_start;
};

static uint32_t next_rand(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 8) & 0xffffff;
}

static void series_init(struct series *s, uint32_t noise_pct)
{
	memset(s, 0, sizeof(*s));
	leap_outcome_params_default(&s->p);
	s->p.first_on_ns = s->p.on_ns; /* test_first_epoch has its own */
	leap_outcome_init(&s->o, &s->p, LEAP_OUTCOME_FIRST);
	s->now = 1 * S;
	s->seed = 42;
	s->noise_pct = noise_pct;
	s->windows = true;
	s->factor_pct = 100;
}

/*
 * The program consumes a page every 1/rate s (on_rate with windows,
 * held_rate while they are held) for secs; stops at a no-gain verdict.
 */
static void run(struct series *s, uint64_t on_rate, uint64_t held_rate, double secs)
{
	uint64_t until = s->now + (uint64_t)(secs * S);

	while (s->now < until) {
		bool held = leap_outcome_holding(&s->o), lead;
		uint64_t rate, dt;

		if (!held)
			s->hold_start = 0;
		else if (!s->hold_start)
			s->hold_start = s->now;
		lead = held && s->now - s->hold_start < s->lead_ns;
		rate = held && !lead ? held_rate : on_rate;

		if (s->o.seg != s->seg) { /* a new segment: new noise */
			s->seg = s->o.seg;
			s->factor_pct = 100;
			if (s->noise_pct)
				s->factor_pct +=
					next_rand(&s->seed) % (2 * s->noise_pct + 1) -
					s->noise_pct;
		}
		uint32_t n = s->batch ? s->batch : 1;

		dt = S * 100 * n / (rate * s->factor_pct);
		s->now += dt;
		*(held ? &s->held_time : &s->on_time) += dt;
		if (leap_outcome_advance(&s->o, &s->p, s->now)) {
			s->no_gain_at = s->now;
			return;
		}
		leap_outcome_pages(&s->o, n);
		for (uint32_t i = 0; lead && i < n; i++)
			leap_outcome_lead_hit(&s->o, &s->p, s->now);
		if (s->windows && !leap_outcome_holding(&s->o))
			leap_outcome_window(&s->o, n);
	}
}

/* Windows make it 3x as fast: a gain after three comparisons, the on
 * epochs double, the held time stays small, never "no gain". */
static void test_gain(void **state)
{
	struct series s;
	(void)state;

	series_init(&s, 0);
	run(&s, 30000, 10000, 3.7);
	assert_int_equal(s.o.comparisons, 3);
	assert_int_equal(s.o.verdict, LEAP_OUTCOME_GAIN);
	assert_int_equal(s.o.ratio_pct[0], 33);
	assert_int_equal(s.o.on_ns, 2 * s.p.on_ns);
	run(&s, 30000, 10000, 60);
	assert_int_equal(s.no_gain_at, 0);
	assert_int_equal(s.o.on_ns, s.p.on_max_ns);
	assert_int_equal(s.o.verdict, LEAP_OUTCOME_GAIN);
	/* 60 ms in each held epoch (settle included): under 1% of a minute. */
	assert_true(s.held_time * 100 < (s.held_time + s.on_time));
}

/* Windows that do not change the rate: no gain, after `judged`. */
static void test_no_gain(void **state)
{
	struct series s;
	(void)state;

	series_init(&s, 0);
	run(&s, 20000, 20000, 30);
	assert_int_not_equal(s.no_gain_at, 0);
	assert_int_equal(s.o.comparisons, s.p.judged);
	assert_int_equal(s.o.median_pct, 100);
	assert_int_equal(s.o.verdict, LEAP_OUTCOME_NO_GAIN);
	/* judged cycles of an on epoch and a held one */
	assert_true(s.no_gain_at - 1 * S <
		    s.p.judged * (s.p.on_ns + 80 * MS) + s.p.on_ns);
}

/* Windows that slow the program (held runs faster): no gain. */
static void test_loss(void **state)
{
	struct series s;
	(void)state;

	series_init(&s, 0);
	run(&s, 15000, 20000, 30);
	assert_int_not_equal(s.no_gain_at, 0);
	assert_int_equal(s.o.median_pct, 133);
}

/* 1.3x (ratio 76%) is a gain; 1.05x (95%) lies between gain_pct and
 * no_gain_pct: nothing decided, the program keeps its windows and the
 * epochs stay short. */
static void test_small_gain_kept(void **state)
{
	struct series s;
	(void)state;

	series_init(&s, 0);
	run(&s, 13000, 10000, 60);
	assert_int_equal(s.no_gain_at, 0);
	assert_int_equal(s.o.median_pct, 76);
	assert_int_equal(s.o.verdict, LEAP_OUTCOME_GAIN);
	series_init(&s, 0);
	run(&s, 10500, 10000, 60); /* 1.05x: ratio 95% */
	assert_int_equal(s.no_gain_at, 0);
	assert_int_equal(s.o.verdict, LEAP_OUTCOME_UNKNOWN);
	assert_int_equal(s.o.on_ns, s.p.on_ns);
}

/*
 * Noise: each segment's rate off by up to +-15% (more than this machine's
 * spread of a scan's rate from one 100 ms to the next).  A 1.3x gain is
 * never judged "no gain" in ten minutes of epochs; no gain is found within
 * a minute; each of 20 seeds.  At 2,000-2,600 pages a second (the held
 * epoch's 40 ms measure 80 pages, over min_pages) to keep the sanitized
 * run of this file under its 2 s limit.
 */
static void test_noise(void **state)
{
	(void)state;

	/* Eight pages a step (~3 ms at these rates, against held epochs of
	 * 50 ms): a page a step took 2.0-2.7 s under the sanitizers, over the
	 * unit tests' 2 s limit. */
	for (uint32_t seed = 1; seed <= 20; seed++) {
		struct series s;

		series_init(&s, 15);
		s.seed = seed;
		s.batch = 8;
		run(&s, 2600, 2000, 600);
		assert_int_equal(s.no_gain_at, 0);

		series_init(&s, 15);
		s.seed = seed;
		s.batch = 8;
		run(&s, 2000, 2000, 60);
		assert_int_not_equal(s.no_gain_at, 0);
	}
}

/* No windows in an on epoch: nothing to hold, nothing compared. */
static void test_no_windows_no_hold(void **state)
{
	struct series s;
	(void)state;

	series_init(&s, 0);
	s.windows = false;
	run(&s, 20000, 20000, 10);
	assert_int_equal(s.o.held_epochs, 0);
	assert_int_equal(s.o.comparisons, 0);
	assert_int_equal(s.held_time, 0);
}

/* Too few pages (the program barely swaps): at 300 a second the tail
 * before a held epoch has too few to measure, so nothing is held; at 1,000
 * a second the held epoch (50 pages) has too few: dropped. */
static void test_too_few_pages(void **state)
{
	struct series s;
	(void)state;

	series_init(&s, 0);
	run(&s, 300, 300, 20);
	assert_int_equal(s.o.held_epochs, 0);
	assert_int_equal(s.o.comparisons, 0);
	series_init(&s, 0);
	run(&s, 1000, 1000, 20);
	assert_true(s.o.held_epochs > 10);
	assert_int_equal(s.o.comparisons, 0);
	assert_int_equal(s.o.dropped, s.o.held_epochs);
	assert_int_equal(s.no_gain_at, 0);
}

/* A gap in the events (the program computes, or stops swapping) drops the
 * comparison at hand and starts a fresh on epoch; the windows stay on. */
static void test_gap_drops(void **state)
{
	struct series s;
	(void)state;

	series_init(&s, 0);
	/* into the first held epoch */
	run(&s, 20000, 20000, 1.0 + 0.02);
	assert_true(leap_outcome_holding(&s.o));
	s.now += 2 * S; /* nothing for two seconds */
	assert_false(leap_outcome_advance(&s.o, &s.p, s.now));
	assert_false(leap_outcome_holding(&s.o));
	assert_int_equal(s.o.seg, LEAP_OUTCOME_SETTLE);
	assert_int_equal(s.o.dropped, 1);
	assert_int_equal(s.o.comparisons, 0);

	/* A pause shorter than ref_ns (a service between requests) is part
	 * of the rate: the held epoch still counts. */
	series_init(&s, 0);
	run(&s, 20000, 10000, 1.0 + 0.02);
	assert_true(leap_outcome_holding(&s.o));
	s.now = s.o.seg_end_ns + 50 * MS;
	assert_false(leap_outcome_advance(&s.o, &s.p, s.now));
	run(&s, 20000, 10000, 0.3);
	assert_int_equal(s.o.dropped, 0);
	assert_int_equal(s.o.comparisons, 1);
}

/* Pages consumed while settling are not measured: a burst of hits right
 * after the switch (windows in flight) does not make the held epoch look
 * fast. */
static void test_settle_not_measured(void **state)
{
	struct series s;
	(void)state;

	series_init(&s, 0);
	run(&s, 20000, 10000, 1.0 + 0.001); /* just into the held settle */
	assert_int_equal(s.o.seg, LEAP_OUTCOME_HELD_SETTLE);
	for (int i = 0; i < 5000; i++) /* the windows in flight: all hits */
		leap_outcome_pages(&s.o, 1);
	run(&s, 20000, 10000, 0.3);
	assert_int_equal(s.o.comparisons, 1);
	assert_int_equal(s.o.ratio_pct[0], 50);
}

/*
 * Windows 3x as fast, and a lead: what they issued before each hold the
 * program uses at their pace for lead_ns of it.  A lead the settle waits
 * out (inside LEAP_OUTCOME_LEAD_MAX_NS) is not measured: the gain shows.
 * One that outlasts the cap fills the measured held epoch with hits on our
 * pages (ratio ~100%, "no gain" without the drop): those comparisons are
 * dropped.  One that ends just past the cap leaves a few hits in it (under
 * LEAP_OUTCOME_LEAD_MAX_PCT): kept.
 */
static void test_lead_outlasting_the_settle(void **state)
{
	struct series s;
	(void)state;

	series_init(&s, 0);
	s.lead_ns = 120 * MS;
	run(&s, 30000, 10000, 4.5);
	assert_int_equal(s.o.verdict, LEAP_OUTCOME_GAIN);
	assert_int_equal(s.o.lead_dropped, 0);

	series_init(&s, 0);
	s.lead_ns = 400 * MS;
	run(&s, 30000, 10000, 10);
	assert_int_equal(s.no_gain_at, 0);
	assert_int_equal(s.o.comparisons, 0);
	assert_true(s.o.lead_dropped >= s.p.judged);
	assert_int_equal(s.o.dropped, s.o.lead_dropped);

	/* 1 ms past the cap: 30 hits of ~520 pages, 6%. */
	series_init(&s, 0);
	s.lead_ns = LEAP_OUTCOME_LEAD_MAX_NS + 1 * MS;
	run(&s, 30000, 10000, 5);
	assert_int_equal(s.o.lead_dropped, 0);
	assert_int_equal(s.o.verdict, LEAP_OUTCOME_GAIN);
	assert_true(s.o.ratio_pct[0] > 33 && s.o.ratio_pct[0] < 40);
}

/* A target's first on epoch is first_on_ns long: a program that swaps
 * for less is never held; after a probe (first = false), on_ns at once. */
static void test_first_epoch(void **state)
{
	struct series s;
	(void)state;

	series_init(&s, 0);
	s.p.first_on_ns = 4 * S;
	leap_outcome_init(&s.o, &s.p, LEAP_OUTCOME_FIRST);
	run(&s, 20000, 10000, 3.9);
	assert_int_equal(s.o.held_epochs, 0);
	assert_int_equal(s.held_time, 0);
	run(&s, 20000, 10000, 0.2);
	assert_int_equal(s.o.held_epochs, 1);
	/* then on_ns */
	run(&s, 20000, 10000, 1.1);
	assert_int_equal(s.o.held_epochs, 2);

	series_init(&s, 0);
	s.p.first_on_ns = 4 * S;
	leap_outcome_init(&s.o, &s.p, LEAP_OUTCOME_PROBE);
	run(&s, 20000, 10000, 1.1);
	assert_int_equal(s.o.held_epochs, 1);
}

/* After a probe that follows a no-gain verdict, three ratios decide. */
static void test_recheck(void **state)
{
	struct series s;
	(void)state;

	series_init(&s, 0);
	leap_outcome_init(&s.o, &s.p, LEAP_OUTCOME_RECHECK);
	run(&s, 20000, 20000, 30);
	assert_int_not_equal(s.no_gain_at, 0);
	assert_int_equal(s.o.comparisons, LEAP_OUTCOME_GAIN_RUN);
}

/*
 * Epoch series recorded on this machine (2026-11-28): each pair the held
 * epoch's rate and the mean around it (pages/s), as `leap-agent replay`
 * printed them for tests/sys/outcome.t's runs (SQLite random look-ups,
 * then its reverse scans) and as the JSON gave the ratios of a 2 GiB
 * CPython strided scan (tools/real/pyscan.py 2048 stride:16 at 1,040 MiB;
 * around taken as 40,000/s).  Played back one comparison at a time, they
 * make the verdicts they made live.
 */
struct rates {
	uint64_t held, around;
};

/* One comparison of the pair: on epochs at around, the held one at held. */
static void play(struct series *s, const struct rates *r)
{
	uint64_t compared = s->o.comparisons;

	while (s->o.comparisons == compared && !s->no_gain_at)
		run(s, r->around, r->held, 0.01);
}

static enum leap_outcome_verdict play_series(const struct rates *r, unsigned n,
					     unsigned *at)
{
	struct series s;

	series_init(&s, 0);
	for (*at = 0; *at < n && !s.no_gain_at; (*at)++)
		play(&s, &r[*at]);
	return s.no_gain_at ? LEAP_OUTCOME_NO_GAIN : s.o.verdict;
}

static void test_recorded_series(void **state)
{
	static const struct rates lookups[][5] = {
		{{8273, 9504},
		 {9239, 9115},
		 {10129, 10903},
		 {11427, 9613},
		 {11455, 10484}},
		{{11491, 9953},
		 {12186, 11263},
		 {8631, 8597},
		 {10995, 10579},
		 {10128, 9396}},
		{{10987, 11139},
		 {8964, 9360},
		 {10244, 9201},
		 {10710, 9945},
		 {10769, 9497}},
		{{11002, 9896},
		 {11211, 8875},
		 {8363, 8265},
		 {10115, 8498},
		 {10870, 10274}},
	};
	static const struct rates reverse_scan[] = {{5997, 48054},
						    {10657, 54239},
						    {11413, 55772},
						    {5312, 52264},
						    {5879, 63567}};
	static const struct rates strided[][6] = {
		{{15600, 40000},
		 {21600, 40000},
		 {17600, 40000},
		 {14400, 40000},
		 {19200, 40000},
		 {15600, 40000}},
		{{40000, 40000},
		 {13200, 40000},
		 {15200, 40000},
		 {17600, 40000},
		 {26400, 40000},
		 {16800, 40000}},
		{{11200, 40000},
		 {26000, 40000},
		 {10000, 40000},
		 {15600, 40000},
		 {15600, 40000},
		 {10400, 40000}},
	};
	unsigned at;
	(void)state;

	/* The look-ups: no gain, at the fifth comparison, every run. */
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(play_series(lookups[i], 5, &at), LEAP_OUTCOME_NO_GAIN);
		assert_int_equal(at, 5);
	}
	/* The scans: gain after three; an outlier (100%) changes nothing. */
	assert_int_equal(play_series(reverse_scan, 5, &at), LEAP_OUTCOME_GAIN);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(play_series(strided[i], 6, &at), LEAP_OUTCOME_GAIN);
}

static void test_outcome_params(void **state)
{
	struct leap_outcome_params p;
	(void)state;

	leap_outcome_params_default(&p);
	assert_true(leap_outcome_params_valid(&p));
	p.judged = 4;
	assert_false(leap_outcome_params_valid(&p));
	leap_outcome_params_default(&p);
	p.ref_ns = p.on_ns;
	assert_false(leap_outcome_params_valid(&p));
	leap_outcome_params_default(&p);
	p.gain_pct = p.no_gain_pct;
	assert_false(leap_outcome_params_valid(&p));
	leap_outcome_params_default(&p);
	p.first_on_ns = p.on_ns - 1;
	assert_false(leap_outcome_params_valid(&p));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gain),
		cmocka_unit_test(test_no_gain),
		cmocka_unit_test(test_loss),
		cmocka_unit_test(test_small_gain_kept),
		cmocka_unit_test(test_noise),
		cmocka_unit_test(test_no_windows_no_hold),
		cmocka_unit_test(test_too_few_pages),
		cmocka_unit_test(test_gap_drops),
		cmocka_unit_test(test_settle_not_measured),
		cmocka_unit_test(test_lead_outlasting_the_settle),
		cmocka_unit_test(test_first_epoch),
		cmocka_unit_test(test_recheck),
		cmocka_unit_test(test_recorded_series),
		cmocka_unit_test(test_outcome_params),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
