// SPDX-License-Identifier: MIT
/* Whether prefetching pays, per target (include/leap/cost.h). */
#include <stdio.h>
#include <string.h>

#include "leap/cost.h"

void leap_cost_params_default(struct leap_cost_params *p)
{
	p->min_misses = LEAP_COST_DEFAULT_MIN_MISSES;
	p->min_events = LEAP_COST_DEFAULT_MIN_EVENTS;
	p->probe_first_ns = LEAP_COST_DEFAULT_PROBE_NS;
	p->probe_max_ns = LEAP_COST_DEFAULT_PROBE_MAX;
	p->idle_ratio = LEAP_COST_DEFAULT_IDLE_RATIO;
	p->idle_reads = LEAP_COST_DEFAULT_IDLE_READS;
}

void leap_cost_init(struct leap_cost *c, const struct leap_cost_params *p)
{
	memset(c, 0, sizeof(*c));
	c->interval_ns = p->probe_first_ns;
}

void leap_cost_miss(struct leap_cost *c, uint64_t ns, bool blocked, bool read)
{
	c->s.misses++;
	c->s.miss_ns += ns;
	c->s.blocked += blocked;
	c->s.reads += read;
}

void leap_cost_hit(struct leap_cost *c, uint64_t ns)
{
	c->s.hits++;
	c->s.hit_ns += ns;
}

void leap_cost_spent(struct leap_cost *c, uint32_t pages, uint64_t ns)
{
	c->s.pages += pages;
	c->s.page_ns += ns;
}

void leap_cost_planned(struct leap_cost *c, uint32_t pages)
{
	c->s.planned += pages;
}

const char *leap_cost_state_name(enum leap_cost_state s)
{
	return s == LEAP_COST_STANDBY ? "standing down" : "prefetching";
}

static double us(uint64_t ns)
{
	return (double)ns / 1000.0;
}

static void stand_down(struct leap_cost *c, const struct leap_cost_params *p,
		       uint64_t now_ns)
{
	/* Again after a probe: the next one waits twice as long. */
	if (c->streak++)
		c->interval_ns = c->interval_ns * 2 > p->probe_max_ns
					 ? p->probe_max_ns
					 : c->interval_ns * 2;
	c->state = LEAP_COST_STANDBY;
	c->probe_at_ns = now_ns + c->interval_ns;
	c->stand_downs++;
}

void leap_cost_stand_down(struct leap_cost *c, uint64_t now_ns, uint64_t interval_ns,
			  const char *why)
{
	snprintf(c->why, sizeof(c->why), "%s", why);
	memset(&c->s, 0, sizeof(c->s));
	c->idle_reads = c->idle_pages = 0;
	c->state = LEAP_COST_STANDBY;
	c->interval_ns = interval_ns; /* for reports; a prefetch verdict resets it */
	c->probe_at_ns = now_ns + interval_ns;
	c->stand_downs++;
}

/* The sample's verdict: stand down, or go on prefetching. */
static void verdict(struct leap_cost *c, const struct leap_cost_params *p,
		    uint64_t now_ns, const struct leap_cost_swap *swap)
{
	const struct leap_cost_sample *s = &c->s;
	bool judged;

	c->miss_ns = s->miss_ns / s->misses;
	if (s->hits)
		c->hit_ns = s->hit_ns / s->hits;
	if (s->pages)
		c->page_ns = s->page_ns / s->pages;
	c->hits_seen += s->hits;
	c->pages_seen += s->pages;
	/* Too few prefetched pages to say how many are used. */
	judged = c->pages_seen >= LEAP_COST_JUDGED_PAGES;
	c->accuracy_pct =
		judged ? (uint32_t)(c->hits_seen >= c->pages_seen
					    ? 100
					    : (c->hits_seen * 100 + c->pages_seen / 2) /
						      c->pages_seen)
		       : 0;
	c->hits_seen /= 2;
	c->pages_seen /= 2;
	c->misses_seen += s->misses;
	c->blocked_seen += s->blocked;
	c->blocked_pct = (uint32_t)(c->blocked_seen * 100 / c->misses_seen);
	c->misses_seen /= 2;
	c->blocked_seen /= 2;
	/* Judged over samples in a row holding idle_reads page-ins, not
	 * each alone: a sample holds as few as min_events page-ins, and one
	 * page issued for 55 of them (a chance window of random access) is
	 * more than one per 100. */
	c->idle_reads += s->reads;
	c->idle_pages += s->planned;
	if (c->idle_reads >= p->idle_reads &&
	    c->idle_pages * p->idle_ratio >= c->idle_reads)
		c->idle_reads = c->idle_pages = 0;
	if (c->idle_reads >= p->idle_reads) {
		snprintf(c->why, sizeof(c->why),
			 "nothing to add: windows of %llu page%s for %llu page-ins of "
			 "read streams (Linux's readahead, or nothing, serves them)",
			 (unsigned long long)c->idle_pages, c->idle_pages == 1 ? "" : "s",
			 (unsigned long long)c->idle_reads);
		c->idle_reads = c->idle_pages = 0;
		stand_down(c, p, now_ns);
		return;
	}
	if (swap->sync_pct >= LEAP_COST_SYNC_PCT ||
	    (swap->top_sync && c->blocked_pct <= LEAP_COST_MAX_BLOCKED_PCT)) {
		snprintf(c->why, sizeof(c->why),
			 "zram or pmem holds %d%% of the swap in use and is %sfirst in "
			 "line: page-ins of %.1f us, %u%% of them waiting for I/O, are "
			 "CPU work a prefetch cannot hide",
			 swap->sync_pct, swap->top_sync ? "" : "not ", us(c->miss_ns),
			 c->blocked_pct);
		stand_down(c, p, now_ns);
		return;
	}
	{
		int n = snprintf(c->why, sizeof(c->why),
				 "page-ins of %.1f us, %u%% of them waiting for I/O: a "
				 "prefetch hides the wait (prefetched pages %.1f us each",
				 us(c->miss_ns), c->blocked_pct, us(c->page_ns));

		if (n > 0 && (size_t)n < sizeof(c->why))
			snprintf(c->why + n, sizeof(c->why) - (size_t)n,
				 judged ? ", %u%% used)" : ")", c->accuracy_pct);
	}
	c->interval_ns = p->probe_first_ns;
	c->streak = 0;
}

bool leap_cost_update(struct leap_cost *c, const struct leap_cost_params *p,
		      uint64_t now_ns, const struct leap_cost_swap *swap)
{
	enum leap_cost_state was = c->state;

	if (c->state == LEAP_COST_STANDBY) {
		if (now_ns < c->probe_at_ns)
			return false;
		c->state = LEAP_COST_PREFETCH;
		c->probes++;
		memset(&c->s, 0, sizeof(c->s));
		return true;
	}
	/* On zram or pmem one page-in says enough: the device decides. */
	if ((swap->sync_pct < LEAP_COST_SYNC_PCT || !c->s.misses) &&
	    (c->s.misses < p->min_misses || c->s.misses + c->s.hits < p->min_events))
		return false;
	verdict(c, p, now_ns, swap);
	memset(&c->s, 0, sizeof(c->s));
	return c->state != was;
}
