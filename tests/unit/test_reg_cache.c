// SPDX-License-Identifier: MIT
/* The registration cache (MRRC and the LRU baseline) over the fake backend. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine_test.h"
#include "leap/reg.h"
#include "cache_int.h"

#define PG 4096ULL

struct fx {
	struct leap_reg_fake fake;
	struct leap_reg_ops ops;
	struct leap_reg_cache *c;
};

static void fx_init(struct fx *f, const struct leap_reg_config *cfg)
{
	leap_reg_fake_init(&f->fake, PG);
	leap_reg_fake_ops(&f->fake, &f->ops);
	f->c = leap_reg_cache_new(cfg, &f->ops);
	assert_non_null(f->c);
}

/* Everything registered is deregistered exactly once, nothing unknown. */
static void fx_fini(struct fx *f)
{
	leap_reg_cache_free(f->c);
	assert_int_equal(f->fake.errors, 0);
	assert_int_equal(f->fake.pinned_bytes, 0);
	assert_int_equal(f->fake.regs, f->fake.deregs);
	leap_reg_fake_fini(&f->fake);
}

static struct leap_reg_config cfg_of(enum leap_reg_policy p)
{
	struct leap_reg_config cfg = {.policy = p, .page_size = PG};

	return cfg;
}

static void get_ok(struct fx *f, uint64_t addr, uint64_t len, struct leap_reg_ref *ref,
		   enum leap_reg_class cls, unsigned nsegs)
{
	assert_int_equal(leap_reg_get(f->c, addr, len, ref), 0);
	assert_int_equal(ref->cls, cls);
	assert_int_equal(ref->nsegs, nsegs);
	/* the segments tile the request in order, each with a live key */
	for (unsigned i = 0; i < ref->nsegs; i++) {
		assert_int_equal(ref->segs[i].addr,
				 i ? ref->segs[i - 1].addr + ref->segs[i - 1].len : addr);
		assert_true(leap_reg_fake_live(&f->fake, ref->segs[i].key.handle));
	}
	assert_int_equal(ref->segs[nsegs - 1].addr + ref->segs[nsegs - 1].len,
			 addr + len);
}

static void test_classes(void **state)
{
	struct leap_reg_config cfg = cfg_of(LEAP_REG_MRRC);
	struct leap_reg_ref a, b;
	struct leap_reg_stats st;
	struct fx f;
	(void)state;

	fx_init(&f, &cfg);
	get_ok(&f, 0x10000, 4 * PG, &a, LEAP_REG_MISS, 1);
	leap_reg_put(f.c, &a);
	get_ok(&f, 0x10000, 4 * PG, &b, LEAP_REG_HIT, 1);
	leap_reg_put(f.c, &b);
	/* unaligned but the same pages: still the exact region */
	get_ok(&f, 0x10010, 4 * PG - 0x20, &b, LEAP_REG_HIT, 1);
	leap_reg_put(f.c, &b);
	get_ok(&f, 0x11000, 100, &b, LEAP_REG_CONTAINED, 1);
	assert_int_equal(b.segs[0].key.handle, 1);
	assert_int_equal(b.segs[0].len, 100);
	leap_reg_put(f.c, &b);
	assert_int_equal(f.fake.regs, 1);
	leap_reg_cache_stats(f.c, &st);
	assert_int_equal(st.lookups, 4);
	assert_int_equal(st.misses, 1);
	assert_int_equal(st.hits, 2);
	assert_int_equal(st.contained, 1);
	assert_int_equal(st.pinned_bytes, 4 * PG);
	assert_int_equal(leap_reg_get(f.c, 0x1000, 0, &a), -EINVAL);
	assert_int_equal(leap_reg_get(f.c, UINT64_MAX - 10, 100, &a), -EINVAL);
	assert_int_equal(leap_reg_get(f.c, UINT64_MAX - 10, 5, &a), -EINVAL);
	fx_fini(&f);
}

