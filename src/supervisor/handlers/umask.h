/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/umask: the umasks the supervisor knows (umask.c), held as sv->umasks.
 */
#pragma once

#include <stddef.h>
#include <sys/types.h>

struct umask_cache {
	struct umask_entry {
		pid_t tid;
		int pidfd; /* the task's: the tid names it while it lives */
		mode_t mask;
	} v[32];
	size_t n;
	pid_t flying[64]; /* tasks whose umask() may not have returned yet */
	size_t n_flying;
	int lost; /* more than that at once: no mask kept any more */
};
