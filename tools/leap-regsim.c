// SPDX-License-Identifier: MIT
/*
 * leap-regsim: trace-driven comparison of memory-registration strategies
 * over the fake backend's cost model T = a * pages + b (docs/registration.md).
 *
 *   leap-regsim gen --kind K [--ops N] [--space S] [--max-len S] [--buffers N]
 *                   [--clients N] [--seed N] [-o FILE]
 *   leap-regsim cache [--capacity S] [--entries N] [--batch N] [--resort PCT]
 *                     [--max-segs N] [--mre-revalue] [--json] TRACE
 *       no cache (register per operation), the LRU pin-down cache, MRRC
 *       (MRE as the slides define it) and mrrc-rank (the older rank rule):
 *       hit ratio, registrations, modelled registration time.
 *   leap-regsim firehose --budget S [--region S] [--clients N] [--rtt-us U]
 *                        [--json] TRACE
 *       Firehose under pin budget M versus registering everything and
 *       registering per operation: modelled time, pinned peak, moves.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leap/firehose.h"
#include "leap/reg.h"
#include "leap/regtrace.h"
#include "leap/size.h"

static void usage(void)
{
	fprintf(stderr,
		"usage: leap-regsim gen --kind "
		"repeat|sliding|random|overlap|clients|unmap\n"
		"                       [--ops N] [--space SIZE] [--max-len SIZE] "
		"[--buffers N]\n"
		"                       [--clients N] [--seed N] [-o FILE]\n"
		"       leap-regsim cache [--capacity SIZE] [--entries N] [--batch N]\n"
		"                       [--resort PCT] [--max-segs N] [--mre-revalue]\n"
		"                       [--json] TRACE\n"
		"       leap-regsim firehose --budget SIZE [--region SIZE] [--clients "
		"N]\n"
		"                       [--rtt-us US] [--json] TRACE\n");
	exit(2);
}

static uint64_t size_arg(const char *opt, const char *s)
{
	uint64_t v;

	if (leap_parse_size(s, &v) < 0) {
		fprintf(stderr, "leap-regsim: bad size for %s: %s\n", opt, s);
		exit(2);
	}
	return v;
}

static uint64_t uint_arg(const char *opt, const char *s, unsigned long long max)
{
	unsigned long long v;

	if (leap_parse_uint(s, 0, max, &v) < 0) {
		fprintf(stderr, "leap-regsim: bad number for %s: %s\n", opt, s);
		exit(2);
	}
	return v;
}

/* ---- traces ---- */

struct trace {
	struct leap_regtrace_rec *r;
	size_t n, cap;
};

static void load_trace(const char *path, struct trace *t)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	char line[256];
	size_t lineno = 0;

	if (!f) {
		fprintf(stderr, "leap-regsim: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	memset(t, 0, sizeof(*t));
	while (fgets(line, sizeof(line), f)) {
		struct leap_regtrace_rec rec;
		int rc;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			fprintf(stderr, "leap-regsim: %s:%zu: line too long\n", path,
				lineno);
			exit(1);
		}
		rc = leap_regtrace_parse(line, &rec);
		if (rc < 0) {
			fprintf(stderr, "leap-regsim: %s:%zu: malformed record\n", path,
				lineno);
			exit(1);
		}
		if (!rc)
			continue;
		if (t->n == t->cap) {
			t->cap = t->cap ? t->cap * 2 : 4096;
			t->r = realloc(t->r, t->cap * sizeof(*t->r));
			if (!t->r) {
				fprintf(stderr, "leap-regsim: out of memory\n");
				exit(1);
			}
		}
		t->r[t->n++] = rec;
	}
	if (f != stdin)
		fclose(f);
	if (!t->n) {
		fprintf(stderr, "leap-regsim: %s: no records\n", path);
		exit(1);
	}
}

/* ---- gen ---- */

