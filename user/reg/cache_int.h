/* SPDX-License-Identifier: MIT */
/* The registration cache's insides, shared by cache.c, mrrc.c and lru.c. */
#ifndef LEAP_REG_CACHE_INT_H
#define LEAP_REG_CACHE_INT_H

#include "leap/reg.h"

struct leap_reg_region {
	uint64_t start, end; /* page-aligned [start, end) */
	struct leap_reg_key key;
	uint32_t refs;
	bool cached;			     /* in the LRU stack (and index) */
	struct leap_reg_region *prev, *next; /* LRU stack, head = most recent */
	double evictfact;		     /* MRRC: scratch while resorting */
	uint32_t age;			     /* MRRC: scratch, 0 = oldest */
};

struct leap_reg_cache {
	struct leap_reg_config cfg;
	struct leap_reg_ops ops;
	struct leap_reg_watch watch;
	bool has_watch;
	struct leap_reg_region *head, *tail;
	/* MRRC: the cached regions sorted by start; they never overlap. */
	struct leap_reg_region **idx;
	size_t nidx, idx_cap;
	struct leap_reg_stats st;
	/* deregistrations queued for one batched dereg call */
	struct leap_reg_span *batch;
	size_t nbatch, batch_cap;
	struct leap_reg_region **scratch;
	size_t scratch_cap;
};

/* cache.c */
void reg_touch(struct leap_reg_cache *c, struct leap_reg_region *r);
void reg_ref(struct leap_reg_cache *c, struct leap_reg_region *r);
int reg_new_region(struct leap_reg_cache *c, uint64_t start, uint64_t end,
		   struct leap_reg_region **out);
void reg_drop(struct leap_reg_cache *c, struct leap_reg_region *r, bool gone);
void reg_flush_batch(struct leap_reg_cache *c);
bool reg_has_room(const struct leap_reg_cache *c, uint64_t len);
void reg_unref_all(struct leap_reg_cache *c, struct leap_reg_ref *ref);
void reg_add_seg(struct leap_reg_ref *ref, struct leap_reg_region *r, uint64_t addr,
		 uint64_t len);
int reg_scratch_reserve(struct leap_reg_cache *c, size_t n);
size_t reg_idx_lower(const struct leap_reg_cache *c, uint64_t start);
int reg_idx_insert(struct leap_reg_cache *c, struct leap_reg_region *r);

/* mrrc.c / lru.c: the policies */
int mrrc_get(struct leap_reg_cache *c, uint64_t addr, uint64_t len,
	     struct leap_reg_ref *ref);
void mrrc_make_room(struct leap_reg_cache *c, uint64_t len);
int lru_get(struct leap_reg_cache *c, uint64_t addr, uint64_t len,
	    struct leap_reg_ref *ref);
void lru_make_room(struct leap_reg_cache *c, uint64_t len);

static inline uint64_t reg_pages(const struct leap_reg_cache *c, uint64_t len)
{
	return len / c->cfg.page_size;
}

#endif
