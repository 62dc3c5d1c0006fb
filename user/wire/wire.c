// SPDX-License-Identifier: MIT
/*
 * Encoder and decoder of the leap wire protocol (include/leap/wire.h).
 * The decoder is the trust boundary of leap-memd: it sees bytes from any
 * peer that can connect, before authentication.  It therefore checks the
 * header, then that the payload length is exactly what the opcode and its
 * counts imply, then every offset, and only then fills the message.  It is
 * fuzzed by tests/fuzz/fuzz_wire.c.
 */
#include <endian.h>
#include <string.h>

#include "leap/wire.h"

_Static_assert(LEAP_WIRE_MAX_BATCH <= 64, "presence mask is one u64");
_Static_assert(LEAP_WSTAT_NR <= LEAP_WIRE_MAX_STATS, "stats fit a reply");
_Static_assert(LEAP_WIRE_MAX_PAYLOAD < (1U << 31), "payload length fits");

static const char *const op_names[] = {
	[LEAP_WOP_HELLO] = "HELLO",	[LEAP_WOP_AUTH] = "AUTH",
	[LEAP_WOP_READ] = "READ",	[LEAP_WOP_WRITE] = "WRITE",
	[LEAP_WOP_FREE] = "FREE",	[LEAP_WOP_STATS] = "STATS",
	[LEAP_WOP_ERROR] = "ERROR",	[LEAP_WOP_MAP] = "MAP",
	[LEAP_WOP_FH_MOVE] = "FH_MOVE",
};

static const char *const err_names[] = {
	[LEAP_WERR_OK] = "ok",
	[LEAP_WERR_SHORT] = "short message",
	[LEAP_WERR_MAGIC] = "bad magic",
	[LEAP_WERR_VERSION] = "unsupported version",
	[LEAP_WERR_OP] = "unknown opcode or flags",
	[LEAP_WERR_LENGTH] = "bad length",
	[LEAP_WERR_BATCH] = "bad batch count",
	[LEAP_WERR_OFFSET] = "bad offset",
	[LEAP_WERR_AUTH] = "authentication failed",
	[LEAP_WERR_STATE] = "not allowed in this state",
	[LEAP_WERR_RANGE] = "offset out of range",
	[LEAP_WERR_NOSPACE] = "server full",
	[LEAP_WERR_INTERNAL] = "internal error",
};

const char *leap_wire_op_name(unsigned op)
{
	if (op >= 1 && op <= LEAP_WOP_MAX)
		return op_names[op];
	return "?";
}

const char *leap_wire_err_name(unsigned err)
{
	if (err <= LEAP_WERR_MAX)
		return err_names[err];
	return "unknown error";
}

/* ---- little-endian access ---------------------------------------------- */

static void put16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, sizeof(v));
}

static void put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static void put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static uint16_t get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return le16toh(v);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

/* ---- decoding ------------------------------------------------------------- */

int leap_wire_decode_hdr(const void *buf, size_t len, struct leap_wire_hdr *h)
{
	const uint8_t *p = buf;

	if (len < LEAP_WIRE_HDR_SIZE)
		return -LEAP_WERR_SHORT;
	h->magic = get32(p);
	h->version = get16(p + 4);
	h->opcode = p[6];
	h->flags = p[7];
	h->req_id = get64(p + 8);
	h->length = get32(p + 16);
	if (h->magic != LEAP_WIRE_MAGIC)
		return -LEAP_WERR_MAGIC;
	if (h->version != LEAP_WIRE_VERSION)
		return -LEAP_WERR_VERSION;
	if (h->opcode < 1 || h->opcode > LEAP_WOP_MAX || (h->flags & ~LEAP_WF_REPLY))
		return -LEAP_WERR_OP;
	/* ERROR exists only as a reply. */
	if (h->opcode == LEAP_WOP_ERROR && !(h->flags & LEAP_WF_REPLY))
		return -LEAP_WERR_OP;
	if (get32(p + 20) != 0 || h->length > LEAP_WIRE_MAX_PAYLOAD)
		return -LEAP_WERR_LENGTH;
	return 0;
}

