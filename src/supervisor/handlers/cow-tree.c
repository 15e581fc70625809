/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/cow-tree: the calls that change the tree under the workdir (mkdir, mknod, unlink,
 * rmdir, rename, link, symlink; every form) and truncate, made in the branch by the engine
 * (cow_mkdir, cow_remove, cow_rename, ...) after the kernel's checks of the names. A FIFO,
 * socket or device node is made by the kernel, under Landlock; one end of a rename or link
 * outside the workdir is EXDEV. The names are resolved by cow.c (cow_resolve_arg).
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>

#include "cow/cow.h"
#include "cow-internal.h"
#include "handlers.h"
#include "supervisor/args.h"
#include "supervisor/child.h"
#include "supervisor/notif.h"
#include "supervisor/supervisor.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 1
#endif

int cow_mkdir_call(struct supervisor *sv, const struct seccomp_notif *req,
		   struct seccomp_notif_resp *resp)
{
	struct cow_res res;
	struct path_args pa;
	mode_t um;

	int r = cow_resolve_call(sv, req, &pa, &res);
	if (r != 0)
		return r == -ENOTDIR && res.trailing ? -EEXIST : r;
	if (res.n.layer != COW_NONE)
		return -EEXIST;
	if ((r = cow_create_mask(sv, req, res.rel, &um)) < 0)
		return r;
	mode_t want = (mode_t)pa.mode & ~um & 07777;
	if ((r = cow_mkdir(sv->cow, res.rel, want)) < 0)
		return r;
	notif_answer_value(resp, 0);
	return 0;
}

int cow_mknod_call(struct supervisor *sv, const struct seccomp_notif *req,
		   struct seccomp_notif_resp *resp)
{
	struct cow_res res;
	struct path_args pa;
	mode_t um;

	int r = cow_resolve_call(sv, req, &pa, &res);
	if (r != 0)
		return r;
	mode_t mode = (mode_t)pa.mode;
	if (res.n.layer != COW_NONE)
		return -EEXIST;
	if ((mode & S_IFMT) && !S_ISREG(mode)) {
		/* A FIFO, socket or device node: the kernel's, under Landlock, which grants
		 * the workdir no right to make one (EACCES). */
		return notif_answer_continue(resp);
	}
	if ((r = cow_create_mask(sv, req, res.rel, &um)) < 0 ||
	    (r = cow_mknod(sv->cow, res.rel, &res.n, mode & ~um & 07777)) < 0)
		return r;
	notif_answer_value(resp, 0);
	return 0;
}

int cow_remove_call(struct supervisor *sv, const struct seccomp_notif *req,
		    struct seccomp_notif_resp *resp)
{
	struct cow_res res;
	struct path_args pa;

	int r = cow_resolve_call(sv, req, &pa, &res);
	if (r != 0)
		return r;
	int dir = pa.dir;
	/* A name ending in "." or "..", or "/": never the directory it reaches (the kernel's
	 * answers). */
	static const int rmdir_err[] = { 0, -EINVAL, -ENOTEMPTY, -EBUSY };
	if (res.last)
		return dir ? rmdir_err[res.last] : -EISDIR;
	if (!dir && res.trailing)
		return res.n.layer == COW_NONE ? -ENOENT : -EISDIR;
	if ((r = cow_remove(sv->cow, res.rel, dir)) < 0)
		return r;
	notif_answer_value(resp, 0);
	return 0;
}

int cow_rename_call(struct supervisor *sv, const struct seccomp_notif *req,
		    struct seccomp_notif_resp *resp)
{
	struct cow_res from, to;
	struct path_args pa;

