// SPDX-License-Identifier: MIT
/* The agent's targets (targets.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "account.h"
#include "cgroup.h"
#include "decision.h"
#include "memflush.h"
#include "targets.h"

static uint32_t target_flags(const struct agent *a, const struct agent_target *t)
{
	const struct agent_policy *p = &t->policy;
	uint32_t f = 0;

	if (p->mode != AGENT_MODE_OFF)
		f |= LEAP_TGT_EVENTS;
	/*
	 * Nobody reacts to an observed fault, so it waits for a batch: a
	 * wake-up per major fault costs the faulting program more than the
	 * BPF programs do (CPython strided scan under observe, 2026-11-25:
	 * the scan 0.79x of no agent with them; docs/bench-real.md).
	 */
	if (p->mode == AGENT_MODE_OBSERVE)
		f |= LEAP_TGT_NO_WAKE;
	if (p->params.key == LEAP_KEY_THREAD)
		f |= LEAP_TGT_THREAD_DELTAS;
	if (p->exact)
		f |= LEAP_TGT_EXACT;
	if (leap_core_target_standby(a->dec.core, t->core_id))
		f |= LEAP_TGT_STANDBY;
	return f;
}

int target_push(struct agent *a, struct agent_target *t, char *err, size_t errlen)
{
	struct leap_target bt = {.stats_slot = t->slot, .flags = target_flags(a, t)};
	int rc;

	if (a->ex.iss)
		issuer_set_rate(a->ex.iss, t->slot, t->policy.prefetch_rate);
	if (t->kind == TARGET_CGROUP)
		rc = leap_observer_add_cgroup(a->obs, t->cgroup_id, &bt);
	else
		rc = leap_observer_add_pid(a->obs, t->tgid, &bt);
	if (rc && err)
		snprintf(err, errlen, "%s %s: %s",
			 t->kind == TARGET_CGROUP ? "cgroup" : "pid", t->path,
			 rc == -ESRCH ? "no such process" : strerror(-rc));
	return rc;
}

/* The next free entry of a->targets, set up (in the decision core too) but
 * not yet counted in; NULL when the core has no room. */
static struct agent_target *target_new(struct agent *a, enum target_kind kind,
				       const struct agent_policy *pol, uint32_t slot)
{
	struct agent_target *t = &a->targets[a->ntargets];

	memset(t, 0, sizeof(*t));
	t->kind = kind;
	t->policy = *pol;
	t->slot = slot;
	t->core_id = decision_target_add(a, pol);
	return t->core_id == LEAP_CORE_NO_TARGET ? NULL : t;
}

/* Pushing t into BPF failed: the core forgets it too. */
static int target_abandon(struct agent *a, struct agent_target *t, int rc)
{
	if (t->kind == TARGET_CGROUP)
		memflush_clear(&a->memflush, t->slot);
	decision_target_remove(a, t->core_id);
	return rc;
}

int agent_add_cgroup(struct agent *a, const char *path, const struct agent_policy *pol,
		     char *err, size_t errlen)
{
	return agent_add_cgroup_opts(a, path, pol, false, err, errlen);
}

int agent_add_cgroup_opts(struct agent *a, const char *path,
			  const struct agent_policy *pol, bool force_exact, char *err,
			  size_t errlen)
{
	struct agent_target *t;
	__u64 id;
	int rc;

	rc = leap_cgroup_id_from_path(path, &id);
	if (rc) {
		snprintf(err, errlen, "cgroup %s: %s", path,
			 rc == -EINVAL ? "not a cgroup2 directory" : strerror(-rc));
		return rc;
	}
	for (int i = 0; i < a->ntargets; i++)
		if (a->targets[i].kind == TARGET_CGROUP &&
		    a->targets[i].cgroup_id == id) {
			snprintf(err, errlen, "cgroup %s given twice", path);
			return -EEXIST;
		}
	if (a->ntargets == AGENT_MAX_TARGETS || a->next_slot >= LEAP_STATS_SLOTS) {
		snprintf(err, errlen, "too many targets (at most %d cgroups)",
			 LEAP_STATS_SLOTS - 1);
		return -ENOSPC;
	}
	t = target_new(a, TARGET_CGROUP, pol, a->next_slot);
	if (!t) {
		snprintf(err, errlen, "too many targets");
		return -ENOSPC;
	}
	t->cgroup_id = id;
	snprintf(t->path, sizeof(t->path), "%s", path);
	memflush_set(&a->memflush, t->slot, path);
	t->exact_forced = force_exact;
	if (force_exact)
		t->policy.exact = true;
	rc = target_push(a, t, err, errlen);
	if (rc)
		return target_abandon(a, t, rc);
	a->next_slot++;
	a->ntargets++;
	return 0;
}

int agent_add_pid(struct agent *a, uint32_t tgid, const struct agent_policy *pol,
		  char *err, size_t errlen)
{
	struct agent_target *t;
	int rc;

	if (a->ntargets == AGENT_MAX_TARGETS) {
		snprintf(err, errlen, "too many targets");
		return -ENOSPC;
	}
	/* Slot 0 collects every pid target's counts (agent_init()). */
	t = target_new(a, TARGET_PID, pol, 0);
	if (!t) {
		snprintf(err, errlen, "too many targets");
		return -ENOSPC;
	}
	t->tgid = tgid;
	snprintf(t->path, sizeof(t->path), "%u", tgid);
	rc = target_push(a, t, err, errlen);
	if (rc)
		return target_abandon(a, t, rc);
	a->ntargets++;
	return 0;
}