static int check_offset(uint64_t off)
{
	if (off % LEAP_WIRE_PAGE_SIZE || off >= LEAP_WIRE_MAX_OFFSET)
		return -LEAP_WERR_OFFSET;
	return 0;
}

/* dev + count; count within the batch limit. */
static int decode_io_head(const uint8_t *p, uint32_t len, struct leap_wire_msg *m)
{
	if (len < LEAP_WIRE_IO_HDR)
		return -LEAP_WERR_LENGTH;
	m->u.io.dev = get32(p);
	m->u.io.count = get32(p + 4);
	if (m->u.io.count < 1 || m->u.io.count > LEAP_WIRE_MAX_BATCH)
		return -LEAP_WERR_BATCH;
	return 0;
}

/* READ/WRITE requests: offsets, then pages for a WRITE. */
static int decode_io_req(const uint8_t *p, uint32_t len, struct leap_wire_msg *m)
{
	int rc = decode_io_head(p, len, m);
	uint64_t want;

	if (rc)
		return rc;
	want = LEAP_WIRE_IO_HDR + 8ULL * m->u.io.count;
	if (m->hdr.opcode == LEAP_WOP_WRITE)
		want += (uint64_t)m->u.io.count * LEAP_WIRE_PAGE_SIZE;
	if (len != want)
		return -LEAP_WERR_LENGTH;
	for (uint32_t i = 0; i < m->u.io.count; i++) {
		m->u.io.offset[i] = get64(p + LEAP_WIRE_IO_HDR + 8 * i);
		rc = check_offset(m->u.io.offset[i]);
		if (rc)
			return rc;
	}
	m->u.io.pages = m->hdr.opcode == LEAP_WOP_WRITE
				? p + LEAP_WIRE_IO_HDR + 8 * m->u.io.count
				: NULL;
	return 0;
}

static int decode_map_req(const uint8_t *p, uint32_t len, struct leap_wire_msg *m)
{
	if (len < LEAP_WIRE_MAP_REQ_HDR)
		return -LEAP_WERR_LENGTH;
	m->u.map.dev = get32(p);
	m->u.map.count = get32(p + 4);
	m->u.map.flags = get32(p + 8);
	if (m->u.map.count < 1 || m->u.map.count > LEAP_WIRE_MAX_BATCH)
		return -LEAP_WERR_BATCH;
	if ((m->u.map.flags & ~LEAP_WMAP_ALLOC) || get32(p + 12) != 0)
		return -LEAP_WERR_OP;
	if (len != LEAP_WIRE_MAP_REQ_HDR + 8ULL * m->u.map.count)
		return -LEAP_WERR_LENGTH;
	for (uint32_t i = 0; i < m->u.map.count; i++) {
		m->u.map.offset[i] = get64(p + LEAP_WIRE_MAP_REQ_HDR + 8 * i);
		if (check_offset(m->u.map.offset[i]))
			return -LEAP_WERR_OFFSET;
	}
	return 0;
}

/*
 * The reply hands out remote addresses: everything is checked so that no
 * page can point outside the exported region (a buggy or hostile server
 * would otherwise aim our RDMA READ/WRITE at memory it did not export, or
 * at another page than the one asked for).
 */
