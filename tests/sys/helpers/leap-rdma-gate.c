// SPDX-License-Identifier: MIT
/*
 * leap-rdma-gate ADDR SECRET-FILE: checks, against a leap-memd with
 * --transport rdma, that only an authenticated connection reaches the
 * exported page store by one-sided RDMA.  An authenticated connection
 * learns (rkey, address) of a page with MAP and writes and reads it; then
 * a connection that never authenticated, and one that said HELLO but not
 * AUTH, try RDMA READ and WRITE at that very address with that very rkey:
 * each must fail (the server's QP has no remote access before AUTH), and
 * the page must still hold what the authenticated client wrote.  An
 * authenticated connection reading just outside the region is refused too.
 * Exit 0 when all holds, 1 otherwise (with the reason on stderr).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leap/wire.h"
#include "transport.h"

static uint8_t secret[LEAP_SECRET_MAX], tx[1024], rx[LEAP_WIRE_MAX_MSG];
static size_t secret_len;
static const char *addr;

static int roundtrip(struct leap_conn *c, long n, struct leap_wire_msg *m)
{
	int64_t dl = leap_now_ms() + 5000;
	struct iovec iov = {tx, (size_t)n};
	struct leap_wire_hdr h;
	int rc = leap_conn_send_all(c, &iov, 1, dl);

	if (!rc)
		rc = leap_conn_recv_all(c, rx, LEAP_WIRE_HDR_SIZE, dl);
	if (!rc && leap_wire_decode_hdr(rx, LEAP_WIRE_HDR_SIZE, &h))
		rc = -EPROTO;
	if (!rc)
		rc = leap_conn_recv_all(c, rx + LEAP_WIRE_HDR_SIZE, h.length, dl);
	if (!rc && leap_wire_decode(rx, LEAP_WIRE_HDR_SIZE + h.length, m))
		rc = -EPROTO;
	return rc;
}

/* Connects; says HELLO if hello, and AUTH too if auth. */
static int open_conn(struct leap_conn *c, int hello, int auth)
{
	uint8_t nonce[LEAP_WIRE_NONCE_LEN], mac[LEAP_WIRE_MAC_LEN];
	struct leap_wire_msg m;
	char err[256];
	int rc = leap_rdma_transport.connect(c, addr, 5000, err, sizeof(err));

	if (rc) {
		fprintf(stderr, "leap-rdma-gate: %s\n", err);
		return rc;
	}
	if (!hello)
		return 0;
	leap_wire_nonce(nonce);
	rc = roundtrip(c, leap_wire_enc_hello(tx, sizeof(tx), 1, nonce), &m);
	if (rc || m.hdr.opcode != LEAP_WOP_HELLO)
		return rc ? rc : -EPROTO;
	if (!leap_wire_mac_ok(secret, secret_len, LEAP_WIRE_ROLE_SERVER, nonce,
			      m.u.hello_rep.nonce, m.u.hello_rep.mac))
		return -EACCES;
	if (!auth)
		return 0;
	leap_wire_mac(secret, secret_len, LEAP_WIRE_ROLE_CLIENT, m.u.hello_rep.nonce,
		      nonce, mac);
	rc = roundtrip(c, leap_wire_enc_auth(tx, sizeof(tx), 2, mac), &m);
	return rc ? rc : m.hdr.opcode == LEAP_WOP_AUTH ? 0 : -EACCES;
}