void agent_apply_config(struct agent *a, const struct agent_config *cfg)
{
	/* Engine-level [agent] sizes are fixed at start; policies change live. */
	a->config.def = cfg->def;
	memcpy(a->config.cgroups, cfg->cgroups, sizeof(cfg->cgroups));
	a->config.ncgroups = cfg->ncgroups;
	for (int i = 0; i < a->ntargets; i++) {
		struct agent_target *t = &a->targets[i];
		bool was_exact = t->policy.exact;

		t->policy = *agent_config_policy_for(
			&a->config, t->kind == TARGET_CGROUP ? t->path : NULL);
		if (t->exact_forced)
			t->policy.exact = true;
		/* Now prefetching whatever it costs: no longer standing down
		 * (target_push() below clears its BPF flag). */
		decision_target_set(a, t->core_id, &t->policy);
		/* Now exact: its descendants match elsewhere or not at all; BPF
		 * names them afresh at their next fault. */
		if (t->kind == TARGET_CGROUP && !was_exact && t->policy.exact)
			leaves_drop_target(&a->leaves, t->cgroup_id);
		if (!t->gone)
			target_push(a, t, NULL, 0);
	}
}

/*
 * The target an event belongs to: its pid entry first, then its cgroup's,
 * then the target BPF matched the cgroup to (a descendant's deepest
 * covering target, leaves.h).
 */
struct agent_target *target_of_event(struct agent *a, const struct leap_event *ev)
{
	struct agent_target *by_cgroup = NULL;
	uint64_t target_id;

	for (int i = 0; i < a->ntargets; i++) {
		struct agent_target *t = &a->targets[i];

		if (t->kind == TARGET_PID && t->tgid == ev->tgid)
			return t;
		if (t->kind == TARGET_CGROUP && !t->gone && t->cgroup_id == ev->cgroup_id)
			by_cgroup = t;
	}
	if (by_cgroup || !ev->cgroup_id)
		return by_cgroup;
	target_id = leaves_target(&a->leaves, ev->cgroup_id);
	for (int i = 0; target_id && i < a->ntargets; i++)
		if (a->targets[i].kind == TARGET_CGROUP && !a->targets[i].gone &&
		    a->targets[i].cgroup_id == target_id)
			return &a->targets[i];
	return NULL;
}

static bool pid_alive(uint32_t tgid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%u", tgid);
	return stat(path, &st) == 0;
}

/*
 * A cgroup target whose directory was removed stops being watched (its
 * slot keeps its counts) until a cgroup of the same path appears again:
 * a restarted systemd service or container gets a new cgroup, and a new id.
 */
static void check_cgroup_target(struct agent *a, struct agent_target *t)
{
	char err[512];
	uint64_t id;
	int rc = cgroup_id_quiet(t->path, &id);

	if (!t->gone) {
		if (rc == 0 && id == t->cgroup_id)
			return;
		leap_observer_remove_cgroup(a->obs, t->cgroup_id);
		leaves_drop_target(&a->leaves, t->cgroup_id);
		t->gone = true;
		a->state_dirty = true;
		fprintf(stderr,
			"leap-agent: watched cgroup %s was removed; not watched until a "
			"cgroup of that path exists again (its counters are kept)\n",
			t->path);
	}
	if (rc)
		return;
	t->cgroup_id = id;
	if (target_push(a, t, err, sizeof(err))) {
		fprintf(stderr, "leap-agent: cannot watch %s again: %s\n", t->path, err);
		return;
	}
	t->gone = false;
	/* Found afresh: the new cgroup may have a memory controller (or a v1
	 * twin) where the old one had none, or the other way round. */
	memflush_set(&a->memflush, t->slot, t->path);
	a->state_dirty = true;
	fprintf(stderr, "leap-agent: cgroup %s exists again (id %llu); watching it\n",
		t->path, (unsigned long long)id);
}

/*
 * Once a tick: removed cgroups and their return (check_cgroup_target()),
 * the cgroups below the targets (leaves.h), and pid targets that exited.
 */
void targets_tick(struct agent *a)
{
	struct leaves_root roots[AGENT_MAX_TARGETS];
	int n = 0;

	for (int i = 0; i < a->ntargets; i++) {
		struct agent_target *t = &a->targets[i];

		if (t->kind != TARGET_CGROUP)
			continue;
		check_cgroup_target(a, t);
		if (!t->gone)
			roots[n++] =
				(struct leaves_root){.id = t->cgroup_id, .path = t->path};
	}
	if (leaves_tick(&a->leaves, roots, n))
		a->state_dirty = true;
	for (int i = 0; i < a->ntargets; i++) {
		struct agent_target *t = &a->targets[i];

		if (t->kind != TARGET_PID || pid_alive(t->tgid))
			continue;
		fprintf(stderr, "leap-agent: pid %u exited; no longer watched\n",
			t->tgid);
		leap_observer_remove_pid(a->obs, t->tgid);
		account_forget_process(a, t->tgid);
		decision_target_remove(a, t->core_id);
		a->targets[i] = a->targets[--a->ntargets];
		i--;
	}
}
