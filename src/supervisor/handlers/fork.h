/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/fork: max_processes' state (fork.c), held by the supervisor as sv->procs.
 */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* The threads whose allowed fork may not have made its child yet. Used by the loop only. */
struct proc_limit {
	unsigned max; /* 0: unlimited */
	pid_t *pending;
	size_t n_pending, cap_pending;
};
int proc_limit_init(struct proc_limit *pl, unsigned max);
void proc_limit_done(struct proc_limit *pl);