/* Overlap: only the difference is registered and both regions are kept. */
static void test_overlap(void **state)
{
	struct leap_reg_config cfg = cfg_of(LEAP_REG_MRRC);
	struct leap_reg_ref a, b;
	struct leap_reg_stats st;
	struct fx f;
	(void)state;

	fx_init(&f, &cfg);
	get_ok(&f, 0, 4 * PG, &a, LEAP_REG_MISS, 1);
	leap_reg_put(f.c, &a);
	get_ok(&f, 2 * PG, 6 * PG, &b, LEAP_REG_OVERLAP, 2);
	assert_int_equal(b.segs[0].key.handle, 1);
	assert_int_equal(b.segs[0].len, 2 * PG);
	assert_int_equal(b.segs[1].addr, 4 * PG);
	assert_int_equal(f.fake.reg_pages, 4 + 4); /* only pages 4..7 the second time */
	leap_reg_put(f.c, &b);
	get_ok(&f, 0, 4 * PG, &a, LEAP_REG_HIT, 1);
	leap_reg_put(f.c, &a);
	get_ok(&f, 4 * PG, 4 * PG, &a, LEAP_REG_HIT, 1);
	leap_reg_put(f.c, &a);
	/* a gap between two cached regions plus one on each side: 5 pieces */
	get_ok(&f, 12 * PG, 2 * PG, &a, LEAP_REG_MISS, 1);
	leap_reg_put(f.c, &a);
	get_ok(&f, 0x100, 13 * PG - 0x100, &b, LEAP_REG_OVERLAP, 4);
	leap_reg_put(f.c, &b);
	get_ok(&f, 0, 16 * PG, &b, LEAP_REG_OVERLAP, 5);
	assert_int_equal(f.fake.reg_pages, 4 + 4 + 2 + 4 + 2);
	leap_reg_put(f.c, &b);
	leap_reg_cache_stats(f.c, &st);
	assert_int_equal(st.overlaps, 3);
	assert_int_equal(st.entries, 5);
	/* the index stays sorted and never overlaps */
	for (size_t i = 1; i < f.c->nidx; i++)
		assert_true(f.c->idx[i - 1]->end <= f.c->idx[i]->start);
	fx_fini(&f);
}

/* More pieces than max_segs: one region over the union replaces them. */
static void test_merge(void **state)
{
	struct leap_reg_config cfg = cfg_of(LEAP_REG_MRRC);
	struct leap_reg_ref a, held;
	struct leap_reg_stats st;
	struct fx f;
	(void)state;

	cfg.max_segs = 2;
	fx_init(&f, &cfg);
	get_ok(&f, 2 * PG, PG, &held, LEAP_REG_MISS, 1); /* stays referenced */
	get_ok(&f, 6 * PG, 4 * PG, &a, LEAP_REG_MISS, 1);
	leap_reg_put(f.c, &a);
	get_ok(&f, 0, 8 * PG, &a, LEAP_REG_OVERLAP, 1);
	leap_reg_cache_stats(f.c, &st);
	assert_int_equal(st.merges, 1);
	assert_int_equal(st.entries, 1);
	assert_int_equal(a.segs[0].key.handle, 3);
	/* the referenced old piece is detached, not deregistered yet */
	assert_true(leap_reg_fake_live(&f.fake, held.segs[0].key.handle));
	assert_false(leap_reg_fake_live(&f.fake, 2));
	leap_reg_put(f.c, &held);
	assert_false(leap_reg_fake_live(&f.fake, 1));
	leap_reg_put(f.c, &a);
	get_ok(&f, 9 * PG, PG, &a, LEAP_REG_CONTAINED, 1); /* union kept pages 8, 9 */
	leap_reg_put(f.c, &a);
	fx_fini(&f);
}

/* The classic pin-down cache registers the whole request on an overlap. */
static void test_lru_baseline(void **state)
{
	struct leap_reg_config cfg = cfg_of(LEAP_REG_LRU);
	struct leap_reg_ref a;
	struct fx f;
	(void)state;

	cfg.max_entries = 2;
	fx_init(&f, &cfg);
	get_ok(&f, 0, 4 * PG, &a, LEAP_REG_MISS, 1);
	leap_reg_put(f.c, &a);
	get_ok(&f, 2 * PG, 4 * PG, &a, LEAP_REG_MISS, 1);
	leap_reg_put(f.c, &a);
	assert_int_equal(f.fake.reg_pages, 8);
	get_ok(&f, 0, PG, &a, LEAP_REG_CONTAINED, 1);
	leap_reg_put(f.c, &a);
	/* third region: the LRU one (2..6) leaves, 0..4 stays */
	get_ok(&f, 100 * PG, PG, &a, LEAP_REG_MISS, 1);
	leap_reg_put(f.c, &a);
	assert_false(leap_reg_fake_live(&f.fake, 2));
	assert_true(leap_reg_fake_live(&f.fake, 1));
	fx_fini(&f);
}

/* Registers [page * PG, (page + pages) * PG) as a miss and puts it. */
static void miss(struct fx *f, uint64_t page, uint64_t pages)
{
	struct leap_reg_ref a;

	get_ok(f, page * PG, pages * PG, &a, LEAP_REG_MISS, 1);
	leap_reg_put(f->c, &a);
}

