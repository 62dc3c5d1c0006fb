// SPDX-License-Identifier: MIT
/*
 * The observe stage's driver: each ring-buffer record goes one way,
 * observe -> decide -> execute, with what the workers learnt accounted
 * first (agent.h).  The observer runs with swap_events_only: it sends
 * major faults, known swap faults (fentry path) and faults on pages in
 * the prefetched-page map; what each is, the decision core says
 * (core.c, classify()).  Which targets are watched, and their comings and
 * goings: targets.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "agent.h"
#include "decision.h"
#include "execute.h"
#include "hooks.h"
#include "swapra.h"
#include "swapslot.h"
#include "targets.h"

/* What /proc/swaps says of zram and pmem (struct leap_cost_swap). */
static struct leap_cost_swap read_swaps(void)
{
	struct leap_cost_swap sw = {.sync_pct = -1};
	char buf[8192];
	FILE *f = fopen("/proc/swaps", "re");
	size_t n;

	if (!f)
		return sw;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	sw.sync_pct = swapslot_sync_share(buf);
	sw.top_sync = swapslot_top_sync(buf);
	return sw;
}

/*
 * The most pages one swap readahead of the kernel brings in (swapra.h):
 * 1 << vm.page-cluster, at most 32 for VMA-based readahead
 * (mm/swap_state.c swap_vma_ra_win()), 0 when it is off.  Global, and the
 * kind changes as rotational swap areas come and go: probed every tick.
 * Past 1024 pages (page-cluster > 10) the engine counts it as none.  An
 * area on zram has no readahead at all, but there the target stands down.
 */
static uint32_t kernel_ra_pages(void)
{
	struct swapra ra;

	swapra_probe(&ra);
	return ra.max_pages <= 1024 ? ra.max_pages : 0;
}

/*
 * Whether windows reach anything: the kernel's process_madvise(WILLNEED);
 * in backend mode leap-swapd's link, and with --backend-into swapcache the
 * kernel too.
 */
static bool can_prefetch(const struct agent *a)
{
	if (a->ex.be)
		return a->ex.be->fd >= 0 && (!a->ex.be_swapcache || a->ex.prefetch_ok);
	return a->ex.prefetch_ok;
}

void agent_update_env(struct agent *a)
{
	struct leap_core_env env = {
		.swap = a->swap,
		.ra_pages = a->ra_pages,
		.can_prefetch = can_prefetch(a),
		/* An agent that cannot prefetch observes only, as it says: it
		 * leaves reclaim alone too. */
		.can_cold = a->ex.cold_ok && a->ex.prefetch_ok,
	};

	decision_env(a, &env);
}

int agent_init(struct agent *a, const struct agent_config *cfg, bool follow_cpu)
{
	int rc;

	memset(a, 0, sizeof(*a));
	a->config = *cfg;
	a->next_slot = 1; /* slot 0 collects pid targets */
	a->ra_pages = kernel_ra_pages();
	a->swap = read_swaps();
	account_init(a);
	rc = memflush_init(&a->memflush, cfg->memcg_flush_ms);
	if (rc)
		return rc;
	return execute_init(a, follow_cpu);
}

int agent_attach_observer(struct agent *a, struct leap_observer *obs,
			  const char *record_path)
{
	int rc;

	a->obs = obs;
	execute_attach_observer(a);
	leaves_init(&a->leaves, obs);
	rc = decision_init(a, record_path);
	if (rc == 0)
		agent_update_env(a);
	return rc;
}

int agent_start_issuer(struct agent *a, unsigned workers)
{
	return execute_start_workers(a, workers);
}

/*
 * A target whose window queue overflowed is told about once: the workers
 * fall behind its windows and drop the oldest (issuer.h).  The counter
 * windows_overflow keeps the count.
 */
