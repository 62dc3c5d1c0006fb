// SPDX-License-Identifier: MIT
/* GETPREFETCHWINDOWSIZE sequences and DOPREFETCH candidates. */
#include <string.h>

#include "engine_test.h"

static struct leap_params params_pw(uint32_t pw_max)
{
	struct leap_params p;

	leap_params_default(&p);
	p.pw_max = pw_max;
	return p;
}

static void test_suspend_and_restart(void **state)
{
	struct leap_params p = params_pw(32);
	struct leap_window w = {0};
	(void)state;

	/* No hits, off-trend: suspend. */
	assert_int_equal(leap_window_next(&w, &p, false), 0);
	assert_int_equal(leap_window_next(&w, &p, false), 0);
	/* Back on the trend: one page along it. */
	assert_int_equal(leap_window_next(&w, &p, true), 1);
	/* Smooth shrink keeps PWprev/2 = 0: suspended again off-trend. */
	assert_int_equal(leap_window_next(&w, &p, false), 0);
}

static void test_growth_with_hits_and_cap(void **state)
{
	struct leap_params p = params_pw(32);
	struct leap_window w = {0};
	/* Chit -> window: round Chit+1 up to a power of two, cap 32. */
	static const struct {
		uint32_t chit, pw;
	} seq[] = {{1, 2},  {2, 4},   {3, 4},	{4, 8},	   {7, 8},
		   {8, 16}, {16, 32}, {31, 32}, {500, 32}, {UINT32_MAX, 32}};
	(void)state;

	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		w.chit = seq[i].chit;
		w.pw_prev = 0;
		assert_int_equal(leap_window_next(&w, &p, false), seq[i].pw);
		assert_int_equal(w.chit, 0); /* Chit resets after every decision */
		assert_int_equal(w.pw_prev, seq[i].pw);
	}
}

static void test_smooth_shrink(void **state)
{
	struct leap_params p = params_pw(32);
	struct leap_window w = {.chit = 40};
	uint32_t expect[] = {32, 16, 8, 4, 2, 1, 0, 0};
	(void)state;

	assert_int_equal(leap_window_next(&w, &p, false), expect[0]);
	/* Every later step has no hit and is off-trend: halve, never faster. */
	for (size_t i = 1; i < sizeof(expect) / sizeof(expect[0]); i++)
		assert_int_equal(leap_window_next(&w, &p, false), expect[i]);

	/* One hit after a big window: 2 would be below 32/2, so 16. */
	w.chit = 40;
	leap_window_next(&w, &p, false);
	w.chit = 1;
	assert_int_equal(leap_window_next(&w, &p, false), 16);

	/* A lowered cap (policy reload) applies at once. */
	p.pw_max = 4;
	assert_int_equal(leap_window_next(&w, &p, true), 4);
}

static void assert_distinct(const uint64_t *v, uint32_t n, uint64_t pt)
{
	for (uint32_t i = 0; i < n; i++) {
		assert_true(v[i] != pt);
		for (uint32_t j = i + 1; j < n; j++)
			assert_true(v[i] != v[j]);
	}
}

static void test_candidates_stride(void **state)
{
	uint64_t out[64];
	uint32_t n;
	(void)state;

	n = leap_candidates(100, 4, true, 16, false, 0, out, 64);
	assert_int_equal(n, 4);
	assert_int_equal(out[0], 116);
	assert_int_equal(out[3], 164);

	/* Negative stride stops before page 0. */
	n = leap_candidates(5, 8, true, -2, false, 0, out, 64);
	assert_int_equal(n, 2);
	assert_int_equal(out[0], 3);
	assert_int_equal(out[1], 1);
	n = leap_candidates(6, 8, true, -2, false, 0, out, 64);
	assert_int_equal(n, 3);
	assert_int_equal(out[2], 0);

	/* Near the top of the address space: no wrap. */
	n = leap_candidates(UINT64_MAX - 3, 8, true, 2, false, 0, out, 64);
	assert_int_equal(n, 1);
	assert_int_equal(out[0], UINT64_MAX - 1);
	n = leap_candidates(10, 8, true, INT64_MIN, false, 0, out, 64);
	assert_int_equal(n, 0);

	/* cap bounds the output whatever the window. */
	n = leap_candidates(0, 64, true, 1, false, 0, out, 3);
	assert_int_equal(n, 3);
	/* Delta 0 (paper flavour) prefetches nothing beyond Pt. */
	n = leap_candidates(50, 8, true, 0, false, 0, out, 64);
	assert_int_equal(n, 0);
	/* Window 0 prefetches nothing. */
	n = leap_candidates(50, 0, true, 1, false, 0, out, 64);
	assert_int_equal(n, 0);
}