static int decode_map_rep(const uint8_t *p, uint32_t len, struct leap_wire_msg *m)
{
	uint64_t pages;

	if (len < LEAP_WIRE_MAP_REP_HDR)
		return -LEAP_WERR_LENGTH;
	m->u.map.dev = get32(p);
	m->u.map.count = get32(p + 4);
	if (m->u.map.count < 1 || m->u.map.count > LEAP_WIRE_MAX_BATCH)
		return -LEAP_WERR_BATCH;
	if (len != LEAP_WIRE_MAP_REP_HDR + 4ULL * m->u.map.count)
		return -LEAP_WERR_LENGTH;
	m->u.map.flags = get32(p + 20);
	if (m->u.map.flags & ~(uint32_t)LEAP_WMAP_REP_FH)
		return -LEAP_WERR_OP;
	m->u.map.present = get64(p + 8);
	m->u.map.rkey = get32(p + 16);
	m->u.map.base = get64(p + 24);
	m->u.map.len = get64(p + 32);
	if (m->u.map.count < 64 && (m->u.map.present >> m->u.map.count))
		return -LEAP_WERR_LENGTH;
	if (m->u.map.base % LEAP_WIRE_PAGE_SIZE || m->u.map.len % LEAP_WIRE_PAGE_SIZE ||
	    m->u.map.len == 0 || m->u.map.base + m->u.map.len < m->u.map.base)
		return -LEAP_WERR_RANGE;
	pages = m->u.map.len / LEAP_WIRE_PAGE_SIZE;
	for (uint32_t i = 0; i < m->u.map.count; i++) {
		m->u.map.idx[i] = get32(p + LEAP_WIRE_MAP_REP_HDR + 4 * i);
		if (m->u.map.present >> i & 1 ? m->u.map.idx[i] >= pages
					      : m->u.map.idx[i] != 0)
			return -LEAP_WERR_RANGE;
	}
	return 0;
}

static int decode_fh_req(const uint8_t *p, uint32_t len, struct leap_wire_msg *m)
{
	if (len < LEAP_WIRE_FH_REQ_HDR)
		return -LEAP_WERR_LENGTH;
	m->u.fh.nunpin = get32(p);
	m->u.fh.npin = get32(p + 4);
	if (m->u.fh.nunpin > LEAP_WIRE_FH_MAX || m->u.fh.npin > LEAP_WIRE_FH_MAX)
		return -LEAP_WERR_BATCH;
	if (len != LEAP_WIRE_FH_REQ_HDR + 4ULL * (m->u.fh.nunpin + m->u.fh.npin))
		return -LEAP_WERR_LENGTH;
	p += LEAP_WIRE_FH_REQ_HDR;
	for (uint32_t i = 0; i < m->u.fh.nunpin; i++, p += 4)
		m->u.fh.unpin[i] = get32(p);
	for (uint32_t i = 0; i < m->u.fh.npin; i++, p += 4)
		m->u.fh.pin[i] = get32(p);
	return 0;
}

/* The geometry is what every later RDMA address is computed from: refuse
 * anything that is not whole, aligned, non-wrapping regions. */
static int decode_fh_rep(const uint8_t *p, uint32_t len, struct leap_wire_msg *m)
{
	uint64_t rs;

	if (len < LEAP_WIRE_FH_REP_HDR)
		return -LEAP_WERR_LENGTH;
	m->u.fh.status = get32(p);
	m->u.fh.flags = get32(p + 4);
	m->u.fh.share = get32(p + 8);
	m->u.fh.npin = get32(p + 12);
	m->u.fh.base = get64(p + 16);
	m->u.fh.size = get64(p + 24);
	m->u.fh.region_size = rs = get64(p + 32);
	if (m->u.fh.npin > LEAP_WIRE_FH_MAX || (m->u.fh.status && m->u.fh.npin))
		return -LEAP_WERR_BATCH;
	if (len != LEAP_WIRE_FH_REP_HDR + 4ULL * m->u.fh.npin)
		return -LEAP_WERR_LENGTH;
	if (m->u.fh.flags & ~(uint32_t)LEAP_WFH_UNPINNED)
		return -LEAP_WERR_OP;
	if (rs < LEAP_WIRE_PAGE_SIZE || (rs & (rs - 1)) || m->u.fh.size == 0 ||
	    m->u.fh.size % rs || m->u.fh.base % LEAP_WIRE_PAGE_SIZE ||
	    m->u.fh.base + m->u.fh.size < m->u.fh.base || m->u.fh.share == 0 ||
	    m->u.fh.size / rs > UINT32_MAX)
		return -LEAP_WERR_RANGE;
	for (uint32_t i = 0; i < m->u.fh.npin; i++)
		m->u.fh.rkey[i] = get32(p + LEAP_WIRE_FH_REP_HDR + 4 * i);
	return 0;
}

