// SPDX-License-Identifier: MIT
/* The decision core fed and recorded (decision.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "decision.h"
#include "recording.h"

struct leap_core_policy decision_policy(const struct agent_policy *p)
{
	return (struct leap_core_policy){.mode = (enum leap_core_mode)p->mode,
					 .params = p->params,
					 .cold_behind = p->cold_behind,
					 .stand_down = p->stand_down,
					 .judge_outcome = p->judge_outcome};
}

_Static_assert((int)AGENT_MODE_LEAP == (int)LEAP_CORE_LEAP &&
		       (int)AGENT_MODE_OBSERVE == (int)LEAP_CORE_OBSERVE &&
		       (int)AGENT_MODE_OFF == (int)LEAP_CORE_OFF,
	       "agent modes are the core's");

int decision_init(struct agent *a, const char *record_path)
{
	struct agent_decision *d = &a->dec;
	struct leap_core_config cfg = {
		.streams = a->config.streams,
		.idle_ns = (uint64_t)a->config.idle_timeout_s * 1000000000ULL,
		.hold_all = a->hold_all_kernel_ra,
		.backend = a->ex.be != NULL,
		.pushes_only = agent_pushes_only(a),
		.cold_chunk = AGENT_COLD_CHUNK,
		.kra_trust = AGENT_KRA_TRUST,
		.sweeps = a->config.sweeps,
		.outcome_swap_cache = a->swap_cache_hits,
		.outcome_lead = true,
	};
	char err[512];

	leap_cost_params_default(&cfg.cost);
	leap_outcome_params_default(&cfg.outcome);
	d->core = leap_core_new(&cfg);
	if (!d->core) {
		fprintf(stderr, "leap-agent: out of memory for %u streams\n",
			cfg.streams);
		return -ENOMEM;
	}
	d->facts_ctx = (struct procs_facts){.c = a->ex.procs, .r = &a->ex.pf.pagemap};
	d->port = procs_facts_port(&d->facts_ctx);
	d->facts = d->port;
	if (!record_path)
		return 0;
	d->rec = recording_create(record_path, &cfg, err, sizeof(err));
	if (!d->rec) {
		fprintf(stderr, "leap-agent: --record: %s\n", err);
		return -EIO;
	}
	/* The answers the port gives go into the recording as they are given. */
	d->facts = recording_tap(d->rec, &d->port);
	return 0;
}

void decision_fini(struct agent *a)
{
	struct agent_decision *d = &a->dec;

	if (d->rec && recording_close(d->rec, leap_core_counters(d->core)))
		fprintf(stderr, "leap-agent: the recording is incomplete\n");
	d->rec = NULL;
	leap_core_free(d->core);
	d->core = NULL;
}

uint32_t decision_target_add(struct agent *a, const struct agent_policy *p)
{
	struct leap_core_policy cp = decision_policy(p);
	uint32_t id = leap_core_target_add(a->dec.core, &cp);

	if (id != LEAP_CORE_NO_TARGET)
		recording_target_add(a->dec.rec, id, &cp);
	return id;
}

bool decision_target_set(struct agent *a, uint32_t id, const struct agent_policy *p)
{
	struct leap_core_policy cp = decision_policy(p);

	recording_target_set(a->dec.rec, id, &cp);
	return leap_core_target_set(a->dec.core, id, &cp);
}

void decision_target_remove(struct agent *a, uint32_t id)
{
	recording_target_remove(a->dec.rec, id);
	leap_core_target_remove(a->dec.core, id);
}

static bool env_equal(const struct leap_core_env *x, const struct leap_core_env *y)
{
	return x->swap.sync_pct == y->swap.sync_pct &&
	       x->swap.top_sync == y->swap.top_sync && x->ra_pages == y->ra_pages &&
	       x->can_prefetch == y->can_prefetch && x->can_cold == y->can_cold;
}

void decision_env(struct agent *a, const struct leap_core_env *env)
{
	if (env_equal(leap_core_env(a->dec.core), env))
		return;
	recording_env(a->dec.rec, env);
	leap_core_set_env(a->dec.core, env);
}

const struct leap_core_plan *decision_event(struct agent *a, uint32_t target,
					    const struct leap_event *ev)
{
	recording_event(a->dec.rec, target, ev);
	return leap_core_event(a->dec.core, target, ev, &a->dec.facts);
}

void decision_spent(struct agent *a, uint32_t target, uint32_t pages, uint64_t ns)
{
	recording_spent(a->dec.rec, target, pages, ns);
	leap_core_spent(a->dec.core, target, pages, ns);
}

void decision_forget(struct agent *a, uint32_t tgid)
{
	recording_forget(a->dec.rec, tgid);
	leap_core_forget(a->dec.core, tgid);
}

uint32_t decision_tick(struct agent *a, uint64_t now_ns, uint32_t *changed,
		       enum leap_verdict_change *how)
{
	recording_tick(a->dec.rec, now_ns);
	return leap_core_tick(a->dec.core, now_ns, changed, how);
}
