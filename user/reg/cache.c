// SPDX-License-Identifier: MIT
/*
 * The registration cache's life cycle, shared by both policies (mrrc.c,
 * lru.c): the LRU stack, MRRC's address index, references, batched
 * deregistration, capacity, and invalidation when memory goes away.
 *
 * A region is either cached (in the LRU stack; for MRRC also in the index)
 * or detached: evicted, invalidated or never cacheable while a reference
 * still holds it.  Detached regions are never returned by a lookup and are
 * deregistered when their last reference is put, so a stale registration can
 * be used only by the reference that already held it when its memory went
 * away (the NIC's view of such memory is undefined whatever we do).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cache_int.h"

const char *leap_reg_class_name(enum leap_reg_class cls)
{
	static const char *const names[] = {"hit", "contained", "overlap", "miss"};

	return (unsigned)cls < 4 ? names[cls] : "?";
}

static const char *const policy_names[] = {"mrrc", "lru", "mrrc-rank"};

const char *leap_reg_policy_name(enum leap_reg_policy p)
{
	return (unsigned)p < 3 ? policy_names[p] : "?";
}

int leap_reg_policy_parse(const char *name)
{
	for (int i = 0; i < 3; i++)
		if (!strcmp(name, policy_names[i]))
			return i;
	return -1;
}

struct leap_reg_cache *leap_reg_cache_new(const struct leap_reg_config *cfg,
					  const struct leap_reg_ops *ops)
{
	struct leap_reg_cache *c;
	struct leap_reg_config k = *cfg;

	if (!ops || !ops->reg || !ops->dereg || (unsigned)k.policy > LEAP_REG_MRRC_RANK) {
		errno = EINVAL;
		return NULL;
	}
	if (!k.page_size)
		k.page_size = 4096;
	if (!k.resort_pct)
		k.resort_pct = 50;
	if (!k.resort_max)
		k.resort_max = 1024;
	if (!k.evict_batch)
		k.evict_batch = k.policy == LEAP_REG_MRRC_RANK ? 4 : 1;
	if (!k.max_segs)
		k.max_segs = LEAP_REG_MAX_SEGS;
	if ((k.page_size & (k.page_size - 1)) || k.resort_pct > 100 ||
	    k.max_segs > LEAP_REG_MAX_SEGS || k.evict_batch > 1u << 20 ||
	    k.resort_max > 1u << 20) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->cfg = k;
	c->ops = *ops;
	return c;
}

void leap_reg_cache_set_watch(struct leap_reg_cache *c, const struct leap_reg_watch *w)
{
	c->has_watch = w && w->watch && w->unwatch && w->drain;
	if (c->has_watch)
		c->watch = *w;
}

static int batch_push(struct leap_reg_cache *c, const struct leap_reg_region *r)
{
	if (c->nbatch == c->batch_cap) {
		size_t cap = c->batch_cap ? c->batch_cap * 2 : 16;
		struct leap_reg_span *b = realloc(c->batch, cap * sizeof(*b));

		if (!b)
			return -ENOMEM;
		c->batch = b;
		c->batch_cap = cap;
	}
	c->batch[c->nbatch++] = (struct leap_reg_span){
		.addr = r->start, .len = r->end - r->start, .key = r->key};
	return 0;
}

void reg_flush_batch(struct leap_reg_cache *c)
{
	if (!c->nbatch)
		return;
	c->ops.dereg(c->ops.ctx, c->batch, c->nbatch);
	c->st.deregistrations += c->nbatch;
	c->st.dereg_batches++;
	c->nbatch = 0;
}

/* Deregisters r (queued in the batch, or alone if the queue cannot grow). */
static void reg_release(struct leap_reg_cache *c, struct leap_reg_region *r)
{
	c->st.pinned_bytes -= r->end - r->start;
	if (batch_push(c, r) < 0) {
		struct leap_reg_span one = {r->start, r->end - r->start, r->key};

		c->ops.dereg(c->ops.ctx, &one, 1);
		c->st.deregistrations++;
		c->st.dereg_batches++;
	}
	free(r);
}

