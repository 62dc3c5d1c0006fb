// SPDX-License-Identifier: MIT
/* Output formats of leap-sim (report.h).  JSON goes through json-c. */
#include <json-c/json.h>

#include "report.h"

/* Threads listed one by one in JSON; more would swamp the output. */
#define JSON_MAX_THREADS 64u

double sim_min_thread_coverage(const struct sim_result *r)
{
	double min = 1.0;

	for (uint32_t i = 0; i < r->nthreads; i++) {
		const struct sim_thread_stats *t = &r->threads[i];
		uint64_t faults = t->hits + t->misses;

		if (faults && (double)t->hits / (double)faults < min)
			min = (double)t->hits / (double)faults;
	}
	return min;
}

double sim_events_per_s(const struct sim_result *r)
{
	return r->seconds > 0 ? (double)r->accesses / r->seconds : 0.0;
}

static int add(json_object *o, const char *k, json_object *v)
{
	if (!v)
		return -1;
	return json_object_object_add(o, k, v);
}

static int add_u64(json_object *o, const char *k, uint64_t v)
{
	return add(o, k, json_object_new_uint64(v));
}

static int add_double(json_object *o, const char *k, double v)
{
	return add(o, k, json_object_new_double(v));
}

static json_object *threads_json(const struct sim_report_ctx *ctx,
				 const struct sim_result *r)
{
	json_object *arr = json_object_new_array();
	uint32_t n = r->nthreads < JSON_MAX_THREADS ? r->nthreads : JSON_MAX_THREADS;

	for (uint32_t i = 0; arr && i < n; i++) {
		const struct sim_thread_stats *ts = &r->threads[i];
		json_object *o = json_object_new_object();
		uint64_t faults = ts->hits + ts->misses;

		if (!o || add_u64(o, "pid", ctx->trace->threads[i].pid) ||
		    add_u64(o, "tid", ctx->trace->threads[i].tid) ||
		    add_u64(o, "accesses", ts->accesses) ||
		    add_u64(o, "misses", ts->misses) || add_u64(o, "hits", ts->hits) ||
		    add_double(o, "coverage",
			       faults ? (double)ts->hits / (double)faults : 0.0) ||
		    json_object_array_add(arr, o)) {
			json_object_put(o);
			json_object_put(arr);
			return NULL;
		}
	}
	return arr;
}

