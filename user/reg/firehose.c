// SPDX-License-Identifier: MIT
/*
 * Firehose, server side (include/leap/firehose.h; C. Bell and D. Bonachea,
 * "A New DMA Registration Strategy for Pinning-Based High Performance
 * Networks", and GASNet's firehose library): the exported memory is
 * registered on demand in fixed-size regions under a pin budget M; each
 * region counts the clients holding a firehose to it; a region nobody holds
 * waits, still registered, in a victim FIFO and is deregistered lazily, only
 * when a new registration needs its room, oldest first.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "leap/firehose.h"

struct fh_region {
	uint32_t refs; /* clients holding it */
	bool registered;
	bool in_fifo;
	int64_t prev, next; /* victim FIFO links, -1: none */
	struct leap_reg_key key;
};

struct fh_client {
	bool used;
	uint32_t held;
	uint8_t *bits; /* bits[i / 8] & (1 << i % 8): holds region i */
};

struct leap_fh_server {
	struct leap_fh_config cfg;
	struct leap_reg_ops ops;
	uint32_t nregions, share, budget_regions, nregistered;
	struct fh_region *r;
	int64_t fifo_head, fifo_tail;
	uint32_t nfifo;
	struct fh_client *clients;
	struct leap_reg_stats st;
};

static bool holds(const struct fh_client *c, uint32_t i)
{
	return c->bits[i / 8] & (1u << (i % 8));
}

static void set_hold(struct fh_client *c, uint32_t i, bool on)
{
	if (on)
		c->bits[i / 8] |= (uint8_t)(1u << (i % 8));
	else
		c->bits[i / 8] &= (uint8_t) ~(1u << (i % 8));
}

struct leap_fh_server *leap_fh_server_new(const struct leap_fh_config *cfg,
					  const struct leap_reg_ops *ops, int *err)
{
	struct leap_fh_config k = *cfg;
	struct leap_fh_server *s;
	uint64_t nreg, budget_regions;

	*err = -EINVAL;
	if (!k.page_size)
		k.page_size = 4096;
	if (!ops || !ops->reg || !ops->dereg || (k.page_size & (k.page_size - 1)) ||
	    !k.region_size || (k.region_size & (k.region_size - 1)) ||
	    k.region_size < k.page_size || !k.size || k.size % k.region_size ||
	    k.base % k.region_size || k.base + k.size < k.base || !k.max_clients)
		return NULL;
	nreg = k.size / k.region_size;
	budget_regions = k.budget / k.region_size;
	if (nreg > LEAP_FH_MAX_REGIONS || budget_regions / k.max_clients < 1)
		return NULL;
	if (budget_regions > nreg)
		budget_regions = nreg;
	*err = -ENOMEM;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->cfg = k;
	s->ops = *ops;
	s->nregions = (uint32_t)nreg;
	s->budget_regions = (uint32_t)budget_regions;
	/* p = M / C, in regions; the budget is never shared unevenly */
	s->share = (uint32_t)(budget_regions / k.max_clients);
	s->fifo_head = s->fifo_tail = -1;
	s->r = calloc(nreg, sizeof(*s->r));
	s->clients = calloc(k.max_clients, sizeof(*s->clients));
	if (!s->r || !s->clients) {
		free(s->r);
		free(s->clients);
		free(s);
		return NULL;
	}
	for (uint32_t i = 0; i < nreg; i++)
		s->r[i].prev = s->r[i].next = -1;
	*err = 0;
	return s;
}

static void span_of(const struct leap_fh_server *s, uint32_t i, struct leap_reg_span *sp)
{
	sp->addr = s->cfg.base + (uint64_t)i * s->cfg.region_size;
	sp->len = s->cfg.region_size;
	sp->key = s->r[i].key;
}

void leap_fh_server_free(struct leap_fh_server *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->nregions; i++) {
		if (s->r[i].registered) {
			struct leap_reg_span sp;

			span_of(s, i, &sp);
			s->ops.dereg(s->ops.ctx, &sp, 1);
		}
	}
	for (uint32_t c = 0; c < s->cfg.max_clients; c++)
		free(s->clients[c].bits);
	free(s->clients);
	free(s->r);
	free(s);
}

