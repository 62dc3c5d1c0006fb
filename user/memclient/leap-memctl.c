// SPDX-License-Identifier: MIT
/*
 * leap-memctl: talk to leap-memd servers through memclient, for operators
 * (stats) and for the backend's system tests (fill, verify, stress: data
 * written through striping and replication must come back bit for bit).
 *
 * Every page carries data derived from (seed, page, generation), so a
 * misplaced, stale or foreign page is detected, not just a torn one.
 *
 * Exit status: 0 ok, 1 runtime failure, 2 bad usage, 3 data corruption
 * (a read returned wrong data: never acceptable), 4 I/O errors (reads or
 * writes refused with EIO, e.g. r = 1 and a server lost: acceptable only
 * when a test expects it).
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "leap/prom.h"
#include "leap/size.h"
#include "memclient.h"

const char *argp_program_version = "leap-memctl 0.1";
const char *argp_program_bug_address = "the leap issue tracker";

static const char doc[] =
	"leap-memctl: stats of leap-memd servers, and data checks through memclient.\v"
	"Commands:\n"
	"  stats              each server's counters, one 'server key value' a line\n"
	"                     (--format prometheus: the Prometheus text format)\n"
	"  fill               write --pages pages of generation 0\n"
	"  verify             read them back and compare\n"
	"  stress             fill, then random reads (verified), rewrites and "
	"(--prefetch-pct) prefetch-class stripe reads for --seconds from --threads "
	"threads, then every page read back and checked; prints read latency "
	"percentiles";

enum {
	OPT_RETRY = 0x100,
	OPT_STRIPE,
	OPT_SECONDS,
	OPT_WRITE_PCT,
	OPT_BATCH,
	OPT_REG_CACHE,
	OPT_REG_TRACE,
	OPT_FORMAT,
	OPT_THREADS,
	OPT_PREFETCH_PCT,
	OPT_CONNS,
	OPT_WINDOW,
};

static const struct argp_option options[] = {
	{"server", 's', "ADDR:PORT", 0, "A leap-memd server (repeat for striping)", 0},
	{"secret-file", 'k', "FILE", 0, "Shared secret, mode 0600", 0},
	{"transport", 't', "NAME", 0, "tcp (default) or rdma", 0},
	{"replicas", 'r', "R", 0, "1 (default) or 2", 0},
	{"dev", 'd', "ID", 0, "Device id on the servers (default 1)", 0},
	{"pages", 'n', "N", 0, "Device size in pages (default 4096)", 0},
	{"seed", 'S', "N", 0, "Data seed (default 1)", 0},
	{"stripe", OPT_STRIPE, "PAGES", 0, "Stripe unit (default 16)", 0},
	{"retry-ms", OPT_RETRY, "MS", 0, "Retry a server this long (default 10000)", 0},
	{"seconds", OPT_SECONDS, "S", 0, "stress: duration (default 5)", 0},
	{"write-pct", OPT_WRITE_PCT, "P", 0, "stress: share of rewrites (default 30)", 0},
	{"batch", OPT_BATCH, "PAGES", 0, "fill/verify: pages per call (default 64)", 0},
	{"reg-cache", OPT_REG_CACHE, "mrrc|lru|mrrc-rank|off", 0,
	 "RDMA: zero-copy through this registration cache (default off: staging copy)",
	 0},
	{"threads", OPT_THREADS, "N", 0, "stress: threads at once (default 1)", 0},
	{"prefetch-pct", OPT_PREFETCH_PCT, "P", 0,
	 "stress: share of whole-stripe prefetch-class reads (default 0)", 0},
	{"conns", OPT_CONNS, "N", 0,
	 "Connections per server (default 2): TCP pipelined, RDMA one QP each", 0},
	{"window", OPT_WINDOW, "N", 0,
	 "TCP: requests in flight per connection (default 32)", 0},
	{"reg-trace", OPT_REG_TRACE, "FILE", 0,
	 "RDMA: record every RDMA operation's local buffer (regtrace format)", 0},
	{"format", OPT_FORMAT, "text|prometheus", 0,
	 "stats: one 'server key value' a line (default) or Prometheus text", 0},
	{0},
};

struct args {
	struct leap_mc_config mc;
	const char *secret_file;
	const char *cmd;
	uint64_t seed;
	unsigned seconds, write_pct, batch, threads, prefetch_pct;
	bool prometheus; /* stats --format prometheus */
};

