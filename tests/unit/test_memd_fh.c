// SPDX-License-Identifier: MIT
/*
 * Firehose through the wire (user/memd/fh.c with libleapreg): clients with
 * libleapreg's client table send FH_MOVE requests encoded and decoded as on
 * the wire, the server registers regions through a fake transport that
 * tracks every live registration.  Checks: the pinned bytes never exceed
 * the budget, the keys a client gets are the live registrations of the
 * regions it asked for, hostile requests change nothing, a client that goes
 * away releases its regions.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fh.h"

#define NREG   64
#define RS     (64 * 1024ULL)
#define BUDGET (12 * RS)
/* Page-aligned only, as leap-memd's store: regions are offsets from it. */
#define BASE 0x100003000ULL

/* ---- a fake transport: registrations by handle = region index + 1 ---- */

static uint32_t live_rkey[NREG]; /* 0: not registered */
static uint64_t pinned, peak, regs, deregs, next_rkey = 0x1000;
static int fail_next;

static int fake_reg(struct leap_conn *l, void *addr, size_t len, uint32_t *rkey,
		    void **handle)
{
	uint64_t i = ((uintptr_t)addr - BASE) / RS;

	(void)l;
	assert_int_equal(len, RS);
	assert_int_equal(((uintptr_t)addr - BASE) % RS, 0);
	assert_true(i < NREG);
	assert_int_equal(live_rkey[i], 0); /* never registered twice */
	if (fail_next) {
		fail_next = 0;
		return -ENOMEM;
	}
	live_rkey[i] = *rkey = (uint32_t)next_rkey++;
	*handle = (void *)(uintptr_t)(i + 1);
	pinned += len;
	if (pinned > peak)
		peak = pinned;
	regs++;
	return 0;
}

static void fake_dereg(struct leap_conn *l, void *handle)
{
	uint64_t i = (uintptr_t)handle - 1;

	(void)l;
	assert_true(i < NREG);
	assert_int_not_equal(live_rkey[i], 0);
	live_rkey[i] = 0;
	pinned -= RS;
	deregs++;
}

static const struct leap_transport fake_t = {
	.name = "fake",
	.reg_region = fake_reg,
	.dereg_region = fake_dereg,
};
static struct leap_conn listener = {.t = &fake_t, .fd = -1};
static uint8_t buf[4096];

static void reset(void)
{
	memset(live_rkey, 0, sizeof(live_rkey));
	pinned = peak = regs = deregs = 0;
	fail_next = 0;
}

/* One FH_MOVE through the encoder, the decoder, the server and back. */
static int move(struct memd_fh *f, uint32_t *id, const uint32_t *un, uint32_t nun,
		const uint32_t *pin, uint32_t npin, struct leap_wire_msg *rep)
{
	struct leap_wire_msg req;
	long n = leap_wire_enc_fh_req(buf, sizeof(buf), 9, nun, un, npin, pin);

	assert_true(n > 0);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &req), 0);
	n = memd_fh_move(f, id, &req, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, rep), 0);
	assert_int_equal(rep->hdr.opcode, LEAP_WOP_FH_MOVE);
	assert_int_equal(rep->hdr.req_id, 9);
	return -(int)rep->u.fh.status;
}

