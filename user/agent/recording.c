// SPDX-License-Identifier: MIT
/* Recordings of the decision core's inputs, and their replay (recording.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "recording.h"

enum rec_type {
	REC_CONFIG = 1,
	REC_TARGET_ADD,
	REC_TARGET_SET,
	REC_TARGET_REMOVE,
	REC_ENV,
	REC_EVENT,
	REC_FACT_MAPPED,
	REC_FACT_SHMEM,
	REC_SPENT,
	REC_FORGET,
	REC_TICK,
	REC_END,
	REC_FACT_REGION, /* version 4 */
	REC_LAST = REC_FACT_REGION,
};

#define REC_PAYLOAD_MAX 512

/* ---- fixed-width little-endian fields ------------------------------------------------
 */

struct rec_buf {
	uint8_t b[REC_PAYLOAD_MAX];
	size_t len, at;	 /* written; read so far */
	bool short_read; /* a get past len */
};

static void put(struct rec_buf *w, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes && w->len < sizeof(w->b); i++)
		w->b[w->len++] = (uint8_t)(v >> (8 * i));
}

static uint64_t get(struct rec_buf *r, int bytes)
{
	uint64_t v = 0;

	if (r->at + (size_t)bytes > r->len) {
		r->short_read = true;
		return 0;
	}
	for (int i = 0; i < bytes; i++)
		v |= (uint64_t)r->b[r->at++] << (8 * i);
	return v;
}

static void put_config(struct rec_buf *w, const struct leap_core_config *c)
{
	put(w, c->streams, 4);
	put(w, c->idle_ns, 8);
	put(w, c->hsize_max, 4);
	put(w, c->hold_all, 1);
	put(w, c->backend, 1);
	put(w, c->pushes_only, 1);
	put(w, c->cold_chunk, 4);
	put(w, c->kra_trust, 4);
	put(w, c->cost.min_misses, 4);
	put(w, c->cost.min_events, 4);
	put(w, c->cost.probe_first_ns, 8);
	put(w, c->cost.probe_max_ns, 8);
	put(w, c->cost.idle_ratio, 4);
	put(w, c->cost.idle_reads, 4);
	/* version 2 */
	put(w, c->outcome.first_on_ns, 8);
	put(w, c->outcome.on_ns, 8);
	put(w, c->outcome.on_max_ns, 8);
	put(w, c->outcome.held_ns, 8);
	put(w, c->outcome.settle_ns, 8);
	put(w, c->outcome.ref_ns, 8);
	put(w, c->outcome.min_pages, 4);
	put(w, c->outcome.min_window_pages, 4);
	put(w, c->outcome.judged, 4);
	put(w, c->outcome.gain_pct, 4);
	put(w, c->outcome.no_gain_pct, 4);
	put(w, c->sweeps, 1);		  /* version 4 */
	put(w, c->outcome_swap_cache, 1); /* version 5 */
	put(w, c->outcome_lead, 1);	  /* version 6 */
}

/* Version 1 had no outcome judge: its defaults, never used (no policy of
 * a version 1 recording judges the outcome). */
static void get_config(struct rec_buf *r, struct leap_core_config *c, uint32_t version)
{
	memset(c, 0, sizeof(*c));
	c->streams = (uint32_t)get(r, 4);
	c->idle_ns = get(r, 8);
	c->hsize_max = (uint32_t)get(r, 4);
	c->hold_all = get(r, 1);
	c->backend = get(r, 1);
	c->pushes_only = get(r, 1);
	c->cold_chunk = (uint32_t)get(r, 4);
	c->kra_trust = (uint32_t)get(r, 4);
	c->cost.min_misses = (uint32_t)get(r, 4);
	c->cost.min_events = (uint32_t)get(r, 4);
	c->cost.probe_first_ns = get(r, 8);
	c->cost.probe_max_ns = get(r, 8);
	c->cost.idle_ratio = (uint32_t)get(r, 4);
	c->cost.idle_reads = (uint32_t)get(r, 4);
	leap_outcome_params_default(&c->outcome);
	if (version < 2)
		return;
	c->outcome.first_on_ns = get(r, 8);
	c->outcome.on_ns = get(r, 8);
	c->outcome.on_max_ns = get(r, 8);
	c->outcome.held_ns = get(r, 8);
	c->outcome.settle_ns = get(r, 8);
	c->outcome.ref_ns = get(r, 8);
	c->outcome.min_pages = (uint32_t)get(r, 4);
	c->outcome.min_window_pages = (uint32_t)get(r, 4);
	c->outcome.judged = (uint32_t)get(r, 4);
	c->outcome.gain_pct = (uint32_t)get(r, 4);
	c->outcome.no_gain_pct = (uint32_t)get(r, 4);
	/* Before version 4 no region was asked of the port: no sweeps. */
	c->sweeps = version >= 4 ? get(r, 1) : false;
	c->outcome_swap_cache = version >= 5 ? get(r, 1) : false;
	/* Version 5's option turned the lead's settle on with the counts. */
	c->outcome_lead = version >= 6 ? get(r, 1) : c->outcome_swap_cache;
}