/* Exactly the handles in want[0..n) are live among 1..max. */
static void live_are(struct fx *f, uint64_t max, const uint64_t *want, size_t n)
{
	for (uint64_t h = 1; h <= max; h++) {
		bool w = false;

		for (size_t i = 0; i < n; i++)
			w = w || want[i] == h;
		if (leap_reg_fake_live(&f->fake, h) != w)
			fail_msg("handle %llu: live %d, want %d", (unsigned long long)h,
				 leap_reg_fake_live(&f->fake, h), w);
	}
}

#define LIVE(f, max, ...)                                                                \
	do {                                                                             \
		const uint64_t w_[] = {__VA_ARGS__};                                     \
		live_are(f, max, w_, sizeof(w_) / sizeof(w_[0]));                        \
	} while (0)

/*
 * MRE worked by hand from the slides' pseudocode (docs/registration.md):
 * 4 entries, the resorting section is the whole stack, an eviction segment
 * of one region.  Upon a full cache: r = Evictfact of the bottom region (r
 * unchanged if it has none); each region of the section without an
 * Evictfact gets r + 1/s; resort, smallest lowest; evict the bottom.  A
 * reference clears a region's Evictfact.  s in pages; handle = order of
 * registration.
 *
 *  A1 B64 C1 D64      stack, bottom first; r = 0
 *  +E2: round 1       e = A, no value: r = 0.  A 1, B 1/64, C 1, D 1/64
 *                     -> B D A C (ties: lower first); B leaves  | D A C E
 *  hit A              A to the top, its value cleared          | D C E A
 *  +F1: round 2       e = D: r = 1/64.  E 1/64+1/2, A 1/64+1
 *                     -> D .016 E .516 C 1 A 1.016; D leaves    | E C A F
 *  +G1: round 3       r = E = .515625; F 1.515625; E leaves     | C A F G
 *  +H1: round 4       r = C = 1; G 2; C leaves                  | A F G H
 *  +X64: round 5      r = A = 1.015625; H 2.015625; A leaves    | F G H X
 *  +Y1: round 6       r = F = 1.515625; X r + 1/64 = 1.53125 > F:
 *                     F (small, valued long ago) leaves before the large,
 *                     newer X: aging.  Re-valuing every region each round
 *                     would evict X (r + 1/64 < r + 1).
 *
 * The rank rule (mrrc-rank) evicts A in round 1, so this fails with it.
 */
static void test_mre_worked_example(void **state)
{
	static const struct {
		uint64_t page, pages;
		double r;
		uint64_t live[4];
	} later[] = {
		{500, 1, 1.0 / 64, {1, 3, 5, 6}},   /* F: D leaves */
		{600, 1, 0.515625, {1, 3, 6, 7}},   /* G: E leaves */
		{700, 1, 1.0, {1, 6, 7, 8}},	    /* H: C leaves */
		{1000, 64, 1.015625, {6, 7, 8, 9}}, /* X: A leaves */
		{2000, 1, 1.515625, {7, 8, 9, 10}}, /* Y: F, not X, leaves */
	};
	struct leap_reg_config cfg = cfg_of(LEAP_REG_MRRC);
	struct leap_reg_ref a;
	struct leap_reg_stats st;
	struct fx f;
	(void)state;

	cfg.max_entries = 4;
	cfg.resort_pct = 100;
	cfg.evict_batch = 1;
	fx_init(&f, &cfg);
	miss(&f, 0, 1);	   /* A: handle 1 */
	miss(&f, 100, 64); /* B: 2 */
	miss(&f, 200, 1);  /* C: 3 */
	miss(&f, 300, 64); /* D: 4 */
	assert_true(f.c->mre_r == 0.0);

	miss(&f, 400, 2); /* E: 5, round 1 */
	assert_true(f.c->mre_r == 0.0);
	LIVE(&f, 5, 1, 3, 4, 5);
	/* resorted in place: D (1/64) is at the bottom now */
	assert_int_equal(f.c->tail->start, 300 * PG);
	assert_true(f.c->tail->evictfact == 1.0 / 64);

	get_ok(&f, 0, PG, &a, LEAP_REG_HIT, 1); /* A to the top */
	leap_reg_put(f.c, &a);
	assert_false(f.c->head->valued);

	/* rounds 2-6: F, G, H, X, Y are handles 6-10 */
	for (size_t i = 0; i < sizeof(later) / sizeof(later[0]); i++) {
		miss(&f, later[i].page, later[i].pages);
		assert_true(f.c->mre_r == later[i].r);
		live_are(&f, 6 + i, later[i].live, 4);
	}

	leap_reg_cache_stats(f.c, &st);
	assert_int_equal(st.evictions, 6);
	assert_int_equal(st.dereg_batches, 6);
	fx_fini(&f);
}

