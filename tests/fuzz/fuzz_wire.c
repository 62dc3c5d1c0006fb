// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the wire decoder (user/wire/wire.c), the code that
 * parses bytes from unauthenticated peers.  Two modes, picked by the first
 * input byte, so the fuzzer reaches deep states without a seed corpus:
 *  - raw: decode the rest as one message;
 *  - structured: build a valid message of a chosen type with the encoders
 *    from the input, check it decodes to what was encoded, then flip bytes
 *    the input names and decode again.
 * Invariants checked on every accepted message: the lengths add up, counts
 * and offsets are within the protocol's limits, pointers stay in the buffer.
 *
 *   clang -fsanitize=fuzzer,address,undefined ... (mk/backend.mk: make fuzz)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "leap/wire.h"

#define CHECK(c)                                                                         \
	do {                                                                             \
		if (!(c))                                                                \
			abort();                                                         \
	} while (0)

static uint8_t msgbuf[LEAP_WIRE_MAX_MSG];

static void check_accepted(const uint8_t *buf, size_t len, const struct leap_wire_msg *m)
{
	const uint8_t *end = buf + len;

	CHECK(len == LEAP_WIRE_HDR_SIZE + (size_t)m->hdr.length);
	CHECK(m->hdr.opcode >= 1 && m->hdr.opcode <= LEAP_WOP_MAX);
	switch (m->hdr.opcode) {
	case LEAP_WOP_READ:
	case LEAP_WOP_WRITE:
	case LEAP_WOP_FREE:
		CHECK(m->u.io.count >= 1 && m->u.io.count <= LEAP_WIRE_MAX_BATCH);
		if (!(m->hdr.flags & LEAP_WF_REPLY))
			for (uint32_t i = 0; i < m->u.io.count; i++) {
				CHECK(m->u.io.offset[i] % LEAP_WIRE_PAGE_SIZE == 0);
				CHECK(m->u.io.offset[i] < LEAP_WIRE_MAX_OFFSET);
			}
		if (m->u.io.pages) {
			CHECK(m->u.io.pages >= buf);
			CHECK(m->u.io.pages +
				      (size_t)m->u.io.count * LEAP_WIRE_PAGE_SIZE ==
			      end);
		}
		break;
	case LEAP_WOP_ERROR:
		CHECK(m->u.error.msg_len <= LEAP_WIRE_MAX_ERRMSG);
		CHECK((const uint8_t *)m->u.error.msg + m->u.error.msg_len == end);
		break;
	case LEAP_WOP_STATS:
		CHECK(m->u.stats.n <= LEAP_WIRE_MAX_STATS);
		break;
	case LEAP_WOP_MAP:
		CHECK(m->u.map.count >= 1 && m->u.map.count <= LEAP_WIRE_MAX_BATCH);
		if (!(m->hdr.flags & LEAP_WF_REPLY)) {
			for (uint32_t i = 0; i < m->u.map.count; i++) {
				CHECK(m->u.map.offset[i] % LEAP_WIRE_PAGE_SIZE == 0);
				CHECK(m->u.map.offset[i] < LEAP_WIRE_MAX_OFFSET);
			}
			break;
		}
		/* An accepted reply never points an RDMA operation outside the
		 * region the server exported. */
		CHECK(m->u.map.base % LEAP_WIRE_PAGE_SIZE == 0 && m->u.map.len > 0);
		CHECK(m->u.map.base + m->u.map.len > m->u.map.base);
		for (uint32_t i = 0; i < m->u.map.count; i++)
			if (m->u.map.present >> i & 1)
				CHECK((uint64_t)(m->u.map.idx[i] + 1ULL) *
					      LEAP_WIRE_PAGE_SIZE <=
				      m->u.map.len);
		break;
	}
}

static void decode_checked(const uint8_t *buf, size_t len)
{
	struct leap_wire_msg m;
	int rc = leap_wire_decode(buf, len, &m);

	CHECK(rc <= 0 && rc >= -LEAP_WERR_MAX);
	if (rc == 0)
		check_accepted(buf, len, &m);
}

static uint64_t take(const uint8_t **p, size_t *n, size_t bytes)
{
	uint64_t v = 0;

	for (size_t i = 0; i < bytes && *n; i++, (*p)++, (*n)--)
		v |= (uint64_t) * *p << (8 * i);
	return v;
}