static void say_overflow(struct agent *a)
{
	struct prefetch_stats pf;
	struct pagemap_reader pm;
	struct issuer_counters c;

	if (!a->ex.iss)
		return;
	issuer_counters(a->ex.iss, &c, &pf, &pm);
	if (!c.overflow)
		return;
	for (int i = 0; i < a->ntargets; i++) {
		struct agent_target *t = &a->targets[i];
		uint64_t n = t->slot < LEAP_STATS_SLOTS ? c.overflow_slot[t->slot] : 0;

		if (!n || t->overflow_said)
			continue;
		t->overflow_said = true;
		fprintf(stderr,
			"leap-agent: %s %s: the prefetch workers fall behind its "
			"windows; "
			"%llu dropped from its full queue, oldest first (counter "
			"windows_overflow; more workers or a deeper queue_depth help)\n",
			t->kind == TARGET_CGROUP ? "cgroup" : "pid", t->path,
			(unsigned long long)n);
	}
}

void agent_stop_issuer(struct agent *a)
{
	say_overflow(a); /* since the last tick */
	execute_stop_workers(a);
}

void agent_fini(struct agent *a)
{
	memflush_stop(&a->memflush);
	execute_fini(a);
	decision_fini(a);
	leaves_fini(&a->leaves);
	account_fini(a);
}

/*
 * What the observe stage itself notes of a followed target's event: the
 * fault hooks' keep-alive, and in backend mode which swap type the
 * device's reads confirm.
 */
static void observe_note(struct agent *a, struct agent_target *t,
			 const struct leap_event *ev)
{
	struct backend *be = a->ex.be;

	if (hooks_note_event(a, ev) && t->kind == TARGET_CGROUP)
		memflush_note(&a->memflush, t->slot, ev->ts_ns); /* swapping */
	if (!be)
		return;
	if (ev->flags & LEAP_EV_DEV_MULTI)
		a->acct.ambiguous++; /* several device reads in one fault */
	else if ((ev->flags & LEAP_EV_DEV_READ) &&
		 backend_confirm(be, ev->tgid, ev->addr >> LEAP_PAGE_SHIFT,
				 ev->swap_offset))
		fprintf(stderr,
			"leap-agent: %s is swap type %d, not its /proc/swaps position "
			"(a lower area was swapped off): pushing that type's slots\n",
			be->dev, be->swap_type);
}

int agent_on_event(void *ctx, const struct leap_event *ev)
{
	struct agent *a = ctx;
	const struct leap_core_plan *plan;
	struct agent_target *t;

	if (ev->flags & LEAP_EV_ARM) {
		hooks_arm(a, ev);
		return 0;
	}
	/* The workers' results first: the cost model samples them before
	 * this event, and a process found gone is forgotten. */
	account_drain(a);
	t = target_of_event(a, ev);
	if (t && t->policy.mode != AGENT_MODE_OFF)
		observe_note(a, t, ev);
	plan = decision_event(a, t ? t->core_id : LEAP_CORE_NO_TARGET, ev);
	execute_plan(a, t, ev, plan);
	return 0;
}

/* The target of a core id; NULL if it is not (or no longer) one. */
static struct agent_target *target_of_core_id(struct agent *a, uint32_t id)
{
	for (int i = 0; i < a->ntargets; i++)
		if (a->targets[i].core_id == id)
			return &a->targets[i];
	return NULL;
}

void agent_tick(struct agent *a, uint64_t now_ns)
{
	uint32_t changed[LEAP_CORE_TARGETS], n;
	enum leap_verdict_change how[LEAP_CORE_TARGETS];

	account_drain(a);
	say_overflow(a);
	a->swap = read_swaps();
	a->ra_pages = kernel_ra_pages();
	agent_update_env(a);
	n = decision_tick(a, now_ns, changed, how);
	for (uint32_t i = 0; i < n; i++) {
		struct agent_target *t = target_of_core_id(a, changed[i]);

		if (t)
			execute_verdict(a, t, how[i]);
	}
	/* The idle disarm is the event loop's, at every wake-up
	 * (hooks_disarm_if_idle()). */
	hooks_follow_targets(a);
	targets_tick(a);
}

void agent_totals(const struct agent *a, struct leap_cg_stats *sum)
{
	leap_observer_stats_sum(a->obs, sum);
}

const char *agent_prefetch_via(const struct agent *a)
{
	if (a->ex.be && a->ex.be->fd < 0)
		return "off (leap-swapd link lost)";
	if (a->ex.be)
		return a->ex.be_swapcache ? "leap-swapd+swapcache" : "leap-swapd";
	return a->ex.prefetch_ok ? "process_madvise" : "off";
}
