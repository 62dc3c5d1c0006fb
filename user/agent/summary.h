/* SPDX-License-Identifier: MIT */
/*
 * The report attach and run give when they stop: JSON (run --json) and
 * the lines on stderr, built from the counter table (counters.h) and the
 * agent's CPU time.
 */
#ifndef LEAP_AGENT_SUMMARY_H
#define LEAP_AGENT_SUMMARY_H

#include <stdio.h>

#include <json-c/json.h>

struct agent;

/* CPU time of the agent, user and system (process_madvise's page
 * allocation and swap-read submission count as system time). */
struct cpu_time {
	double user, sys;
};

struct cpu_time cpu_now(void);
struct cpu_time cpu_since(struct cpu_time t0);

/* Page faults on the whole host so far (/proc/vmstat pgfault); 0 if
 * unreadable. */
uint64_t host_faults_now(void);

/* The summary of a's run of wall_s seconds that used cpu. */
json_object *summary_build(struct agent *a, double wall_s, struct cpu_time cpu);
/* Its headline line and its counters line. */
void summary_print(FILE *f, json_object *o);
/* Writes o to path (--json), saying on stderr when it cannot; path NULL: no-op. */
void summary_write(const char *path, json_object *o);

#endif