static int decode_request(const uint8_t *p, uint32_t len, struct leap_wire_msg *m)
{
	switch (m->hdr.opcode) {
	case LEAP_WOP_HELLO:
		if (len != LEAP_WIRE_HELLO_REQ_LEN || get32(p + 4) != 0)
			return -LEAP_WERR_LENGTH;
		m->u.hello.min_version = get16(p);
		m->u.hello.max_version = get16(p + 2);
		m->u.hello.nonce = p + 8;
		if (m->u.hello.min_version > m->u.hello.max_version)
			return -LEAP_WERR_VERSION;
		return 0;
	case LEAP_WOP_AUTH:
		if (len != LEAP_WIRE_MAC_LEN)
			return -LEAP_WERR_LENGTH;
		m->u.auth.mac = p;
		return 0;
	case LEAP_WOP_READ:
	case LEAP_WOP_WRITE:
	case LEAP_WOP_FREE:
		return decode_io_req(p, len, m);
	case LEAP_WOP_STATS:
		return len == 0 ? 0 : -LEAP_WERR_LENGTH;
	case LEAP_WOP_MAP:
		return decode_map_req(p, len, m);
	case LEAP_WOP_FH_MOVE:
		return decode_fh_req(p, len, m);
	}
	return -LEAP_WERR_OP;
}

static int decode_reply(const uint8_t *p, uint32_t len, struct leap_wire_msg *m)
{
	int rc;

	switch (m->hdr.opcode) {
	case LEAP_WOP_HELLO:
		if (len != LEAP_WIRE_HELLO_REP_LEN)
			return -LEAP_WERR_LENGTH;
		m->u.hello_rep.page_size = get32(p);
		m->u.hello_rep.max_batch = get32(p + 4);
		m->u.hello_rep.capacity_pages = get64(p + 8);
		m->u.hello_rep.instance = get64(p + 16);
		m->u.hello_rep.nonce = p + 24;
		m->u.hello_rep.mac = p + 24 + LEAP_WIRE_NONCE_LEN;
		/* A server with other page or batch sizes is a different protocol. */
		if (m->u.hello_rep.page_size != LEAP_WIRE_PAGE_SIZE ||
		    m->u.hello_rep.max_batch < 1 ||
		    m->u.hello_rep.max_batch > LEAP_WIRE_MAX_BATCH)
			return -LEAP_WERR_BATCH;
		return 0;
	case LEAP_WOP_AUTH:
		return len == 0 ? 0 : -LEAP_WERR_LENGTH;
	case LEAP_WOP_READ:
		rc = decode_io_head(p, len, m);
		if (rc)
			return rc;
		if (len !=
		    LEAP_WIRE_IO_HDR + 8 + (uint64_t)m->u.io.count * LEAP_WIRE_PAGE_SIZE)
			return -LEAP_WERR_LENGTH;
		m->u.io.present = get64(p + LEAP_WIRE_IO_HDR);
		/* Bits beyond count would claim pages that are not there. */
		if (m->u.io.count < 64 && (m->u.io.present >> m->u.io.count))
			return -LEAP_WERR_LENGTH;
		m->u.io.pages = p + LEAP_WIRE_IO_HDR + 8;
		return 0;
	case LEAP_WOP_WRITE:
	case LEAP_WOP_FREE:
		rc = decode_io_head(p, len, m);
		if (rc)
			return rc;
		return len == LEAP_WIRE_IO_HDR ? 0 : -LEAP_WERR_LENGTH;
	case LEAP_WOP_STATS:
		if (len < 8)
			return -LEAP_WERR_LENGTH;
		m->u.stats.n = get32(p);
		if (get32(p + 4) != 0 || m->u.stats.n > LEAP_WIRE_MAX_STATS ||
		    len != 8 + 8ULL * m->u.stats.n)
			return -LEAP_WERR_LENGTH;
		for (uint32_t i = 0; i < m->u.stats.n; i++)
			m->u.stats.value[i] = get64(p + 8 + 8 * i);
		return 0;
	case LEAP_WOP_ERROR:
		if (len < 8)
			return -LEAP_WERR_LENGTH;
		m->u.error.code = get32(p);
		m->u.error.msg_len = get32(p + 4);
		if (m->u.error.msg_len > LEAP_WIRE_MAX_ERRMSG ||
		    len != 8 + m->u.error.msg_len)
			return -LEAP_WERR_LENGTH;
		m->u.error.msg = (const char *)p + 8;
		return 0;
	case LEAP_WOP_MAP:
		return decode_map_rep(p, len, m);
	case LEAP_WOP_FH_MOVE:
		return decode_fh_rep(p, len, m);
	}
	return -LEAP_WERR_OP;
}

