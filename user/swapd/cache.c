// SPDX-License-Identifier: MIT
/*
 * The prefetch cache (cache.h).  One mutex: operations are a hash lookup
 * and a page copy, far below the cost of the FUSE round trip around them.
 * Entries are indices (+1, 0 = none) into one preallocated array, chained
 * per hash bucket and kept in insertion order for eviction.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "cache.h"
#include "leap/wire.h"

enum { PC_FREE, PC_FETCHING, PC_READY };

#define PAGE LEAP_WIRE_PAGE_SIZE

static uint32_t hash(const struct pcache *c, uint64_t pg)
{
	return (uint32_t)((pg * 0x9e3779b97f4a7c15ULL) >> 32) % c->nbuckets;
}

int pcache_init(struct pcache *c, uint32_t cap)
{
	memset(c, 0, sizeof(*c));
	if (cap < 1 || cap > (1U << 24))
		return -EINVAL;
	c->cap = cap;
	c->nbuckets = cap * 2;
	c->nghost = cap * 4;
	c->e = calloc(cap, sizeof(*c->e));
	c->bucket = calloc(c->nbuckets, sizeof(*c->bucket));
	c->ghost = calloc(c->nghost, sizeof(*c->ghost));
	c->demand = calloc(c->nghost, sizeof(*c->demand));
	c->demand_fresh_ns = PCACHE_DEMAND_FRESH_NS;
	c->pages = mmap(NULL, (size_t)cap * PAGE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (c->pages == MAP_FAILED)
		c->pages = NULL;
	if (!c->e || !c->bucket || !c->ghost || !c->demand || !c->pages) {
		pcache_fini(c);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < cap; i++)
		c->e[i].next = i + 2 <= cap ? i + 2 : 0;
	c->free_head = 1;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->fetched, NULL);
	return 0;
}

void pcache_fini(struct pcache *c)
{
	free(c->e);
	free(c->bucket);
	free(c->ghost);
	free(c->demand);
	if (c->pages)
		munmap(c->pages, (size_t)c->cap * PAGE);
	memset(c, 0, sizeof(*c));
}

static struct pcache_entry *E(struct pcache *c, uint32_t i1)
{
	return &c->e[i1 - 1];
}

static uint32_t find(struct pcache *c, uint64_t pg)
{
	for (uint32_t i = c->bucket[hash(c, pg)]; i; i = E(c, i)->hnext)
		if (E(c, i)->pg == pg)
			return i;
	return 0;
}

static void lru_unlink(struct pcache *c, uint32_t i)
{
	struct pcache_entry *x = E(c, i);

	if (x->prev)
		E(c, x->prev)->next = x->next;
	else
		c->lru_head = x->next;
	if (x->next)
		E(c, x->next)->prev = x->prev;
	else
		c->lru_tail = x->prev;
	x->prev = x->next = 0;
}

static void lru_append(struct pcache *c, uint32_t i)
{
	struct pcache_entry *x = E(c, i);

	x->prev = c->lru_tail;
	x->next = 0;
	if (c->lru_tail)
		E(c, c->lru_tail)->next = i;
	else
		c->lru_head = i;
	c->lru_tail = i;
}

/* Unhashes, unlinks and frees entry i. */
static void drop(struct pcache *c, uint32_t i)
{
	struct pcache_entry *x = E(c, i);
	uint32_t *pp = &c->bucket[hash(c, x->pg)];

	while (*pp != i)
		pp = &E(c, *pp)->hnext;
	*pp = x->hnext;
	if (x->state == PC_READY)
		c->st.cached--;
	lru_unlink(c, i);
	memset(x, 0, sizeof(*x));
	x->next = c->free_head;
	c->free_head = i;
}

static bool ghost_has(struct pcache *c, uint64_t pg)
{
	return c->ghost[pg % c->nghost] == pg + 1;
}

/* Coarse is enough for a window of 100 ms and costs no syscall. */
static int64_t coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct pcache_demand *demand_slot(struct pcache *c, uint64_t pg)
{
	return &c->demand[pg % c->nghost];
}

