// SPDX-License-Identifier: MIT
/* The wire protocol: round trips, every refusal of the decoder, auth. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "leap/wire.h"
#include "../../user/wire/transport.h"

static uint8_t buf[LEAP_WIRE_MAX_MSG + 64];

static void put32_at(size_t at, uint32_t v)
{
	memcpy(buf + at, &v, 4); /* the test host is little-endian (x86, arm64) */
}

/* A valid WRITE request of count pages at offsets i * 4096 * 3. */
static long make_write(uint32_t count)
{
	uint64_t off[LEAP_WIRE_MAX_BATCH] = {0};
	long n;

	for (uint32_t i = 0; i < count; i++)
		off[i] = (uint64_t)i * 3 * LEAP_WIRE_PAGE_SIZE;
	n = leap_wire_enc_io_req(buf, sizeof(buf), LEAP_WOP_WRITE, 77, 5, count, off);
	assert_true(n > 0);
	for (uint32_t i = 0; i < count; i++)
		memset(buf + n + (size_t)i * LEAP_WIRE_PAGE_SIZE, 'a' + (int)i % 26,
		       LEAP_WIRE_PAGE_SIZE);
	return n + (long)count * LEAP_WIRE_PAGE_SIZE;
}

static void test_roundtrip_requests(void **state)
{
	struct leap_wire_msg m;
	uint8_t mac[LEAP_WIRE_MAC_LEN];
	uint64_t off[2] = {0, 8192};
	long n;
	(void)state;

	memset(mac, 0x33, sizeof(mac));
	n = leap_wire_enc_hello(buf, sizeof(buf), 1, mac);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), 0);
	assert_int_equal(m.hdr.opcode, LEAP_WOP_HELLO);
	assert_memory_equal(m.u.hello.nonce, mac, LEAP_WIRE_NONCE_LEN);
	assert_int_equal(m.hdr.req_id, 1);
	assert_int_equal(m.u.hello.min_version, LEAP_WIRE_VERSION);

	memset(mac, 0x5a, sizeof(mac));
	n = leap_wire_enc_auth(buf, sizeof(buf), 2, mac);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), 0);
	assert_memory_equal(m.u.auth.mac, mac, sizeof(mac));

	n = leap_wire_enc_io_req(buf, sizeof(buf), LEAP_WOP_READ, 3, 9, 2, off);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), 0);
	assert_int_equal(m.u.io.dev, 9);
	assert_int_equal(m.u.io.count, 2);
	assert_int_equal(m.u.io.offset[1], 8192);
	assert_null(m.u.io.pages);

	n = make_write(LEAP_WIRE_MAX_BATCH);
	assert_int_equal(n, LEAP_WIRE_MAX_MSG); /* the biggest message there is */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), 0);
	assert_int_equal(m.u.io.count, LEAP_WIRE_MAX_BATCH);
	assert_int_equal(m.u.io.offset[63], 63ULL * 3 * 4096);
	assert_int_equal(m.u.io.pages[63 * 4096], 'a' + 63 % 26);

	n = leap_wire_enc_empty(buf, sizeof(buf), LEAP_WOP_STATS, 0, 4);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), 0);
	assert_int_equal(m.hdr.opcode, LEAP_WOP_STATS);

	/* FREE: offsets only, validated as a READ's; no pages may follow. */
	n = leap_wire_enc_io_req(buf, sizeof(buf), LEAP_WOP_FREE, 5, 9, 2, off);
	assert_int_equal(n, LEAP_WIRE_HDR_SIZE + LEAP_WIRE_IO_HDR + 16);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), 0);
	assert_int_equal(m.hdr.opcode, LEAP_WOP_FREE);
	assert_int_equal(m.u.io.offset[1], 8192);
	assert_null(m.u.io.pages);
	buf[LEAP_WIRE_HDR_SIZE + LEAP_WIRE_IO_HDR + 8] = 1; /* unaligned offset */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_OFFSET);
	off[1] = 8191;
	assert_true(leap_wire_enc_io_req(buf, sizeof(buf), LEAP_WOP_FREE, 5, 9, 2, off) <
		    0);
}

