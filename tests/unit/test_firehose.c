// SPDX-License-Identifier: MIT
/* Firehose server and client over the fake backend. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine_test.h"
#include "leap/firehose.h"

#define RS   (64 * 1024ULL) /* region size */
#define BASE (1ULL << 30)

struct fx {
	struct leap_reg_fake fake;
	struct leap_reg_ops ops;
	struct leap_fh_server *s;
};

static void fx_init(struct fx *f, uint64_t nregions, uint64_t budget_regions,
		    uint32_t clients)
{
	struct leap_fh_config cfg = {.base = BASE,
				     .size = nregions * RS,
				     .region_size = RS,
				     .budget = budget_regions * RS,
				     .max_clients = clients};
	int err;

	leap_reg_fake_init(&f->fake, 4096);
	leap_reg_fake_ops(&f->fake, &f->ops);
	f->s = leap_fh_server_new(&cfg, &f->ops, &err);
	assert_int_equal(err, 0);
	assert_non_null(f->s);
}

static void fx_fini(struct fx *f)
{
	leap_fh_server_free(f->s);
	assert_int_equal(f->fake.errors, 0);
	assert_int_equal(f->fake.pinned_bytes, 0);
	leap_reg_fake_fini(&f->fake);
}

/* One operation through client cl: acquire, move if needed, keys checked. */
static int op(struct fx *f, struct leap_fh_client *cl, uint32_t id, uint64_t addr,
	      uint64_t len, struct leap_fh_acquire *a)
{
	int rc = leap_fh_client_acquire(cl, addr, len, a);

	if (rc == 1) {
		struct leap_reg_key keys[LEAP_FH_MAX_SPAN];
		bool unpinned;
		int err = leap_fh_server_move(f->s, id, a->unpin, a->nunpin, a->pin,
					      a->npin, keys, &unpinned);

		rc = leap_fh_client_moved(cl, a, err, unpinned, keys);
	}
	assert_int_equal(leap_fh_server_check(f->s), 0);
	if (rc == 0)
		for (uint32_t k = 0; k < a->n; k++)
			assert_true(leap_reg_fake_live(&f->fake, a->keys[k].handle));
	return rc;
}

static void test_config(void **state)
{
	struct leap_fh_config cfg = {.base = BASE,
				     .size = 64 * RS,
				     .region_size = RS,
				     .budget = 8 * RS,
				     .max_clients = 2};
	struct leap_reg_fake fake;
	struct leap_reg_ops ops;
	struct leap_fh_server *s;
	uint32_t id;
	int err;
	(void)state;

	leap_reg_fake_init(&fake, 4096);
	leap_reg_fake_ops(&fake, &ops);
	s = leap_fh_server_new(&cfg, &ops, &err);
	assert_non_null(s);
	assert_int_equal(leap_fh_server_share(s), 4); /* p = M / C */
	assert_int_equal(leap_fh_server_nregions(s), 64);
	assert_int_equal(leap_fh_server_add_client(s, &id), 0);
	assert_int_equal(leap_fh_server_add_client(s, &id), 0);
	assert_int_equal(leap_fh_server_add_client(s, &id), -EUSERS);
	leap_fh_server_free(s);
	cfg.max_clients = 9; /* p < 1 */
	assert_null(leap_fh_server_new(&cfg, &ops, &err));
	assert_int_equal(err, -EINVAL);
	cfg.max_clients = 2;
	cfg.region_size = 3 * 4096;
	assert_null(leap_fh_server_new(&cfg, &ops, &err));
	cfg.region_size = RS;
	cfg.size = 64 * RS + 4096;
	assert_null(leap_fh_server_new(&cfg, &ops, &err));
	leap_reg_fake_fini(&fake);
}

/*
 * Two clients sharing M = 8 regions (p = 4).  Client 0 needs more than its
 * share: it moves its own least recently used firehoses; the regions it lets
 * go wait in the victim FIFO and come back without a registration.
 */
