// SPDX-License-Identifier: MIT
/*
 * leap-workload: a synthetic, self-verifying memory workload for swap tests
 * and benchmarks.
 *
 * It maps an anonymous footprint, fills every page with data derived from
 * (page index, seed, generation) plus a checksum, then runs the measured
 * passes in a chosen access order: every access reads the whole page and
 * verifies it, and on every other pass (by default) rewrites one word with a
 * new generation so dirty pages go back to swap.  Any mismatch is data
 * corruption: the run exits 3.  Wall time covers only the measured passes.
 *
 * Page layout (W = page size / 8 words):
 *   w[0]      tag: "LEAP" << 32 | page index   (catches misplaced pages)
 *   w[1]      seed                             (catches foreign data)
 *   w[2]      generation                       (catches lost writes)
 *   w[3..W-2] pseudo-random payload from (seed, page)
 *   w[W-1]    checksum: sum of mix(w[j], j) over j < W-1
 * The sum of bijections lets a rewrite of w[2] update the checksum in O(1);
 * any single-word change is always detected.
 *
 * Exit status: 0 ok, 1 bad usage, 2 runtime failure, 3 checksum errors.
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "leap/size.h"

#define EXIT_USAGE     1
#define EXIT_RUNTIME   2
#define EXIT_CORRUPT   3
#define TAG_MAGIC      0x4C454150ULL /* "LEAP" */
#define MAX_THREADS    1024
#define MAX_ERR_REPORT 5

enum pattern_kind {
	PAT_SEQ,
	PAT_REVERSE,
	PAT_STRIDE,
	PAT_RANDOM,
	PAT_PHASE,
	PAT_INTERLEAVE,
};

struct config {
	enum pattern_kind kind;
	unsigned long stride;
	char pattern[64];
	uint64_t footprint;
	unsigned long passes;
	unsigned long threads;
	bool threads_set;
	uint64_t seed;
	unsigned long oracle;
	bool json;
	uint64_t compute_ns;
	unsigned long segment;
	unsigned long write_every;
	bool self_test_corrupt;
	const char *ready_file;
	const char *wait_file;
	bool shared; /* MAP_SHARED | MAP_ANONYMOUS: shmem pages */
};

static struct config cfg = {
	.passes = 1,
	.threads = 1,
	.seed = 1,
	.segment = 1024,
	.write_every = 2,
};

/* ---- shared run state ---------------------------------------------------- */

static uint64_t *base;	       /* the footprint */
static size_t page_size;       /* bytes */
static size_t words;	       /* 64-bit words per page */
static size_t npages;	       /* pages in the footprint */
static uint32_t *order;	       /* access order of the current pass */
static uint32_t *expected_gen; /* generation each page should hold */
static unsigned long cur_pass; /* pass being run */
static pthread_barrier_t start_bar, end_bar;
static atomic_ulong errors;
static atomic_ulong accesses;
static atomic_ulong oracle_calls;
static atomic_ulong oracle_failures;

/* ---- hashing ------------------------------------------------------------- */

static inline uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* A bijection of x for each position j (odd multiplier). */
static inline uint64_t mix(uint64_t x, uint64_t j)
{
	return (x ^ (j * 0x9E3779B97F4A7C15ULL)) * 0xFF51AFD7ED558CCDULL;
}

static inline uint64_t page_tag(size_t page)
{
	return (TAG_MAGIC << 32) | (uint64_t)page;
}

