// SPDX-License-Identifier: MIT
/*
 * The prefetch workers' queues (user/agent/issuer.c) with a stand-in for
 * process_madvise that holds each call until the test lets it go: a full
 * queue drops its oldest windows and counts them, targets are served in
 * turn, a window the program is past is trimmed or dropped, back-to-back
 * windows of one process go out in one call, a budget cuts windows, and
 * stopping discards what is queued.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "issuer.h"

#define CALLS_MAX 1024

/* The stand-in: records each call; blocks while the gate is shut. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool shut;
	unsigned entered; /* calls that reached the stand-in */
	unsigned n;	  /* calls recorded */
	struct {
		uint32_t tgid, n;
		uint64_t first, marker;
	} call[CALLS_MAX];
} fake = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

static int fake_issue(struct prefetcher *pf, uint32_t tgid, uint64_t *pages, uint32_t n,
		      uint64_t marker)
{
	(void)pf;
	pthread_mutex_lock(&fake.lock);
	fake.entered++;
	pthread_cond_broadcast(&fake.cond);
	while (fake.shut)
		pthread_cond_wait(&fake.cond, &fake.lock);
	if (fake.n < CALLS_MAX) {
		fake.call[fake.n].tgid = tgid;
		fake.call[fake.n].n = n;
		fake.call[fake.n].first = pages[0];
		fake.call[fake.n].marker = marker;
		fake.n++;
	}
	pthread_mutex_unlock(&fake.lock);
	return (int)n;
}

/* The stand-in for MADV_COLD: recorded like a window, tagged. */
#define COLD_TAG 0xc01dULL

static int fake_cold(struct prefetcher *pf, uint32_t tgid, uint64_t first, uint32_t n)
{
	(void)pf;
	pthread_mutex_lock(&fake.lock);
	if (fake.n < CALLS_MAX) {
		fake.call[fake.n].tgid = tgid;
		fake.call[fake.n].n = n;
		fake.call[fake.n].first = first;
		fake.call[fake.n].marker = COLD_TAG;
		fake.n++;
	}
	pthread_mutex_unlock(&fake.lock);
	return (int)n;
}

static void gate(bool shut)
{
	pthread_mutex_lock(&fake.lock);
	fake.shut = shut;
	pthread_cond_broadcast(&fake.cond);
	pthread_mutex_unlock(&fake.lock);
}

/* Waits until `calls` calls reached the stand-in (5 s at most). */
static void wait_entered(unsigned calls)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	pthread_mutex_lock(&fake.lock);
	while (fake.entered < calls)
		if (pthread_cond_timedwait(&fake.cond, &fake.lock, &until))
			break;
	pthread_mutex_unlock(&fake.lock);
	assert_true(fake.entered >= calls);
}

/* Waits until nothing is queued and every call has returned. */
static void wait_drained(struct issuer *q, struct issuer_counters *c)
{
	struct prefetch_stats ps;
	struct pagemap_reader pm;

	for (int i = 0; i < 5000; i++) {
		issuer_counters(q, c, &ps, &pm);
		if (c->depth == 0 && c->in_hand == 0)
			return;
		usleep(1000);
	}
	fail_msg("the workers did not drain their queues");
}

static struct prefetcher like;

static uint64_t active_ns; /* 0: the issuer's default */

static struct issuer *start_depth(unsigned workers, double host_rate, unsigned depth)
{
	struct issuer_config cfg = {
		.workers = workers,
		.host_rate = host_rate,
		.queue_depth = depth,
		.active_ns = active_ns,
		.like = &like,
		.issue = fake_issue,
		.cold = fake_cold,
		.streams = 16,
	};
	struct issuer *q;

	pthread_mutex_lock(&fake.lock);
	fake.entered = fake.n = 0;
	fake.shut = false;
	pthread_mutex_unlock(&fake.lock);
	prefetch_init(&like, NULL);
	q = issuer_start(&cfg);
	assert_non_null(q);
	return q;
}

static struct issuer *start(unsigned workers, double host_rate)
{
	return start_depth(workers, host_rate, 0);
}

/* The streams the windows come from (their progress: issuer_progress()). */
static const struct leap_stream_ref stream_a = {.id = 3, .gen = 7};
static const struct leap_stream_ref stream_b = {.id = 4, .gen = 8};

static void submit(struct issuer *q, uint32_t slot, uint32_t tgid, uint64_t first,
		   uint32_t n, int dir, const struct leap_stream_ref *stream)
{
	static struct window_job j; /* pages[] is 8 KiB: not on the stack */

	memset(&j, 0, offsetof(struct window_job, pages));
	j.slot = slot;
	j.tgid = tgid;
	j.n = n;
	if (stream) {
		j.stream = *stream;
		j.has_stream = true;
	}
	for (uint32_t i = 0; i < n; i++)
		j.pages[i] = first + (uint64_t)((int64_t)i * dir);
	j.marker = j.pages[n - 1];
	assert_true(issuer_submit(q, &j));
}