static void test_candidates_without_trend(void **state)
{
	uint64_t out[64];
	uint32_t n;
	(void)state;

	/* Latest trend -3 is followed when no current majority exists. */
	n = leap_candidates(100, 3, false, 0, true, -3, out, 64);
	assert_int_equal(n, 3);
	assert_int_equal(out[0], 97);
	assert_int_equal(out[2], 91);

	/* No trend ever: neighbours, forward first, distinct, none below 0. */
	n = leap_candidates(2, 6, false, 0, false, 0, out, 64);
	assert_int_equal(n, 6);
	assert_int_equal(out[0], 3);
	assert_int_equal(out[1], 1);
	assert_distinct(out, n, 2);
	for (uint32_t i = 0; i < n; i++)
		assert_true(out[i] <= 7);
	n = leap_candidates(0, 5, false, 0, false, 0, out, 64);
	assert_int_equal(n, 5);
	assert_distinct(out, n, 0);
	assert_int_equal(out[4], 5);
}

/* A window two pages a step gets the pages between (shared memory,
 * core.c); any other window is left as it is. */
static void test_close_gaps(void **state)
{
	uint64_t out[16];
	uint32_t n;
	(void)state;

	n = leap_candidates(100, 4, true, 2, false, 0, out, 16);
	n = leap_window_close_gaps(out, n, 16);
	assert_int_equal(n, 7); /* 102 .. 108 */
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(out[i], 102 + i);
	/* Downwards, from the page nearest the fault. */
	n = leap_candidates(100, 3, true, -2, false, 0, out, 16);
	n = leap_window_close_gaps(out, n, 16);
	assert_int_equal(n, 5);
	assert_int_equal(out[0], 98);
	assert_int_equal(out[4], 94);
	/* At most cap pages, those nearest the first. */
	n = leap_candidates(100, 8, true, 2, false, 0, out, 16);
	n = leap_window_close_gaps(out, n, 10);
	assert_int_equal(n, 10);
	assert_int_equal(out[9], 111);
	/* Other steps, mixed steps, one page: unchanged. */
	n = leap_candidates(100, 4, true, 3, false, 0, out, 16);
	assert_int_equal(leap_window_close_gaps(out, n, 16), 4);
	assert_int_equal(out[1], 106);
	out[0] = 10, out[1] = 12, out[2] = 13;
	assert_int_equal(leap_window_close_gaps(out, 3, 16), 3);
	assert_int_equal(out[2], 13);
	out[0] = 10, out[1] = 12, out[2] = 10;
	assert_int_equal(leap_window_close_gaps(out, 3, 16), 3);
	out[0] = 10;
	assert_int_equal(leap_window_close_gaps(out, 1, 16), 1);
	assert_int_equal(leap_window_close_gaps(out, 0, 16), 0);
}

