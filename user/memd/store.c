// SPDX-License-Identifier: MIT
/*
 * leap-memd's page store.  The arena is mapped and mlock'ed at start: a
 * memory server whose pages could themselves be swapped out would turn a
 * remote page-in into a local one, or deadlock when the swap it backs is
 * its own.  The index is sized at twice the capacity so linear probing
 * stays short without ever resizing (no allocation on the I/O path).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "memd.h"

static uint64_t mix(uint32_t dev, uint64_t off)
{
	/* splitmix64 finaliser over (dev, page number). */
	uint64_t x = (off / LEAP_WIRE_PAGE_SIZE) ^ ((uint64_t)dev << 47) ^ dev;

	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

int memd_store_init(struct memd_store *s, uint64_t pages, bool lock, char *err,
		    size_t errlen)
{
	uint64_t slots = 2;
	size_t arena_len, tab_len;

	memset(s, 0, sizeof(*s));
	if (pages < 1 || pages >= UINT32_MAX) {
		snprintf(err, errlen, "capacity of %llu pages out of range",
			 (unsigned long long)pages);
		return -1;
	}
	while (slots < 2 * pages)
		slots <<= 1;
	arena_len = pages * LEAP_WIRE_PAGE_SIZE;
	tab_len = slots * sizeof(struct memd_slot);
	s->arena = mmap(NULL, arena_len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->arena == MAP_FAILED) {
		s->arena = NULL;
		snprintf(err, errlen, "cannot map %zu bytes: %s", arena_len,
			 strerror(errno));
		return -1;
	}
	s->tab = mmap(NULL, tab_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		      -1, 0);
	if (s->tab == MAP_FAILED) {
		s->tab = NULL;
		snprintf(err, errlen, "cannot map the index: %s", strerror(errno));
		memd_store_fini(s);
		return -1;
	}
	s->capacity = pages;
	s->mask = slots - 1;
	if (lock && (mlock(s->arena, arena_len) || mlock(s->tab, tab_len))) {
		snprintf(err, errlen,
			 "cannot lock %zu bytes in memory: %s (RLIMIT_MEMLOCK? run as "
			 "root "
			 "or pass --no-mlock)",
			 arena_len + tab_len, strerror(errno));
		memd_store_fini(s);
		return -1;
	}
	return 0;
}

void memd_store_fini(struct memd_store *s)
{
	if (s->arena)
		munmap(s->arena, s->capacity * LEAP_WIRE_PAGE_SIZE);
	if (s->tab)
		munmap(s->tab, (s->mask + 1) * sizeof(struct memd_slot));
	memset(s, 0, sizeof(*s));
}

static struct memd_slot *probe(const struct memd_store *s, uint32_t dev, uint64_t off)
{
	uint64_t i = mix(dev, off) & s->mask;

	/* Terminates: the table is never more than half full. */
	for (;; i = (i + 1) & s->mask) {
		struct memd_slot *e = &s->tab[i];

		if (!e->idx1 || (e->dev == dev && e->off == off))
			return e;
	}
}

uint8_t *memd_store_find(const struct memd_store *s, uint32_t dev, uint64_t off)
{
	struct memd_slot *e = probe(s, dev, off);

	return e->idx1 ? s->arena + (uint64_t)(e->idx1 - 1) * LEAP_WIRE_PAGE_SIZE : NULL;
}

uint8_t *memd_store_get(struct memd_store *s, uint32_t dev, uint64_t off)
{
	struct memd_slot *e = probe(s, dev, off);

	if (!e->idx1) {
		uint32_t idx1;

		if (s->used >= s->capacity)
			return NULL;
		if (s->free1) {
			uint8_t *pg =
				s->arena + (uint64_t)(s->free1 - 1) * LEAP_WIRE_PAGE_SIZE;

			idx1 = s->free1;
			memcpy(&s->free1, pg, sizeof(s->free1));
			memset(pg, 0, LEAP_WIRE_PAGE_SIZE);
		} else {
			idx1 = (uint32_t)(++s->hwm);
		}
		s->used++;
		e->dev = dev;
		e->off = off;
		e->idx1 = idx1;
	}
	return s->arena + (uint64_t)(e->idx1 - 1) * LEAP_WIRE_PAGE_SIZE;
}

int memd_store_free(struct memd_store *s, uint32_t dev, uint64_t off)
{
	struct memd_slot *e = probe(s, dev, off);
	uint64_t i, j;

	if (!e->idx1)
		return 0;
	/* The page joins the free list, its first bytes the link. */
	memcpy(s->arena + (uint64_t)(e->idx1 - 1) * LEAP_WIRE_PAGE_SIZE, &s->free1,
	       sizeof(s->free1));
	s->free1 = e->idx1;
	s->used--;
	/*
	 * Backward-shift deletion (Knuth 6.4, algorithm R): every later entry
	 * of the probe run whose home slot does not lie cyclically in (i, j]
	 * moves into the hole, so every key stays reachable from its home.
	 */
	i = (uint64_t)(e - s->tab);
	for (j = (i + 1) & s->mask; s->tab[j].idx1; j = (j + 1) & s->mask) {
		uint64_t k = mix(s->tab[j].dev, s->tab[j].off) & s->mask;

		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		s->tab[i] = s->tab[j];
		i = j;
	}
	s->tab[i] = (struct memd_slot){0};
	return 1;
}