uint32_t leap_fh_server_share(const struct leap_fh_server *s)
{
	return s->share;
}

uint32_t leap_fh_server_nregions(const struct leap_fh_server *s)
{
	return s->nregions;
}

int leap_fh_server_add_client(struct leap_fh_server *s, uint32_t *id)
{
	for (uint32_t c = 0; c < s->cfg.max_clients; c++) {
		if (s->clients[c].used)
			continue;
		s->clients[c].bits = calloc((s->nregions + 7) / 8, 1);
		if (!s->clients[c].bits)
			return -ENOMEM;
		s->clients[c].used = true;
		s->clients[c].held = 0;
		*id = c;
		return 0;
	}
	return -EUSERS;
}

static void fifo_push(struct leap_fh_server *s, uint32_t i)
{
	struct fh_region *r = &s->r[i];

	r->in_fifo = true;
	r->next = -1;
	r->prev = s->fifo_tail;
	if (s->fifo_tail >= 0)
		s->r[s->fifo_tail].next = i;
	else
		s->fifo_head = i;
	s->fifo_tail = i;
	s->nfifo++;
}

static void fifo_remove(struct leap_fh_server *s, uint32_t i)
{
	struct fh_region *r = &s->r[i];

	if (r->prev >= 0)
		s->r[r->prev].next = r->next;
	else
		s->fifo_head = r->next;
	if (r->next >= 0)
		s->r[r->next].prev = r->prev;
	else
		s->fifo_tail = r->prev;
	r->prev = r->next = -1;
	r->in_fifo = false;
	s->nfifo--;
}

/* A client lets go of region i; nobody holding it, it becomes a victim. */
static void unhold(struct leap_fh_server *s, struct fh_client *c, uint32_t i)
{
	set_hold(c, i, false);
	c->held--;
	if (--s->r[i].refs == 0)
		fifo_push(s, i);
}

int leap_fh_server_remove_client(struct leap_fh_server *s, uint32_t id)
{
	struct fh_client *c;

	if (id >= s->cfg.max_clients || !s->clients[id].used)
		return -EINVAL;
	c = &s->clients[id];
	for (uint32_t i = 0; i < s->nregions && c->held; i++)
		if (holds(c, i))
			unhold(s, c, i);
	free(c->bits);
	c->bits = NULL;
	c->used = false;
	return 0;
}

/* Deregisters the n oldest victims in one batch. */
static void evict_victims(struct leap_fh_server *s, uint32_t n)
{
	struct leap_reg_span spans[LEAP_FH_MAX_SPAN];
	uint32_t k = 0;

	while (k < n && s->fifo_head >= 0) {
		uint32_t i = (uint32_t)s->fifo_head;

		fifo_remove(s, i);
		span_of(s, i, &spans[k++]);
		s->r[i].registered = false;
		s->nregistered--;
	}
	if (k) {
		s->ops.dereg(s->ops.ctx, spans, k);
		s->st.deregistrations += k;
		s->st.dereg_batches++;
	}
}

