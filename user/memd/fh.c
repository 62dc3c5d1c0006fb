// SPDX-License-Identifier: MIT
/*
 * Firehose in leap-memd (fh.h): the verbs backend for libleapreg's Firehose
 * server (each region registered with the transport's reg_region on the
 * listener's protection domain) and the FH_MOVE handler.  Single-threaded:
 * the server loop is the only caller.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fh.h"

static int fh_reg(void *ctx, uint64_t addr, uint64_t len, struct leap_reg_key *key)
{
	struct memd_fh *f = ctx;
	void *handle;
	uint32_t rkey;
	int rc;

	/* libleapreg numbers regions from 0 (it wants region-aligned bases,
	 * the store is only page-aligned): addr is an offset in the store. */
	rc = f->listener->t->reg_region(f->listener, (void *)(uintptr_t)(f->base + addr),
					len, &rkey, &handle);
	if (rc)
		return rc;
	key->handle = (uintptr_t)handle;
	key->rkey = rkey;
	key->lkey = 0;
	return 0;
}

static void fh_dereg(void *ctx, const struct leap_reg_span *spans, size_t n)
{
	struct memd_fh *f = ctx;

	for (size_t i = 0; i < n; i++)
		f->listener->t->dereg_region(f->listener,
					     (void *)(uintptr_t)spans[i].key.handle);
}

int memd_fh_init(struct memd_fh *f, struct leap_conn *listener, void *base, uint64_t size,
		 uint64_t region_size, uint64_t budget, uint32_t clients, char *err,
		 size_t errlen)
{
	struct leap_fh_config cfg = {
		.base = 0, /* offsets in the store: see fh_reg */
		.size = size,
		.region_size = region_size,
		.page_size = LEAP_WIRE_PAGE_SIZE,
		.budget = budget,
		.max_clients = clients,
	};
	struct leap_reg_ops ops = {.reg = fh_reg, .dereg = fh_dereg, .ctx = f};
	int rc = 0;

	memset(f, 0, sizeof(*f));
	f->listener = listener;
	if (!listener->t->reg_region || !listener->t->dereg_region) {
		snprintf(err, errlen, "--pin-budget needs a one-sided transport (rdma)");
		return -EINVAL;
	}
	if (region_size < LEAP_WIRE_PAGE_SIZE || (region_size & (region_size - 1)) ||
	    size % region_size) {
		snprintf(err, errlen,
			 "--region-size must be a power of two of at least 4K that "
			 "divides "
			 "--size (%llu bytes)",
			 (unsigned long long)size);
		return -EINVAL;
	}
	f->srv = leap_fh_server_new(&cfg, &ops, &rc);
	if (!f->srv) {
		snprintf(err, errlen,
			 "pin budget %llu bytes in %llu-byte regions for %u clients: %s "
			 "(each client needs at least one region)",
			 (unsigned long long)budget, (unsigned long long)region_size,
			 clients, strerror(-rc));
		return rc;
	}
	f->base = (uintptr_t)base;
	f->size = size;
	f->region_size = region_size;
	f->budget = budget;
	f->share = leap_fh_server_share(f->srv);
	return 0;
}

void memd_fh_fini(struct memd_fh *f)
{
	if (f->srv)
		leap_fh_server_free(f->srv);
	f->srv = NULL;
}

long memd_fh_move(struct memd_fh *f, uint32_t *id, const struct leap_wire_msg *m,
		  uint8_t *tx, size_t cap)
{
	struct leap_reg_key keys[LEAP_WIRE_FH_MAX];
	uint32_t rkey[LEAP_WIRE_FH_MAX], npin = 0;
	bool unpinned = false;
	int rc = 0;

	_Static_assert(LEAP_WIRE_FH_MAX == LEAP_FH_MAX_SPAN, "one list per move");
	if (*id == MEMD_FH_NONE)
		rc = leap_fh_server_add_client(f->srv, id);
	/* Empty lists: the client only asks for the geometry. */
	if (rc == 0 && (m->u.fh.nunpin || m->u.fh.npin)) {
		rc = leap_fh_server_move(f->srv, *id, m->u.fh.unpin, m->u.fh.nunpin,
					 m->u.fh.pin, m->u.fh.npin, keys, &unpinned);
		if (rc == 0) {
			npin = m->u.fh.npin;
			for (uint32_t i = 0; i < npin; i++)
				rkey[i] = keys[i].rkey;
		}
	}
	return leap_wire_enc_fh_rep(tx, cap, m->hdr.req_id, rc < 0 ? (uint32_t)-rc : 0,
				    unpinned ? LEAP_WFH_UNPINNED : 0, f->share, f->base,
				    f->size, f->region_size, npin, rkey);
}

void memd_fh_drop(struct memd_fh *f, uint32_t *id)
{
	if (f->srv && *id != MEMD_FH_NONE)
		leap_fh_server_remove_client(f->srv, *id);
	*id = MEMD_FH_NONE;
}

void memd_fh_stats(const struct memd_fh *f, uint64_t *stat)
{
	struct leap_reg_stats st;

	if (!f->srv)
		return;
	leap_fh_server_stats(f->srv, &st);
	stat[LEAP_WSTAT_FH_BUDGET] = f->budget;
	stat[LEAP_WSTAT_FH_REGION_SIZE] = f->region_size;
	stat[LEAP_WSTAT_FH_SHARE] = f->share;
	stat[LEAP_WSTAT_FH_MOVES] = st.moves;
	stat[LEAP_WSTAT_FH_REFUSED] = st.refused;
	stat[LEAP_WSTAT_FH_VICTIM_HITS] = st.victim_hits;
	stat[LEAP_WSTAT_FH_PINNED] = st.pinned_bytes;
	stat[LEAP_WSTAT_FH_PINNED_PEAK] = st.pinned_peak;
}
