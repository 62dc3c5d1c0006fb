// SPDX-License-Identifier: MIT
/* Pages a sequential stream has gone past (include/leap/engine.h). */
#include "leap/engine.h"

static uint32_t restart(struct leap_behind *b, uint64_t pt, int dir)
{
	b->armed = true;
	b->dir = dir;
	b->next = pt;
	return 0;
}

uint32_t leap_behind_advance(struct leap_behind *b, uint64_t pt, int dir, uint32_t lag,
			     uint32_t chunk, uint64_t *first)
{
	uint64_t moved, n;

	if (dir != 1 && dir != -1) {
		b->armed = false;
		return 0;
	}
	if (!b->armed || b->dir != dir)
		return restart(b, pt, dir);
	/* How far the stream went from the first page not handed out. */
	if (dir > 0 ? pt < b->next : pt > b->next)
		return restart(b, pt, dir);
	moved = dir > 0 ? pt - b->next : b->next - pt;
	if (moved > LEAP_BEHIND_JUMP + (uint64_t)lag)
		return restart(b, pt, dir);
	if (moved < (uint64_t)lag + (chunk ? chunk : 1))
		return 0;
	n = moved - lag;
	if (dir > 0) {
		*first = b->next; /* [next, pt - lag) */
		b->next += n;
	} else {
		*first = pt + lag + 1; /* (pt + lag, next] */
		b->next -= n;
	}
	return (uint32_t)n;
}
