/* SPDX-License-Identifier: MIT */
/*
 * From a virtual page to its swap slot: the swap entry /proc/PID/pagemap
 * shows for a swapped-out page, and which swap type is the backend's device.
 * Pure: the caller reads the files.
 */
#ifndef LEAP_AGENT_SWAPSLOT_H
#define LEAP_AGENT_SWAPSLOT_H

#include <stdbool.h>
#include <stdint.h>

/* Real swap types are below MAX_SWAPFILES (32 minus the special types:
 * migration, device-private, hwpoison, pte markers; include/linux/swap.h). */
#define SWAPSLOT_TYPES 32

/*
 * Whether a pagemap entry is a swapped-out page (bit 62 set, bit 63 clear),
 * and then its swap type (bits 0-4) and offset (bits 5-54).  Both fields
 * read 0 when the pagemap file was opened without CAP_SYS_ADMIN
 * (Documentation/admin-guide/mm/pagemap.rst; fs/proc/task_mmu.c
 * pte_to_pagemap_entry() fills them only when pm->show_pfn, which
 * pagemap_read() sets from file_ns_capable(file, CAP_SYS_ADMIN): the
 * opener's credentials).  Offset 0 is the swap header, never a page's slot.
 */
bool swapslot_decode(uint64_t pm, uint32_t *type, uint64_t *offset);

/*
 * The swap type of dev (a path as /proc/swaps prints it) from the text of
 * /proc/swaps: its position among the areas, header line excluded, or -1.
 * swap_next() (mm/swapfile.c) lists swap_info[] in type order, skipping
 * unused types, so the position is the type unless a lower type was
 * swapped off while a higher one stayed on (a hole); swapslot_vote()
 * corrects that from what the device is actually asked for.
 */
int swapslot_type_from_swaps(const char *text, const char *dev);

/*
 * The share (percent) of the swap in use, by /proc/swaps' Used column,
 * that lies on synchronous, CPU-bound devices: zram and pmem, whose reads
 * the kernel does in the faulting thread (swapon sets SWP_SYNCHRONOUS_IO
 * for bdev_synchronous() devices, mm/swapfile.c).  With nothing in use
 * yet, 100 when the highest-priority area (where swap-outs go first) is
 * one, else 0.  -1 when there is no swap area.
 */
int swapslot_sync_share(const char *text);
/* Whether the highest-priority swap area, where swap-outs go first, is on
 * such a device. */
bool swapslot_top_sync(const char *text);

/*
 * Evidence for the device's swap type: a fault read device slot dev_off
 * for a page whose pagemap entry, read earlier, was (type, offset).  When
 * offset == dev_off the page was on type.  Returns the type to use from
 * now on: cur, or a type that has at least SWAPSLOT_VOTES_SWITCH votes
 * while cur has none.
 */
#define SWAPSLOT_VOTES_SWITCH 8
struct swapslot_votes {
	uint32_t n[SWAPSLOT_TYPES];
};
int swapslot_vote(struct swapslot_votes *v, int cur, uint32_t type, uint64_t offset,
		  uint64_t dev_off);

/*
 * The slots of a window worth pushing to leap-swapd after process_madvise
 * has started the kernel's own reads: runs of at least min_run slots that
 * follow each other (each one above or below the last, in the window's
 * page order) are dropped, the rest kept in order.  process_madvise reads
 * a range of pages under one block plug (mm/madvise.c), so such a run
 * reaches the device as one request of many pages, which leap-swapd
 * fetches in one READ per server anyway: pushing it too only costs the
 * socket write and leap-swapd's demand-read skip.  Scattered slots (a
 * strided window) are a request each; pushed, they are fetched together.
 * Returns the new count.
 */
uint32_t swapslot_drop_runs(uint64_t *slots, uint32_t n, uint32_t min_run);

#endif
