// SPDX-License-Identifier: MIT
/*
 * Trace formats (include/leap/trace.h): each reader, the errors it must
 * give (naming file and line), binary header validation, writer -> reader
 * round trips, and garbage input that must never crash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "leap/trace.h"

/* Reads all of buf; returns the record count, or -1 with r.err kept in err. */
static int read_all(const void *buf, size_t len, enum leap_trace_format fmt,
		    struct leap_trace_rec *out, int max, char *err, size_t errlen)
{
	FILE *f = fmemopen((void *)buf, len, "r");
	struct leap_trace_reader r;
	int n = 0, rc;

	assert_non_null(f);
	err[0] = '\0';
	if (leap_trace_reader_open(&r, f, "t.trace", fmt)) {
		snprintf(err, errlen, "%s", r.err);
		leap_trace_reader_close(&r);
		fclose(f);
		return -1;
	}
	struct leap_trace_rec rec;

	while ((rc = leap_trace_read(&r, &rec)) == 1) {
		if (n < max)
			out[n] = rec;
		n++;
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s", r.err);
		n = -1;
	}
	leap_trace_reader_close(&r);
	fclose(f);
	return n;
}

static int read_str(const char *s, enum leap_trace_format fmt, struct leap_trace_rec *out,
		    int max, char *err, size_t errlen)
{
	return read_all(s, strlen(s), fmt, out, max, err, errlen);
}

static void test_text(void **state)
{
	const char *s = "# a comment\n"
			"\n"
			"0x10\n"
			"  17   # trailing comment\r\n"
			"7 0x20\n"
			"3 7 40\n";
	struct leap_trace_rec r[8];
	char err[400];

	(void)state;
	assert_int_equal(read_str(s, LEAP_TRACE_AUTO, r, 8, err, sizeof(err)), 4);
	assert_int_equal(r[0].page, 0x10);
	assert_int_equal(r[0].tid, 0);
	assert_int_equal(r[1].page, 17);
	assert_int_equal(r[2].tid, 7);
	assert_int_equal(r[2].page, 0x20);
	assert_int_equal(r[3].pid, 3);
	assert_int_equal(r[3].tid, 7);
	assert_int_equal(r[3].page, 40);
	assert_int_equal(r[3].swap_offset, LEAP_TRACE_NO_SWAP);
}

static void test_memsim(void **state)
{
	const char *s = "# memsim\n0041f7a0 R\n0041f7a8 W\n00000fff r\n";
	struct leap_trace_rec r[8];
	char err[400];

	(void)state;
	/* Auto-detected from "R|W" on the first data line. */
	assert_int_equal(read_str(s, LEAP_TRACE_AUTO, r, 8, err, sizeof(err)), 3);
	assert_int_equal(r[0].page, 0x41f);
	assert_int_equal(r[0].flags & LEAP_TRACE_F_WRITE, 0);
	assert_int_equal(r[1].page, 0x41f);
	assert_int_equal(r[1].flags & LEAP_TRACE_F_WRITE, LEAP_TRACE_F_WRITE);
	assert_int_equal(r[2].page, 0);
	/* Forced memsim: a bare page line is an error. */
	assert_int_equal(read_str("10\n", LEAP_TRACE_MEMSIM, r, 8, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "t.trace:1:"));
}

static void expect_error(const char *s, enum leap_trace_format fmt, const char *where,
			 const char *what)
{
	struct leap_trace_rec r[8];
	char err[400];

	assert_int_equal(read_str(s, fmt, r, 8, err, sizeof(err)), -1);
	if (!strstr(err, where) || !strstr(err, what))
		fail_msg("input %s: got error \"%s\", wanted \"%s\" and \"%s\"", s, err,
			 where, what);
}

