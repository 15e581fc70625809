/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * spawn-helpers.h: what the tests that spawn through the public API share. Header-only (static
 * functions), as tap.h.
 */
#pragma once

#include <sys/stat.h>

#include "sandlock.h"

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
