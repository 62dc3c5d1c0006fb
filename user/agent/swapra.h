/* SPDX-License-Identifier: MIT */
/*
 * Which swap readahead the kernel does on a swap-in miss: the baseline that
 * leap is measured against, and the reach that leap's windows go past.
 * mm/swap_state.c swapin_readahead() reads the faulting page's neighbours
 * in the address space (swap_vma_readahead()) only while
 * /sys/kernel/mm/swap/vma_ra_enabled is true and no swap area on a
 * rotational device is on (swap_use_vma_readahead(): !nr_rotate_swap,
 * counted at swapon from the area's block device, a swap file's being its
 * filesystem's: mm/swapfile.c).  Otherwise it reads the slot's neighbours
 * on the swap device (swap_cluster_readahead()), which follow the address
 * space only as far as pages went out in address order.  A virtio disk
 * says it is rotational unless its host says otherwise, so a VM's swap
 * file often gets slot clusters.  vm.page-cluster 0 turns both off.
 * Neither runs for an area on a synchronous device (zram, brd, pmem:
 * BLK_FEAT_SYNCHRONOUS, SWP_SYNCHRONOUS_IO at swapon): do_swap_page()
 * (mm/memory.c) reads a page that only one mapping holds straight into a
 * new folio, past the swap cache and its readahead.
 */
#ifndef LEAP_AGENT_SWAPRA_H
#define LEAP_AGENT_SWAPRA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum swapra_kind { SWAPRA_OFF, SWAPRA_VMA, SWAPRA_CLUSTER };

struct swapra {
	enum swapra_kind kind;
	uint32_t max_pages;    /* swapra_max_pages() */
	char rotational[256];  /* the first rotational swap area on, "" if none */
	char synchronous[256]; /* the first area on a synchronous device, "" if none */
	int areas;	       /* swap areas on */
	int synchronous_areas; /* ... of them on synchronous devices */
};

/* The kernel's choice, from vm.page-cluster, vma_ra_enabled and whether a
 * rotational swap area is on. */
enum swapra_kind swapra_kind_of(int page_cluster, bool vma_ra_enabled,
				bool rotational_on);

/* The most pages one readahead of that kind reads at that page-cluster:
 * 1 << page-cluster, capped at 32 for VMA-based readahead; 0 when off. */
uint32_t swapra_max_pages(enum swapra_kind kind, int page_cluster);

/*
 * Whether the block device of that kernel name (zram0, sda1) is one whose
 * driver sets BLK_FEAT_SYNCHRONOUS: zram, brd (ram0) and pmem.  sysfs does
 * not show the flag, so the drivers are known by their devices' names.
 */
bool swapra_dev_synchronous(const char *name);

/* vm.page-cluster; 0 when unreadable. */
int swapra_page_cluster(void);

/*
 * The path of the nth swap area (0 = first) in the text of /proc/swaps
 * into out, its octal escapes (\040 for a space, as seq_file_path()
 * writes them) undone; false when there is no nth area.
 */
bool swapra_area_path(const char *swaps_text, int nth, char *out, size_t len);

/* Reads the kernel's settings and the swap areas' devices. */
void swapra_probe(struct swapra *out);

/* One line for `leap-agent status`, e.g. "swap-slot clusters, up to 8
 * pages (rotational swap area /var/swap)". */
void swapra_describe(const struct swapra *ra, char *out, size_t len);

#endif
