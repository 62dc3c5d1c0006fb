// SPDX-License-Identifier: MIT
/*
 * Linux's swap readahead, modelled on mm/swap_state.c (read from the
 * kernel source; the rules, not the code):
 *  - linux:         swap_vma_readahead() / swap_vma_ra_win(), per VMA;
 *  - linux-cluster: swap_cluster_readahead() / swapin_nr_pages(), global;
 * both sizing the window with __swapin_nr_pages().  Hits are counted where
 * the kernel counts them, when a fault finds a PG_readahead page in the
 * swap cache (swap_update_readahead(), formerly lookup_swap_cache()).
 * The whole footprint of a process is one VMA.  Only pages whose PTE holds
 * a swap entry are read: footprint pages that are SWAPPED (pte_none pages
 * outside the footprint, resident and already cached pages are skipped).
 */
#include <stdlib.h>

#include "policy.h"

#define SWAP_RA_ORDER_CEILING 5	   /* 64-bit kernels */
#define SWAP_RA_HITS_MAX      63   /* SWAP_RA_HITS_MASK with 4 KiB pages */
#define PMD_PAGES	      512u /* 2 MiB / 4 KiB */
#define INITIAL_HITS	      4	   /* GET_SWAP_RA_VAL() and swapin_readahead_hits */

uint32_t sim_linux_nr_pages(uint64_t prev, uint64_t cur, uint32_t hits,
			    uint32_t max_pages, uint32_t prev_win)
{
	uint32_t pages = hits + 2;

	if (pages == 2) {
		/* No hits to judge by: only an adjacent fault keeps it alive. */
		if (cur != prev + 1 && cur != prev - 1)
			pages = 1;
	} else {
		uint32_t roundup = 4;

		while (roundup < pages)
			roundup <<= 1;
		pages = roundup;
	}
	if (pages > max_pages)
		pages = max_pages;
	if (pages < prev_win / 2)
		pages = prev_win / 2;
	return pages;
}

/* GET_SWAP_RA_VAL(): an all-zero readahead word reads as 4 hits. */
static void ra_load(struct sim_linux_ra *ra)
{
	if (ra->prev_page == 0 && ra->win == 0 && ra->hits == 0)
		ra->hits = INITIAL_HITS;
}

uint32_t sim_linux_vma_window(struct sim_linux_ra *ra, uint64_t page,
			      uint32_t page_cluster, uint64_t vma_start, uint64_t vma_end,
			      uint64_t *start, uint64_t *end)
{
	uint32_t order = page_cluster < SWAP_RA_ORDER_CEILING ? page_cluster
							      : SWAP_RA_ORDER_CEILING;
	uint32_t max_win = 1u << order, win;
	int64_t left, right, f = (int64_t)page;
	uint64_t pmd = page & ~(uint64_t)(PMD_PAGES - 1);

	*start = *end = page;
	if (max_win == 1)
		return 1;
	ra_load(ra);
	win = sim_linux_nr_pages(ra->prev_page, page, ra->hits, max_win, ra->win);
	/* Placement looks at the previous fault before it is overwritten. */
	if (page == ra->prev_page + 1)
		left = f; /* moving forward: read ahead */
	else if (ra->prev_page == page + 1)
		left = f - win + 1; /* moving backward: read behind */
	else
		left = f - (int64_t)(win - 1) / 2; /* no direction: centred */
	right = left + win;
	ra->prev_page = page;
	ra->win = win;
	ra->hits = 0;
	if (win == 1)
		return 1;
	if (left < 0)
		left = 0;
	*start = (uint64_t)left;
	if (*start < vma_start)
		*start = vma_start;
	if (*start < pmd)
		*start = pmd;
	*end = (uint64_t)right;
	if (*end > vma_end)
		*end = vma_end;
	if (*end > pmd + PMD_PAGES)
		*end = pmd + PMD_PAGES;
	return win;
}

void sim_linux_vma_hit(struct sim_linux_ra *ra, uint64_t page)
{
	ra_load(ra);
	if (ra->hits < SWAP_RA_HITS_MAX)
		ra->hits++;
	ra->prev_page = page;
}

/* ---- linux: VMA-based readahead, one state per process --------------- */

