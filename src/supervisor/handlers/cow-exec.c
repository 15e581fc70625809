/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/cow-exec: a workdir's working directory and exec (chdir, getcwd, execve, execveat):
 * the kernel's, through the anchors and links the workdir holds for the run (cow/anchor.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

#include "cow/cow.h"
#include "fd-util.h"
#include "cow-internal.h"
#include "handlers.h"
#include "macro.h"
#include "supervisor/child.h"
#include "supervisor/args.h"
#include "supervisor/dispatch.h"
#include "supervisor/notif.h"
#include "supervisor/supervisor.h"
#include "syscall-util.h"

/* ---- working directory, exec ------------------------------------------------------------- */

int cow_chdir_call(struct supervisor *sv, const struct seccomp_notif *req,
		   struct seccomp_notif_resp *resp)
{
	struct cow_res res;
	struct path_args pa;
	struct stat st;

	int r = cow_resolve_call(sv, req, &pa, &res);
	if (r != 0)
		return r;
	if (res.n.layer == COW_NONE)
		return -ENOENT;
	if (!S_ISDIR(res.n.st.st_mode))
		return -ENOTDIR;
	/* The working directory is the kernel's: a directory of the branch the workdir does not
	 * hold gets an empty one there to stand for it (cow_anchor; names under it are resolved
	 * here, in the merged view). */
	if (res.n.layer == COW_UPPER && cow_layer_stat(sv->cow, COW_LOWER, res.rel, &st) < 0 &&
	    (r = cow_anchor(sv->cow, res.rel)) < 0)
		return r;
	if (res.n.layer == COW_UPPER &&
	    (cow_layer_stat(sv->cow, COW_LOWER, res.rel, &st) < 0 || !S_ISDIR(st.st_mode)))
		return -EACCES; /* a file of the workdir there */
	/* CONTINUE: chdir changes nothing in any tree and Landlock does not restrict it; the
	 * name reads the same directory of the workdir unless the child changes it meanwhile,
	 * which only moves it where a chdir of its own would. */
	return notif_answer_continue(resp);
}

int cow_getcwd_call(struct supervisor *sv, const struct seccomp_notif *req,
		    struct seccomp_notif_resp *resp)
{
	char real[PATH_MAX], virt[PATH_MAX];

	if (proc_fd_path((pid_t)req->pid, AT_FDCWD, real, sizeof(real)) <= 0 ||
	    !cow_rel_to(sv->cow->upper, real))
		return NOTIF_NOT_MINE; /* the kernel's answer */
	cow_virtual_of(sv->cow, real, virt, sizeof(virt));
	size_t len = strlen(virt) + 1;
	if (len > (size_t)req->data.args[1])
		return -ERANGE;
	int r = notif_mem_write(sv->listener, req, req->data.args[0], virt, len);
	if (r < 0)
		return r;
	notif_answer_value(resp, (int64_t)len);
	return 0;
}

/* Exec of a file of the branch that replaces one of the workdir: its name there is the
 * workdir's file, which the kernel would run. So the branch's file is linked into the same
 * directory under another name of the same length (cow_anchor_alias), and that name is written
 * over the last component of the caller's name (same length: nothing else in its memory
 * moves). Only where that component names the file itself (no symlink): the directory part
 * then leads the kernel to the link. -EACCES where it cannot be done. */
static int exec_alias(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		      uint64_t addr, const struct cow_res *res)
{
	char path[PATH_MAX], alias[PATH_MAX];
	struct cow_res direct;
	int r = child_read_path(sv, req, addr, path, sizeof(path));

	if (r < 0)
		return r;
	const char *slash = strrchr(path, '/'), *rslash = strrchr(res->rel, '/');
	const char *base = slash ? slash + 1 : path, *rbase = rslash ? rslash + 1 : res->rel;
	if (strcmp(base, rbase) != 0 ||
	    (r = cow_resolve_arg(sv, req, dirfd, addr, 0, 0, &direct)) != 0 ||
	    strcmp(direct.rel, res->rel) != 0)
		/* the name ends in a symlink, or is no longer this */
		return r < 0 && r != NOTIF_NOT_MINE ? r : -EACCES;
	if ((r = cow_anchor_alias(sv->cow, res->rel, alias, sizeof(alias))) < 0)
		return r;
	const char *abase = strrchr(alias, '/') ? strrchr(alias, '/') + 1 : alias;
	return notif_mem_write(sv->listener, req, addr + (uint64_t)(base - path), abase,
			       strlen(abase));
}

int cow_exec_call(struct supervisor *sv, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp)
{
	struct cow_res res;
	struct path_args pa;

	int r = cow_resolve_call(sv, req, &pa, &res);
	if (r != 0)
		return r;
	if (res.n.layer == COW_NONE)
		return -ENOENT;
	if (res.n.layer == COW_LOWER && (r = cow_alias_refresh(sv->cow, res.rel)) < 0)
		return r;
	/* A file of the branch: the workdir gets a link to it for the run (cow_anchor_file);
	 * one that replaces a file of the workdir, a link under another name that the name the
	 * caller gave is made to read (exec_alias). */
	if (res.n.layer == COW_UPPER && !S_ISREG(res.n.st.st_mode))
		return -EACCES;
	if (res.n.layer == COW_UPPER && (r = cow_anchor_file(sv->cow, res.rel)) == -EACCES)
		r = exec_alias(sv, req, pa.dirfd, pa.path, &res);
	if (r < 0)
		return r;
	/* CONTINUE: the program is the workdir's (or the branch's, linked there); Landlock
	 * grants the workdir execute and no write, so whatever the name reads by then (the
	 * caller's threads may change it, or the alias written into it) runs only what the
	 * sandbox may run. */
	return notif_answer_continue(resp);
}