static int cmd_gen(int argc, char **argv)
{
	static const struct option opts[] = {{"kind", required_argument, 0, 'k'},
					     {"ops", required_argument, 0, 'n'},
					     {"space", required_argument, 0, 's'},
					     {"max-len", required_argument, 0, 'l'},
					     {"buffers", required_argument, 0, 'b'},
					     {"clients", required_argument, 0, 'c'},
					     {"seed", required_argument, 0, 'S'},
					     {"output", required_argument, 0, 'o'},
					     {0, 0, 0, 0}};
	struct leap_regtrace_gen g = {.kind = (enum leap_regtrace_kind) - 1};
	struct leap_regtrace_rec rec;
	const char *out = NULL;
	FILE *f = stdout;
	char line[96];
	int c;

	while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		switch (c) {
		case 'k':
			g.kind =
				(enum leap_regtrace_kind)leap_regtrace_kind_parse(optarg);
			if ((int)g.kind < 0)
				usage();
			break;
		case 'n':
			g.ops = uint_arg("--ops", optarg, 1ULL << 32);
			break;
		case 's':
			g.space = size_arg("--space", optarg);
			break;
		case 'l':
			g.max_len = size_arg("--max-len", optarg);
			break;
		case 'b':
			g.buffers = (uint32_t)uint_arg("--buffers", optarg, 1 << 20);
			break;
		case 'c':
			g.clients = (uint32_t)uint_arg("--clients", optarg,
						       LEAP_REGTRACE_MAX_CLIENTS);
			break;
		case 'S':
			g.seed = uint_arg("--seed", optarg, ~0ULL);
			break;
		case 'o':
			out = optarg;
			break;
		default:
			usage();
		}
	}
	if ((int)g.kind < 0 || optind != argc)
		usage();
	if (leap_regtrace_gen_init(&g) < 0) {
		fprintf(stderr, "leap-regsim: gen: inconsistent parameters\n");
		return 2;
	}
	if (out && !(f = fopen(out, "w"))) {
		fprintf(stderr, "leap-regsim: %s: %s\n", out, strerror(errno));
		return 1;
	}
	fprintf(f, "# leap-regsim gen --kind %s --ops %" PRIu64 " --seed %" PRIu64 "\n",
		leap_regtrace_kind_name(g.kind), g.ops, g.seed);
	while (leap_regtrace_gen_next(&g, &rec)) {
		if (leap_regtrace_format(&rec, line, sizeof(line)) < 0)
			return 1;
		fputs(line, f);
	}
	leap_regtrace_gen_free(&g);
	if ((f != stdout && fclose(f)) || (f == stdout && fflush(f))) {
		fprintf(stderr, "leap-regsim: write failed\n");
		return 1;
	}
	return 0;
}

/* ---- cache ---- */

struct cache_result {
	const char *name;
	struct leap_reg_stats st;
	struct leap_reg_fake fake;
	/* the fake's totals at the end of the trace, before the teardown */
	double reg_us, dereg_us;
	uint64_t reg_pages;
};

static uint64_t page_range(uint64_t addr, uint64_t len, uint64_t page, uint64_t *start)
{
	uint64_t s = addr & ~(page - 1);
	uint64_t e = (addr + len + page - 1) & ~(page - 1);

	*start = s;
	return e - s;
}

/* Register and deregister every operation: the no-cache baseline. */
static void run_nocache(const struct trace *t, uint64_t page, struct cache_result *res)
{
	struct leap_reg_ops ops;

	memset(&res->st, 0, sizeof(res->st));
	leap_reg_fake_init(&res->fake, page);
	leap_reg_fake_ops(&res->fake, &ops);
	for (size_t i = 0; i < t->n; i++) {
		struct leap_reg_span sp;

		if (t->r[i].op != LEAP_REGTRACE_REF)
			continue;
		sp.len = page_range(t->r[i].addr, t->r[i].len, page, &sp.addr);
		if (ops.reg(ops.ctx, sp.addr, sp.len, &sp.key) == 0)
			ops.dereg(ops.ctx, &sp, 1);
		res->st.lookups++;
		res->st.misses++;
	}
	res->st.registrations = res->fake.regs;
	res->st.deregistrations = res->fake.deregs;
	res->st.pinned_peak = res->fake.pinned_peak;
	res->reg_us = res->fake.reg_us;
	res->dereg_us = res->fake.dereg_us;
	res->reg_pages = res->fake.reg_pages;
}

