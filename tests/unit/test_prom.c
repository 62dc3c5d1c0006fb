// SPDX-License-Identifier: MIT
/* The Prometheus text writer: escaping, names, histograms. */
#include <stdlib.h>

#include "engine_test.h"
#include "leap/prom.h"

/* Runs fn into a memory stream; returns the text (caller frees). */
static char *capture(void (*fn)(FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fn(f);
	fclose(f);
	return buf;
}

static void write_escaped(FILE *f)
{
	struct prom_label l[2] = {{"cgroup", "/a\"b\\c\nd"}, {"mode", "leap"}};

	prom_family(f, "leap_x_total", "counter", "Line one\nback\\slash");
	prom_sample_u64(f, "leap_x_total", l, 2, 18446744073709551615ULL);
	prom_sample(f, "leap_y_ratio", NULL, 0, 0.25);
}

static void test_escaping(void **state)
{
	char *s = capture(write_escaped);
	(void)state;

	assert_string_equal(s, "# HELP leap_x_total Line one\\nback\\\\slash\n"
			       "# TYPE leap_x_total counter\n"
			       "leap_x_total{cgroup=\"/a\\\"b\\\\c\\nd\",mode=\"leap\"} "
			       "18446744073709551615\n"
			       "leap_y_ratio 0.25\n");
	free(s);
}

static void write_hist(FILE *f)
{
	static const double bounds[] = {1e-05, 0.001};
	static const uint64_t counts[] = {2, 3, 1}; /* per bucket, last = +Inf */
	struct prom_label l = {"cgroup", "/s"};

	prom_histogram(f, "leap_lat_seconds", &l, 1, bounds, counts, 2, 0.5);
}

static void test_histogram(void **state)
{
	char *s = capture(write_hist);
	(void)state;

	/* buckets are cumulative, count is the +Inf bucket */
	assert_string_equal(s, "leap_lat_seconds_bucket{cgroup=\"/s\",le=\"1e-05\"} 2\n"
			       "leap_lat_seconds_bucket{cgroup=\"/s\",le=\"0.001\"} 5\n"
			       "leap_lat_seconds_bucket{cgroup=\"/s\",le=\"+Inf\"} 6\n"
			       "leap_lat_seconds_sum{cgroup=\"/s\"} 0.5\n"
			       "leap_lat_seconds_count{cgroup=\"/s\"} 6\n");
	free(s);
}

static void write_special(FILE *f)
{
	prom_sample(f, "a", NULL, 0, 1.0 / 0.0);
	prom_sample(f, "b", NULL, 0, 0.0 / 0.0);
}

static void test_special_values(void **state)
{
	char *s = capture(write_special);
	(void)state;

	assert_string_equal(s, "a +Inf\nb NaN\n");
	free(s);
}

static void test_names(void **state)
{
	(void)state;
	assert_true(prom_name_ok("leap_faults_total", false));
	assert_true(prom_name_ok("leap:rate5m", false));
	assert_false(prom_name_ok("leap:rate5m", true)); /* no colons in labels */
	assert_false(prom_name_ok("9lives", false));
	assert_false(prom_name_ok("", false));
	assert_false(prom_name_ok("a-b", false));
	assert_true(prom_name_ok("_x9", true));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_histogram),
		cmocka_unit_test(test_special_values),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