static void put_policy(struct rec_buf *w, const struct leap_core_policy *p)
{
	put(w, p->mode, 1);
	put(w, p->params.hsize, 4);
	put(w, p->params.nsplit, 4);
	put(w, p->params.pw_max, 4);
	put(w, p->params.max_delta, 8);
	put(w, p->params.flavor, 1);
	put(w, p->params.key, 1);
	put(w, p->cold_behind, 4);
	put(w, p->stand_down, 1);
	put(w, p->judge_outcome, 1); /* version 2 */
	put(w, p->params.lanes, 1);  /* version 3 */
}

static void get_policy(struct rec_buf *r, struct leap_core_policy *p, uint32_t version)
{
	memset(p, 0, sizeof(*p));
	p->mode = (enum leap_core_mode)get(r, 1);
	p->params.hsize = (uint32_t)get(r, 4);
	p->params.nsplit = (uint32_t)get(r, 4);
	p->params.pw_max = (uint32_t)get(r, 4);
	p->params.max_delta = get(r, 8);
	p->params.flavor = (enum leap_flavor)get(r, 1);
	p->params.key = (enum leap_stream_key)get(r, 1);
	p->cold_behind = (uint32_t)get(r, 4);
	p->stand_down = get(r, 1);
	if (version >= 2)
		p->judge_outcome = get(r, 1);
	/* Before version 3 a key had one history: lane 0 alone. */
	p->params.lanes = version >= 3 ? (uint32_t)get(r, 1) : 1;
}

static void put_env(struct rec_buf *w, const struct leap_core_env *e)
{
	put(w, (uint32_t)e->swap.sync_pct, 4);
	put(w, e->swap.top_sync, 1);
	put(w, e->ra_pages, 4);
	put(w, e->can_prefetch, 1);
	put(w, e->can_cold, 1);
}

static void get_env(struct rec_buf *r, struct leap_core_env *e)
{
	memset(e, 0, sizeof(*e));
	e->swap.sync_pct = (int32_t)(uint32_t)get(r, 4);
	e->swap.top_sync = get(r, 1);
	e->ra_pages = (uint32_t)get(r, 4);
	e->can_prefetch = get(r, 1);
	e->can_cold = get(r, 1);
}

static void put_event(struct rec_buf *w, const struct leap_event *ev)
{
	put(w, ev->ts_ns, 8);
	put(w, ev->cgroup_id, 8);
	put(w, ev->addr, 8);
	put(w, (uint64_t)ev->delta, 8);
	put(w, ev->swap_offset, 8);
	put(w, ev->tgid, 4);
	put(w, ev->tid, 4);
	put(w, ev->flags, 4);
	put(w, ev->swap_type, 4);
	put(w, ev->latency_ns, 8);
	put(w, ev->swap_cache_hits, 4); /* version 5 */
}

static void get_event(struct rec_buf *r, struct leap_event *ev, uint32_t version)
{
	memset(ev, 0, sizeof(*ev));
	ev->ts_ns = get(r, 8);
	ev->cgroup_id = get(r, 8);
	ev->addr = get(r, 8);
	ev->delta = (int64_t)get(r, 8);
	ev->swap_offset = get(r, 8);
	ev->tgid = (uint32_t)get(r, 4);
	ev->tid = (uint32_t)get(r, 4);
	ev->flags = (uint32_t)get(r, 4);
	ev->swap_type = (uint32_t)get(r, 4);
	ev->latency_ns = get(r, 8);
	if (version >= 5)
		ev->swap_cache_hits = (uint32_t)get(r, 4);
}

