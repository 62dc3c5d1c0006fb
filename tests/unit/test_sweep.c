// SPDX-License-Identifier: MIT
/*
 * Sweeps (user/lib/sweep.c): a shared region read upwards by several
 * processes at once forms one front, through the decision core as the
 * agent runs it.  The input is PostgreSQL's parallel sequential scan as a
 * recording showed it (docs/agent.md, "Sweeps"): three processes take
 * chunks of 64 pages of one shmem object in turns from a shared counter,
 * each mapping it at an address of its own; the kernel's cluster around a
 * miss serves the next pages.  Each input runs with sweeps and without
 * (the per-process streams and lanes the agent had before), side by side.
 */
#include <string.h>

#include "core_test.h"

#define MISS	(LEAP_EV_MAJOR | LEAP_EV_SWAPIN_IO)
#define OBJECT	6000u /* pages of the shared object */
#define READERS 3u
#define CHUNK	64u
#define REGION	42u

/* Where each reader maps the object: addresses of its own. */
static const uint64_t base[READERS] = {0x100000, 0x250000, 0x3a0000};

static uint32_t reader_of(uint32_t tgid)
{
	return tgid - 100;
}

static bool port_region(void *ctx, uint32_t tgid, uint64_t page,
			struct leap_region_at *at)
{
	uint32_t k = reader_of(tgid);

	(void)ctx;
	if (k >= READERS || page < base[k] || page >= base[k] + OBJECT)
		return false;
	*at = (struct leap_region_at){.id = REGION,
				      .index = page - base[k],
				      .first = base[k],
				      .end = base[k] + OBJECT};
	return true;
}

static bool port_shmem(void *ctx, uint32_t tgid, uint64_t page)
{
	struct leap_region_at at;

	return port_region(ctx, tgid, page, &at);
}

static const struct leap_core_facts port = {.shmem = port_shmem, .region = port_region};

/* The same object seen as private memory: no shmem, no region. */
static bool port_none(void *ctx, uint32_t tgid, uint64_t page)
{
	(void)ctx;
	(void)tgid;
	(void)page;
	return false;
}

static bool port_no_region(void *ctx, uint32_t tgid, uint64_t page,
			   struct leap_region_at *at)
{
	(void)ctx;
	(void)tgid;
	(void)page;
	(void)at;
	return false;
}

static const struct leap_core_facts private_port = {.shmem = port_none,
						    .region = port_no_region};

/* Pages the kernel reads from a miss on (the cluster), and the port the
 * core asks: the defaults, or a test's. */
static uint32_t cluster = 4;
static const struct leap_core_facts *facts = &port;

/* pw_max of the policy (0: the default). */
static uint32_t pw_max;

static struct leap_core *core_new(bool sweeps, uint32_t lanes, uint32_t *target)
{
	struct leap_core_config cfg = {
		.streams = 64, .cold_chunk = 16, .kra_trust = 3, .sweeps = sweeps};
	struct leap_core_env env = {
		.swap = {.sync_pct = 0}, .ra_pages = 8, .can_prefetch = true};
	struct leap_core_policy p = {.mode = LEAP_CORE_LEAP};
	struct leap_core *c = test_core_new(cfg, &env);

	leap_params_default(&p.params);
	p.params.lanes = lanes;
	if (pw_max)
		p.params.pw_max = pw_max;
	*target = leap_core_target_add(c, &p);
	assert_true(*target < LEAP_CORE_TARGETS);
	return c;
}

/* What one run of an input did. */
struct run {
	uint32_t reads;	    /* pages the readers read */
	uint32_t misses;    /* ... that nobody had brought in */
	uint32_t covered;   /* ... that a window had planned before the read */
	uint32_t windows;   /* windows planned */
	uint32_t pages;	    /* their pages */
	uint32_t misplaced; /* window pages outside the faulting reader's mapping,
			     * or a region's not ahead of what it had read */
	uint64_t sweep_windows;
	uint32_t widest;      /* the widest region window */
	uint32_t swept_quiet; /* a sweep's misses that quieted their thread */
	uint32_t gapped;      /* windows with a page between two of theirs left out */
	uint64_t gap_pages;   /* the core's shared_gap_pages */
};

/* Per object page: 0 absent, 1 read by the kernel's cluster, 2 + k planned
 * by reader k's window. */
static uint8_t state[OBJECT];

/*
 * Feeds accesses[] (reader, object index) as the observer would send
 * them: a page a window of the same reader planned is a hit (an event), a
 * page another reader's window or a cluster brought in is read without an
 * event (its prefetched-page entry is the other reader's), the rest are
 * misses, whose cluster brings in the next cluster - 1 pages.
 */
static struct run feed(bool sweeps, uint32_t lanes, const uint32_t (*acc)[2], uint32_t n)
{
	uint32_t t;
	struct leap_core *c = core_new(sweeps, lanes, &t);
	struct run out = {0};
	uint64_t highest = 0;