static inline uint64_t *page_ptr(size_t page)
{
	return base + page * words;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- fill and verify ----------------------------------------------------- */

static void fill_page(size_t page)
{
	uint64_t *w = page_ptr(page);
	uint64_t s = cfg.seed * 0xD1B54A32D192ED03ULL ^ (uint64_t)page;
	uint64_t sum = 0;

	w[0] = page_tag(page);
	w[1] = cfg.seed;
	w[2] = 0;
	for (size_t j = 3; j < words - 1; j++)
		w[j] = splitmix64(&s);
	for (size_t j = 0; j < words - 1; j++)
		sum += mix(w[j], j);
	w[words - 1] = sum;
	expected_gen[page] = 0;
}

static void report_error(size_t page, const char *what, uint64_t got, uint64_t want)
{
	unsigned long n = atomic_fetch_add(&errors, 1) + 1;

	if (n <= MAX_ERR_REPORT)
		fprintf(stderr,
			"leap-workload: CORRUPT page %zu (pass %lu): %s got 0x%" PRIx64
			" want 0x%" PRIx64 "\n",
			page, cur_pass, what, got, want);
	else if (n == MAX_ERR_REPORT + 1)
		fprintf(stderr, "leap-workload: further corruption reports suppressed\n");
}

/* Reads and verifies one page; optionally bumps its generation. */
static void access_page(size_t page, bool write)
{
	uint64_t *w = page_ptr(page);
	uint64_t sum = 0;

	for (size_t j = 0; j < words - 1; j++)
		sum += mix(w[j], j);
	if (sum != w[words - 1])
		report_error(page, "checksum", sum, w[words - 1]);
	else if (w[0] != page_tag(page))
		report_error(page, "tag", w[0], page_tag(page));
	else if (w[1] != cfg.seed)
		report_error(page, "seed", w[1], cfg.seed);
	else if (w[2] != expected_gen[page])
		report_error(page, "generation", w[2], expected_gen[page]);

	if (write) {
		uint64_t gen = (uint64_t)expected_gen[page] + 1;

		w[words - 1] = w[words - 1] - mix(w[2], 2) + mix(gen, 2);
		w[2] = gen;
		expected_gen[page] = (uint32_t)gen;
	}
}

/* ---- access orders ------------------------------------------------------- */

static void order_seq(uint32_t *o, size_t lo, size_t n)
{
	for (size_t i = 0; i < n; i++)
		o[i] = (uint32_t)(lo + i);
}

static void order_reverse(uint32_t *o, size_t lo, size_t n)
{
	for (size_t i = 0; i < n; i++)
		o[i] = (uint32_t)(lo + n - 1 - i);
}

static void order_stride(uint32_t *o, size_t lo, size_t n, size_t k)
{
	size_t i = 0;

	for (size_t r = 0; r < k && r < n; r++)
		for (size_t p = r; p < n; p += k)
			o[i++] = (uint32_t)(lo + p);
}

static void order_random(uint32_t *o, size_t lo, size_t n, uint64_t seed)
{
	uint64_t s = seed;

	order_seq(o, lo, n);
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)(splitmix64(&s) % i);
		uint32_t t = o[i - 1];

		o[i - 1] = o[j];
		o[j] = t;
	}
}

static void build_order(unsigned long pass)
{
	uint64_t pseed = cfg.seed * 0x2545F4914F6CDD1DULL + pass * 0x9E3779B97F4A7C15ULL;

	switch (cfg.kind) {
	case PAT_SEQ:
	case PAT_INTERLEAVE:
		order_seq(order, 0, npages);
		break;
	case PAT_REVERSE:
		order_reverse(order, 0, npages);
		break;
	case PAT_STRIDE:
		order_stride(order, 0, npages, cfg.stride);
		break;
	case PAT_RANDOM:
		order_random(order, 0, npages, pseed);
		break;
	case PAT_PHASE:
		for (size_t lo = 0, seg = 0; lo < npages; lo += cfg.segment, seg++) {
			size_t n = npages - lo < cfg.segment ? npages - lo : cfg.segment;

			switch (seg % 4) {
			case 0:
				order_seq(order + lo, lo, n);
				break;
			case 1:
				order_stride(order + lo, lo, n, 8);
				break;
			case 2:
				order_reverse(order + lo, lo, n);
				break;
			default:
				order_random(order + lo, lo, n,
					     pseed ^ (seg * 0xA24BAED4963EE407ULL));
				break;
			}
		}
		break;
	}
}

/* Every page exactly once per pass: a broken order would silently skip pages. */
static bool order_is_permutation(void)
{
	uint8_t *seen = calloc(npages, 1);
	bool ok = seen != NULL;

	for (size_t i = 0; ok && i < npages; i++) {
		if (order[i] >= npages || seen[order[i]])
			ok = false;
		else
			seen[order[i]] = 1;
	}
	free(seen);
	return ok;
}

/* ---- oracle: madvise(WILLNEED) on our own upcoming pages ------------------ */

