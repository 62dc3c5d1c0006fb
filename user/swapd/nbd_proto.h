/* SPDX-License-Identifier: MIT */
/*
 * The kernel NBD driver's transmission messages, as leap-swapd's NBD
 * frontend reads and answers them on its end of the socketpair (the
 * "simple reply" protocol of the NBD spec; the kernel neither negotiates
 * nor sends structured replies).  Big-endian on the wire:
 *
 *   request, 28 bytes: u32 magic (NBD_REQUEST_MAGIC), u16 command flags,
 *            u16 type, u64 handle (echoed), u64 offset, u32 length;
 *            a WRITE is followed by length bytes of data
 *   reply,   16 bytes: u32 magic (NBD_REPLY_MAGIC), u32 error (an errno,
 *            0 = success), u64 handle; a successful READ is followed by
 *            length bytes of data
 *
 * Pure code, no I/O: unit-tested in tests/unit/test_nbd_proto.c.
 */
#ifndef LEAP_SWAPD_NBD_PROTO_H
#define LEAP_SWAPD_NBD_PROTO_H

#include <stdint.h>

#define NBDP_REQ_SIZE	   28
#define NBDP_REP_SIZE	   16
#define NBDP_REQUEST_MAGIC 0x25609513U
#define NBDP_REPLY_MAGIC   0x67446698U

/* Command types (linux/nbd.h NBD_CMD_*). */
enum { NBDP_READ = 0, NBDP_WRITE = 1, NBDP_DISC = 2, NBDP_FLUSH = 3, NBDP_TRIM = 4 };
#define NBDP_FLAG_FUA (1U << 0) /* in the command-flags half (NBD_CMD_FLAG_FUA >> 16) */

struct nbdp_req {
	uint32_t magic;
	uint16_t flags, type;
	uint8_t handle[8]; /* opaque: echoed as is */
	uint64_t offset;
	uint32_t length;
};

/* What the server does with a request that passed nbdp_check. */
enum nbdp_action {
	NBDP_DO_READ,
	NBDP_DO_WRITE,
	NBDP_DO_FLUSH,
	NBDP_DO_TRIM,
	NBDP_DO_DISCONNECT, /* no reply: stop reading, finish, close */
	NBDP_DO_REJECT,	    /* reply with the error, touch nothing */
};

/* Decodes a request header; 0, or -1 if the magic is wrong (the stream is
 * out of step: nothing after it can be trusted). */
int nbdp_decode(const uint8_t b[NBDP_REQ_SIZE], struct nbdp_req *r);
/*
 * Validates r against a device of dev_size bytes and I/O buffers of max_io
 * bytes: READ/WRITE/TRIM need a non-zero length, offset and length
 * multiples of block (a power of two), the range within the device, and
 * READ/WRITE at most max_io; only WRITE may carry FUA; unknown types and
 * flags are refused.  FLUSH and DISC carry no range (the kernel sends 0).
 * On NBDP_DO_REJECT, *err is the errno for the reply.
 */
enum nbdp_action nbdp_check(const struct nbdp_req *r, uint64_t dev_size, uint32_t block,
			    uint32_t max_io, uint32_t *err);
/* Bytes of data that follow the header on the stream (a WRITE's length,
 * whether or not it is accepted: they must be consumed to stay in step). */
uint32_t nbdp_payload(const struct nbdp_req *r);
void nbdp_encode_reply(uint8_t b[NBDP_REP_SIZE], uint32_t err, const uint8_t handle[8]);

#endif /* LEAP_SWAPD_NBD_PROTO_H */