static void test_roundtrip_replies(void **state)
{
	struct leap_wire_msg m;
	uint8_t nonce[LEAP_WIRE_NONCE_LEN], mac[LEAP_WIRE_MAC_LEN];
	uint64_t v[LEAP_WSTAT_NR];
	long n;
	(void)state;

	memset(nonce, 7, sizeof(nonce));
	memset(mac, 9, sizeof(mac));
	n = leap_wire_enc_hello_rep(buf, sizeof(buf), 1, 1000, 0xabcdef, nonce, mac);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), 0);
	assert_int_equal(m.hdr.flags, LEAP_WF_REPLY);
	assert_int_equal(m.u.hello_rep.capacity_pages, 1000);
	assert_int_equal(m.u.hello_rep.instance, 0xabcdef);
	assert_int_equal(m.u.hello_rep.max_batch, LEAP_WIRE_MAX_BATCH);
	assert_memory_equal(m.u.hello_rep.nonce, nonce, sizeof(nonce));
	assert_memory_equal(m.u.hello_rep.mac, mac, sizeof(mac));

	n = leap_wire_enc_read_rep(buf, sizeof(buf), 2, 4, 3, 0x5);
	memset(buf + n, 1, 3 * LEAP_WIRE_PAGE_SIZE);
	assert_int_equal(leap_wire_decode(buf, (size_t)n + 3 * LEAP_WIRE_PAGE_SIZE, &m),
			 0);
	assert_int_equal(m.u.io.present, 0x5);
	assert_int_equal(m.u.io.count, 3);
	assert_int_equal(m.u.io.pages[0], 1);

	n = leap_wire_enc_write_rep(buf, sizeof(buf), 3, 4, 64);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), 0);
	assert_int_equal(m.u.io.count, 64);

	n = leap_wire_enc_free_rep(buf, sizeof(buf), 3, 4, 7);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), 0);
	assert_int_equal(m.hdr.opcode, LEAP_WOP_FREE);
	assert_int_equal(m.u.io.count, 7);
	/* A FREE reply carries nothing else: one byte more is refused. */
	buf[16]++;
	assert_int_equal(leap_wire_decode(buf, (size_t)n + 1, &m), -LEAP_WERR_LENGTH);
	assert_true(leap_wire_enc_free_rep(buf, sizeof(buf), 3, 4, 0) < 0);
	assert_true(leap_wire_enc_free_rep(buf, sizeof(buf), 3, 4, 65) < 0);

	for (int i = 0; i < LEAP_WSTAT_NR; i++)
		v[i] = (uint64_t)i * 1000 + 1;
	n = leap_wire_enc_stats_rep(buf, sizeof(buf), 4, v, LEAP_WSTAT_NR);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), 0);
	assert_int_equal(m.u.stats.n, LEAP_WSTAT_NR);
	assert_int_equal(m.u.stats.value[LEAP_WSTAT_NR - 1],
			 (LEAP_WSTAT_NR - 1) * 1000 + 1);

	n = leap_wire_enc_error(buf, sizeof(buf), 5, LEAP_WERR_AUTH, "nope");
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), 0);
	assert_int_equal(m.u.error.code, LEAP_WERR_AUTH);
	assert_int_equal(m.u.error.msg_len, 4);
	assert_memory_equal(m.u.error.msg, "nope", 4);

	n = leap_wire_enc_empty(buf, sizeof(buf), LEAP_WOP_AUTH, LEAP_WF_REPLY, 6);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), 0);
}

