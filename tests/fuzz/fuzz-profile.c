/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-profile: sandlock_policy_load_toml over arbitrary bytes (exactly @size of them). On
 * failure: the errno is one the loader can give, the error object carries the same code and one
 * non-empty line, and no policy is handed out. On success: the canonical dumps are fixed points:
 * TOML dump -> load -> dump is the same text, JSON dump -> load -> dump is the same text, the
 * JSON dump loaded back dumps as the first TOML, and the reloaded TOML dumps as the first JSON.
 * HOME is fixed so that ${HOME} expands the same way on every run.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandlock.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error(int r, sandlock_error_t *e, sandlock_policy_t *p)
{
	if (r != -EINVAL && r != -ERANGE && r != -ENOMEM && r != -ENOENT)
		abort();
	if (p) /* ret_policy written on failure */
		abort();
	if (!e || sandlock_error_code(e) != r)
		abort();
	const char *m = sandlock_error_message(e);
	if (!m || !m[0] || strchr(m, '\n'))
		abort();
	sandlock_error_free(e);
}

static char *dump(const sandlock_policy_t *p, int json)
{
	char *t = NULL;

	if ((json ? sandlock_policy_dump_json(p, &t) : sandlock_policy_dump_toml(p, &t)) < 0 || !t)
		abort();
	return t;
}

/* @text must load (in its format) and dump as @want in each format given. */
static void reload(const char *text, int json, const char *want_toml, const char *want_json)
{
	sandlock_policy_t *p = NULL;
	sandlock_error_t *e = NULL;
	int r = json ? sandlock_policy_load_json(text, strlen(text), &p, &e)
		     : sandlock_policy_load_toml(text, strlen(text), &p, &e);

	if (r < 0) {
		fprintf(stderr, "fuzz-profile: a dump does not load back: %s\n--- dump:\n%s\n",
			e ? sandlock_error_message(e) : "?", text);
		abort();
	}
	char *t = dump(p, 0), *j = dump(p, 1);
	if (want_toml && strcmp(t, want_toml) != 0) {
		fprintf(stderr, "fuzz-profile: TOML dumps differ:\n%s\n---\n%s\n", want_toml, t);
		abort();
	}
	if (want_json && strcmp(j, want_json) != 0) {
		fprintf(stderr, "fuzz-profile: JSON dumps differ:\n%s\n---\n%s\n", want_json, j);
		abort();
	}
	free(t);
	free(j);
	sandlock_policy_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int initialized;
	sandlock_policy_t *p = NULL;
	sandlock_error_t *e = NULL;

	if (!initialized) {
		setenv("HOME", "/home/fuzz", 1);
		initialized = 1;
	}
	int r = sandlock_policy_load_toml((const char *)data, size, &p, &e);
	if (r < 0) {
		check_error(r, e, p);
		return 0;
	}
	if (r != 0 || !p || e)
		abort();
	char *t1 = dump(p, 0), *j1 = dump(p, 1);
	/* A profile holds no runtime field, so its TOML dump is all of it. */
	reload(t1, 0, t1, j1);
	reload(j1, 1, t1, j1);
	free(t1);
	free(j1);
	sandlock_policy_free(p);
	return 0;
}