static void advise_run(size_t first, size_t last)
{
	if (madvise(page_ptr(first), (last - first + 1) * page_size, MADV_WILLNEED))
		atomic_fetch_add(&oracle_failures, 1);
	atomic_fetch_add(&oracle_calls, 1);
}

/* Advises order[from, to), coalescing runs of adjacent pages (either direction). */
static void advise_window(size_t from, size_t to)
{
	size_t first, last;

	if (from >= to)
		return;
	first = last = order[from];
	for (size_t i = from + 1; i < to; i++) {
		size_t p = order[i];

		if (p == last + 1) {
			last = p;
		} else if (p + 1 == first) {
			first = p;
		} else {
			advise_run(first, last);
			first = last = p;
		}
	}
	advise_run(first, last);
}

/* ---- threads ------------------------------------------------------------- */

struct worker {
	pthread_t tid;
	size_t lo, hi;		 /* slice of the access order */
	uint64_t t_start, t_end; /* this pass, CLOCK_MONOTONIC ns */
};

static void spin_ns(uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	while (now_ns() < end)
		;
}

static void run_slice(const struct worker *wk, bool write)
{
	size_t issued = wk->lo;
	size_t half = cfg.oracle / 2 ? cfg.oracle / 2 : 1;

	for (size_t i = wk->lo; i < wk->hi; i++) {
		if (cfg.oracle && issued < wk->hi && issued - i <= half) {
			size_t to = i + cfg.oracle < wk->hi ? i + cfg.oracle : wk->hi;

			advise_window(issued, to);
			issued = to;
		}
		access_page(order[i], write);
		if (cfg.compute_ns)
			spin_ns(cfg.compute_ns);
	}
	atomic_fetch_add(&accesses, wk->hi - wk->lo);
}

static bool write_pass(unsigned long pass)
{
	return cfg.write_every && (pass + 1) % cfg.write_every == 0;
}

static void *worker_main(void *arg)
{
	struct worker *wk = arg;

	for (unsigned long p = 0; p < cfg.passes; p++) {
		pthread_barrier_wait(&start_bar);
		wk->t_start = now_ns();
		run_slice(wk, write_pass(p));
		wk->t_end = now_ns();
		pthread_barrier_wait(&end_bar);
	}
	return NULL;
}

/* ---- CLI ------------------------------------------------------------------ */

const char *argp_program_version = "leap-workload 0.1";
static const char doc[] =
	"Synthetic self-verifying workload over an anonymous footprint, for swap "
	"prefetch tests and benchmarks.\v"
	"Patterns: seq, reverse, stride:K (0,K,2K,... then 1,1+K,...), random "
	"(seeded permutation, new each pass), phase (segments of --segment pages "
	"cycling seq, stride:8, reverse, random), interleave (T threads, default 4, "
	"each scanning its own contiguous slice). With --threads T the page "
	"sequence of any pattern is split into T contiguous chunks, one per "
	"thread.\n\n"
	"Exit status: 0 ok, 1 bad usage, 2 runtime failure, 3 data corruption.";

enum {
	OPT_COMPUTE_NS = 0x100,
	OPT_SEGMENT,
	OPT_WRITE_EVERY,
	OPT_CORRUPT,
	OPT_READY,
	OPT_WAIT,
	OPT_SHARED,
};

static const struct argp_option options[] = {
	{"pattern", 'p', "P", 0, "Access pattern (required)", 0},
	{"footprint", 'f', "SIZE", 0,
	 "Footprint, bytes with optional K/M/G/T suffix (required)", 0},
	{"passes", 'n', "N", 0, "Measured passes over the footprint (default 1)", 0},
	{"threads", 't', "T", 0, "Threads (default 1; interleave: 4)", 0},
	{"seed", 's', "S", 0, "Seed for data and random orders (default 1)", 0},
	{"oracle", 'o', "N", 0,
	 "madvise(MADV_WILLNEED) the next N pages of the access order ahead of use, in "
	 "batches of N/2",
	 0},
	{"json", 'j', NULL, 0, "Print one JSON object on stdout", 0},
	{"compute-ns", OPT_COMPUTE_NS, "NS", 0,
	 "Busy compute time after each page access", 0},
	{"segment", OPT_SEGMENT, "PAGES", 0, "Segment length for 'phase' (default 1024)",
	 0},
	{"write-every", OPT_WRITE_EVERY, "N", 0,
	 "Rewrite one word per page on every Nth pass (default 2; 0 = read only)", 0},
	{"self-test-corrupt", OPT_CORRUPT, NULL, 0,
	 "Corrupt one page after the fill to prove the checker (exits 3)", 0},
	{"ready-file", OPT_READY, "PATH", 0, "Create PATH when the fill is done", 0},
	{"wait-file", OPT_WAIT, "PATH", 0,
	 "Wait for PATH to exist before the measured passes", 0},
	{"shared", OPT_SHARED, NULL, 0,
	 "A shared anonymous footprint (MAP_SHARED | MAP_ANONYMOUS: shmem, as a "
	 "database's buffer pool), which swaps through shmem's own path",
	 0},
	{0},
};

