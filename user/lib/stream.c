// SPDX-License-Identifier: MIT
/* One access stream: history, window and the trend it last saw. */
#include <string.h>

#include "leap/engine.h"

void leap_stream_init(struct leap_stream *s, int64_t *storage, uint32_t capacity)
{
	memset(s, 0, sizeof(*s));
	s->hist_capacity = capacity;
	leap_history_init(&s->hist, storage, capacity);
}

void leap_stream_reset(struct leap_stream *s, uint32_t hsize)
{
	if (hsize > s->hist_capacity)
		hsize = s->hist_capacity;
	leap_history_init(&s->hist, s->hist.delta, hsize);
	s->win.chit = 0;
	s->win.pw_prev = 0;
	s->latest_trend = 0;
	s->has_latest = false;
	s->since_trend = 0;
	s->has_anchor = false;
	s->ra_armed = false;
	s->behind.armed = false;
	s->kra_trust = 0;
	s->lead = 0;
}

/* Remembers a strided window so a hit on its first page can extend it. */
static void arm_lookahead(struct leap_stream *s, const struct leap_params *p,
			  const uint64_t *out, uint32_t n, int64_t stride, int64_t fine)
{
	s->ra_armed = p->flavor == LEAP_FLAVOR_OURS && n > 0 && stride != 0;
	s->ra_period = 0;
	if (!s->ra_armed)
		return;
	s->ra_marker = out[0];
	s->ra_last = out[n - 1];
	s->ra_stride = stride;
	s->ra_fine = fine;
}

/* The same for a window along a nested stride; phase: the index of the
 * delta after out[n - 1]. */
static void arm_periodic(struct leap_stream *s, const uint64_t *out, uint32_t n,
			 const int64_t *deltas, uint32_t period, uint32_t phase)
{
	s->ra_armed = n > 0;
	s->ra_period = period;
	if (!s->ra_armed)
		return;
	s->ra_marker = out[0];
	s->ra_last = out[n - 1];
	s->ra_stride = 0;
	s->ra_phase = phase;
	if (deltas != s->ra_deltas)
		memcpy(s->ra_deltas, deltas, period * sizeof(*deltas));
}

/* Whether pt lies within the newest window along a nested stride. */
static bool in_flight_periodic(const struct leap_stream *s, uint64_t pt)
{
	uint64_t lo = s->ra_marker < s->ra_last ? s->ra_marker : s->ra_last;
	uint64_t hi = s->ra_marker < s->ra_last ? s->ra_last : s->ra_marker;

	return s->ra_armed && s->ra_period > 0 && pt >= lo && pt <= hi;
}

/* A window of pw pages along a nested stride from page `from`, whose next
 * delta is deltas[phase]; armed for look-ahead. */
static uint32_t periodic_window(struct leap_stream *s, uint64_t from, uint32_t phase,
				const int64_t *deltas, uint32_t period, uint32_t pw,
				uint64_t *out, uint32_t cap)
{
	uint32_t n = leap_candidates_periodic(from, pw, deltas, period, &phase, out, cap);

	s->stats.prefetched += n;
	s->stats.periodic++;
	arm_periodic(s, out, n, deltas, period, phase);
	return n;
}

/* The window in flight goes on (look-ahead, or a late prefetch's miss in
 * it): the next pw pages beyond it. */
static uint32_t periodic_continue(struct leap_stream *s, uint32_t pw, uint64_t *out,
				  uint32_t cap)
{
	return periodic_window(s, s->ra_last, s->ra_phase, s->ra_deltas, s->ra_period, pw,
			       out, cap);
}

/* Whether pt lies in the newest strided window, on its stride (OURS). */
static bool in_flight(const struct leap_stream *s, const struct leap_params *p,
		      uint64_t pt, bool has_trend, int64_t trend)
{
	uint64_t lo, hi, mag;

	if (p->flavor != LEAP_FLAVOR_OURS || !s->ra_armed || !has_trend ||
	    trend != s->ra_stride)
		return false;
	lo = trend > 0 ? s->ra_marker : s->ra_last;
	hi = trend > 0 ? s->ra_last : s->ra_marker;
	mag = trend > 0 ? (uint64_t)trend : (uint64_t)0 - (uint64_t)trend;
	/* A fine stride's pages are not whole steps apart. */
	return pt >= lo && pt <= hi && (s->ra_fine || (pt - lo) % mag == 0);
}

/* A hit on the marker: the next window along the same stride or period. */
static uint32_t lookahead(struct leap_stream *s, const struct leap_params *p,
			  uint64_t *out, uint32_t cap, struct leap_decision *d)
{
	uint32_t pw = leap_window_next(&s->win, p, true);
	uint32_t n;

	d->periodic = s->ra_period > 0;
	if (d->periodic) {
		n = periodic_continue(s, pw, out, cap);
	} else {
		n = s->ra_fine
			    ? leap_candidates_fine(s->ra_last, pw, s->ra_fine, out, cap)
			    : leap_candidates(s->ra_last, pw, true, s->ra_stride, false,
					      0, out, cap);
		s->stats.prefetched += n;
		arm_lookahead(s, p, out, n, s->ra_stride, s->ra_fine);
	}
	d->window = pw;
	d->count = n;
	d->lookahead = true;
	s->stats.lookaheads++;
	return n;
}

