// SPDX-License-Identifier: MIT
/* memclient's --state file (user/memclient/pstate.h): header validation, page
 * byte checks, the settle step, and the file surviving a SIGKILLed owner. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "pstate.h"

static const char *const two[] = {"10.0.0.1:7480", "10.0.0.2:7480"};
static const char *const swapped[] = {"10.0.0.2:7480", "10.0.0.1:7480"};

static struct leap_pstate_geom geom(void)
{
	return (struct leap_pstate_geom){.dev_pages = 1000,
					 .stripe_pages = 16,
					 .replicas = 2,
					 .nservers = 2,
					 .dev = 1,
					 .servers = two};
}

static void hdr_roundtrip(void **state)
{
	struct leap_pstate_geom g = geom();
	struct leap_pstate_hdr h;
	char err[256];

	(void)state;
	assert_int_equal(leap_pstate_hdr_init(&h, &g, err, sizeof(err)), 0);
	assert_int_equal(leap_pstate_hdr_check(&h, &g, err, sizeof(err)), 0);
	assert_int_equal(h.clean, 1);
	/* Runtime fields are outside the checksum. */
	h.clean = 0;
	h.instance[1] = 0x1234;
	h.have_instance[1] = 1;
	assert_int_equal(leap_pstate_hdr_check(&h, &g, err, sizeof(err)), 0);
}

/* Each configuration difference is refused as another device (-EINVAL),
 * naming the option. */
