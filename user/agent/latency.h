/* SPDX-License-Identifier: MIT */
/*
 * The agent's latencies: the reaction (fault entry to the window's
 * process_madvise returned), per stats slot as a histogram over
 * agent_lat_bounds_us and as a ring of the newest samples; and the
 * dispatch (the miss's event to the window handed to the kernel).
 */
#ifndef LEAP_AGENT_LATENCY_H
#define LEAP_AGENT_LATENCY_H

#include <stdint.h>

#include "leap_event.h"

#define AGENT_LATENCY_SAMPLES 65536
/* Reaction latency histogram: upper bounds in microseconds, then +Inf. */
#define AGENT_LAT_BUCKETS 14
extern const uint32_t agent_lat_bounds_us[AGENT_LAT_BUCKETS];

struct agent_latency {
	/* fault-to-prefetch reaction latency, us (ring of the newest samples) */
	uint32_t lat_us[AGENT_LATENCY_SAMPLES];
	uint64_t nlat;
	/* the miss's event (fault completed) to its window entering the
	 * kernel (process_madvise called): the agent's part of the reaction */
	uint32_t dispatch_us[AGENT_LATENCY_SAMPLES];
	uint64_t ndispatch;
	/* reaction latency since start per stats slot (pid targets share 0, so
	 * nothing goes down when one exits): counts per bucket of
	 * agent_lat_bounds_us (the last one: +Inf), and their sum */
	uint64_t hist[LEAP_STATS_SLOTS][AGENT_LAT_BUCKETS + 1];
	uint64_t sum_us[LEAP_STATS_SLOTS];
};

/* A window was dispatched at dispatch_ns for the event of event_ns (0:
 * not dispatched, nothing recorded). */
void agent_record_dispatch(struct agent_latency *l, uint64_t event_ns,
			   uint64_t dispatch_ns);
/* A window for the fault of fault_ns (CLOCK_MONOTONIC) returned now. */
void agent_record_latency(struct agent_latency *l, uint32_t slot, uint64_t fault_ns);
/* p-th percentile (0..100) of the reaction latency, microseconds. */
double agent_latency_us(const struct agent_latency *l, double p);
/* The p-th percentile of the fault-to-dispatch latency, us. */
double agent_dispatch_us(const struct agent_latency *l, double p);

#endif
