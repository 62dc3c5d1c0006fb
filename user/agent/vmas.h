/* SPDX-License-Identifier: MIT */
/*
 * Which of a process's mappings hold shared memory (shmem: MAP_SHARED |
 * MAP_ANONYMOUS, memfd, SysV shm, tmpfs files), from /proc/PID/maps.  A
 * shmem page that is swapped out leaves no swap entry in the page table
 * (mm/shmem.c keeps it in the file's mapping; the PTE is none), so the
 * pagemap filter must not drop such pages as "not swapped": for them it
 * keeps every page that is not present, and MADV_WILLNEED reads what of
 * them is in swap (mm/madvise.c madvise_willneed() -> shmem_swapin_range()).
 */
#ifndef LEAP_AGENT_VMAS_H
#define LEAP_AGENT_VMAS_H

#include <stdbool.h>
#include <stdint.h>

/* One mapping, in pages. */
struct vma_range {
	uint64_t start, end; /* [start, end) */
	uint64_t pgoff;	     /* the file's page at start */
	uint64_t object;     /* its file: device and inode, never 0 (shmem only) */
	bool shmem;
};

/*
 * How long after reading maps a page in no mapping known waits for the
 * next read: a page in a gap (unmapped since, or never mapped) would
 * otherwise read the whole file again each time.  A runtime's heap has
 * a thousand mappings or more (Node.js: 1,185), 1-2 ms a read while it
 * faults.  This wait holds for a process that had shared memory at the
 * last read; one that had none waits VMAS_MAX_AGE_NS (below): the answer
 * for a page in a gap is "not shared" either way, and only a shared
 * segment mapped since the last read is seen up to a second late.  With
 * this wait alone, node-gc read its maps ~200 times a run, 13% of the
 * agent's CPU (perf, 2026-11-30).
 */
#define VMAS_REREAD_NS (50ULL * 1000 * 1000)

/*
 * How old the table may grow before a page found in it reads maps again:
 * a mapping unmapped and mapped again at the same addresses as another
 * kind (a private heap arena where a shmem segment now lies) would
 * otherwise be answered from the old line for as long as the process
 * lives.  Once a second is ~0.3 ms a second for Node.js's maps.
 */
#define VMAS_MAX_AGE_NS (1000ULL * 1000 * 1000)

/* A process's mappings, as last read. */
struct proc_vmas {
	struct vma_range *v; /* in address order, as maps lists them */
	uint32_t n, cap;
	uint32_t shmem;	  /* mappings of shared memory among them */
	bool read;	  /* read at least once */
	uint64_t read_ns; /* when last read (CLOCK_MONOTONIC) */
	uint64_t reads;	  /* times /proc/PID/maps was read */
};

/*
 * Parses one line of /proc/PID/maps ("start-end perms offset dev inode
 * [path]") into *out; false when it is not one.  Shared memory: a shared
 * mapping ('s') of a file on a device of major 0 (tmpfs, the kernel's
 * shm mount: "/dev/zero (deleted)", "/SYSV...", "/memfd:...").
 */
bool vmas_parse_line(const char *line, struct vma_range *out);

/*
 * Whether page of tgid lies in shared memory: 1 yes, 0 no, -1 unknown
 * (maps unreadable, or page in no mapping).  Reads /proc/PID/maps, all of
 * it, when page lies in no mapping known (a new mapping), unless it did
 * less than VMAS_REREAD_NS before now_ns (VMAS_MAX_AGE_NS where the last
 * read found no shared memory), and when the table is older than
 * VMAS_MAX_AGE_NS.
 */
int vmas_shmem(struct proc_vmas *m, uint32_t tgid, uint64_t page, uint64_t now_ns);

/*
 * Where page of tgid lies in shared memory: true and *out set to its
 * mapping (start, end, pgoff, object), as vmas_shmem() reads maps; false
 * when the page is not in shared memory or that is unknown.
 */
bool vmas_shmem_at(struct proc_vmas *m, uint32_t tgid, uint64_t page, uint64_t now_ns,
		   struct vma_range *out);

/* Frees what m holds (not m). */
void vmas_free(struct proc_vmas *m);

#endif