int leap_wire_decode(const void *buf, size_t len, struct leap_wire_msg *m)
{
	const uint8_t *p = buf;
	int rc;

	memset(m, 0, sizeof(*m));
	rc = leap_wire_decode_hdr(buf, len, &m->hdr);
	if (rc)
		return rc;
	if (len - LEAP_WIRE_HDR_SIZE < m->hdr.length)
		return -LEAP_WERR_SHORT;
	if (len - LEAP_WIRE_HDR_SIZE > m->hdr.length)
		return -LEAP_WERR_LENGTH;
	p += LEAP_WIRE_HDR_SIZE;
	if (m->hdr.flags & LEAP_WF_REPLY)
		return decode_reply(p, m->hdr.length, m);
	return decode_request(p, m->hdr.length, m);
}

/* ---- encoding ------------------------------------------------------------- */

static void put_hdr(uint8_t *p, unsigned op, unsigned flags, uint64_t id, uint32_t length)
{
	put32(p, LEAP_WIRE_MAGIC);
	put16(p + 4, LEAP_WIRE_VERSION);
	p[6] = (uint8_t)op;
	p[7] = (uint8_t)flags;
	put64(p + 8, id);
	put32(p + 16, length);
	put32(p + 20, 0);
}

long leap_wire_enc_hello(void *buf, size_t cap, uint64_t id,
			 const uint8_t nonce[LEAP_WIRE_NONCE_LEN])
{
	uint8_t *p = buf;

	if (cap < LEAP_WIRE_HDR_SIZE + LEAP_WIRE_HELLO_REQ_LEN)
		return -1;
	put_hdr(p, LEAP_WOP_HELLO, 0, id, LEAP_WIRE_HELLO_REQ_LEN);
	put16(p + LEAP_WIRE_HDR_SIZE, LEAP_WIRE_VERSION);
	put16(p + LEAP_WIRE_HDR_SIZE + 2, LEAP_WIRE_VERSION);
	put32(p + LEAP_WIRE_HDR_SIZE + 4, 0);
	memcpy(p + LEAP_WIRE_HDR_SIZE + 8, nonce, LEAP_WIRE_NONCE_LEN);
	return LEAP_WIRE_HDR_SIZE + LEAP_WIRE_HELLO_REQ_LEN;
}