static void hdr_mismatch(void **state)
{
	struct leap_pstate_geom g = geom(), o;
	struct leap_pstate_hdr h;
	char err[256];

	(void)state;
	assert_int_equal(leap_pstate_hdr_init(&h, &g, err, sizeof(err)), 0);
	o = g;
	o.dev_pages = 999;
	assert_int_equal(leap_pstate_hdr_check(&h, &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--size"));
	o = g;
	o.replicas = 1;
	assert_int_equal(leap_pstate_hdr_check(&h, &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--replicas"));
	o = g;
	o.stripe_pages = 32;
	assert_int_equal(leap_pstate_hdr_check(&h, &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--stripe"));
	o = g;
	o.dev = 2;
	assert_int_equal(leap_pstate_hdr_check(&h, &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--dev"));
	o = g;
	o.nservers = 1;
	assert_int_equal(leap_pstate_hdr_check(&h, &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--server"));
	/* The same servers in another order place stripes elsewhere. */
	o = g;
	o.servers = swapped;
	assert_int_equal(leap_pstate_hdr_check(&h, &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "10.0.0.2:7480"));
}

static void hdr_damaged(void **state)
{
	struct leap_pstate_geom g = geom();
	struct leap_pstate_hdr h, d;
	char err[256], longaddr[200];
	const char *bad[2] = {longaddr, "x:1"};

	(void)state;
	assert_int_equal(leap_pstate_hdr_init(&h, &g, err, sizeof(err)), 0);
	d = h;
	d.magic[0] ^= 1;
	assert_int_equal(leap_pstate_hdr_check(&d, &g, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "magic"));
	d = h;
	d.version = 2;
	assert_int_equal(leap_pstate_hdr_check(&d, &g, err, sizeof(err)), -EBADMSG);
	/* A flipped bit in a configuration field: the sum catches it, even
	 * when the result would match the device (dev_pages 1000 -> 1000 via
	 * another field). */
	d = h;
	d.servers[1][3] ^= 0x40;
	assert_int_equal(leap_pstate_hdr_check(&d, &g, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "damaged"));
	d = h;
	d.dev_pages ^= 1;
	assert_int_equal(leap_pstate_hdr_check(&d, &g, err, sizeof(err)), -EBADMSG);
	d = h;
	d.clean = 7;
	assert_int_equal(leap_pstate_hdr_check(&d, &g, err, sizeof(err)), -EBADMSG);
	d = h;
	d.have_instance[5] = 1; /* server 5 of 2 */
	assert_int_equal(leap_pstate_hdr_check(&d, &g, err, sizeof(err)), -EBADMSG);
	d = h;
	d.have_instance[0] = 2;
	assert_int_equal(leap_pstate_hdr_check(&d, &g, err, sizeof(err)), -EBADMSG);
	/* Addresses that do not fit are refused at creation. */
	memset(longaddr, 'a', sizeof(longaddr) - 1);
	longaddr[sizeof(longaddr) - 1] = '\0';
	g.servers = bad;
	assert_int_equal(leap_pstate_hdr_init(&d, &g, err, sizeof(err)), -EINVAL);
}

static void pages_check(void **state)
{
	uint8_t p[8] = {0,
			LEAP_PS_WRITTEN,
			LEAP_PS_WRITTEN | LEAP_PS_VALID0,
			LEAP_PS_WRITTEN | (LEAP_PS_VALID0 << 1),
			LEAP_PS_WRITTEN | LEAP_PS_VALID0 | (LEAP_PS_VALID0 << 1),
			LEAP_PS_WRITTEN | LEAP_PS_WRITING,
			0,
			0};
	uint64_t bad = 99;

	(void)state;
	assert_int_equal(leap_pstate_pages_check(p, 8, 2, &bad), 0);
	/* Replica 1 does not exist at r = 1. */
	assert_int_equal(leap_pstate_pages_check(p, 8, 1, &bad), -EBADMSG);
	assert_int_equal(bad, 3);
	/* A replica claimed for an unwritten page. */
	p[6] = LEAP_PS_VALID0;
	assert_int_equal(leap_pstate_pages_check(p, 8, 2, &bad), -EBADMSG);
	assert_int_equal(bad, 6);
	p[6] = 0;
	p[7] = LEAP_PS_WRITTEN | 0x80;
	assert_int_equal(leap_pstate_pages_check(p, 8, 2, &bad), -EBADMSG);
	assert_int_equal(bad, 7);
	p[7] = LEAP_PS_WRITING; /* in flight but never written */
	assert_int_equal(leap_pstate_pages_check(p, 8, 2, &bad), -EBADMSG);
}

static void settle(void **state)
{
	uint8_t p[4] = {LEAP_PS_WRITTEN | LEAP_PS_VALID0,
			LEAP_PS_WRITTEN | LEAP_PS_WRITING,
			LEAP_PS_WRITTEN | LEAP_PS_WRITING | LEAP_PS_VALID0, 0};

	(void)state;
	assert_int_equal(leap_pstate_settle(p, 4), 2);
	/* A write in flight at the death: written, on no replica (reads fail
	 * until rewritten), whatever a replica acknowledged meanwhile. */
	assert_int_equal(p[0], LEAP_PS_WRITTEN | LEAP_PS_VALID0);
	assert_int_equal(p[1], LEAP_PS_WRITTEN);
	assert_int_equal(p[2], LEAP_PS_WRITTEN);
	assert_int_equal(p[3], 0);
	assert_int_equal(leap_pstate_count_written(p, 4), 3);
}

static char path[64];

static int setup(void **state)
{
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/test_pstate.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

/* A child that owns the file is SIGKILLed mid-write: what it stored is
 * there for the next owner, settled, and the header says it died. */
static void file_survives_sigkill(void **state)
{
	struct leap_pstate_geom g = geom();
	struct leap_pstate ps;
	char err[256];
	pid_t pid;
	int st;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (leap_pstate_open(&ps, path, &g, err, sizeof(err)) || ps.reattached)
			_exit(1);
		ps.pages[0] = LEAP_PS_WRITTEN | LEAP_PS_VALID0 | (LEAP_PS_VALID0 << 1);
		ps.pages[999] = LEAP_PS_WRITTEN | (LEAP_PS_VALID0 << 1);
		ps.pages[500] = LEAP_PS_WRITTEN | LEAP_PS_WRITING;
		leap_pstate_set_instance(&ps, 1, 0xfeedULL);
		raise(SIGKILL);
		_exit(2);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	assert_int_equal(leap_pstate_open(&ps, path, &g, err, sizeof(err)), 0);
	assert_true(ps.reattached);
	assert_false(ps.was_clean);
	assert_int_equal(ps.written, 3);
	assert_int_equal(ps.in_flight, 1);
	assert_int_equal(ps.pages[0],
			 LEAP_PS_WRITTEN | LEAP_PS_VALID0 | (LEAP_PS_VALID0 << 1));
	assert_int_equal(ps.pages[999], LEAP_PS_WRITTEN | (LEAP_PS_VALID0 << 1));
	assert_int_equal(ps.pages[500], LEAP_PS_WRITTEN);
	assert_int_equal(ps.pages[1], 0);
	assert_int_equal(ps.hdr->have_instance[0], 0);
	assert_int_equal(ps.hdr->have_instance[1], 1);
	assert_int_equal(ps.hdr->instance[1], 0xfeedULL);
	assert_int_equal(ps.hdr->clean, 0);
	leap_pstate_close(&ps, true);
	assert_int_equal(leap_pstate_open(&ps, path, &g, err, sizeof(err)), 0);
	assert_true(ps.was_clean);
	leap_pstate_close(&ps, true);
}

/* One owner at a time; another device, a short file, garbage, a bad byte:
 * clear refusals. */
static void file_refusals(void **state)
{
	struct leap_pstate_geom g = geom(), o;
	struct leap_pstate ps, ps2;
	char err[256];
	int fd;

	(void)state;
	assert_int_equal(leap_pstate_open(&ps, path, &g, err, sizeof(err)), 0);
	assert_int_equal(leap_pstate_open(&ps2, path, &g, err, sizeof(err)),
			 -EWOULDBLOCK);
	assert_non_null(strstr(err, "in use by another leap-swapd"));
	ps.pages[10] = LEAP_PS_WRITTEN | LEAP_PS_VALID0;
	leap_pstate_close(&ps, true);

	o = g;
	o.dev_pages = 2000;
	assert_int_equal(leap_pstate_open(&ps, path, &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--size"));
	o = g;
	o.servers = swapped;
	assert_int_equal(leap_pstate_open(&ps, path, &o, err, sizeof(err)), -EINVAL);

	/* A byte no leap-swapd writes. */
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "\x40", 1, LEAP_PSTATE_HDR_SIZE + 7), 1);
	assert_int_equal(leap_pstate_open(&ps, path, &g, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "page 7"));
	/* Truncated. */
	assert_int_equal(pwrite(fd, "\0", 1, LEAP_PSTATE_HDR_SIZE + 7), 1);
	assert_int_equal(ftruncate(fd, LEAP_PSTATE_HDR_SIZE + 500), 0);
	assert_int_equal(leap_pstate_open(&ps, path, &g, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "truncated"));
	/* Not a state file at all. */
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(pwrite(fd, "hello world\n", 12, 0), 12);
	assert_int_equal(leap_pstate_open(&ps, path, &g, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "not a leap-swapd state file"));
	close(fd);
	/* A directory is not a state file either. */
	assert_int_equal(leap_pstate_open(&ps, "/tmp", &g, err, sizeof(err)) < 0, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hdr_roundtrip),
		cmocka_unit_test(hdr_mismatch),
		cmocka_unit_test(hdr_damaged),
		cmocka_unit_test(pages_check),
		cmocka_unit_test(settle),
		cmocka_unit_test_setup_teardown(file_survives_sigkill, setup, teardown),
		cmocka_unit_test_setup_teardown(file_refusals, setup, teardown),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