	memset(state, 0, sizeof(state));
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = acc[i][0], idx = acc[i][1];
		uint8_t st = state[idx];
		struct leap_event ev = {.ts_ns = 1000000 + 20000ULL * i,
					.cgroup_id = 7,
					.addr = (base[k] + idx) << LEAP_PAGE_SHIFT,
					.tgid = 100 + k,
					.tid = 100 + k,
					.latency_ns = 100000};
		const struct leap_core_plan *pl;

		out.reads++;
		out.covered += st >= 2;
		if (st >= 2 && st != 2 + k)
			continue; /* another reader's prefetched page: no event */
		if (st == 1)
			continue; /* the kernel's cluster: a swap-cache hit, sent only
				   * on the fentry path; left out */
		if (st == 0) {
			out.misses++;
			ev.flags = MISS;
			for (uint32_t j = idx; j < idx + cluster && j < OBJECT; j++)
				if (!state[j])
					state[j] = 1;
		} else {
			ev.flags = LEAP_EV_PREFETCHED;
		}
		if (idx > highest)
			highest = idx;
		pl = leap_core_event(c, t, &ev, facts);
		out.swept_quiet += pl->swept && pl->quiet == LEAP_QUIET_SET;
		if (!pl->n)
			continue;
		out.windows++;
		out.gapped += pl->n > 1 && (pl->pages[1] - pl->pages[0] == 2 ||
					    pl->pages[0] - pl->pages[1] == 2);
		if (pl->swept && pl->n > out.widest)
			out.widest = pl->n;
		for (uint32_t j = 0; j < pl->n; j++) {
			uint64_t page = pl->pages[j];

			out.pages++;
			if (page < base[k] || page >= base[k] + OBJECT) {
				out.misplaced++;
				continue;
			}
			if (pl->swept && page - base[k] <= highest)
				out.misplaced++;
			if (!state[page - base[k]])
				state[page - base[k]] = (uint8_t)(2 + k);
		}
	}
	out.sweep_windows = leap_core_counters(c)->sweep_windows;
	out.gap_pages = leap_core_counters(c)->shared_gap_pages;
	leap_core_free(c);
	return out;
}

static uint32_t accesses[OBJECT * 2][2];

/* The parallel scan: each reader takes the next chunk of the counter when
 * its own is done and reads one page a turn, in turns. */
static uint32_t parallel_scan(uint32_t readers)
{
	uint32_t pos[READERS], end[READERS], next = 0, n = 0;
	bool live = true;

	for (uint32_t k = 0; k < readers; k++) {
		pos[k] = next;
		end[k] = next + CHUNK;
		next += CHUNK;
	}
	while (live) {
		live = false;
		for (uint32_t k = 0; k < readers; k++) {
			if (pos[k] == end[k] && next < OBJECT) {
				pos[k] = next;
				end[k] = next + CHUNK;
				next += CHUNK;
			}
			if (pos[k] >= end[k] || pos[k] >= OBJECT)
				continue;
			accesses[n][0] = k;
			accesses[n][1] = pos[k]++;
			n++;
			live = true;
		}
	}
	return n;
}

static void test_parallel_scan_one_front(void **state_)
{
	uint32_t n = parallel_scan(READERS);
	struct run off = feed(false, LEAP_DEFAULT_LANES, accesses, n);
	struct run one = feed(false, 1, accesses, n);
	struct run on = feed(true, LEAP_DEFAULT_LANES, accesses, n);
	(void)state_;

	print_message(
		"# parallel scan, 3 readers, %u reads: misses / prefetched before use / "
		"windows: per-process streams, lanes %u / %u / %u; single history %u / "
		"%u / %u; sweeps %u / %u / %u (%u region windows)\n",
		n, off.misses, off.covered, off.windows, one.misses, one.covered,
		one.windows, on.misses, on.covered, on.windows,
		(unsigned)on.sweep_windows);
	assert_int_equal(on.reads, OBJECT);
	/* One front: windows of the region, through every reader, each in
	 * the reader's own mapping and ahead of what was read. */
	assert_true(on.sweep_windows > 10);
	assert_int_equal(on.misplaced, 0);
	assert_true(on.covered > OBJECT * 8 / 10);
	/* The front moves at every reader's misses: none waits for a batch. */
	assert_int_equal(on.swept_quiet, 0);
	/* Against the streams each process has of its own fragment. */
	assert_true(on.misses * 3 < off.misses);
	assert_true(on.misses * 3 < one.misses);
	assert_true(on.covered > off.covered + OBJECT / 4);
	assert_int_equal(off.sweep_windows, 0);
}

/* The policy's pw_max bounds the region's windows too, the first one
 * (32 pages) included. */
static void test_pw_max_bounds_region_windows(void **state_)
{
	uint32_t n = parallel_scan(READERS);
	struct run wide, narrow;
	(void)state_;

	wide = feed(true, LEAP_DEFAULT_LANES, accesses, n);
	pw_max = 16;
	narrow = feed(true, LEAP_DEFAULT_LANES, accesses, n);
	pw_max = 0;
	print_message("# widest region window: %u pages (pw_max %u), %u (pw_max 16)\n",
		      wide.widest, LEAP_DEFAULT_PW_MAX, narrow.widest);
	assert_true(wide.widest > 16);
	assert_true(narrow.sweep_windows > 10);
	assert_true(narrow.widest <= 16);
}

