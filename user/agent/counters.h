/* SPDX-License-Identifier: MIT */
/*
 * The agent's counters, named once.  One table (agent_counters[]) drives
 * every output that shows them: the state file's "agent" object, the JSON
 * summary of `run --json`, the summary lines on stderr and the Prometheus
 * text of `stats --format prometheus` and --metrics-textfile.  Adding a
 * counter is one line in counters.c; `leap-agent stats --list` prints the
 * table, and tests/sys/agent.t finds every entry in all four outputs.
 */
#ifndef LEAP_AGENT_COUNTERS_H
#define LEAP_AGENT_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include "leap_event.h"

struct agent;

/* Where a counter lives. */
enum counter_source {
	/*
	 * struct leap_cg_stats, one per stats slot (the pinned stats map that
	 * BPF and the agent add to): summed over the slots in the state file
	 * and summaries, one sample per slot in Prometheus.
	 */
	COUNTER_SLOT,
	COUNTER_AGENT,	 /* struct agent */
	COUNTER_CORE,	 /* struct leap_core_counters: the decision core's */
	COUNTER_BACKEND, /* struct backend_stats, backend mode only */
};

struct agent_counter {
	const char *key;  /* JSON key, and name=value on stderr */
	const char *prom; /* Prometheus family (a counter: ends in _total) */
	const char *help;
	enum counter_source src;
	size_t off;	   /* into the source's struct */
	bool backend_only; /* shown in backend mode only */
};

extern const struct agent_counter agent_counters[];
extern const size_t agent_ncounters;

/* The value of c for agent a, whose slot totals are tot. */
uint64_t agent_counter_value(const struct agent *a, const struct leap_cg_stats *tot,
			     const struct agent_counter *c);
/* Whether a shows c (backend counters only with a backend). */
bool agent_counter_shown(const struct agent *a, const struct agent_counter *c);
/* A slot counter of one struct leap_cg_stats. */
uint64_t agent_counter_of_slot(const struct leap_cg_stats *s,
			       const struct agent_counter *c);

/* Each worker's busy time (an array, one per worker) and the windows
 * queued now, into o: the workers' share of the summary and state file. */
void agent_workers_json(json_object *o, const struct agent *a);
/* Every counter a shows into o, key: value. */
void agent_counters_json(json_object *o, const struct agent *a,
			 const struct leap_cg_stats *tot);
/* The counters in o (as agent_counters_json wrote them) as one
 * "leap-agent: counters: key=value ..." line. */
void agent_counters_line(FILE *f, json_object *o);
/* The table, a counter a line: key, Prometheus name, where, help. */
void agent_counters_list(FILE *f);

/*
 * Prefetch quality, defined here only.  accuracy = hits / prefetched;
 * coverage = hits / (hits + misses), the misses read while the fault hooks
 * were off (swapin_unarmed) included.  With pushes_only (backend mode,
 * --backend-into cache) a hit is still a major fault (a device read that
 * leap-swapd serves from its cache), so swapin_misses already includes
 * the hits.
 */
void agent_rates(const struct leap_cg_stats *s, bool pushes_only, double *accuracy,
		 double *coverage);

#endif
