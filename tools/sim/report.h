/* SPDX-License-Identifier: MIT */
/* leap-sim's output: JSON lines, CSV or a table, one row per policy. */
#ifndef LEAP_SIM_REPORT_H
#define LEAP_SIM_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "sim.h"

enum sim_report_format {
	SIM_REPORT_TABLE,
	SIM_REPORT_JSON,
	SIM_REPORT_CSV,
};

/* What every row shares: the run's inputs. */
struct sim_report_ctx {
	const char *trace_name;
	const struct sim_trace *trace;
	const struct sim_policy_opts *opts;
	const struct sim_config *cfg;
	bool bench; /* add events_per_s (wall-clock dependent) */
};

void sim_report_begin(FILE *out, enum sim_report_format fmt,
		      const struct sim_report_ctx *ctx);
/* 0, or -1 when the row could not be built (out of memory). */
int sim_report_row(FILE *out, enum sim_report_format fmt,
		   const struct sim_report_ctx *ctx, const struct sim_result *r);

/* Lowest coverage over threads that faulted at least once (1.0 if none). */
double sim_min_thread_coverage(const struct sim_result *r);
double sim_events_per_s(const struct sim_result *r);

#endif