int main(int argc, char **argv)
{
	static uint8_t page[LEAP_WIRE_PAGE_SIZE], back[LEAP_WIRE_PAGE_SIZE],
		evil[LEAP_WIRE_PAGE_SIZE];
	uint8_t *out[1] = {back};
	struct leap_conn a = {.fd = -1};
	struct leap_wire_msg m;
	uint64_t off = 0, raddr;
	uint32_t rkey;
	char err[256];
	long n;
	int rc, bad = 0;

	if (argc != 3)
		return fprintf(stderr, "usage: leap-rdma-gate ADDR SECRET-FILE\n"), 2;
	addr = argv[1];
	n = leap_secret_load(argv[2], secret, sizeof(secret), err, sizeof(err));
	if (n < 0)
		return fprintf(stderr, "leap-rdma-gate: %s\n", err), 1;
	secret_len = (size_t)n;
	for (size_t i = 0; i < sizeof(page); i++) {
		page[i] = (uint8_t)(i * 7 + 1);
		evil[i] = 0xee;
	}

	/* The authenticated client: MAP, RDMA WRITE, RDMA READ. */
	rc = open_conn(&a, 1, 1);
	if (rc)
		return fprintf(stderr, "authenticated connect: %s\n", strerror(-rc)), 1;
	rc = roundtrip(
		&a,
		leap_wire_enc_map_req(tx, sizeof(tx), 3, 4242, 1, LEAP_WMAP_ALLOC, &off),
		&m);
	if (rc || m.hdr.opcode != LEAP_WOP_MAP || !(m.u.map.present & 1))
		return fprintf(stderr, "MAP failed (%d)\n", rc), 1;
	rkey = m.u.map.rkey;
	raddr = m.u.map.base + (uint64_t)m.u.map.idx[0] * LEAP_WIRE_PAGE_SIZE;
	rc = leap_rdma_transport.write_pages(&a, rkey, &raddr, 1, page,
					     leap_now_ms() + 5000);
	if (!rc)
		rc = leap_rdma_transport.read_pages(&a, rkey, &raddr, 1, out,
						    leap_now_ms() + 5000);
	if (rc || memcmp(page, back, sizeof(page)))
		return fprintf(stderr, "authenticated RDMA write/read failed (%d)\n", rc),
		       1;
	printf("authenticated: MAP rkey=0x%x addr=0x%llx, RDMA WRITE+READ ok\n", rkey,
	       (unsigned long long)raddr);

	/* Unauthenticated (no handshake; HELLO only): READ and WRITE refused. */
	for (int hello = 0; hello < 2; hello++)
		for (int w = 0; w < 2; w++) {
			struct leap_conn c = {.fd = -1};

			rc = open_conn(&c, hello, 0);
			if (rc) {
				fprintf(stderr, "unauthenticated connect: %s\n",
					strerror(-rc));
				bad = 1;
				continue;
			}
			memset(back, 0, sizeof(back));
			rc = w ? leap_rdma_transport.write_pages(
					 &c, rkey, &raddr, 1, evil, leap_now_ms() + 5000)
			       : leap_rdma_transport.read_pages(&c, rkey, &raddr, 1, out,
								leap_now_ms() + 5000);
			printf("%s, RDMA %s with the stolen rkey: %s\n",
			       hello ? "HELLO but no AUTH" : "no handshake",
			       w ? "WRITE" : "READ", rc ? strerror(-rc) : "SUCCEEDED");
			if (!rc || (!w && !memcmp(back, page, sizeof(page))))
				bad = 1;
			c.t->close(&c);
		}

	/* Authenticated, but outside the exported region (one page past its
	 * end, and the page just before its base): the device refuses. */
	for (int k = 0; k < 2; k++) {
		struct leap_conn c = {.fd = -1};
		uint64_t out_of_range = k ? m.u.map.base - LEAP_WIRE_PAGE_SIZE
					  : m.u.map.base + m.u.map.len;

		rc = open_conn(&c, 1, 1);
		if (rc) {
			fprintf(stderr, "authenticated connect: %s\n", strerror(-rc));
			bad = 1;
			continue;
		}
		rc = leap_rdma_transport.read_pages(&c, rkey, &out_of_range, 1, out,
						    leap_now_ms() + 5000);
		printf("authenticated, RDMA READ %s the region: %s\n",
		       k ? "just below" : "just past", rc ? strerror(-rc) : "SUCCEEDED");
		if (!rc)
			bad = 1;
		c.t->close(&c);
	}

	/* The page is what the authenticated client wrote. */
	rc = leap_rdma_transport.read_pages(&a, rkey, &raddr, 1, out,
					    leap_now_ms() + 5000);
	if (rc || memcmp(page, back, sizeof(page))) {
		fprintf(stderr, "the page changed or cannot be read (%d)\n", rc);
		bad = 1;
	} else {
		printf("the page still holds the authenticated client's data\n");
	}
	a.t->close(&a);
	return bad;
}