static void test_bad_headers(void **state)
{
	struct leap_wire_msg m;
	long n;
	(void)state;

	n = leap_wire_enc_empty(buf, sizeof(buf), LEAP_WOP_STATS, 0, 1);
	for (long len = 0; len < LEAP_WIRE_HDR_SIZE; len++)
		assert_int_equal(leap_wire_decode(buf, (size_t)len, &m),
				 -LEAP_WERR_SHORT);

	buf[0] ^= 1;
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_MAGIC);
	buf[0] ^= 1;
	buf[4] = 2; /* version 2 */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_VERSION);
	buf[4] = 0;
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_VERSION);
	buf[4] = LEAP_WIRE_VERSION;
	for (int op = 0; op < 256; op++) {
		buf[6] = (uint8_t)op;
		if (op >= 1 && op < LEAP_WOP_ERROR)
			continue;
		if (op == LEAP_WOP_MAP || op == LEAP_WOP_FH_MOVE || op == LEAP_WOP_FREE) {
			/* known; empty is too short */
			assert_int_equal(leap_wire_decode(buf, (size_t)n, &m),
					 -LEAP_WERR_LENGTH);
			continue;
		}
		/* Unknown ops, and ERROR sent as a request. */
		assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_OP);
	}
	buf[6] = LEAP_WOP_STATS;
	buf[7] = 0x80; /* unknown flag */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_OP);
	buf[7] = 0;
	put32_at(20, 1); /* reserved */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_LENGTH);
	put32_at(20, 0);
	put32_at(16, LEAP_WIRE_MAX_PAYLOAD + 1); /* oversize: refused from the header */
	assert_int_equal(leap_wire_decode_hdr(buf, LEAP_WIRE_HDR_SIZE, &m.hdr),
			 -LEAP_WERR_LENGTH);
	put32_at(16, 0xffffffff);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_LENGTH);
	put32_at(16, 8); /* says 8 bytes follow, none do */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_SHORT);
	put32_at(16, 0);
	/* Trailing bytes beyond length. */
	assert_int_equal(leap_wire_decode(buf, (size_t)n + 1, &m), -LEAP_WERR_LENGTH);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), 0);
}

static void test_bad_io(void **state)
{
	struct leap_wire_msg m;
	uint64_t off[2] = {4096, 0};
	long n;
	(void)state;

	/* Encoders refuse what the decoder would. */
	assert_int_equal(
		leap_wire_enc_io_req(buf, sizeof(buf), LEAP_WOP_READ, 1, 0, 0, off), -1);
	assert_int_equal(leap_wire_enc_io_req(buf, sizeof(buf), LEAP_WOP_READ, 1, 0,
					      LEAP_WIRE_MAX_BATCH + 1, off),
			 -1);
	off[0] = 4095;
	assert_int_equal(
		leap_wire_enc_io_req(buf, sizeof(buf), LEAP_WOP_READ, 1, 0, 1, off), -1);
	off[0] = LEAP_WIRE_MAX_OFFSET;
	assert_int_equal(
		leap_wire_enc_io_req(buf, sizeof(buf), LEAP_WOP_READ, 1, 0, 1, off), -1);
	assert_int_equal(leap_wire_enc_io_req(buf, 40, LEAP_WOP_READ, 1, 0, 2, off), -1);

	n = make_write(2);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), 0);
	/* count 0, count 65 (with a matching length: still refused) */
	put32_at(LEAP_WIRE_HDR_SIZE + 4, 0);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_BATCH);
	put32_at(LEAP_WIRE_HDR_SIZE + 4, LEAP_WIRE_MAX_BATCH + 1);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_BATCH);
	put32_at(LEAP_WIRE_HDR_SIZE + 4, 0xffffffff);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_BATCH);
	/* count 3 with two pages' worth of payload */
	put32_at(LEAP_WIRE_HDR_SIZE + 4, 3);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_LENGTH);
	put32_at(LEAP_WIRE_HDR_SIZE + 4, 2);
	/* A WRITE cut short by a page (length adjusted: still inconsistent). */
	put32_at(16, (uint32_t)(n - LEAP_WIRE_HDR_SIZE - 4096));
	assert_int_equal(leap_wire_decode(buf, (size_t)n - 4096, &m), -LEAP_WERR_LENGTH);
	put32_at(16, (uint32_t)(n - LEAP_WIRE_HDR_SIZE));
	/* Unaligned and out-of-range offsets. */
	put32_at(LEAP_WIRE_HDR_SIZE + 8 + 8, 12289 + 0);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_OFFSET);
	put32_at(LEAP_WIRE_HDR_SIZE + 8 + 8, 0);
	put32_at(LEAP_WIRE_HDR_SIZE + 8 + 8 + 4, 1U << 16); /* 2^48 */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_OFFSET);
	put32_at(LEAP_WIRE_HDR_SIZE + 8 + 8 + 4, 0xffffffff);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_OFFSET);
	put32_at(LEAP_WIRE_HDR_SIZE + 8 + 8 + 4, 0);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), 0);
	/* A READ request must carry no pages. */
	buf[6] = LEAP_WOP_READ;
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_LENGTH);
}