/* The counters, named once: END records, replay output, tests. */
#define C(name, field)                                                                   \
	{                                                                                \
		name, offsetof(struct leap_core_counters, field)                         \
	}
static const struct {
	const char *name;
	size_t off;
} counter_fields[] = {
	C("events", events),
	C("ignored", ignored),
	C("swap_faults", swap_faults),
	C("hits", hits),
	C("late", late),
	C("zero_misses", zero_misses),
	C("lookaheads", lookaheads),
	C("nested_strides", nested_strides),
	C("held_kernel_ra", held_kernel_ra),
	C("beyond_kernel_ra", beyond_kernel_ra),
	C("windows", windows),
	C("pages", pages),
	C("gated_mode", gated[LEAP_GATE_MODE]),
	C("gated_standby", gated[LEAP_GATE_STANDBY]),
	C("gated_channel", gated[LEAP_GATE_CHANNEL]),
	C("gated_held", gated[LEAP_GATE_HELD]),
	C("cold_pages", cold_pages),
	C("quiet_sets", quiet_sets),
	C("quiet_lifts", quiet_lifts),
	C("stand_downs", stand_downs),
	C("probes", probes),
	C("exited", exited),
	/* version 2 (a version 1 END record leaves them 0) */
	C("gated_epoch", gated[LEAP_GATE_EPOCH]),
	C("held_epochs", held_epochs),
	C("outcome_comparisons", outcome_comparisons),
	C("outcome_stand_downs", outcome_stand_downs),
	/* version 4 */
	C("sweep_windows", sweep_windows),
	C("sweep_pages", sweep_pages),
	C("sweep_replaced", sweep_replaced),
	/* 2026-12-02 (an END record without it leaves it 0) */
	C("shared_gap_pages", shared_gap_pages),
};
#undef C
#define NCOUNTERS (sizeof(counter_fields) / sizeof(counter_fields[0]))

static uint64_t *counter_at(struct leap_core_counters *c, size_t i)
{
	return (uint64_t *)((char *)c + counter_fields[i].off);
}

void recording_print_counters(FILE *f, const char *label,
			      const struct leap_core_counters *c)
{
	fprintf(f, "%s:", label);
	for (size_t i = 0; i < NCOUNTERS; i++)
		fprintf(f, " %s=%" PRIu64, counter_fields[i].name,
			*counter_at((struct leap_core_counters *)c, i));
	fputc('\n', f);
}

/* ---- writing ------------------------------------------------------------------------
 */

struct recording {
	gzFile gz;
	bool failed; /* a write failed: said once, the rest dropped */
	const struct leap_core_facts *port; /* recording_tap()'s */
	struct leap_core_facts tapped;
};

static void rec_write(struct recording *r, enum rec_type type, const struct rec_buf *w)
{
	uint8_t head[3] = {(uint8_t)type, (uint8_t)w->len, (uint8_t)(w->len >> 8)};

	if (!r || r->failed)
		return;
	if (gzwrite(r->gz, head, sizeof(head)) != (int)sizeof(head) ||
	    (w->len && gzwrite(r->gz, w->b, (unsigned)w->len) != (int)w->len)) {
		int e;

		fprintf(stderr,
			"leap-agent: recording: write failed (%s); not recording\n",
			gzerror(r->gz, &e));
		r->failed = true;
	}
}

struct recording *recording_create(const char *path, const struct leap_core_config *cfg,
				   char *err, size_t errlen)
{
	struct recording *r = calloc(1, sizeof(*r));
	struct rec_buf w = {.len = 0};
	int fd;

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		free(r);
		return NULL;
	}
	r->gz = gzdopen(fd, "wb1");
	if (!r->gz) {
		snprintf(err, errlen, "%s: cannot start a gzip stream", path);
		close(fd);
		free(r);
		return NULL;
	}
	gzbuffer(r->gz, 1 << 16);
	gzwrite(r->gz, RECORDING_MAGIC, sizeof(RECORDING_MAGIC));
	put(&w, RECORDING_VERSION, 4);
	put_config(&w, cfg);
	rec_write(r, REC_CONFIG, &w);
	return r;
}

