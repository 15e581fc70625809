/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * spawn-helpers.h: what the tests that spawn through the public API share. Header-only (static
 * functions), as tap.h.
 */
#pragma once

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "sandlock.h"
#include "tap.h"

/* A policy that lets ordinary dynamically linked programs start (read grants on the system
 * directories that exist), with every protection allowed to degrade so that the tests run on any
 * Landlock kernel (the protections themselves are tested elsewhere). NULL when out of memory. */
static inline sandlock_policy_t *system_policy(void)
{
	static const char *const dirs[] = { "/usr", "/lib", "/lib64", "/bin" };
	sandlock_policy_t *p = NULL;
	struct stat st;

	if (sandlock_policy_new(&p) < 0)
		return NULL;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (stat(dirs[i], &st) == 0)
			sandlock_policy_add_fs_read(p, dirs[i]);
	for (uint32_t i = 0; i < SANDLOCK_PROTECTION_COUNT; i++)
		sandlock_policy_set_protection(p, i, SANDLOCK_PROTECTION_DEGRADED);
	return p;
}

/* Spawn @argv under @p with @o (its stdout piped), wait for its end and copy what it wrote into
 * @out (cut at @size; "" when it did not start: the spawn's error is told with diag). The exit
 * code in *@ret_code (-1: none, it was killed) and the signal in *@ret_signal (0: none), each
 * when not NULL. Returns sandlock_spawn's result. */
static inline int spawn_output(const sandlock_policy_t *p, const char *const *argv,
			       sandlock_spawn_opts_t *o, char *out, size_t size, int *ret_code,
			       int *ret_signal)
{
	sandlock_sandbox_t *sb = NULL;
	sandlock_error_t *err = NULL;
	size_t len = 0;

	out[0] = '\0';
	o->stdout_mode = SANDLOCK_STDIO_PIPE;
	int r = sandlock_spawn(p, argv, o, &sb, &err);
	if (r < 0)
		diag("spawn: %s", err ? sandlock_error_message(err) : strerror(-r));
	sandlock_error_free(err);
	if (!sb)
		return r;
	sandlock_sandbox_wait(sb, -1);
	const uint8_t *b = sandlock_sandbox_stdout(sb, &len);
	snprintf(out, size, "%.*s", (int)len, b ? (const char *)b : "");
	int kind = sandlock_sandbox_exit_kind(sb);
	if (ret_code)
		*ret_code = kind == SANDLOCK_EXIT_CODE ? sandlock_sandbox_exit_code(sb) : -1;
	if (ret_signal)
		*ret_signal = kind == SANDLOCK_EXIT_SIGNAL ? sandlock_sandbox_exit_signal(sb) : 0;
	sandlock_sandbox_free(sb);
	return 0;
}
