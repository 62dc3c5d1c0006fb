// SPDX-License-Identifier: MIT
/* The agent's state file: its writer and its readers (state.h). */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "account.h"
#include "agent.h"
#include "counters.h"
#include "hooks.h"
#include "state.h"

/* ---- writing ----------------------------------------------------------------- */

/* A target's outcome judge, since its last probe (outcome.h). */
static json_object *outcome_json(const struct leap_outcome *o)
{
	json_object *j = json_object_new_object(), *r = json_object_new_array();

	json_object_object_add(
		j, STATE_O_VERDICT,
		json_object_new_string(leap_outcome_verdict_name(o->verdict)));
	json_object_object_add(j, STATE_O_HELD_EPOCHS,
			       json_object_new_uint64(o->held_epochs));
	json_object_object_add(j, STATE_O_COMPARISONS,
			       json_object_new_uint64(o->comparisons));
	json_object_object_add(j, STATE_O_DROPPED, json_object_new_uint64(o->dropped));
	json_object_object_add(j, STATE_O_DROPPED_LEAD,
			       json_object_new_uint64(o->lead_dropped));
	for (uint32_t i = 0; i < o->n_ratios; i++)
		json_object_array_add(r, json_object_new_int((int)o->ratio_pct[i]));
	json_object_object_add(j, STATE_O_RATIOS, r);
	json_object_object_add(j, STATE_O_MEDIAN,
			       json_object_new_int((int)o->median_pct));
	return j;
}

/*
 * Reaction latency histograms, one per stats slot in use: bounds, then
 * per-bucket (not cumulative) counts, the last one above every bound.
 */
static json_object *reaction_json(const struct agent *a)
{
	json_object *h = json_object_new_object(), *slots = json_object_new_object();
	json_object *bounds = json_object_new_array();

	for (int i = 0; i < AGENT_LAT_BUCKETS; i++)
		json_object_array_add(bounds,
				      json_object_new_int((int)agent_lat_bounds_us[i]));
	json_object_object_add(h, STATE_R_BOUNDS, bounds);
	for (uint32_t k = 0; k < LEAP_STATS_SLOTS; k++) {
		json_object *sl, *counts;
		bool used = a->acct.lat.sum_us[k] != 0;
		char key[16];

		for (int i = 0; !used && i < a->ntargets; i++)
			used = a->targets[i].slot == k;
		if (!used)
			continue;
		sl = json_object_new_object();
		counts = json_object_new_array();
		for (int i = 0; i <= AGENT_LAT_BUCKETS; i++)
			json_object_array_add(
				counts, json_object_new_uint64(a->acct.lat.hist[k][i]));
		json_object_object_add(sl, STATE_R_COUNTS, counts);
		json_object_object_add(sl, STATE_R_SUM,
				       json_object_new_uint64(a->acct.lat.sum_us[k]));
		snprintf(key, sizeof(key), "%u", k);
		json_object_object_add(slots, key, sl);
	}
	json_object_object_add(h, STATE_R_SLOTS, slots);
	return h;
}

static json_object *leaves_json(const struct agent *a, const struct agent_target *tg)
{
	json_object *ls = json_object_new_array();

	for (int j = 0; j < a->leaves.n; j++) {
		const struct agent_leaf *f = &a->leaves.v[j];
		json_object *l;

		if (tg->gone || f->target_id != tg->cgroup_id || !f->path)
			continue;
		l = json_object_new_object();
		json_object_object_add(l, STATE_T_CGROUP_ID,
				       json_object_new_uint64(f->id));
		json_object_object_add(l, STATE_L_PATH, json_object_new_string(f->path));
		json_object_array_add(ls, l);
	}
	return ls;
}

