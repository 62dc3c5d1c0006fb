/* SPDX-License-Identifier: MIT */
/*
 * A bounded set of (process, page) pairs: the pages the agent prefetched
 * and that have not been faulted on since.  A later non-major fault on one
 * of them is a prefetch hit; process_madvise reports nothing of the sort, so
 * the agent counts hits itself (shared/design.md section 3).
 *
 * Memory is fixed at init.  When full, the oldest insertion is forgotten
 * first (FIFO): a page prefetched long ago and never touched is either
 * resident by now or was reclaimed again.
 */
#ifndef LEAP_PAGESET_H
#define LEAP_PAGESET_H

#include <stdbool.h>
#include <stdint.h>

struct leap_pageset_entry {
	uint64_t page;
	uint32_t tgid;
	uint32_t live; /* 1 while in the set */
};

struct leap_pageset {
	struct leap_pageset_entry *ring; /* insertion order, capacity slots */
	uint32_t *index;		 /* ring position + 1, 0 = empty */
	uint32_t index_mask;
	uint32_t capacity;
	uint32_t next;	    /* ring slot for the next insertion */
	uint32_t count;	    /* live entries */
	uint64_t forgotten; /* live entries pushed out by newer ones */
};

int leap_pageset_init(struct leap_pageset *s, uint32_t capacity);
void leap_pageset_free(struct leap_pageset *s);
/* Adds the pair; returns false if it was already present. */
bool leap_pageset_add(struct leap_pageset *s, uint32_t tgid, uint64_t page);
/* Removes the pair; returns whether it was present. */
bool leap_pageset_take(struct leap_pageset *s, uint32_t tgid, uint64_t page);
bool leap_pageset_contains(const struct leap_pageset *s, uint32_t tgid, uint64_t page);

#endif