/* page + lead * trend, or page where that leaves the page numbers. */
static uint64_t ahead(uint64_t page, int64_t trend, uint32_t lead)
{
	uint64_t from;

	return leap_stride_step(page, trend, lead, &from) ? from : page;
}

/* The same along a stride with a fraction (leap_stride_fine()), which
 * leads LEAP_LEAD_FINE_MAX steps at most (engine.h). */
static uint64_t ahead_fine(uint64_t page, int64_t fine, uint32_t lead)
{
	uint64_t from;

	if (lead > LEAP_LEAD_FINE_MAX)
		lead = LEAP_LEAD_FINE_MAX;
	return leap_fine_step(page, fine, lead, &from) ? from : page;
}

void leap_stream_late(struct leap_stream *s, const struct leap_params *p)
{
	uint32_t lead_max;

	if (p->flavor != LEAP_FLAVOR_OURS)
		return;
	s->stats.late++;
	/* Some pages of the windows came in time: the distance is right. */
	if (s->win.chit)
		return;
	/* None did: keep the window's size, and move it further out. */
	s->win.chit = s->win.pw_prev ? s->win.pw_prev : 1;
	lead_max = p->pw_max < LEAP_LEAD_MAX ? p->pw_max : LEAP_LEAD_MAX;
	s->lead = s->lead >= lead_max / 2 ? lead_max : (s->lead ? 2 * s->lead : 1);
}

void leap_stream_add_hits(struct leap_stream *s, uint32_t n)
{
	s->win.chit += n;
}

/* A reloaded policy with another Hsize starts the stream afresh; the
 * storage was sized for the table's largest Hsize. */
static void fit_hsize(struct leap_stream *s, const struct leap_params *p)
{
	uint32_t hsize = p->hsize < s->hist_capacity ? p->hsize : s->hist_capacity;

	if (s->hist.size != hsize)
		leap_stream_reset(s, hsize);
}

/*
 * One access; skip > 0 only from leap_stream_access_after_ra(): a miss's
 * window on a unit trend starts skip pages beyond pt.  around: whether a
 * miss with no trend (found or latest) may get a window around pt.
 */
static uint32_t stream_access(struct leap_stream *s, const struct leap_params *p,
			      uint64_t pt, bool hit, uint64_t skip, bool around,
			      uint64_t *out, uint32_t cap, struct leap_decision *dec)
{
	struct leap_decision d = {0};
	int64_t period_deltas[LEAP_PERIOD_MAX], fine = 0;
	uint32_t period = 0;
	uint64_t prev;
	bool had_prev, follows;

	prev = s->hist.last_page;
	had_prev = s->hist.has_last;
	leap_history_push(&s->hist, pt);
	s->stats.accesses++;
	if (hit) {
		s->stats.hits++;
		s->win.chit++;
		/* Only trend pages (or pages around a miss) were prefetched. */
		s->anchor = pt;
		s->has_anchor = true;
		if (s->ra_armed && pt == s->ra_marker && p->flavor == LEAP_FLAVOR_OURS)
			lookahead(s, p, out, cap, &d);
		if (dec)
			*dec = d;
		return d.count;
	}
	s->stats.misses++;

	/* DOPREFETCH(Pt) */
	d.ran = true;
	d.trend_found = leap_find_trend(&s->hist, p, &d.trend, NULL);
	if (d.trend_found) {
		s->latest_trend = d.trend;
		s->has_latest = true;
		s->since_trend = 0;
		s->stats.trends++;
		if (p->flavor == LEAP_FLAVOR_OURS)
			fine = leap_stride_fine(&s->hist, d.trend);
	} else if (p->flavor == LEAP_FLAVOR_OURS && s->has_latest &&
		   ++s->since_trend >= LEAP_LATEST_TTL) {
		/* A trend not seen for this many misses is gone (engine.h). */
		s->has_latest = false;
	}
	follows = had_prev && s->has_latest && (int64_t)(pt - prev) == s->latest_trend;
	if (p->flavor == LEAP_FLAVOR_OURS) {
		/* A nested stride: each of its deltas follows it. */
		period = leap_find_period(&s->hist, p, period_deltas);
		/* Noise between two trend pages must not break the trend. */
		follows = follows || period > 0 ||
			  (s->has_anchor && s->has_latest &&
			   (int64_t)(pt - s->anchor) == s->latest_trend);
		if (follows || !d.trend_found || !s->has_anchor) {
			s->anchor = pt;
			s->has_anchor = true;
		} else if (s->win.chit > 0) {
			/* Off a trend that is paying off: record, do not prefetch. */
			s->stats.offtrend++;
			d.window = 0;
			if (dec)
				*dec = d;
			return 0;
		}
	}
	d.window = leap_window_next(&s->win, p, follows);
	if (d.window == 0) {
		s->stats.suspended++;
	} else if (!around && !d.trend_found && period == 0 &&
		   !(s->has_latest && s->latest_trend != 0)) {
		/* d.count stays 0: arm_lookahead() below disarms. */
		d.around_left = true;
		s->stats.around_left++;
	} else if (period > 0) {
		d.count = in_flight_periodic(s, pt)
				  ? periodic_continue(s, d.window, out, cap)
				  : periodic_window(s, pt, 0, period_deltas, period,
						    d.window, out, cap);
		d.periodic = true;
		if (dec)
			*dec = d;
		return d.count;
	} else {
		/* A miss inside the window already in flight (the prefetch was
		 * late, not wrong): its pages are requested, go on beyond it. */
		bool going_on = in_flight(s, p, pt, d.trend_found, d.trend);
		uint64_t from = pt;

		if (d.trend_found && (d.trend == 1 || d.trend == -1))
			from = d.trend > 0 ? pt + skip : pt - (skip < pt ? skip : pt);
		/* The lead counts from the fault; a window in flight that
		 * reaches further goes on from its end (no gap). */
		if (fine)
			from = ahead_fine(from, fine, s->lead);
		else if (d.trend_found)
			from = ahead(from, d.trend, s->lead);
		if (going_on && (d.trend > 0 ? s->ra_last > from : s->ra_last < from))
			from = s->ra_last;

		d.count =
			fine ? leap_candidates_fine(from, d.window, fine, out, cap)
			     : leap_candidates(from, d.window, d.trend_found, d.trend,
					       s->has_latest, s->latest_trend, out, cap);
		s->stats.prefetched += d.count;
	}
	/* Only strided windows are extended; "around Pt" ones are not. */
	arm_lookahead(s, p, out, d.count,
		      d.trend_found ? d.trend : (s->has_latest ? s->latest_trend : 0),
		      fine);
	if (dec)
		*dec = d;
	return d.count;
}