static void test_bad_replies(void **state)
{
	struct leap_wire_msg m;
	uint8_t nonce[LEAP_WIRE_NONCE_LEN] = {0};
	char msg[200];
	long n;
	(void)state;

	/* Presence bits beyond count. */
	assert_int_equal(leap_wire_enc_read_rep(buf, sizeof(buf), 1, 0, 2, 0x4), -1);
	n = leap_wire_enc_read_rep(buf, sizeof(buf), 1, 0, 2, 0x3);
	buf[LEAP_WIRE_HDR_SIZE + 8] = 0x7;
	assert_int_equal(leap_wire_decode(buf, (size_t)n + 2 * 4096, &m),
			 -LEAP_WERR_LENGTH);
	/* A server offering another batch size or page size. */
	n = leap_wire_enc_hello_rep(buf, sizeof(buf), 1, 10, 1, nonce, nonce);
	put32_at(LEAP_WIRE_HDR_SIZE + 4, 65);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_BATCH);
	put32_at(LEAP_WIRE_HDR_SIZE + 4, 64);
	put32_at(LEAP_WIRE_HDR_SIZE, 8192);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_BATCH);
	/* Error text: truncated by the encoder, oversize refused by the decoder. */
	memset(msg, 'x', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	n = leap_wire_enc_error(buf, sizeof(buf), 1, LEAP_WERR_INTERNAL, msg);
	assert_int_equal(n, LEAP_WIRE_HDR_SIZE + 8 + LEAP_WIRE_MAX_ERRMSG);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), 0);
	put32_at(LEAP_WIRE_HDR_SIZE + 4, LEAP_WIRE_MAX_ERRMSG + 1);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_LENGTH);
	/* Stats: too many values. */
	n = leap_wire_enc_stats_rep(buf, sizeof(buf), 1, NULL, 0);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), 0);
	put32_at(LEAP_WIRE_HDR_SIZE, LEAP_WIRE_MAX_STATS + 1);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_LENGTH);
	/* HELLO with min > max. */
	n = leap_wire_enc_hello(buf, sizeof(buf), 1, nonce);
	buf[LEAP_WIRE_HDR_SIZE] = 9;
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_VERSION);
	assert_string_equal(leap_wire_err_name(LEAP_WERR_BATCH), "bad batch count");
	assert_string_equal(leap_wire_err_name(1000), "unknown error");
	assert_string_equal(leap_wire_op_name(0), "?");
}

static void test_auth(void **state)
{
	uint8_t nonce[LEAP_WIRE_NONCE_LEN], nonce2[LEAP_WIRE_NONCE_LEN];
	uint8_t mac[LEAP_WIRE_MAC_LEN];
	const uint8_t secret[] = "0123456789abcdef-secret";
	const size_t slen = sizeof(secret) - 1;
	/* Known answer from Python's hmac module: role 'C', a = 0..31, b = 32..63. */
	static const uint8_t kat[LEAP_WIRE_MAC_LEN] = {
		0x11, 0xc7, 0xa0, 0x44, 0x3d, 0x76, 0xdd, 0x49, 0x4c, 0xe9, 0x0b,
		0xcf, 0xe2, 0xbd, 0xd0, 0xe0, 0xca, 0x12, 0xb1, 0x6d, 0x14, 0x48,
		0xec, 0x78, 0xb3, 0x7d, 0xbc, 0xc5, 0xf0, 0x1d, 0x77, 0xf7};
	(void)state;

	for (int i = 0; i < LEAP_WIRE_NONCE_LEN; i++) {
		nonce[i] = (uint8_t)i;
		nonce2[i] = (uint8_t)(i + 32);
	}
	assert_int_equal(
		leap_wire_mac(secret, slen, LEAP_WIRE_ROLE_CLIENT, nonce, nonce2, mac),
		0);
	assert_memory_equal(mac, kat, sizeof(kat));
	assert_true(leap_wire_mac_ok(secret, slen, LEAP_WIRE_ROLE_CLIENT, nonce, nonce2,
				     mac));
	/* The same nonces, the other role or order: a different answer (no
	 * reflecting the server's proof back as the client's). */
	assert_false(leap_wire_mac_ok(secret, slen, LEAP_WIRE_ROLE_SERVER, nonce, nonce2,
				      mac));
	assert_false(leap_wire_mac_ok(secret, slen, LEAP_WIRE_ROLE_CLIENT, nonce2, nonce,
				      mac));

	assert_int_equal(leap_wire_nonce(nonce), 0);
	assert_int_equal(leap_wire_nonce(nonce2), 0);
	assert_memory_not_equal(nonce, nonce2, sizeof(nonce));
	assert_int_equal(
		leap_wire_mac(secret, slen, LEAP_WIRE_ROLE_SERVER, nonce, nonce2, mac),
		0);
	assert_true(leap_wire_mac_ok(secret, slen, LEAP_WIRE_ROLE_SERVER, nonce, nonce2,
				     mac));
	assert_false(leap_wire_mac_ok(secret, slen, LEAP_WIRE_ROLE_SERVER, nonce2, nonce2,
				      mac));
	assert_false(leap_wire_mac_ok(secret, slen - 1, LEAP_WIRE_ROLE_SERVER, nonce,
				      nonce2, mac));
	mac[31] ^= 1;
	assert_false(leap_wire_mac_ok(secret, slen, LEAP_WIRE_ROLE_SERVER, nonce, nonce2,
				      mac));
}