int recording_close(struct recording *r, const struct leap_core_counters *live)
{
	struct rec_buf w = {.len = 0};
	int failed;

	if (!r)
		return 0;
	put(&w, NCOUNTERS, 2);
	for (size_t i = 0; i < NCOUNTERS; i++)
		put(&w, *counter_at((struct leap_core_counters *)live, i), 8);
	rec_write(r, REC_END, &w);
	failed = r->failed;
	if (gzclose(r->gz) != Z_OK && !failed) {
		fprintf(stderr, "leap-agent: recording: closing it failed\n");
		failed = 1;
	}
	free(r);
	return failed ? -1 : 0;
}

void recording_target_add(struct recording *r, uint32_t id,
			  const struct leap_core_policy *p)
{
	struct rec_buf w;

	if (!r)
		return;
	w.len = 0;

	put(&w, id, 4);
	put_policy(&w, p);
	rec_write(r, REC_TARGET_ADD, &w);
}

void recording_target_set(struct recording *r, uint32_t id,
			  const struct leap_core_policy *p)
{
	struct rec_buf w;

	if (!r)
		return;
	w.len = 0;

	put(&w, id, 4);
	put_policy(&w, p);
	rec_write(r, REC_TARGET_SET, &w);
}

void recording_target_remove(struct recording *r, uint32_t id)
{
	struct rec_buf w;

	if (!r)
		return;
	w.len = 0;

	put(&w, id, 4);
	rec_write(r, REC_TARGET_REMOVE, &w);
}

void recording_env(struct recording *r, const struct leap_core_env *env)
{
	struct rec_buf w;

	if (!r)
		return;
	w.len = 0;

	put_env(&w, env);
	rec_write(r, REC_ENV, &w);
}

void recording_event(struct recording *r, uint32_t target, const struct leap_event *ev)
{
	struct rec_buf w;

	if (!r)
		return;
	w.len = 0;

	put(&w, target, 4);
	put_event(&w, ev);
	rec_write(r, REC_EVENT, &w);
}

void recording_spent(struct recording *r, uint32_t target, uint32_t pages, uint64_t ns)
{
	struct rec_buf w;

	if (!r)
		return;
	w.len = 0;

	put(&w, target, 4);
	put(&w, pages, 4);
	put(&w, ns, 8);
	rec_write(r, REC_SPENT, &w);
}

void recording_forget(struct recording *r, uint32_t tgid)
{
	struct rec_buf w;

	if (!r)
		return;
	w.len = 0;

	put(&w, tgid, 4);
	rec_write(r, REC_FORGET, &w);
}

void recording_tick(struct recording *r, uint64_t now_ns)
{
	struct rec_buf w;

	if (!r)
		return;
	w.len = 0;

	put(&w, now_ns, 8);
	rec_write(r, REC_TICK, &w);
}

static bool tap_mapped(void *ctx, uint32_t tgid, uint64_t first, uint32_t n)
{
	struct recording *r = ctx;
	bool yes = r->port->mapped && r->port->mapped(r->port->ctx, tgid, first, n);
	struct rec_buf w = {.len = 0};

	put(&w, tgid, 4);
	put(&w, first, 8);
	put(&w, n, 4);
	put(&w, yes, 1);
	rec_write(r, REC_FACT_MAPPED, &w);
	return yes;
}

static bool tap_shmem(void *ctx, uint32_t tgid, uint64_t page)
{
	struct recording *r = ctx;
	bool yes = r->port->shmem && r->port->shmem(r->port->ctx, tgid, page);
	struct rec_buf w = {.len = 0};

	put(&w, tgid, 4);
	put(&w, page, 8);
	put(&w, yes, 1);
	rec_write(r, REC_FACT_SHMEM, &w);
	return yes;
}

static bool tap_region(void *ctx, uint32_t tgid, uint64_t page, struct leap_region_at *at)
{
	struct recording *r = ctx;
	struct leap_region_at got = {0};
	bool yes = r->port->region && r->port->region(r->port->ctx, tgid, page, &got);
	struct rec_buf w = {.len = 0};

	if (!yes)
		got = (struct leap_region_at){0};
	put(&w, tgid, 4);
	put(&w, page, 8);
	put(&w, yes, 1);
	put(&w, got.id, 8);
	put(&w, got.index, 8);
	put(&w, got.first, 8);
	put(&w, got.end, 8);
	rec_write(r, REC_FACT_REGION, &w);
	*at = got;
	return yes;
}