uint32_t leap_stream_access(struct leap_stream *s, const struct leap_params *p,
			    uint64_t pt, bool hit, uint64_t *out, uint32_t cap,
			    struct leap_decision *dec)
{
	fit_hsize(s, p);
	return stream_access(s, p, pt, hit, 0, true, out, cap, dec);
}

uint32_t leap_stream_access_kra(struct leap_stream *s, const struct leap_params *p,
				uint64_t pt, bool hit, uint64_t *out, uint32_t cap,
				struct leap_decision *dec)
{
	fit_hsize(s, p);
	return stream_access(s, p, pt, hit, 0, false, out, cap, dec);
}

uint32_t leap_stream_access_after_ra(struct leap_stream *s, const struct leap_params *p,
				     uint64_t pt, uint64_t skip, uint64_t *out,
				     uint32_t cap, struct leap_decision *dec)
{
	uint64_t prev, gap;
	uint32_t n;

	fit_hsize(s, p);
	if (!s->hist.has_last || s->hist.last_page == pt)
		return stream_access(s, p, pt, false, 0, false, out, cap, dec);
	prev = s->hist.last_page;
	gap = pt > prev ? pt - prev : prev - pt;
	/* The gap pages were accesses, in order; more than a history's worth
	 * would only push out the same delta again. */
	for (uint64_t i = gap > s->hist.size ? gap - s->hist.size : 1; i < gap; i++)
		leap_history_push(&s->hist, pt > prev ? pt - gap + i : pt + gap - i);
	/* A prefetcher (the kernel's) served them: they count towards Chit. */
	leap_stream_add_hits(s, gap - 1 > UINT32_MAX ? UINT32_MAX : (uint32_t)(gap - 1));
	/*
	 * Each such miss means the program caught up with our windows: the
	 * window at least doubles (GETPREFETCHWINDOWSIZE keeps PWprev / 2).
	 * Chit alone would restart it from the few pages the kernel read,
	 * far fewer than the program goes through while a window is fetched.
	 */
	s->win.pw_prev = s->win.pw_prev >= p->pw_max ? 2 * p->pw_max : 4 * s->win.pw_prev;
	n = stream_access(s, p, pt, false, skip, false, out, cap, dec);
	/* The program goes through the pages the kernel reads now before it
	 * reaches our marker: hits of a prefetcher, as above. */
	leap_stream_add_hits(s, skip > UINT32_MAX ? UINT32_MAX : (uint32_t)skip);
	return n;
}

void leap_stream_wasted(struct leap_stream *s)
{
	s->win.chit /= 2;
	s->win.pw_prev /= 2;
	s->lead /= 2; /* too far ahead for the memory the windows land in */
	s->stats.wasted++;
}