static bool demand_fresh(struct pcache *c, uint64_t pg)
{
	struct pcache_demand *d = demand_slot(c, pg);

	return d->pg1 == pg + 1 && coarse_ns() - d->ns < c->demand_fresh_ns;
}

int pcache_take(struct pcache *c, uint64_t pg, void *buf)
{
	uint32_t i;
	int hit = 0;

	pthread_mutex_lock(&c->lock);
	i = find(c, pg);
	/* Being fetched is not a miss: wait for that fetch rather than ask the
	 * servers a second time (it ends in pcache_end, ok or not). */
	if (i && E(c, i)->state == PC_FETCHING) {
		c->st.waited++;
		do {
			pthread_cond_wait(&c->fetched, &c->lock);
			i = find(c, pg);
		} while (i && E(c, i)->state == PC_FETCHING);
	}
	if (i && E(c, i)->state == PC_READY) {
		memcpy(buf, c->pages + (size_t)(i - 1) * PAGE, PAGE);
		hit = 1;
		c->st.hits++;
		if (E(c, i)->sticky) {
			c->st.kept++;
		} else {
			/* Eager eviction; remember it in case the page comes back. */
			c->ghost[pg % c->nghost] = pg + 1;
			c->st.evicted_hit++;
			drop(c, i);
		}
	} else {
		struct pcache_demand *d = demand_slot(c, pg);

		c->st.misses++;
		d->pg1 = pg + 1;
		d->ns = coarse_ns();
	}
	pthread_mutex_unlock(&c->lock);
	return hit;
}

void pcache_invalidate(struct pcache *c, uint64_t pg)
{
	uint32_t i;

	pthread_mutex_lock(&c->lock);
	if (demand_slot(c, pg)->pg1 == pg + 1)
		demand_slot(c, pg)->pg1 = 0;
	i = find(c, pg);
	if (i && E(c, i)->state == PC_FETCHING) {
		E(c, i)->stale = 1;
	} else if (i) {
		c->st.invalidated++;
		drop(c, i);
	}
	pthread_mutex_unlock(&c->lock);
}

uint8_t *pcache_begin(struct pcache *c, uint64_t pg)
{
	struct pcache_entry *x;
	uint32_t i;

	pthread_mutex_lock(&c->lock);
	if (find(c, pg)) {
		pthread_mutex_unlock(&c->lock);
		return NULL;
	}
	if (demand_fresh(c, pg)) {
		c->st.skipped_demand++;
		pthread_mutex_unlock(&c->lock);
		return NULL;
	}
	if (!c->free_head) {
		/* Oldest ready entry; fetching ones are in use. */
		for (i = c->lru_head; i && E(c, i)->state != PC_READY; i = E(c, i)->next)
			;
		if (!i) {
			pthread_mutex_unlock(&c->lock);
			return NULL;
		}
		c->st.evicted_unused++;
		drop(c, i);
	}
	i = c->free_head;
	x = E(c, i);
	c->free_head = x->next;
	memset(x, 0, sizeof(*x));
	x->pg = pg;
	x->state = PC_FETCHING;
	x->sticky = ghost_has(c, pg);
	x->hnext = c->bucket[hash(c, pg)];
	c->bucket[hash(c, pg)] = i;
	lru_append(c, i);
	pthread_mutex_unlock(&c->lock);
	return c->pages + (size_t)(i - 1) * PAGE;
}

void pcache_end(struct pcache *c, uint64_t pg, bool ok)
{
	uint32_t i;

	pthread_mutex_lock(&c->lock);
	i = find(c, pg);
	if (i && E(c, i)->state == PC_FETCHING) {
		if (!ok || E(c, i)->stale) {
			if (E(c, i)->stale)
				c->st.invalidated++;
			drop(c, i);
		} else {
			E(c, i)->state = PC_READY;
			c->st.cached++;
			c->st.prefetched++;
		}
	}
	pthread_cond_broadcast(&c->fetched);
	pthread_mutex_unlock(&c->lock);
}

void pcache_get_stats(struct pcache *c, struct pcache_stats *out)
{
	pthread_mutex_lock(&c->lock);
	*out = c->st;
	pthread_mutex_unlock(&c->lock);
}
