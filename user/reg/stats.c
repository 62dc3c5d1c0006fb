// SPDX-License-Identifier: MIT
/* The registration statistics as one "key=value" line for STATS replies. */
#include <inttypes.h>
#include <stdio.h>

#include "leap/reg.h"

int leap_reg_stats_format(const struct leap_reg_stats *st, char *buf, size_t len)
{
	int n = snprintf(buf, len,
			 "lookups=%" PRIu64 " hits=%" PRIu64 " contained=%" PRIu64
			 " overlaps=%" PRIu64 " misses=%" PRIu64 " registrations=%" PRIu64
			 " deregistrations=%" PRIu64 " dereg_batches=%" PRIu64
			 " evictions=%" PRIu64 " invalidations=%" PRIu64
			 " merges=%" PRIu64 " uncached=%" PRIu64 " moves=%" PRIu64
			 " victim_hits=%" PRIu64 " shared_pins=%" PRIu64
			 " refused=%" PRIu64 " pinned_bytes=%" PRIu64
			 " pinned_peak=%" PRIu64 " entries=%" PRIu64,
			 st->lookups, st->hits, st->contained, st->overlaps, st->misses,
			 st->registrations, st->deregistrations, st->dereg_batches,
			 st->evictions, st->invalidations, st->merges, st->uncached,
			 st->moves, st->victim_hits, st->shared_pins, st->refused,
			 st->pinned_bytes, st->pinned_peak, st->entries);

	if (n < 0 || (size_t)n >= len)
		return -1;
	return n;
}
