/* SPDX-License-Identifier: MIT */
/*
 * Whether a target's windows make it go faster, judged by its outcome
 * rather than by a proxy.  The cost model (cost.h) stands down where its
 * proxies say a prefetch cannot pay (zram, nothing to add); a target with
 * well-used windows can still run slower with them than without (an SQLite
 * reverse scan: 96% of 175,870 prefetched pages used, the query 3.28 s
 * against Linux's 2.57 s, issue 48).  So, while a target prefetches, its
 * windows are now and then held for a short epoch (Linux's own readahead
 * only) and the rate at which it consumes swapped pages (page-ins, hits,
 * swap-cache hits: every swap access it makes) in the held epoch is
 * compared with the rate just before and just after it, windows on.  On
 * the tracepoint path a swap-cache hit not ours sends no event, so a
 * stream the kernel's readahead serves counts its misses held and its
 * misses plus our hits with windows: the ratio flatters the windows
 * (Node.js's collector, docs/bench-real.md).  With the agent's
 * --swap-cache-hits (core config outcome_swap_cache) the events carry the
 * target's count of those hits (leap_event.swap_cache_hits) and the
 * caller adds its advance (core.c, consumed()); off by default
 * (docs/agent.md, "Judged by the outcome", says why):
 *
 *   on:   settle | head | body | tail       held: settle | held
 *                  ^^^^          ^^^^                      ^^^^
 *   ratio = held / mean(tail before, head after)
 *
 * A program whose windows help consumes its pages faster with them (a
 * strided scan 2-4x: ratio 25-50%); one they do not help runs as fast
 * without them (ratio ~100%), or faster (above 100%).  The rate is the
 * program's progress through its swapped data, counted from its own faults:
 * a window that is not used adds nothing to it, and work the windows cause
 * the program (reclaim, TLB flushes, CPU time taken from it) lowers it.
 * Memory stall alone would not do: it fell by half in the reverse scan that
 * ran slower.  The settle time at each switch keeps the windows in flight
 * (and the ramp-up after a held epoch) out of the comparison; a segment
 * with too few pages (the program was not swapping), or a gap in the
 * events past a segment's end longer than ref_ns, drops the comparison at
 * hand.
 *
 * Verdict: gain when the last LEAP_OUTCOME_GAIN_RUN ratios are all at most
 * gain_pct (then the on epochs double, up to on_max_ns, so a program that
 * gains pays less and less for being asked); no gain when the median of the
 * last `judged` ratios is at least no_gain_pct (the caller stands down and
 * probes later, cost.h).  In between: not known, keep asking.
 *
 * Pure: time is the caller's (the events' and the ticks' clock).
 */
#ifndef LEAP_OUTCOME_H
#define LEAP_OUTCOME_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LEAP_OUTCOME_JUDGED_MAX 15u /* ratios kept */
#define LEAP_OUTCOME_GAIN_RUN	3u  /* ratios in a row that say "gain" */

/* A held epoch's settle, stretched by our windows' lead, ends by this
 * long after the hold began (leap_outcome_lead_hit()). */
#define LEAP_OUTCOME_LEAD_MAX_NS (250ULL * 1000 * 1000)
/*
 * A held epoch whose pages were more than this share (percent) of hits on
 * our pages, the lead outlasting the settle's cap, did not measure Linux
 * alone: the comparison is dropped.  Hits cost the program next to no
 * time, so a share s of them raises the held rate by up to 1 / (1 - s):
 * 10% by 11%, about the width between gain_pct and no_gain_pct (85, 97),
 * the most a held epoch may be off and still land on the right side.
 * (An SQLite reverse scan, 2026-12-01: 1,014 hits on ours of ~2,860 pages
 * in one held epoch after the cap, read as 120% where the epochs without
 * them read 50-105%; clean held epochs there had 0.1-2%.)
 */
#define LEAP_OUTCOME_LEAD_MAX_PCT 10u

enum leap_outcome_verdict {
	LEAP_OUTCOME_UNKNOWN = 0, /* too few comparisons, or in between */
	LEAP_OUTCOME_GAIN,	  /* held epochs ran clearly slower */
	LEAP_OUTCOME_NO_GAIN,	  /* ... not slower: the windows do not pay */
};

/* Where in the cycle (the diagram above). */
enum leap_outcome_seg {
	LEAP_OUTCOME_SETTLE = 0,
	LEAP_OUTCOME_HEAD,
	LEAP_OUTCOME_BODY,
	LEAP_OUTCOME_TAIL,
	LEAP_OUTCOME_HELD_SETTLE,
	LEAP_OUTCOME_HELD,
};

struct leap_outcome_params {
	/* A target's first on epoch, from its first swap access: a program
	 * that swaps for less than this is never held (a held epoch costs a
	 * program that gains; one this short has little to lose). */
	uint64_t first_on_ns;
	uint64_t on_ns;	    /* an on epoch at first (after a probe: at once) */
	uint64_t on_max_ns; /* ... doubling up to this while windows pay */
	uint64_t held_ns;   /* a held epoch's measured part */
	uint64_t settle_ns; /* not measured after each switch */
	uint64_t ref_ns;    /* head and tail: the held epoch's references */
	uint32_t min_pages; /* a measured segment counts with this many */
	/* an on epoch is worth holding when it issued this many pages */
	uint32_t min_window_pages;
	uint32_t judged;      /* ratios a no-gain verdict reads (odd, <= max) */
	uint32_t gain_pct;    /* ratio at most this: the windows pay */
	uint32_t no_gain_pct; /* median at least this: they do not */
};