/* Queues a MADV_COLD range of n pages from first (not a window). */
static void submit_cold(struct issuer *q, uint32_t slot, uint32_t tgid, uint64_t first,
			uint32_t n, const struct leap_stream_ref *stream)
{
	static struct window_job j;

	memset(&j, 0, offsetof(struct window_job, pages));
	j.cold = true;
	j.slot = slot;
	j.tgid = tgid;
	j.n = n;
	j.pages[0] = first;
	if (stream) {
		j.stream = *stream;
		j.has_stream = true;
	}
	assert_true(issuer_submit(q, &j));
}

static uint64_t issuer_counters_depth(struct issuer *q)
{
	struct issuer_counters c;
	struct prefetch_stats ps;
	struct pagemap_reader pm;

	issuer_counters(q, &c, &ps, &pm);
	return c.depth;
}

static bool issued_first(uint32_t tgid, uint64_t first)
{
	for (unsigned i = 0; i < fake.n; i++)
		if (fake.call[i].tgid == tgid && fake.call[i].first == first)
			return true;
	return false;
}

/*
 * One worker held in its first call; target 1 queues 3 windows more than
 * its queue holds: its 3 oldest go (overflow 3), the newest are issued;
 * target 2's one window is untouched and goes out among the first, not
 * behind target 1's whole queue.
 */
static void test_overflow_drops_oldest_and_serves_in_turn(void **state)
{
	struct issuer_counters c;
	struct issuer *q;
	const uint32_t extra = 3;
	(void)state;

	q = start(1, 0);
	gate(true);
	submit(q, 0, 99, 5000, 4, 1, NULL); /* the call the worker is held in */
	wait_entered(1);
	/* Distinct processes: nothing coalesces. */
	for (uint32_t i = 0; i < ISSUER_QUEUE_MAX + extra; i++)
		submit(q, 1, 1000 + i, 100 * i, 4, 1, NULL);
	submit(q, 2, 2000, 7000, 4, 1, NULL);
	gate(false);
	wait_drained(q, &c);

	assert_int_equal(c.overflow, extra);
	assert_int_equal(c.queued, ISSUER_QUEUE_MAX + extra + 2);
	assert_int_equal(c.issued, ISSUER_QUEUE_MAX + 2);
	assert_int_equal(c.max_depth, ISSUER_QUEUE_MAX + 1);
	for (uint32_t i = 0; i < extra; i++)
		assert_false(issued_first(1000 + i, 100 * i));
	for (uint32_t i = extra; i < ISSUER_QUEUE_MAX + extra; i++)
		assert_true(issued_first(1000 + i, 100 * i));
	/* Round-robin: target 2 right after target 1's first window. */
	assert_int_equal(fake.call[0].tgid, 99);
	assert_int_equal(fake.call[2].tgid, 2000);
	issuer_stop(q);
}

/* How many calls reached the stand-in after `ms` milliseconds more. */
static unsigned entered_after(unsigned ms)
{
	unsigned n;

	usleep(ms * 1000);
	pthread_mutex_lock(&fake.lock);
	n = fake.entered;
	pthread_mutex_unlock(&fake.lock);
	return n;
}

/*
 * Shares of the workers: a target alone may use every worker; with a
 * second target active (it queued a window lately), each holds at most
 * half, so the second's next window finds a worker free at once instead
 * of waiting behind the first's calls.
 */
static void test_share_of_workers(void **state)
{
	struct issuer_counters c;
	struct issuer *q;
	(void)state;

	active_ns = 60ULL * 1000 * 1000 * 1000; /* active all test long */
	/* Alone: two windows (two processes), two workers in calls. */
	q = start(2, 0);
	gate(true);
	submit(q, 1, 1000, 100, 4, 1, NULL);
	submit(q, 1, 1001, 200, 4, 1, NULL);
	wait_entered(2);
	gate(false);
	wait_drained(q, &c);
	issuer_stop(q);

	/* Target 2 made active by a cold range (which the stand-in does not
	 * hold): target 1 gets one worker of the two. */
	q = start(2, 0);
	submit_cold(q, 2, 2000, 0, 1, NULL);
	wait_drained(q, &c);
	gate(true);
	submit(q, 1, 1000, 100, 4, 1, NULL);
	wait_entered(1);
	submit(q, 1, 1001, 200, 4, 1, NULL);
	assert_int_equal(entered_after(30), 1); /* target 1's second waits */
	submit(q, 2, 2001, 300, 4, 1, NULL);
	wait_entered(2); /* target 2's window: the free worker, now */
	gate(false);
	wait_drained(q, &c);
	assert_int_equal(c.issued, 3);
	assert_true(issued_first(1001, 200));
	issuer_stop(q);
	active_ns = 0;
}

