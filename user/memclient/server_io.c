// SPDX-License-Identifier: MIT
/*
 * memclient's one READ, WRITE or FREE on one server, whichever transport it
 * has: started now and finished later (stream.c: in flight meanwhile;
 * onesided.c: done at start).
 */
#include <stdbool.h>

#include "memclient_int.h"

void mc_srv_io_start(struct srv_io *io, struct mc_server *s, unsigned op, bool prefetch,
		     const uint64_t *offset, uint32_t count, uint8_t *const *out,
		     const void *pages)
{
	io->s = s;
	io->r = (struct mc_pipe_req){.op = op,
				     .prefetch = prefetch,
				     .dev = s->mc->cfg.dev,
				     .count = count,
				     .offset = offset,
				     .pages = pages,
				     .out = out};
	io->sync = !s->pipes;
	if (!io->sync)
		mc_srv_pipe_start(s, &io->r);
	else if (op == LEAP_WOP_FREE)
		io->rc = mc_srv_free_sync(s, offset, count);
	else {
		struct page_arg pa = {.op = op,
				      .count = count,
				      .offset = offset,
				      .out = out,
				      .present = &io->r.present,
				      .pages = pages};

		/* The instance, for leap_mc_write's check as with pipes. */
		io->rc = mc_lane_pages(s, &pa, &io->r.instance);
	}
}

int mc_srv_io_finish(struct srv_io *io)
{
	return io->sync ? io->rc : mc_srv_pipe_finish(io->s, &io->r);
}

int mc_srv_write(struct mc_server *s, const uint64_t *offset, uint32_t count,
		 const void *pages)
{
	struct srv_io io;

	mc_srv_io_start(&io, s, LEAP_WOP_WRITE, false, offset, count, NULL, pages);
	return mc_srv_io_finish(&io);
}

/* Reads count pages; out[i] gets page i; *present the server's mask. */
int mc_srv_read(struct mc_server *s, const uint64_t *offset, uint32_t count,
		uint8_t *const *out, uint64_t *present)
{
	struct srv_io io;
	int rc;

	mc_srv_io_start(&io, s, LEAP_WOP_READ, false, offset, count, out, NULL);
	rc = mc_srv_io_finish(&io);
	*present = io.r.present;
	return rc;
}
