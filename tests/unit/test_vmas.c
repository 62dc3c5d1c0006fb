// SPDX-License-Identifier: MIT
/*
 * Which mappings hold shared memory (user/agent/vmas.c), read from this
 * process's own /proc/self/maps: a line parsed, a process with more
 * mappings than the table once held (512; Node.js has ~1,200), a page
 * in no mapping, which reads the file again at most every VMAS_REREAD_NS,
 * and a mapping replaced in place, seen once the table is VMAS_MAX_AGE_NS
 * old; in a process without shared memory, a page in no mapping waits
 * that long too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine_test.h"
#include "../../user/agent/vmas.h"

#define PAGE 4096UL
#define MANY 1500

/* Three pages mapped with the middle one unmapped: a page in no mapping. */
static char *map_hole(void)
{
	char *gap = mmap(NULL, 3 * PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(gap != MAP_FAILED);
	munmap(gap + PAGE, PAGE);
	return gap;
}

static void test_parse_line(void **state)
{
	struct vma_range r;
	(void)state;

	assert_true(
		vmas_parse_line("7f0000000000-7f0000004000 rw-s 00000000 00:01 1234    "
				"/dev/zero (deleted)\n",
				&r));
	assert_int_equal(r.start, 0x7f0000000000ULL >> 12);
	assert_int_equal(r.end, 0x7f0000004000ULL >> 12);
	assert_true(r.shmem);
	assert_true(vmas_parse_line("7f0000000000-7f0000004000 rw-p 00000000 00:00 0 \n",
				    &r));
	assert_false(r.shmem);
	/* A shared file on a disk is not shmem. */
	assert_true(vmas_parse_line(
		"7f0000000000-7f0000004000 rw-s 00000000 fe:01 99 /var/x\n", &r));
	assert_false(r.shmem);
	assert_false(vmas_parse_line("garbage\n", &r));
}

static void test_many_mappings(void **state)
{
	struct proc_vmas m = {0};
	char **maps = calloc(MANY, sizeof(*maps));
	char *shared, *gap;
	uint64_t now = 1000ULL * 1000 * 1000;
	(void)state;

	assert_non_null(maps);
	/* Alternate protections so that neighbours do not merge. */
	for (int i = 0; i < MANY; i++) {
		maps[i] = mmap(NULL, PAGE, i % 2 ? PROT_READ : PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		assert_true(maps[i] != MAP_FAILED);
	}
	shared = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	assert_true(shared != MAP_FAILED);
	/* A hole: its page lies in no mapping. */
	gap = map_hole();

	assert_int_equal(
		vmas_shmem(&m, (uint32_t)getpid(), (uintptr_t)shared / PAGE + 2, now), 1);
	assert_true(m.n > MANY);
	/* Every mapping is in the table: no page of ours reads maps again. */
	for (int i = 0; i < MANY; i++)
		assert_int_equal(vmas_shmem(&m, (uint32_t)getpid(),
					    (uintptr_t)maps[i] / PAGE, now + 1),
				 0);
	assert_int_equal(m.reads, 1);

	/* A page in no mapping: one read, then none until VMAS_REREAD_NS. */
	assert_int_equal(vmas_shmem(&m, (uint32_t)getpid(),
				    (uintptr_t)(gap + PAGE) / PAGE, now + VMAS_REREAD_NS),
			 -1);
	assert_int_equal(m.reads, 2);
	for (int i = 0; i < 100; i++)
		assert_int_equal(vmas_shmem(&m, (uint32_t)getpid(),
					    (uintptr_t)(gap + PAGE) / PAGE,
					    now + VMAS_REREAD_NS + i),
				 -1);
	assert_int_equal(m.reads, 2);
	assert_int_equal(vmas_shmem(&m, (uint32_t)getpid(),
				    (uintptr_t)(gap + PAGE) / PAGE,
				    now + 2 * VMAS_REREAD_NS),
			 -1);
	assert_int_equal(m.reads, 3);

	vmas_free(&m);
	assert_null(m.v);
	munmap(shared, 4 * PAGE);
	munmap(gap, 3 * PAGE);
	for (int i = 0; i < MANY; i++)
		munmap(maps[i], PAGE);
	free(maps);
}

/* A private mapping replaced in place by shared memory: the old line
 * answers until the table is VMAS_MAX_AGE_NS old, then maps is read again. */
static void test_mapping_replaced(void **state)
{
	struct proc_vmas m = {0};
	uint64_t now = 1000ULL * 1000 * 1000;
	uint64_t page;
	char *p;
	(void)state;

	p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		 0);
	assert_true(p != MAP_FAILED);
	page = (uintptr_t)p / PAGE + 1;
	assert_int_equal(vmas_shmem(&m, (uint32_t)getpid(), page, now), 0);
	assert_true(mmap(p, 4 * PAGE, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == p);
	assert_int_equal(
		vmas_shmem(&m, (uint32_t)getpid(), page, now + VMAS_MAX_AGE_NS - 1), 0);
	assert_int_equal(m.reads, 1);
	assert_int_equal(vmas_shmem(&m, (uint32_t)getpid(), page, now + VMAS_MAX_AGE_NS),
			 1);
	assert_int_equal(m.reads, 2);
	vmas_free(&m);
	munmap(p, 4 * PAGE);
}

/*
 * A process with no shared memory: a page in no mapping reads maps again
 * only once the table is VMAS_MAX_AGE_NS old (Node.js's windows over its
 * heap's gaps read its 1,185 mappings ~200 times a run at the
 * VMAS_REREAD_NS wait); a shared segment mapped since is seen then, and
 * from then on gaps wait VMAS_REREAD_NS again.
 */
static void test_gap_without_shmem(void **state)
{
	struct proc_vmas m = {0};
	uint64_t now = 1000ULL * 1000 * 1000;
	char *priv, *gap, *shared;
	uint64_t hole;
	(void)state;

	priv = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	assert_true(priv != MAP_FAILED);
	gap = map_hole();
	hole = (uintptr_t)(gap + PAGE) / PAGE;

	assert_int_equal(vmas_shmem(&m, (uint32_t)getpid(), (uintptr_t)priv / PAGE, now),
			 0);
	assert_int_equal(m.reads, 1);
	/* This test process maps no shared memory of its own. */
	assert_int_equal(m.shmem, 0);
	assert_int_equal(vmas_shmem(&m, (uint32_t)getpid(), hole, now + VMAS_REREAD_NS),
			 -1);
	assert_int_equal(
		vmas_shmem(&m, (uint32_t)getpid(), hole, now + 10 * VMAS_REREAD_NS), -1);
	assert_int_equal(m.reads, 1);

	shared = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	assert_true(shared != MAP_FAILED);
	assert_int_equal(vmas_shmem(&m, (uint32_t)getpid(), (uintptr_t)shared / PAGE,
				    now + VMAS_MAX_AGE_NS - 1),
			 -1);
	assert_int_equal(m.reads, 1);
	assert_int_equal(vmas_shmem(&m, (uint32_t)getpid(), (uintptr_t)shared / PAGE,
				    now + VMAS_MAX_AGE_NS),
			 1);
	assert_int_equal(m.reads, 2);
	assert_int_equal(m.shmem, 1);
	/* Shared memory known: a gap waits VMAS_REREAD_NS. */
	assert_int_equal(vmas_shmem(&m, (uint32_t)getpid(), hole,
				    now + VMAS_MAX_AGE_NS + VMAS_REREAD_NS),
			 -1);
	assert_int_equal(m.reads, 3);

	vmas_free(&m);
	munmap(shared, 4 * PAGE);
	munmap(gap, 3 * PAGE);
	munmap(priv, 4 * PAGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_line),
		cmocka_unit_test(test_many_mappings),
		cmocka_unit_test(test_mapping_replaced),
		cmocka_unit_test(test_gap_without_shmem),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
