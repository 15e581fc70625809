/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/hostname: /etc/hostname of a sandbox given a name (hostname.c), asked by open.c.
 */
#pragma once

#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>

struct supervisor;

/* An open of a sandbox given a name (supervisor.hostname_served), whose name at @path_addr is
 * read into @path (*@have_path set) when it may be /etc/hostname: answered with the name
 * (NOTIF_DEFERRED), refused (-EACCES: a write), NOTIF_GONE, or NOTIF_NOT_MINE for any other
 * file. */
int hostname_open(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		  uint64_t path_addr, char *path, size_t size, int *have_path, uint64_t flags,
		  uint64_t resolve);
