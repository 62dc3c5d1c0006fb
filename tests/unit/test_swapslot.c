// SPDX-License-Identifier: MIT
/*
 * From pagemap entries to swap slots (user/agent/swapslot.c): the entry
 * layout of Documentation/admin-guide/mm/pagemap.rst, a device's swap type
 * from /proc/swaps, and the evidence that corrects it after a swapoff hole.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "engine_test.h"
#include "../../user/agent/swapslot.h"

#define PM_SWAP	   (1ULL << 62)
#define PM_PRESENT (1ULL << 63)
#define PM_EXCL	   (1ULL << 56)

static void decode(void **state)
{
	uint32_t type = 99;
	uint64_t off = 99;
	(void)state;

	/* swap type 3, offset 0x12345, plus a flag bit above bit 54 */
	assert_true(
		swapslot_decode(PM_SWAP | PM_EXCL | (0x12345ULL << 5) | 3, &type, &off));
	assert_int_equal(type, 3);
	assert_int_equal(off, 0x12345);
	/* the largest offset the 50-bit field holds */
	assert_true(
		swapslot_decode(PM_SWAP | (((1ULL << 50) - 1) << 5) | 31, &type, &off));
	assert_int_equal(type, 31);
	assert_int_equal(off, (1ULL << 50) - 1);
	/* opened without CAP_SYS_ADMIN: swapped, both fields 0 */
	assert_true(swapslot_decode(PM_SWAP, &type, &off));
	assert_int_equal(type, 0);
	assert_int_equal(off, 0);
	/* resident, or not there at all: no slot */
	assert_false(swapslot_decode(PM_PRESENT | 0x1234, &type, &off));
	assert_false(swapslot_decode(PM_PRESENT | PM_SWAP, &type, &off));
	assert_false(swapslot_decode(0, &type, &off));
}

static const char swaps[] =
	"Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
	"/var/tmp/swapfile                       file\t\t1048572\t\t0\t\t-2\n"
	"/dev/loop10                             partition\t786428\t\t1024\t\t100\n"
	"/dev/loop1                              partition\t786428\t\t0\t\t10\n";

static void type_from_swaps(void **state)
{
	(void)state;
	assert_int_equal(swapslot_type_from_swaps(swaps, "/var/tmp/swapfile"), 0);
	assert_int_equal(swapslot_type_from_swaps(swaps, "/dev/loop10"), 1);
	/* a prefix of another name is not that name */
	assert_int_equal(swapslot_type_from_swaps(swaps, "/dev/loop1"), 2);
	assert_int_equal(swapslot_type_from_swaps(swaps, "/dev/loop"), -1);
	assert_int_equal(swapslot_type_from_swaps(swaps, "/dev/loop2"), -1);
	/* the header's first word is not an area */
	assert_int_equal(swapslot_type_from_swaps(swaps, "Filename"), -1);
	assert_int_equal(swapslot_type_from_swaps("", "/dev/loop1"), -1);
}

static void votes(void **state)
{
	struct swapslot_votes v;
	int cur = 1;
	(void)state;

	memset(&v, 0, sizeof(v));
	/* A read of another slot, or of offset 0, is no evidence. */
	assert_int_equal(swapslot_vote(&v, cur, 2, 100, 101), 1);
	assert_int_equal(swapslot_vote(&v, cur, 2, 0, 0), 1);
	assert_int_equal(swapslot_vote(&v, cur, 40, 100, 100), 1);
	/* Type 2 confirmed SWAPSLOT_VOTES_SWITCH times, type 1 never: switch. */
	for (int i = 1; i < SWAPSLOT_VOTES_SWITCH; i++)
		assert_int_equal(swapslot_vote(&v, cur, 2, 100 + i, 100 + i), 1);
	cur = swapslot_vote(&v, cur, 2, 7, 7);
	assert_int_equal(cur, 2);
	/* Once the current type has evidence, others never take over. */
	memset(&v, 0, sizeof(v));
	cur = 1;
	assert_int_equal(swapslot_vote(&v, cur, 1, 5, 5), 1);
	for (int i = 0; i < 3 * SWAPSLOT_VOTES_SWITCH; i++)
		assert_int_equal(swapslot_vote(&v, cur, 2, 100 + i, 100 + i), 1);
	/* Unknown type (-1): the evidence decides. */
	memset(&v, 0, sizeof(v));
	cur = -1;
	for (int i = 0; i < SWAPSLOT_VOTES_SWITCH; i++)
		cur = swapslot_vote(&v, cur, 4, 9 + i, 9 + i);
	assert_int_equal(cur, 4);
}

