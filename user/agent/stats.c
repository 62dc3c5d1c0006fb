// SPDX-License-Identifier: MIT
/*
 * `leap-agent stats`: the running agent's per-target counters, the
 * cgroups matched under each target and (--format prometheus) the agent's
 * own counters, as a table, JSON or Prometheus text (view.h says where
 * they are read from); --list names every counter.
 */
#include <argp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "counters.h"
#include "metrics.h"
#include "state.h"
#include "view.h"

/* One line for the workers, where the agent has them: each one's busy
 * time and the windows waiting for them now. */
static void print_workers(const struct agent_view *v)
{
	json_object *ag = state_get(v->state, STATE_AGENT);
	size_t n = state_workers(ag);

	if (!n)
		return;
	printf("workers: %zu, busy (s):", n);
	for (size_t i = 0; i < n; i++)
		printf(" %.2f", state_worker_busy_s(ag, i));
	printf("; windows queued now: %llu\n",
	       (unsigned long long)json_object_get_uint64(
		       state_get(ag, STATE_A_QUEUE_DEPTH)));
}

static void print_text(const struct agent_view *v)
{
	printf("%-5s %-10s %12s %12s %12s %10s %12s %12s %12s %8s %8s  %s\n", "slot",
	       "cgroup", "faults", "swapin_miss", "events", "dropped", "prefetched",
	       "hits", "wasted", "acc%", "cov%", "target");
	for (__u32 k = 0; k < LEAP_STATS_SLOTS; k++) {
		const struct leap_cg_stats *s = &v->slots[k];
		json_object *t = state_target_of_slot(v->state, k);
		double acc, cov;

		if (!v->used[k])
			continue;
		agent_rates(s, v->pushes_only, &acc, &cov);
		printf("%-5u %-10llu %12llu %12llu %12llu %10llu %12llu %12llu %12llu "
		       "%8.1f %8.1f  ",
		       k, (unsigned long long)s->cgroup_id, (unsigned long long)s->faults,
		       (unsigned long long)s->swapin_misses,
		       (unsigned long long)s->events_sent,
		       (unsigned long long)s->events_dropped,
		       (unsigned long long)s->prefetches,
		       (unsigned long long)s->prefetch_hits,
		       (unsigned long long)s->prefetch_wasted, 100 * acc, 100 * cov);
		if (t)
			printf("%s (%s, %s%s, %s)\n", state_str(t, STATE_T_TARGET, "?"),
			       state_str(t, STATE_T_MATCH, "?"),
			       state_str(t, STATE_T_MODE, "?"),
			       strcmp(state_str(t, STATE_T_STATE, ""), "removed")
				       ? ""
				       : ", removed",
			       state_str(t, STATE_T_PREFETCH, "?"));
		else
			printf("%s\n", k == 0 ? "(pid targets)" : "?");
		for (int i = 0; i < v->nleaves; i++)
			if (v->leaves[i].slot == k)
				printf("      matched: %s (id %llu)\n",
				       v->leaves[i].path ? v->leaves[i].path
							 : "(not named yet)",
				       (unsigned long long)v->leaves[i].id);
	}
	print_workers(v);
}