static int parse_ulong(const char *s, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

static int parse_pattern(const char *s)
{
	unsigned long k;

	if (strlen(s) >= sizeof(cfg.pattern))
		return -1;
	if (!strcmp(s, "seq")) {
		cfg.kind = PAT_SEQ;
	} else if (!strcmp(s, "reverse")) {
		cfg.kind = PAT_REVERSE;
	} else if (!strcmp(s, "random")) {
		cfg.kind = PAT_RANDOM;
	} else if (!strcmp(s, "phase")) {
		cfg.kind = PAT_PHASE;
	} else if (!strcmp(s, "interleave")) {
		cfg.kind = PAT_INTERLEAVE;
	} else if (!strncmp(s, "stride:", 7)) {
		if (parse_ulong(s + 7, &k) || k == 0)
			return -1;
		cfg.kind = PAT_STRIDE;
		cfg.stride = k;
	} else {
		return -1;
	}
	strcpy(cfg.pattern, s);
	return 0;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	static bool have_pattern, have_footprint;

	switch (key) {
	case 'p':
		if (parse_pattern(arg))
			argp_error(
				state,
				"bad --pattern '%s' (seq, reverse, stride:K with K >= 1, "
				"random, phase, interleave)",
				arg);
		have_pattern = true;
		break;
	case 'f':
		if (leap_parse_size(arg, &cfg.footprint) || cfg.footprint == 0)
			argp_error(state,
				   "bad --footprint '%s' (e.g. 4096, 64K, 192M, 2G)",
				   arg);
		have_footprint = true;
		break;
	case 'n':
		if (parse_ulong(arg, &cfg.passes) || cfg.passes == 0)
			argp_error(state, "bad --passes '%s' (integer >= 1)", arg);
		break;
	case 't':
		if (parse_ulong(arg, &cfg.threads) || cfg.threads == 0 ||
		    cfg.threads > MAX_THREADS)
			argp_error(state, "bad --threads '%s' (1..%d)", arg, MAX_THREADS);
		cfg.threads_set = true;
		break;
	case 's': {
		unsigned long v;

		if (parse_ulong(arg, &v))
			argp_error(state, "bad --seed '%s'", arg);
		cfg.seed = v;
		break;
	}
	case 'o':
		if (parse_ulong(arg, &cfg.oracle))
			argp_error(state, "bad --oracle '%s' (pages, 0 = off)", arg);
		break;
	case 'j':
		cfg.json = true;
		break;
	case OPT_COMPUTE_NS: {
		unsigned long v;

		if (parse_ulong(arg, &v))
			argp_error(state, "bad --compute-ns '%s'", arg);
		cfg.compute_ns = v;
		break;
	}
	case OPT_SEGMENT:
		if (parse_ulong(arg, &cfg.segment) || cfg.segment == 0)
			argp_error(state, "bad --segment '%s' (pages >= 1)", arg);
		break;
	case OPT_WRITE_EVERY:
		if (parse_ulong(arg, &cfg.write_every))
			argp_error(state, "bad --write-every '%s'", arg);
		break;
	case OPT_CORRUPT:
		cfg.self_test_corrupt = true;
		break;
	case OPT_READY:
		cfg.ready_file = arg;
		break;
	case OPT_WAIT:
		cfg.wait_file = arg;
		break;
	case OPT_SHARED:
		cfg.shared = true;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		if (!have_pattern)
			argp_error(state, "--pattern is required");
		if (!have_footprint)
			argp_error(state, "--footprint is required");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp argp = {options, parse_opt, NULL, doc, NULL, NULL, NULL};

/* ---- helpers for the run ------------------------------------------------- */

static int write_ready_file(const char *path)
{
	char tmp[4096];
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >=
	    (int)sizeof(tmp))
		return -1;
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "%d\n", (int)getpid());
	if (fclose(f) || rename(tmp, path)) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

static void wait_for_file(const char *path)
{
	const struct timespec ts = {.tv_sec = 0, .tv_nsec = 10 * 1000 * 1000};

	while (access(path, F_OK) != 0)
		nanosleep(&ts, NULL);
}

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	struct worker *workers;
	struct rusage ru0, ru1;
	double wall_s = 0, fill_s, *pass_s;
	uint64_t t0, t1;
	int rc;

	argp_err_exit_status = EXIT_USAGE;
	argp_parse(&argp, argc, argv, 0, NULL, NULL);

	page_size = (size_t)sysconf(_SC_PAGESIZE);
	words = page_size / sizeof(uint64_t);
	npages = (cfg.footprint + page_size - 1) / page_size;
	if (npages > UINT32_MAX) {
		fprintf(stderr,
			"leap-workload: --footprint too large (max %" PRIu32 " pages)\n",
			UINT32_MAX);
		return EXIT_USAGE;
	}
	if (cfg.kind == PAT_INTERLEAVE && !cfg.threads_set)
		cfg.threads = 4;
	if (cfg.threads > npages) {
		fprintf(stderr,
			"leap-workload: --threads %lu exceeds the footprint's %zu "
			"pages\n",
			cfg.threads, npages);
		return EXIT_USAGE;
	}
	if (cfg.oracle > npages)
		cfg.oracle = npages;

	base = mmap(NULL, npages * page_size, PROT_READ | PROT_WRITE,
		    (cfg.shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0);
	order = calloc(npages, sizeof(*order));
	expected_gen = calloc(npages, sizeof(*expected_gen));
	workers = calloc(cfg.threads, sizeof(*workers));
	pass_s = calloc(cfg.passes, sizeof(*pass_s));
	if (base == MAP_FAILED || !order || !expected_gen || !workers || !pass_s) {
		fprintf(stderr, "leap-workload: out of memory for a %zu-page footprint\n",
			npages);
		return EXIT_RUNTIME;
	}
	/* 4 KiB pages only: a THP would make one fault cover 512 pages. */
	madvise(base, npages * page_size, MADV_NOHUGEPAGE);

	t0 = now_ns();
	for (size_t p = 0; p < npages; p++)
		fill_page(p);
	fill_s = (double)(now_ns() - t0) / 1e9;

	if (cfg.self_test_corrupt) {
		size_t victim = npages / 2;

		page_ptr(victim)[words / 2] ^= 1;
		fprintf(stderr,
			"leap-workload: self-test: corrupted page %zu on purpose\n",
			victim);
	}

	if (cfg.ready_file && write_ready_file(cfg.ready_file)) {
		fprintf(stderr, "leap-workload: cannot write --ready-file %s: %s\n",
			cfg.ready_file, strerror(errno));
		return EXIT_RUNTIME;
	}
	if (cfg.wait_file)
		wait_for_file(cfg.wait_file);

	if (pthread_barrier_init(&start_bar, NULL, (unsigned)cfg.threads + 1) ||
	    pthread_barrier_init(&end_bar, NULL, (unsigned)cfg.threads + 1)) {
		fprintf(stderr, "leap-workload: pthread_barrier_init failed\n");
		return EXIT_RUNTIME;
	}
	for (unsigned long t = 0; t < cfg.threads; t++) {
		workers[t].lo = npages * t / cfg.threads;
		workers[t].hi = npages * (t + 1) / cfg.threads;
		rc = pthread_create(&workers[t].tid, NULL, worker_main, &workers[t]);
		if (rc) {
			fprintf(stderr, "leap-workload: pthread_create: %s\n",
				strerror(rc));
			return EXIT_RUNTIME;
		}
	}

	getrusage(RUSAGE_SELF, &ru0);
	for (unsigned long p = 0; p < cfg.passes; p++) {
		cur_pass = p;
		build_order(p);
		if (!order_is_permutation()) {
			fprintf(stderr,
				"leap-workload: internal error: pass %lu order is not a "
				"permutation\n",
				p);
			return EXIT_RUNTIME;
		}
		pthread_barrier_wait(&start_bar);
		pthread_barrier_wait(&end_bar);
		/* The workers' own clocks: from the first start to the last end. */
		t0 = UINT64_MAX;
		t1 = 0;
		for (unsigned long t = 0; t < cfg.threads; t++) {
			if (workers[t].t_start < t0)
				t0 = workers[t].t_start;
			if (workers[t].t_end > t1)
				t1 = workers[t].t_end;
		}
		pass_s[p] = (double)(t1 - t0) / 1e9;
		wall_s += pass_s[p];
	}
	getrusage(RUSAGE_SELF, &ru1);
	for (unsigned long t = 0; t < cfg.threads; t++)
		pthread_join(workers[t].tid, NULL);

	long majflt = ru1.ru_majflt - ru0.ru_majflt;
	long minflt = ru1.ru_minflt - ru0.ru_minflt;
	unsigned long nerr = atomic_load(&errors);
	unsigned long nacc = atomic_load(&accesses);

	fprintf(cfg.json ? stderr : stdout,
		"leap-workload: pattern=%s pages=%zu passes=%lu threads=%lu wall_s=%.3f "
		"errors=%lu accesses=%lu majflt=%ld minflt=%ld fill_s=%.3f oracle=%lu\n",
		cfg.pattern, npages, cfg.passes, cfg.threads, wall_s, nerr, nacc, majflt,
		minflt, fill_s, cfg.oracle);

	if (cfg.json) {
		json_c_set_serialization_double_format("%.9g", JSON_C_OPTION_GLOBAL);
		struct json_object *o = json_object_new_object();
		struct json_object *ps = json_object_new_array();

		for (unsigned long p = 0; p < cfg.passes; p++)
			json_object_array_add(ps, json_object_new_double(pass_s[p]));
		json_object_object_add(o, "pattern", json_object_new_string(cfg.pattern));
		json_object_object_add(o, "pages",
				       json_object_new_int64((int64_t)npages));
		json_object_object_add(o, "page_size",
				       json_object_new_int64((int64_t)page_size));
		json_object_object_add(
			o, "footprint_bytes",
			json_object_new_int64((int64_t)(npages * page_size)));
		json_object_object_add(o, "passes",
				       json_object_new_int64((int64_t)cfg.passes));
		json_object_object_add(o, "threads",
				       json_object_new_int64((int64_t)cfg.threads));
		json_object_object_add(o, "seed", json_object_new_uint64(cfg.seed));
		json_object_object_add(o, "oracle",
				       json_object_new_int64((int64_t)cfg.oracle));
		json_object_object_add(o, "compute_ns",
				       json_object_new_uint64(cfg.compute_ns));
		json_object_object_add(o, "write_every",
				       json_object_new_int64((int64_t)cfg.write_every));
		json_object_object_add(o, "shared", json_object_new_boolean(cfg.shared));
		json_object_object_add(o, "fill_s", json_object_new_double(fill_s));
		json_object_object_add(o, "wall_s", json_object_new_double(wall_s));
		json_object_object_add(o, "pass_wall_s", ps);
		json_object_object_add(o, "accesses",
				       json_object_new_int64((int64_t)nacc));
		json_object_object_add(o, "errors", json_object_new_int64((int64_t)nerr));
		json_object_object_add(o, "majflt", json_object_new_int64(majflt));
		json_object_object_add(o, "minflt", json_object_new_int64(minflt));
		json_object_object_add(
			o, "utime_s",
			json_object_new_double(tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime)));
		json_object_object_add(
			o, "stime_s",
			json_object_new_double(tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime)));
		json_object_object_add(
			o, "oracle_madvise_calls",
			json_object_new_int64((int64_t)atomic_load(&oracle_calls)));
		json_object_object_add(
			o, "oracle_madvise_failures",
			json_object_new_int64((int64_t)atomic_load(&oracle_failures)));
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	}
	fflush(stdout);
	return nerr ? EXIT_CORRUPT : 0;
}