/* Chosen in docs/agent.md, "Judged by the outcome". */
#define LEAP_OUTCOME_DEFAULT_FIRST_ON_NS (4000ULL * 1000 * 1000)
#define LEAP_OUTCOME_DEFAULT_ON_NS	 (1000ULL * 1000 * 1000)
#define LEAP_OUTCOME_DEFAULT_ON_MAX_NS	 (16000ULL * 1000 * 1000)
#define LEAP_OUTCOME_DEFAULT_HELD_NS	 (50ULL * 1000 * 1000)
#define LEAP_OUTCOME_DEFAULT_SETTLE_NS	 (10ULL * 1000 * 1000)
#define LEAP_OUTCOME_DEFAULT_REF_NS	 (100ULL * 1000 * 1000)
#define LEAP_OUTCOME_DEFAULT_MIN_PAGES	 64u
#define LEAP_OUTCOME_DEFAULT_MIN_WINDOW	 64u
#define LEAP_OUTCOME_DEFAULT_JUDGED	 5u
#define LEAP_OUTCOME_DEFAULT_GAIN_PCT	 85u
#define LEAP_OUTCOME_DEFAULT_NO_GAIN_PCT 97u

struct leap_outcome {
	enum leap_outcome_seg seg;
	uint64_t seg_start_ns; /* 0: not started */
	uint64_t seg_end_ns;
	uint64_t pages;	       /* consumed in this segment */
	uint64_t lead_pages;   /* ... of them hits on our pages, held */
	uint64_t window_pages; /* issued in this on epoch */
	uint64_t on_ns;	       /* this target's on epoch now */
	bool first;	       /* the first on epoch is first_on_ns long */
	uint32_t need;	       /* ratios that make a no-gain verdict */
	/* The comparison being built, pages per second (0: none) */
	uint64_t tail_rate, held_rate;
	/* the last comparison's rates: held, and the mean around it */
	uint64_t last_held_rate, last_ref_rate;
	uint32_t ratio_pct[LEAP_OUTCOME_JUDGED_MAX]; /* oldest first */
	uint32_t n_ratios;
	uint32_t median_pct; /* of the last `judged` ratios (0: none yet) */
	enum leap_outcome_verdict verdict;
	uint64_t held_epochs, comparisons, dropped; /* totals */
	uint64_t lead_dropped; /* ... of the dropped: our lead in the held epoch */
};

void leap_outcome_params_default(struct leap_outcome_params *p);
/* Whether p is usable: lengths nonzero, judged odd and <= the max. */
bool leap_outcome_params_valid(const struct leap_outcome_params *p);
enum leap_outcome_start {
	LEAP_OUTCOME_FIRST = 0, /* a target's first: its first on epoch first_on_ns */
	LEAP_OUTCOME_PROBE,	/* after a probe: on epochs of on_ns at once */
	/* after a probe that follows a no-gain verdict: as a probe, and
	 * LEAP_OUTCOME_GAIN_RUN ratios decide "no gain" too (a program that
	 * was judged once is judged again in half the time) */
	LEAP_OUTCOME_RECHECK,
};

/* A fresh start. */
void leap_outcome_init(struct leap_outcome *o, const struct leap_outcome_params *p,
		       enum leap_outcome_start start);

/*
 * Time is now_ns (an event's, before its page is counted; or a tick's):
 * segments that ended close.  Returns true when this made the verdict
 * LEAP_OUTCOME_NO_GAIN (once: the caller stands down and starts afresh
 * with leap_outcome_init() when it prefetches again).
 */
bool leap_outcome_advance(struct leap_outcome *o, const struct leap_outcome_params *p,
			  uint64_t now_ns);
/* The target consumed n swapped pages (page-ins, hits, swap-cache hits). */
void leap_outcome_pages(struct leap_outcome *o, uint32_t n);
/*
 * At now_ns the target used a page our windows read (a hit), after
 * leap_outcome_pages() counted it.  While a held epoch settles, that is
 * the windows' lead running out, not Linux's pace: the settle goes on
 * until settle_ns pass without such a hit, for at most
 * LEAP_OUTCOME_LEAD_MAX_NS from the hold.  (Deep windows left an SQLite
 * reverse scan 1,542 hits on them to use in a 50 ms held epoch, which then
 * ran at 130% of the rate around it; 2026-11-30, docs/agent.md.)  In the
 * measured held epoch such hits are counted: past LEAP_OUTCOME_LEAD_MAX_PCT
 * of its pages, the comparison is dropped.
 */
void leap_outcome_lead_hit(struct leap_outcome *o, const struct leap_outcome_params *p,
			   uint64_t now_ns);
/* A window of n pages went out. */
void leap_outcome_window(struct leap_outcome *o, uint32_t n);
/* Whether windows are held now. */
bool leap_outcome_holding(const struct leap_outcome *o);

const char *leap_outcome_verdict_name(enum leap_outcome_verdict v);

#ifdef __cplusplus
}
#endif

#endif