/* Targets, with the cgroups matched under each. */
json_object *state_targets_json(const struct agent *a)
{
	json_object *ts = json_object_new_array();

	for (int i = 0; i < a->ntargets; i++) {
		const struct agent_target *tg = &a->targets[i];
		const struct leap_cost *cost =
			leap_core_target_cost(a->dec.core, tg->core_id);
		json_object *t = json_object_new_object();
		bool cg = tg->kind == TARGET_CGROUP;

		json_object_object_add(t, STATE_T_KIND,
				       json_object_new_string(cg ? "cgroup" : "pid"));
		json_object_object_add(t, STATE_T_TARGET,
				       json_object_new_string(tg->path));
		json_object_object_add(
			t, STATE_T_MODE,
			json_object_new_string(agent_mode_name(tg->policy.mode)));
		json_object_object_add(t, STATE_T_STREAM,
				       json_object_new_string(leap_stream_key_name(
					       tg->policy.params.key)));
		json_object_object_add(t, STATE_T_COLD_BEHIND,
				       json_object_new_int((int)tg->policy.cold_behind));
		json_object_object_add(t, STATE_T_SLOT,
				       json_object_new_int((int)tg->slot));
		json_object_object_add(
			t, STATE_T_PREFETCH,
			json_object_new_string(leap_cost_state_name(cost->state)));
		json_object_object_add(t, STATE_T_WHY, json_object_new_string(cost->why));
		if (tg->policy.judge_outcome)
			json_object_object_add(t, STATE_T_OUTCOME,
					       outcome_json(leap_core_target_outcome(
						       a->dec.core, tg->core_id)));
		if (cg) {
			json_object_object_add(t, STATE_T_MATCH,
					       json_object_new_string(tg->policy.exact
									      ? "exact"
									      : "tree"));
			json_object_object_add(t, STATE_T_CGROUP_ID,
					       json_object_new_uint64(tg->cgroup_id));
			json_object_object_add(
				t, STATE_T_STATE,
				json_object_new_string(tg->gone ? "removed"
								: "watching"));
			json_object_object_add(t, STATE_T_LEAVES, leaves_json(a, tg));
		}
		json_object_array_add(ts, t);
	}
	return ts;
}

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

/* The agent's counters (counters.h), CPU time and BPF program stats. */
static json_object *agent_json(const struct agent *a)
{
	json_object *o = json_object_new_object();
	struct leap_cg_stats tot;
	struct rusage ru;

	agent_totals(a, &tot);
	agent_counters_json(o, a, &tot);
	getrusage(RUSAGE_SELF, &ru);
	json_object_object_add(o, STATE_A_CPU_USER,
			       json_object_new_double(tv_s(ru.ru_utime)));
	json_object_object_add(o, STATE_A_CPU_SYSTEM,
			       json_object_new_double(tv_s(ru.ru_stime)));
	json_object_object_add(
		o, STATE_A_PREFETCH_CPU,
		json_object_new_double(a->acct.pf_sum.willneed.cpu_ns / 1e9));
	agent_workers_json(o, a);
	if (a->bpf_stats) {
		struct leap_prog_stats ps[16];
		json_object *progs = json_object_new_object();
		int n = leap_observer_prog_stats(a->obs, ps, 16);

		for (int i = 0; i < n; i++) {
			json_object *p = json_object_new_object();

			json_object_object_add(p, STATE_A_RUN_TIME,
					       json_object_new_uint64(ps[i].run_time_ns));
			json_object_object_add(p, STATE_A_RUN_CNT,
					       json_object_new_uint64(ps[i].run_cnt));
			json_object_object_add(progs, ps[i].name, p);
		}
		json_object_object_add(o, STATE_A_BPF_PROGS, progs);
	}
	return o;
}

void state_write(struct agent *a, const char *caps)
{
	json_object *o = json_object_new_object();

	agent_refresh(a);
	json_object_object_add(o, STATE_PID, json_object_new_int(getpid()));
	json_object_object_add(o, STATE_HOOK,
			       json_object_new_string(leap_observer_hook_name(a->obs)));
	json_object_object_add(o, STATE_PREFETCH,
			       json_object_new_string(agent_prefetch_via(a)));
	json_object_object_add(
		o, STATE_PREFETCH_REASON,
		json_object_new_string(a->ex.prefetch_why ? a->ex.prefetch_why : ""));
	json_object_object_add(o, STATE_PUSHES_ONLY,
			       json_object_new_boolean(agent_pushes_only(a)));
	json_object_object_add(o, STATE_CAPS, json_object_new_string(caps ? caps : ""));
	json_object_object_add(o, STATE_FAULT_HOOKS,
			       json_object_new_string(hooks_state(a)));
	if (a->ex.be)
		json_object_object_add(o, STATE_BACKEND_SOCKET,
				       json_object_new_string(a->ex.be->path));
	json_object_object_add(o, STATE_TARGETS, state_targets_json(a));
	json_object_object_add(o, STATE_AGENT, agent_json(a));
	json_object_object_add(o, STATE_REACTION, reaction_json(a));
	mkdir(AGENT_STATE_DIR, 0755);
	if (json_object_to_file_ext(AGENT_STATE_FILE ".tmp", o,
				    JSON_C_TO_STRING_PRETTY) == 0)
		rename(AGENT_STATE_FILE ".tmp", AGENT_STATE_FILE);
	json_object_put(o);
	a->state_dirty = false;
}

