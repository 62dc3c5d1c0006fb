/* SPDX-License-Identifier: MIT */
/*
 * Leap's majority-trend prefetcher as a pure library: no kernel, no I/O, no
 * allocation after init.  The agent (real faults) and leap-sim (traces) both
 * drive exactly this code, so what the simulator shows is what runs.
 *
 * Spec: Al Maruf & Chowdhury, "Effectively Prefetching Remote Memory with
 * Leap", USENIX ATC'20, Algorithms 1 (FINDTREND) and 2
 * (GETPREFETCHWINDOWSIZE / DOPREFETCH); see shared/design.md section 2.
 *
 * Units: every address here is a page number (byte address >> 12, or a swap
 * offset in the backend); deltas are signed page counts.
 */
#ifndef LEAP_ENGINE_H
#define LEAP_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Hard limits: they bound memory per stream whatever a config file says. */
#define LEAP_HSIZE_MAX 256u
#define LEAP_PW_LIMIT  1024u /* IOV_MAX: one process_madvise batch */

/*
 * Where our default behaviour departs from the paper, LEAP_FLAVOR_PAPER
 * restores the paper's: delta 0 and any |delta| can be a trend.  In
 * LEAP_FLAVOR_OURS a majority of 0 or of |delta| > max_delta is "no trend"
 * (a repeated fault on one page, or a jump between unrelated regions,
 * predicts nothing; Canvas makes the same cut).
 */
enum leap_flavor {
	LEAP_FLAVOR_OURS = 0,
	LEAP_FLAVOR_PAPER = 1,
};

/* What one access history follows. */
enum leap_stream_key {
	LEAP_KEY_PROCESS = 0, /* (cgroup, tgid): the paper's per-application stream */
	LEAP_KEY_THREAD = 1,  /* (cgroup, tgid, tid): the paper's future work */
	LEAP_KEY_CGROUP = 2,  /* (cgroup): one stream for the whole group */
};

struct leap_params {
	uint32_t hsize;	    /* AccessHistory length, 2..LEAP_HSIZE_MAX */
	uint32_t nsplit;    /* first FINDTREND window = hsize / nsplit */
	uint32_t pw_max;    /* prefetch window cap in pages, 1..LEAP_PW_LIMIT */
	uint64_t max_delta; /* largest |delta| taken as a trend (OURS); 0: no cap */
	enum leap_flavor flavor;
	enum leap_stream_key key;
	/* Streams one key may hold at once (lanes.c): interleaved streams
	 * (an index and its table, arrays walked in lock-step) each get
	 * their own history.  1: the paper's single history per key. */
	uint32_t lanes;
};

/* Defaults, with the reason for each: docs/agent.md, "Configuration". */
#define LEAP_DEFAULT_HSIZE     32u
#define LEAP_DEFAULT_NSPLIT    2u
#define LEAP_DEFAULT_PW_MAX    1024u
#define LEAP_DEFAULT_MAX_DELTA 256u
#define LEAP_DEFAULT_LANES     4u
#define LEAP_LANES_MAX	       8u

void leap_params_default(struct leap_params *p);
/* 0 if usable; otherwise -1 and *why names the offending field. */
int leap_params_validate(const struct leap_params *p, const char **why);
const char *leap_flavor_name(enum leap_flavor f);
const char *leap_stream_key_name(enum leap_stream_key k);
/* 0 and *out set on a known name, -1 otherwise. */
int leap_flavor_parse(const char *s, enum leap_flavor *out);
int leap_stream_key_parse(const char *s, enum leap_stream_key *out);

/* ---- AccessHistory: ring of the newest deltas ------------------------- */

struct leap_history {
	int64_t *delta;	    /* caller-provided storage of `size` slots */
	uint32_t size;	    /* Hsize */
	uint32_t head;	    /* next slot to write */
	uint32_t count;	    /* filled slots, <= size */
	uint64_t last_page; /* previous page, to form the next delta */
	bool has_last;
};

void leap_history_init(struct leap_history *h, int64_t *storage, uint32_t size);
/* Records the delta from the previous page (the first page records none). */
void leap_history_push(struct leap_history *h, uint64_t page);
/* The i-th newest delta, i = 0 is the newest; i < count. */
int64_t leap_history_at(const struct leap_history *h, uint32_t i);

