// SPDX-License-Identifier: MIT
/*
 * The prefetcher against a real process (this one): range merging, holes
 * (unmapped pages) skipped without losing the rest, the pagemap filter, and
 * a dead pid.  Needs a kernel with process_madvise(MADV_WILLNEED) (>= 5.15).
 *
 * The pagemap filter's two readers (PAGEMAP_SCAN and pread) must agree.
 * With swap on, half the pages of a region are paged out (MADV_PAGEOUT)
 * so that there are swapped pages to find; LEAP_TEST_REQUIRE_SWAP=1
 * (tests/sys/pagemap.t, which sets up swap) makes that mandatory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine_test.h"
#include "../../user/agent/pagemap.h"
#include "../../user/agent/prefetch.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

static int setup(void **state)
{
	const char *why;
	(void)state;

	if (!prefetch_probe_willneed(&why)) {
		fprintf(stderr, "# kernel lacks process_madvise(MADV_WILLNEED): %s\n",
			why);
		return -1;
	}
	return 0;
}

static void test_holes_and_merging(void **state)
{
	struct prefetcher p;
	uint64_t pages[16];
	char *buf = mmap(NULL, 16 * 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t base = (uintptr_t)buf >> 12;
	int rc;
	(void)state;

	assert_true(buf != MAP_FAILED);
	memset(buf, 1, 16 * 4096);
	/* Pages 4..7 are unmapped.  Candidates 0-3, 5 and 8-11 merge into
	 * three ranges; process_madvise stops at the middle one (ENOMEM), which
	 * alone must be skipped. */
	assert_int_equal(munmap(buf + 4 * 4096, 4 * 4096), 0);
	for (int i = 0; i < 4; i++) {
		pages[i] = base + (uint64_t)(11 - i); /* reversed: must be sorted */
		pages[4 + i] = base + (uint64_t)(3 - i);
	}
	pages[8] = base + 5;
	pages[9] = base + 2; /* duplicate */
	prefetch_init(&p, procs_new(false));
	rc = prefetch_pages(&p, (uint32_t)getpid(), pages, 10, UINT64_MAX);
	assert_int_equal(rc, 8);
	assert_int_equal(p.stats.holes, 1);
	assert_int_equal(p.stats.issued, 8);
	assert_true(p.stats.willneed.calls >= 2);

	/* With the pagemap filter, resident pages are not prefetched at all. */
	procs_free(p.procs);
	prefetch_init(&p, procs_new(true));
	pages[0] = base;
	pages[1] = base + 1;
	pages[2] = base + 5; /* unmapped: pagemap says not swapped either */
	rc = prefetch_pages(&p, (uint32_t)getpid(), pages, 3, UINT64_MAX);
	assert_int_equal(rc, 0);
	assert_int_equal(p.stats.not_swapped, 3);
	assert_int_equal(p.stats.willneed.calls, 0);
	procs_free(p.procs);
	munmap(buf, 16 * 4096);
}

/*
 * A window's regions are marked for the BPF side (leap_pf_regions) before
 * its pages are recorded: each page's bucket is set, and only those of
 * its regions (a stride over 3 regions sets at most 3 bytes).
 */
static void test_regions_marked(void **state)
{
	static uint8_t regions[LEAP_PF_REGIONS];
	size_t len = 3ul << (LEAP_PF_REGION_SHIFT + 12);
	char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	uint64_t base = (uintptr_t)buf >> 12, pages[24];
	uint32_t tgid = (uint32_t)getpid(), set = 0;
	struct prefetcher p;
	(void)state;

	assert_true(buf != MAP_FAILED);
	memset(buf, 1, len);
	for (int i = 0; i < 24; i++)
		pages[i] = base + (uint64_t)i * 64; /* 3 regions' worth of pages */
	prefetch_init(&p, procs_new(false));
	p.regions = regions;
	prefetch_pages(&p, tgid, pages, 24, UINT64_MAX);
	for (int i = 0; i < 24; i++)
		assert_int_equal(regions[leap_pf_region(tgid, pages[i])], 1);
	for (uint32_t i = 0; i < LEAP_PF_REGIONS; i++)
		set += regions[i];
	assert_in_range(set, 1, 4); /* 3 or 4 regions (base need not be aligned) */
	/* Another process's pages map elsewhere (nearly always). */
	assert_int_not_equal(leap_pf_region(tgid, base), leap_pf_region(tgid + 1, base));
	procs_free(p.procs);
	munmap(buf, len);
}