static error_t parse_opt(int key, char *arg, struct argp_state *st)
{
	struct args *a = st->input;
	unsigned long long v = 0;

	if (arg && key != 's' && key != 'k' && key != 't' && key != ARGP_KEY_ARG &&
	    key != OPT_REG_CACHE && key != OPT_REG_TRACE && key != OPT_FORMAT &&
	    leap_parse_uint(arg, 0, UINT32_MAX, &v) && key != 'S')
		argp_error(st, "bad number '%s'", arg);
	switch (key) {
	case 't':
		a->mc.transport = leap_transport_find(arg);
		if (!a->mc.transport)
			argp_error(st, "unknown transport '%s' (tcp or rdma)", arg);
		break;
	case 's':
		if (a->mc.nservers >= LEAP_MC_MAX_SERVERS)
			argp_error(st, "at most %d servers", LEAP_MC_MAX_SERVERS);
		a->mc.servers[a->mc.nservers++] = arg;
		break;
	case 'k':
		a->secret_file = arg;
		break;
	case 'r':
		a->mc.replicas = (unsigned)v;
		break;
	case 'd':
		a->mc.dev = (uint32_t)v;
		break;
	case 'n':
		a->mc.dev_pages = v;
		break;
	case 'S':
		if (leap_parse_uint(arg, 0, UINT64_MAX, &v))
			argp_error(st, "bad seed '%s'", arg);
		a->seed = v;
		break;
	case OPT_STRIPE:
		a->mc.stripe_pages = (uint32_t)v;
		break;
	case OPT_RETRY:
		a->mc.retry_ms = (int)v;
		break;
	case OPT_SECONDS:
		a->seconds = (unsigned)v;
		break;
	case OPT_WRITE_PCT:
		a->write_pct = (unsigned)v;
		break;
	case OPT_REG_CACHE:
		if (!leap_mc_reg_cache_ok(arg))
			argp_error(st, "--reg-cache is mrrc, lru, mrrc-rank or off");
		a->mc.reg_cache = arg;
		break;
	case OPT_REG_TRACE:
		a->mc.reg_trace = arg;
		break;
	case OPT_FORMAT:
		if (strcmp(arg, "text") && strcmp(arg, "prometheus"))
			argp_error(st, "--format takes text or prometheus, not '%s'",
				   arg);
		a->prometheus = !strcmp(arg, "prometheus");
		break;
	case OPT_THREADS:
		if (v < 1 || v > 64)
			argp_error(st, "--threads 1..64");
		a->threads = (unsigned)v;
		break;
	case OPT_PREFETCH_PCT:
		if (v > 100)
			argp_error(st, "--prefetch-pct 0..100");
		a->prefetch_pct = (unsigned)v;
		break;
	case OPT_CONNS:
		if (v < 1 || v > LEAP_MC_MAX_CONNS)
			argp_error(st, "--conns 1..%d", LEAP_MC_MAX_CONNS);
		a->mc.conns = (unsigned)v;
		break;
	case OPT_WINDOW:
		if (v < 2 || v > 256)
			argp_error(st, "--window 2..256");
		a->mc.window = (unsigned)v;
		break;
	case OPT_BATCH:
		if (v < 1 || v > 4096)
			argp_error(st, "--batch 1..4096");
		a->batch = (unsigned)v;
		break;
	case ARGP_KEY_ARG:
		if (a->cmd)
			argp_error(st, "one command only");
		a->cmd = arg;
		break;
	case ARGP_KEY_END:
		if (!a->cmd || !a->mc.nservers || !a->secret_file)
			argp_error(st, "need a command, --server and --secret-file");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* ---- page contents -------------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static void make_page(uint64_t *w, uint64_t seed, uint32_t dev, uint64_t pg, uint32_t gen)
{
	uint64_t base =
		mix64(seed ^ mix64(pg ^ ((uint64_t)dev << 40)) ^ ((uint64_t)gen << 48));

	w[0] = pg;
	w[1] = gen;
	for (int i = 2; i < LEAP_WIRE_PAGE_SIZE / 8; i++)
		w[i] = mix64(base + (uint64_t)i);
}

static bool page_is(const uint64_t *w, uint64_t seed, uint32_t dev, uint64_t pg,
		    uint32_t gen)
{
	uint64_t want[LEAP_WIRE_PAGE_SIZE / 8];

	make_page(want, seed, dev, pg, gen);
	return memcmp(w, want, LEAP_WIRE_PAGE_SIZE) == 0;
}

/* ---- commands ------------------------------------------------------------- */

static const char *const stat_names[LEAP_WSTAT_NR] = {
	"capacity_pages", "used_pages",	   "read_reqs",	     "write_reqs",
	"pages_read",	  "pages_written", "clients",	     "clients_total",
	"auth_failures",  "bad_messages",  "map_reqs",	     "pages_mapped",
	"mr_regs",	  "mr_deregs",	   "mr_bytes",	     "fh_budget",
	"fh_region_size", "fh_share",	   "fh_moves",	     "fh_refused",
	"fh_victim_hits", "fh_pinned",	   "fh_pinned_peak", "pages_freed",
};

/*
 * The same counters as Prometheus metrics (include/leap/prom.h): levels
 * are gauges, the rest counters (_total); byte values say so in the name.
 */
static const struct {
	const char *name, *type;
} prom_stats[LEAP_WSTAT_NR] = {
	{"leap_memd_capacity_pages", "gauge"},
	{"leap_memd_used_pages", "gauge"},
	{"leap_memd_read_requests_total", "counter"},
	{"leap_memd_write_requests_total", "counter"},
	{"leap_memd_pages_read_total", "counter"},
	{"leap_memd_pages_written_total", "counter"},
	{"leap_memd_clients", "gauge"},
	{"leap_memd_clients_accepted_total", "counter"},
	{"leap_memd_auth_failures_total", "counter"},
	{"leap_memd_bad_messages_total", "counter"},
	{"leap_memd_map_requests_total", "counter"},
	{"leap_memd_pages_mapped_total", "counter"},
	{"leap_memd_mr_registrations_total", "counter"},
	{"leap_memd_mr_deregistrations_total", "counter"},
	{"leap_memd_mr_bytes", "gauge"},
	{"leap_memd_fh_budget_bytes", "gauge"},
	{"leap_memd_fh_region_size_bytes", "gauge"},
	{"leap_memd_fh_share_regions", "gauge"},
	{"leap_memd_fh_moves_total", "counter"},
	{"leap_memd_fh_refused_total", "counter"},
	{"leap_memd_fh_victim_hits_total", "counter"},
	{"leap_memd_fh_pinned_bytes", "gauge"},
	{"leap_memd_fh_pinned_peak_bytes", "gauge"},
};

/*
 * Families grouped, every server a sample of each.  Each server gets its
 * own client, so one that is down is reported (leap_memd_up 0) instead of
 * failing the whole scrape as leap_mc_open() would.
 */
static int cmd_stats_prom(const struct args *a)
{
	static uint64_t v[LEAP_MC_MAX_SERVERS][LEAP_WIRE_MAX_STATS];
	int n[LEAP_MC_MAX_SERVERS], rc = 0;

	for (unsigned i = 0; i < a->mc.nservers; i++) {
		struct leap_mc_config one = a->mc;
		struct leap_mc *mc;
		char err[512];

		one.servers[0] = a->mc.servers[i];
		one.nservers = 1;
		one.replicas = 1;
		mc = leap_mc_open(&one, err, sizeof(err));
		n[i] = mc ? leap_mc_server_stats(mc, 0, v[i]) : -ECONNREFUSED;
		if (!mc)
			fprintf(stderr, "leap-memctl: %s\n", err);
		else if (n[i] < 0)
			fprintf(stderr, "leap-memctl: %s: %s\n", a->mc.servers[i],
				strerror(-n[i]));
		if (n[i] < 0)
			rc = 1;
		leap_mc_close(mc);
	}
	prom_family(stdout, "leap_memd_up", "gauge",
		    "Whether the leap-memd server answered STATS.");
	for (unsigned i = 0; i < a->mc.nservers; i++) {
		struct prom_label l = {"server", a->mc.servers[i]};

		prom_sample(stdout, "leap_memd_up", &l, 1, n[i] >= 0);
	}
	for (int j = 0; j < LEAP_WSTAT_NR; j++) {
		char help[96];

		if (!prom_stats[j].name)
			continue;
		snprintf(help, sizeof(help), "leap-memd STATS field %s.", stat_names[j]);
		prom_family(stdout, prom_stats[j].name, prom_stats[j].type, help);
		for (unsigned i = 0; i < a->mc.nservers; i++) {
			struct prom_label l = {"server", a->mc.servers[i]};

			if (j < n[i])
				prom_sample_u64(stdout, prom_stats[j].name, &l, 1,
						v[i][j]);
		}
	}
	return rc;
}

static int cmd_stats(struct leap_mc *mc, const struct args *a)
{
	uint64_t v[LEAP_WIRE_MAX_STATS];
	int rc = 0;

	for (unsigned i = 0; i < a->mc.nservers; i++) {
		int n = leap_mc_server_stats(mc, i, v);

		if (n < 0) {
			fprintf(stderr, "leap-memctl: %s: %s\n", a->mc.servers[i],
				strerror(-n));
			rc = 1;
			continue;
		}
		for (int j = 0; j < n && j < LEAP_WSTAT_NR; j++)
			printf("%s %s %" PRIu64 "\n", a->mc.servers[i], stat_names[j],
			       v[j]);
	}
	return rc;
}

static int cmd_fill_verify(struct leap_mc *mc, const struct args *a, bool fill)
{
	uint64_t *buf = malloc((size_t)a->batch * LEAP_WIRE_PAGE_SIZE);
	uint64_t bad = 0, eio = 0;

	if (!buf)
		return 1;
	for (uint64_t pg = 0; pg < a->mc.dev_pages; pg += a->batch) {
		uint64_t n =
			a->mc.dev_pages - pg < a->batch ? a->mc.dev_pages - pg : a->batch;
		int rc;

		if (fill) {
			for (uint64_t i = 0; i < n; i++)
				make_page(buf + i * 512, a->seed, a->mc.dev, pg + i, 0);
			rc = leap_mc_write(mc, pg * LEAP_WIRE_PAGE_SIZE, buf,
					   n * LEAP_WIRE_PAGE_SIZE);
		} else {
			rc = leap_mc_read(mc, pg * LEAP_WIRE_PAGE_SIZE, buf,
					  n * LEAP_WIRE_PAGE_SIZE);
			for (uint64_t i = 0; rc == 0 && i < n; i++)
				if (!page_is(buf + i * 512, a->seed, a->mc.dev, pg + i,
					     0)) {
					if (bad++ < 5)
						fprintf(stderr,
							"leap-memctl: page %" PRIu64
							" holds wrong data\n",
							pg + i);
				}
		}
		if (rc)
			eio += n;
	}
	free(buf);
	printf("%s pages=%" PRIu64 " corrupt=%" PRIu64 " io_error_pages=%" PRIu64 "\n",
	       fill ? "fill" : "verify", a->mc.dev_pages, bad, eio);
	return bad ? 3 : eio ? 4 : 0;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/*
 * Random reads (verified against the generation last written), rewrites
 * and prefetch-class reads of whole stripes, from --threads threads at
 * once.  Thread t owns the stripes s with s % threads == t, so it knows
 * every generation of its pages while the others run beside it.  A rewrite
 * that failed leaves the page's content open between the old and new
 * generation: either is correct, anything else is corruption.
 */
struct stress_thread {
	struct leap_mc *mc;
	const struct args *a;
	unsigned tid, nthreads;
	uint32_t *gen;	     /* shared array; this thread touches its own pages */
	uint8_t *maybe_next; /* same */
	int64_t end;
	uint64_t ops, bad, eio, prefetches, swept;
	size_t nlat, lat_cap;
	uint64_t *lat;
	pthread_t th;
};

/* Checks page pg as read (buf); false if it is neither allowed generation. */
static bool stress_check(struct stress_thread *t, const uint64_t *buf, uint64_t pg)
{
	const struct args *a = t->a;

	if (page_is(buf, a->seed, a->mc.dev, pg, t->gen[pg]))
		return true;
	if (t->maybe_next[pg] && page_is(buf, a->seed, a->mc.dev, pg, t->gen[pg] + 1)) {
		t->gen[pg]++;
		t->maybe_next[pg] = 0;
		return true;
	}
	if (t->bad++ < 5)
		fprintf(stderr,
			"leap-memctl: page %" PRIu64 " wrong: has page %" PRIu64
			" gen %" PRIu64 ", want gen %u\n",
			pg, buf[0], buf[1], t->gen[pg]);
	return false;
}

static void *stress_main(void *arg)
{
	struct stress_thread *t = arg;
	const struct args *a = t->a;
	uint64_t n = a->mc.dev_pages, rng = mix64(a->seed * 2 + 1 + t->tid);
	uint32_t sp = a->mc.stripe_pages ? a->mc.stripe_pages : 16;
	uint64_t nstripes = (n + sp - 1) / sp, mine = 0;
	uint64_t *buf = malloc((size_t)sp * LEAP_WIRE_PAGE_SIZE);

	for (uint64_t st = t->tid; st < nstripes; st += t->nthreads)
		mine++;
	if (!buf || !mine) {
		free(buf);
		return NULL;
	}
	while (leap_now_ms() < t->end) {
		uint64_t st, pg, first, cnt, r;
		struct timespec t0, t1;

		rng = mix64(rng);
		st = (rng % mine) * t->nthreads + t->tid;
		first = st * sp;
		cnt = n - first < sp ? n - first : sp;
		pg = first + (rng >> 20) % cnt;
		r = (rng >> 40) % 100;
		t->ops++;
		if (r < a->write_pct) {
			make_page(buf, a->seed, a->mc.dev, pg, t->gen[pg] + 1);
			if (leap_mc_write(t->mc, pg * LEAP_WIRE_PAGE_SIZE, buf,
					  LEAP_WIRE_PAGE_SIZE)) {
				t->eio++;
				t->maybe_next[pg] = 1;
			} else {
				t->gen[pg]++;
				t->maybe_next[pg] = 0;
			}
			continue;
		}
		if (r < a->write_pct + a->prefetch_pct) {
			/* A prefetch window: the whole stripe, one request. */
			t->prefetches++;
			if (leap_mc_prefetch(t->mc, first * LEAP_WIRE_PAGE_SIZE, buf,
					     cnt * LEAP_WIRE_PAGE_SIZE)) {
				t->eio++;
				continue;
			}
			for (uint64_t i = 0; i < cnt; i++)
				stress_check(t, buf + i * 512, first + i);
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (leap_mc_read(t->mc, pg * LEAP_WIRE_PAGE_SIZE, buf,
				 LEAP_WIRE_PAGE_SIZE)) {
			t->eio++;
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (t->nlat < t->lat_cap)
			t->lat[t->nlat++] =
				(uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL +
					   (t1.tv_nsec - t0.tv_nsec));
		stress_check(t, buf, pg);
	}
	/* At the end every page of this thread is read back and checked. */
	for (uint64_t st = t->tid; st * sp < n; st += t->nthreads) {
		uint64_t first = st * sp, cnt = n - first < sp ? n - first : sp;

		if (leap_mc_read(t->mc, first * LEAP_WIRE_PAGE_SIZE, buf,
				 cnt * LEAP_WIRE_PAGE_SIZE)) {
			t->eio++;
			continue;
		}
		for (uint64_t i = 0; i < cnt; i++)
			stress_check(t, buf + i * 512, first + i);
		t->swept += cnt;
	}
	free(buf);
	return NULL;
}

static int cmd_stress(struct leap_mc *mc, const struct args *a)
{
	uint64_t n = a->mc.dev_pages, ops = 0, bad = 0, eio = 0, pf = 0, swept = 0;
	uint32_t *gen = calloc(n, sizeof(*gen));
	uint8_t *maybe_next = calloc(n, 1);
	struct stress_thread *t = calloc(a->threads, sizeof(*t));
	size_t lat_cap = 1 << 20, nlat = 0;
	uint64_t *lat = malloc(lat_cap * sizeof(*lat));
	int64_t end;
	int rc;

	if (!gen || !maybe_next || !lat || !t)
		return 1;
	rc = cmd_fill_verify(mc, a, true);
	if (rc)
		return rc;
	end = leap_now_ms() + (int64_t)a->seconds * 1000;
	for (unsigned i = 0; i < a->threads; i++) {
		t[i] = (struct stress_thread){.mc = mc,
					      .a = a,
					      .tid = i,
					      .nthreads = a->threads,
					      .gen = gen,
					      .maybe_next = maybe_next,
					      .end = end,
					      .lat_cap = lat_cap / a->threads,
					      .lat = lat + i * (lat_cap / a->threads)};
		if (pthread_create(&t[i].th, NULL, stress_main, &t[i])) {
			fprintf(stderr, "leap-memctl: cannot start thread %u\n", i);
			return 1;
		}
	}
	for (unsigned i = 0; i < a->threads; i++) {
		pthread_join(t[i].th, NULL);
		ops += t[i].ops;
		bad += t[i].bad;
		eio += t[i].eio;
		pf += t[i].prefetches;
		swept += t[i].swept;
		/* Compact the latencies to the front. */
		memmove(lat + nlat, t[i].lat, t[i].nlat * sizeof(*lat));
		nlat += t[i].nlat;
	}
	qsort(lat, nlat, sizeof(*lat), cmp_u64);
	printf("stress ops=%" PRIu64 " corrupt=%" PRIu64 " io_errors=%" PRIu64
	       " read_p50_us=%.1f read_p99_us=%.1f threads=%u prefetches=%" PRIu64
	       " verified_at_end=%" PRIu64 "\n",
	       ops, bad, eio, nlat ? lat[nlat / 2] / 1e3 : 0.0,
	       nlat ? lat[nlat * 99 / 100] / 1e3 : 0.0, a->threads, pf, swept);
	free(gen);
	free(maybe_next);
	free(lat);
	free(t);
	return bad ? 3 : eio ? 4 : 0;
}

int main(int argc, char **argv)
{
	static struct args a = {
		.mc = {.replicas = 1,
		       .dev = 1,
		       .dev_pages = 4096,
		       .log_prefix = "leap-memctl"},
		.seed = 1,
		.seconds = 5,
		.write_pct = 30,
		.batch = 64,
		.threads = 1,
	};
	struct argp argp = {options, parse_opt, "COMMAND", doc, NULL, NULL, NULL};
	uint8_t secret[LEAP_SECRET_MAX];
	struct leap_mc_counters c;
	struct leap_mc *mc;
	char err[512];
	long slen;
	int rc;

	/* Usage errors exit 2, as the header says (argp's default is 64). */
	argp_err_exit_status = 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argp_parse(&argp, argc, argv, 0, NULL, &a))
		return 2;
	if (strcmp(a.cmd, "stats") && strcmp(a.cmd, "fill") && strcmp(a.cmd, "verify") &&
	    strcmp(a.cmd, "stress")) {
		fprintf(stderr, "leap-memctl: unknown command '%s'\n", a.cmd);
		return 2;
	}
	slen = leap_secret_load(a.secret_file, secret, sizeof(secret), err, sizeof(err));
	if (slen < 0) {
		fprintf(stderr, "leap-memctl: %s\n", err);
		return 1;
	}
	a.mc.secret = secret;
	a.mc.secret_len = (size_t)slen;
	/* verify checks what an earlier fill (another process) wrote. */
	a.mc.existing = !strcmp(a.cmd, "verify");
	if (!strcmp(a.cmd, "stats") && a.prometheus)
		return cmd_stats_prom(&a);
	mc = leap_mc_open(&a.mc, err, sizeof(err));
	if (!mc) {
		fprintf(stderr, "leap-memctl: %s\n", err);
		return 1;
	}
	if (!strcmp(a.cmd, "stats"))
		rc = cmd_stats(mc, &a);
	else if (!strcmp(a.cmd, "stress"))
		rc = cmd_stress(mc, &a);
	else
		rc = cmd_fill_verify(mc, &a, !strcmp(a.cmd, "fill"));
	leap_mc_get_counters(mc, &c);
	if (strcmp(a.cmd, "stats"))
		printf("client reconnects=%" PRIu64 " retries=%" PRIu64
		       " failovers=%" PRIu64 " degraded_writes=%" PRIu64
		       " lost_pages=%" PRIu64 " io_errors=%" PRIu64 " resilvered=%" PRIu64
		       " under_replicated=%" PRIu64 " fh_moves=%" PRIu64
		       " fh_pins=%" PRIu64 " peak_inflight=%" PRIu64 "\n",
		       c.reconnects, c.retries, c.failovers, c.degraded_writes,
		       c.lost_pages, c.io_errors, c.resilvered, c.under_replicated,
		       c.fh_moves, c.fh_pins, c.peak_inflight);
	if (strcmp(a.cmd, "stats")) {
		char reg[1024];

		leap_mc_reg_stats(reg, sizeof(reg));
		if (reg[0])
			printf("client%s\n", reg);
	}
	leap_mc_close(mc);
	return rc;
}