/*
 * FINDTREND: majority delta over the w newest deltas, w = hsize/nsplit
 * doubling up to hsize.  A majority needs floor(n/2)+1 votes where n is the
 * number of filled slots in the window.  Returns true and sets *trend when
 * found.  *window_used (may be NULL) gets the last window tried.
 */
bool leap_find_trend(const struct leap_history *h, const struct leap_params *p,
		     int64_t *trend, uint32_t *window_used);

/*
 * A trend's stride to 1/LEAP_STRIDE_ONE of a page (LEAP_FLAVOR_OURS; not in
 * the paper).  FINDTREND's trend is a whole number of pages, but a program
 * stepping over records that are not a whole number of pages long is not:
 * SQLite's rows take a little over 4 KiB each in its page cache (a 4 KiB
 * page and the cache's header), every 16th looked up lies ~17.2 pages
 * past the last, the misses' majority delta is +17, and a window along
 * +17 is a page off from its 6th step on.  Over the
 * filled history: the deltas near k trend steps (k = 1..LEAP_FINE_K_MAX,
 * within k pages of k * trend, same sign) count k steps each, and they
 * and the deltas of at most one page (a record's second page) make the
 * distance; other deltas are noise and left out.  Returns that stride in
 * 1/LEAP_STRIDE_ONE pages, or 0 where it is whole or not known: |trend| <
 * 2 or > LEAP_FINE_MAG_MAX, fewer than LEAP_FINE_MIN_STEPS steps counted,
 * every step counted exact (a whole stride, with other pages touched
 * between its steps), or the distance within a page of a whole stride's.
 */
#define LEAP_STRIDE_ONE	    256
#define LEAP_FINE_K_MAX	    8
#define LEAP_FINE_MIN_STEPS 8u
#define LEAP_FINE_MAG_MAX   (1u << 30)
int64_t leap_stride_fine(const struct leap_history *h, int64_t trend);

/*
 * A nested stride (LEAP_FLAVOR_OURS; not in the paper): the newest deltas
 * repeat with a period of 2..LEAP_PERIOD_MAX that is not one stride, e.g.
 * numpy's a[::4, ::1024] over 16-page rows: +2 seven times, then +50.
 * FINDTREND's majority there is +2, and a window along it fetches every
 * other page of the rows in between too, four times the pages used.  A
 * period counts once the LEAP_PERIOD_SPAN newest deltas (at least two
 * periods) repeat it exactly, every delta is within max_delta and not 0,
 * and it advances (its deltas do not sum to 0).  deltas[] gets one
 * period, oldest first: the delta that follows the newest page is
 * deltas[0].  Returns the period, or 0.
 */
#define LEAP_PERIOD_MAX	 16u
#define LEAP_PERIOD_SPAN 16u
uint32_t leap_find_period(const struct leap_history *h, const struct leap_params *p,
			  int64_t deltas[LEAP_PERIOD_MAX]);

/* ---- Prefetch window ------------------------------------------------- */

struct leap_window {
	uint32_t chit;	  /* prefetched pages hit since the last prefetch */
	uint32_t pw_prev; /* previous window size */
};

/* GETPREFETCHWINDOWSIZE.  follows_trend: Pt - Pt-1 equals the current trend. */
uint32_t leap_window_next(struct leap_window *w, const struct leap_params *p,
			  bool follows_trend);

/* ---- DOPREFETCH candidates -------------------------------------------- */

/*
 * Fills out[] with up to min(pw, cap) distinct pages other than pt, none
 * below page 0.  With has_trend: pt + trend*i, i = 1..pw.  Without: follow
 * the latest trend if there is one (has_latest), else the pw pages nearest
 * to pt on both sides, forward first.  Returns the number written.
 */
uint32_t leap_candidates(uint64_t pt, uint32_t pw, bool has_trend, int64_t trend,
			 bool has_latest, int64_t latest, uint64_t *out, uint32_t cap);
/*
 * Up to min(pw, cap) pages pt + round(i * fine / LEAP_STRIDE_ONE), i = 1..pw,
 * along a stride with a fraction (leap_stride_fine(), |fine| of at least
 * one page: the pages are distinct).  Stops before a page below 0 or past
 * 2^64.
 */
