// SPDX-License-Identifier: MIT
/* Prometheus text exposition format writer (include/leap/prom.h). */
#include <math.h>
#include <string.h>

#include "leap/prom.h"

bool prom_name_ok(const char *s, bool label)
{
	if (!s || !*s)
		return false;
	for (const char *p = s; *p; p++) {
		bool alpha = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			     *p == '_' || (!label && *p == ':');
		bool digit = *p >= '0' && *p <= '9';

		if (!alpha && !(digit && p != s))
			return false;
	}
	return true;
}

void prom_escape(FILE *f, const char *value)
{
	for (const char *p = value ? value : ""; *p; p++) {
		if (*p == '\\')
			fputs("\\\\", f);
		else if (*p == '"')
			fputs("\\\"", f);
		else if (*p == '\n')
			fputs("\\n", f);
		else
			fputc(*p, f);
	}
}

void prom_family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s ", name);
	for (const char *p = help; *p; p++) {
		if (*p == '\\')
			fputs("\\\\", f);
		else if (*p == '\n')
			fputs("\\n", f);
		else
			fputc(*p, f);
	}
	fprintf(f, "\n# TYPE %s %s\n", name, type);
}

static void labels_out(FILE *f, const struct prom_label *labels, int nlabels,
		       const char *le)
{
	if (nlabels == 0 && !le)
		return;
	fputc('{', f);
	for (int i = 0; i < nlabels; i++) {
		fprintf(f, "%s%s=\"", i ? "," : "", labels[i].name);
		prom_escape(f, labels[i].value);
		fputc('"', f);
	}
	if (le)
		fprintf(f, "%sle=\"%s\"", nlabels ? "," : "", le);
	fputc('}', f);
}

/* Floats as the parsers accept them: NaN, +Inf, -Inf, else %.15g (enough
 * for ratios and seconds; counters go through prom_sample_u64, exact). */
static void value_out(FILE *f, double v)
{
	if (isnan(v))
		fputs("NaN", f);
	else if (isinf(v))
		fputs(v > 0 ? "+Inf" : "-Inf", f);
	else
		fprintf(f, "%.15g", v);
}

void prom_sample(FILE *f, const char *name, const struct prom_label *labels, int nlabels,
		 double value)
{
	fputs(name, f);
	labels_out(f, labels, nlabels, NULL);
	fputc(' ', f);
	value_out(f, value);
	fputc('\n', f);
}

void prom_sample_u64(FILE *f, const char *name, const struct prom_label *labels,
		     int nlabels, uint64_t value)
{
	fputs(name, f);
	labels_out(f, labels, nlabels, NULL);
	fprintf(f, " %llu\n", (unsigned long long)value);
}

void prom_histogram(FILE *f, const char *name, const struct prom_label *labels,
		    int nlabels, const double *bounds, const uint64_t *counts,
		    int nbounds, double sum)
{
	char sample[256], le[64];
	uint64_t cum = 0;

	snprintf(sample, sizeof(sample), "%s_bucket", name);
	for (int i = 0; i <= nbounds; i++) {
		cum += counts[i];
		if (i < nbounds)
			snprintf(le, sizeof(le), "%.15g", bounds[i]);
		else
			snprintf(le, sizeof(le), "+Inf");
		fputs(sample, f);
		labels_out(f, labels, nlabels, le);
		fprintf(f, " %llu\n", (unsigned long long)cum);
	}
	snprintf(sample, sizeof(sample), "%s_sum", name);
	prom_sample(f, sample, labels, nlabels, sum);
	snprintf(sample, sizeof(sample), "%s_count", name);
	prom_sample_u64(f, sample, labels, nlabels, cum);
}
