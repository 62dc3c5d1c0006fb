/* SPDX-License-Identifier: MIT */
/* The agent's clocks, defined once. */
#ifndef LEAP_AGENT_CLOCK_H
#define LEAP_AGENT_CLOCK_H

#include <stdint.h>
#include <time.h>

/* A clock in ns (CLOCK_THREAD_CPUTIME_ID: the calling thread's CPU). */
static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * CLOCK_MONOTONIC in ns: the clock of bpf_ktime_get_ns() (ktime_get_mono_fast_ns(),
 * kernel/bpf/helpers.c), so an event's ts_ns and this can be subtracted.
 */
static inline uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

#endif