/* The whole DOPREFETCH path through one stream, as the paper has it. */
static void test_stream_sequence(void **state)
{
	struct leap_params p = params_pw(8);
	int64_t storage[LEAP_HSIZE_MAX];
	struct leap_stream s;
	struct leap_decision d;
	uint64_t out[LEAP_PW_LIMIT];
	uint32_t n;
	(void)state;

	p.flavor = LEAP_FLAVOR_PAPER; /* prefetch on misses only */
	leap_stream_init(&s, storage, LEAP_HSIZE_MAX);
	/* First fault: no history, no trend, suspended. */
	n = leap_stream_access(&s, &p, 1000, false, out, 64, &d);
	assert_int_equal(n, 0);
	assert_true(d.ran);
	assert_false(d.trend_found);
	/* Second fault at +4: trend +4 found and followed: one page. */
	n = leap_stream_access(&s, &p, 1004, false, out, 64, &d);
	assert_true(d.trend_found);
	assert_int_equal(d.trend, 4);
	assert_int_equal(n, 1);
	assert_int_equal(out[0], 1008);
	/* That page is hit: Chit 1, no prefetch on a hit. */
	n = leap_stream_access(&s, &p, 1008, true, out, 64, &d);
	assert_int_equal(n, 0);
	assert_false(d.ran);
	/* Next miss: window 2 along +4. */
	n = leap_stream_access(&s, &p, 1012, false, out, 64, &d);
	assert_int_equal(n, 2);
	assert_int_equal(out[1], 1020);
	leap_stream_access(&s, &p, 1016, true, out, 64, NULL);
	leap_stream_access(&s, &p, 1020, true, out, 64, NULL);
	n = leap_stream_access(&s, &p, 1024, false, out, 64, &d);
	assert_int_equal(n, 4);
	/* Hits reported after the fact feed Chit too. */
	leap_stream_add_hits(&s, 7);
	n = leap_stream_access(&s, &p, 1028, false, out, 64, &d);
	assert_int_equal(n, 8); /* capped by pw_max 8 */
	assert_int_equal(s.stats.hits, 3);
	assert_int_equal(s.stats.misses, 5);
	assert_int_equal(s.stats.prefetched, 1 + 2 + 4 + 8);

	/* A policy with another Hsize restarts the history, clamped to storage. */
	p.hsize = 4;
	leap_stream_access(&s, &p, 5000, false, out, 64, &d);
	assert_int_equal(s.hist.size, 4);
	assert_int_equal(s.hist.count, 0);
}

/* Ours: a hit on the first page of the newest window issues the next one. */
static void test_lookahead(void **state)
{
	struct leap_params p = params_pw(8);
	int64_t storage[LEAP_HSIZE_MAX];
	struct leap_stream s;
	struct leap_decision d;
	uint64_t out[LEAP_PW_LIMIT], page = 100;
	uint64_t misses_after_warmup = 0;
	uint32_t n;
	(void)state;

	leap_stream_init(&s, storage, LEAP_HSIZE_MAX);
	leap_stream_access(&s, &p, 96, false, out, 64, NULL);
	/* Miss at 100 along -4..: trend +4 from 96, one page: 104, marker 104. */
	n = leap_stream_access(&s, &p, page, false, out, 64, &d);
	assert_int_equal(n, 1);
	assert_int_equal(out[0], 104);
	/* A hit on a page that is not the marker issues nothing. */
	n = leap_stream_access(&s, &p, 104 + 400, true, out, 64, &d);
	assert_int_equal(n, 0);
	leap_stream_reset(&s, p.hsize);

	/* A sequential scan that hits what was prefetched keeps a window in
	 * flight: windows grow 1, 2, 4, 8 and no miss follows the warm-up. */
	leap_stream_access(&s, &p, 0, false, out, 64, NULL);
	for (page = 1; page < 2000; page++) {
		bool hit = s.ra_armed && page <= s.ra_last && page > 1;

		n = leap_stream_access(&s, &p, page, hit, out, 64, &d);
		if (!hit && page > 20)
			misses_after_warmup++;
		if (d.lookahead) {
			assert_true(hit);
			assert_int_equal(out[0], s.ra_marker);
			assert_true(n <= 8);
		}
	}
	assert_int_equal(misses_after_warmup, 0);
	assert_true(s.stats.lookaheads > 200);
	assert_int_equal(s.win.pw_prev, 8);

	/* A miss inside the window in flight (a late prefetch) continues
	 * beyond the window instead of asking for its pages again. */
	{
		uint64_t last = s.ra_last, next = s.ra_marker + 1;

		assert_true(next <= last);
		n = leap_stream_access(&s, &p, next, false, out, 64, &d);
		assert_true(n > 0);
		assert_int_equal(out[0], last + 1);
		/* A miss outside it starts from the fault, as the paper does. */
		n = leap_stream_access(&s, &p, 100000, false, out, 64, &d);
		assert_true(n > 0);
		assert_int_equal(out[0], 100001);
	}

	/* The paper flavour never prefetches on a hit. */
	p.flavor = LEAP_FLAVOR_PAPER;
	leap_stream_reset(&s, p.hsize);
	leap_stream_access(&s, &p, 0, false, out, 64, NULL);
	n = leap_stream_access(&s, &p, 1, false, out, 64, NULL);
	assert_int_equal(n, 1);
	n = leap_stream_access(&s, &p, 2, true, out, 64, &d);
	assert_int_equal(n, 0);
	assert_false(d.lookahead);
}