static int run_cache(const struct trace *t, struct leap_reg_config cfg,
		     struct cache_result *res)
{
	struct leap_reg_ops ops;
	struct leap_reg_cache *c;

	leap_reg_fake_init(&res->fake, cfg.page_size);
	leap_reg_fake_ops(&res->fake, &ops);
	c = leap_reg_cache_new(&cfg, &ops);
	if (!c) {
		fprintf(stderr, "leap-regsim: bad cache configuration\n");
		return -1;
	}
	for (size_t i = 0; i < t->n; i++) {
		struct leap_reg_ref ref;
		int err;

		if (t->r[i].op == LEAP_REGTRACE_UNMAP) {
			leap_reg_invalidate(c, t->r[i].addr, t->r[i].len);
			continue;
		}
		err = leap_reg_get(c, t->r[i].addr, t->r[i].len, &ref);
		if (err) {
			fprintf(stderr, "leap-regsim: record %zu: %s\n", i,
				strerror(-err));
			leap_reg_cache_free(c);
			return -1;
		}
		leap_reg_put(c, &ref);
	}
	leap_reg_cache_stats(c, &res->st);
	res->reg_us = res->fake.reg_us;
	res->dereg_us = res->fake.dereg_us;
	res->reg_pages = res->fake.reg_pages;
	leap_reg_cache_free(c);
	if (res->fake.errors || res->fake.pinned_bytes) {
		fprintf(stderr, "leap-regsim: %s: the backend saw bad deregistrations\n",
			res->name);
		return -1;
	}
	return 0;
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

/*
 * hit_ratio: lookups served without registering anything (hit or
 * contained-in); page_hit_ratio: referenced pages that needed no
 * registration (MRRC's overlaps count for the part already cached).
 */
static void print_cache(const struct cache_result *r, bool json, uint64_t ref_pages)
{
	const struct leap_reg_stats *s = &r->st;
	double hit = ratio(s->hits + s->contained, s->lookups);
	double reg_us = r->reg_us, dereg_us = r->dereg_us;
	uint64_t reg_pages = r->reg_pages;
	double page_hit = reg_pages < ref_pages ? 1.0 - ratio(reg_pages, ref_pages) : 0.0;

	if (json) {
		printf("{\"policy\":\"%s\",\"lookups\":%" PRIu64 ",\"hits\":%" PRIu64
		       ",\"contained\":%" PRIu64 ",\"overlaps\":%" PRIu64
		       ",\"misses\":%" PRIu64 ",\"hit_ratio\":%.6f,\"page_hit_ratio\":%."
		       "6f,\"registrations\":%" PRIu64 ",\"reg_pages\":%" PRIu64
		       ",\"deregistrations\":%" PRIu64
		       ",\"reg_us\":%.1f,\"dereg_us\":%.1f,\"modelled_us\":%.1f"
		       ",\"pinned_peak\":%" PRIu64 ",\"evictions\":%" PRIu64
		       ",\"invalidations\":%" PRIu64 ",\"merges\":%" PRIu64
		       ",\"uncached\":%" PRIu64 "}\n",
		       r->name, s->lookups, s->hits, s->contained, s->overlaps, s->misses,
		       hit, page_hit, s->registrations, reg_pages, s->deregistrations,
		       reg_us, dereg_us, reg_us + dereg_us, s->pinned_peak, s->evictions,
		       s->invalidations, s->merges, s->uncached);
		return;
	}
	printf("%-12s %9" PRIu64 " %7.3f %7.3f %9" PRIu64 " %9" PRIu64 " %9" PRIu64
	       " %9" PRIu64 " %11" PRIu64 " %14.1f %12" PRIu64 "\n",
	       r->name, s->lookups, hit, page_hit, s->hits + s->contained, s->overlaps,
	       s->misses, s->registrations, reg_pages, reg_us + dereg_us, s->pinned_peak);
}

static int cmd_cache(int argc, char **argv)
{
	static const struct option opts[] = {{"capacity", required_argument, 0, 'C'},
					     {"entries", required_argument, 0, 'e'},
					     {"batch", required_argument, 0, 'b'},
					     {"resort", required_argument, 0, 'r'},
					     {"max-segs", required_argument, 0, 'm'},
					     {"page", required_argument, 0, 'p'},
					     {"mre-revalue", no_argument, 0, 'V'},
					     {"json", no_argument, 0, 'j'},
					     {0, 0, 0, 0}};
	struct leap_reg_config mrrc = {.policy = LEAP_REG_MRRC}, lru, rank;
	struct cache_result res[4] = {{.name = "nocache"},
				      {.name = "lru"},
				      {.name = "mrrc"},
				      {.name = "mrrc-rank"}};
	struct trace t;
	bool json = false;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'C':
			mrrc.max_bytes = size_arg("--capacity", optarg);
			break;
		case 'e':
			mrrc.max_entries = uint_arg("--entries", optarg, 1ULL << 32);
			break;
		case 'b':
			mrrc.evict_batch = (unsigned)uint_arg("--batch", optarg, 1 << 20);
			break;
		case 'r':
			mrrc.resort_pct = (unsigned)uint_arg("--resort", optarg, 100);
			break;
		case 'm':
			mrrc.max_segs = (unsigned)uint_arg("--max-segs", optarg,
							   LEAP_REG_MAX_SEGS);
			break;
		case 'p':
			mrrc.page_size = size_arg("--page", optarg);
			break;
		case 'V':
			mrrc.mre_revalue = true;
			res[2].name = "mrrc-revalue";
			break;
		case 'j':
			json = true;
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1)
		usage();
	if (!mrrc.page_size)
		mrrc.page_size = 4096;
	if (mrrc.page_size & (mrrc.page_size - 1)) {
		fprintf(stderr, "leap-regsim: --page must be a power of two\n");
		return 2;
	}
	load_trace(argv[optind], &t);
	lru = mrrc;
	lru.policy = LEAP_REG_LRU;
	lru.evict_batch = 1; /* the classic pin-down cache evicts one at a time */
	rank = mrrc;
	rank.policy = LEAP_REG_MRRC_RANK;
	run_nocache(&t, mrrc.page_size, &res[0]);
	if (run_cache(&t, lru, &res[1]) < 0 || run_cache(&t, mrrc, &res[2]) < 0 ||
	    run_cache(&t, rank, &res[3]) < 0)
		return 1;
	if (!json)
		printf("%-12s %9s %7s %7s %9s %9s %9s %9s %11s %14s %12s\n", "policy",
		       "lookups", "hit", "pg_hit", "hit+cont", "overlaps", "misses",
		       "regs", "reg_pages", "modelled_us", "pinned_peak");
	for (int i = 0; i < 4; i++) {
		print_cache(&res[i], json, res[0].reg_pages);
		leap_reg_fake_fini(&res[i].fake);
	}
	free(t.r);
	return 0;
}