long leap_wire_enc_hello_rep(void *buf, size_t cap, uint64_t id, uint64_t capacity_pages,
			     uint64_t instance, const uint8_t nonce[LEAP_WIRE_NONCE_LEN],
			     const uint8_t mac[LEAP_WIRE_MAC_LEN])
{
	uint8_t *p = buf;

	if (cap < LEAP_WIRE_HDR_SIZE + LEAP_WIRE_HELLO_REP_LEN)
		return -1;
	put_hdr(p, LEAP_WOP_HELLO, LEAP_WF_REPLY, id, LEAP_WIRE_HELLO_REP_LEN);
	p += LEAP_WIRE_HDR_SIZE;
	put32(p, LEAP_WIRE_PAGE_SIZE);
	put32(p + 4, LEAP_WIRE_MAX_BATCH);
	put64(p + 8, capacity_pages);
	put64(p + 16, instance);
	memcpy(p + 24, nonce, LEAP_WIRE_NONCE_LEN);
	memcpy(p + 24 + LEAP_WIRE_NONCE_LEN, mac, LEAP_WIRE_MAC_LEN);
	return LEAP_WIRE_HDR_SIZE + LEAP_WIRE_HELLO_REP_LEN;
}

long leap_wire_enc_auth(void *buf, size_t cap, uint64_t id,
			const uint8_t mac[LEAP_WIRE_MAC_LEN])
{
	uint8_t *p = buf;

	if (cap < LEAP_WIRE_HDR_SIZE + LEAP_WIRE_MAC_LEN)
		return -1;
	put_hdr(p, LEAP_WOP_AUTH, 0, id, LEAP_WIRE_MAC_LEN);
	memcpy(p + LEAP_WIRE_HDR_SIZE, mac, LEAP_WIRE_MAC_LEN);
	return LEAP_WIRE_HDR_SIZE + LEAP_WIRE_MAC_LEN;
}

long leap_wire_enc_empty(void *buf, size_t cap, unsigned op, unsigned flags, uint64_t id)
{
	if (cap < LEAP_WIRE_HDR_SIZE || op < 1 || op > LEAP_WOP_MAX ||
	    (flags & ~LEAP_WF_REPLY))
		return -1;
	put_hdr(buf, op, flags, id, 0);
	return LEAP_WIRE_HDR_SIZE;
}

long leap_wire_enc_io_req(void *buf, size_t cap, unsigned op, uint64_t id, uint32_t dev,
			  uint32_t count, const uint64_t *offset)
{
	uint8_t *p = buf;
	size_t head = LEAP_WIRE_HDR_SIZE + LEAP_WIRE_IO_HDR + 8 * (size_t)count;
	uint32_t length;

	if ((op != LEAP_WOP_READ && op != LEAP_WOP_WRITE && op != LEAP_WOP_FREE) ||
	    count < 1 || count > LEAP_WIRE_MAX_BATCH || cap < head)
		return -1;
	for (uint32_t i = 0; i < count; i++)
		if (check_offset(offset[i]))
			return -1;
	length = LEAP_WIRE_IO_HDR + 8 * count;
	if (op == LEAP_WOP_WRITE)
		length += count * LEAP_WIRE_PAGE_SIZE;
	put_hdr(p, op, 0, id, length);
	p += LEAP_WIRE_HDR_SIZE;
	put32(p, dev);
	put32(p + 4, count);
	for (uint32_t i = 0; i < count; i++)
		put64(p + LEAP_WIRE_IO_HDR + 8 * i, offset[i]);
	return (long)head;
}

long leap_wire_enc_read_rep(void *buf, size_t cap, uint64_t id, uint32_t dev,
			    uint32_t count, uint64_t present)
{
	uint8_t *p = buf;

	if (count < 1 || count > LEAP_WIRE_MAX_BATCH ||
	    cap < LEAP_WIRE_HDR_SIZE + LEAP_WIRE_IO_HDR + 8 ||
	    (count < 64 && (present >> count)))
		return -1;
	put_hdr(p, LEAP_WOP_READ, LEAP_WF_REPLY, id,
		LEAP_WIRE_IO_HDR + 8 + count * LEAP_WIRE_PAGE_SIZE);
	p += LEAP_WIRE_HDR_SIZE;
	put32(p, dev);
	put32(p + 4, count);
	put64(p + 8, present);
	return LEAP_WIRE_HDR_SIZE + LEAP_WIRE_IO_HDR + 8;
}

