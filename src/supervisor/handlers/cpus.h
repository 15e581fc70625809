/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/cpus: num_cpus (cpus.c): the /proc/cpuinfo open.c serves.
 */
#pragma once

#include <stddef.h>

/* /proc/cpuinfo as a sandbox of @ncpus CPUs sees it (malloc'd in *@ret). -errno. */
int cpus_cpuinfo(unsigned ncpus, char **ret, size_t *ret_len);