uint32_t leap_candidates_fine(uint64_t pt, uint32_t pw, int64_t fine, uint64_t *out,
			      uint32_t cap);
/* *out = pt + k * d, unless that leaves the page numbers (below 0, past
 * 2^64, or overflows): then false.  One step of a whole stride's windows,
 * and its lead (stream.c). */
bool leap_stride_step(uint64_t pt, int64_t d, uint64_t k, uint64_t *out);
/* *out = pt + round(i * fine / LEAP_STRIDE_ONE), unless that leaves the page
 * numbers (or overflows): then false.  One step of the above, and a fine
 * stride's lead (stream.c). */
bool leap_fine_step(uint64_t pt, int64_t fine, uint64_t i, uint64_t *out);
/*
 * Up to min(pw, cap) pages from pt along a period of deltas (leap_find_period),
 * starting with deltas[*phase]; *phase becomes the index of the delta after
 * the last page written.  Stops before a page below 0 or past 2^64.
 */
uint32_t leap_candidates_periodic(uint64_t pt, uint32_t pw, const int64_t *deltas,
				  uint32_t period, uint32_t *phase, uint64_t *out,
				  uint32_t cap);
/*
 * A window out[0..n) whose pages step by exactly two pages, one way, with
 * the pages between added: out[0], out[0] +- 1, ... through out[n - 1], at
 * most cap pages (those nearest out[0]).  Returns the new count, n where
 * the window is not such a one (fewer than 2 pages, any other step).
 * For shared memory (core.c says why): there the kernel's readahead hits
 * send no event, so a scan whose misses come two pages apart looks like a
 * stride of 2, and a window along it reads every other page, one request
 * each (docs/agent.md, "Two pages apart in shared memory").
 */
uint32_t leap_window_close_gaps(uint64_t *out, uint32_t n, uint32_t cap);

/* ---- Pages a stream is done with ---------------------------------------- */

/*
 * Leap evicts a prefetched page eagerly once it has been used.  On a stock
 * kernel the agent can only advise: pages a sequential stream (+-1 page per
 * step) went past some pages ago get MADV_COLD, so that reclaim takes them
 * before the pages still to be used.  This tracks, per stream, the first
 * page not handed out yet; the pages are handed out once, in runs of at
 * least `chunk`, `lag` pages behind the stream.
 */
struct leap_behind {
	uint64_t next; /* first page not handed out, in the stream's direction */
	int dir;       /* +1 or -1 */
	bool armed;
};

/* A move farther than this (or backwards) starts the tracking afresh. */
#define LEAP_BEHIND_JUMP 4096u

/*
 * The stream reached pt going dir (+1, -1; anything else disarms).
 * Returns how many pages, from *first upwards, the stream is now done
 * with (0 if fewer than chunk are).
 */
uint32_t leap_behind_advance(struct leap_behind *b, uint64_t pt, int dir, uint32_t lag,
			     uint32_t chunk, uint64_t *first);

/* ---- One stream: history + window + trend memory ----------------------- */

/*
 * Misses with no trend found after which the latest trend no longer counts
 * (LEAP_FLAVOR_OURS).  The paper's GETPREFETCHWINDOWSIZE prefetches one
 * page along "the current trend" for a miss that follows it even with no
 * hit, and DOPREFETCH falls back on the previous trend; a trend remembered
 * forever makes that fire long after the stream is gone.  PostgreSQL's
 * random look-ups read 8 KiB blocks, two pages at a time: after any +1
 * trend, every block's second page "followed" it, and each got a window of
 * one page no look-up wanted (4,925 windows in a 4 s phase, the phase
 * 0.83-0.85x of Linux's).  Forgotten after 16 misses (a FINDTREND window:
 * hsize / nsplit) with no majority: 2,021 windows, few enough that the
 * cost model finds nothing to add and stands down (1.01x).  Streams with a
 * trend find it again at nearly every miss; in the recordings of the
 * strided, sequential and two-array programs the windows' pages move by
 * less than 2% (docs/agent.md, "A trend's memory").
 */
#define LEAP_LATEST_TTL 16u