static bool in_list(const uint32_t *v, uint32_t n, uint32_t x)
{
	for (uint32_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

static int validate(const struct leap_fh_server *s, const struct fh_client *c,
		    const uint32_t *unpin, uint32_t nunpin, const uint32_t *pin,
		    uint32_t npin)
{
	if (nunpin > LEAP_FH_MAX_SPAN || npin > LEAP_FH_MAX_SPAN || (nunpin && !unpin) ||
	    (npin && !pin))
		return -EINVAL;
	for (uint32_t i = 0; i < nunpin; i++)
		if (unpin[i] >= s->nregions || !holds(c, unpin[i]) ||
		    in_list(unpin, i, unpin[i]))
			return -EINVAL;
	for (uint32_t i = 0; i < npin; i++)
		if (pin[i] >= s->nregions || holds(c, pin[i]) || in_list(pin, i, pin[i]))
			return -EINVAL;
	if ((uint64_t)c->held - nunpin + npin > s->share)
		return -EDQUOT;
	return 0;
}

int leap_fh_server_move(struct leap_fh_server *s, uint32_t id, const uint32_t *unpin,
			uint32_t nunpin, const uint32_t *pin, uint32_t npin,
			struct leap_reg_key *keys, bool *unpinned)
{
	struct fh_client *c;
	uint32_t need = 0;
	int err;

	*unpinned = false;
	if (id >= s->cfg.max_clients || !s->clients[id].used)
		return -EINVAL;
	c = &s->clients[id];
	err = validate(s, c, unpin, nunpin, pin, npin);
	if (err) {
		if (err == -EDQUOT)
			s->st.refused++;
		return err;
	}
	for (uint32_t i = 0; i < nunpin; i++)
		unhold(s, c, unpin[i]);
	*unpinned = true;
	s->st.moves++;
	/* Pins of registered regions first (held by others, or victims: no
	 * registration), so the victims we need are not the ones we evict. */
	for (uint32_t i = 0; i < npin; i++) {
		struct fh_region *r = &s->r[pin[i]];

		if (!r->registered) {
			need++;
			continue;
		}
		if (r->in_fifo) {
			fifo_remove(s, pin[i]);
			s->st.victim_hits++;
		} else {
			s->st.shared_pins++;
		}
		r->refs++;
	}
	/* Room within M: every held region counts, and a client holds at most
	 * p, so C * p <= M leaves room once enough victims are gone. */
	if (s->nregistered + need > s->budget_regions)
		evict_victims(s, s->nregistered + need - s->budget_regions);
	if (s->nregistered + need > s->budget_regions) {
		err = -ENOSPC; /* cannot happen while the invariants hold */
		goto rollback;
	}
	for (uint32_t i = 0; i < npin; i++) {
		struct fh_region *r = &s->r[pin[i]];
		struct leap_reg_span sp;

		if (r->registered)
			continue;
		span_of(s, pin[i], &sp);
		err = s->ops.reg(s->ops.ctx, sp.addr, sp.len, &r->key);
		if (err) {
			err = err < 0 ? err : -EIO;
			goto rollback;
		}
		r->registered = true;
		r->refs = 1;
		s->nregistered++;
		s->st.registrations++;
		s->st.reg_bytes += sp.len;
	}
	for (uint32_t i = 0; i < npin; i++) {
		set_hold(c, pin[i], true);
		keys[i] = s->r[pin[i]].key;
	}
	c->held += npin;
	s->st.pinned_bytes = (uint64_t)s->nregistered * s->cfg.region_size;
	if (s->st.pinned_bytes > s->st.pinned_peak)
		s->st.pinned_peak = s->st.pinned_bytes;
	return 0;
rollback:
	/* No pin of this move takes effect: what we referenced goes back to
	 * the victim FIFO (still registered, so a retry is cheap). */
	for (uint32_t i = 0; i < npin; i++) {
		struct fh_region *r = &s->r[pin[i]];

		if (r->registered && --r->refs == 0)
			fifo_push(s, pin[i]);
	}
	s->st.pinned_bytes = (uint64_t)s->nregistered * s->cfg.region_size;
	return err;
}

void leap_fh_server_stats(const struct leap_fh_server *s, struct leap_reg_stats *st)
{
	*st = s->st;
	st->entries = s->nregistered;
}

int leap_fh_server_check(const struct leap_fh_server *s)
{
	uint32_t registered = 0, fifo = 0;

	for (uint32_t i = 0; i < s->nregions; i++) {
		const struct fh_region *r = &s->r[i];
		uint32_t holders = 0;

		for (uint32_t c = 0; c < s->cfg.max_clients; c++)
			holders += s->clients[c].used && holds(&s->clients[c], i);
		if (holders != r->refs || (r->refs && !r->registered) ||
		    r->in_fifo != (r->registered && !r->refs))
			return -1;
		registered += r->registered;
		fifo += r->in_fifo;
	}
	for (uint32_t c = 0; c < s->cfg.max_clients; c++)
		if (s->clients[c].used && s->clients[c].held > s->share)
			return -1;
	if (registered != s->nregistered || fifo != s->nfifo ||
	    s->nregistered > s->budget_regions ||
	    (uint64_t)s->nregistered * s->cfg.region_size > s->cfg.budget)
		return -1;
	return 0;
}
