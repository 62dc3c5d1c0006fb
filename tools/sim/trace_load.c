// SPDX-License-Identifier: MIT
/* Loads a trace and turns it into the dense, sorted form of trace_load.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "trace_load.h"

/* Raw events as read; freed once the dense form is built. */
struct raw {
	uint64_t *page;
	uint32_t *pid, *tid;
	uint64_t n, cap;
};

__attribute__((format(printf, 3, 4))) static int seterr(char *err, size_t len,
							const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

static int raw_push(struct raw *r, uint64_t page, uint32_t pid, uint32_t tid)
{
	if (r->n == r->cap) {
		/* Doubling: amortised O(1), a handful of reallocs per trace. */
		uint64_t cap = r->cap ? r->cap * 2 : 4096;
		uint64_t *p = realloc(r->page, cap * sizeof(*p));

		if (!p)
			return -1;
		r->page = p;
		uint32_t *a = realloc(r->pid, cap * sizeof(*a));

		if (!a)
			return -1;
		r->pid = a;
		a = realloc(r->tid, cap * sizeof(*a));
		if (!a)
			return -1;
		r->tid = a;
		r->cap = cap;
	}
	r->page[r->n] = page;
	r->pid[r->n] = pid;
	r->tid[r->n] = tid;
	r->n++;
	return 0;
}

static void raw_free(struct raw *r)
{
	free(r->page);
	free(r->pid);
	free(r->tid);
	memset(r, 0, sizeof(*r));
}

static int cmp_page(const void *a, const void *b)
{
	const struct sim_page *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->page != y->page)
		return x->page < y->page ? -1 : 1;
	return 0;
}

static int cmp_thread(const void *a, const void *b)
{
	const struct sim_thread *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return 0;
}

/* Sorts and removes duplicates in place; returns the new count. */
static size_t sort_unique(void *base, size_t n, size_t size,
			  int (*cmp)(const void *, const void *))
{
	char *b = base;
	size_t out = 0;

	if (n == 0)
		return 0;
	qsort(base, n, size, cmp);
	for (size_t i = 1; i < n; i++) {
		if (cmp(b + out * size, b + i * size) != 0) {
			out++;
			if (out != i)
				memcpy(b + out * size, b + i * size, size);
		}
	}
	return out + 1;
}

static int build(struct sim_trace *t, const struct raw *r, char *err, size_t errlen)
{
	uint64_t n = r->n;

	memset(t, 0, sizeof(*t));
	if (n == 0)
		return seterr(err, errlen, "trace has no accesses");
	if (n > UINT32_MAX)
		return seterr(err, errlen, "trace too long (%llu accesses)",
			      (unsigned long long)n);
	t->nevents = n;
	t->ev_page = malloc(n * sizeof(*t->ev_page));
	t->ev_thread = malloc(n * sizeof(*t->ev_thread));
	t->pages = malloc(n * sizeof(*t->pages));
	t->threads = malloc(n * sizeof(*t->threads));
	if (!t->ev_page || !t->ev_thread || !t->pages || !t->threads)
		goto nomem;
	for (uint64_t i = 0; i < n; i++) {
		t->pages[i] = (struct sim_page){.page = r->page[i], .pid = r->pid[i]};
		t->threads[i] = (struct sim_thread){.pid = r->pid[i], .tid = r->tid[i]};
	}
	t->npages = (uint32_t)sort_unique(t->pages, n, sizeof(*t->pages), cmp_page);
	t->nthreads =
		(uint32_t)sort_unique(t->threads, n, sizeof(*t->threads), cmp_thread);
	/* Shrinking cannot fail in practice; keep the old block if it does. */
	void *p = realloc(t->pages, t->npages * sizeof(*t->pages));

	if (p)
		t->pages = p;
	p = realloc(t->threads, t->nthreads * sizeof(*t->threads));
	if (p)
		t->threads = p;

	/* Processes: both arrays are sorted by pid first. */
	t->pid_first = malloc((t->nthreads + 1) * sizeof(*t->pid_first));
	if (!t->pid_first)
		goto nomem;
	uint32_t pidx = 0, j = 0;

	for (uint32_t i = 0; i < t->nthreads; i++) {
		if (i > 0 && t->threads[i].pid != t->threads[i - 1].pid)
			pidx++;
		t->threads[i].pidx = pidx;
	}
	t->npids = pidx + 1;
	for (uint32_t i = 0; i < t->npages; i++) {
		if (i > 0 && t->pages[i].pid != t->pages[i - 1].pid)
			j++;
		t->pages[i].pidx = j;
	}
	for (uint32_t i = t->npages; i-- > 0;)
		t->pid_first[t->pages[i].pidx] = i;
	t->pid_first[t->npids] = t->npages;

	uint32_t last_thread = 0;

	for (uint64_t i = 0; i < n; i++) {
		struct sim_thread tk = {.pid = r->pid[i], .tid = r->tid[i]};
		struct sim_page pk = {.pid = r->pid[i], .page = r->page[i]};
		struct sim_page *pg;

		/* Consecutive events of one thread are the common case. */
		if (cmp_thread(&tk, &t->threads[last_thread]) != 0) {
			struct sim_thread *th = bsearch(&tk, t->threads, t->nthreads,
							sizeof(*t->threads), cmp_thread);

			last_thread = (uint32_t)(th - t->threads);
		}
		pg = bsearch(&pk, t->pages, t->npages, sizeof(*t->pages), cmp_page);
		t->ev_thread[i] = last_thread;
		t->ev_page[i] = (uint32_t)(pg - t->pages);
	}
	return 0;
nomem:
	sim_trace_free(t);
	return seterr(err, errlen, "out of memory for %llu accesses",
		      (unsigned long long)n);
}