/*
 * queue_depth = 1: each new window replaces the one waiting, and the
 * newest is the one issued (the queue of one keeps its head and tail
 * straight: none is lost nor issued twice).  A depth past the most is
 * refused.
 */
static void test_queue_of_one(void **state)
{
	struct issuer_config bad = {.workers = 1,
				    .queue_depth = ISSUER_QUEUE_MAX + 1,
				    .like = &like,
				    .issue = fake_issue};
	struct issuer_counters c;
	struct issuer *q;
	(void)state;

	q = start_depth(1, 0, 1);
	gate(true);
	submit(q, 0, 99, 5000, 4, 1, NULL);
	wait_entered(1);
	for (uint32_t i = 0; i < 5; i++)
		submit(q, 1, 1000 + i, 100 * i, 4, 1, NULL);
	assert_int_equal(issuer_counters_depth(q), 1);
	gate(false);
	wait_drained(q, &c);

	assert_int_equal(c.overflow, 4);
	assert_int_equal(c.overflow_slot[1], 4);
	assert_int_equal(c.overflow_slot[0], 0);
	assert_int_equal(c.issued, 2);
	assert_int_equal(fake.n, 2);
	assert_true(issued_first(1004, 400));
	assert_int_equal(c.max_depth, 1);
	issuer_stop(q);

	assert_null(issuer_start(&bad));
}

/* Windows of one process queued back to back go out in one call. */
static void test_coalesce(void **state)
{
	struct issuer_counters c;
	struct issuer *q;
	(void)state;

	q = start(1, 0);
	gate(true);
	submit(q, 0, 99, 9000, 1, 1, NULL);
	wait_entered(1);
	submit(q, 1, 42, 100, 8, 1, NULL);
	submit(q, 1, 42, 108, 8, 1, NULL);
	submit(q, 1, 42, 116, 8, 1, NULL);
	gate(false);
	wait_drained(q, &c);
	assert_int_equal(c.coalesced, 2);
	assert_int_equal(fake.n, 2);
	assert_int_equal(fake.call[1].tgid, 42);
	assert_int_equal(fake.call[1].n, 24);
	assert_int_equal(fake.call[1].first, 100);
	assert_int_equal(fake.call[1].marker, 123); /* the newest window's */
	issuer_stop(q);
}

/*
 * A fill's MADV_COLD range queued between two windows of its process:
 * neither joined to them, nor trimmed (it is all behind the program by
 * design), nor cut by a budget, nor counted as a window; it goes out in
 * its turn.
 */
static void test_cold_range_rides_the_queue(void **state)
{
	struct issuer_counters c;
	struct issuer *q;
	(void)state;

	q = start(1, 0);
	issuer_progress(q, stream_a, 5000);
	issuer_set_rate(q, 1, 2); /* two pages a second: one per window */
	gate(true);
	submit(q, 0, 99, 9000, 1, 1, NULL);
	wait_entered(1);
	submit(q, 1, 42, 6000, 1, 1, &stream_a);
	/* 1000..1255: behind the program at 5000 */
	submit_cold(q, 1, 42, 1000, 256, &stream_a);
	submit(q, 1, 42, 6001, 1, 1, &stream_a);
	gate(false);
	wait_drained(q, &c);

	assert_int_equal(fake.n, 4);
	assert_int_equal(fake.call[1].first, 6000);
	assert_int_equal(fake.call[2].marker, COLD_TAG);
	assert_int_equal(fake.call[2].first, 1000);
	assert_int_equal(fake.call[2].n, 256);
	assert_int_equal(fake.call[3].first, 6001);
	assert_int_equal(c.coalesced, 0);
	assert_int_equal(c.stale, 0);
	assert_int_equal(c.cold_jobs, 1);
	assert_int_equal(c.queued, 3);
	assert_int_equal(c.issued, 3);
	issuer_stop(q);
}

/*
 * The stream faulted at page 103 while its windows waited: pages at or
 * behind it are trimmed (ascending and descending windows), a window all
 * behind it is dropped without a call, and another stream's progress
 * does not count.
 */