struct leap_core_facts recording_tap(struct recording *r,
				     const struct leap_core_facts *port)
{
	r->port = port;
	return (struct leap_core_facts){
		.mapped = tap_mapped, .shmem = tap_shmem, .region = tap_region, .ctx = r};
}

/* ---- reading and replaying ----------------------------------------------------------
 */

#define REPLAY_SHMEM_PIDS 16

struct replay {
	gzFile gz;
	struct rec_buf rec;
	enum rec_type type;
	bool pending; /* rec/type read ahead, not handled yet */
	char *err;
	size_t errlen;
	bool failed;
	uint64_t records;
	uint64_t unanswered, unasked;	      /* replay_fact() */
	uint32_t version;		      /* the recording's */
	uint64_t compared[LEAP_CORE_TARGETS]; /* outcome comparisons printed */
	uint32_t shmem_tgid[REPLAY_SHMEM_PIDS];
	bool shmem_answer[REPLAY_SHMEM_PIDS];
};

/* The next record into p->rec; 1, 0 at the end of the file, -1 on error. */
static int next_record(struct replay *p)
{
	uint8_t head[3];
	int n;

	if (p->pending) {
		p->pending = false;
		return 1;
	}
	n = gzread(p->gz, head, sizeof(head));
	if (n == 0)
		return 0;
	if (n != (int)sizeof(head)) {
		snprintf(p->err, p->errlen, "record %" PRIu64 ": truncated header",
			 p->records + 1);
		return -1;
	}
	p->type = (enum rec_type)head[0];
	p->rec.len = (size_t)head[1] | (size_t)head[2] << 8;
	p->rec.at = 0;
	p->rec.short_read = false;
	if (p->type < REC_CONFIG || p->type > REC_LAST || p->rec.len > REC_PAYLOAD_MAX) {
		snprintf(p->err, p->errlen,
			 "record %" PRIu64
			 ": type %u, length %zu: not a recording record",
			 p->records + 1, head[0], p->rec.len);
		return -1;
	}
	if (p->rec.len &&
	    gzread(p->gz, p->rec.b, (unsigned)p->rec.len) != (int)p->rec.len) {
		snprintf(p->err, p->errlen, "record %" PRIu64 ": truncated payload",
			 p->records + 1);
		return -1;
	}
	p->records++;
	return 1;
}

/* The record was shorter than its type's fields, or longer. */
static bool bad_length(struct replay *p)
{
	if (!p->rec.short_read && p->rec.at == p->rec.len)
		return false;
	snprintf(p->err, p->errlen, "record %" PRIu64 " (type %d): length %zu is wrong",
		 p->records, p->type, p->rec.len);
	return true;
}

/* The newest shmem answer the recording gave for a process. */
static bool shmem_seen(const struct replay *p, uint32_t tgid)
{
	for (unsigned i = 0; i < REPLAY_SHMEM_PIDS; i++)
		if (p->shmem_tgid[i] == tgid)
			return p->shmem_answer[i];
	return false;
}

static void shmem_remember(struct replay *p, uint32_t tgid, bool yes)
{
	unsigned i = tgid % REPLAY_SHMEM_PIDS;

	p->shmem_tgid[i] = tgid;
	p->shmem_answer[i] = yes;
}

/*
 * The facts port of a replay: the recording's answer to the question the
 * core asks now.  A core that decides otherwise than the recorded one may
 * ask what was never asked live: such a question is answered as the
 * recording last answered it for that process (shmem) or no (mapped), and
 * counted (unanswered); recorded answers it skips are counted too
 * (unasked).  The replay goes on either way, deterministically.
 */
