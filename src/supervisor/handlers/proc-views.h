/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/proc-views: the texts of the /proc files served while /proc is (proc-views.c).
 */
#pragma once

#include <stddef.h>

struct supervisor;

/* /proc/loadavg (the sandbox's processes), /proc/uptime (since it started), /proc/mounts or
 * (@info) mountinfo (the mounts it reaches), /etc/hostname (its name). Text malloc'd in *@ret.
 * -errno. */
int view_loadavg(struct supervisor *sv, char **ret, size_t *ret_len);
int view_uptime(struct supervisor *sv, char **ret, size_t *ret_len);
int view_mounts(struct supervisor *sv, int info, char **ret, size_t *ret_len);
int view_hostname(struct supervisor *sv, char **ret, size_t *ret_len);
