// SPDX-License-Identifier: MIT
/* When the fault hooks are on (hooks.h): armed by swap reads, off when idle. */
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "hooks.h"
#include "targets.h"

/* The fault hooks come off (when armed). */
static void disarm(struct agent *a)
{
	if (leap_observer_armed(a->obs) != 1)
		return;
	leap_observer_set_armed(a->obs, false);
	a->arm.disarms++;
	a->state_dirty = true;
	if (a->verbose)
		fprintf(stderr,
			"leap-agent: fault hooks off after %llu ms: %llu device page-ins "
			"and hits of followed targets\n",
			(unsigned long long)((mono_ns() - a->arm.armed_ns) / 1000000),
			(unsigned long long)a->arm.armed_keeps);
}

/*
 * Whether the agent follows t's faults: not when its policy is off (not
 * watched: with --policy off the hooks used to arm at its first swap-in
 * and stay on, its misses keeping them from the disarm, 723 ns of BPF a
 * fault for a whole run, 2026-11-27), nor once it stood down.
 */
bool hooks_follow(const struct agent *a, const struct agent_target *t)
{
	return leap_core_target_followed(a->dec.core, t->core_id);
}

/* Whether no target's faults are followed: each stood down or off. */
static bool none_followed(const struct agent *a)
{
	for (int i = 0; i < a->ntargets; i++)
		if (hooks_follow(a, &a->targets[i]))
			return false;
	return a->ntargets > 0;
}

/*
 * While every target stands down (or is off), the fault hooks come off at
 * once, and so does the block I/O hook that arms them: it runs at every
 * block I/O of the host, and at every page-in on zram, with nobody to
 * arm.  It comes on again when a target probes (11 runs each on zram,
 * 2026-11-26: 0.95-0.98x of Linux with it on after the stand-down).
 */
void hooks_follow_targets(struct agent *a)
{
	bool want = !none_followed(a);

	if (!want)
		disarm(a);
	if (leap_observer_arming(a->obs) == !want)
		leap_observer_set_arming(a->obs, want);
}

/*
 * A target reads its swap device while the fault hooks are off: attach
 * them once it did in AGENT_ARM_READS distinct milliseconds (leap_arm_bio
 * asks once per ms at most) within AGENT_ARM_WINDOW_NS.
 */
void hooks_arm(struct agent *a, const struct leap_event *ev)
{
	const struct agent_target *t;
	int rc;

	if (leap_observer_armed(a->obs) != 0)
		return;
	/* An event not resolved to a target yet (a new descendant cgroup)
	 * arms, as before: the next tick disarms if nobody is followed. */
	t = target_of_event(a, ev);
	if (t && !hooks_follow(a, t))
		return;
	if (ev->ts_ns - a->arm.arm_win_ns > AGENT_ARM_WINDOW_NS) {
		a->arm.arm_win_ns = ev->ts_ns;
		a->arm.arm_win_reads = 0;
	}
	if (++a->arm.arm_win_reads < AGENT_ARM_READS)
		return;
	rc = leap_observer_set_armed(a->obs, true);
	if (rc) {
		fprintf(stderr, "leap-agent: cannot attach the fault hooks (%s)\n",
			strerror(-rc));
		return;
	}
	a->arm.arms++;
	if (a->verbose)
		fprintf(stderr, "leap-agent: fault hooks on (swap reads of pid %u)\n",
			ev->tgid);
	a->arm.keep_win_ns = a->arm.armed_ns = mono_ns();
	a->arm.keep_win_reads = 0;
	a->arm.armed_keeps = 0;
	/* From the first swap read that asked to the hooks' attach: the
	 * faults of that span go unseen. */
	if (a->arm.keep_win_ns - a->arm.arm_win_ns > a->arm.arm_latency_max_ns)
		a->arm.arm_latency_max_ns = a->arm.keep_win_ns - a->arm.arm_win_ns;
	a->state_dirty = true;
}

/*
 * An event of a followed target keeps the fault hooks on when it is a
 * page read from the swap device (not a zero-filled entry or a zswap hit,
 * which read none), or a hit.
 */
bool hooks_note_event(struct agent *a, const struct leap_event *ev)
{
	if (((ev->flags & LEAP_EV_MAJOR) && (ev->flags & LEAP_EV_SWAPIN_IO)) ||
	    (ev->flags & LEAP_EV_PREFETCHED)) {
		a->arm.keep_win_reads++;
		a->arm.armed_keeps++;
		return true;
	}
	return false;
}

/*
 * The followed targets read their swap devices or hit fewer than
 * AGENT_KEEP_READS times in AGENT_DISARM_NS: the fault hooks come off (at
 * once when nobody is followed).
 */
void hooks_disarm_if_idle(struct agent *a, uint64_t now_ns)
{
	if (leap_observer_armed(a->obs) != 1)
		return;
	if (none_followed(a)) {
		disarm(a); /* armed for a target that stood down or went off */
		return;
	}
	if (now_ns - a->arm.keep_win_ns < AGENT_DISARM_NS || now_ns < a->arm.keep_win_ns)
		return;
	if (a->arm.keep_win_reads < AGENT_KEEP_READS)
		disarm(a);
	a->arm.keep_win_ns = now_ns;
	a->arm.keep_win_reads = 0;
}

const char *hooks_state(const struct agent *a)
{
	switch (leap_observer_armed(a->obs)) {
	case 1:
		return "armed (a target swaps in)";
	case 0:
		if (leap_observer_arming(a->obs) != 0)
			return "off until a target swaps in";
		for (int i = 0; i < a->ntargets; i++)
			if (a->targets[i].policy.mode == AGENT_MODE_OFF)
				return "off (every target stands down or is off)";
		return "off (every target stands down)";
	default:
		return "always on";
	}
}