static void test_share_and_moves(void **state)
{
	struct leap_fh_acquire a;
	struct leap_reg_stats st;
	struct leap_fh_client *c0, *c1;
	uint32_t id0, id1;
	struct fx f;
	(void)state;

	fx_init(&f, 64, 8, 2);
	assert_int_equal(leap_fh_server_add_client(f.s, &id0), 0);
	assert_int_equal(leap_fh_server_add_client(f.s, &id1), 0);
	c0 = leap_fh_client_new(BASE, 64 * RS, RS, leap_fh_server_share(f.s));
	c1 = leap_fh_client_new(BASE, 64 * RS, RS, leap_fh_server_share(f.s));
	assert_non_null(c0);
	assert_non_null(c1);

	/* client 0: regions 0..3 fill its share, one move each */
	for (uint32_t i = 0; i < 4; i++) {
		assert_int_equal(op(&f, c0, id0, BASE + i * RS + 100, 200, &a), 0);
		assert_int_equal(a.nunpin, 0);
		leap_fh_client_release(c0, &a);
	}
	assert_int_equal(f.fake.regs, 4);
	/* a second touch of region 2 is local: no message, no registration */
	assert_int_equal(leap_fh_client_acquire(c0, BASE + 2 * RS, 4096, &a), 0);
	leap_fh_client_release(c0, &a);
	/* client 1 pins region 1 too: shared, no registration */
	assert_int_equal(op(&f, c1, id1, BASE + RS, RS, &a), 0);
	leap_fh_client_release(c1, &a);
	assert_int_equal(f.fake.regs, 4);

	/* region 10: client 0 is full; it moves region 0 (its LRU) */
	assert_int_equal(leap_fh_client_acquire(c0, BASE + 10 * RS, 1, &a), 1);
	assert_int_equal(a.nunpin, 1);
	assert_int_equal(a.unpin[0], 0);
	{
		struct leap_reg_key keys[LEAP_FH_MAX_SPAN];
		bool unpinned;

		assert_int_equal(leap_fh_server_move(f.s, id0, a.unpin, a.nunpin, a.pin,
						     a.npin, keys, &unpinned),
				 0);
		assert_true(unpinned);
		assert_int_equal(leap_fh_client_moved(c0, &a, 0, true, keys), 0);
	}
	leap_fh_client_release(c0, &a);
	assert_int_equal(leap_fh_client_held(c0), 4);
	/* region 0 was not deregistered: a victim, still pinned */
	assert_int_equal(f.fake.deregs, 0);
	/* region 0 again: comes back from the victim FIFO, no registration */
	assert_int_equal(op(&f, c0, id0, BASE, 1, &a), 0);
	leap_fh_client_release(c0, &a);
	assert_int_equal(f.fake.regs, 5);
	leap_fh_server_stats(f.s, &st);
	assert_int_equal(st.victim_hits, 1);
	assert_int_equal(st.shared_pins, 1);
	assert_int_equal(st.moves, 7);
	/* region 1 was unpinned by client 0 but client 1 still holds it */
	assert_int_equal(st.registrations, 5);

	leap_fh_client_free(c0);
	leap_fh_client_free(c1);
	assert_int_equal(leap_fh_server_remove_client(f.s, id0), 0);
	assert_int_equal(leap_fh_server_remove_client(f.s, id1), 0);
	assert_int_equal(leap_fh_server_remove_client(f.s, id1), -EINVAL);
	assert_int_equal(leap_fh_server_check(f.s), 0);
	fx_fini(&f);
}

/* Requests over the share are refused with nothing changed. */
static void test_refusals(void **state)
{
	uint32_t pin[6] = {0, 1, 2, 3, 4, 5}, bad[2] = {7, 7}, id;
	struct leap_reg_key keys[LEAP_FH_MAX_SPAN];
	struct leap_fh_acquire a, b[4];
	struct leap_reg_stats st;
	struct leap_fh_client *cl;
	bool unpinned = true;
	struct fx f;
	(void)state;

	fx_init(&f, 64, 8, 2);
	assert_int_equal(leap_fh_server_add_client(f.s, &id), 0);
	assert_int_equal(leap_fh_server_move(f.s, id, NULL, 0, pin, 5, keys, &unpinned),
			 -EDQUOT);
	assert_false(unpinned);
	assert_int_equal(leap_fh_server_move(f.s, id, NULL, 0, bad, 2, keys, &unpinned),
			 -EINVAL);
	assert_int_equal(leap_fh_server_move(f.s, id, pin, 1, NULL, 0, keys, &unpinned),
			 -EINVAL); /* unpin of a region it does not hold */
	assert_int_equal(leap_fh_server_move(f.s, 5, NULL, 0, pin, 1, keys, &unpinned),
			 -EINVAL);
	assert_int_equal(leap_fh_server_move(f.s, id, NULL, 0, pin, 4, keys, &unpinned),
			 0);
	assert_int_equal(leap_fh_server_move(f.s, id, NULL, 0, pin, 1, keys, &unpinned),
			 -EINVAL); /* already held */
	/* a full share may still move: unpin 2, pin 2 */
	assert_int_equal(
		leap_fh_server_move(f.s, id, pin, 2, pin + 4, 2, keys, &unpinned), 0);
	assert_int_equal(leap_fh_server_move(f.s, id, NULL, 0, pin, 1, keys, &unpinned),
			 -EDQUOT);
	leap_fh_server_stats(f.s, &st);
	assert_int_equal(st.refused, 2);
	assert_int_equal(leap_fh_server_check(f.s), 0);
	assert_int_equal(leap_fh_server_remove_client(f.s, id), 0);

	/* client side: a span over p is E2BIG; p firehoses in use: EAGAIN */
	assert_int_equal(leap_fh_server_add_client(f.s, &id), 0);
	cl = leap_fh_client_new(BASE, 64 * RS, RS, 4);
	assert_int_equal(leap_fh_client_acquire(cl, BASE, 5 * RS, &a), -E2BIG);
	assert_int_equal(leap_fh_client_acquire(cl, BASE - 1, 2, &a), -EINVAL);
	assert_int_equal(leap_fh_client_acquire(cl, BASE + 64 * RS - 1, 2, &a), -EINVAL);
	assert_int_equal(leap_fh_client_acquire(cl, BASE, 0, &a), -EINVAL);
	for (int i = 0; i < 4; i++)
		assert_int_equal(op(&f, cl, id, BASE + (uint64_t)i * RS, 1, &b[i]), 0);
	assert_int_equal(leap_fh_client_acquire(cl, BASE + 9 * RS, 1, &a), -EAGAIN);
	leap_fh_client_release(cl, &b[3]);
	assert_int_equal(op(&f, cl, id, BASE + 9 * RS, 1, &a), 0);
	assert_int_equal(a.nunpin, 1);
	assert_int_equal(a.unpin[0], 3);
	leap_fh_client_release(cl, &a);
	for (int i = 0; i < 3; i++)
		leap_fh_client_release(cl, &b[i]);
	leap_fh_client_free(cl);
	fx_fini(&f);
}