static void test_text_errors(void **state)
{
	(void)state;
	expect_error("1\n2\nx3\n", LEAP_TRACE_AUTO, "t.trace:3:", "bad page");
	expect_error("1\n\n# c\n-4\n", LEAP_TRACE_AUTO, "t.trace:4:", "bad page");
	expect_error("0x\n", LEAP_TRACE_AUTO, "t.trace:1:", "bad page");
	expect_error("0x0x5\n", LEAP_TRACE_AUTO, "t.trace:1:", "bad page");
	expect_error("12a\n", LEAP_TRACE_AUTO, "t.trace:1:", "bad page");
	expect_error("99999999999999999999999\n", LEAP_TRACE_AUTO,
		     "t.trace:1:", "bad page");
	expect_error("0x10000000000000\n", LEAP_TRACE_AUTO, "t.trace:1:", "out of range");
	expect_error("4294967296 5\n", LEAP_TRACE_AUTO, "t.trace:1:", "bad tid");
	expect_error("x 1 5\n", LEAP_TRACE_AUTO, "t.trace:1:", "bad pid");
	expect_error("1 2 3 4\n", LEAP_TRACE_AUTO, "t.trace:1:", "too many");
	/* Decided as memsim by line 1, so line 2 must be memsim too. */
	expect_error("1000 R\n0x20\n", LEAP_TRACE_AUTO, "t.trace:2:", "memsim");
	expect_error("10zz R\n", LEAP_TRACE_AUTO, "t.trace:1:", "bad hex");
	/* Text decided by line 1: a memsim line later is an error. */
	expect_error("5\n1000 R\n", LEAP_TRACE_AUTO, "t.trace:2:", "bad page");
}

/* Embedded NUL (a binary file read as text): an error, not a line cut short. */
static void test_text_nul_is_not_truncation(void **state)
{
	static const char s[] = "1\n2\0\n";
	struct leap_trace_rec r[8];
	char err[400];

	(void)state;
	assert_int_equal(
		read_all(s, sizeof(s) - 1, LEAP_TRACE_AUTO, r, 8, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "t.trace:2:"));
}

static void test_empty(void **state)
{
	struct leap_trace_rec r[1];
	char err[400];

	(void)state;
	assert_int_equal(read_str("", LEAP_TRACE_AUTO, r, 1, err, sizeof(err)), 0);
	assert_int_equal(read_str("# only\n\n", LEAP_TRACE_AUTO, r, 1, err, sizeof(err)),
			 0);
}

/* Writes recs in fmt to a memory buffer (caller frees *buf). */
static void write_all(enum leap_trace_format fmt, const struct leap_trace_rec *recs,
		      int n, char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);
	struct leap_trace_writer w;

	assert_non_null(f);
	assert_int_equal(leap_trace_writer_open(&w, f, fmt, LEAP_TRACE_HF_TS), 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(leap_trace_append(&w, &recs[i]), 0);
	assert_int_equal(w.records, (uint64_t)n);
	assert_int_equal(leap_trace_writer_close(&w), 0);
	assert_int_equal(fclose(f), 0);
}

static const struct leap_trace_rec sample[] = {
	{.page = 0x7f0000001,
	 .tid = 11,
	 .pid = 10,
	 .ts_ns = 123456789,
	 .flags = 5,
	 .swap_type = 1,
	 .cgroup_id = 99,
	 .swap_offset = 4242},
	{.page = 0, .tid = 0, .pid = 0, .swap_offset = LEAP_TRACE_NO_SWAP},
	{.page = LEAP_TRACE_PAGE_MAX,
	 .tid = UINT32_MAX,
	 .pid = UINT32_MAX,
	 .ts_ns = UINT64_MAX,
	 .flags = UINT32_MAX,
	 .swap_type = 7,
	 .cgroup_id = UINT64_MAX,
	 .swap_offset = 1},
};
#define NSAMPLE ((int)(sizeof(sample) / sizeof(sample[0])))

static void test_bin_round_trip(void **state)
{
	struct leap_trace_rec r[NSAMPLE];
	char *buf = NULL, err[400];
	size_t len = 0;

	(void)state;
	write_all(LEAP_TRACE_BIN, sample, NSAMPLE, &buf, &len);
	assert_int_equal(len, LEAP_TRACE_HDR_SIZE + NSAMPLE * LEAP_TRACE_REC_SIZE);
	assert_memory_equal(buf, LEAP_TRACE_MAGIC, LEAP_TRACE_MAGIC_LEN);
	/* Little-endian on disk whatever the host. */
	assert_int_equal((unsigned char)buf[8], LEAP_TRACE_VERSION);
	assert_int_equal((unsigned char)buf[16], LEAP_TRACE_REC_SIZE);
	for (enum leap_trace_format fmt = LEAP_TRACE_AUTO; fmt <= LEAP_TRACE_BIN;
	     fmt += LEAP_TRACE_BIN) {
		assert_int_equal(read_all(buf, len, fmt, r, NSAMPLE, err, sizeof(err)),
				 NSAMPLE);
		assert_memory_equal(r, sample, sizeof(sample));
	}
	free(buf);
}