static int json_row(FILE *out, const struct sim_report_ctx *ctx,
		    const struct sim_result *r)
{
	const struct sim_policy_opts *o = ctx->opts;
	json_object *j = json_object_new_object();
	int err = !j;

	err = err || add(j, "policy", json_object_new_string(sim_policy_name(r->kind)));
	err = err || add(j, "trace", json_object_new_string(ctx->trace_name));
	err = err || add_u64(j, "footprint", ctx->trace->npages);
	err = err || add_u64(j, "memory_pages", r->capacity);
	err = err || add_u64(j, "accesses", r->accesses);
	err = err || add_u64(j, "faults", r->misses + r->hits);
	err = err || add_u64(j, "misses", r->misses);
	err = err || add_u64(j, "prefetched", r->prefetched);
	err = err || add_u64(j, "hits", r->hits);
	err = err || add_double(j, "accuracy", r->accuracy);
	err = err || add_double(j, "coverage", r->coverage);
	err = err || add_u64(j, "unused_evicted", r->unused_evicted);
	err = err || add_u64(j, "unused_at_end", r->unused_at_end);
	err = err || add_u64(j, "evictions", r->evictions);
	err = err || add_double(j, "est_time_us", r->est_time_us);
	err = err || add_double(j, "hit_us", ctx->cfg->hit_us);
	err = err || add_double(j, "miss_us", ctx->cfg->miss_us);
	err = err || add_double(j, "min_thread_coverage", sim_min_thread_coverage(r));
	if (r->kind == SIM_POL_LINUX || r->kind == SIM_POL_LINUX_CLUSTER)
		err = err || add_u64(j, "page_cluster", o->page_cluster);
	if (r->kind == SIM_POL_NEXT_N || r->kind == SIM_POL_STRIDE)
		err = err || add_u64(j, "window", o->window);
	if (r->kind == SIM_POL_LEAP || r->kind == SIM_POL_LEAP_THREAD) {
		err = err || add_u64(j, "hsize", o->leap.hsize);
		err = err || add_u64(j, "nsplit", o->leap.nsplit);
		err = err || add_u64(j, "pw_max", o->leap.pw_max);
		err = err || add_u64(j, "max_delta", o->leap.max_delta);
		err = err ||
		      add(j, "flavor",
			  json_object_new_string(leap_flavor_name(o->leap.flavor)));
	}
	if (ctx->bench) {
		err = err || add_double(j, "seconds", r->seconds);
		err = err || add_double(j, "events_per_s", sim_events_per_s(r));
	}
	if (r->nthreads > 1)
		err = err || add(j, "threads", threads_json(ctx, r));
	if (!err)
		fprintf(out, "%s\n",
			json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
	json_object_put(j);
	return err ? -1 : 0;
}

void sim_report_begin(FILE *out, enum sim_report_format fmt,
		      const struct sim_report_ctx *ctx)
{
	/* Ratios with 6 significant digits, not 17: readable and stable. */
	json_c_set_serialization_double_format("%.6g", JSON_C_OPTION_GLOBAL);
	if (fmt == SIM_REPORT_CSV)
		fprintf(out,
			"policy,footprint,memory_pages,accesses,misses,hits,prefetched,"
			"accuracy,coverage,unused_evicted,est_time_us,"
			"min_thread_coverage%s\n",
			ctx->bench ? ",events_per_s" : "");
	else if (fmt == SIM_REPORT_TABLE)
		fprintf(out,
			"# %s: %llu accesses, footprint %u pages, memory %u pages, %u "
			"threads\n"
			"%-13s %10s %10s %10s %8s %8s %10s %14s%s\n",
			ctx->trace_name, (unsigned long long)ctx->trace->nevents,
			ctx->trace->npages, ctx->cfg->capacity, ctx->trace->nthreads,
			"policy", "misses", "hits", "prefetched", "accuracy", "coverage",
			"unused_ev", "est_time_us", ctx->bench ? "   events/s" : "");
}

int sim_report_row(FILE *out, enum sim_report_format fmt,
		   const struct sim_report_ctx *ctx, const struct sim_result *r)
{
	switch (fmt) {
	case SIM_REPORT_JSON:
		return json_row(out, ctx, r);
	case SIM_REPORT_CSV:
		fprintf(out, "%s,%u,%u,%llu,%llu,%llu,%llu,%.6f,%.6f,%llu,%.1f,%.6f",
			sim_policy_name(r->kind), ctx->trace->npages, r->capacity,
			(unsigned long long)r->accesses, (unsigned long long)r->misses,
			(unsigned long long)r->hits, (unsigned long long)r->prefetched,
			r->accuracy, r->coverage, (unsigned long long)r->unused_evicted,
			r->est_time_us, sim_min_thread_coverage(r));
		if (ctx->bench)
			fprintf(out, ",%.0f", sim_events_per_s(r));
		fputc('\n', out);
		return 0;
	case SIM_REPORT_TABLE:
		fprintf(out, "%-13s %10llu %10llu %10llu %7.1f%% %7.1f%% %10llu %14.0f",
			sim_policy_name(r->kind), (unsigned long long)r->misses,
			(unsigned long long)r->hits, (unsigned long long)r->prefetched,
			100.0 * r->accuracy, 100.0 * r->coverage,
			(unsigned long long)r->unused_evicted, r->est_time_us);
		if (ctx->bench)
			fprintf(out, " %10.3gM", sim_events_per_s(r) / 1e6);
		fputc('\n', out);
		return 0;
	}
	return -1;
}
