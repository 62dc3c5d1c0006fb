/* SPDX-License-Identifier: MIT */
/*
 * Which pages of another process are swapped out or resident, from its
 * /proc/PID/pagemap (Documentation/admin-guide/mm/pagemap.rst).
 */
#ifndef LEAP_AGENT_PAGEMAP_H
#define LEAP_AGENT_PAGEMAP_H

#include <stdbool.h>
#include <stdint.h>

#define PAGEMAP_SPAN_MAX 4096 /* pages looked at in one call (32 KiB of pread) */

struct pagemap_reader {
	bool no_scan;	/* the kernel has no PAGEMAP_SCAN (< 6.7): pread only */
	uint64_t scans; /* PAGEMAP_SCAN ioctls */
	uint64_t reads; /* pread calls */
};

/*
 * Keeps the pages of pages[0..n) (sorted, unique) that fd's process has
 * swapped out (a swap entry, not present); returns the new count.  ent
 * (optional) receives the kept pages' pagemap entries (swap type and
 * offset): then only pread will do.  Where the pagemap cannot be read
 * (process gone), keeps all without ent (process_madvise decides) and none
 * with it.
 */
uint32_t pagemap_keep_swapped(struct pagemap_reader *r, int fd, uint64_t *pages,
			      uint32_t n, uint64_t *ent);

/*
 * The same for shared memory (vmas.h): keeps the pages that are not
 * present, swapped or not (a swapped-out shmem page has a none PTE).
 */
uint32_t pagemap_keep_absent(struct pagemap_reader *r, int fd, uint64_t *pages,
			     uint32_t n);

/* How many of the n <= 64 pages from first are present (mapped); 0 if the
 * pagemap cannot be read. */
uint32_t pagemap_count_present(struct pagemap_reader *r, int fd, uint64_t first,
			       uint32_t n);

/* Whether this kernel answers PAGEMAP_SCAN (6.7+), asked of our own
 * pagemap. */
bool pagemap_scan_supported(void);

#endif /* LEAP_AGENT_PAGEMAP_H */