/* Ours: a noise miss between trend pages gets no window and does not break
 * the trend; the paper prefetches a window from the noise page. */
static void test_noise_offtrend(void **state)
{
	struct leap_params p = params_pw(8);
	int64_t storage[LEAP_HSIZE_MAX];
	struct leap_stream s;
	struct leap_decision d;
	uint64_t out[LEAP_PW_LIMIT], noise_windows = 0, trend_misses = 0;
	uint32_t n, noise = 0;
	(void)state;

	leap_stream_init(&s, storage, LEAP_HSIZE_MAX);
	leap_stream_access(&s, &p, 0, false, out, 64, NULL);
	for (uint64_t page = 1; page < 3000; page++) {
		bool hit = s.ra_armed && page <= s.ra_last && page > 1;

		if (page > 50 && page % 10 == 0) {
			uint64_t chit = s.win.chit;

			/* A random far page, a miss. */
			n = leap_stream_access(&s, &p, 1000000 + page * 7919 % 4099,
					       false, out, 64, &d);
			noise++;
			if (chit > 0)
				assert_int_equal(n, 0);
			noise_windows += n > 0;
		}
		n = leap_stream_access(&s, &p, page, hit, out, 64, &d);
		if (!hit && page > 50)
			trend_misses++;
	}
	assert_true(s.stats.offtrend > noise / 2);
	assert_true(noise_windows < noise / 10);
	/* The scan itself never stalls on a miss after the warm-up. */
	assert_int_equal(trend_misses, 0);

	/* The paper: a window from the noise page. */
	p.flavor = LEAP_FLAVOR_PAPER;
	leap_stream_reset(&s, p.hsize);
	for (uint64_t page = 0; page < 8; page++)
		leap_stream_access(&s, &p, page, false, out, 64, NULL);
	leap_stream_add_hits(&s, 4);
	n = leap_stream_access(&s, &p, 777777, false, out, 64, &d);
	assert_true(n > 0);
	assert_int_equal(out[0], 777778);
}

/*
 * A trend not seen for LEAP_LATEST_TTL misses is forgotten (engine.h):
 * after a sequential run, random look-ups of two-page blocks (PostgreSQL's
 * 8 KiB pages: p, then p + 1) no longer "follow" the old +1 trend at every
 * block's second page.  The paper's flavour keeps it, and a window of one
 * page each time, beside it.
 */
static uint32_t pair_windows(enum leap_flavor flavor, struct leap_stream *s)
{
	struct leap_params p = params_pw(8);
	int64_t storage[LEAP_HSIZE_MAX];
	uint64_t out[LEAP_PW_LIMIT];
	uint32_t windows = 0;

	p.flavor = flavor;
	leap_stream_init(s, storage, LEAP_HSIZE_MAX);
	for (uint64_t page = 0; page < 40; page++)
		leap_stream_access(s, &p, page, false, out, 64, NULL);
	assert_true(s->has_latest);
	assert_int_equal(s->latest_trend, 1);
	for (uint64_t i = 0; i < 200; i++) {
		uint64_t q = 1000000 + (i * 7919 % 100000) * 4;

		windows += leap_stream_access(s, &p, q, false, out, 64, NULL) > 0;
		windows += leap_stream_access(s, &p, q + 1, false, out, 64, NULL) > 0;
	}
	/* A stream found again: its trend and windows come back. */
	for (uint64_t page = 5000000; page < 5000040; page++)
		leap_stream_access(s, &p, page, false, out, 64, NULL);
	assert_true(s->has_latest);
	assert_int_equal(s->latest_trend, 1);
	s->hist.delta = NULL; /* storage goes out of scope */
	return windows;
}

static void test_stale_trend_forgotten(void **state)
{
	struct leap_stream s;
	uint32_t ours = pair_windows(LEAP_FLAVOR_OURS, &s);
	uint32_t paper = pair_windows(LEAP_FLAVOR_PAPER, &s);
	(void)state;

	print_message("# 200 random two-page look-ups after a +1 run: %u windows (ours), "
		      "%u (the paper's remembered trend)\n",
		      ours, paper);
	/* The run's +1 deltas keep a majority in the history for up to
	 * hsize / 2 pairs (FINDTREND finds it: windows, rightly), then the
	 * memory lasts LEAP_LATEST_TTL misses: TTL / 2 pairs.  22 here. */
	assert_true(ours <= LEAP_DEFAULT_HSIZE / 2 + LEAP_LATEST_TTL / 2);
	assert_true(paper >= 150);
}