static long enc_count_rep(void *buf, size_t cap, unsigned op, uint64_t id, uint32_t dev,
			  uint32_t count)
{
	uint8_t *p = buf;

	if (count < 1 || count > LEAP_WIRE_MAX_BATCH ||
	    cap < LEAP_WIRE_HDR_SIZE + LEAP_WIRE_IO_HDR)
		return -1;
	put_hdr(p, op, LEAP_WF_REPLY, id, LEAP_WIRE_IO_HDR);
	put32(p + LEAP_WIRE_HDR_SIZE, dev);
	put32(p + LEAP_WIRE_HDR_SIZE + 4, count);
	return LEAP_WIRE_HDR_SIZE + LEAP_WIRE_IO_HDR;
}

long leap_wire_enc_write_rep(void *buf, size_t cap, uint64_t id, uint32_t dev,
			     uint32_t count)
{
	return enc_count_rep(buf, cap, LEAP_WOP_WRITE, id, dev, count);
}

long leap_wire_enc_free_rep(void *buf, size_t cap, uint64_t id, uint32_t dev,
			    uint32_t count)
{
	return enc_count_rep(buf, cap, LEAP_WOP_FREE, id, dev, count);
}

long leap_wire_enc_stats_rep(void *buf, size_t cap, uint64_t id, const uint64_t *value,
			     uint32_t n)
{
	uint8_t *p = buf;
	size_t size = LEAP_WIRE_HDR_SIZE + 8 + 8 * (size_t)n;

	if (n > LEAP_WIRE_MAX_STATS || cap < size)
		return -1;
	put_hdr(p, LEAP_WOP_STATS, LEAP_WF_REPLY, id, 8 + 8 * n);
	p += LEAP_WIRE_HDR_SIZE;
	put32(p, n);
	put32(p + 4, 0);
	for (uint32_t i = 0; i < n; i++)
		put64(p + 8 + 8 * i, value[i]);
	return (long)size;
}

long leap_wire_enc_error(void *buf, size_t cap, uint64_t id, uint32_t code,
			 const char *msg)
{
	uint8_t *p = buf;
	size_t n = msg ? strnlen(msg, LEAP_WIRE_MAX_ERRMSG) : 0;

	if (cap < LEAP_WIRE_HDR_SIZE + 8 + n)
		return -1;
	put_hdr(p, LEAP_WOP_ERROR, LEAP_WF_REPLY, id, (uint32_t)(8 + n));
	p += LEAP_WIRE_HDR_SIZE;
	put32(p, code);
	put32(p + 4, (uint32_t)n);
	memcpy(p + 8, msg, n);
	return (long)(LEAP_WIRE_HDR_SIZE + 8 + n);
}

long leap_wire_enc_map_req(void *buf, size_t cap, uint64_t id, uint32_t dev,
			   uint32_t count, uint32_t flags, const uint64_t *offset)
{
	uint8_t *p = buf;
	size_t size = LEAP_WIRE_HDR_SIZE + LEAP_WIRE_MAP_REQ_HDR + 8 * (size_t)count;

	if (count < 1 || count > LEAP_WIRE_MAX_BATCH || (flags & ~LEAP_WMAP_ALLOC) ||
	    cap < size)
		return -1;
	for (uint32_t i = 0; i < count; i++)
		if (check_offset(offset[i]))
			return -1;
	put_hdr(p, LEAP_WOP_MAP, 0, id, (uint32_t)(size - LEAP_WIRE_HDR_SIZE));
	p += LEAP_WIRE_HDR_SIZE;
	put32(p, dev);
	put32(p + 4, count);
	put32(p + 8, flags);
	put32(p + 12, 0);
	for (uint32_t i = 0; i < count; i++)
		put64(p + LEAP_WIRE_MAP_REQ_HDR + 8 * i, offset[i]);
	return (long)size;
}

