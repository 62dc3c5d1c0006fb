// SPDX-License-Identifier: MIT
/* Windows issued by a pool of workers (issuer.h). */
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "issuer.h"

struct job_queue {
	struct window_job *head, *tail;
	uint32_t len;
	uint32_t in_hand;   /* its windows a worker has taken, not finished */
	uint64_t submit_ns; /* its newest window's arrival */
};

/* A token bucket: pages per second, a second's worth at most. */
struct bucket {
	double rate; /* 0: unlimited */
	double tokens;
	uint64_t at_ns;
};

struct worker {
	pthread_t thread;
	struct issuer *q;
	struct prefetcher pf; /* its own process cache and counters */
	struct placement at;  /* the CPU it issues on */
	uint64_t busy_ns;
	bool started;
};

struct issuer {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop;
	struct job_queue queue[LEAP_STATS_SLOTS];
	struct bucket slot_budget[LEAP_STATS_SLOTS];
	struct bucket host_budget;
	uint32_t rr; /* the slot served next */
	struct window_job *free_jobs;
	struct window_job jobs[ISSUER_JOBS];
	struct issuer_counters c;
	issuer_issue_fn issue;
	issuer_cold_fn cold;
	issuer_done_fn done;
	void *ctx;
	unsigned nworkers;
	bool follow_cpu;      /* issuer_config.follow_cpu */
	uint32_t queue_depth; /* per target, 1..ISSUER_QUEUE_MAX */
	uint64_t active_ns;   /* issuer_config.active_ns */
	/* Each stream's progress (issuer_progress()): PROGRESS_GEN_BITS of its
	 * generation over PROGRESS_PAGE_BITS of its newest page. */
	uint64_t *progress;
	uint32_t nprogress;
	struct worker w[ISSUER_WORKERS_MAX];
};

/* A user page number fits 44 bits (57-bit addresses with 5-level paging). */
#define PROGRESS_PAGE_BITS 44
#define PROGRESS_GEN_BITS  (64 - PROGRESS_PAGE_BITS)
#define PROGRESS_PAGE_MASK ((1ULL << PROGRESS_PAGE_BITS) - 1)

static uint64_t progress_pack(uint32_t gen, uint64_t page)
{
	return (uint64_t)gen << PROGRESS_PAGE_BITS | (page & PROGRESS_PAGE_MASK);
}

void issuer_progress(struct issuer *q, struct leap_stream_ref stream, uint64_t page)
{
	if (stream.id < q->nprogress)
		__atomic_store_n(&q->progress[stream.id], progress_pack(stream.gen, page),
				 __ATOMIC_RELEASE);
}

/*
 * The CPUs this process may run on.  A fixed cpu_set_t (1,024 CPUs) is
 * refused with EINVAL where the kernel's possible CPUs are more than
 * that (kernel/sched/syscalls.c sched_getaffinity: the mask must hold
 * nr_cpu_ids bits), as on a 16-CPU VM with thousands of possible ones:
 * grow the mask until it fits.
 */