	int r1 = path_args_decode(&req->data, &pa);
	if (r1 < 0)
		return r1;
	int link = pa.call->family == PATH_LINK;
	unsigned flags = link ? 0 : (unsigned)pa.flags; /* RENAME_*; linkat's are AT_* */
	r1 = cow_resolve_arg(sv, req, pa.dirfd, pa.path, pa.follow, pa.empty_ok, &from);
	if (r1 < 0 && r1 != NOTIF_NOT_MINE)
		return r1;
	int r2 = cow_resolve_arg(sv, req, pa.dirfd2, pa.path2, 0, 0, &to);
	if (r2 < 0 && r2 != NOTIF_NOT_MINE)
		return r2;
	if (r1 == NOTIF_NOT_MINE && r2 == NOTIF_NOT_MINE)
		return NOTIF_NOT_MINE;
	/* A name ending in "." or "..", or "/" (the kernel's answers, before anything else,
	 * wherever the name lies). */
	if (!link && from.last)
		return -EBUSY;
	if (to.last)
		return link || (flags & RENAME_NOREPLACE) ? -EEXIST : -EBUSY;
	if (r1 == NOTIF_NOT_MINE || r2 == NOTIF_NOT_MINE)
		return -EXDEV; /* one end outside the workdir */
	if (flags & ~(unsigned)RENAME_NOREPLACE)
		return -EINVAL; /* RENAME_EXCHANGE, RENAME_WHITEOUT: not under the workdir */
	struct cow *c = sv->cow;
	int r;
	if (!link) {
		/* A large workdir file the move would copy (itself, or one beneath a directory)
		 * is copied up in place first, off the loop; the call is asked again then. */
		char big[PATH_MAX];
		if ((r = cow_rename_check(c, from.rel, to.rel, flags)) < 0)
			return r; /* nothing copied for a move that cannot be made */
		if (r == 0 && ((r = cow_large_lower(c, from.rel, big, sizeof(big))) < 0 ||
			       (r == 1 && (r = cow_copy_up_off_loop(sv, req, big, 0)) < 0)))
			return r;
		r = cow_rename(c, from.rel, to.rel, flags);
	} else {
		if (from.n.layer == COW_NONE)
			return -ENOENT;
		if (to.n.layer != COW_NONE)
			return -EEXIST;
		if (S_ISDIR(from.n.st.st_mode))
			return -EPERM;
		if (cow_is_special(from.n.st.st_mode))
			return -EXDEV;
		if ((r = cow_copy_up_off_loop(sv, req, from.rel, 0)) < 0)
			return r;
		r = cow_link(c, from.rel, to.rel);
	}
	if (r < 0)
		return r;
	notif_answer_value(resp, 0);
	return 0;
}

int cow_symlink_call(struct supervisor *sv, const struct seccomp_notif *req,
		     struct seccomp_notif_resp *resp)
{
	struct cow_res res;
	struct path_args pa;
	char target[PATH_MAX];

	int r = cow_resolve_call(sv, req, &pa, &res);
	if (r != 0)
		return r;
	if ((r = child_read_path(sv, req, pa.target, target, sizeof(target))) < 0)
		return r;
	if (!target[0])
		return -ENOENT;
	if (res.n.layer != COW_NONE)
		return -EEXIST;
	if ((r = cow_symlink(sv->cow, target, res.rel, &res.n)) < 0)
		return r;
	notif_answer_value(resp, 0);
	return 0;
}

int cow_truncate_call(struct supervisor *sv, const struct seccomp_notif *req,
		      struct seccomp_notif_resp *resp)
{
	struct cow_res res;
	struct path_args pa;

	int r = cow_resolve_call(sv, req, &pa, &res);
	if (r != 0)
		return r;
	int64_t len = (int64_t)pa.length;
	if (len < 0)
		return -EINVAL;
	if (res.n.layer == COW_NONE)
		return -ENOENT;
	if (S_ISDIR(res.n.st.st_mode))
		return -EISDIR;
	if (!S_ISREG(res.n.st.st_mode))
		return -EINVAL;
	if ((r = cow_copy_up_off_loop(sv, req, res.rel, len == 0)) < 0 ||
	    (r = cow_truncate(sv->cow, res.rel, len)) < 0)
		return r;
	notif_answer_value(resp, 0);
	return 0;
}
