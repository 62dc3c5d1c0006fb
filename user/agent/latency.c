// SPDX-License-Identifier: MIT
/* Reaction and dispatch latencies (latency.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "latency.h"

const uint32_t agent_lat_bounds_us[AGENT_LAT_BUCKETS] = {
	5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000,
};

static uint32_t clamp_us(uint64_t ns)
{
	return ns / 1000 > UINT32_MAX ? UINT32_MAX : (uint32_t)(ns / 1000);
}

/*
 * The miss's event to the window's dispatch: how long the agent took to
 * hand the kernel what the miss asked for.  The reaction (fault entry to
 * the window's process_madvise returned) is this plus the fault itself
 * (its read, and reclaim inside it) plus the kernel's work for the window.
 */
void agent_record_dispatch(struct agent_latency *l, uint64_t event_ns,
			   uint64_t dispatch_ns)
{
	if (dispatch_ns && dispatch_ns >= event_ns)
		l->dispatch_us[l->ndispatch++ % AGENT_LATENCY_SAMPLES] =
			clamp_us(dispatch_ns - event_ns);
}

void agent_record_latency(struct agent_latency *l, uint32_t slot, uint64_t fault_ns)
{
	uint32_t us = clamp_us(mono_ns() - fault_ns);
	int b = 0;

	l->lat_us[l->nlat++ % AGENT_LATENCY_SAMPLES] = us;
	while (b < AGENT_LAT_BUCKETS && us > agent_lat_bounds_us[b])
		b++;
	if (slot < LEAP_STATS_SLOTS) {
		l->hist[slot][b]++;
		l->sum_us[slot] += us;
	}
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

static double percentile_us(const uint32_t *samples, uint64_t count, double p)
{
	static uint32_t sorted[AGENT_LATENCY_SAMPLES];
	size_t n = count < AGENT_LATENCY_SAMPLES ? count : AGENT_LATENCY_SAMPLES;
	size_t idx;

	if (n == 0)
		return 0;
	memcpy(sorted, samples, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_u32);
	idx = (size_t)(p / 100.0 * (double)(n - 1) + 0.5);
	return sorted[idx];
}

double agent_latency_us(const struct agent_latency *l, double p)
{
	return percentile_us(l->lat_us, l->nlat, p);
}

double agent_dispatch_us(const struct agent_latency *l, double p)
{
	return percentile_us(l->dispatch_us, l->ndispatch, p);
}