/* Builds a valid message from the input; returns its size. */
static long build(const uint8_t **p, size_t *n)
{
	uint64_t off[LEAP_WIRE_MAX_BATCH], v[LEAP_WIRE_MAX_STATS] = {0};
	uint8_t blob[LEAP_WIRE_NONCE_LEN] = {0};
	unsigned kind = (unsigned)take(p, n, 1) % 15;
	uint32_t idx[LEAP_WIRE_MAX_BATCH];
	uint64_t id = take(p, n, 8);
	uint32_t count = (uint32_t)take(p, n, 1) % LEAP_WIRE_MAX_BATCH + 1;
	uint32_t dev = (uint32_t)take(p, n, 4);
	char msg[LEAP_WIRE_MAX_ERRMSG + 1];
	long len;

	for (uint32_t i = 0; i < count; i++)
		off[i] = (take(p, n, 6) * LEAP_WIRE_PAGE_SIZE) % LEAP_WIRE_MAX_OFFSET;
	switch (kind) {
	case 0:
		return leap_wire_enc_hello(msgbuf, sizeof(msgbuf), id, blob);
	case 1:
		return leap_wire_enc_hello_rep(msgbuf, sizeof(msgbuf), id, off[0], dev,
					       blob, blob);
	case 2:
		return leap_wire_enc_auth(msgbuf, sizeof(msgbuf), id, blob);
	case 3:
		return leap_wire_enc_io_req(msgbuf, sizeof(msgbuf), LEAP_WOP_READ, id,
					    dev, count, off);
	case 4:
		len = leap_wire_enc_io_req(msgbuf, sizeof(msgbuf), LEAP_WOP_WRITE, id,
					   dev, count, off);
		CHECK(len > 0);
		memset(msgbuf + len, 0xa5, (size_t)count * LEAP_WIRE_PAGE_SIZE);
		return len + (long)count * LEAP_WIRE_PAGE_SIZE;
	case 5:
		len = leap_wire_enc_read_rep(msgbuf, sizeof(msgbuf), id, dev, count,
					     count < 64 ? off[0] & ((1ULL << count) - 1)
							: off[0]);
		CHECK(len > 0);
		memset(msgbuf + len, 0x5a, (size_t)count * LEAP_WIRE_PAGE_SIZE);
		return len + (long)count * LEAP_WIRE_PAGE_SIZE;
	case 6:
		return leap_wire_enc_write_rep(msgbuf, sizeof(msgbuf), id, dev, count);
	case 7:
		return leap_wire_enc_stats_rep(msgbuf, sizeof(msgbuf), id, v,
					       count % (LEAP_WIRE_MAX_STATS + 1));
	case 13:
		return leap_wire_enc_io_req(msgbuf, sizeof(msgbuf), LEAP_WOP_FREE, id,
					    dev, count, off);
	case 14:
		return leap_wire_enc_free_rep(msgbuf, sizeof(msgbuf), id, dev, count);
	case 9:
		return leap_wire_enc_map_req(msgbuf, sizeof(msgbuf), id, dev, count,
					     dev & LEAP_WMAP_ALLOC, off);
	case 10:
		for (uint32_t i = 0; i < count; i++)
			idx[i] = (uint32_t)(off[i] / LEAP_WIRE_PAGE_SIZE % 4096);
		return leap_wire_enc_map_rep(
			msgbuf, sizeof(msgbuf), id, dev, count,
			count < 64 ? off[0] & ((1ULL << count) - 1) : off[0], dev,
			dev & LEAP_WMAP_REP_FH, off[1 % count] & ~0xfffULL,
			4096ULL * LEAP_WIRE_PAGE_SIZE, idx);
	case 11:
		for (uint32_t i = 0; i < LEAP_WIRE_MAX_BATCH; i++)
			idx[i] = (uint32_t)off[i % count];
		return leap_wire_enc_fh_req(msgbuf, sizeof(msgbuf), id,
					    count % (LEAP_WIRE_FH_MAX + 1), idx, dev % 17,
					    idx + count / 2);
	case 12:
		for (uint32_t i = 0; i < LEAP_WIRE_MAX_BATCH; i++)
			idx[i] = (uint32_t)off[i % count];
		/* A valid geometry: 2^k-page regions, whole regions. */
		return leap_wire_enc_fh_rep(msgbuf, sizeof(msgbuf), id, 0,
					    dev & LEAP_WFH_UNPINNED, dev % 64 + 1, off[0],
					    (uint64_t)(count + 1) *
						    (LEAP_WIRE_PAGE_SIZE << (dev % 8)),
					    LEAP_WIRE_PAGE_SIZE << (dev % 8),
					    count % (LEAP_WIRE_FH_MAX + 1), idx);
	default:
		memset(msg, 'e', sizeof(msg));
		msg[count * 2 < sizeof(msg) ? count * 2 : sizeof(msg) - 1] = '\0';
		return leap_wire_enc_error(msgbuf, sizeof(msgbuf), id, dev, msg);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct leap_wire_msg m;
	long len;

	if (size == 0)
		return 0;
	if (data[0] & 1) {
		decode_checked(data + 1, size - 1);
		return 0;
	}
	data++;
	size--;
	len = build(&data, &size);
	CHECK(len > 0 && (size_t)len <= sizeof(msgbuf));
	/* What the encoders produce, the decoder accepts. */
	CHECK(leap_wire_decode(msgbuf, (size_t)len, &m) == 0);
	check_accepted(msgbuf, (size_t)len, &m);
	/* Then mutations: (position, xor) pairs, and a length to cut or extend to. */
	while (size >= 4) {
		uint32_t pos = (uint32_t)take(&data, &size, 3) % (uint32_t)len;

		msgbuf[pos] ^= (uint8_t)take(&data, &size, 1);
	}
	decode_checked(msgbuf, (size_t)len);
	decode_checked(msgbuf,
		       (size_t)len - (size ? data[0] % (len < 256 ? len : 256) : 0));
	return 0;
}
