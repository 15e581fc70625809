/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tap.h: a minimal TAP producer for the C unit tests (run by prove). Header-only.
 *
 *   plan_no_plan(); ok(cond, "name"); is_int(got, want, "name"); is_str(...); done_testing();
 *   skip_all("reason"): the whole file is skipped; with SANDLOCK_MUST_WORK=1 it fails instead.
 */
#pragma once

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed;

static inline void tap_vresult(int pass, const char *fmt, va_list ap)
{
	tap_n++;
	if (!pass)
		tap_failed++;
	printf("%sok %d - ", pass ? "" : "not ", tap_n);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
}

static inline int __attribute__((format(printf, 2, 3))) ok(int pass, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tap_vresult(pass, fmt, ap);
	va_end(ap);
	return pass;
}

#define is_int(got, want, ...)                                                                  \
	do {                                                                                    \
		long long _g = (long long)(got), _w = (long long)(want);                        \
		if (!ok(_g == _w, __VA_ARGS__))                                                 \
			printf("#   got: %lld\n#   expected: %lld\n", _g, _w);                  \
	} while (0)

#define is_str(got, want, ...)                                                                  \
	do {                                                                                    \
		const char *_g = (got), *_w = (want);                                           \
		if (!ok(_g && _w && strcmp(_g, _w) == 0, __VA_ARGS__))                          \
			printf("#   got: '%s'\n#   expected: '%s'\n", _g ? _g : "(null)",       \
			       _w ? _w : "(null)");                                             \
	} while (0)

static inline void diag(const char *fmt, ...)
{
	va_list ap;
	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static inline int done_testing(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

/* Skip the whole test file because a kernel feature is missing. Under SANDLOCK_MUST_WORK=1
 * (CI, where the kernel has everything) a skip is a failure. */
static inline void __attribute__((noreturn)) skip_all(const char *feature)
{
	const char *must = getenv("SANDLOCK_MUST_WORK");
	if (must && strcmp(must, "1") == 0) {
		printf("not ok 1 - missing kernel feature: %s (SANDLOCK_MUST_WORK=1)\n1..1\n",
		       feature);
		exit(1);
	}
	printf("1..0 # SKIP missing kernel feature: %s\n", feature);
	exit(0);
}

/* A fresh directory "$TMPDIR/<name>.XXXXXX" (/tmp without TMPDIR) in @buf, as mkdtemp(3):
 * @buf, or NULL when it cannot be made or does not fit. */
static inline char *tap_mkdtemp(char *buf, size_t size, const char *name)
{
	const char *tmp = getenv("TMPDIR");
	int n = snprintf(buf, size, "%s/%s.XXXXXX", tmp && *tmp ? tmp : "/tmp", name);

	return n > 0 && (size_t)n < size ? mkdtemp(buf) : NULL;
}
