// SPDX-License-Identifier: MIT
/*
 * Bounded table of streams.  Everything is allocated once in
 * leap_table_init; a lookup never allocates.  When every slot is taken the
 * least recently used stream is evicted, so a process spawning threads
 * without end (or a hostile one) costs a bounded amount of memory.
 *
 * Index: open addressing with linear probing over a power-of-two array of
 * stream numbers (+1, 0 = empty), at most half full; deletion shifts later
 * entries back instead of leaving tombstones, so probes stay short.
 * LRU: an intrusive doubly linked list through the streams (by number);
 * unused streams hang on a free list through the same links.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "leap/engine.h"

#define NIL UINT32_MAX

static uint64_t key_hash(const struct leap_stream_key_t *k)
{
	/* splitmix64 finaliser over the mixed fields: cheap, well spread */
	uint64_t x = k->cgroup ^ ((uint64_t)k->tgid << 32 | k->tid) ^
		     ((uint64_t)k->lane << 56);

	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static bool key_eq(const struct leap_stream_key_t *a, const struct leap_stream_key_t *b)
{
	return a->cgroup == b->cgroup && a->tgid == b->tgid && a->tid == b->tid &&
	       a->lane == b->lane;
}

struct leap_stream_key_t leap_key_make(enum leap_stream_key k, uint64_t cgroup,
				       uint32_t tgid, uint32_t tid)
{
	struct leap_stream_key_t key = {.cgroup = cgroup};

	if (k == LEAP_KEY_PROCESS || k == LEAP_KEY_THREAD)
		key.tgid = tgid;
	if (k == LEAP_KEY_THREAD)
		key.tid = tid;
	return key;
}

int leap_table_init(struct leap_table *t, uint32_t capacity, uint32_t hsize_max)
{
	uint32_t slots = 2;

	memset(t, 0, sizeof(*t));
	if (capacity == 0 || capacity > (1u << 24) || hsize_max < 2 ||
	    hsize_max > LEAP_HSIZE_MAX)
		return -EINVAL;
	while (slots < capacity * 2)
		slots <<= 1;
	t->streams = calloc(capacity, sizeof(*t->streams));
	t->deltas = calloc((size_t)capacity * hsize_max, sizeof(*t->deltas));
	t->index = calloc(slots, sizeof(*t->index));
	if (!t->streams || !t->deltas || !t->index) {
		leap_table_free(t);
		return -ENOMEM;
	}
	t->index_mask = slots - 1;
	t->capacity = capacity;
	t->hsize_max = hsize_max;
	t->lru_head = t->lru_tail = NIL;
	for (uint32_t n = 0; n < capacity; n++)
		t->streams[n].lru_next = n + 1 < capacity ? n + 1 : NIL;
	t->free_head = 0;
	return 0;
}

void leap_table_free(struct leap_table *t)
{
	free(t->streams);
	free(t->deltas);
	free(t->index);
	memset(t, 0, sizeof(*t));
}

/* Index slot holding the key, or the empty slot where it would go. */
static uint32_t probe(const struct leap_table *t, const struct leap_stream_key_t *k)
{
	uint32_t i = (uint32_t)key_hash(k) & t->index_mask;

	while (t->index[i] && !key_eq(&t->streams[t->index[i] - 1].key, k))
		i = (i + 1) & t->index_mask;
	return i;
}

static void lru_unlink(struct leap_table *t, uint32_t n)
{
	struct leap_stream *s = &t->streams[n];

	if (s->lru_prev != NIL)
		t->streams[s->lru_prev].lru_next = s->lru_next;
	else
		t->lru_head = s->lru_next;
	if (s->lru_next != NIL)
		t->streams[s->lru_next].lru_prev = s->lru_prev;
	else
		t->lru_tail = s->lru_prev;
}

static void lru_push_front(struct leap_table *t, uint32_t n)
{
	struct leap_stream *s = &t->streams[n];

	s->lru_prev = NIL;
	s->lru_next = t->lru_head;
	if (t->lru_head != NIL)
		t->streams[t->lru_head].lru_prev = n;
	t->lru_head = n;
	if (t->lru_tail == NIL)
		t->lru_tail = n;
}

/* Removes index slot i, shifting back the entries of its probe run. */
static void index_delete(struct leap_table *t, uint32_t i)
{
	uint32_t j = i;

	t->index[i] = 0;
	for (;;) {
		uint32_t home;

		j = (j + 1) & t->index_mask;
		if (!t->index[j])
			return;
		home = (uint32_t)key_hash(&t->streams[t->index[j] - 1].key) &
		       t->index_mask;
		/* Move j back into the hole i unless its home lies in (i, j]. */
		if (((j - home) & t->index_mask) >= ((j - i) & t->index_mask)) {
			t->index[i] = t->index[j];
			t->index[j] = 0;
			i = j;
		}
	}
}

static void drop(struct leap_table *t, uint32_t n)
{
	struct leap_stream *s = &t->streams[n];

	index_delete(t, probe(t, &s->key));
	lru_unlink(t, n);
	s->in_use = false;
	s->lru_next = t->free_head;
	t->free_head = n;
	t->used--;
}

struct leap_stream *leap_table_find(struct leap_table *t,
				    const struct leap_stream_key_t *key)
{
	uint32_t i = probe(t, key);

	return t->index[i] ? &t->streams[t->index[i] - 1] : NULL;
}

void leap_table_touch(struct leap_table *t, struct leap_stream *s, uint64_t now)
{
	uint32_t n = leap_table_slot(t, s);

	if (t->lru_head != n) {
		lru_unlink(t, n);
		lru_push_front(t, n);
	}
	s->last_used = now;
}

struct leap_stream *leap_table_get(struct leap_table *t,
				   const struct leap_stream_key_t *key, uint32_t hsize,
				   uint64_t now)
{
	uint32_t i = probe(t, key), n;
	struct leap_stream *s;

	if (t->index[i]) {
		s = &t->streams[t->index[i] - 1];
		leap_table_touch(t, s, now);
		return s;
	}
	if (t->used == t->capacity) {
		drop(t, t->lru_tail);
		t->evictions++;
		i = probe(t, key); /* the deletion may have moved the hole */
	}
	n = t->free_head;
	t->free_head = t->streams[n].lru_next;
	s = &t->streams[n];
	leap_stream_init(s, &t->deltas[(size_t)n * t->hsize_max], t->hsize_max);
	leap_stream_reset(s, hsize);
	s->key = *key;
	s->gen = ++t->gens;
	s->in_use = true;
	s->last_used = now;
	t->index[i] = n + 1;
	lru_push_front(t, n);
	t->used++;
	return s;
}

uint32_t leap_table_slot(const struct leap_table *t, const struct leap_stream *s)
{
	return (uint32_t)(s - t->streams);
}

uint32_t leap_table_expire(struct leap_table *t, uint64_t now, uint64_t idle)
{
	uint32_t dropped = 0;

	/* The LRU tail is the stalest stream: stop at the first fresh one. */
	while (t->lru_tail != NIL && now - t->streams[t->lru_tail].last_used > idle) {
		drop(t, t->lru_tail);
		dropped++;
	}
	return dropped;
}

uint32_t leap_table_drop_tgid(struct leap_table *t, uint32_t tgid)
{
	uint32_t dropped = 0;

	for (uint32_t n = 0; n < t->capacity; n++) {
		if (t->streams[n].in_use && t->streams[n].key.tgid == tgid) {
			drop(t, n);
			dropped++;
		}
	}
	return dropped;
}
