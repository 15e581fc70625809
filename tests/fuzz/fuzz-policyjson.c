/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-policyjson: sandlock_policy_load_json over arbitrary bytes. On failure: a loader errno,
 * the same code in the error object, one non-empty line, no policy handed out. On success: the
 * JSON dump is a fixed point (dump -> load -> dump gives the same text), and so is the TOML dump
 * of the policy when it can be a profile at all: a profile cannot hold a literal '$' or a
 * leading '~' in a path (the sandbox reference's "Variable expansion"), which a JSON document,
 * expanding nothing, can.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandlock.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *dump(const sandlock_policy_t *p, int json)
{
	char *t = NULL;

	if ((json ? sandlock_policy_dump_json(p, &t) : sandlock_policy_dump_toml(p, &t)) < 0 || !t)
		abort();
	return t;
}

static sandlock_policy_t *must_load(const char *text, int json)
{
	sandlock_policy_t *p = NULL;
	sandlock_error_t *e = NULL;
	int r = json ? sandlock_policy_load_json(text, strlen(text), &p, &e)
		     : sandlock_policy_load_toml(text, strlen(text), &p, &e);

	if (r < 0) {
		fprintf(stderr, "fuzz-policyjson: a dump does not load back: %s\n--- dump:\n%s\n",
			e ? sandlock_error_message(e) : "?", text);
		abort();
	}
	return p;
}

static void same(const char *what, const char *a, const char *b)
{
	if (strcmp(a, b) != 0) {
		fprintf(stderr, "fuzz-policyjson: %s differ:\n%s\n---\n%s\n", what, a, b);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	sandlock_policy_t *p = NULL;
	sandlock_error_t *e = NULL;
	int r = sandlock_policy_load_json((const char *)data, size, &p, &e);

	if (r < 0) {
		if (r != -EINVAL && r != -ERANGE && r != -ENOMEM)
			abort();
		if (p || !e || sandlock_error_code(e) != r)
			abort();
		const char *m = sandlock_error_message(e);
		if (!m || !m[0] || strchr(m, '\n'))
			abort();
		sandlock_error_free(e);
		return 0;
	}
	if (!p || e)
		abort();
	char *j1 = dump(p, 1), *t1 = dump(p, 0);
	sandlock_policy_t *q = must_load(j1, 1);
	char *j2 = dump(q, 1), *t2 = dump(q, 0);
	same("JSON dumps", j1, j2);
	same("TOML dumps of the JSON reload", t1, t2);
	if (!strchr(t1, '$') && !strstr(t1, "\"~")) {
		sandlock_policy_t *s = must_load(t1, 0);
		char *t3 = dump(s, 0);
		same("TOML dumps", t1, t3);
		free(t3);
		sandlock_policy_free(s);
	}
	free(j1);
	free(j2);
	free(t1);
	free(t2);
	sandlock_policy_free(q);
	sandlock_policy_free(p);
	return 0;
}