/*
 * Stack, oldest first: A (1 page), B (64), C (1), D (64) in a 4-entry
 * cache whose section is the whole stack; a fifth region E (1 page) evicts a
 * segment of two, deregistered in one batch.
 */
static void evict_two_of_four(struct fx *f, enum leap_reg_policy policy)
{
	struct leap_reg_config cfg = cfg_of(policy);
	struct leap_reg_stats st;

	cfg.max_entries = 4;
	cfg.resort_pct = 100;
	cfg.evict_batch = 2;
	fx_init(f, &cfg);
	miss(f, 0, 1);
	miss(f, 100, 64);
	miss(f, 200, 1);
	miss(f, 300, 64);
	miss(f, 400, 1);
	leap_reg_cache_stats(f->c, &st);
	assert_int_equal(st.evictions, 2);
	assert_int_equal(st.entries, 3);
	assert_int_equal(st.dereg_batches, 1); /* one call for the segment */
}

/*
 * MRE: at equal r (0 here) the largest regions leave first: B and D.
 * mrrc-rank, the older guess, kept as a named variant: r = recency rank in
 * the section scaled to [0, 1], the largest Evictfact leaves first:
 * r = 1, 2/3, 1/3, 0 gives Evictfact A 2.0, B 0.68, C 1.33, D 0.016, so A
 * and C leave, although B is older than C.
 */
static void test_segment_order(void **state)
{
	struct fx f;
	(void)state;

	evict_two_of_four(&f, LEAP_REG_MRRC);
	LIVE(&f, 5, 1, 3, 5);
	fx_fini(&f);
	evict_two_of_four(&f, LEAP_REG_MRRC_RANK);
	LIVE(&f, 5, 2, 4, 5);
	fx_fini(&f);
}

/* An invalidated region is never returned again, even while referenced. */
static void test_invalidate(void **state)
{
	for (int p = 0; p < 3; p++) {
		struct leap_reg_config cfg = cfg_of((enum leap_reg_policy)p);
		struct leap_reg_ref a, b;
		struct leap_reg_stats st;
		struct fx f;
		(void)state;

		fx_init(&f, &cfg);
		get_ok(&f, 0, 8 * PG, &a, LEAP_REG_MISS, 1);
		leap_reg_invalidate(f.c, 7 * PG, 1);
		assert_true(leap_reg_fake_live(&f.fake, 1)); /* still referenced */
		get_ok(&f, 0, 8 * PG, &b, LEAP_REG_MISS, 1);
		assert_int_equal(b.segs[0].key.handle, 2);
		leap_reg_put(f.c, &a);
		assert_false(leap_reg_fake_live(&f.fake, 1));
		leap_reg_put(f.c, &b);
		leap_reg_invalidate(f.c, 0, 4 * PG);
		assert_false(leap_reg_fake_live(&f.fake, 2));
		leap_reg_invalidate(f.c, 0, UINT64_MAX); /* wraps: everything */
		leap_reg_cache_stats(f.c, &st);
		assert_int_equal(st.invalidations, 2);
		assert_int_equal(st.entries, 0);
		fx_fini(&f);
	}
}

static void test_backend_error(void **state)
{
	struct leap_reg_config cfg = cfg_of(LEAP_REG_MRRC);
	struct leap_reg_ref a, b;
	struct fx f;
	(void)state;

	fx_init(&f, &cfg);
	get_ok(&f, 4 * PG, PG, &a, LEAP_REG_MISS, 1);
	leap_reg_put(f.c, &a);
	f.fake.fail_in = 2; /* the second gap fails */
	assert_int_equal(leap_reg_get(f.c, 0, 10 * PG, &b), -EIO);
	assert_int_equal(b.nsegs, 0);
	/* nothing stays referenced: a flush deregisters everything */
	leap_reg_flush(f.c);
	assert_int_equal(f.fake.pinned_bytes, 0);
	fx_fini(&f);
}

/*
 * Randomized model test, every policy: pinned bytes never exceed the
 * capacity except by registrations the cache reports as uncached while all
 * cached memory is referenced; every key handed out is live while
 * referenced; MRRC's index stays sorted and disjoint; no leaks.
 */