static void drop_runs(void **state)
{
	/* A run of 4 up, a strided part, a run of 4 down, short runs. */
	uint64_t s[] = {10, 11, 12, 13, 40, 56, 72, 90, 89, 88, 87, 100, 101, 7, 200};
	uint64_t want[] = {40, 56, 72, 100, 101, 7, 200};
	uint64_t all[] = {5, 6, 7, 8, 9};
	uint64_t turn[] = {5, 6, 7, 6, 5, 4};
	uint64_t one[] = {3};
	uint32_t n;
	(void)state;

	n = swapslot_drop_runs(s, 15, 4);
	assert_int_equal(n, 7);
	assert_memory_equal(s, want, sizeof(want));
	/* A whole sequential window goes to the kernel alone. */
	assert_int_equal(swapslot_drop_runs(all, 5, 4), 0);
	/* min_run above the window: nothing dropped. */
	assert_int_equal(swapslot_drop_runs(all, 5, 6), 5);
	/* A turn ends a run: 5 6 7 is one (3 < 4, kept), 6 5 4 another. */
	assert_int_equal(swapslot_drop_runs(turn, 6, 4), 6);
	assert_int_equal(swapslot_drop_runs(turn, 6, 3), 0);
	assert_int_equal(swapslot_drop_runs(one, 1, 2), 1);
	assert_int_equal(swapslot_drop_runs(one, 0, 2), 0);
}

static void sync_share(void **state)
{
	static const char hdr[] = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n";
	char buf[1024];
	(void)state;

	assert_int_equal(swapslot_sync_share(hdr), -1);
	snprintf(buf, sizeof(buf), "%s/var/tmp/swap file 4194300 48 -2\n", hdr);
	assert_int_equal(swapslot_sync_share(buf), 0);
	snprintf(buf, sizeof(buf), "%s/dev/zram0 partition 524284 10240 100\n", hdr);
	assert_int_equal(swapslot_sync_share(buf), 100);
	/* zram above a file, a quarter of what is in use on the file. */
	snprintf(buf, sizeof(buf),
		 "%s/dev/zram0 partition 524284 30000 100\n/var/tmp/swap file 4194300 "
		 "10000 -2\n",
		 hdr);
	assert_int_equal(swapslot_sync_share(buf), 75);
	assert_true(swapslot_top_sync(buf));
	/* Nothing in use yet: where swap-outs go first decides. */
	snprintf(buf, sizeof(buf),
		 "%s/var/tmp/swap file 4194300 0 -2\n/dev/pmem0 partition 1024 0 5\n",
		 hdr);
	assert_int_equal(swapslot_sync_share(buf), 100);
	snprintf(buf, sizeof(buf),
		 "%s/dev/zram0 partition 1024 0 -3\n/dev/vdb partition 1024 0 10\n", hdr);
	assert_int_equal(swapslot_sync_share(buf), 0);
	assert_false(swapslot_top_sync(buf));
	/* brd's /dev/ram0 is synchronous too; a /dev/ramdisk file is not. */
	snprintf(buf, sizeof(buf), "%s/dev/ram0 partition 1024 512 -2\n", hdr);
	assert_int_equal(swapslot_sync_share(buf), 100);
	snprintf(buf, sizeof(buf), "%s/dev/ramdisk file 1024 512 -2\n", hdr);
	assert_int_equal(swapslot_sync_share(buf), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decode),     cmocka_unit_test(type_from_swaps),
		cmocka_unit_test(votes),      cmocka_unit_test(drop_runs),
		cmocka_unit_test(sync_share),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
