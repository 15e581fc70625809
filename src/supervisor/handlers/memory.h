/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/memory: max_memory (memory.c): what open.c serves of it.
 */
#pragma once

#include <stddef.h>

struct supervisor;

/* /proc/meminfo as a sandbox under max_memory sees it: MemTotal the limit, MemFree and
 * MemAvailable what is left of it (malloc'd in *@ret). -errno. */
int memory_meminfo(struct supervisor *sv, char **ret, size_t *ret_len);
