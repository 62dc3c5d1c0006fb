// SPDX-License-Identifier: MIT
/* Pages issued a moment ago (leap/recent.h). */
#include <errno.h>
#include <stdlib.h>

#include "leap/recent.h"

#define TIME_SHIFT 16 /* ns per time unit: 65.5 us */
#define TIME_BITS  24
#define TIME_MASK  ((1ULL << TIME_BITS) - 1)

int leap_recent_init(struct leap_recent *r, unsigned bits)
{
	r->slot = NULL;
	r->mask = 0;
	if (bits < 4 || bits > 24) {
		errno = EINVAL;
		return -1;
	}
	r->slot = calloc(1ULL << bits, sizeof(*r->slot));
	if (!r->slot)
		return -1;
	r->mask = (uint32_t)((1ULL << bits) - 1);
	return 0;
}

void leap_recent_free(struct leap_recent *r)
{
	free(r->slot);
	r->slot = NULL;
	r->mask = 0;
}

/* splitmix64's finaliser over the pair: every input bit reaches every
 * output bit, so the low bits index and the high ones tag. */
static uint64_t hash_page(uint32_t tgid, uint64_t page)
{
	uint64_t x = page ^ ((uint64_t)tgid << 40) ^ ((uint64_t)tgid >> 24);

	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

uint32_t leap_recent_filter(struct leap_recent *r, uint32_t tgid, uint64_t *pages,
			    uint32_t n, uint64_t keep, uint64_t now_ns, uint64_t ttl_ns)
{
	uint64_t now = (now_ns >> TIME_SHIFT) & TIME_MASK;
	uint64_t ttl = ttl_ns >> TIME_SHIFT;
	uint32_t m = 0;

	if (!r->slot)
		return n;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t h = hash_page(tgid, pages[i]);
		uint64_t tag = h >> TIME_BITS << TIME_BITS;
		_Atomic uint64_t *s = &r->slot[h & r->mask];
		uint64_t old = atomic_load_explicit(s, memory_order_relaxed);

		/* Issued within ttl (the time units wrap: their difference
		 * modulo 2^24 is the age), and not the marker: skipped.  A
		 * word of 0 was never written. */
		if (old && (old & ~TIME_MASK) == tag &&
		    ((now - (old & TIME_MASK)) & TIME_MASK) < ttl && pages[i] != keep)
			continue;
		atomic_store_explicit(s, tag | now, memory_order_relaxed);
		pages[m++] = pages[i];
	}
	return m;
}
