/* SPDX-License-Identifier: MIT */
/*
 * Prometheus text exposition format (version 0.0.4, which OpenMetrics
 * parsers also read) for leap's metrics: one # HELP and # TYPE per
 * family, then its samples, label values escaped.  Formatting only: the
 * caller owns the FILE (a pipe, a temporary file renamed into place, or
 * fmemopen in tests) and decides which metrics exist.
 *
 * Conventions followed (prometheus.io/docs/practices/naming): a leap_
 * prefix, base units in names (seconds, bytes, pages), counters ending in
 * _total, ratios in [0, 1] ending in _ratio.
 */
#ifndef LEAP_PROM_H
#define LEAP_PROM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* A label: name=value; the value is escaped on output. */
struct prom_label {
	const char *name;
	const char *value;
};

/* Whether s is a valid metric (or, labels=true, label) name. */
bool prom_name_ok(const char *s, bool label);

/* "# HELP name help\n# TYPE name type\n" (help escaped: \\ and \n). */
void prom_family(FILE *f, const char *name, const char *type, const char *help);

/* "name{labels} value\n"; nlabels may be 0.  Integers print exactly. */
void prom_sample(FILE *f, const char *name, const struct prom_label *labels, int nlabels,
		 double value);
void prom_sample_u64(FILE *f, const char *name, const struct prom_label *labels,
		     int nlabels, uint64_t value);

/*
 * A histogram's samples (after its prom_family(..., "histogram", ...)):
 * name_bucket{...,le="B"} cumulative counts for each bound (in the unit of
 * the name, e.g. seconds), le="+Inf", name_sum and name_count.  counts[]
 * holds nbounds + 1 per-bucket (not cumulative) counts, the last one above
 * every bound.
 */
void prom_histogram(FILE *f, const char *name, const struct prom_label *labels,
		    int nlabels, const double *bounds, const uint64_t *counts,
		    int nbounds, double sum);

/* Writes value escaped for a label value (\\, \" and \n) to f. */
void prom_escape(FILE *f, const char *value);

#endif