/*
 * The most trend steps a stream's lead reaches (leap_stream_late()),
 * whatever pw_max.  It doubled up to pw_max steps, and when pw_max went
 * from 256 to 1024 (2026-11-29) a lead grown on one pass of a scan sent
 * the next pass's windows up to 1,024 steps ahead, one page each, and
 * every page before them missed: CPython's stride-16 scan (64 MiB in 32)
 * had half its page-ins missed in 4 of 50 runs (80-84% served in the
 * rest), 76-84% in 25 of 25 with this cap.  256 is the reach it had
 * before; a lead covers the program's pace times a window's landing
 * time (a few ms), far fewer steps than that.  Halving the lead on plain
 * misses instead fixed the scan too but slowed SQLite's load 7%.
 */
#define LEAP_LEAD_MAX 256u
/*
 * ... and along a stride with a fraction (leap_stride_fine()): the
 * records such a stride steps over are seldom all of one length, and a
 * page ahead is a guess that worsens with every step.  On SQLite's
 * strided look-ups (~17.2 pages; tools/stride-reach.py on recorded
 * misses) the page 1 step ahead along the fine stride was used 66% of
 * the time, 8 steps 45%, 16 steps 35%, 32 steps 24% (along +17: 66%,
 * 7%, 3%, 3%).
 */
#define LEAP_LEAD_FINE_MAX 8u

struct leap_stream_stats {
	uint64_t accesses;    /* every recorded access */
	uint64_t misses;      /* accesses not served by a prefetch */
	uint64_t hits;	      /* accesses served by a prefetch */
	uint64_t prefetched;  /* candidates handed out */
	uint64_t trends;      /* DOPREFETCH calls that found a trend */
	uint64_t suspended;   /* DOPREFETCH calls with PW == 0 */
	uint64_t lookaheads;  /* windows issued by a hit on a marker (OURS) */
	uint64_t offtrend;    /* misses off a live trend, not prefetched for (OURS) */
	uint64_t wasted;      /* prefetched pages read again before use */
	uint64_t periodic;    /* windows along a nested stride (OURS) */
	uint64_t late;	      /* misses on prefetched pages still on their way (OURS) */
	uint64_t around_left; /* "around Pt" windows left to the kernel's readahead */
};

struct leap_stream_key_t {
	uint64_t cgroup;
	uint32_t tgid;
	uint32_t tid;
	uint32_t lane; /* which of the key's interleaved streams (lanes.c) */
};

struct leap_stream {
	struct leap_stream_key_t key;
	struct leap_history hist;
	struct leap_window win;
	int64_t latest_trend; /* last trend FINDTREND returned */
	bool has_latest;
	/* Misses since FINDTREND last found one; at LEAP_LATEST_TTL (flavour
	 * OURS) the latest trend is forgotten. */
	uint32_t since_trend;
	/*
	 * The newest access on the trend (LEAP_FLAVOR_OURS): a miss that
	 * follows neither it nor the previous access while a trend holds is
	 * noise (or the first page of a jump, which the next access confirms)
	 * and gets no window of its own; the paper prefetches a full window
	 * from it.
	 */
	uint64_t anchor;
	bool has_anchor;
	/*
	 * Look-ahead (LEAP_FLAVOR_OURS): the first page of the newest strided
	 * window is a marker; a hit on it issues the next window beyond
	 * ra_last, so a stream that keeps hitting never stalls on a miss (the
	 * page cache's PG_readahead idea, for swap).  The paper prefetches on
	 * misses only.
	 */
	bool ra_armed;
	uint64_t ra_marker;
	uint64_t ra_last;
	int64_t ra_stride;
	/* The window's stride to 1/LEAP_STRIDE_ONE page where it has a
	 * fraction (leap_stride_fine()), else 0. */
	int64_t ra_fine;
	/* ... or, for a nested stride (ra_period > 0), the period and the
	 * index of its delta after ra_last (leap_find_period). */
	uint32_t ra_period;
	uint32_t ra_phase;
	int64_t ra_deltas[LEAP_PERIOD_MAX];
	/*
	 * Lead (LEAP_FLAVOR_OURS; not in the paper): how many trend steps
	 * beyond where it would start a miss's window starts, grown by late
	 * prefetches (leap_stream_late(), up to LEAP_LEAD_MAX or pw_max) and
	 * halved by wasted ones.  A window that arrives after the fault was
	 * right but too close: the program's pace times the time a window
	 * takes to land (the agent's reaction and the device's read) is the
	 * distance it needs, and doubling on each late miss reaches it
	 * without a clock in the library.
	 */
	uint32_t lead;
	struct leap_behind behind; /* pages it went past (agent: MADV_COLD) */
	/* Agent: the kernel's readahead served the last miss across this gap
	 * (pages, signed); so many more misses across it are taken as served
	 * without reading the pagemap again. */
	int64_t kra_gap;
	uint32_t kra_trust;