static bool replay_fact(struct replay *p, enum rec_type type, uint32_t tgid, uint64_t a,
			uint32_t n, struct leap_region_at *at)
{
	for (;;) {
		struct leap_region_at got = {0};
		uint32_t rt, rn = 0;
		uint64_t ra;
		bool yes;
		int rc = p->failed ? -1 : next_record(p);

		if (rc < 0) {
			p->failed = true;
			return false;
		}
		if (rc == 0 || (p->type != REC_FACT_MAPPED && p->type != REC_FACT_SHMEM &&
				p->type != REC_FACT_REGION)) {
			p->pending = rc == 1; /* the next input: not an answer */
			p->unanswered++;
			return type == REC_FACT_SHMEM && shmem_seen(p, tgid);
		}
		rt = (uint32_t)get(&p->rec, 4);
		ra = get(&p->rec, 8);
		if (p->type == REC_FACT_MAPPED)
			rn = (uint32_t)get(&p->rec, 4);
		yes = get(&p->rec, 1);
		if (p->type == REC_FACT_REGION) {
			got.id = get(&p->rec, 8);
			got.index = get(&p->rec, 8);
			got.first = get(&p->rec, 8);
			got.end = get(&p->rec, 8);
		}
		if (bad_length(p)) {
			p->failed = true;
			return false;
		}
		if (p->type == REC_FACT_SHMEM)
			shmem_remember(p, rt, yes);
		if (p->type == type && rt == tgid && ra == a && rn == n) {
			if (at)
				*at = got;
			return yes;
		}
		p->unasked++;
	}
}

static bool replay_mapped(void *ctx, uint32_t tgid, uint64_t first, uint32_t n)
{
	return replay_fact(ctx, REC_FACT_MAPPED, tgid, first, n, NULL);
}

static bool replay_shmem(void *ctx, uint32_t tgid, uint64_t page)
{
	return replay_fact(ctx, REC_FACT_SHMEM, tgid, page, 0, NULL);
}

static bool replay_region(void *ctx, uint32_t tgid, uint64_t page,
			  struct leap_region_at *at)
{
	*at = (struct leap_region_at){0};
	return replay_fact(ctx, REC_FACT_REGION, tgid, page, 0, at);
}

static void print_plan(FILE *f, const struct leap_event *ev,
		       const struct leap_core_plan *pl)
{
	fprintf(f, "plan t=%" PRIu64 " target=%u pid=%u tid=%u page=%" PRIu64 " class=%s",
		(uint64_t)ev->ts_ns, pl->target, ev->tgid, ev->tid,
		(uint64_t)ev->addr >> LEAP_PAGE_SHIFT, leap_class_name(pl->cls));
	if (pl->decided)
		fprintf(f, " decided=%u gate=%s", pl->decided, leap_gate_name(pl->gate));
	if (pl->n)
		fprintf(f, " window=%" PRIu64 "..%" PRIu64 " n=%u%s%s%s", pl->pages[0],
			pl->pages[pl->n - 1], pl->n,
			pl->step.dec.lookahead ? " lookahead" : "",
			pl->step.dec.periodic ? " periodic" : "",
			pl->swept ? " swept" : "");
	if (pl->gap_pages)
		fprintf(f, " gaps=+%u", pl->gap_pages);
	if (pl->n && pl->step.dec.ran)
		fprintf(f, pl->step.dec.trend_found ? " trend=%+" PRId64 : " no-trend",
			pl->step.dec.trend);
	if (pl->step.dec.around_left)
		fputs(" around=kernel", f);
	if (pl->step.ra_gap)
		fprintf(f, " ra_gap=%" PRIu64, pl->step.ra_gap);
	if (pl->step.shmem)
		fputs(" shmem", f);
	if (pl->cold_n)
		fprintf(f, " cold=%" PRIu64 "+%u", pl->cold_first, pl->cold_n);
	if (pl->quiet)
		fprintf(f, " quiet=%s", pl->quiet == LEAP_QUIET_SET ? "set" : "lift");
	fputc('\n', f);
}

/* A held epoch compared (outcome.h): a line each, so a replay shows what
 * the verdict read. */
static void print_epochs(struct replay *p, FILE *f, uint64_t t, uint32_t target,
			 const struct leap_core *core)
{
	const struct leap_outcome *o = leap_core_target_outcome(core, target);

	if (!o || !o->comparisons || o->comparisons == p->compared[target])
		return;
	p->compared[target] = o->comparisons;
	fprintf(f,
		"epoch t=%" PRIu64 " target=%u held=%" PRIu64 "/s around=%" PRIu64
		"/s ratio=%u%% median=%u%% %s\n",
		t, target, o->last_held_rate, o->last_ref_rate,
		o->ratio_pct[o->n_ratios - 1], o->median_pct,
		leap_outcome_verdict_name(o->verdict));
}

