/* SPDX-License-Identifier: MIT */
/*
 * The watched processes' files: the one place the agent opens a process's
 * pidfd (for process_madvise), /proc/PID/pagemap and /proc/PID/maps, with
 * one cache of them shared by the event thread and the workers.
 *
 * An entry is held (procs_get) while a thread uses its fds: a process
 * forgotten meanwhile (it exited) is taken out of the lookup at once and
 * closed by its last holder, so no fd is closed under a call, and none is
 * reused for another process while held.  Its mappings (vmas.h) are read
 * under the entry's own lock: reading maps (~0.3 ms for a runtime's
 * thousand mappings) holds up no other process.
 *
 * Also the decision core's facts port (core.h): are these pages mapped,
 * does this page lie in shared memory.
 */
#ifndef LEAP_AGENT_PROCS_H
#define LEAP_AGENT_PROCS_H

#include <stdbool.h>
#include <stdint.h>

#include "leap/core.h"
#include "pagemap.h"
#include "vmas.h"

#define PROCS_CACHE 128 /* processes open at once */

struct procs;
struct proc_entry;

/* use_pagemap: open each process's pagemap (false: never read it). */
struct procs *procs_new(bool use_pagemap);
/* Closes every entry; none may be held. */
void procs_free(struct procs *c);

/*
 * tgid's entry, opened if needed (evicting the least recently used entry
 * nobody holds, never a preopened one), and held until procs_put().  NULL
 * with *err: -ESRCH (gone), -EMFILE (every entry held or pinned), or
 * pidfd_open's error.
 */
struct proc_entry *procs_get(struct procs *c, uint32_t tgid, int *err);
void procs_put(struct procs *c, struct proc_entry *e);
int proc_pidfd(const struct proc_entry *e);
/* -1 when its pagemap could not be opened (or use_pagemap is off). */
int proc_pagemap_fd(const struct proc_entry *e);
/* Whether page lies in a shared-memory mapping of the process (vmas.h);
 * false when unknown. */
bool proc_in_shmem(struct proc_entry *e, uint64_t page);
/* Where page lies in shared memory (vmas_shmem_at()): its mapping. */
bool proc_shmem_at(struct proc_entry *e, uint64_t page, struct vma_range *out);

/* Forgets a process (it exited). */
void procs_forget(struct procs *c, uint32_t tgid);
/*
 * Opens tgid's pidfd and pagemap now and keeps them until the process is
 * forgotten: a pagemap opened with CAP_SYS_ADMIN shows swap entries for as
 * long as it stays open (swapslot.h), so backend mode opens the processes
 * it knows before the agent drops its capabilities.  0 or -errno (-EACCES:
 * no pagemap).
 */
int procs_preopen(struct procs *c, uint32_t tgid);

/*
 * The decision core's facts port over c, for one thread (r counts its
 * pagemap reads): whether pages are mapped (pagemap bit 63), whether a
 * page lies in shared memory (maps).  ctx must outlive the port.
 */
struct procs_facts {
	struct procs *c;
	struct pagemap_reader *r;
};
struct leap_core_facts procs_facts_port(struct procs_facts *ctx);

#endif
