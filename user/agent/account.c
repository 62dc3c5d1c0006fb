// SPDX-License-Identifier: MIT
/* The account stage (account.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "account.h"
#include "decision.h"

enum account_outcome account_outcome(int rc, bool cold)
{
	if (rc >= 0)
		return OUTCOME_DONE;
	switch (-rc) {
	case ESRCH:
		return OUTCOME_GONE;
	case EINVAL: /* WILLNEED before 5.15, COLD through process_madvise < 5.10 */
	case ENOSYS:
		return OUTCOME_REFUSED;
	case EPERM:
		/* MADV_COLD on a process we may prefetch for: the kernel's */
		return cold ? OUTCOME_REFUSED : OUTCOME_DENIED;
	case EACCES:
		return OUTCOME_DENIED;
	default:
		return OUTCOME_FAILED;
	}
}

void account_init(struct agent *a)
{
	pthread_mutex_init(&a->acct.lock, NULL);
}

void account_fini(struct agent *a)
{
	pthread_mutex_destroy(&a->acct.lock);
}

/* The BPF stats slot's prefetches (BPF adds to the slot's other fields
 * concurrently). */
static void slot_add_prefetched(struct agent *a, uint32_t slot, uint64_t n)
{
	struct leap_cg_stats *s = leap_observer_stats(a->obs, slot);

	if (s)
		__atomic_fetch_add(&s->prefetches, n, __ATOMIC_RELAXED);
}

void account_hit(struct agent *a, uint32_t slot)
{
	struct leap_cg_stats *s = leap_observer_stats(a->obs, slot);

	if (s)
		__atomic_fetch_add(&s->prefetch_hits, 1, __ATOMIC_RELAXED);
}

/* lock held: what a failed request means, for account_drain(). */
static void note_failure(struct agent_pending *p, uint32_t tgid, int rc, bool cold)
{
	switch (account_outcome(rc, cold)) {
	case OUTCOME_GONE:
		if (p->ngone < sizeof(p->gone) / sizeof(p->gone[0]))
			p->gone[p->ngone++] = tgid;
		break;
	case OUTCOME_REFUSED:
		if (cold)
			p->cold_refused = rc;
		else
			p->refused = true;
		break;
	case OUTCOME_DENIED:
		if (!p->denied_tgid)
			p->denied_tgid = tgid;
		break;
	default:
		break;
	}
}

void account_window_done(struct agent *a, const struct window_result *r)
{
	struct agent_pending *p = &a->acct.pending;

	if (r->rc > 0)
		slot_add_prefetched(a, r->slot, (uint64_t)r->rc);
	pthread_mutex_lock(&a->acct.lock);
	if (r->rc > 0) {
		agent_record_latency(&a->acct.lat, r->slot, r->fault_ns);
		agent_record_dispatch(&a->acct.lat, r->event_ns, r->dispatch_ns);
		if (r->target < LEAP_CORE_TARGETS) {
			if (!p->spent_pages[r->target] && !p->spent_ns[r->target])
				p->touched[p->ntouched++] = r->target;
			p->spent_pages[r->target] += (uint64_t)r->rc;
			p->spent_ns[r->target] += r->cpu_ns;
		}
	} else if (r->rc < 0) {
		note_failure(p, r->tgid, r->rc, false);
	}
	pthread_mutex_unlock(&a->acct.lock);
}

void account_cold_done(struct agent *a, uint32_t tgid, int rc)
{
	if (rc >= 0)
		return;
	pthread_mutex_lock(&a->acct.lock);
	note_failure(&a->acct.pending, tgid, rc, true);
	pthread_mutex_unlock(&a->acct.lock);
}

void account_forget_process(struct agent *a, uint32_t tgid)
{
	decision_forget(a, tgid);
	procs_forget(a->ex.procs, tgid);
}

/* What account_drain() takes out of the pending results, under the lock:
 * only the targets touched (one, mostly), not the whole table. */
struct drained {
	uint32_t n, target[LEAP_CORE_TARGETS];
	uint64_t pages[LEAP_CORE_TARGETS], ns[LEAP_CORE_TARGETS];
	uint32_t gone[64];
	unsigned ngone;
	bool refused;
	int cold_refused;
	uint32_t denied_tgid;
};

/* Takes what is pending into d (lock held); whether there was anything. */
static bool take_pending(struct agent_pending *p, struct drained *d)
{
	if (!p->ntouched && !p->ngone && !p->refused && !p->cold_refused &&
	    !p->denied_tgid)
		return false;
	d->n = p->ntouched;
	for (uint32_t i = 0; i < p->ntouched; i++) {
		uint32_t t = p->touched[i];

		d->target[i] = t;
		d->pages[i] = p->spent_pages[t];
		d->ns[i] = p->spent_ns[t];
		p->spent_pages[t] = p->spent_ns[t] = 0;
	}
	d->ngone = p->ngone;
	memcpy(d->gone, p->gone, p->ngone * sizeof(*p->gone));
	d->refused = p->refused;
	d->cold_refused = p->cold_refused;
	d->denied_tgid = p->denied_tgid;
	p->ntouched = p->ngone = 0;
	p->refused = false;
	p->cold_refused = 0;
	p->denied_tgid = 0;
	return true;
}

void account_drain(struct agent *a)
{
	struct drained d;
	bool env_changed = false, any;

	pthread_mutex_lock(&a->acct.lock);
	any = take_pending(&a->acct.pending, &d);
	pthread_mutex_unlock(&a->acct.lock);
	if (!any)
		return;
	for (uint32_t i = 0; i < d.n; i++)
		decision_spent(
			a, d.target[i],
			(uint32_t)(d.pages[i] > UINT32_MAX ? UINT32_MAX : d.pages[i]),
			d.ns[i]);
	for (unsigned i = 0; i < d.ngone; i++)
		account_forget_process(a, d.gone[i]);
	if (d.cold_refused && a->ex.cold_ok) {
		fprintf(stderr,
			"leap-agent: process_madvise(MADV_COLD) refused (%s); pages "
			"behind fills are left to reclaim from now on\n",
			strerror(-d.cold_refused));
		a->ex.cold_ok = false;
		env_changed = true;
	}
	if (d.refused && a->ex.prefetch_ok) {
		fprintf(stderr,
			"leap-agent: kernel refused process_madvise(MADV_WILLNEED); "
			"observing only from now on\n");
		a->ex.prefetch_ok = false;
		a->ex.prefetch_why = "refused at run time";
		env_changed = true;
	}
	if (d.denied_tgid && !a->acct.denied_said) {
		fprintf(stderr,
			"leap-agent: not permitted to prefetch for pid %u "
			"(process_madvise "
			"needs PTRACE_MODE_READ on it)\n",
			d.denied_tgid);
		a->acct.denied_said = true;
	}
	if (env_changed)
		agent_update_env(a);
}

void agent_refresh(struct agent *a)
{
	struct prefetch_stats w;
	struct pagemap_reader m;

	a->acct.pf_sum = a->ex.pf.stats;
	a->acct.pm_sum = a->ex.pf.pagemap;
	a->acct.cpu_moves = a->ex.at.moves;
	if (!a->ex.iss)
		return;
	issuer_counters(a->ex.iss, &a->acct.issued, &w, &m);
	a->acct.cpu_moves += a->acct.issued.cpu_moves;
	prefetch_stats_add(&a->acct.pf_sum, &w);
	a->acct.pm_sum.scans += m.scans;
	a->acct.pm_sum.reads += m.reads;
}