static void print_verdict(FILE *f, uint64_t t, uint32_t target,
			  enum leap_verdict_change v, const struct leap_core *core)
{
	const struct leap_cost *c = leap_core_target_cost(core, target);

	fprintf(f, "verdict t=%" PRIu64 " target=%u %s: %s\n", t, target,
		leap_verdict_change_name(v), c ? c->why : "");
}

/* A target's policy as the replay runs it: the record's, with the
 * replay's lanes in place of the recorded ones where it gives them. */
static void replay_policy(struct replay *p, const struct replay_opts *o,
			  struct leap_core_policy *pol)
{
	get_policy(&p->rec, pol, p->version);
	if (o->lanes)
		pol->params.lanes = o->lanes;
}

/* One record, applied to the core. */
static int replay_one(struct replay *p, struct leap_core *core,
		      const struct replay_opts *o, struct replay_result *res)
{
	struct leap_core_facts port = {.mapped = replay_mapped,
				       .shmem = replay_shmem,
				       .region = replay_region,
				       .ctx = p};
	struct leap_core_policy pol;
	struct leap_core_env env;
	struct leap_event ev;
	const struct leap_core_plan *pl;
	uint32_t id, pages, changed[LEAP_CORE_TARGETS], n;
	enum leap_verdict_change how[LEAP_CORE_TARGETS];
	uint64_t v;

	switch (p->type) {
	case REC_TARGET_ADD:
		id = (uint32_t)get(&p->rec, 4);
		replay_policy(p, o, &pol);
		if (bad_length(p))
			return -1;
		if (leap_core_target_add(core, &pol) != id) {
			snprintf(p->err, p->errlen,
				 "record %" PRIu64 ": target %u not given id %u",
				 p->records, id, id);
			return -1;
		}
		return 0;
	case REC_TARGET_SET:
		id = (uint32_t)get(&p->rec, 4);
		replay_policy(p, o, &pol);
		if (bad_length(p))
			return -1;
		leap_core_target_set(core, id, &pol);
		return 0;
	case REC_TARGET_REMOVE:
		id = (uint32_t)get(&p->rec, 4);
		if (bad_length(p))
			return -1;
		leap_core_target_remove(core, id);
		return 0;
	case REC_ENV:
		get_env(&p->rec, &env);
		if (bad_length(p))
			return -1;
		leap_core_set_env(core, &env);
		return 0;
	case REC_EVENT:
		id = (uint32_t)get(&p->rec, 4);
		get_event(&p->rec, &ev, p->version);
		if (bad_length(p))
			return -1;
		pl = leap_core_event(core, id, &ev, &port);
		if (p->failed)
			return -1;
		if (o->plans && (pl->decided || pl->cold_n || pl->quiet || pl->verdict ||
				 pl->step.dec.around_left))
			print_plan(o->out, &ev, pl);
		if (pl->target != LEAP_CORE_NO_TARGET)
			print_epochs(p, o->out, (uint64_t)ev.ts_ns, pl->target, core);
		if (pl->verdict) {
			res->verdicts++;
			print_verdict(o->out, (uint64_t)ev.ts_ns, pl->target, pl->verdict,
				      core);
		}
		return 0;
	case REC_SPENT:
		id = (uint32_t)get(&p->rec, 4);
		pages = (uint32_t)get(&p->rec, 4);
		v = get(&p->rec, 8);
		if (bad_length(p))
			return -1;
		leap_core_spent(core, id, pages, v);
		return 0;
	case REC_FORGET:
		id = (uint32_t)get(&p->rec, 4);
		if (bad_length(p))
			return -1;
		leap_core_forget(core, id);
		return 0;
	case REC_TICK:
		v = get(&p->rec, 8);
		if (bad_length(p))
			return -1;
		n = leap_core_tick(core, v, changed, how);
		for (id = 0; id < LEAP_CORE_TARGETS; id++)
			print_epochs(p, o->out, v, id, core);
		for (uint32_t i = 0; i < n; i++) {
			res->verdicts++;
			print_verdict(o->out, v, changed[i], how[i], core);
		}
		return 0;
	case REC_END:
		n = (uint32_t)get(&p->rec, 2);
		for (size_t i = 0; i < NCOUNTERS && i < n; i++)
			*counter_at(&res->live, i) = get(&p->rec, 8);
		for (size_t i = NCOUNTERS; i < n; i++)
			get(&p->rec, 8); /* a newer writer's counters */
		if (bad_length(p))
			return -1;
		res->has_live = true;
		return 0;
	default: /* an answer the core did not ask for */
		p->unasked++;
		return 0;
	}
}

