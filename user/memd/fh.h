/* SPDX-License-Identifier: MIT */
/*
 * leap-memd with a pin budget (--pin-budget, docs/registration.md,
 * "Firehose in leap-memd"): the store is registered on demand in regions
 * through the transport's reg_region, under libleapreg's Firehose server
 * (include/leap/firehose.h), and clients move their firehoses with FH_MOVE.
 */
#ifndef LEAP_MEMD_FH_H
#define LEAP_MEMD_FH_H

#include <stdint.h>

#include "leap/firehose.h"
#include "leap/wire.h"
#include "transport.h"

#define MEMD_FH_NONE UINT32_MAX /* a connection without a firehose client id */

struct memd_fh {
	struct leap_fh_server *srv;
	struct leap_conn *listener;
	uint64_t base, size, region_size, budget;
	uint32_t share;
};

/*
 * Sets f up over the exported store [base, base + size) with budget bytes
 * divided among clients in regions of region_size bytes.  0, or -errno with
 * a reason in err.
 */
int memd_fh_init(struct memd_fh *f, struct leap_conn *listener, void *base, uint64_t size,
		 uint64_t region_size, uint64_t budget, uint32_t clients, char *err,
		 size_t errlen);
/* Deregisters every region. */
void memd_fh_fini(struct memd_fh *f);
/*
 * Serves one FH_MOVE of the connection whose firehose client id is *id
 * (MEMD_FH_NONE: becomes a client now), encoding the reply into tx.  The
 * reply's size; a refusal is an FH_MOVE reply with a status, not an error.
 */
long memd_fh_move(struct memd_fh *f, uint32_t *id, const struct leap_wire_msg *m,
		  uint8_t *tx, size_t cap);
/* The connection went away: its firehoses go to the victim FIFO. */
void memd_fh_drop(struct memd_fh *f, uint32_t *id);
/* Fills the LEAP_WSTAT_FH_* entries of stat. */
void memd_fh_stats(const struct memd_fh *f, uint64_t *stat);

#endif /* LEAP_MEMD_FH_H */