	struct leap_stream_stats stats;
	uint32_t hist_capacity; /* slots of hist.delta storage */
	/* leap_table: which stream its slot holds, unique per creation (a
	 * slot evicted and reused holds another), for naming the stream
	 * from another thread (core.h, struct leap_stream_ref). */
	uint32_t gen;
	/* bookkeeping for leap_table; opaque to callers */
	uint64_t last_used;
	uint32_t lru_prev, lru_next;
	bool in_use;
};

/* storage holds `capacity` deltas; a policy's hsize above it is clamped. */
void leap_stream_init(struct leap_stream *s, int64_t *storage, uint32_t capacity);
/* Clears history and window (e.g. after a policy change), keeps stats. */
void leap_stream_reset(struct leap_stream *s, uint32_t hsize);

/* What one access decided, for tracing and tests. */
struct leap_decision {
	uint32_t window; /* PW chosen (0: suspended or not a miss) */
	uint32_t count;	 /* candidates written */
	bool ran;	 /* DOPREFETCH ran (a miss) */
	bool lookahead;	 /* a hit on the marker issued the next window */
	bool periodic;	 /* the window follows a nested stride (leap_find_period) */
	bool trend_found;
	int64_t trend;
	/* No trend, none lately: the "around Pt" window was left to the
	 * kernel's readahead (leap_stream_access_kra()); window is the PW it
	 * would have had, count 0. */
	bool around_left;
};

/*
 * One access to page pt.  hit: the page was found among prefetched pages
 * (counts towards Chit, as in the paper; in the paper flavour a hit runs no
 * prefetch, in ours a hit on the look-ahead marker issues the next window).
 * A miss runs DOPREFETCH.  Candidates go to out[] (cap >= pw_max for a full
 * window).  Returns the number of candidates.  dec may be NULL.
 */
uint32_t leap_stream_access(struct leap_stream *s, const struct leap_params *p,
			    uint64_t pt, bool hit, uint64_t *out, uint32_t cap,
			    struct leap_decision *dec);
/*
 * The same, where the kernel's own swap readahead is on (LEAP_FLAVOR_OURS
 * callers): a miss with no trend, and none lately, gets no window "around
 * Pt".  That fallback is the paper's stand-in for the readahead Leap
 * turned off; with it on, the kernel has just read a cluster around this
 * miss in the faulting thread, and ours would be a second, later guess
 * around a page no trend leads to.  On SQLite's random look-ups these
 * windows were 1,100-1,200 a phase, a third of their pages used, ~700
 * extra disk reads (docs/bench-real.md, 2026-11-29, night).  The
 * window's size still evolves as the paper's does (Chit, PWprev), so a
 * trend found next sizes from it.
 */
uint32_t leap_stream_access_kra(struct leap_stream *s, const struct leap_params *p,
				uint64_t pt, bool hit, uint64_t *out, uint32_t cap,
				struct leap_decision *dec);
/*
 * A miss at pt on a stream the kernel's own readahead serves (LEAP_FLAVOR_OURS
 * callers; the paper has no other prefetcher): the previous access was
 * some pages back and the pages between were read by the kernel and used
 * (the caller checked).  Seen only where the kernel's windows end, a
 * unit-stride stream looks like a stride of the kernel's window, and a
 * window on that stride fetches the very pages the kernel's next readahead
 * reads.  Here the pages between enter the history as the accesses they
 * were (the trend becomes +-1) and count towards Chit (a prefetcher served
 * them), and a window on a unit trend starts skip pages beyond pt, past
 * what the kernel is reading around pt now.  Such a miss means the program
 * caught up with our windows, so the window at least doubles, and the skip
 * pages count towards Chit once it is out (the program goes through them
 * before it reaches our marker).  Otherwise as a miss in
 * leap_stream_access().
 */
uint32_t leap_stream_access_after_ra(struct leap_stream *s, const struct leap_params *p,
				     uint64_t pt, uint64_t skip, uint64_t *out,
				     uint32_t cap, struct leap_decision *dec);