static int vma_init(struct sim_policy *p, const struct sim_trace *t)
{
	p->state = calloc(t->npids, sizeof(struct sim_linux_ra));
	return p->state ? 0 : -1;
}

static uint32_t vma_miss(struct sim_policy *p, const struct sim_fault *f,
			 const struct sim_mem *m, uint32_t *out, uint32_t cap)
{
	const struct sim_trace *t = p->trace;
	struct sim_linux_ra *ra = (struct sim_linux_ra *)p->state + f->pidx;
	uint32_t first = t->pid_first[f->pidx], last = t->pid_first[f->pidx + 1];
	uint64_t start, end;
	uint32_t n = 0, i;

	if (sim_linux_vma_window(ra, f->page, p->opts.page_cluster, t->pages[first].page,
				 t->pages[last - 1].page + 1, &start, &end) == 1)
		return 0;
	/* The window's pages are array neighbours of the fault. */
	for (i = f->pg; i > first && t->pages[i - 1].page >= start; i--)
		;
	for (; i < last && t->pages[i].page < end && n < cap; i++)
		if (i != f->pg && sim_mem_state(m, i) == SIM_SWAPPED)
			out[n++] = i;
	return n;
}

/* Swap readahead never reads on a hit: only do_swap_page misses call it. */
static uint32_t vma_hit(struct sim_policy *p, const struct sim_fault *f,
			const struct sim_mem *m, uint32_t *out, uint32_t cap)
{
	(void)m;
	(void)out;
	(void)cap;
	sim_linux_vma_hit((struct sim_linux_ra *)p->state + f->pidx, f->page);
	return 0;
}

static void free_state(struct sim_policy *p)
{
	free(p->state);
	p->state = NULL;
}

const struct sim_policy_ops sim_policy_linux_ops = {
	.init = vma_init,
	.miss = vma_miss,
	.hit = vma_hit,
	.fini = free_state,
};

/* ---- linux-cluster: swap-slot neighbours, global state ---------------- */

/* swapin_nr_pages()'s statics and swapin_readahead_hits. */
struct cluster_state {
	uint64_t prev_offset;
	uint32_t last_pages;
	uint32_t hits;
};

static int cluster_init(struct sim_policy *p, const struct sim_trace *t)
{
	struct cluster_state *c = calloc(1, sizeof(*c));

	(void)t;
	if (!c)
		return -1;
	c->hits = INITIAL_HITS;
	p->state = c;
	p->needs_slots = true;
	return 0;
}

static uint32_t cluster_miss(struct sim_policy *p, const struct sim_fault *f,
			     const struct sim_mem *m, uint32_t *out, uint32_t cap)
{
	struct cluster_state *c = p->state;
	uint32_t max_pages, pages, hits, n = 0;
	uint64_t off = sim_mem_slot(m, f->pg), mask, start, end;

	if (p->opts.page_cluster >= 31)
		return 0;
	max_pages = 1u << p->opts.page_cluster;
	if (max_pages <= 1 || off == 0)
		return 0;
	hits = c->hits;
	c->hits = 0;
	pages = sim_linux_nr_pages(c->prev_offset, off, hits, max_pages, c->last_pages);
	if (!hits)
		c->prev_offset = off;
	c->last_pages = pages;
	mask = pages - 1;
	if (!mask)
		return 0;
	/* An aligned block of slots around the faulting one. */
	start = off & ~mask;
	end = off | mask;
	if (!start) /* slot 0 is the swap header */
		start = 1;
	if (end > m->nslots)
		end = m->nslots;
	for (uint64_t s = start; s <= end && n < cap; s++) {
		uint32_t pg = sim_mem_page_at(m, (uint32_t)s);

		if (s != off && pg != SIM_NONE && sim_mem_state(m, pg) == SIM_SWAPPED)
			out[n++] = pg;
	}
	return n;
}

static uint32_t cluster_hit(struct sim_policy *p, const struct sim_fault *f,
			    const struct sim_mem *m, uint32_t *out, uint32_t cap)
{
	(void)f;
	(void)m;
	(void)out;
	(void)cap;
	((struct cluster_state *)p->state)->hits++;
	return 0;
}

const struct sim_policy_ops sim_policy_linux_cluster_ops = {
	.init = cluster_init,
	.miss = cluster_miss,
	.hit = cluster_hit,
	.fini = free_state,
};