/* ---- firehose ---- */

struct fh_result {
	const char *name;
	double reg_us, dereg_us, rtt_us;
	uint64_t regs, pinned_peak, messages, moves, victim_hits, shared_pins, oversize;
	bool over_budget;
};

static void print_fh(const struct fh_result *r, bool json, uint64_t budget)
{
	double total = r->reg_us + r->dereg_us + r->rtt_us;

	if (json) {
		printf("{\"strategy\":\"%s\",\"modelled_us\":%.1f,\"reg_us\":%.1f"
		       ",\"dereg_us\":%.1f,\"rtt_us\":%.1f,\"registrations\":%" PRIu64
		       ",\"pinned_peak\":%" PRIu64 ",\"budget\":%" PRIu64
		       ",\"over_budget\":%s,\"messages\":%" PRIu64 ",\"moves\":%" PRIu64
		       ",\"victim_hits\":%" PRIu64 ",\"shared_pins\":%" PRIu64
		       ",\"oversize\":%" PRIu64 "}\n",
		       r->name, total, r->reg_us, r->dereg_us, r->rtt_us, r->regs,
		       r->pinned_peak, budget, r->over_budget ? "true" : "false",
		       r->messages, r->moves, r->victim_hits, r->shared_pins,
		       r->oversize);
		return;
	}
	printf("%-10s %14.1f %11" PRIu64 " %14" PRIu64 " %5s %10" PRIu64 " %8" PRIu64
	       " %11" PRIu64 "\n",
	       r->name, total, r->regs, r->pinned_peak, r->over_budget ? "OVER" : "ok",
	       r->messages, r->moves, r->victim_hits);
}

