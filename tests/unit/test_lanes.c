// SPDX-License-Identifier: MIT
/*
 * Lanes (user/lib/lanes.c): streams interleaved in one process each get
 * their own history, through the decision core as the agent runs it.  Each
 * input runs twice, with the paper's single history (lanes 1) beside the
 * default, so what the lanes change is stated, not assumed.
 */
#include <string.h>

#include "core_test.h"

#define MISS (LEAP_EV_MAJOR | LEAP_EV_SWAPIN_IO)

/* What one run of an input planned. */
struct run {
	uint32_t windows;
	uint32_t hits;		       /* faults on pages planned before */
	uint32_t pages_in[2];	       /* window pages inside region 0 / 1 */
	uint32_t windows_in[2];	       /* windows whose first page is in region 0 / 1 */
	struct leap_stream_ref ids[2]; /* the stream each region's windows came from */
	bool two_ids_in_one_region;
};

struct region {
	uint64_t lo, hi; /* [lo, hi) */
};

static struct leap_core *core_new(uint32_t lanes, enum leap_flavor flavor,
				  uint32_t *target)
{
	struct leap_core_config cfg = {.streams = 64, .cold_chunk = 16, .kra_trust = 3};
	struct leap_core_env env = {.swap = {.sync_pct = 0}, .can_prefetch = true};
	struct leap_core_policy p = {.mode = LEAP_CORE_LEAP};
	struct leap_core *c = test_core_new(cfg, &env);

	leap_params_default(&p.params);
	p.params.lanes = lanes;
	p.params.flavor = flavor;
	*target = leap_core_target_add(c, &p);
	assert_true(*target < LEAP_CORE_TARGETS);
	return c;
}

static int region_of(const struct region *r, uint64_t page)
{
	for (int i = 0; i < 2; i++)
		if (page >= r[i].lo && page < r[i].hi)
			return i;
	return -1;
}

#define PLANNED_MAX 8192

/* Pages planned so far: a fault on one of them is a prefetch hit. */
static uint64_t planned[PLANNED_MAX];
static uint32_t nplanned;

static bool was_planned(uint64_t page)
{
	for (uint32_t i = 0; i < nplanned; i++)
		if (planned[i] == page)
			return true;
	return false;
}

/* Feeds pages[] as faults of one thread, a page a window planned before
 * as a hit, the rest as misses; tallies the windows by region. */
static struct run feed(uint32_t lanes, enum leap_flavor flavor, const uint64_t *pages,
		       uint32_t n, const struct region *r)
{
	uint32_t t;
	struct leap_core *c = core_new(lanes, flavor, &t);
	struct run out = {0};
	bool have[2] = {false, false};

	nplanned = 0;
	for (uint32_t i = 0; i < n; i++) {
		bool hit = was_planned(pages[i]);
		struct leap_event ev = {.ts_ns = 1000 + i,
					.cgroup_id = 7,
					.addr = pages[i] << LEAP_PAGE_SHIFT,
					.tgid = 100,
					.tid = 100,
					.flags = hit ? LEAP_EV_PREFETCHED : MISS};
		const struct leap_core_plan *pl = leap_core_event(c, t, &ev, NULL);
		int at;

		out.hits += hit;
		if (!pl->n)
			continue;
		out.windows++;
		for (uint32_t k = 0; k < pl->n; k++) {
			at = region_of(r, pl->pages[k]);
			if (at >= 0)
				out.pages_in[at]++;
			if (nplanned < PLANNED_MAX)
				planned[nplanned++] = pl->pages[k];
		}
		at = region_of(r, pl->pages[0]);
		if (at < 0)
			continue;
		out.windows_in[at]++;
		if (have[at] && (out.ids[at].id != pl->stream.id ||
				 out.ids[at].gen != pl->stream.gen))
			out.two_ids_in_one_region = true;
		out.ids[at] = pl->stream;
		have[at] = true;
	}
	assert_int_equal(leap_core_counters(c)->windows, out.windows);
	leap_core_free(c);
	return out;
}

/*
 * An index scan's two streams: each index leaf, then the table page it
 * points to, both ascending, far apart (an index-order scan where both
 * fault at the same rate; c[i] = a[i] + b[i] alike).  The single history
 * sees +D, -D+1, +D, ... and finds no majority: no window at all.  With
 * lanes each stream has its own +1 trend and its own windows.
 */
static void test_index_and_heap(void **state)
{
	const struct region r[2] = {{10000, 10600}, {500000, 500600}};
	uint64_t pages[1000];
	struct run one, lanes;
	(void)state;

	for (uint32_t i = 0; i < 500; i++) {
		pages[2 * i] = r[0].lo + i;
		pages[2 * i + 1] = r[1].lo + i;
	}
	one = feed(1, LEAP_FLAVOR_OURS, pages, 1000, r);
	lanes = feed(LEAP_DEFAULT_LANES, LEAP_FLAVOR_OURS, pages, 1000, r);
	print_message("# index+heap, 1,000 faults: single history %u windows; lanes %u "
		      "windows (%u / %u pages in the index / the heap), %u hits\n",
		      one.windows, lanes.windows, lanes.pages_in[0], lanes.pages_in[1],
		      lanes.hits);
	assert_int_equal(one.windows, 0);
	assert_true(lanes.hits > 900);
	/* Each stream its windows, most pages of both prefetched. */
	assert_true(lanes.windows_in[0] > 5);
	assert_true(lanes.windows_in[1] > 5);
	assert_true(lanes.pages_in[0] > 450);
	assert_true(lanes.pages_in[1] > 450);
	/* Two streams, one per region, each kept. */
	assert_false(lanes.two_ids_in_one_region);
	assert_true(lanes.ids[0].id != lanes.ids[1].id);
	/* The paper's flavour keeps the paper's single history. */
	one = feed(1, LEAP_FLAVOR_PAPER, pages, 1000, r);
	lanes = feed(LEAP_DEFAULT_LANES, LEAP_FLAVOR_PAPER, pages, 1000, r);
	assert_int_equal(lanes.windows, one.windows);
	assert_int_equal(lanes.pages_in[0], one.pages_in[0]);
	assert_int_equal(lanes.pages_in[1], one.pages_in[1]);
}