static int usable_cpus(void)
{
	for (int n = 1024; n <= 1 << 20; n *= 2) {
		cpu_set_t *set = CPU_ALLOC(n);
		size_t size = CPU_ALLOC_SIZE(n);
		int got = -1;

		if (!set)
			break;
		if (sched_getaffinity(0, size, set) == 0)
			got = CPU_COUNT_S(size, set);
		CPU_FREE(set);
		if (got > 0)
			return got;
		if (errno != EINVAL)
			break;
	}
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

unsigned issuer_default_workers(void)
{
	int cpus = usable_cpus();

	/* Below 4 CPUs a worker only adds a hand-off to each window: the
	 * event thread issues them (measured on 2: CPython's strided scan
	 * 2.02 s against 1.92, Perl's 1.76 against 1.67, medians of 4). */
	if (cpus < 4)
		return 0;
	cpus /= 4;
	return cpus > 8 ? 8 : (unsigned)cpus;
}

static void put_job(struct issuer *q, struct window_job *j)
{
	j->next = q->free_jobs;
	q->free_jobs = j;
}

/*
 * How many workers one target may hold at once: all of them while it is
 * the only active target, else an even share, at least one.  Without a
 * share, one target's windows could take every worker, and another's
 * next window wait behind calls that sleep in memcg reclaim (5-13 ms
 * each).  A target held at its share keeps its windows queued, where
 * they coalesce.  Measured neutral on 2 and 16 CPUs at 2-8 programs
 * (docs/bench-real.md): there the calls themselves, not the sharing,
 * set the dispatch time.
 */
static uint32_t share_of(const struct issuer *q, uint64_t now)
{
	uint32_t active = 0;

	for (uint32_t k = 0; k < LEAP_STATS_SLOTS; k++) {
		const struct job_queue *jq = &q->queue[k];

		active += jq->head || jq->in_hand ||
			  (jq->submit_ns && now - jq->submit_ns < q->active_ns);
	}
	if (active <= 1)
		return q->nworkers;
	return q->nworkers / active ? q->nworkers / active : 1;
}

/*
 * The next job, round-robin over the targets' queues, from a target
 * under its share of the workers; NULL if none.
 */
static struct window_job *take(struct issuer *q)
{
	uint32_t share = q->stop ? UINT32_MAX : 0; /* 0: not counted yet */

	for (uint32_t i = 0; i < LEAP_STATS_SLOTS; i++) {
		uint32_t k = (q->rr + i) % LEAP_STATS_SLOTS;
		struct job_queue *jq = &q->queue[k];
		struct window_job *j = jq->head;

		if (!j)
			continue;
		/* A share is at least one: counting the active targets (a
		 * pass over every queue) waits for a target already in hand. */
		if (jq->in_hand && !share)
			share = share_of(q, mono_ns());
		if (jq->in_hand && jq->in_hand >= share)
			continue;
		jq->head = j->next;
		if (!jq->head)
			jq->tail = NULL;
		jq->len--;
		q->c.depth--;
		q->rr = (k + 1) % LEAP_STATS_SLOTS;
		return j;
	}
	return NULL;
}

/*
 * Windows of the same process queued right behind j join it, as far as
 * one call takes: the kernel merges them into the same runs anyway.
 */
static void coalesce(struct issuer *q, struct window_job *j)
{
	struct job_queue *jq = &q->queue[j->slot];

	if (j->cold)
		return;
	while (jq->head && jq->head->tgid == j->tgid && !jq->head->cold &&
	       j->n + jq->head->n <= LEAP_PREFETCH_MAX_PAGES) {
		struct window_job *next = jq->head;

		memcpy(j->pages + j->n, next->pages, next->n * sizeof(*next->pages));
		j->n += next->n;
		j->marker = next->marker; /* the newest window's look-ahead page */
		jq->head = next->next;
		if (!jq->head)
			jq->tail = NULL;
		jq->len--;
		q->c.depth--;
		q->c.coalesced++;
		put_job(q, next);
	}
}

/* Takes up to want pages from b; what it may take. */
static uint32_t bucket_take(struct bucket *b, uint32_t want, uint64_t now)
{
	double got;

	if (b->rate <= 0)
		return want;
	b->tokens += (double)(now - b->at_ns) / 1e9 * b->rate;
	if (b->tokens > b->rate)
		b->tokens = b->rate;
	b->at_ns = now;
	got = b->tokens < want ? b->tokens : want;
	if (got < 0)
		got = 0;
	b->tokens -= (uint32_t)got;
	return (uint32_t)got;
}

/*
 * Drops the pages the program already faulted past: behind the stream's
 * newest fault, in the window's direction.  Their fault came and went;
 * prefetching them now only costs.
 */
static void trim_stale(const struct issuer *q, struct window_job *j)
{
	uint64_t last, v;
	uint32_t k = 0;
	bool up;

	if (j->cold || !j->has_stream || j->n < 2 || j->stream.id >= q->nprogress)
		return;
	v = __atomic_load_n(&q->progress[j->stream.id], __ATOMIC_ACQUIRE);
	/* Another stream holds the slot now (or the value is older than the
	 * window: never, the deciding thread stores it first). */
	if (v >> PROGRESS_PAGE_BITS != (j->stream.gen & ((1u << PROGRESS_GEN_BITS) - 1)))
		return;
	last = v & PROGRESS_PAGE_MASK;
	up = j->pages[j->n - 1] > j->pages[0];
	for (uint32_t i = 0; i < j->n; i++)
		if (up ? j->pages[i] > last : j->pages[i] < last)
			j->pages[k++] = j->pages[i];
	j->n = k;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct issuer *q = w->q;

	placement_init(&w->at, q->follow_cpu);
	pthread_mutex_lock(&q->lock);
	while (!q->stop) {
		struct window_job *j = take(q);
		uint32_t want, allowed;
		uint64_t t0, cpu0;
		int rc = 0;

		if (!j) {
			pthread_cond_wait(&q->wake, &q->lock);
			continue;
		}
		q->c.in_hand++;
		q->queue[j->slot].in_hand++;
		coalesce(q, j);
		want = j->n;
		trim_stale(q, j);
		if (j->n < want)
			q->c.stale_pages += want - j->n;
		q->c.stale += j->n == 0;
		t0 = mono_ns();
		/* Budgets are for the pages a window reads, not for those a
		 * fill is done with. */
		allowed = j->n;
		if (!j->cold) {
			allowed = bucket_take(&q->slot_budget[j->slot], allowed, t0);
			allowed = bucket_take(&q->host_budget, allowed, t0);
		}
		if (allowed < j->n) {
			q->c.budget_pages += j->n - allowed;
			j->n = allowed;
		}
		pthread_mutex_unlock(&q->lock);

		if (j->n)
			placement_move(&w->at, j->cpu);
		cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		w->pf.dispatch_ns = 0;
		if (j->n && j->cold)
			rc = q->cold(&w->pf, j->tgid, j->pages[0], j->n);
		else if (j->n)
			rc = q->issue(&w->pf, j->tgid, j->pages, j->n, j->marker);
		j->dispatch_ns = w->pf.dispatch_ns;
		if (q->done)
			q->done(q->ctx, j, rc, clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0);

		pthread_mutex_lock(&q->lock);
		if (j->n && !j->cold)
			q->c.issued++;
		w->busy_ns += mono_ns() - t0;
		q->c.in_hand--;
		q->queue[j->slot].in_hand--;
		put_job(q, j);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

struct issuer *issuer_start(const struct issuer_config *cfg)
{
	struct issuer *q;
	int err = 0;

	if (cfg->workers < 1 || cfg->workers > ISSUER_WORKERS_MAX ||
	    cfg->queue_depth > ISSUER_QUEUE_MAX) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->wake, NULL);
	for (int i = 0; i < ISSUER_JOBS; i++)
		put_job(q, &q->jobs[i]);
	q->queue_depth = cfg->queue_depth ? cfg->queue_depth : ISSUER_QUEUE_MAX;
	q->active_ns = cfg->active_ns ? cfg->active_ns : ISSUER_ACTIVE_NS;
	q->host_budget.rate = cfg->host_rate;
	q->host_budget.tokens = cfg->host_rate;
	q->issue = cfg->issue ? cfg->issue : prefetch_pages;
	q->cold = cfg->cold ? cfg->cold : prefetch_cold;
	q->done = cfg->done;
	q->ctx = cfg->ctx;
	q->follow_cpu = cfg->follow_cpu;
	if (cfg->streams) {
		q->progress = calloc(cfg->streams, sizeof(*q->progress));
		if (!q->progress) {
			issuer_stop(q);
			errno = ENOMEM;
			return NULL;
		}
		q->nprogress = cfg->streams;
	}
	for (unsigned i = 0; i < cfg->workers && !err; i++) {
		struct worker *w = &q->w[i];

		prefetch_init(&w->pf, cfg->like->procs);
		w->pf.records = cfg->like->records;
		w->pf.issued = cfg->like->issued;
		w->pf.regions = cfg->like->regions;
		w->pf.recent = cfg->like->recent;
		w->q = q;
		err = pthread_create(&w->thread, NULL, worker_main, w);
		w->started = err == 0;
		q->nworkers += w->started;
	}
	if (err) {
		issuer_stop(q);
		errno = err;
		return NULL;
	}
	return q;
}

void issuer_stop(struct issuer *q)
{
	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	q->stop = true;
	/* Queued windows are discarded: a stopping agent issues nothing more. */
	while (take(q))
		;
	pthread_cond_broadcast(&q->wake);
	pthread_mutex_unlock(&q->lock);
	for (unsigned i = 0; i < ISSUER_WORKERS_MAX; i++)
		if (q->w[i].started)
			pthread_join(q->w[i].thread, NULL);
	free(q->progress);
	pthread_cond_destroy(&q->wake);
	pthread_mutex_destroy(&q->lock);
	free(q);
}

bool issuer_submit(struct issuer *q, const struct window_job *job)
{
	struct job_queue *jq;
	struct window_job *j;
	uint32_t slot = job->slot < LEAP_STATS_SLOTS ? job->slot : 0;

	pthread_mutex_lock(&q->lock);
	jq = &q->queue[slot];
	if (jq->len >= q->queue_depth) {
		/* The oldest window of a target that outruns the workers is
		 * the stalest: it goes. */
		struct window_job *old = jq->head;

		jq->head = old->next;
		if (!jq->head)
			jq->tail = NULL; /* a queue of one: old was its tail too */
		jq->len--;
		q->c.depth--;
		q->c.overflow++;
		q->c.overflow_slot[slot]++;
		put_job(q, old);
	}
	j = q->free_jobs;
	if (!j) {
		q->c.pool_empty++;
		pthread_mutex_unlock(&q->lock);
		return false;
	}
	q->free_jobs = j->next;
	memcpy(j, job,
	       offsetof(struct window_job, pages) +
		       (job->cold ? 1 : job->n) * sizeof(*job->pages));
	j->slot = slot;
	j->next = NULL;
	if (jq->tail)
		jq->tail->next = j;
	else
		jq->head = j;
	jq->tail = j;
	jq->len++;
	jq->submit_ns = mono_ns();
	if (j->cold)
		q->c.cold_jobs++;
	else
		q->c.queued++;
	if (++q->c.depth > q->c.max_depth)
		q->c.max_depth = q->c.depth;
	pthread_cond_signal(&q->wake);
	pthread_mutex_unlock(&q->lock);
	return true;
}

void issuer_set_rate(struct issuer *q, uint32_t slot, double rate)
{
	if (slot >= LEAP_STATS_SLOTS)
		return;
	pthread_mutex_lock(&q->lock);
	if (q->slot_budget[slot].rate != rate) {
		q->slot_budget[slot].rate = rate;
		q->slot_budget[slot].tokens = rate;
	}
	pthread_mutex_unlock(&q->lock);
}

void issuer_counters(struct issuer *q, struct issuer_counters *c,
		     struct prefetch_stats *pf, struct pagemap_reader *pm)
{
	memset(pf, 0, sizeof(*pf));
	memset(pm, 0, sizeof(*pm));
	pthread_mutex_lock(&q->lock);
	*c = q->c;
	c->busy_ns = 0;
	for (unsigned i = 0; i < q->nworkers; i++) {
		const struct prefetch_stats *s = &q->w[i].pf.stats;

		c->busy_ns += q->w[i].busy_ns;
		c->worker_busy_ns[i] = q->w[i].busy_ns;
		c->cpu_moves += q->w[i].at.moves;
		prefetch_stats_add(pf, s);
		pm->scans += q->w[i].pf.pagemap.scans;
		pm->reads += q->w[i].pf.pagemap.reads;
	}
	pthread_mutex_unlock(&q->lock);
}

unsigned issuer_workers(const struct issuer *q)
{
	return q ? q->nworkers : 0;
}