int sim_trace_load(struct sim_trace *t, FILE *f, const char *name,
		   enum leap_trace_format fmt, char *err, size_t errlen)
{
	struct leap_trace_reader rd;
	struct leap_trace_rec rec;
	struct raw raw = {0};
	int rc;

	memset(t, 0, sizeof(*t));
	if (leap_trace_reader_open(&rd, f, name, fmt)) {
		seterr(err, errlen, "%s", rd.err);
		leap_trace_reader_close(&rd);
		return -1;
	}
	while ((rc = leap_trace_read(&rd, &rec)) == 1) {
		if (raw_push(&raw, rec.page, rec.pid, rec.tid)) {
			rc = -1;
			snprintf(rd.err, sizeof(rd.err), "%s: out of memory", name);
			break;
		}
	}
	if (rc < 0) {
		seterr(err, errlen, "%s", rd.err);
		leap_trace_reader_close(&rd);
		raw_free(&raw);
		return -1;
	}
	leap_trace_reader_close(&rd);
	rc = build(t, &raw, err, errlen);
	if (rc && raw.n == 0)
		seterr(err, errlen, "%s: trace has no accesses", name);
	raw_free(&raw);
	return rc;
}

int sim_trace_from_records(struct sim_trace *t, const struct leap_trace_rec *recs,
			   uint64_t n, char *err, size_t errlen)
{
	struct raw raw = {0};
	int rc;

	for (uint64_t i = 0; i < n; i++) {
		if (raw_push(&raw, recs[i].page, recs[i].pid, recs[i].tid)) {
			raw_free(&raw);
			return seterr(err, errlen, "out of memory");
		}
	}
	rc = build(t, &raw, err, errlen);
	raw_free(&raw);
	return rc;
}

void sim_trace_free(struct sim_trace *t)
{
	free(t->ev_page);
	free(t->ev_thread);
	free(t->pages);
	free(t->threads);
	free(t->pid_first);
	memset(t, 0, sizeof(*t));
}

static int cmp_page_number(const void *key, const void *elem)
{
	uint64_t k = *(const uint64_t *)key, e = ((const struct sim_page *)elem)->page;

	return k < e ? -1 : k > e;
}

uint32_t sim_trace_find(const struct sim_trace *t, uint32_t pidx, uint64_t page)
{
	uint32_t lo = t->pid_first[pidx], hi = t->pid_first[pidx + 1];
	const struct sim_page *pg = bsearch(&page, t->pages + lo, hi - lo,
					    sizeof(*t->pages), cmp_page_number);

	return pg ? (uint32_t)(pg - t->pages) : SIM_NONE;
}
