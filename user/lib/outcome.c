// SPDX-License-Identifier: MIT
/* Whether a target's windows make it go faster (include/leap/outcome.h). */
#include <stdlib.h>
#include <string.h>

#include "leap/outcome.h"

void leap_outcome_params_default(struct leap_outcome_params *p)
{
	*p = (struct leap_outcome_params){
		.first_on_ns = LEAP_OUTCOME_DEFAULT_FIRST_ON_NS,
		.on_ns = LEAP_OUTCOME_DEFAULT_ON_NS,
		.on_max_ns = LEAP_OUTCOME_DEFAULT_ON_MAX_NS,
		.held_ns = LEAP_OUTCOME_DEFAULT_HELD_NS,
		.settle_ns = LEAP_OUTCOME_DEFAULT_SETTLE_NS,
		.ref_ns = LEAP_OUTCOME_DEFAULT_REF_NS,
		.min_pages = LEAP_OUTCOME_DEFAULT_MIN_PAGES,
		.min_window_pages = LEAP_OUTCOME_DEFAULT_MIN_WINDOW,
		.judged = LEAP_OUTCOME_DEFAULT_JUDGED,
		.gain_pct = LEAP_OUTCOME_DEFAULT_GAIN_PCT,
		.no_gain_pct = LEAP_OUTCOME_DEFAULT_NO_GAIN_PCT,
	};
}

bool leap_outcome_params_valid(const struct leap_outcome_params *p)
{
	return p->on_ns && p->first_on_ns >= p->on_ns && p->on_max_ns >= p->on_ns &&
	       p->held_ns && p->settle_ns && p->ref_ns &&
	       2 * p->ref_ns + p->settle_ns <= p->on_ns && p->judged % 2 &&
	       p->judged <= LEAP_OUTCOME_JUDGED_MAX &&
	       p->judged >= LEAP_OUTCOME_GAIN_RUN && p->gain_pct < p->no_gain_pct;
}

void leap_outcome_init(struct leap_outcome *o, const struct leap_outcome_params *p,
		       enum leap_outcome_start start)
{
	memset(o, 0, sizeof(*o));
	o->on_ns = p->on_ns;
	o->first = start == LEAP_OUTCOME_FIRST;
	o->need = start == LEAP_OUTCOME_RECHECK ? LEAP_OUTCOME_GAIN_RUN : p->judged;
}

static void enter(struct leap_outcome *o, enum leap_outcome_seg seg, uint64_t at,
		  uint64_t len)
{
	o->seg = seg;
	o->seg_start_ns = at;
	o->seg_end_ns = at + len;
	o->pages = 0;
	o->lead_pages = 0;
}