static json_object *to_json(const struct agent_view *v)
{
	json_object *arr = json_object_new_array();

	for (__u32 k = 0; k < LEAP_STATS_SLOTS; k++) {
		const struct leap_cg_stats *s = &v->slots[k];
		json_object *o, *ls, *t = state_target_of_slot(v->state, k);
		const struct {
			const char *name;
			uint64_t v;
		} f[] = {
			{"cgroup_id", s->cgroup_id},
			{"faults", s->faults},
			{"swapin_misses", s->swapin_misses},
			{"events_sent", s->events_sent},
			{"events_dropped", s->events_dropped},
			{"prefetches", s->prefetches},
			{"prefetch_hits", s->prefetch_hits},
			{"prefetch_wasted", s->prefetch_wasted},
		};
		double acc, cov;

		if (!v->used[k])
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "slot", json_object_new_int((int)k));
		for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
			json_object_object_add(o, f[i].name,
					       json_object_new_uint64(f[i].v));
		agent_rates(s, v->pushes_only, &acc, &cov);
		json_object_object_add(o, "accuracy", json_object_new_double(acc));
		json_object_object_add(o, "coverage", json_object_new_double(cov));
		if (t) {
			json_object_object_add(
				o, "target",
				json_object_new_string(state_str(t, STATE_T_TARGET, "")));
			json_object_object_add(
				o, "match",
				json_object_new_string(state_str(t, STATE_T_MATCH, "")));
			json_object_object_add(
				o, "mode",
				json_object_new_string(state_str(t, STATE_T_MODE, "")));
			json_object_object_add(
				o, "state",
				json_object_new_string(state_str(t, STATE_T_STATE, "")));
			json_object_object_add(o, "prefetch",
					       json_object_new_string(state_str(
						       t, STATE_T_PREFETCH, "")));
			json_object_object_add(
				o, "why",
				json_object_new_string(state_str(t, STATE_T_WHY, "")));
		}
		ls = json_object_new_array();
		for (int i = 0; i < v->nleaves; i++) {
			json_object *l;

			if (v->leaves[i].slot != k)
				continue;
			l = json_object_new_object();
			json_object_object_add(l, "cgroup_id",
					       json_object_new_uint64(v->leaves[i].id));
			json_object_object_add(
				l, "path",
				v->leaves[i].path
					? json_object_new_string(v->leaves[i].path)
					: NULL);
			json_object_array_add(ls, l);
		}
		json_object_object_add(o, "leaves", ls);
		json_object_array_add(arr, o);
	}
	return arr;
}

/* ---- the subcommand ------------------------------------------------------------- */

enum { FMT_TEXT, FMT_JSON, FMT_PROM };

struct stats_opts {
	int format;
	double interval;
	bool list;
};

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static error_t parse_stats(int key, char *arg, struct argp_state *state)
{
	struct stats_opts *o = state->input;
	char *end;

	switch (key) {
	case 'j':
		o->format = FMT_JSON;
		return 0;
	case 'f':
		if (!strcmp(arg, "text"))
			o->format = FMT_TEXT;
		else if (!strcmp(arg, "json"))
			o->format = FMT_JSON;
		else if (!strcmp(arg, "prometheus"))
			o->format = FMT_PROM;
		else
			argp_error(state,
				   "--format takes text, json or prometheus, not '%s'",
				   arg);
		return 0;
	case 'l':
		o->list = true;
		return 0;
	case 'i':
		o->interval = strtod(arg, &end);
		if (*end || o->interval <= 0)
			argp_error(state, "--interval takes seconds > 0");
		return 0;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

int do_stats(int argc, char **argv)
{
	static const struct argp_option opts[] = {
		{"json", 'j', NULL, 0, "JSON output (same as --format json)", 0},
		{"format", 'f', "text|json|prometheus", 0,
		 "Output format; prometheus is the text exposition format", 0},
		{"interval", 'i', "S", 0, "Repeat every S seconds until interrupted", 0},
		{"list", 'l', NULL, 0,
		 "List the agent's counters (JSON key, Prometheus name, per-target, "
		 "agent or backend, help) and exit; needs no running agent",
		 0},
		{},
	};
	struct argp argp = {
		opts,
		parse_stats,
		NULL,
		"Per-target counters of the running agent, the cgroups matched under "
		"each target, and (--format prometheus) the agent's own counters.\v"
		"Reads " LEAP_PIN_DIR "/stats, " LEAP_PIN_DIR
		"/leaves and " AGENT_STATE_FILE ".",
		NULL,
		NULL,
		NULL};
	struct stats_opts o = {0};
	struct sigaction sa = {.sa_handler = on_stop};
	char err[512];

	if (argp_parse(&argp, argc, argv, 0, NULL, &o))
		return 2;
	if (o.list) {
		agent_counters_list(stdout);
		return 0;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	do {
		struct agent_view *v = malloc(sizeof(*v));

		if (!v || view_load(v, err, sizeof(err))) {
			fprintf(stderr, "leap-agent: %s\n", v ? err : "out of memory");
			free(v);
			return 1;
		}
		if (o.format == FMT_TEXT) {
			print_text(v);
		} else if (o.format == FMT_JSON) {
			json_object *arr = to_json(v);

			printf("%s\n", json_object_to_json_string_ext(
					       arr, JSON_C_TO_STRING_PLAIN));
			json_object_put(arr);
		} else {
			agent_metrics_print(stdout, v);
		}
		view_free(v);
		free(v);
		fflush(stdout);
		if (o.interval > 0)
			usleep((useconds_t)(o.interval * 1e6));
	} while (o.interval > 0 && !stop);
	return 0;
}
