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

#include "agent.h"

/* A window was dispatched at dispatch_ns for the event of event_ns (0:
 * not dispatched, nothing recorded). */
void agent_record_dispatch(struct agent *a, uint64_t event_ns, uint64_t dispatch_ns);
/* A window for the fault of fault_ns (CLOCK_MONOTONIC) returned now. */
void agent_record_latency(struct agent *a, uint32_t slot, uint64_t fault_ns);
/* p-th percentile (0..100) of the reaction latency, microseconds. */
double agent_latency_us(struct agent *a, double p);
/* The p-th percentile of the fault-to-dispatch latency, us. */
double agent_dispatch_us(struct agent *a, double p);

#endif
