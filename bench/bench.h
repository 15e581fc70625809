/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench.h: what the benchmarks share: a monotonic clock in nanoseconds, order statistics over a
 * sample array (median, p10, p90), and the one-line description of the machine a result was
 * taken on. Header-only (static functions), because the Makefile builds every bench/<name>.c
 * into its own program from that one file. Benchmarks report medians and ratios of runs taken
 * side by side in one process, never a single absolute time (DESIGN.md, section 6).
 */
#pragma once

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static inline int64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct bench_stats {
	double median, p10, p90, min;
	size_t n;
};

/* The @q quantile (0..1) of the sorted @v, interpolated between the two nearest ranks. */
static inline double bench_quantile(const double *v, size_t n, double q)
{
	if (n == 0)
		return 0.0;
	double pos = q * (double)(n - 1);
	size_t lo = (size_t)pos;
	if (lo + 1 >= n)
		return v[n - 1];
	return v[lo] + (pos - (double)lo) * (v[lo + 1] - v[lo]);
}

/* Order statistics of @n samples; @v is left untouched. */
static inline struct bench_stats bench_stats_of(const double *v, size_t n)
{
	struct bench_stats s = { .n = n };
	double *c = malloc((n ? n : 1) * sizeof(double));

	if (!c || n == 0) {
		free(c);
		return s;
	}
	memcpy(c, v, n * sizeof(double));
	qsort(c, n, sizeof(double), bench_cmp_double);
	s.median = bench_quantile(c, n, 0.5);
	s.p10 = bench_quantile(c, n, 0.1);
	s.p90 = bench_quantile(c, n, 0.9);
	s.min = c[0];
	free(c);
	return s;
}

/* "kernel 6.18.44 (x86_64), 2 CPUs online, AMD EPYC, 2026-01-01 12:00 UTC" */
static inline void bench_print_machine(FILE *f)
{
	struct utsname u;
	char model[128] = "unknown CPU", line[256], date[64] = "";
	FILE *ci = fopen("/proc/cpuinfo", "re");
	time_t t = time(NULL);
	struct tm tm;

	if (ci) {
		while (fgets(line, sizeof(line), ci))
			if (strncmp(line, "model name", 10) == 0) {
				char *colon = strchr(line, ':');
				if (colon) {
					snprintf(model, sizeof(model), "%s", colon + 2);
					model[strcspn(model, "\n")] = '\0';
				}
				break;
			}
		fclose(ci);
	}
	if (gmtime_r(&t, &tm))
		strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", &tm);
	if (uname(&u) < 0)
		memset(&u, 0, sizeof(u));
	fprintf(f, "machine: kernel %s (%s), %ld CPUs online, %s, uid %u, %s\n", u.release,
		u.machine, sysconf(_SC_NPROCESSORS_ONLN), model, (unsigned)getuid(), date);
}