/*
 * One stream keeps one lane: a stride of 16 pages whose windows reach far
 * past max_delta (32 strides), with a stray fault far away every 50
 * misses.  Lanes and a single history plan the stride's windows alike, from
 * one stream.
 */
static void test_one_stream_one_lane(void **state)
{
	const struct region r[2] = {{1000, 1000 + 16 * 4000}, {900000, 900001}};
	uint64_t pages[800];
	struct run one, lanes;
	(void)state;

	for (uint32_t i = 0; i < 800; i++)
		pages[i] = i % 50 == 49 ? r[1].lo : r[0].lo + 16 * (uint64_t)i;
	one = feed(1, LEAP_FLAVOR_OURS, pages, 800, r);
	lanes = feed(LEAP_DEFAULT_LANES, LEAP_FLAVOR_OURS, pages, 800, r);
	print_message(
		"# stride 16 with a stray fault every 50: single history %u windows "
		"(%u pages, %u hits), lanes %u (%u pages, %u hits)\n",
		one.windows_in[0], one.pages_in[0], one.hits, lanes.windows_in[0],
		lanes.pages_in[0], lanes.hits);
	assert_false(lanes.two_ids_in_one_region);
	assert_true(lanes.hits > 700);
	assert_true(lanes.hits >= one.hits);
	assert_true(lanes.pages_in[0] >= one.pages_in[0]);
	/* The stray page is a lane of its own, never a window's start. */
	assert_int_equal(lanes.windows_in[1], 0);
}

/* Random misses: no lane finds a trend, as the single history finds none;
 * a key never holds more than its lanes. */
static void test_random_bounded(void **state)
{
	const struct region r[2] = {{0, 1ULL << 40}, {1ULL << 41, (1ULL << 41) + 1}};
	struct leap_params p;
	struct leap_table t;
	uint64_t pages[2000], x = 12345;
	struct run one, lanes;
	(void)state;

	for (uint32_t i = 0; i < 2000; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		pages[i] = (x >> 24) & ((1ULL << 30) - 1);
	}
	one = feed(1, LEAP_FLAVOR_OURS, pages, 2000, r);
	lanes = feed(LEAP_DEFAULT_LANES, LEAP_FLAVOR_OURS, pages, 2000, r);
	print_message("# 2,000 random misses: single history %u windows, lanes %u\n",
		      one.windows, lanes.windows);
	assert_true(lanes.windows <= one.windows + 2);

	leap_params_default(&p);
	assert_int_equal(leap_table_init(&t, 64, LEAP_HSIZE_MAX), 0);
	for (uint32_t i = 0; i < 2000; i++)
		leap_history_push(
			&leap_lane_get(&t, leap_key_make(LEAP_KEY_PROCESS, 7, 100, 100),
				       &p, pages[i], i)
				 ->hist,
			pages[i]);
	assert_int_equal(t.used, p.lanes);
	leap_table_free(&t);
}

/* A lane takes the pages of its newest window as its own: a hit there,
 * far past max_delta from its last fault, is the lane's. */
static void test_window_pages_are_the_lanes(void **state)
{
	struct leap_params p;
	struct leap_table t;
	struct leap_stream_key_t key = leap_key_make(LEAP_KEY_PROCESS, 7, 100, 100);
	struct leap_stream *a, *b, *hit;
	(void)state;

	leap_params_default(&p);
	assert_int_equal(leap_table_init(&t, 64, LEAP_HSIZE_MAX), 0);
	a = leap_lane_get(&t, key, &p, 1000, 1);
	leap_history_push(&a->hist, 1000);
	a->ra_armed = true;
	a->ra_marker = 1016;
	a->ra_last = 1000 + 16 * 64;
	b = leap_lane_get(&t, key, &p, 200000, 2);
	leap_history_push(&b->hist, 200000);
	assert_ptr_not_equal(a, b);
	hit = leap_lane_get(&t, key, &p, 1000 + 16 * 60, 3);
	assert_ptr_equal(hit, a);
	/* Just past the window by max_delta: still the lane's; farther: not. */
	assert_ptr_equal(leap_lane_get(&t, key, &p, a->ra_last + p.max_delta, 4), a);
	assert_ptr_not_equal(leap_lane_get(&t, key, &p, a->ra_last + p.max_delta + 1, 5),
			     a);
	leap_table_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_index_and_heap),
		cmocka_unit_test(test_one_stream_one_lane),
		cmocka_unit_test(test_random_bounded),
		cmocka_unit_test(test_window_pages_are_the_lanes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