/*
 * Prefetches reclaimed before use shrink the stream's windows; hits grow
 * them back once the waste stops.
 */
static void test_wasted_shrinks_then_recovers(void **state)
{
	struct leap_params p = params_pw(32);
	int64_t storage[LEAP_HSIZE_MAX];
	struct leap_stream s;
	struct leap_decision d;
	uint64_t out[LEAP_PW_LIMIT], page = 0;
	uint32_t full, shrunk;
	(void)state;

	leap_stream_init(&s, storage, LEAP_HSIZE_MAX);
	/* A stride-4 stream whose prefetches are all hit: full windows. */
	for (int i = 0; i < 20; i++, page += 4)
		leap_stream_access(&s, &p, page, false, out, 64, NULL);
	leap_stream_add_hits(&s, 64);
	leap_stream_access(&s, &p, page, false, out, 64, &d);
	full = d.window;
	assert_int_equal(full, 32);

	/* Four of its pages come back as major faults: each halves. */
	for (int i = 0; i < 4; i++)
		leap_stream_wasted(&s);
	assert_int_equal(s.stats.wasted, 4);
	page += 4;
	leap_stream_access(&s, &p, page, false, out, 64, &d);
	shrunk = d.window;
	assert_true(shrunk <= full / 8);

	/* Hits again: the window grows back to the cap. */
	for (int i = 0; i < 8; i++) {
		leap_stream_add_hits(&s, 32);
		page += 4;
		leap_stream_access(&s, &p, page, false, out, 64, &d);
	}
	assert_int_equal(d.window, 32);
}

/*
 * A sequential stream the kernel's readahead serves reaches the engine as
 * a miss every few pages (where the kernel's windows end).  After the
 * kernel's readahead, the window runs on a unit trend and starts beyond
 * the pages the kernel is reading; forwards and backwards.
 */
static void test_after_kernel_readahead(void **state)
{
	struct leap_params p = params_pw(256);
	int64_t storage[LEAP_HSIZE_MAX];
	struct leap_stream s;
	struct leap_decision d;
	uint64_t out[LEAP_PW_LIMIT];
	uint32_t n;
	(void)state;

	/* Forwards, a miss every 5 pages (the kernel read 4 past each). */
	leap_stream_init(&s, storage, LEAP_HSIZE_MAX);
	leap_stream_access(&s, &p, 1000, false, out, 256, NULL);
	n = leap_stream_access_after_ra(&s, &p, 1005, 4, out, 256, &d);
	assert_true(d.trend_found);
	assert_int_equal(d.trend, 1);
	/* Four pages the kernel read count as hits: Chit 4 -> window 8. */
	assert_int_equal(d.window, 8);
	assert_int_equal(n, 8);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(out[i], 1010 + i);
	/* The window's first page is the marker: a hit there goes on beyond. */
	n = leap_stream_access(&s, &p, 1010, true, out, 256, &d);
	assert_true(d.lookahead);
	assert_int_equal(out[0], 1018);

	/* Backwards, a miss every 4 pages, near page 0: nothing below it. */
	leap_stream_init(&s, storage, LEAP_HSIZE_MAX);
	leap_stream_access(&s, &p, 12, false, out, 256, NULL);
	n = leap_stream_access_after_ra(&s, &p, 8, 3, out, 256, &d);
	assert_int_equal(d.trend, -1);
	assert_int_equal(n, 4);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(out[i], 4 - i);
	/* The skip never goes below page 0. */
	leap_stream_init(&s, storage, LEAP_HSIZE_MAX);
	leap_stream_access(&s, &p, 4, false, out, 256, NULL);
	n = leap_stream_access_after_ra(&s, &p, 2, 5, out, 256, &d);
	assert_int_equal(n, 0);

	/* A stream's first access, or the same page again: a plain miss. */
	leap_stream_init(&s, storage, LEAP_HSIZE_MAX);
	leap_stream_access_after_ra(&s, &p, 50, 4, out, 256, &d);
	assert_true(d.ran);
	assert_int_equal(s.stats.misses, 1);
}