static int cmd_firehose(int argc, char **argv)
{
	static const struct option opts[] = {{"budget", required_argument, 0, 'M'},
					     {"region", required_argument, 0, 'R'},
					     {"clients", required_argument, 0, 'c'},
					     {"rtt-us", required_argument, 0, 't'},
					     {"json", no_argument, 0, 'j'},
					     {0, 0, 0, 0}};
	uint64_t budget = 0, region = 1 << 20, lo = UINT64_MAX, hi = 0, page = 4096;
	uint32_t clients = 0, maxc = 0;
	double rtt = 0;
	struct fh_result res[3] = {
		{.name = "everything"}, {.name = "per-op"}, {.name = "firehose"}};
	struct leap_fh_config cfg;
	struct leap_reg_fake fake;
	struct leap_reg_ops ops;
	struct leap_fh_server *s;
	struct leap_fh_client **cl;
	struct leap_reg_stats st;
	struct trace t;
	bool json = false;
	int c, err;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'M':
			budget = size_arg("--budget", optarg);
			break;
		case 'R':
			region = size_arg("--region", optarg);
			break;
		case 'c':
			clients = (uint32_t)uint_arg("--clients", optarg,
						     LEAP_REGTRACE_MAX_CLIENTS);
			break;
		case 't':
			rtt = (double)uint_arg("--rtt-us", optarg, 1000000);
			break;
		case 'j':
			json = true;
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1 || !budget)
		usage();
	if (!region || (region & (region - 1)) || region < page) {
		fprintf(stderr, "leap-regsim: --region must be a power of two >= 4096\n");
		return 2;
	}
	load_trace(argv[optind], &t);
	for (size_t i = 0; i < t.n; i++) {
		if (t.r[i].op != LEAP_REGTRACE_REF)
			continue;
		lo = t.r[i].addr < lo ? t.r[i].addr : lo;
		hi = t.r[i].addr + t.r[i].len > hi ? t.r[i].addr + t.r[i].len : hi;
		maxc = t.r[i].client > maxc ? t.r[i].client : maxc;
	}
	if (hi == 0) {
		fprintf(stderr, "leap-regsim: no references in the trace\n");
		return 1;
	}
	if (!clients)
		clients = maxc + 1;
	if (clients <= maxc) {
		fprintf(stderr, "leap-regsim: the trace has client %u; --clients %u\n",
			maxc, clients);
		return 2;
	}
	/* the exported memory: the trace's range, in whole regions */
	cfg = (struct leap_fh_config){.base = lo & ~(region - 1),
				      .region_size = region,
				      .page_size = page,
				      .budget = budget,
				      .max_clients = clients};
	cfg.size = ((hi + region - 1) & ~(region - 1)) - cfg.base;

	/* register everything once */
	res[0].reg_us = leap_reg_cost_us(LEAP_REG_COST_REG_A, LEAP_REG_COST_REG_B,
					 cfg.size / page);
	res[0].regs = 1;
	res[0].pinned_peak = cfg.size;
	res[0].over_budget = cfg.size > budget;

	/* register per operation (one request to the server each) */
	for (size_t i = 0; i < t.n; i++) {
		uint64_t start, len;

		if (t.r[i].op != LEAP_REGTRACE_REF)
			continue;
		len = page_range(t.r[i].addr, t.r[i].len, page, &start);
		res[1].reg_us += leap_reg_cost_us(LEAP_REG_COST_REG_A,
						  LEAP_REG_COST_REG_B, len / page);
		res[1].dereg_us += leap_reg_cost_us(LEAP_REG_COST_DEREG_A,
						    LEAP_REG_COST_DEREG_B, len / page);
		res[1].regs++;
		res[1].messages++;
		res[1].pinned_peak = len > res[1].pinned_peak ? len : res[1].pinned_peak;
	}
	res[1].over_budget = res[1].pinned_peak > budget;
	res[1].rtt_us = rtt * (double)res[1].messages;

	/* Firehose */
	leap_reg_fake_init(&fake, page);
	leap_reg_fake_ops(&fake, &ops);
	s = leap_fh_server_new(&cfg, &ops, &err);
	if (!s) {
		fprintf(stderr,
			"leap-regsim: firehose: budget %" PRIu64
			" gives no region of %" PRIu64
			" to each of %u clients (or the trace spans too many regions)\n",
			budget, region, clients);
		return 2;
	}
	cl = calloc(clients, sizeof(*cl));
	for (uint32_t i = 0; cl && i < clients; i++) {
		uint32_t id;

		if (leap_fh_server_add_client(s, &id) < 0 || id != i)
			return 1;
		cl[i] = leap_fh_client_new(cfg.base, cfg.size, region,
					   leap_fh_server_share(s));
		if (!cl[i])
			return 1;
	}
	if (!cl)
		return 1;
	for (size_t i = 0; i < t.n; i++) {
		struct leap_fh_acquire a;
		uint32_t id = t.r[i].client;
		int rc;

		if (t.r[i].op != LEAP_REGTRACE_REF)
			continue;
		rc = leap_fh_client_acquire(cl[id], t.r[i].addr, t.r[i].len, &a);
		if (rc == 1) {
			struct leap_reg_key keys[LEAP_FH_MAX_SPAN];
			bool unpinned;

			err = leap_fh_server_move(s, id, a.unpin, a.nunpin, a.pin, a.npin,
						  keys, &unpinned);
			res[2].messages++;
			rc = leap_fh_client_moved(cl[id], &a, err, unpinned, keys);
		}
		if (rc == -E2BIG) {
			/* wider than the share: registered for this operation only;
			 * it may push the pinned peak over M (reported) */
			uint64_t start,
				len = page_range(t.r[i].addr, t.r[i].len, page, &start);

			res[2].oversize++;
			res[2].messages++;
			res[2].reg_us +=
				leap_reg_cost_us(fake.reg_a, fake.reg_b, len / page);
			res[2].dereg_us +=
				leap_reg_cost_us(fake.dereg_a, fake.dereg_b, len / page);
			if (fake.pinned_bytes + len > res[2].pinned_peak)
				res[2].pinned_peak = fake.pinned_bytes + len;
			continue;
		}
		if (rc < 0) {
			fprintf(stderr, "leap-regsim: firehose: record %zu: %s\n", i,
				strerror(-rc));
			return 1;
		}
		if (leap_fh_server_check(s) < 0 || fake.pinned_bytes > budget) {
			fprintf(stderr,
				"leap-regsim: firehose: budget broken at record %zu\n",
				i);
			return 1;
		}
		leap_fh_client_release(cl[id], &a);
	}
	leap_fh_server_stats(s, &st);
	res[2].reg_us += fake.reg_us;
	res[2].dereg_us += fake.dereg_us;
	res[2].regs = fake.regs + res[2].oversize;
	if (fake.pinned_peak > res[2].pinned_peak)
		res[2].pinned_peak = fake.pinned_peak;
	res[2].over_budget = res[2].pinned_peak > budget;
	res[2].moves = st.moves;
	res[2].victim_hits = st.victim_hits;
	res[2].shared_pins = st.shared_pins;
	res[2].rtt_us = rtt * (double)res[2].messages;
	if (!json)
		printf("%-10s %14s %11s %14s %5s %10s %8s %11s\n", "strategy",
		       "modelled_us", "regs", "pinned_peak", "M", "messages", "moves",
		       "victim_hits");
	for (int i = 0; i < 3; i++)
		print_fh(&res[i], json, budget);
	for (uint32_t i = 0; i < clients; i++)
		leap_fh_client_free(cl[i]);
	free(cl);
	leap_fh_server_free(s);
	leap_reg_fake_fini(&fake);
	free(t.r);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "gen"))
		return cmd_gen(argc - 1, argv + 1);
	if (!strcmp(argv[1], "cache"))
		return cmd_cache(argc - 1, argv + 1);
	if (!strcmp(argv[1], "firehose"))
		return cmd_firehose(argc - 1, argv + 1);
	usage();
	return 2;
}
