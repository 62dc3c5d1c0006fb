/* SPDX-License-Identifier: MIT */
/*
 * Recordings of the decision core's inputs (`leap-agent run|attach --record
 * FILE`): the core's configuration, then every call the agent made into it
 * in order (targets and their policies, the environment, each ring-buffer
 * event as the agent saw it with the answers the facts port gave, the
 * workers' completions, processes gone, ticks), and at the end the live
 * core's counters.  Replaying one (recording_replay(), `leap-agent replay`)
 * runs the same core over the same inputs: the same plans, byte for byte,
 * and the live run's windows and pages.
 *
 * The file is a gzip stream (zlib) of records: a type byte, a 16-bit
 * length, that many bytes of payload, every field little-endian with a
 * fixed width; events are struct leap_event as the ring buffer carries it
 * (include/leap_event.h).  The reader checks every length.
 */
#ifndef LEAP_AGENT_RECORDING_H
#define LEAP_AGENT_RECORDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "leap/core.h"

#define RECORDING_MAGIC "LEAPREC"
/* 2: the outcome judge's parameters and policy flag; 3: the policy's
 * lanes (1 and 2 still read, as one lane); 4: sweeps, and the port's region
 * answers; 5: the events' counts of swap-cache
 * hits not ours (leap_event.swap_cache_hits) and config outcome_swap_cache;
 * 6: config outcome_lead */
#define RECORDING_VERSION 6

/* ---- writing (the agent's event thread) ------------------------------------------ */

struct recording;

/* Creates path (replacing it) and writes the header; NULL and err set. */
struct recording *recording_create(const char *path, const struct leap_core_config *cfg,
				   char *err, size_t errlen);
/* Writes the live counters and closes; 0, or -1 when a write had failed
 * (said once on stderr as it happened). */
int recording_close(struct recording *r, const struct leap_core_counters *live);

void recording_target_add(struct recording *r, uint32_t id,
			  const struct leap_core_policy *p);
void recording_target_set(struct recording *r, uint32_t id,
			  const struct leap_core_policy *p);
void recording_target_remove(struct recording *r, uint32_t id);
void recording_env(struct recording *r, const struct leap_core_env *env);
void recording_event(struct recording *r, uint32_t target, const struct leap_event *ev);
void recording_spent(struct recording *r, uint32_t target, uint32_t pages, uint64_t ns);
void recording_forget(struct recording *r, uint32_t tgid);
void recording_tick(struct recording *r, uint64_t now_ns);
/* The port that answers as port does and records each answer. */
struct leap_core_facts recording_tap(struct recording *r,
				     const struct leap_core_facts *port);

/* ---- replaying -------------------------------------------------------------------- */

struct replay_opts {
	FILE *out;  /* where the plans and counters go */
	bool plans; /* a line per event that planned something, not only totals */
	/* Every target's lanes (engine.h), 1..LEAP_LANES_MAX, in place of the
	 * recorded ones (0: as recorded): the same input with one history
	 * per key, or several. */
	uint32_t lanes;
	/* Decide without sweeps (sweep.h) whatever the recording's config. */
	bool no_sweeps;
	bool events_only; /* config outcome_swap_cache off (core.h) */
};

/* What a replay found. */
struct replay_result {
	struct leap_core_counters counters; /* the replay's */
	struct leap_core_counters live;	    /* the recording's last (live) ones */
	bool has_live;			    /* the recording was closed cleanly */
	uint64_t records;
	uint64_t verdicts; /* verdict changes */
	/* A core that decides otherwise than the recorded one: questions the
	 * recording had no answer for (answered no, or shmem as last
	 * recorded for the process), and recorded answers it skipped. */
	uint64_t unanswered, unasked;
};

/* Replays path through a fresh core; 0, or -1 with err set (a file that
 * is not a recording, a record of a bad type or length, a cut file). */
int recording_replay(const char *path, const struct replay_opts *o,
		     struct replay_result *res, char *err, size_t errlen);

/*
 * Replays path and prints what `leap-agent replay` prints: the verdicts
 * (and with o->plans each plan), the replay's counters and the live run's,
 * and whether its windows and pages are the live run's (*same; false when
 * the live counters were not recorded).  0, or -1 with err set.
 */
int recording_report(const char *path, const struct replay_opts *o, bool *same, char *err,
		     size_t errlen);

/* The counters, one "name=value" each, space-separated, on one line. */
void recording_print_counters(FILE *f, const char *label,
			      const struct leap_core_counters *c);

#endif