void state_remove(void)
{
	unlink(AGENT_STATE_FILE);
}

/* ---- reading ----------------------------------------------------------------- */

json_object *state_read(void)
{
	return json_object_from_file(AGENT_STATE_FILE);
}

json_object *state_get(json_object *o, const char *key)
{
	json_object *v = NULL;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

size_t state_workers(json_object *ag)
{
	json_object *each = state_get(ag, STATE_A_WORKER_BUSY);

	return each && json_object_is_type(each, json_type_array)
		       ? json_object_array_length(each)
		       : 0;
}

double state_worker_busy_s(json_object *ag, size_t i)
{
	json_object *each = state_get(ag, STATE_A_WORKER_BUSY);

	return json_object_get_uint64(json_object_array_get_idx(each, i)) / 1e9;
}

const char *state_str(json_object *o, const char *key, const char *dflt)
{
	json_object *v = state_get(o, key);

	return v ? json_object_get_string(v) : dflt;
}

bool state_pushes_only(json_object *st)
{
	return json_object_get_boolean(state_get(st, STATE_PUSHES_ONLY));
}

json_object *state_target_of_slot(json_object *st, uint32_t slot)
{
	json_object *ts = state_get(st, STATE_TARGETS);

	for (size_t i = 0; ts && i < json_object_array_length(ts); i++) {
		json_object *t = json_object_array_get_idx(ts, i);

		if (!strcmp(state_str(t, STATE_T_KIND, ""), "cgroup") &&
		    json_object_get_int(state_get(t, STATE_T_SLOT)) == (int)slot)
			return t;
	}
	return NULL;
}

const char *state_leaf_path(json_object *st, uint64_t id)
{
	json_object *ts = state_get(st, STATE_TARGETS);

	for (size_t i = 0; ts && i < json_object_array_length(ts); i++) {
		json_object *ls =
			state_get(json_object_array_get_idx(ts, i), STATE_T_LEAVES);

		for (size_t j = 0; ls && j < json_object_array_length(ls); j++) {
			json_object *l = json_object_array_get_idx(ls, j);

			if ((uint64_t)json_object_get_uint64(
				    state_get(l, STATE_T_CGROUP_ID)) == id)
				return state_str(l, STATE_L_PATH, NULL);
		}
	}
	return NULL;
}

int state_histogram(json_object *st, uint32_t k, double *bounds, uint64_t *counts,
		    double *sum, int max)
{
	json_object *h = state_get(st, STATE_REACTION), *b = state_get(h, STATE_R_BOUNDS);
	json_object *sl, *c;
	size_t n = b ? json_object_array_length(b) : 0;
	char key[16];

	snprintf(key, sizeof(key), "%u", k);
	sl = state_get(state_get(h, STATE_R_SLOTS), key);
	c = state_get(sl, STATE_R_COUNTS);
	if (!n || n > (size_t)max || !c || json_object_array_length(c) != n + 1)
		return 0;
	for (size_t j = 0; j < n; j++)
		bounds[j] = json_object_get_int(json_object_array_get_idx(b, j)) / 1e6;
	for (size_t j = 0; j <= n; j++)
		counts[j] = json_object_get_uint64(json_object_array_get_idx(c, j));
	*sum = json_object_get_uint64(state_get(sl, STATE_R_SUM)) / 1e6;
	return (int)n;
}
