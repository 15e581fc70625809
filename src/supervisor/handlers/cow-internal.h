/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cow-internal: what the workdir's handler files share (cow.c, cow-xattr.c).
 */
#pragma once

#include <linux/seccomp.h>
#include <stdint.h>
#include <sys/stat.h>

#include "cow/cow.h"

struct supervisor;

/* A FIFO, socket or device node: the kernel's. */
static inline int cow_is_special(mode_t m)
{
	return !S_ISREG(m) && !S_ISDIR(m) && !S_ISLNK(m);
}

/* Read the name at @addr (relative to @dirfd) and resolve it. 1: outside the workdir (not
 * ours); 0: @res set; COW_HOLD; -errno, NOTIF_GONE. */
int cow_resolve_arg(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		    uint64_t addr, int follow, int empty_ok, struct cow_res *res);
/* Descriptor @fd of the caller, when it is a workdir file's (its entry in @res): 0; 1 when it
 * is not one (elsewhere, the branch's); -EPERM for a workdir file the merged view no longer
 * shows. */
int cow_fd_entry(struct supervisor *sv, const struct seccomp_notif *req, int fd,
		 struct cow_res *res);
/* A name outside the workdir as it reads, for a call Landlock does not cover: the file it
 * reaches (1: not a workdir file; 0: @res set), an empty name the descriptor's own (copied up
 * with @copy). */
int cow_outside_target(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		       uint64_t addr, int follow, int copy, struct cow_res *res);
/* cow-xattr.c: extended attributes under the workdir (set, remove, get, list; by name, and
 * changes by a descriptor of a workdir file). */
int cow_xattr(struct supervisor *sv, const struct seccomp_notif *req,
	      struct seccomp_notif_resp *resp);