static void test_text_round_trip(void **state)
{
	struct leap_trace_rec r[NSAMPLE];
	char *buf = NULL, err[400];
	size_t len = 0;

	(void)state;
	write_all(LEAP_TRACE_TEXT, sample, NSAMPLE, &buf, &len);
	assert_int_equal(
		read_all(buf, len, LEAP_TRACE_AUTO, r, NSAMPLE, err, sizeof(err)),
		NSAMPLE);
	for (int i = 0; i < NSAMPLE; i++) {
		assert_int_equal(r[i].page, sample[i].page);
		assert_int_equal(r[i].tid, sample[i].tid);
		assert_int_equal(r[i].pid, sample[i].pid);
	}
	free(buf);

	/* memsim keeps the page and the write bit (flags 5 has it). */
	write_all(LEAP_TRACE_MEMSIM, sample, NSAMPLE, &buf, &len);
	assert_int_equal(
		read_all(buf, len, LEAP_TRACE_AUTO, r, NSAMPLE, err, sizeof(err)),
		NSAMPLE);
	for (int i = 0; i < NSAMPLE; i++) {
		assert_int_equal(r[i].page, sample[i].page);
		assert_int_equal(r[i].flags, sample[i].flags & LEAP_TRACE_F_WRITE);
	}
	free(buf);
}

static void test_writer_fd(void **state)
{
	struct leap_trace_writer w;
	struct leap_trace_rec r[NSAMPLE];
	char err[400], buf[1024];
	FILE *tmp = tmpfile();
	ssize_t len;

	(void)state;
	assert_non_null(tmp);
	assert_int_equal(leap_trace_writer_open_fd(&w, fileno(tmp), LEAP_TRACE_BIN,
						   LEAP_TRACE_HF_KNOWN),
			 0);
	for (int i = 0; i < NSAMPLE; i++)
		assert_int_equal(leap_trace_append(&w, &sample[i]), 0);
	assert_int_equal(leap_trace_writer_close(&w), 0);
	/* The caller's fd is still open: the writer worked on a dup. */
	len = pread(fileno(tmp), buf, sizeof(buf), 0);
	assert_int_equal(len, LEAP_TRACE_HDR_SIZE + NSAMPLE * LEAP_TRACE_REC_SIZE);
	assert_int_equal(
		read_all(buf, (size_t)len, LEAP_TRACE_AUTO, r, NSAMPLE, err, sizeof(err)),
		NSAMPLE);
	assert_memory_equal(r, sample, sizeof(sample));
	fclose(tmp);

	assert_int_equal(leap_trace_writer_open_fd(&w, -1, LEAP_TRACE_BIN, 0), -1);
	assert_int_equal(leap_trace_writer_open(&w, stdout, LEAP_TRACE_AUTO, 0), -1);
	assert_int_equal(leap_trace_writer_open(&w, stdout, LEAP_TRACE_BIN, 1u << 31),
			 -1);
}

/* A valid header with one field patched, plus `recs` zeroed records. */
static size_t make_bin(unsigned char *buf, size_t off, uint32_t val, int recs,
		       uint32_t rec_size)
{
	uint32_t le;
	size_t len = LEAP_TRACE_HDR_SIZE + (size_t)recs * rec_size;

	memset(buf, 0, len);
	memcpy(buf, LEAP_TRACE_MAGIC, LEAP_TRACE_MAGIC_LEN);
	buf[8] = LEAP_TRACE_VERSION;
	buf[12] = LEAP_TRACE_HDR_SIZE;
	buf[16] = (unsigned char)rec_size;
	buf[17] = (unsigned char)(rec_size >> 8);
	buf[24] = LEAP_TRACE_PAGE_SHIFT;
	if (off) {
		le = val; /* the tests run on little-endian hosts */
		memcpy(buf + off, &le, sizeof(le));
	}
	return len;
}

