/* SPDX-License-Identifier: MIT */
/*
 * `leap-agent stats`: the running agent's per-target counters (the pinned
 * stats map), the cgroups matched under each target (the pinned leaves
 * map) and the agent's own counters (its state file), as a table, JSON or
 * Prometheus text; and the same Prometheus text written to a file for
 * node_exporter's textfile collector.
 */
#ifndef LEAP_AGENT_STATS_CMD_H
#define LEAP_AGENT_STATS_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "leap_event.h"

#define AGENT_STATE_DIR	 "/run/leap"
#define AGENT_STATE_FILE AGENT_STATE_DIR "/agent.json"

/*
 * accuracy = hits / prefetched; coverage = hits / (hits + misses).  In
 * backend mode a hit is still a major fault (a device read that leap-swapd
 * serves from its cache), so swapin_misses already includes the hits.
 */
void agent_rates(const struct leap_cg_stats *s, bool backend, double *accuracy,
		 double *coverage);

/* The `stats` subcommand (argv[0] is its name). */
int agent_cmd_stats(int argc, char **argv);

/*
 * Writes the Prometheus text of the running agent to path atomically (a
 * temporary file in the same directory, renamed over it).  0 or -errno,
 * with a reason in err.
 */
int agent_metrics_textfile(const char *path, char *err, size_t errlen);

/* The Prometheus text of the running agent to f; 0 or -errno (no agent). */
int agent_metrics_write(FILE *f, char *err, size_t errlen);

#endif