static void start_on(struct leap_outcome *o, const struct leap_outcome_params *p,
		     uint64_t at)
{
	o->window_pages = 0;
	enter(o, LEAP_OUTCOME_SETTLE, at, p->settle_ns);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* A new ratio: the verdict it makes. */
static enum leap_outcome_verdict
judge(struct leap_outcome *o, const struct leap_outcome_params *p, uint32_t ratio)
{
	uint32_t last[LEAP_OUTCOME_JUDGED_MAX], n, gains = 0;

	if (o->n_ratios == LEAP_OUTCOME_JUDGED_MAX)
		memmove(o->ratio_pct, o->ratio_pct + 1,
			(LEAP_OUTCOME_JUDGED_MAX - 1) * sizeof(*o->ratio_pct));
	else
		o->n_ratios++;
	o->ratio_pct[o->n_ratios - 1] = ratio;
	o->comparisons++;

	n = o->n_ratios < o->need ? o->n_ratios : o->need;
	memcpy(last, o->ratio_pct + o->n_ratios - n, n * sizeof(*last));
	for (uint32_t i = n > LEAP_OUTCOME_GAIN_RUN ? n - LEAP_OUTCOME_GAIN_RUN : 0;
	     i < n; i++)
		gains += last[i] <= p->gain_pct;
	qsort(last, n, sizeof(*last), cmp_u32);
	o->median_pct = last[n / 2];
	if (gains == LEAP_OUTCOME_GAIN_RUN)
		return LEAP_OUTCOME_GAIN;
	if (n == o->need && o->median_pct >= p->no_gain_pct)
		return LEAP_OUTCOME_NO_GAIN;
	return LEAP_OUTCOME_UNKNOWN;
}

/* Pages per second over the segment just ended at now; 0: too few. */
static uint64_t seg_rate(const struct leap_outcome *o,
			 const struct leap_outcome_params *p, uint64_t now)
{
	uint64_t ns = now - o->seg_start_ns;

	if (o->pages < p->min_pages || !ns)
		return 0;
	return o->pages * 1000000000ULL / ns;
}

/* The segment ended at now: the next one; whether it made a no-gain verdict. */
static bool close_seg(struct leap_outcome *o, const struct leap_outcome_params *p,
		      uint64_t now)
{
	uint64_t rate = seg_rate(o, p, now), at = o->seg_end_ns;
	enum leap_outcome_verdict v = LEAP_OUTCOME_UNKNOWN;
	bool compared = false;

	switch (o->seg) {
	case LEAP_OUTCOME_SETTLE:
		enter(o, LEAP_OUTCOME_HEAD, at, p->ref_ns);
		return false;
	case LEAP_OUTCOME_HEAD:
		if (o->tail_rate && o->held_rate && rate) {
			/* held / mean(tail, head), in percent */
			uint64_t r = o->held_rate * 200 / (o->tail_rate + rate);

			o->last_held_rate = o->held_rate;
			o->last_ref_rate = (o->tail_rate + rate) / 2;

			v = judge(o, p, r > 1000 ? 1000 : (uint32_t)r);
			compared = true;
		} else if (o->held_rate || o->tail_rate) {
			o->dropped++;
		}
		o->tail_rate = o->held_rate = 0;
		enter(o, LEAP_OUTCOME_BODY, at,
		      (o->first ? p->first_on_ns : o->on_ns) - p->settle_ns -
			      2 * p->ref_ns);
		break;
	case LEAP_OUTCOME_BODY:
		enter(o, LEAP_OUTCOME_TAIL, at, p->ref_ns);
		return false;
	case LEAP_OUTCOME_TAIL:
		o->first = false;
		/* Nothing to hold when the epoch issued (almost) no window. */
		if (rate && o->window_pages >= p->min_window_pages) {
			o->tail_rate = rate;
			o->held_epochs++;
			enter(o, LEAP_OUTCOME_HELD_SETTLE, at, p->settle_ns);
		} else {
			start_on(o, p, at);
		}
		return false;
	case LEAP_OUTCOME_HELD_SETTLE:
		enter(o, LEAP_OUTCOME_HELD, at, p->held_ns);
		return false;
	case LEAP_OUTCOME_HELD:
		/* Our lead outlasted the settle: not Linux alone (outcome.h). */
		if (rate && o->lead_pages * 100 > o->pages * LEAP_OUTCOME_LEAD_MAX_PCT) {
			o->lead_dropped++;
			rate = 0;
		}
		o->held_rate = rate;
		start_on(o, p, at);
		return false;
	}
	if (!compared)
		return false;
	o->verdict = v;
	if (v == LEAP_OUTCOME_GAIN)
		o->on_ns = o->on_ns * 2 > p->on_max_ns ? p->on_max_ns : o->on_ns * 2;
	return v == LEAP_OUTCOME_NO_GAIN;
}

bool leap_outcome_advance(struct leap_outcome *o, const struct leap_outcome_params *p,
			  uint64_t now_ns)
{
	bool no_gain = false;

	if (!o->seg_start_ns) {
		start_on(o, p, now_ns);
		return false;
	}
	if (now_ns < o->seg_end_ns)
		return false;
	/* Nothing seen for longer than a head or tail lasts past the
	 * segment's end: the target stopped swapping, or a tick found it
	 * idle.  What was being compared spans the gap: dropped, and a fresh
	 * on epoch.  (Shorter pauses, a service's between requests, are part
	 * of the rate it is measured at, held or not.) */
	if (now_ns - o->seg_end_ns > p->ref_ns) {
		if (o->tail_rate || o->held_rate)
			o->dropped++;
		o->tail_rate = o->held_rate = 0;
		start_on(o, p, now_ns);
		return false;
	}
	while (now_ns >= o->seg_end_ns && !no_gain)
		no_gain = close_seg(o, p, now_ns);
	return no_gain;
}

void leap_outcome_pages(struct leap_outcome *o, uint32_t n)
{
	o->pages += n;
}

void leap_outcome_lead_hit(struct leap_outcome *o, const struct leap_outcome_params *p,
			   uint64_t now_ns)
{
	uint64_t until = now_ns + p->settle_ns,
		 latest = o->seg_start_ns + LEAP_OUTCOME_LEAD_MAX_NS;

	if (o->seg == LEAP_OUTCOME_HELD)
		o->lead_pages++;
	if (o->seg != LEAP_OUTCOME_HELD_SETTLE)
		return;
	if (until > latest)
		until = latest;
	if (until > o->seg_end_ns)
		o->seg_end_ns = until;
}

void leap_outcome_window(struct leap_outcome *o, uint32_t n)
{
	o->window_pages += n;
}

bool leap_outcome_holding(const struct leap_outcome *o)
{
	return o->seg == LEAP_OUTCOME_HELD_SETTLE || o->seg == LEAP_OUTCOME_HELD;
}

const char *leap_outcome_verdict_name(enum leap_outcome_verdict v)
{
	return v == LEAP_OUTCOME_GAIN	   ? "gain"
	       : v == LEAP_OUTCOME_NO_GAIN ? "no gain"
					   : "not known";
}