/*
 * A page prefetched for this stream was read again before use (reclaimed
 * under memory pressure, or overtaken): the prefetches are outrunning the
 * memory they land in.  Halves Chit and the previous window, so the next
 * miss asks for less (GETPREFETCHWINDOWSIZE never drops below half the
 * previous window, so this is how waste shrinks it); hits grow it again
 * once the waste stops.  Not in the paper, whose prefetch cache is
 * reclaimed eagerly instead.
 */
void leap_stream_wasted(struct leap_stream *s);
/*
 * The next miss at hand found a page this stream had prefetched still on
 * its way (its window was issued after the fault began): the window was
 * right and late.  Where no page of the windows came in time since the
 * last one (Chit 0), its pages count as hits for the next window's size
 * (GETPREFETCHWINDOWSIZE would otherwise shrink a stream whose windows
 * are all late to one page, and keep it there), and the lead doubles,
 * from 1 up to LEAP_LEAD_MAX (pw_max if less) trend steps.  A late miss
 * among hits changes nothing: the distance works for most pages.  Call
 * before leap_stream_access() for that miss.  OURS flavour only.
 */
void leap_stream_late(struct leap_stream *s, const struct leap_params *p);
/* Hits learnt after the fact (e.g. counted by the agent) feed Chit too. */
void leap_stream_add_hits(struct leap_stream *s, uint32_t n);

/* ---- Stream table: bounded, LRU-evicting, allocation only at init ------ */

struct leap_table {
	struct leap_stream *streams; /* capacity entries */
	int64_t *deltas;	     /* capacity * hsize_max */
	uint32_t *index;	     /* open addressing, index_mask + 1 slots */
	uint32_t index_mask;
	uint32_t capacity;
	uint32_t hsize_max;
	uint32_t used;
	uint32_t lru_head, lru_tail; /* most / least recently used */
	uint32_t free_head;	     /* unused streams, linked by lru_next */
	uint64_t evictions;
	uint32_t gens; /* streams created, for leap_stream.gen */
};

int leap_table_init(struct leap_table *t, uint32_t capacity, uint32_t hsize_max);
void leap_table_free(struct leap_table *t);
/* Key for an event under the given stream keying (fields not used are 0). */
struct leap_stream_key_t leap_key_make(enum leap_stream_key k, uint64_t cgroup,
				       uint32_t tgid, uint32_t tid);
/* Finds or creates (evicting the least recently used stream when full). */
struct leap_stream *leap_table_get(struct leap_table *t,
				   const struct leap_stream_key_t *key, uint32_t hsize,
				   uint64_t now);
struct leap_stream *leap_table_find(struct leap_table *t,
				    const struct leap_stream_key_t *key);
/* A stream of t found (leap_table_find()) is used now: the most recent. */
void leap_table_touch(struct leap_table *t, struct leap_stream *s, uint64_t now);
/* The slot of a stream of t, 0..capacity-1. */
uint32_t leap_table_slot(const struct leap_table *t, const struct leap_stream *s);
/*
 * The stream of key's lanes (key->lane ignored) that a fault at page
 * belongs to, found or created (leap_table_get()).  With p->lanes > 1 and a
 * max_delta cap, a fault joins the lane it lies nearest to, counting the
 * pages of the lane's newest window as the lane's, if that is within
 * max_delta pages (a farther delta is no trend anyway); otherwise it opens
 * a lane, or moves the least recently used one (a jump, as in a single
 * history).  So streams interleaved in one process keep their own deltas,
 * and one stream keeps one lane.  Lane 0 only with p->lanes <= 1, no cap,
 * or the paper's flavour (its history is one per application).
 */
struct leap_stream *leap_lane_get(struct leap_table *t, struct leap_stream_key_t key,
				  const struct leap_params *p, uint64_t page,
				  uint64_t now);

/* Drops streams idle since before now - idle; returns how many. */
uint32_t leap_table_expire(struct leap_table *t, uint64_t now, uint64_t idle);
/* Drops every stream of a process (it exited); returns how many. */
uint32_t leap_table_drop_tgid(struct leap_table *t, uint32_t tgid);

#ifdef __cplusplus
}
#endif
#endif /* LEAP_ENGINE_H */
