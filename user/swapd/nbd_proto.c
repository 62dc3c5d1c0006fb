// SPDX-License-Identifier: MIT
/* NBD transmission messages (nbd_proto.h): decoding and validation. */
#include <errno.h>
#include <string.h>

#include "nbd_proto.h"

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const uint8_t *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

int nbdp_decode(const uint8_t b[NBDP_REQ_SIZE], struct nbdp_req *r)
{
	r->magic = be32(b);
	r->flags = (uint16_t)(b[4] << 8 | b[5]);
	r->type = (uint16_t)(b[6] << 8 | b[7]);
	memcpy(r->handle, b + 8, 8);
	r->offset = be64(b + 16);
	r->length = be32(b + 24);
	return r->magic == NBDP_REQUEST_MAGIC ? 0 : -1;
}

uint32_t nbdp_payload(const struct nbdp_req *r)
{
	return r->type == NBDP_WRITE ? r->length : 0;
}

static enum nbdp_action reject(uint32_t *err, uint32_t e)
{
	*err = e;
	return NBDP_DO_REJECT;
}

enum nbdp_action nbdp_check(const struct nbdp_req *r, uint64_t dev_size, uint32_t block,
			    uint32_t max_io, uint32_t *err)
{
	*err = 0;
	if (r->flags & ~(r->type == NBDP_WRITE ? NBDP_FLAG_FUA : 0U))
		return reject(err, EINVAL);
	switch (r->type) {
	case NBDP_DISC:
		return NBDP_DO_DISCONNECT;
	case NBDP_FLUSH:
		return NBDP_DO_FLUSH;
	case NBDP_READ:
	case NBDP_WRITE:
	case NBDP_TRIM:
		break;
	default:
		return reject(err, EINVAL);
	}
	if (!r->length || r->offset % block || r->length % block)
		return reject(err, EINVAL);
	/* Written so that offset + length cannot overflow. */
	if (r->offset > dev_size || r->length > dev_size - r->offset)
		return reject(err, r->type == NBDP_WRITE ? ENOSPC : EINVAL);
	if (r->type == NBDP_TRIM)
		return NBDP_DO_TRIM;
	if (r->length > max_io)
		return reject(err, EOVERFLOW);
	return r->type == NBDP_READ ? NBDP_DO_READ : NBDP_DO_WRITE;
}

void nbdp_encode_reply(uint8_t b[NBDP_REP_SIZE], uint32_t err, const uint8_t handle[8])
{
	put_be32(b, NBDP_REPLY_MAGIC);
	put_be32(b + 4, err);
	memcpy(b + 8, handle, 8);
}
