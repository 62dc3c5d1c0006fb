/* SPDX-License-Identifier: MIT */
/*
 * When the fault hooks are on (tracepoint path).  They cost every fault
 * on the host (docs/bench-overhead.md), so they are on only while a
 * followed target reads pages from its swap device at a rate a
 * prefetcher can act on: on once it did in AGENT_ARM_READS distinct
 * milliseconds within AGENT_ARM_WINDOW_NS, off once it read or hit fewer
 * than AGENT_KEEP_READS times in AGENT_DISARM_NS: ~30 reads a second
 * both ways, so a scan of a slow disk (8 ms a read) stays followed, and
 * 20 ms windows missed 53-187 of a burst's first misses
 * (tests/sys/arming.t).  Page-ins that read nothing (zero-filled swap
 * entries, zswap) count for neither: a prefetch has no I/O to hide there.
 * Empty programs on the same hooks cost a fill as much as ours
 * (docs/bench-real.md): the tracepoints being on is the cost, so they
 * must be off, not cheaper.  CPython's fill reads back 8,200 zero-filled
 * entries in ~1 s with a few device reads of its own heap every 200-400
 * ms; with the hooks on throughout (armed by any read, off after 2 s of
 * neither misses nor hits, before 2026-11-27) they cost it 4-9%
 * (docs/bench-real.md, "The fill pays for hooks it cannot use"); now
 * they are on for about a third of its second pass, ~3%.  Eight reads to
 * arm kept them off the fill and cost strided scans' starts as much
 * (2026-11-28).  The disarm is checked at every wake-up of the event loop
 * (at least every 100 ms).  The fentry path has no arming: its hooks are
 * always on.
 */
#ifndef LEAP_AGENT_HOOKS_H
#define LEAP_AGENT_HOOKS_H

#include <stdbool.h>
#include <stdint.h>

#include "agent.h"

#define AGENT_ARM_READS	    3
#define AGENT_ARM_WINDOW_NS (100ULL * 1000 * 1000)
#define AGENT_KEEP_READS    3
#define AGENT_DISARM_NS	    (100ULL * 1000 * 1000)

/* Whether the agent follows t's faults: its policy is not off and it has
 * not stood down. */
bool hooks_follow(const struct agent *a, const struct agent_target *t);
/* A LEAP_EV_ARM event (a target read its swap device while the hooks
 * were off): the hooks come on at the AGENT_ARM_READS-th in the window. */
void hooks_arm(struct agent *a, const struct leap_event *ev);
/* An event of a followed target, counted when it keeps the hooks on (a
 * page read from the swap device, or a hit): returns whether it does. */
bool hooks_note_event(struct agent *a, const struct leap_event *ev);
/* After a verdict or a change of targets: the hooks off at once, and the
 * block I/O hook that arms them off too, while nobody is followed; that
 * hook on again when somebody is. */
void hooks_follow_targets(struct agent *a);
/* The fault hooks off when no target reads its swap device (see
 * AGENT_DISARM_NS); cheap, for every wake-up of the event loop. */
void hooks_disarm_if_idle(struct agent *a, uint64_t now_ns);
/* The fault hooks' state, for people: "always on" (fentry, or arming
 * off), "armed", "off until a target swaps in", or off while no target
 * is followed (each stands down or is off). */
const char *hooks_state(const struct agent *a);

#endif