static void test_geometry_and_refusals(void **state)
{
	struct memd_fh f;
	struct leap_wire_msg rep;
	uint32_t id = MEMD_FH_NONE, pins[5] = {0, 1, 2, 3, 4}, bad = NREG;
	uint64_t stat[LEAP_WSTAT_NR] = {0};
	char err[256];
	(void)state;

	reset();
	/* p = 12 / 3 = 4 regions per client */
	assert_int_equal(memd_fh_init(&f, &listener, (void *)(uintptr_t)BASE, NREG * RS,
				      RS, BUDGET, 3, err, sizeof(err)),
			 0);
	assert_int_equal(move(&f, &id, NULL, 0, NULL, 0, &rep), 0);
	assert_int_not_equal(id, MEMD_FH_NONE);
	assert_int_equal(rep.u.fh.share, 4);
	assert_int_equal(rep.u.fh.base, BASE);
	assert_int_equal(rep.u.fh.size, NREG * RS);
	assert_int_equal(rep.u.fh.region_size, RS);
	assert_int_equal(regs, 0); /* nothing registered for a geometry query */
	/* More than the share: refused, nothing registered. */
	assert_int_equal(move(&f, &id, NULL, 0, pins, 5, &rep), -EDQUOT);
	assert_int_equal(rep.u.fh.npin, 0);
	assert_int_equal(regs, 0);
	/* A region past the store: refused. */
	assert_int_equal(move(&f, &id, NULL, 0, &bad, 1, &rep), -EINVAL);
	/* Unpinning what it does not hold: refused. */
	assert_int_equal(move(&f, &id, pins, 1, NULL, 0, &rep), -EINVAL);
	/* A registration failure: reported, nothing held. */
	fail_next = 1;
	assert_int_equal(move(&f, &id, NULL, 0, pins, 1, &rep), -ENOMEM);
	assert_int_equal(move(&f, &id, NULL, 0, pins, 4, &rep), 0);
	assert_int_equal(rep.u.fh.npin, 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(rep.u.fh.rkey[i], live_rkey[i]);
	memd_fh_stats(&f, stat);
	assert_int_equal(stat[LEAP_WSTAT_FH_SHARE], 4);
	assert_int_equal(stat[LEAP_WSTAT_FH_PINNED], 4 * RS);
	assert_true(stat[LEAP_WSTAT_FH_REFUSED] >= 1);
	/* Gone: its regions are victims, still registered (lazy). */
	memd_fh_drop(&f, &id);
	assert_int_equal(id, MEMD_FH_NONE);
	assert_int_equal(pinned, 4 * RS);
	memd_fh_fini(&f);
	assert_int_equal(pinned, 0);
	assert_int_equal(regs, deregs);
}

/* Three clients touching random pages through their tables, one of them
 * streaming over all of the store: moves happen, keys are always the live
 * registration of the page's region, the budget holds at every step. */
static void test_clients_random(void **state)
{
	struct memd_fh f;
	struct leap_fh_client *cl[3];
	uint32_t id[3] = {MEMD_FH_NONE, MEMD_FH_NONE, MEMD_FH_NONE};
	uint64_t stat[LEAP_WSTAT_NR] = {0}, moves = 0, rng = 42;
	struct leap_wire_msg rep;
	char err[256];
	(void)state;

	reset();
	assert_int_equal(memd_fh_init(&f, &listener, (void *)(uintptr_t)BASE, NREG * RS,
				      RS, BUDGET, 3, err, sizeof(err)),
			 0);
	for (int c = 0; c < 3; c++) {
		assert_int_equal(move(&f, &id[c], NULL, 0, NULL, 0, &rep), 0);
		assert_int_equal(rep.u.fh.base, BASE);
		cl[c] = leap_fh_client_new(0, rep.u.fh.size, rep.u.fh.region_size,
					   rep.u.fh.share);
		assert_non_null(cl[c]);
	}
	/* A fourth client gets no share: EUSERS, and no id. */
	{
		uint32_t id4 = MEMD_FH_NONE;

		assert_int_equal(move(&f, &id4, NULL, 0, NULL, 0, &rep), -EUSERS);
		assert_int_equal(rep.u.fh.npin, 0);
		assert_int_equal(id4, MEMD_FH_NONE);
	}
	for (int step = 0; step < 20000; step++) {
		int c = step % 3;
		uint64_t r, page;
		struct leap_fh_acquire a;
		struct leap_reg_key keys[LEAP_FH_MAX_SPAN];
		int rc;

		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		/* clients 1, 2: hot sets of 6 regions; client 0: everywhere */
		r = c == 0 ? (rng >> 33) % NREG : 8 * c + (rng >> 33) % 6;
		page = r * RS + ((rng >> 20) % (RS / 4096)) * 4096; /* offset */
		rc = leap_fh_client_acquire(cl[c], page, 4096, &a);
		if (rc == 1) {
			rc = move(&f, &id[c], a.unpin, a.nunpin, a.pin, a.npin, &rep);
			for (uint32_t i = 0; i < rep.u.fh.npin; i++)
				keys[i] = (struct leap_reg_key){.rkey = rep.u.fh.rkey[i]};
			rc = leap_fh_client_moved(
				cl[c], &a, rc, rep.u.fh.flags & LEAP_WFH_UNPINNED, keys);
			moves++;
		}
		assert_int_equal(rc, 0);
		/* The key used is the live registration of the page's region. */
		assert_int_equal(a.keys[0].rkey, live_rkey[r]);
		assert_true(pinned <= BUDGET);
		leap_fh_client_release(cl[c], &a);
		assert_true(leap_fh_client_held(cl[c]) <= 4);
	}
	memd_fh_stats(&f, stat);
	assert_true(moves > 100);
	assert_int_equal(stat[LEAP_WSTAT_FH_MOVES], moves);
	assert_int_equal(stat[LEAP_WSTAT_FH_REFUSED], 0);
	assert_true(stat[LEAP_WSTAT_FH_PINNED_PEAK] <= BUDGET);
	assert_true(peak <= BUDGET);
	assert_true(stat[LEAP_WSTAT_FH_VICTIM_HITS] > 0);
	for (int c = 0; c < 3; c++) {
		memd_fh_drop(&f, &id[c]);
		leap_fh_client_free(cl[c]);
	}
	memd_fh_fini(&f);
	assert_int_equal(pinned, 0);
}

static void test_bad_config(void **state)
{
	struct memd_fh f;
	char err[256];
	(void)state;

	/* below one region per client */
	assert_int_not_equal(memd_fh_init(&f, &listener, (void *)(uintptr_t)BASE,
					  NREG * RS, RS, 2 * RS, 3, err, sizeof(err)),
			     0);
	assert_non_null(strstr(err, "at least one region"));
	/* region size not dividing the store */
	assert_int_not_equal(memd_fh_init(&f, &listener, (void *)(uintptr_t)BASE,
					  NREG * RS + 4096, RS, BUDGET, 3, err,
					  sizeof(err)),
			     0);
	/* a transport without regions (TCP) */
	assert_int_not_equal(memd_fh_init(&f,
					  &(struct leap_conn){.t = &leap_tcp_transport},
					  (void *)(uintptr_t)BASE, NREG * RS, RS, BUDGET,
					  3, err, sizeof(err)),
			     0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_geometry_and_refusals),
		cmocka_unit_test(test_clients_random),
		cmocka_unit_test(test_bad_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
