// SPDX-License-Identifier: MIT
/*
 * Firehose, client side (include/leap/firehose.h): the table of the remote
 * regions this client holds firehoses to, with their keys; a reference count
 * per firehose for the operations in flight through it; and the LRU list of
 * unused firehoses (held, no operation in flight), whose least recently used
 * members are offered in a move request when the share p is full (GASNet
 * firehose: a client reuses or moves its own stale firehoses).
 */
#include <errno.h>
#include <stdlib.h>

#include "leap/firehose.h"

struct fh_slot {
	uint32_t refs;
	bool held;
	bool leaving;	    /* offered in a move not answered yet */
	int64_t prev, next; /* unused LRU, head = most recently used */
	struct leap_reg_key key;
};

struct leap_fh_client {
	uint64_t base, size, rsize;
	uint32_t nregions, share, held;
	struct fh_slot *s;
	int64_t head, tail;
	uint32_t nunused;
};

struct leap_fh_client *leap_fh_client_new(uint64_t base, uint64_t size,
					  uint64_t region_size, uint32_t share)
{
	struct leap_fh_client *cl;

	if (!region_size || (region_size & (region_size - 1)) || !size ||
	    size % region_size || size / region_size > LEAP_FH_MAX_REGIONS || !share ||
	    base + size < base)
		return NULL;
	cl = calloc(1, sizeof(*cl));
	if (!cl)
		return NULL;
	cl->base = base;
	cl->size = size;
	cl->rsize = region_size;
	cl->nregions = (uint32_t)(size / region_size);
	cl->share = share;
	cl->head = cl->tail = -1;
	cl->s = calloc(cl->nregions, sizeof(*cl->s));
	if (!cl->s) {
		free(cl);
		return NULL;
	}
	for (uint32_t i = 0; i < cl->nregions; i++)
		cl->s[i].prev = cl->s[i].next = -1;
	return cl;
}

void leap_fh_client_free(struct leap_fh_client *cl)
{
	if (cl)
		free(cl->s);
	free(cl);
}

uint32_t leap_fh_client_held(const struct leap_fh_client *cl)
{
	return cl->held;
}

static void lru_unlink(struct leap_fh_client *cl, uint32_t i)
{
	struct fh_slot *x = &cl->s[i];

	if (x->prev >= 0)
		cl->s[x->prev].next = x->next;
	else
		cl->head = x->next;
	if (x->next >= 0)
		cl->s[x->next].prev = x->prev;
	else
		cl->tail = x->prev;
	x->prev = x->next = -1;
	cl->nunused--;
}

static void lru_push(struct leap_fh_client *cl, uint32_t i, bool at_head)
{
	struct fh_slot *x = &cl->s[i];

	if (at_head) {
		x->prev = -1;
		x->next = cl->head;
		if (cl->head >= 0)
			cl->s[cl->head].prev = i;
		else
			cl->tail = i;
		cl->head = i;
	} else {
		x->next = -1;
		x->prev = cl->tail;
		if (cl->tail >= 0)
			cl->s[cl->tail].next = i;
		else
			cl->head = i;
		cl->tail = i;
	}
	cl->nunused++;
}

static void take_ref(struct leap_fh_client *cl, uint32_t i)
{
	if (cl->s[i].refs++ == 0)
		lru_unlink(cl, i);
}

static void drop_ref(struct leap_fh_client *cl, uint32_t i)
{
	if (--cl->s[i].refs == 0)
		lru_push(cl, i, true);
}

int leap_fh_client_acquire(struct leap_fh_client *cl, uint64_t addr, uint64_t len,
			   struct leap_fh_acquire *a)
{
	uint32_t missing = 0, room, need;

	a->n = a->nunpin = a->npin = 0;
	if (!len || addr < cl->base || addr - cl->base >= cl->size ||
	    len > cl->size - (addr - cl->base))
		return -EINVAL;
	a->first = (uint32_t)((addr - cl->base) / cl->rsize);
	a->n = (uint32_t)((addr - cl->base + len - 1) / cl->rsize) - a->first + 1;
	if (a->n > LEAP_FH_MAX_SPAN || a->n > cl->share) {
		a->n = 0;
		return -E2BIG;
	}
	for (uint32_t k = 0; k < a->n; k++) {
		uint32_t i = a->first + k;

		if (cl->s[i].held)
			take_ref(cl, i);
		else
			a->pin[missing++] = i;
	}
	if (!missing) {
		for (uint32_t k = 0; k < a->n; k++)
			a->keys[k] = cl->s[a->first + k].key;
		return 0;
	}
	room = cl->share - cl->held;
	need = missing > room ? missing - room : 0;
	if (need > cl->nunused) {
		for (uint32_t k = 0; k < a->n; k++)
			if (cl->s[a->first + k].held)
				drop_ref(cl, a->first + k);
		a->n = 0;
		return -EAGAIN;
	}
	/* Offer the least recently used unused firehoses. */
	for (uint32_t k = 0; k < need; k++) {
		uint32_t i = (uint32_t)cl->tail;

		lru_unlink(cl, i);
		cl->s[i].leaving = true;
		a->unpin[a->nunpin++] = i;
	}
	a->npin = missing;
	return 1;
}

int leap_fh_client_moved(struct leap_fh_client *cl, struct leap_fh_acquire *a, int err,
			 bool unpinned, const struct leap_reg_key *keys)
{
	for (uint32_t k = 0; k < a->nunpin; k++) {
		struct fh_slot *x = &cl->s[a->unpin[k]];

		x->leaving = false;
		if (unpinned) {
			x->held = false;
			cl->held--;
		} else {
			lru_push(cl, a->unpin[k], false); /* still the first to offer */
		}
	}
	if (err) {
		for (uint32_t k = 0; k < a->n; k++)
			if (cl->s[a->first + k].held)
				drop_ref(cl, a->first + k);
		a->n = 0;
		return err;
	}
	for (uint32_t k = 0; k < a->npin; k++) {
		struct fh_slot *x = &cl->s[a->pin[k]];

		x->held = true;
		x->key = keys[k];
		x->refs = 1;
		cl->held++;
	}
	for (uint32_t k = 0; k < a->n; k++)
		a->keys[k] = cl->s[a->first + k].key;
	return 0;
}

void leap_fh_client_release(struct leap_fh_client *cl, const struct leap_fh_acquire *a)
{
	for (uint32_t k = 0; k < a->n; k++)
		drop_ref(cl, a->first + k);
}
