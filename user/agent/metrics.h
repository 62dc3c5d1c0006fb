/* SPDX-License-Identifier: MIT */
/*
 * The running agent in Prometheus' text exposition format: per-target
 * counters and reaction histograms, the agent's own counters (counters.h),
 * its targets, and leap-swapd's STATS in backend mode; to a stream
 * (`stats --format prometheus`) or atomically to a file for node_exporter's
 * textfile collector (attach --metrics-textfile).
 */
#ifndef LEAP_AGENT_METRICS_H
#define LEAP_AGENT_METRICS_H

#include <stddef.h>
#include <stdio.h>

#include "view.h"

/* The Prometheus text of v to f. */
void agent_metrics_print(FILE *f, const struct agent_view *v);
/* The Prometheus text of the running agent to f; 0 or -errno (no agent). */
int agent_metrics_write(FILE *f, char *err, size_t errlen);
/*
 * Writes it to path atomically (a temporary file in the same directory,
 * renamed over it).  0 or -errno, with a reason in err.
 */
int agent_metrics_textfile(const char *path, char *err, size_t errlen);

#endif
