// SPDX-License-Identifier: MIT
/*
 * The decision core on recorded real runs (tests/data/recordings, made by
 * tools/record-traces.sh with `leap-agent run --record`): each replay must
 * print exactly its .expected file (every verdict, every counter of the
 * core: windows, pages, held pages, cold pages, stand-downs ...), the same
 * bytes on a second replay, and, as recorded, the live run's windows and
 * pages.  A change of policy changes these numbers: re-record, or rewrite
 * the expectations (tools/record-traces.sh --expect) and say why.  Also
 * the reader against damaged files: a clear error, never a crash.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "engine_test.h"
#include "recording.h"

#define DIR "tests/data/recordings"

static const char *const traces[] = {
	"py-stride", "py-seq",	   "py-reverse", "py-random", "perl-stride",
	"two-procs", "shm-stride", "shm-seq",	 "zram",
};

/* What `leap-agent replay` prints for path, into a malloc'd string. */
static char *report(const char *path, bool plans, bool *same)
{
	char err[512] = "", *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct replay_opts o = {.out = f, .plans = plans};
	int rc;

	assert_non_null(f);
	rc = recording_report(path, &o, same, err, sizeof(err));
	fclose(f);
	if (rc)
		fail_msg("%s: %s", path, err);
	return buf;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf;
	long n;

	if (!f)
		fail_msg("%s: missing (tools/record-traces.sh makes it)", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

/* The first line where a and b differ, for the failure message. */
static void first_difference(const char *a, const char *b)
{
	for (int line = 1; *a || *b; line++) {
		const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
		size_t la = ea ? (size_t)(ea - a) : strlen(a);
		size_t lb = eb ? (size_t)(eb - b) : strlen(b);

		if (la != lb || memcmp(a, b, la)) {
			print_error("line %d\n  expected: %.*s\n  replayed: %.*s\n", line,
				    (int)lb, b, (int)la, a);
			return;
		}
		a += la + (ea != NULL);
		b += lb + (eb != NULL);
	}
}

static void test_recordings(void **state)
{
	char rec[256], exp[256];
	(void)state;

	for (size_t i = 0; i < sizeof(traces) / sizeof(traces[0]); i++) {
		char *got, *again, *want;
		bool same;

		snprintf(rec, sizeof(rec), DIR "/%s.rec", traces[i]);
		snprintf(exp, sizeof(exp), DIR "/%s.expected", traces[i]);
		got = report(rec, false, &same);
		want = slurp(exp);
		if (strcmp(got, want)) {
			first_difference(got, want);
			fail_msg("%s: the replay is not %s", traces[i], exp);
		}
		assert_true(same); /* as recorded, the live run's windows */
		/* Deterministic: the same bytes again, plans included. */
		free(got);
		got = report(rec, true, &same);
		again = report(rec, true, &same);
		assert_string_equal(got, again);
		free(got);
		free(again);
		free(want);
	}
}

/* Writes n bytes of data as a gzip file at path. */
static void write_gz(const char *path, const void *data, size_t n)
{
	gzFile gz = gzopen(path, "wb");

	assert_non_null(gz);
	if (n)
		assert_int_equal(gzwrite(gz, data, (unsigned)n), (int)n);
	gzclose(gz);
}

/* A recording without its last byte (inside its END record). */
static void truncated_copy(const char *from, const char *to)
{
	gzFile in = gzopen(from, "rb");
	size_t cap = 1 << 20, n = 0;
	char *buf = malloc(cap);
	int got;

	assert_non_null(in);
	assert_non_null(buf);
	while ((got = gzread(in, buf + n, (unsigned)(cap - n))) > 0) {
		n += (size_t)got;
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	gzclose(in);
	assert_true(n > 1);
	write_gz(to, buf, n - 1);
	free(buf);
}

static void expect_error(const char *path, const char *what)
{
	char err[512] = "", *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct replay_opts o = {.out = f};
	bool same;
	int rc = recording_report(path, &o, &same, err, sizeof(err));

	fclose(f);
	free(buf);
	assert_int_equal(rc, -1);
	if (!strstr(err, what))
		fail_msg("%s: error '%s' does not say '%s'", path, err, what);
}

/* Damaged and foreign files: refused with a reason. */
static void test_bad_files(void **state)
{
	char path[] = "/tmp/leap-replay-XXXXXX";
	int fd = mkstemp(path);
	uint8_t bogus[64];
	(void)state;

	assert_true(fd >= 0);
	close(fd);
	write_gz(path, "not a recording at all", 22);
	expect_error(path, "not a leap-agent recording");
	write_gz(path, "", 0);
	expect_error(path, "not a leap-agent recording");
	/* The header and then a record of an unknown type. */
	memcpy(bogus, RECORDING_MAGIC, sizeof(RECORDING_MAGIC));
	bogus[8] = 99;
	bogus[9] = 4;
	bogus[10] = 0;
	write_gz(path, bogus, 15);
	expect_error(path, "not a recording record");
	/* Cut inside a record. */
	truncated_copy(DIR "/zram.rec", path);
	expect_error(path, "truncated");
	expect_error("/nonexistent/leap.rec", "No such file");
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recordings),
		cmocka_unit_test(test_bad_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