static void test_stale_windows_trimmed(void **state)
{
	struct issuer_counters c;
	struct issuer *q;
	(void)state;

	q = start(1, 0);
	issuer_progress(q, stream_a, 103);
	issuer_progress(q, stream_b, 50);
	gate(true);
	submit(q, 0, 99, 9000, 1, 1, NULL);
	wait_entered(1);
	submit(q, 1, 42, 100, 8, 1, &stream_a);	 /* 100..107 */
	submit(q, 2, 43, 90, 8, 1, &stream_b);	 /* another stream: ahead of its 50 */
	submit(q, 3, 42, 106, 8, -1, &stream_a); /* 106..99 going down */
	submit(q, 4, 42, 10, 8, 1, &stream_a);	 /* all behind */
	gate(false);
	wait_drained(q, &c);
	assert_int_equal(fake.n, 4);
	assert_int_equal(fake.call[1].n, 4); /* 104..107 */
	assert_int_equal(fake.call[1].first, 104);
	assert_int_equal(fake.call[2].n, 8); /* another stream: untouched */
	assert_int_equal(fake.call[3].n, 4); /* 102..99: still ahead, going down */
	assert_int_equal(fake.call[3].first, 102);
	assert_int_equal(c.stale, 1);
	assert_int_equal(c.stale_pages, 4 + 4 + 8);
	issuer_stop(q);
}

/*
 * A stream's table slot evicted and taken by another stream of the same
 * process (a thread's stream, say) while the first one's window waits:
 * the newcomer's progress (far ahead) must not trim that window.  Before
 * the issuer owned the progress values, workers read the stream table's
 * last_page through a pointer, guarded by a tgid compare that the same
 * process passes: this window was dropped whole as stale.
 */
static void test_reused_stream_slot(void **state)
{
	const struct leap_stream_ref newcomer = {.id = stream_a.id,
						 .gen = stream_a.gen + 1};
	struct issuer_counters c;
	struct issuer *q;
	(void)state;

	q = start(1, 0);
	issuer_progress(q, stream_a, 99);
	gate(true);
	submit(q, 0, 99, 9000, 1, 1, NULL);
	wait_entered(1);
	submit(q, 1, 42, 100, 8, 1, &stream_a); /* 100..107 */
	issuer_progress(q, newcomer, 5000);
	gate(false);
	wait_drained(q, &c);
	assert_int_equal(fake.n, 2);
	assert_int_equal(fake.call[1].first, 100);
	assert_int_equal(fake.call[1].n, 8);
	assert_int_equal(c.stale_pages, 0);
	issuer_stop(q);
}

/* A target's budget of 10 pages a second cuts a 32-page window to 10. */
static void test_budget_cuts(void **state)
{
	struct issuer_counters c;
	struct issuer *q;
	(void)state;

	q = start(1, 0);
	issuer_set_rate(q, 5, 10);
	submit(q, 5, 42, 100, 32, 1, NULL);
	wait_drained(q, &c);
	assert_int_equal(fake.n, 1);
	assert_true(fake.call[0].n >= 10 && fake.call[0].n <= 11);
	assert_int_equal(c.budget_pages, 32 - fake.call[0].n);
	/* Another target is not held to it. */
	submit(q, 6, 43, 100, 32, 1, NULL);
	wait_drained(q, &c);
	assert_int_equal(fake.call[1].n, 32);
	issuer_stop(q);
}

static void *open_gate_later(void *arg)
{
	(void)arg;
	usleep(50 * 1000);
	gate(false);
	return NULL;
}

/* Stopping discards what is queued: only the call in flight completes. */
static void test_stop_discards_queued(void **state)
{
	struct issuer *q;
	pthread_t t;
	(void)state;

	q = start(2, 0);
	gate(true);
	submit(q, 0, 99, 9000, 1, 1, NULL);
	submit(q, 1, 98, 9000, 1, 1, NULL);
	wait_entered(2);
	for (uint32_t i = 0; i < 20; i++)
		submit(q, 2 + i % 3, 1000 + i, 100, 4, 1, NULL);
	assert_int_equal(pthread_create(&t, NULL, open_gate_later, NULL), 0);
	issuer_stop(q); /* discards, then joins the two held workers */
	pthread_join(t, NULL);
	assert_int_equal(fake.n, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_overflow_drops_oldest_and_serves_in_turn),
		cmocka_unit_test(test_queue_of_one),
		cmocka_unit_test(test_share_of_workers),
		cmocka_unit_test(test_coalesce),
		cmocka_unit_test(test_cold_range_rides_the_queue),
		cmocka_unit_test(test_stale_windows_trimmed),
		cmocka_unit_test(test_reused_stream_slot),
		cmocka_unit_test(test_budget_cuts),
		cmocka_unit_test(test_stop_discards_queued),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