static void write_file(const char *path, const char *data, mode_t mode)
{
	FILE *f;

	unlink(path);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(data, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

static void test_secret_file(void **state)
{
	char dir[] = "/tmp/leap-test-wire.XXXXXX", path[256], link[256], err[256];
	uint8_t s[LEAP_SECRET_MAX];
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/secret", dir);
	snprintf(link, sizeof(link), "%s/link", dir);

	write_file(path, "0123456789abcdef\n", 0600);
	assert_int_equal(leap_secret_load(path, s, sizeof(s), err, sizeof(err)), 16);
	assert_memory_equal(s, "0123456789abcdef", 16);
	write_file(path, "0123456789abcdef\n", 0400);
	assert_int_equal(leap_secret_load(path, s, sizeof(s), err, sizeof(err)), 16);
	write_file(path, "0123456789abcdef\n", 0640);
	assert_int_equal(leap_secret_load(path, s, sizeof(s), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "chmod 600"));
	write_file(path, "0123456789abcdef\n", 0604);
	assert_int_equal(leap_secret_load(path, s, sizeof(s), err, sizeof(err)), -1);
	write_file(path, "short\n", 0600);
	assert_int_equal(leap_secret_load(path, s, sizeof(s), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "16..4096"));
	write_file(path, "0123456789abcdef\n", 0600);
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(leap_secret_load(link, s, sizeof(s), err, sizeof(err)), -1);
	assert_int_equal(leap_secret_load(dir, s, sizeof(s), err, sizeof(err)), -1);
	unlink(link);
	unlink(path);
	assert_int_equal(leap_secret_load(path, s, sizeof(s), err, sizeof(err)), -1);
	rmdir(dir);
}

static void test_addr_split(void **state)
{
	char h[64], p[16];
	(void)state;

	assert_int_equal(leap_addr_split("127.0.0.1:7070", h, sizeof(h), p, sizeof(p)),
			 0);
	assert_string_equal(h, "127.0.0.1");
	assert_string_equal(p, "7070");
	assert_int_equal(leap_addr_split("[::1]:0", h, sizeof(h), p, sizeof(p)), 0);
	assert_string_equal(h, "::1");
	assert_int_equal(leap_addr_split("::1:80", h, sizeof(h), p, sizeof(p)), -1);
	assert_int_equal(leap_addr_split("host", h, sizeof(h), p, sizeof(p)), -1);
	assert_int_equal(leap_addr_split(":80", h, sizeof(h), p, sizeof(p)), -1);
	assert_int_equal(leap_addr_split("h:8x", h, sizeof(h), p, sizeof(p)), -1);
	assert_int_equal(leap_addr_split("h:", h, sizeof(h), p, sizeof(p)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_requests),
		cmocka_unit_test(test_roundtrip_replies),
		cmocka_unit_test(test_bad_headers),
		cmocka_unit_test(test_bad_io),
		cmocka_unit_test(test_bad_replies),
		cmocka_unit_test(test_auth),
		cmocka_unit_test(test_secret_file),
		cmocka_unit_test(test_addr_split),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
