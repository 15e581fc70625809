/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/cow-xattr: extended attributes under the workdir, in the branch. A change (set,
 * remove, by name or by a descriptor of a workdir file) copies the entry up and is made on the
 * branch's entry, by its path in the branch, which only the supervisor writes. A read (get,
 * list) by a name under the workdir is answered from the layer that holds the entry, so a
 * change, or a file made in the run, reads back as the branch has it; the value is written
 * into the caller's buffer (checked still pending after). Descriptor reads (fgetxattr,
 * flistxattr) are the kernel's: the descriptor's file is the layer's already. A change of a
 * file that is no workdir entry (elsewhere, or the branch's own by its path or a descriptor)
 * is fs-meta-attr.c's (NOTIF_NOT_MINE). Kernel objects (FIFOs...) are the kernel's. The
 * attributes of a file of the workdir copied up go with it (cow/copy.c), and the commit keeps
 * them.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cow-internal.h"
#include "fd-util.h"
#include "fs-meta.h"
#include "handlers.h"
#include "macro.h"
#include "supervisor/notif.h"
#include "supervisor/supervisor.h"
#include "syscall-util.h"

#ifndef XATTR_SIZE_MAX
#define XATTR_SIZE_MAX 65536
#endif

/* The entry the call names, in @res. NOTIF_NOT_MINE: not the workdir's (the kernel's). */
static int target(struct supervisor *sv, const struct seccomp_notif *req, const struct xcall *x,
		  struct cow_res *res)
{
	int r;

	if (x->by_fd)
		return x->fd < 0 ? NOTIF_NOT_MINE : cow_fd_entry(sv, req, x->fd, res);
	r = cow_resolve_arg(sv, req, x->dirfd, x->path, x->follow, x->empty_ok, res);
	if (r == NOTIF_NOT_MINE && x->path && (x->op == X_SET || x->op == X_REMOVE))
		/* A change by a name outside that reaches a workdir file (a symlink there). */
		r = cow_outside_target(sv, req, x->dirfd, x->path, x->follow, 0, res);
	else if (r == NOTIF_NOT_MINE && x->empty_ok && !x->path)
		r = cow_fd_entry(sv, req, x->dirfd, res);
	return r;
}

/* The kernel's own checks of a change (setxattr(2), xattr(7)), made on the entry's layer. */
static int precheck(struct cow *c, const struct xcall *x, const struct cow_res *res,
		    const char *name)
{
	static const char *const spaces[] = { "user.", "trusted.", "security.", "system." };
	size_t i = 0;

	if (x->op == X_SET && (x->flags & ~(XATTR_CREATE | XATTR_REPLACE)))
		return -EINVAL;
	while (i < ELEMENTSOF(spaces) && strncmp(name, spaces[i], strlen(spaces[i])) != 0)
		i++;
	if (i == ELEMENTSOF(spaces))
		return -EOPNOTSUPP;
	/* trusted.* and security.* (file capabilities among them) are the kernel's to grant on
	 * the caller's capabilities, which the supervisor would stand in for, and a commit would
	 * land on the workdir: never made here. Of system.*, the ACLs only. */
	if (i == 1 || i == 2)
		return -EPERM;
	if (i == 3 && strcmp(name, "system.posix_acl_access") != 0 &&
	    strcmp(name, "system.posix_acl_default") != 0)
		return -EOPNOTSUPP;
	if (i == 0 && !S_ISREG(res->n.st.st_mode) && !S_ISDIR(res->n.st.st_mode))
		return -EPERM; /* user.* only on files and directories */
	/* The permission the kernel checks: write access for user.*, a sticky directory's owner,
	 * ownership for an ACL; judged on the workdir's entry where the branch holds the
	 * supervisor's copy of it, with the mode the run gave a file of its own. */
	struct stat orig;
	const struct stat *owner = &res->n.st;
	mode_t mode = res->n.st.st_mode;
	int is_copy = res->n.layer == COW_UPPER && cow_original(c, res->rel, &orig);
	if (is_copy)
		owner = &orig;
	if (i == 0 && S_ISDIR(mode) && (mode & S_ISVTX) && geteuid() != 0 &&
	    owner->st_uid != geteuid())
		return -EPERM; /* a sticky directory's user.* is its owner's */
	/* The run's mode counts only for a file of its own (a chmod of another's is the kernel's
	 * EPERM, which the branch does not check), and there only its owner bits. */
	int own_mode = is_copy && (orig.st_mode & 07777) != (mode & 07777) && geteuid() != 0 &&
		       orig.st_uid == geteuid();
	if (i == 0 && own_mode && !(mode & S_IWUSR))
		return -EACCES;
	int r;
	if (i == 0 && !own_mode &&
	    /* Unchanged: the kernel's own check, on the workdir's entry (its ACL too). */
	    (r = cow_xattr_may_change(c, is_copy ? COW_LOWER : res->n.layer, res->rel)) < 0)
		return r;
	if (i == 3 && geteuid() != 0 && owner->st_uid != geteuid())
		return -EPERM;
	ssize_t k = cow_layer_getxattr(c, res->n.layer, res->rel, name, NULL, 0);
	int has = k >= 0;
	if (!has && k != -ENODATA)
		return (int)k;
	if (x->op == X_REMOVE || (x->flags & XATTR_REPLACE))
		return has ? 0 : -ENODATA;
	return has && (x->flags & XATTR_CREATE) ? -EEXIST : 0;
}

static int change(struct supervisor *sv, const struct seccomp_notif *req, const struct xcall *x,
		  const struct cow_res *res, struct seccomp_notif_resp *resp)
{
	char name[XATTR_NAME_MAX + 1];
	_cleanup_free_ char *value = NULL;
	int r;

	if ((r = xattr_read_change(sv, req, x, name, sizeof(name), &value)) < 0)
		return r;
	/* What the kernel would refuse is refused before the copy-up: a failed call changes
	 * nothing in the branch (nor, by a commit, the workdir's file). */
	if ((r = precheck(sv->cow, x, res, name)) < 0)
		return r;
	if ((r = cow_copy_up_off_loop(sv, req, res->rel, 0)) < 0)
		return r;
	/* On the branch's entry, the final symlink not followed: @res is the entry the caller's
	 * name reached. */
	r = x->op == X_SET ? cow_setxattr(sv->cow, res->rel, name, value, x->size, x->flags)
			   : cow_removexattr(sv->cow, res->rel, name);
	if (r < 0) {
		/* Copied up for this call (here, or by a worker before it was asked again):
		 * taken back, so nothing is changed. */
		if (res->n.layer == COW_LOWER || cow_copy_landed_for(sv, req, res->rel))
			cow_uncopy(sv->cow, res->rel);
		return r;
	}
	notif_answer_value(resp, 0);
	return 0;
}

static int read_back(struct supervisor *sv, const struct seccomp_notif *req, const struct xcall *x,
		     const struct cow_res *res, struct seccomp_notif_resp *resp)
{
	char name[XATTR_NAME_MAX + 1];
	size_t size = x->size > XATTR_SIZE_MAX ? XATTR_SIZE_MAX : x->size;
	_cleanup_free_ char *buf = size ? malloc(size) : NULL;
	int r;

	if (size && !buf)
		return -ENOMEM;
	if (x->op == X_GET && (r = xattr_read_name(sv, req, x->name, name, sizeof(name))) < 0)
		return r;
	ssize_t n = x->op == X_GET
			    ? cow_layer_getxattr(sv->cow, res->n.layer, res->rel, name, buf, size)
			    : cow_layer_listxattr(sv->cow, res->n.layer, res->rel, buf, size);
	if (n < 0)
		return (int)n;
	if (size && n > 0 && (r = notif_mem_write(sv->listener, req, x->value, buf, (size_t)n)) < 0)
		return r;
	notif_answer_value(resp, n);
	return 0;
}

int cow_xattr(struct supervisor *sv, const struct seccomp_notif *req,
	      struct seccomp_notif_resp *resp)
{
	struct xcall x;
	struct cow_res res;
	int r = xattr_decode(sv, req, &x);

	if (r != 0)
		return r;
	/* A change of a file that is no entry of the workdir: fs-meta-attr.c's. */
	if ((r = target(sv, req, &x, &res)) != 0)
		return r;
	if (res.n.layer == COW_NONE)
		return -ENOENT;
	if (cow_is_special(res.n.st.st_mode) && (x.op == X_SET || x.op == X_REMOVE))
		return NOTIF_NOT_MINE; /* a kernel object's: fs-meta-attr.c's, on its object */
	if (cow_is_special(res.n.st.st_mode)) {
		/* CONTINUE: a read of a kernel object's attributes, as the kernel's opens of it are
		 * (reads of attributes are not confined outside the workdir either). */
		return notif_answer_continue(resp);
	}
	if (x.op == X_SET || x.op == X_REMOVE)
		return change(sv, req, &x, &res, resp);
	/* A read under a symlink made in the run (its target then read as the child's name
	 * would) or of any entry: from its layer. */
	return read_back(sv, req, &x, &res, resp);
}
