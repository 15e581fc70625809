/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/memory: max_memory (memory.c): its state, held by the supervisor as sv->mem_pids,
 * and what open.c serves of it.
 */
#pragma once

#include <stddef.h>
#include <sys/types.h>

struct supervisor;

/* The sandbox's processes found last. */
struct mem_pids {
	pid_t *v;
	size_t n, cap;
	int dirty; /* a fork since: scan /proc again */
};

/* /proc/meminfo as a sandbox under max_memory sees it: MemTotal the limit, MemFree and
 * MemAvailable what is left of it (malloc'd in *@ret). -errno. */
int memory_meminfo(struct supervisor *sv, char **ret, size_t *ret_len);