/* One reader alone is its own stream's: no region window. */
static void test_one_reader_left_to_its_stream(void **state_)
{
	uint32_t n = parallel_scan(1);
	struct run off = feed(false, LEAP_DEFAULT_LANES, accesses, n);
	struct run on = feed(true, LEAP_DEFAULT_LANES, accesses, n);
	(void)state_;

	assert_int_equal(on.sweep_windows, 0);
	assert_int_equal(on.windows, off.windows);
	assert_int_equal(on.pages, off.pages);
	assert_int_equal(on.misses, off.misses);
}

/*
 * One reader whose misses come two pages apart (the pages between read by
 * the kernel's pair around each miss, swapin_nr_pages() at 2, which sends
 * no event in shared memory): the engine finds a stride of 2.  In shared
 * memory its windows get the pages between (core.c, close_shared_gaps());
 * the same misses in private memory keep the stride's windows.  The
 * input is the misses alone, so what it shows is the rule, not its gain
 * (measured live: docs/bench-real.md, 2026-12-02, night).
 */
static void test_two_apart_in_shared_memory(void **state_)
{
	struct run shared, private;
	uint32_t n = 0;
	(void)state_;

	for (uint32_t i = 0; i < OBJECT; i += 2) {
		accesses[n][0] = 0;
		accesses[n][1] = i;
		n++;
	}
	cluster = 1;
	shared = feed(true, LEAP_DEFAULT_LANES, accesses, n);
	facts = &private_port;
	private = feed(true, LEAP_DEFAULT_LANES, accesses, n);
	facts = &port;
	cluster = 4;
	print_message(
		"# misses two pages apart: shared memory %u windows (%u two pages a "
		"step), %u pages (%u added between); private %u windows (%u two "
		"pages a step), %u pages\n",
		shared.windows, shared.gapped, shared.pages, (unsigned)shared.gap_pages,
		private.windows, private.gapped, private.pages);
	assert_int_equal(shared.sweep_windows, 0);
	/* Private memory: the stride's windows, every other page. */
	assert_true(private.gapped > 10);
	assert_int_equal(private.gap_pages, 0);
	/* Shared memory: the same windows with the pages between. */
	assert_int_equal(shared.gapped, 0);
	assert_true(shared.gap_pages > OBJECT / 4);
	assert_true(shared.pages > private.pages + OBJECT / 4);
}

/* Three readers at random places: no front, no region window. */
static void test_random_readers_no_sweep(void **state_)
{
	uint64_t x = 88172645463325252ULL;
	struct run on;
	(void)state_;

	for (uint32_t i = 0; i < 3000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		accesses[i][0] = i % READERS;
		accesses[i][1] = (uint32_t)(x % OBJECT);
	}
	on = feed(true, LEAP_DEFAULT_LANES, accesses, 3000);
	print_message("# random reads, 3 readers: %u region windows\n",
		      (unsigned)on.sweep_windows);
	assert_int_equal(on.sweep_windows, 0);
}

/* The sweep itself: far accesses take the front elsewhere; the window
 * doubles while the sweep lasts and starts past the kernel's reach. */
static void test_sweep_front(void **state_)
{
	struct leap_sweep_params p;
	struct leap_sweep_step st;
	struct leap_sweep s;
	uint32_t first_n = 0, last_n = 0, windows = 0;
	(void)state_;

	leap_sweep_params_default(&p);
	p.ra_pages = 8;
	leap_sweep_init(&s, 7);
	for (uint32_t i = 0; i < 400; i++) {
		leap_sweep_access(&s, &p, 1 + i % 2, 1000 + 2 * i, 1000 * i, &st);
		if (!st.n)
			continue;
		assert_true(st.sweeping);
		assert_true(st.first > 1000 + 2 * i + p.ra_pages);
		if (!windows++)
			first_n = st.n;
		last_n = st.n;
	}
	assert_int_equal(first_n, p.pw_first);
	assert_true(last_n <= p.pw_max);
	assert_true(windows > 3);
	assert_int_equal(s.restarts, 0);
	/* Four far accesses take the score from its ceiling to 0. */
	for (uint32_t i = 0; i < 4; i++)
		leap_sweep_access(&s, &p, 1, 900000 + 5000 * i, 500000 + i, &st);
	assert_int_equal(s.restarts, 1);
	assert_false(st.sweeping);
	/* One reader alone never sweeps. */
	leap_sweep_init(&s, 8);
	for (uint32_t i = 0; i < 100; i++) {
		leap_sweep_access(&s, &p, 5, 10 + i, 1000 * i, &st);
		assert_false(st.sweeping);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parallel_scan_one_front),
		cmocka_unit_test(test_pw_max_bounds_region_windows),
		cmocka_unit_test(test_one_reader_left_to_its_stream),
		cmocka_unit_test(test_two_apart_in_shared_memory),
		cmocka_unit_test(test_random_readers_no_sweep),
		cmocka_unit_test(test_sweep_front),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