/* Ascending windows merge into runs; descending ones go out nearest first. */
static void test_iovec_order(void **state)
{
	uint64_t pages[40];
	struct iovec iov[40];
	uint32_t n;
	(void)state;

	for (int i = 0; i < 40; i++)
		pages[i] = 1000 + (uint64_t)i;
	n = prefetch_iovecs(pages, 40, false, iov);
	assert_int_equal(n, 1);
	assert_int_equal((uintptr_t)iov[0].iov_base, 1000ULL << 12);
	assert_int_equal(iov[0].iov_len, 40 << 12);

	n = prefetch_iovecs(pages, 40, true, iov);
	assert_int_equal(n, 3);
	/* 1032..1039 first (the program, going down, reaches them first),
	 * then 1016..1031, then 1000..1015. */
	assert_int_equal((uintptr_t)iov[0].iov_base, 1032ULL << 12);
	assert_int_equal(iov[0].iov_len, 8 << 12);
	assert_int_equal((uintptr_t)iov[1].iov_base, 1016ULL << 12);
	assert_int_equal(iov[1].iov_len, LEAP_PREFETCH_DESC_CHUNK << 12);
	assert_int_equal((uintptr_t)iov[2].iov_base, 1000ULL << 12);

	/* A gap starts a new run either way. */
	pages[20] = 2000;
	n = prefetch_iovecs(pages, 21, false, iov);
	assert_int_equal(n, 2);
}

static void test_dead_process(void **state)
{
	struct prefetcher p;
	uint64_t pages[1] = {0x1000};
	pid_t child = fork();
	(void)state;

	if (child == 0)
		_exit(0);
	assert_true(child > 0);
	waitpid(child, NULL, 0);
	prefetch_init(&p, procs_new(true));
	assert_int_equal(prefetch_pages(&p, (uint32_t)child, pages, 1, UINT64_MAX),
			 -ESRCH);
	assert_int_equal(p.stats.gone, 1);
	procs_free(p.procs);
}

/* Whether the running kernel is at least major.minor. */
static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

/* Keeps pages[0..n) through r, on a copy; the kept count. */
static uint32_t keep_copy(struct pagemap_reader *r, int fd, const uint64_t *pages,
			  uint32_t n, uint64_t *out)
{
	memcpy(out, pages, n * sizeof(*pages));
	return pagemap_keep_swapped(r, fd, out, n, NULL);
}

#define PM_REGION 2048 /* pages: > 256 regions alternate, several scans */
#define PM_HOLE	  1000 /* pages PM_HOLE..PM_HOLE+9 unmapped */