static void test_bin_header_validation(void **state)
{
	static unsigned char buf[8192];
	struct leap_trace_rec r[4];
	char err[400];
	size_t len;

	(void)state;
	len = make_bin(buf, 0, 0, 2, LEAP_TRACE_REC_SIZE);
	assert_int_equal(read_all(buf, len, LEAP_TRACE_AUTO, r, 4, err, sizeof(err)), 2);

	static const struct {
		size_t off;
		uint32_t val;
		const char *what;
	} bad[] = {
		{8, 2, "version"},	   {8, 0, "version"},
		{12, 16, "header size"},   {12, 1u << 20, "header size"},
		{16, 40, "record size"},   {16, 52, "record size"},
		{16, 8192, "record size"}, {20, 1u << 7, "flags"},
		{24, 16, "page shift"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		len = make_bin(buf, bad[i].off, bad[i].val, 1, LEAP_TRACE_REC_SIZE);
		assert_int_equal(
			read_all(buf, len, LEAP_TRACE_AUTO, r, 4, err, sizeof(err)), -1);
		if (!strstr(err, "t.trace: header:") || !strstr(err, bad[i].what))
			fail_msg("case %zu: \"%s\"", i, err);
	}

	/* Bad magic, truncated header. */
	len = make_bin(buf, 0, 0, 1, LEAP_TRACE_REC_SIZE);
	buf[3] ^= 1;
	assert_int_equal(read_all(buf, len, LEAP_TRACE_AUTO, r, 4, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "magic"));
	assert_int_equal(read_all("12\n", 3, LEAP_TRACE_BIN, r, 4, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "truncated header"));

	/* Truncated last record names it. */
	len = make_bin(buf, 0, 0, 3, LEAP_TRACE_REC_SIZE);
	assert_int_equal(read_all(buf, len - 5, LEAP_TRACE_AUTO, r, 4, err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "record 3: truncated"));

	/* Page beyond LEAP_TRACE_PAGE_MAX. */
	len = make_bin(buf, 0, 0, 1, LEAP_TRACE_REC_SIZE);
	memset(buf + LEAP_TRACE_HDR_SIZE, 0xff, 8);
	assert_int_equal(read_all(buf, len, LEAP_TRACE_AUTO, r, 4, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "record 1: page"));
}

static void test_bin_forward_compatible(void **state)
{
	static unsigned char buf[4096];
	struct leap_trace_rec r[4];
	unsigned char rec[LEAP_TRACE_REC_SIZE];
	char err[400];
	const uint32_t rec_size = 64, hdr_size = 40;

	(void)state;
	/* A future writer: bigger header and records; we read what we know. */
	memset(buf, 0xee, sizeof(buf));
	make_bin(buf, 12, hdr_size, 0, rec_size);
	memset(buf + LEAP_TRACE_HDR_SIZE, 0xee, hdr_size - LEAP_TRACE_HDR_SIZE);
	for (int i = 0; i < 2; i++) {
		unsigned char *p = buf + hdr_size + (size_t)i * rec_size;

		leap_trace_rec_encode(&sample[i], rec);
		memcpy(p, rec, sizeof(rec));
		memset(p + LEAP_TRACE_REC_SIZE, 0xee, rec_size - LEAP_TRACE_REC_SIZE);
	}
	assert_int_equal(read_all(buf, hdr_size + 2 * rec_size, LEAP_TRACE_AUTO, r, 4,
				  err, sizeof(err)),
			 2);
	assert_memory_equal(r, sample, 2 * sizeof(sample[0]));
}

/* Garbage of every kind: the reader answers with records or an error
 * naming the file and line, never a crash (ASan/UBSan run this too). */
static void test_garbage(void **state)
{
	static const char alphabet[] = "0123456789abcdefxX#RW \t\r\n-+.:\x89\xff";
	unsigned short rng[3] = {1, 2, 3};
	char buf[512], err[400];
	struct leap_trace_rec r[4];

	(void)state;
	for (int iter = 0; iter < 20000; iter++) {
		size_t len = (size_t)(nrand48(rng) % sizeof(buf));
		enum leap_trace_format fmt = (enum leap_trace_format)(nrand48(rng) % 4);

		for (size_t i = 0; i < len; i++)
			buf[i] =
				(iter & 1)
					? (char)nrand48(rng)
					: alphabet[nrand48(rng) % (sizeof(alphabet) - 1)];
		int n = read_all(buf, len, fmt, r, 4, err, sizeof(err));

		if (n < 0 && !strstr(err, "t.trace:"))
			fail_msg("error without a location: \"%s\"", err);
	}
}

static void test_format_names(void **state)
{
	enum leap_trace_format f;

	(void)state;
	for (f = LEAP_TRACE_AUTO; f <= LEAP_TRACE_BIN; f++) {
		enum leap_trace_format g;

		assert_int_equal(leap_trace_format_parse(leap_trace_format_name(f), &g),
				 0);
		assert_int_equal(g, f);
	}
	assert_int_equal(leap_trace_format_parse("csv", &f), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_memsim),
		cmocka_unit_test(test_text_errors),
		cmocka_unit_test(test_text_nul_is_not_truncation),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_bin_round_trip),
		cmocka_unit_test(test_text_round_trip),
		cmocka_unit_test(test_writer_fd),
		cmocka_unit_test(test_bin_header_validation),
		cmocka_unit_test(test_bin_forward_compatible),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_format_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
