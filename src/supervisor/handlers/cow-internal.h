/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cow-internal: what the workdir's handler files share (cow.c, cow-open.c, cow-look.c,
 * cow-tree.c, cow-meta.c, cow-xattr.c, cow-exec.c, cow-quota.c).
 */
#pragma once

#include <linux/seccomp.h>
#include <stdint.h>
#include <sys/stat.h>

#include "cow/cow.h"
#include "supervisor/args.h"

struct supervisor;

/* A FIFO, socket or device node: the kernel's. */
static inline int cow_is_special(mode_t m)
{
	return !S_ISREG(m) && !S_ISDIR(m) && !S_ISLNK(m);
}

/* @real, a path the kernel gives: a path of the upper layer stands for its workdir path. */
void cow_virtual_of(struct cow *c, const char *real, char *out, size_t size);
/* The handlers of cow-exec.c (chdir, getcwd, execve/execveat) and cow-quota.c (the writes
 * and size changes max_disk charges): as notif_handler_t. */
int cow_chdir_call(struct supervisor *sv, const struct seccomp_notif *req,
		   struct seccomp_notif_resp *resp);
int cow_getcwd_call(struct supervisor *sv, const struct seccomp_notif *req,
		    struct seccomp_notif_resp *resp);
int cow_exec_call(struct supervisor *sv, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp);
int cow_quota(struct supervisor *sv, const struct seccomp_notif *req,
	      struct seccomp_notif_resp *resp);

/* Decode workdir call @req (path_args_decode) and resolve its first name (cow_resolve_arg):
 * 0 with @pa and @res set, or what either answers. */
int cow_resolve_call(struct supervisor *sv, const struct seccomp_notif *req, struct path_args *pa,
		     struct cow_res *res);
/* Read the name at @addr (relative to @dirfd) and resolve it. NOTIF_NOT_MINE: outside the
 * workdir; 0: @res set; NOTIF_HOLD; -errno, NOTIF_GONE. */
int cow_resolve_arg(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		    uint64_t addr, int follow, int empty_ok, struct cow_res *res);
/* Descriptor @fd of the caller, when it is a workdir file's (its entry in @res): 0;
 * NOTIF_NOT_MINE when it is not one (elsewhere, the branch's); -EPERM for a workdir file the
 * merged view no longer shows. */
int cow_fd_entry(struct supervisor *sv, const struct seccomp_notif *req, int fd,
		 struct cow_res *res);
/* fchmod, fchown, futimens: a descriptor of a workdir file, copied up. NOTIF_NOT_MINE: not
 * one; 0: @res set. */
int cow_fd_target(struct supervisor *sv, const struct seccomp_notif *req, int fd,
		  struct cow_res *res);
/* The umask a create at @rel is made with: the child's, none beneath a default ACL. */
int cow_create_mask(struct supervisor *sv, const struct seccomp_notif *req, const char *rel,
		    mode_t *ret);
/* A name outside the workdir as it reads, for a call Landlock does not cover: the file it
 * reaches (NOTIF_NOT_MINE: not a workdir file; 0: @res set), an empty name the descriptor's
 * own (copied up with @copy). */
int cow_outside_target(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		       uint64_t addr, int follow, int copy, struct cow_res *res);
/* cow-xattr.c: extended attributes under the workdir (set, remove, get, list; by name, and
 * changes by a descriptor of a workdir file). */
int cow_xattr(struct supervisor *sv, const struct seccomp_notif *req,
	      struct seccomp_notif_resp *resp);
