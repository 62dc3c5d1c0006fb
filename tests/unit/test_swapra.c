// SPDX-License-Identifier: MIT
/*
 * Which swap readahead the kernel does (user/agent/swapra.c): the choice
 * of mm/swap_state.c swap_use_vma_readahead(), the areas' paths read from
 * /proc/swaps, and the line `leap-agent status` prints.
 */
#include <stdio.h>
#include <string.h>

#include "engine_test.h"
#include "../../user/agent/swapra.h"

static void kind_of(void **state)
{
	(void)state;
	assert_int_equal(swapra_kind_of(3, true, false), SWAPRA_VMA);
	/* One rotational area on turns VMA readahead off for every area. */
	assert_int_equal(swapra_kind_of(3, true, true), SWAPRA_CLUSTER);
	assert_int_equal(swapra_kind_of(3, false, false), SWAPRA_CLUSTER);
	assert_int_equal(swapra_kind_of(0, true, false), SWAPRA_OFF);
	assert_int_equal(swapra_kind_of(0, false, true), SWAPRA_OFF);
}

static void max_pages(void **state)
{
	(void)state;
	assert_int_equal(swapra_max_pages(SWAPRA_VMA, 3), 8);
	assert_int_equal(swapra_max_pages(SWAPRA_CLUSTER, 3), 8);
	/* swap_vma_ra_win(): at most 1 << SWAP_RA_ORDER_CEILING (5). */
	assert_int_equal(swapra_max_pages(SWAPRA_VMA, 7), 32);
	assert_int_equal(swapra_max_pages(SWAPRA_CLUSTER, 7), 128);
	assert_int_equal(swapra_max_pages(SWAPRA_OFF, 3), 0);
	assert_int_equal(swapra_max_pages(SWAPRA_CLUSTER, 0), 0);
}

static void area_path(void **state)
{
	const char *swaps =
		"Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
		"/dev/zram0                              partition\t4194300\t\t0\t\t100\n"
		"/var/tmp/my\\040swap                     file\t\t6291452\t\t52\t\t-2\n";
	char p[64];
	(void)state;

	assert_true(swapra_area_path(swaps, 0, p, sizeof(p)));
	assert_string_equal(p, "/dev/zram0");
	assert_true(swapra_area_path(swaps, 1, p, sizeof(p)));
	assert_string_equal(p, "/var/tmp/my swap");
	assert_false(swapra_area_path(swaps, 2, p, sizeof(p)));
	/* No area: the header alone, or nothing at all. */
	assert_false(swapra_area_path("Filename\tType\tSize\tUsed\tPriority\n", 0, p,
				      sizeof(p)));
	assert_false(swapra_area_path("", 0, p, sizeof(p)));
	/* Cut to the buffer, never past it. */
	assert_true(swapra_area_path(swaps, 0, p, 5));
	assert_string_equal(p, "/dev");
}

static void describe(void **state)
{
	struct swapra ra = {.kind = SWAPRA_CLUSTER, .max_pages = 8, .areas = 1};
	char line[256];
	(void)state;

	snprintf(ra.rotational, sizeof(ra.rotational), "/var/tmp/leap-swap");
	swapra_describe(&ra, line, sizeof(line));
	assert_string_equal(line,
			    "swap-slot clusters, up to 8 pages (rotational swap area "
			    "/var/tmp/leap-swap)");
	ra.rotational[0] = '\0';
	swapra_describe(&ra, line, sizeof(line));
	assert_string_equal(line,
			    "swap-slot clusters, up to 8 pages (vma_ra_enabled false)");
	ra.kind = SWAPRA_VMA;
	swapra_describe(&ra, line, sizeof(line));
	assert_string_equal(line, "VMA-based, up to 8 pages");
	ra.areas = 0;
	swapra_describe(&ra, line, sizeof(line));
	assert_string_equal(line, "VMA-based, up to 8 pages (no swap area on yet)");
	ra.kind = SWAPRA_OFF;
	swapra_describe(&ra, line, sizeof(line));
	assert_string_equal(line, "off (vm.page-cluster 0)");
}

static void dev_synchronous(void **state)
{
	static const char *const yes[] = {"zram0", "zram12", "zram0p1",
					  "ram0",  "pmem1",  "pmem0s"};
	static const char *const no[] = {"sda",	    "vda1", "nvme0n1", "zram",
					 "ramdisk", "dm-0", ""};
	(void)state;

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		assert_true(swapra_dev_synchronous(yes[i]));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		assert_false(swapra_dev_synchronous(no[i]));
}

/* zram: no readahead at all for its pages, the other areas as before. */
static void describe_synchronous(void **state)
{
	struct swapra ra = {
		.kind = SWAPRA_VMA, .max_pages = 8, .areas = 1, .synchronous_areas = 1};
	char line[256];
	(void)state;

	snprintf(ra.synchronous, sizeof(ra.synchronous), "/dev/zram0");
	swapra_describe(&ra, line, sizeof(line));
	assert_string_equal(line,
			    "none: swap area /dev/zram0 is on a synchronous device, "
			    "whose swap-ins skip the swap cache and its readahead");
	ra.areas = 2;
	ra.kind = SWAPRA_CLUSTER;
	snprintf(ra.rotational, sizeof(ra.rotational), "/var/tmp/leap-swap");
	swapra_describe(&ra, line, sizeof(line));
	assert_string_equal(line,
			    "swap-slot clusters, up to 8 pages (rotational swap area "
			    "/var/tmp/leap-swap); none from /dev/zram0 (a synchronous "
			    "device)");
	/* A short buffer is cut, never overrun. */
	swapra_describe(&ra, line, 20);
	assert_int_equal(strlen(line), 19);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kind_of),	   cmocka_unit_test(max_pages),
		cmocka_unit_test(area_path),	   cmocka_unit_test(describe),
		cmocka_unit_test(dev_synchronous), cmocka_unit_test(describe_synchronous),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
