// SPDX-License-Identifier: MIT
/* Sweeps: a shared region read upwards by several processes (leap/sweep.h). */
#include <string.h>

#include "leap/engine.h"
#include "leap/sweep.h"

/* A sweep not accessed for this long starts again at its next access: its
 * readers are gone, or do something else now. */
#define SWEEP_IDLE_NS (1000ULL * 1000 * 1000)

void leap_sweep_params_default(struct leap_sweep_params *p)
{
	*p = (struct leap_sweep_params){
		/* PostgreSQL's parallel scan: three processes at three chunks
		 * of 64 pages, misses 2-4 pages apart in each (the kernel's
		 * clusters serve the rest): the next chunk's first miss lands
		 * up to ~130 pages past the front, the slowest reader up to
		 * ~200 behind it (a recording, docs/agent.md "Sweeps"). */
		.ahead = LEAP_DEFAULT_MAX_DELTA,
		.behind = 4 * LEAP_DEFAULT_MAX_DELTA,
		.pw_first = 32,
		.pw_max = LEAP_DEFAULT_PW_MAX,
		.ra_pages = 0,
		.readers_min = 2,
	};
}

static void restart(struct leap_sweep *s, uint64_t index)
{
	s->front = index;
	s->issued = 0;
	s->score = 0;
	s->pw = 0;
	memset(s->reader, 0, sizeof(s->reader));
	s->reader_at = 0;
}

void leap_sweep_init(struct leap_sweep *s, uint64_t region)
{
	memset(s, 0, sizeof(*s));
	s->region = region;
}

uint32_t leap_sweep_readers(const struct leap_sweep *s)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < LEAP_SWEEP_READERS; i++) {
		bool seen = false;

		if (!s->reader[i])
			continue;
		for (uint32_t j = 0; j < i && !seen; j++)
			seen = s->reader[j] == s->reader[i];
		n += !seen;
	}
	return n;
}

static bool near_front(const struct leap_sweep *s, const struct leap_sweep_params *p,
		       uint64_t index)
{
	return index >= s->front ? index - s->front <= p->ahead
				 : s->front - index <= p->behind;
}

void leap_sweep_access(struct leap_sweep *s, const struct leap_sweep_params *p,
		       uint32_t tgid, uint64_t index, uint64_t now_ns,
		       struct leap_sweep_step *out)
{
	uint64_t start, end;

	*out = (struct leap_sweep_step){0};
	if (!s->armed || now_ns - s->last_ns > SWEEP_IDLE_NS) {
		s->armed = true;
		restart(s, index);
	} else if (near_front(s, p, index)) {
		if (s->score < LEAP_SWEEP_SCORE)
			s->score++;
		if (index > s->front)
			s->front = index;
	} else {
		s->score -= 4;
		if (s->score <= 0) {
			s->restarts++;
			restart(s, index);
		}
	}
	s->last_ns = now_ns;
	s->reader[s->reader_at++ % LEAP_SWEEP_READERS] = tgid;
	if (s->score < LEAP_SWEEP_ON || leap_sweep_readers(s) < p->readers_min)
		return;
	out->sweeping = true;
	if (!s->pw)
		s->pw = p->pw_first;
	/* Renewed once half of the lead is gone, from past the kernel's
	 * reach: its cluster around a reader's miss is read by then. */
	start = s->front + p->ra_pages + 1;
	if (start < s->front || (s->issued > start && s->issued - start >= s->pw / 2))
		return;
	end = start + s->pw;
	if (end < start)
		return;
	if (s->issued > start)
		start = s->issued;
	if (end - start > LEAP_PW_LIMIT)
		end = start + LEAP_PW_LIMIT;
	out->first = start;
	out->n = (uint32_t)(end - start);
	s->issued = end;
	s->windows++;
	s->pages += out->n;
	if (s->pw < p->pw_max)
		s->pw = s->pw * 2 < p->pw_max ? s->pw * 2 : p->pw_max;
}

struct leap_sweep *leap_sweeps_get(struct leap_sweeps *t, uint64_t region)
{
	struct leap_sweep *oldest = &t->s[0];

	for (uint32_t i = 0; i < LEAP_SWEEP_REGIONS; i++) {
		struct leap_sweep *s = &t->s[i];

		if (s->region == region)
			return s;
		if (!s->region || (oldest->region && s->last_ns < oldest->last_ns))
			oldest = s;
	}
	leap_sweep_init(oldest, region);
	return oldest;
}