/* A registration failing mid-move: the unpins stand, no pin does. */
static void test_backend_failure(void **state)
{
	struct leap_fh_acquire a;
	struct leap_fh_client *cl;
	uint32_t id;
	struct fx f;
	(void)state;

	fx_init(&f, 64, 8, 2);
	assert_int_equal(leap_fh_server_add_client(f.s, &id), 0);
	cl = leap_fh_client_new(BASE, 64 * RS, RS, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(op(&f, cl, id, BASE + (uint64_t)i * RS, 1, &a), 0);
		leap_fh_client_release(cl, &a);
	}
	f.fake.fail_in = 2; /* region 20 registers, region 21 fails */
	assert_int_equal(op(&f, cl, id, BASE + 20 * RS, 2 * RS, &a), -EIO);
	assert_int_equal(leap_fh_client_held(cl), 2);
	/* the client retries and succeeds; region 20 is a victim by now */
	assert_int_equal(op(&f, cl, id, BASE + 20 * RS, 2 * RS, &a), 0);
	leap_fh_client_release(cl, &a);
	assert_int_equal(leap_fh_client_held(cl), 4);
	leap_fh_client_free(cl);
	fx_fini(&f);
}

/*
 * Randomized model: 4 clients over 64 regions, M = 16 regions (p = 4), one
 * client hammering far more regions than its share, operations held across
 * steps.  After every step the server's invariants hold (refcounts equal
 * holders, victims exactly the unheld registered regions, every client
 * within p) and the pinned bytes never exceed M.
 */
static void test_random_budget(void **state)
{
	struct leap_fh_client *cl[4];
	struct leap_fh_acquire inflight[4][3];
	unsigned ninflight[4] = {0};
	uint32_t id[4];
	unsigned seed = 777;
	uint64_t refused_eagain = 0, ok = 0;
	struct leap_reg_stats st;
	struct fx f;
	(void)state;

	fx_init(&f, 64, 16, 4);
	for (int c = 0; c < 4; c++) {
		assert_int_equal(leap_fh_server_add_client(f.s, &id[c]), 0);
		cl[c] = leap_fh_client_new(BASE, 64 * RS, RS, leap_fh_server_share(f.s));
	}
	for (int step = 0; step < 20000; step++) {
		int c = rand_r(&seed) % 4;
		/* client 0 roams all 64 regions; the others keep a hot set */
		uint64_t span = c == 0 ? 64 : 6;
		uint64_t addr = BASE + (uint64_t)(c * 8 % 64) * RS +
				((uint64_t)rand_r(&seed) % (span * RS));
		uint64_t len = 1 + (uint64_t)rand_r(&seed) % (2 * RS);
		int rc;

		if (addr + len > BASE + 64 * RS)
			len = BASE + 64 * RS - addr;
		if (ninflight[c] && rand_r(&seed) % 2) {
			leap_fh_client_release(cl[c], &inflight[c][--ninflight[c]]);
			continue;
		}
		if (ninflight[c] == 3)
			continue;
		rc = op(&f, cl[c], id[c], addr, len, &inflight[c][ninflight[c]]);
		assert_true(rc == 0 || rc == -EAGAIN);
		if (rc == 0) {
			ok++;
			ninflight[c]++;
		} else {
			refused_eagain++;
		}
		assert_true(f.fake.pinned_bytes <= 16 * RS);
		assert_true(leap_fh_client_held(cl[c]) <= leap_fh_server_share(f.s));
	}
	for (int c = 0; c < 4; c++) {
		while (ninflight[c])
			leap_fh_client_release(cl[c], &inflight[c][--ninflight[c]]);
		leap_fh_client_free(cl[c]);
	}
	leap_fh_server_stats(f.s, &st);
	assert_true(st.pinned_peak <= 16 * RS);
	assert_true(st.victim_hits > 0);
	assert_true(st.moves > 0);
	assert_true(ok > 4000);
	assert_true(st.registrations < ok);
	fx_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_share_and_moves),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_backend_failure),
		cmocka_unit_test(test_random_budget),
	};

	return cmocka_run_group_tests_name("firehose", tests, NULL, NULL);
}