static void test_random_model(void **state)
{
	(void)state;
	for (int p = 0; p < 3; p++) {
		struct leap_reg_config cfg = cfg_of((enum leap_reg_policy)p);
		struct leap_reg_ref held[8];
		unsigned nheld = 0;
		struct leap_reg_stats st;
		struct fx f;
		unsigned seed = 12345;

		cfg.max_bytes = 256 * PG;
		cfg.max_entries = 40;
		cfg.max_segs = 4;
		fx_init(&f, &cfg);
		for (int i = 0; i < 20000; i++) {
			unsigned op = (unsigned)rand_r(&seed) % 100;

			if (op < 60 || nheld == 0) {
				uint64_t addr = (uint64_t)(rand_r(&seed) % 1024) * 512;
				uint64_t len = 1 + (uint64_t)(rand_r(&seed) % (24 * PG));
				struct leap_reg_ref r;

				assert_int_equal(leap_reg_get(f.c, addr, len, &r), 0);
				for (unsigned k = 0; k < r.nsegs; k++)
					assert_true(leap_reg_fake_live(
						&f.fake, r.segs[k].key.handle));
				if (nheld < 8 && op % 3 == 0)
					held[nheld++] = r;
				else
					leap_reg_put(f.c, &r);
			} else if (op < 95) {
				unsigned k = (unsigned)rand_r(&seed) % nheld;

				for (unsigned s = 0; s < held[k].nsegs; s++)
					assert_true(leap_reg_fake_live(
						&f.fake, held[k].segs[s].key.handle));
				leap_reg_put(f.c, &held[k]);
				held[k] = held[--nheld];
			} else {
				leap_reg_invalidate(
					f.c, (uint64_t)(rand_r(&seed) % 1024) * 512, PG);
			}
			leap_reg_cache_stats(f.c, &st);
			assert_int_equal(st.pinned_bytes, f.fake.pinned_bytes);
			assert_true(st.entries <= cfg.max_entries);
			if (nheld == 0)
				assert_true(st.pinned_bytes <= cfg.max_bytes);
			/* r is rebased before it grows large (mre.c) */
			assert_true(f.c->mre_r >= 0 && f.c->mre_r < 1025.0);
			if (p != LEAP_REG_LRU)
				for (size_t k = 1; k < f.c->nidx; k++)
					assert_true(f.c->idx[k - 1]->end <=
						    f.c->idx[k]->start);
		}
		while (nheld)
			leap_reg_put(f.c, &held[--nheld]);
		leap_reg_cache_stats(f.c, &st);
		assert_int_equal(st.lookups,
				 st.hits + st.contained + st.overlaps + st.misses);
		assert_true(st.pinned_peak <= cfg.max_bytes + 8 * 25 * PG);
		fx_fini(&f);
	}
}

static void test_stats_format(void **state)
{
	struct leap_reg_stats st = {
		.lookups = 3, .hits = 1, .moves = 7, .pinned_bytes = 4096};
	char buf[512], tiny[8];
	(void)state;

	assert_true(leap_reg_stats_format(&st, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "lookups=3 hits=1 "));
	assert_non_null(strstr(buf, " moves=7 "));
	assert_non_null(strstr(buf, " pinned_bytes=4096 "));
	assert_int_equal(leap_reg_stats_format(&st, tiny, sizeof(tiny)), -1);
}

static void test_bad_config(void **state)
{
	struct leap_reg_config cfg = cfg_of(LEAP_REG_MRRC);
	struct leap_reg_fake fake;
	struct leap_reg_ops ops;
	(void)state;

	leap_reg_fake_init(&fake, PG);
	leap_reg_fake_ops(&fake, &ops);
	cfg.page_size = 3000;
	assert_null(leap_reg_cache_new(&cfg, &ops));
	cfg.page_size = PG;
	cfg.max_segs = LEAP_REG_MAX_SEGS + 1;
	assert_null(leap_reg_cache_new(&cfg, &ops));
	cfg.max_segs = 0;
	cfg.policy = 7;
	assert_null(leap_reg_cache_new(&cfg, &ops));
	leap_reg_fake_fini(&fake);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_overlap),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_lru_baseline),
		cmocka_unit_test(test_mre_worked_example),
		cmocka_unit_test(test_segment_order),
		cmocka_unit_test(test_invalidate),
		cmocka_unit_test(test_backend_error),
		cmocka_unit_test(test_random_model),
		cmocka_unit_test(test_stats_format),
		cmocka_unit_test(test_bad_config),
	};

	return cmocka_run_group_tests_name("reg_cache", tests, NULL, NULL);
}