static void test_pagemap_readers(void **state)
{
	static uint64_t all[PM_REGION], a[PM_REGION], b[PM_REGION];
	struct pagemap_reader scan = {0}, plain = {.no_scan = true};
	const char *need = getenv("LEAP_TEST_REQUIRE_SWAP");
	char *buf = mmap(NULL, PM_REGION * 4096L, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t base = (uintptr_t)buf >> 12;
	uint32_t n = 0, ka, kb, expect = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);
	bool swapped;
	(void)state;

	assert_true(buf != MAP_FAILED);
	assert_true(fd >= 0);
	memset(buf, 1, PM_REGION * 4096L);
	/* Out, then the odd pages back in: swapped and present alternate
	 * (with no swap, MADV_PAGEOUT leaves anonymous pages present). */
	swapped = madvise(buf, PM_REGION * 4096L, MADV_PAGEOUT) == 0;
	for (long i = 1; i < PM_REGION; i += 2)
		assert_int_equal(((volatile char *)buf)[i * 4096], 1);
	assert_int_equal(munmap(buf + PM_HOLE * 4096L, 10 * 4096), 0);
	for (uint32_t i = 0; i < PM_REGION; i++) {
		all[n++] = base + i;
		expect += i % 2 == 0 && (i < PM_HOLE || i >= PM_HOLE + 10);
	}

	ka = keep_copy(&scan, fd, all, n, a);
	kb = keep_copy(&plain, fd, all, n, b);
	fprintf(stderr, "# pagemap: %u of %u swapped (PAGEMAP_SCAN %s, %lu scans)\n", kb,
		n, scan.no_scan ? "missing" : "used", (unsigned long)scan.scans);
	assert_int_equal(ka, kb);
	assert_memory_equal(a, b, ka * sizeof(*a));
	assert_int_equal(plain.scans, 0);
	if (kernel_at_least(6, 7)) {
		assert_false(scan.no_scan);
		/* More regions than one call returns: the walk goes on. */
		if (kb > 256)
			assert_true(scan.scans >= 4 && scan.reads == 0);
	}
	if (need && !strcmp(need, "1")) {
		assert_true(swapped);
		assert_int_equal(kb, expect);
	}

	/* A strided window over the same pages: every 16th. */
	n = 0;
	for (uint32_t i = 0; i < PM_REGION; i += 16)
		all[n++] = base + i;
	ka = keep_copy(&scan, fd, all, n, a);
	kb = keep_copy(&plain, fd, all, n, b);
	assert_int_equal(ka, kb);
	assert_memory_equal(a, b, ka * sizeof(*a));
	if (need && !strcmp(need, "1"))
		assert_int_equal(kb, n - 1); /* all but the one in the hole */
	close(fd);
	munmap(buf, PM_REGION * 4096L);
}

static int cmp_ref(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Windows in order either way (the fast paths), with repeats, and in no
 * order (qsort): each comes out as qsort and a pass dropping repeats
 * would leave it.
 */
static void test_sort_unique(void **state)
{
	static uint64_t pages[LEAP_PREFETCH_MAX_PAGES], want[LEAP_PREFETCH_MAX_PAGES];
	uint64_t seed = 42;
	(void)state;

	assert_int_equal(prefetch_sort_unique(pages, 0), 0);
	pages[0] = 7;
	assert_int_equal(prefetch_sort_unique(pages, 1), 1);
	assert_int_equal(pages[0], 7);
	for (int round = 0; round < 400; round++) {
		uint32_t n = 1 + (uint32_t)(round * 37 % LEAP_PREFETCH_MAX_PAGES), m = 0;
		uint64_t stride = 1 + (uint64_t)round % 17;

		for (uint32_t i = 0; i < n; i++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			switch (round % 4) {
			case 0: /* ascending along a stride */
				pages[i] = 5000 + i * stride;
				break;
			case 1: /* descending, a repeat now and then */
				pages[i] = 900000 - (i - (i % 7 == 3)) * stride;
				break;
			case 2: /* ascending with repeats */
				pages[i] = 5000 + (i / 2) * stride;
				break;
			default: /* no order */
				pages[i] = (seed >> 33) % 5000;
				break;
			}
		}
		memcpy(want, pages, n * sizeof(*want));
		qsort(want, n, sizeof(*want), cmp_ref);
		for (uint32_t i = 0; i < n; i++)
			if (m == 0 || want[i] != want[m - 1])
				want[m++] = want[i];
		assert_int_equal(prefetch_sort_unique(pages, n), m);
		assert_memory_equal(pages, want, m * sizeof(*want));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_holes_and_merging),
		cmocka_unit_test(test_dead_process),
		cmocka_unit_test(test_iovec_order),
		cmocka_unit_test(test_sort_unique),
		cmocka_unit_test(test_pagemap_readers),
		cmocka_unit_test(test_regions_marked),
	};
	return cmocka_run_group_tests_name("prefetch", tests, setup, NULL);
}
