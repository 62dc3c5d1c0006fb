// SPDX-License-Identifier: MIT
/* Pagemap swap entries and swap types (see swapslot.h). */
#include <stdio.h>
#include <string.h>

#include "swapra.h"
#include "swapslot.h"

#define PM_SWAP		 (1ULL << 62)
#define PM_PRESENT	 (1ULL << 63)
#define PM_SWAP_TYPE_MSK 0x1fULL
#define PM_SWAP_OFF_SHFT 5
#define PM_PFN_MASK	 ((1ULL << 55) - 1)

bool swapslot_decode(uint64_t pm, uint32_t *type, uint64_t *offset)
{
	if (!(pm & PM_SWAP) || (pm & PM_PRESENT))
		return false;
	*type = (uint32_t)(pm & PM_SWAP_TYPE_MSK);
	*offset = (pm & PM_PFN_MASK) >> PM_SWAP_OFF_SHFT;
	return true;
}

int swapslot_type_from_swaps(const char *text, const char *dev)
{
	const char *line = text;
	int idx = -1; /* the header line comes first */

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		size_t dlen = strlen(dev);

		/* The name field ends at the first blank (spaces in names are
		 * printed as \040 by seq_file_path). */
		if (idx >= 0 && len > dlen && !strncmp(line, dev, dlen) &&
		    (line[dlen] == ' ' || line[dlen] == '\t'))
			return idx;
		if (len)
			idx++;
		line = nl ? nl + 1 : NULL;
	}
	return -1;
}

/* zram, brd and pmem: devices that swapon flags SWP_SYNCHRONOUS_IO
 * (swapra_dev_synchronous()), named in /proc/swaps as /dev/NAME. */
static bool sync_device(const char *name)
{
	return !strncmp(name, "/dev/", 5) && swapra_dev_synchronous(name + 5);
}

/* Walks /proc/swaps: the share in use on synchronous devices, and
 * whether the highest-priority area is one (-1 share: no area). */
static int sync_areas(const char *text, bool *top_sync)
{
	const char *line = strchr(text, '\n'); /* past the header */
	unsigned long long used_all = 0, used_sync = 0;
	long best_prio = 0;
	bool any = false;

	*top_sync = false;
	while (line && *++line) {
		char name[4096], type[32];
		unsigned long long size, used;
		long prio;

		if (sscanf(line, "%4095s %31s %llu %llu %ld", name, type, &size, &used,
			   &prio) == 5) {
			if (!any || prio > best_prio) {
				best_prio = prio;
				*top_sync = sync_device(name);
			}
			any = true;
			used_all += used;
			used_sync += sync_device(name) ? used : 0;
		}
		line = strchr(line, '\n');
	}
	if (!any)
		return -1;
	if (!used_all)
		return *top_sync ? 100 : 0;
	return (int)(used_sync * 100 / used_all);
}

int swapslot_sync_share(const char *text)
{
	bool top;

	return sync_areas(text, &top);
}

bool swapslot_top_sync(const char *text)
{
	bool top;

	sync_areas(text, &top);
	return top;
}

int swapslot_vote(struct swapslot_votes *v, int cur, uint32_t type, uint64_t offset,
		  uint64_t dev_off)
{
	if (type >= SWAPSLOT_TYPES || offset == 0 || offset != dev_off)
		return cur;
	if (v->n[type] < UINT32_MAX)
		v->n[type]++;
	if ((int)type != cur && v->n[type] >= SWAPSLOT_VOTES_SWITCH &&
	    (cur < 0 || cur >= SWAPSLOT_TYPES || v->n[cur] == 0))
		return (int)type;
	return cur;
}

uint32_t swapslot_drop_runs(uint64_t *slots, uint32_t n, uint32_t min_run)
{
	uint32_t k = 0;

	for (uint32_t i = 0, j; i < n; i = j) {
		/* The run starting at i: +1 or -1 per step, one direction. */
		int64_t dir = 0;

		for (j = i + 1; j < n; j++) {
			int64_t d = (int64_t)(slots[j] - slots[j - 1]);

			if ((d != 1 && d != -1) || (dir && d != dir))
				break;
			dir = d;
		}
		if (j - i >= min_run)
			continue;
		for (uint32_t x = i; x < j; x++)
			slots[k++] = slots[x];
	}
	return k;
}