long leap_wire_enc_map_rep(void *buf, size_t cap, uint64_t id, uint32_t dev,
			   uint32_t count, uint64_t present, uint32_t rkey,
			   uint32_t flags, uint64_t base, uint64_t len,
			   const uint32_t *idx)
{
	uint8_t *p = buf;
	size_t size = LEAP_WIRE_HDR_SIZE + LEAP_WIRE_MAP_REP_HDR + 4 * (size_t)count;

	if (count < 1 || count > LEAP_WIRE_MAX_BATCH || cap < size ||
	    (count < 64 && (present >> count)) || (flags & ~(uint32_t)LEAP_WMAP_REP_FH))
		return -1;
	put_hdr(p, LEAP_WOP_MAP, LEAP_WF_REPLY, id,
		(uint32_t)(size - LEAP_WIRE_HDR_SIZE));
	p += LEAP_WIRE_HDR_SIZE;
	put32(p, dev);
	put32(p + 4, count);
	put64(p + 8, present);
	put32(p + 16, rkey);
	put32(p + 20, flags);
	put64(p + 24, base);
	put64(p + 32, len);
	for (uint32_t i = 0; i < count; i++)
		put32(p + LEAP_WIRE_MAP_REP_HDR + 4 * i, present >> i & 1 ? idx[i] : 0);
	return (long)size;
}

long leap_wire_enc_fh_req(void *buf, size_t cap, uint64_t id, uint32_t nunpin,
			  const uint32_t *unpin, uint32_t npin, const uint32_t *pin)
{
	uint8_t *p = buf;
	size_t size;

	if (nunpin > LEAP_WIRE_FH_MAX || npin > LEAP_WIRE_FH_MAX)
		return -1;
	size = LEAP_WIRE_HDR_SIZE + LEAP_WIRE_FH_REQ_HDR + 4 * (size_t)(nunpin + npin);
	if (cap < size)
		return -1;
	put_hdr(p, LEAP_WOP_FH_MOVE, 0, id, (uint32_t)(size - LEAP_WIRE_HDR_SIZE));
	p += LEAP_WIRE_HDR_SIZE;
	put32(p, nunpin);
	put32(p + 4, npin);
	p += LEAP_WIRE_FH_REQ_HDR;
	for (uint32_t i = 0; i < nunpin; i++, p += 4)
		put32(p, unpin[i]);
	for (uint32_t i = 0; i < npin; i++, p += 4)
		put32(p, pin[i]);
	return (long)size;
}

long leap_wire_enc_fh_rep(void *buf, size_t cap, uint64_t id, uint32_t status,
			  uint32_t flags, uint32_t share, uint64_t base, uint64_t size,
			  uint64_t region_size, uint32_t npin, const uint32_t *rkey)
{
	uint8_t *p = buf;
	size_t n;

	if (npin > LEAP_WIRE_FH_MAX || (status && npin))
		return -1;
	n = LEAP_WIRE_HDR_SIZE + LEAP_WIRE_FH_REP_HDR + 4 * (size_t)npin;
	if (cap < n)
		return -1;
	put_hdr(p, LEAP_WOP_FH_MOVE, LEAP_WF_REPLY, id,
		(uint32_t)(n - LEAP_WIRE_HDR_SIZE));
	p += LEAP_WIRE_HDR_SIZE;
	put32(p, status);
	put32(p + 4, flags);
	put32(p + 8, share);
	put32(p + 12, npin);
	put64(p + 16, base);
	put64(p + 24, size);
	put64(p + 32, region_size);
	for (uint32_t i = 0; i < npin; i++)
		put32(p + LEAP_WIRE_FH_REP_HDR + 4 * i, rkey[i]);
	return (long)n;
}