/*
 * A nested stride (numpy's a[::4, ::1024]: +2 x7, +50) gets windows along
 * its period, extended by look-ahead like a stride, so the scan stops
 * missing and fetches no page it skips; FINDTREND's +2 alone fetched four
 * pages for each one used.
 */
static void test_periodic_windows(void **state)
{
	struct leap_params p = params_pw(64);
	int64_t storage[LEAP_HSIZE_MAX];
	struct leap_stream s;
	struct leap_decision d;
	uint64_t out[LEAP_PW_LIMIT], page = 16000, periodic;
	static bool asked[65536]; /* by page - 16000 */
	uint32_t misses = 0, flagged = 0, n;
	(void)state;

	memset(asked, 0, sizeof(asked));
	leap_stream_init(&s, storage, LEAP_HSIZE_MAX);
	for (int i = 0; i < 3000; i++) {
		bool hit = asked[page - 16000];

		n = leap_stream_access(&s, &p, page, hit, out, 64, &d);
		misses += !hit && i > 100;
		flagged += d.periodic;
		for (uint32_t k = 0; k < n; k++) {
			/* Once the period is known, every page asked for is one
			 * the scan reads: an even page among the first 16 of a
			 * row of every 64 (the first windows follow +2). */
			uint64_t off = out[k] - 16000;

			assert_true(out[k] >= 16000 && off < 65536);
			if (i > 100)
				assert_true(off % 64 < 16 && off % 2 == 0);
			asked[off] = true;
		}
		page += i % 8 == 7 ? 50 : 2;
	}
	assert_true(s.stats.periodic > 10);
	assert_int_equal(flagged, s.stats.periodic);
	assert_true(misses < 20);

	/* The paper flavour keeps its majority trend (stats survive a reset). */
	periodic = s.stats.periodic;
	p.flavor = LEAP_FLAVOR_PAPER;
	leap_stream_reset(&s, p.hsize);
	page = 16000;
	for (int i = 0; i < 100; i++) {
		leap_stream_access(&s, &p, page, false, out, 64, &d);
		page += i % 8 == 7 ? 50 : 2;
	}
	assert_int_equal(s.stats.periodic, periodic);
}

static void test_params_validation(void **state)
{
	struct leap_params p;
	const char *why = NULL;
	enum leap_flavor f;
	enum leap_stream_key k;
	(void)state;

	leap_params_default(&p);
	assert_int_equal(leap_params_validate(&p, &why), 0);
	assert_null(why);
	p.hsize = 1;
	assert_int_equal(leap_params_validate(&p, &why), -1);
	assert_non_null(why);
	p.hsize = 300;
	assert_int_equal(leap_params_validate(&p, &why), -1);
	leap_params_default(&p);
	p.nsplit = 0;
	assert_int_equal(leap_params_validate(&p, &why), -1);
	leap_params_default(&p);
	p.pw_max = 2000;
	assert_int_equal(leap_params_validate(&p, &why), -1);
	assert_int_equal(leap_flavor_parse("paper", &f), 0);
	assert_int_equal(f, LEAP_FLAVOR_PAPER);
	assert_int_equal(leap_flavor_parse("bogus", &f), -1);
	assert_int_equal(leap_stream_key_parse("thread", &k), 0);
	assert_int_equal(k, LEAP_KEY_THREAD);
	assert_string_equal(leap_stream_key_name(LEAP_KEY_CGROUP), "cgroup");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_suspend_and_restart),
		cmocka_unit_test(test_growth_with_hits_and_cap),
		cmocka_unit_test(test_smooth_shrink),
		cmocka_unit_test(test_candidates_stride),
		cmocka_unit_test(test_candidates_without_trend),
		cmocka_unit_test(test_close_gaps),
		cmocka_unit_test(test_stream_sequence),
		cmocka_unit_test(test_lookahead),
		cmocka_unit_test(test_noise_offtrend),
		cmocka_unit_test(test_wasted_shrinks_then_recovers),
		cmocka_unit_test(test_stale_trend_forgotten),
		cmocka_unit_test(test_after_kernel_readahead),
		cmocka_unit_test(test_periodic_windows),
		cmocka_unit_test(test_params_validation),
	};
	return cmocka_run_group_tests_name("window", tests, NULL, NULL);
}