size_t reg_idx_lower(const struct leap_reg_cache *c, uint64_t start)
{
	size_t lo = 0, hi = c->nidx;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->idx[mid]->start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int reg_idx_insert(struct leap_reg_cache *c, struct leap_reg_region *r)
{
	size_t i;

	if (c->nidx == c->idx_cap) {
		size_t cap = c->idx_cap ? c->idx_cap * 2 : 64;
		struct leap_reg_region **n = realloc(c->idx, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->idx = n;
		c->idx_cap = cap;
	}
	i = reg_idx_lower(c, r->start);
	memmove(c->idx + i + 1, c->idx + i, (c->nidx - i) * sizeof(*c->idx));
	c->idx[i] = r;
	c->nidx++;
	return 0;
}

static void idx_remove(struct leap_reg_cache *c, struct leap_reg_region *r)
{
	size_t i = reg_idx_lower(c, r->start);

	if (i < c->nidx && c->idx[i] == r) {
		memmove(c->idx + i, c->idx + i + 1, (c->nidx - i - 1) * sizeof(*c->idx));
		c->nidx--;
	}
}

static void lru_unlink(struct leap_reg_cache *c, struct leap_reg_region *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else
		c->head = r->next;
	if (r->next)
		r->next->prev = r->prev;
	else
		c->tail = r->prev;
	r->prev = r->next = NULL;
}

static void lru_push_head(struct leap_reg_cache *c, struct leap_reg_region *r)
{
	r->prev = NULL;
	r->next = c->head;
	if (c->head)
		c->head->prev = r;
	else
		c->tail = r;
	c->head = r;
}

/* A reference: r goes to the top of the stack and loses its Evictfact
 * (MRE values it afresh when it next reaches the resorting section). */
void reg_touch(struct leap_reg_cache *c, struct leap_reg_region *r)
{
	r->valued = false;
	if (r->cached && c->head != r) {
		lru_unlink(c, r);
		lru_push_head(c, r);
	}
}

/* Moves cached r to the bottom of the stack (MRE's resort). */
void reg_to_bottom(struct leap_reg_cache *c, struct leap_reg_region *r)
{
	if (c->tail == r)
		return;
	lru_unlink(c, r);
	r->prev = c->tail;
	c->tail->next = r;
	c->tail = r;
}

/*
 * Gathers the resorting section into c->scratch, bottom first: the least
 * recently used unreferenced regions, resort_pct percent of the cached ones
 * but at least evict_batch and at most resort_max.  Returns how many (0:
 * everything cached is in use, or no memory for the scratch array).
 */
size_t reg_section(struct leap_reg_cache *c)
{
	size_t want = ((size_t)c->st.entries * c->cfg.resort_pct + 99) / 100, m = 0;

	if (want < c->cfg.evict_batch)
		want = c->cfg.evict_batch;
	if (want > c->cfg.resort_max)
		want = c->cfg.resort_max;
	if (want < 1)
		want = 1;
	if (reg_scratch_reserve(c, want) < 0)
		want = c->scratch_cap;
	for (struct leap_reg_region *r = c->tail; r && m < want; r = r->prev)
		if (!r->refs)
			c->scratch[m++] = r;
	return m;
}

void reg_ref(struct leap_reg_cache *c, struct leap_reg_region *r)
{
	r->refs++;
	reg_touch(c, r);
}

/*
 * Takes r out of the cache.  gone: its memory went away (invalidation), so
 * there is nothing left to unwatch.  Unreferenced, it is deregistered (queued
 * for the batch); referenced, it waits detached for its last put.
 */
void reg_drop(struct leap_reg_cache *c, struct leap_reg_region *r, bool gone)
{
	if (r->cached) {
		lru_unlink(c, r);
		if (reg_indexed(c))
			idx_remove(c, r);
		r->cached = false;
		c->st.entries--;
		/* MRRC regions never overlap, so no other cached region needs
		 * this range watched.  LRU regions may overlap: we leave their
		 * watch in place (harmless, see monitor.c). */
		if (!gone && c->has_watch && reg_indexed(c))
			c->watch.unwatch(c->watch.ctx, r->start, r->end - r->start);
	}
	if (!r->refs)
		reg_release(c, r);
}

bool reg_has_room(const struct leap_reg_cache *c, uint64_t len)
{
	return (!c->cfg.max_bytes || c->st.pinned_bytes + len <= c->cfg.max_bytes) &&
	       (!c->cfg.max_entries || c->st.entries + 1 <= c->cfg.max_entries);
}

int reg_scratch_reserve(struct leap_reg_cache *c, size_t n)
{
	if (n > c->scratch_cap) {
		struct leap_reg_region **s = realloc(c->scratch, n * sizeof(*s));

		if (!s)
			return -ENOMEM;
		c->scratch = s;
		c->scratch_cap = n;
	}
	return 0;
}

/*
 * Evicts the eviction segment from c->scratch[0..m) (the section in
 * eviction order): at least evict_batch regions, more while the room for
 * len is not there, and deregisters them in one batch.
 */
void reg_evict_segment(struct leap_reg_cache *c, size_t m, uint64_t len)
{
	for (size_t j = 0; j < m; j++) {
		if (j >= c->cfg.evict_batch && reg_has_room(c, len))
			break;
		c->st.evictions++;
		reg_drop(c, c->scratch[j], false);
	}
	reg_flush_batch(c);
}

/*
 * Registers [start, end) and returns it referenced once.  It is cached when
 * the capacity allows (after evicting by the policy) and the monitor can
 * watch it; otherwise it serves this reference only (stats.uncached).
 */
int reg_new_region(struct leap_reg_cache *c, uint64_t start, uint64_t end,
		   struct leap_reg_region **out)
{
	uint64_t len = end - start;
	struct leap_reg_region *r = calloc(1, sizeof(*r));
	bool cache_it = true, watched = false;
	int err;

	if (!r)
		return -ENOMEM;
	r->start = start;
	r->end = end;
	if (c->cfg.max_bytes && len > c->cfg.max_bytes)
		cache_it = false; /* would flush the whole cache for one request */
	if (cache_it && !reg_has_room(c, len)) {
		if (c->cfg.policy == LEAP_REG_MRRC)
			mre_make_room(c, len);
		else if (c->cfg.policy == LEAP_REG_MRRC_RANK)
			mrrc_rank_make_room(c, len);
		else
			lru_make_room(c, len);
		reg_flush_batch(c);
		cache_it = reg_has_room(c, len);
	}
	/* Watch before registering: an unmap racing with the registration is
	 * then reported rather than lost. */
	if (cache_it && c->has_watch) {
		watched = c->watch.watch(c->watch.ctx, start, len) == 0;
		cache_it = watched;
	}
	if (cache_it && reg_indexed(c) && reg_idx_insert(c, r) < 0)
		cache_it = false;
	err = c->ops.reg(c->ops.ctx, start, len, &r->key);
	if (err) {
		if (cache_it && reg_indexed(c))
			idx_remove(c, r);
		if (watched && reg_indexed(c))
			c->watch.unwatch(c->watch.ctx, start, len);
		free(r);
		return err < 0 ? err : -EIO;
	}
	c->st.registrations++;
	c->st.reg_bytes += len;
	c->st.pinned_bytes += len;
	if (c->st.pinned_bytes > c->st.pinned_peak)
		c->st.pinned_peak = c->st.pinned_bytes;
	r->refs = 1;
	if (cache_it) {
		r->cached = true;
		lru_push_head(c, r);
		c->st.entries++;
	} else {
		/* (LRU regions may overlap cached ones: their watch stays) */
		if (watched && reg_indexed(c))
			c->watch.unwatch(c->watch.ctx, start, len);
		c->st.uncached++;
	}
	*out = r;
	return 0;
}

void reg_add_seg(struct leap_reg_ref *ref, struct leap_reg_region *r, uint64_t addr,
		 uint64_t len)
{
	uint64_t s = r->start > addr ? r->start : addr;
	uint64_t e = r->end < addr + len ? r->end : addr + len;

	ref->segs[ref->nsegs] = (struct leap_reg_span){s, e - s, r->key};
	ref->region[ref->nsegs] = r;
	ref->nsegs++;
}

static void put_region(struct leap_reg_cache *c, struct leap_reg_region *r)
{
	if (r->refs)
		r->refs--;
	if (!r->refs && !r->cached)
		reg_release(c, r);
}

void reg_unref_all(struct leap_reg_cache *c, struct leap_reg_ref *ref)
{
	for (unsigned i = 0; i < ref->nsegs; i++)
		put_region(c, ref->region[i]);
	ref->nsegs = 0;
	reg_flush_batch(c);
}

static void invalidate_cb(void *arg, uint64_t addr, uint64_t len)
{
	struct leap_reg_cache *c = arg;
	uint64_t end = addr + len < addr ? UINT64_MAX : addr + len;
	struct leap_reg_region *r = c->head, *next;

	/* A linear walk: invalidations are rare next to lookups, and the LRU
	 * policy's regions may overlap so its index would not help. */
	for (; r; r = next) {
		next = r->next;
		if (r->start < end && addr < r->end) {
			c->st.invalidations++;
			reg_drop(c, r, true);
		}
	}
}

void leap_reg_invalidate(struct leap_reg_cache *c, uint64_t addr, uint64_t len)
{
	if (!len)
		return;
	invalidate_cb(c, addr, len);
	reg_flush_batch(c);
}

void leap_reg_poll(struct leap_reg_cache *c)
{
	if (c->has_watch)
		c->watch.drain(c->watch.ctx, invalidate_cb, c);
	reg_flush_batch(c);
}

int leap_reg_get(struct leap_reg_cache *c, uint64_t addr, uint64_t len,
		 struct leap_reg_ref *ref)
{
	uint64_t mask = c->cfg.page_size - 1;
	int err;

	ref->nsegs = 0;
	/* the page-rounded end must not wrap either */
	if (!len || addr + len < addr || ((addr + len + mask) & ~mask) < addr + len)
		return -EINVAL;
	/* Apply every unmap reported so far before looking anything up: the
	 * monitor records an event before the unmapping call returns, so a
	 * lookup that follows munmap in program order sees it. */
	leap_reg_poll(c);
	c->st.lookups++;
	if (reg_indexed(c))
		err = mrrc_get(c, addr, len, ref);
	else
		err = lru_get(c, addr, len, ref);
	reg_flush_batch(c);
	if (!err) {
		switch (ref->cls) {
		case LEAP_REG_HIT:
			c->st.hits++;
			break;
		case LEAP_REG_CONTAINED:
			c->st.contained++;
			break;
		case LEAP_REG_OVERLAP:
			c->st.overlaps++;
			break;
		case LEAP_REG_MISS:
			c->st.misses++;
			break;
		}
	} else {
		c->st.lookups--;
	}
	return err;
}

void leap_reg_put(struct leap_reg_cache *c, struct leap_reg_ref *ref)
{
	reg_unref_all(c, ref);
}

void leap_reg_flush(struct leap_reg_cache *c)
{
	struct leap_reg_region *r = c->head, *next;

	for (; r; r = next) {
		next = r->next;
		if (!r->refs)
			reg_drop(c, r, false);
	}
	reg_flush_batch(c);
}

void leap_reg_cache_free(struct leap_reg_cache *c)
{
	struct leap_reg_region *r, *next;

	if (!c)
		return;
	for (r = c->head; r; r = next) {
		next = r->next;
		r->refs = 0;
		reg_drop(c, r, false);
	}
	reg_flush_batch(c);
	free(c->idx);
	free(c->batch);
	free(c->scratch);
	free(c);
}

void leap_reg_cache_stats(const struct leap_reg_cache *c, struct leap_reg_stats *st)
{
	*st = c->st;
}