/* The header: magic, version, config; the core made from it. */
static struct leap_core *replay_begin(struct replay *p, const struct replay_opts *o)
{
	char magic[sizeof(RECORDING_MAGIC)];
	struct leap_core_config cfg;
	struct leap_core *core;
	uint32_t version;

	if (gzread(p->gz, magic, sizeof(magic)) != (int)sizeof(magic) ||
	    memcmp(magic, RECORDING_MAGIC, sizeof(magic))) {
		snprintf(p->err, p->errlen, "not a leap-agent recording");
		return NULL;
	}
	if (next_record(p) != 1 || p->type != REC_CONFIG) {
		if (!*p->err)
			snprintf(p->err, p->errlen, "no configuration record");
		return NULL;
	}
	version = (uint32_t)get(&p->rec, 4);
	if (version < 1 || version > RECORDING_VERSION) {
		snprintf(p->err, p->errlen,
			 "recording version %u, this agent reads 1 to %d", version,
			 RECORDING_VERSION);
		return NULL;
	}
	p->version = version;
	get_config(&p->rec, &cfg, version);
	if (bad_length(p))
		return NULL;
	if (o->no_sweeps)
		cfg.sweeps = false;
	if (o->events_only)
		cfg.outcome_swap_cache = false;
	core = leap_core_new(&cfg);
	if (!core) {
		snprintf(p->err, p->errlen,
			 "the recording's configuration is not usable");
		return NULL;
	}
	fprintf(o->out,
		"config: streams=%u hold_all=%d backend=%d pushes_only=%d cold_chunk=%u "
		"kra_trust=%u%s\n",
		cfg.streams, cfg.hold_all, cfg.backend, cfg.pushes_only, cfg.cold_chunk,
		cfg.kra_trust, cfg.sweeps ? " sweeps=1" : "");
	return core;
}

int recording_replay(const char *path, const struct replay_opts *o,
		     struct replay_result *res, char *err, size_t errlen)
{
	struct replay p = {.err = err, .errlen = errlen};
	struct leap_core *core;
	int rc = 0;

	memset(res, 0, sizeof(*res));
	*err = '\0';
	p.gz = gzopen(path, "rb");
	if (!p.gz) {
		snprintf(err, errlen, "%s: %s", path,
			 errno ? strerror(errno) : "cannot open");
		return -1;
	}
	core = replay_begin(&p, o);
	if (!core) {
		gzclose(p.gz);
		return -1;
	}
	while ((rc = next_record(&p)) == 1)
		if (replay_one(&p, core, o, res)) {
			rc = -1;
			break;
		}
	res->counters = *leap_core_counters(core);
	res->records = p.records;
	res->unanswered = p.unanswered;
	res->unasked = p.unasked;
	leap_core_free(core);
	gzclose(p.gz);
	return rc < 0 ? -1 : 0;
}

int recording_report(const char *path, const struct replay_opts *o, bool *same, char *err,
		     size_t errlen)
{
	struct replay_result res;
	FILE *f = o->out;

	*same = false;
	if (recording_replay(path, o, &res, err, errlen))
		return -1;
	fprintf(f, "records: %" PRIu64 "  verdict changes: %" PRIu64 "\n", res.records,
		res.verdicts);
	recording_print_counters(f, "replay", &res.counters);
	if (res.unanswered || res.unasked)
		fprintf(f,
			"questions of the core the recording did not answer: %" PRIu64
			"; recorded answers not asked for: %" PRIu64 "\n",
			res.unanswered, res.unasked);
	if (!res.has_live) {
		fprintf(f, "live: not recorded (the agent did not stop cleanly)\n");
		return 0;
	}
	recording_print_counters(f, "live", &res.live);
	*same = res.live.windows == res.counters.windows &&
		res.live.pages == res.counters.pages && !res.unanswered && !res.unasked;
	fprintf(f, "windows and pages: %s the live run's\n",
		*same ? "the same as" : "NOT");
	return 0;
}
