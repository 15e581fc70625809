/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/cow: the syscalls that read or change the tree under the workdir, made on the
 * child's behalf in its copy-on-write branch (src/cow). Each name is read from the child,
 * joined to its working directory or to the directory its descriptor names (a directory of
 * the upper layer stands for its workdir path), and resolved as the kernel would, with the
 * symlinks inside the workdir read in the merged view (cow_resolve). A name outside the
 * workdir is not this file's (NOTIF_NOT_MINE): another handler's, or the kernel's (CONTINUE).
 *
 * Landlock grants the workdir read and execute only (plan/landlock.c), and the branch read
 * and execute: every write under the workdir is made here, so whatever a name reads by the
 * time the kernel would look at it again, the kernel itself never writes into the workdir.
 * Reads are made here too (the file opened in the layer that holds it and installed in the
 * child), so that a deleted, replaced or new file reads as the branch has it.
 *
 * This file owns what the family shares (cow-internal.h): the name resolution
 * (cow_resolve_arg), a descriptor's workdir entry (cow_fd_entry, cow_fd_target), the target
 * of a metadata call outside the workdir (cow_outside_target), the umask of a create
 * (cow_create_mask), and the plain handlers of the workdir's rows (handle_outside_workdir,
 * handle_cow_no_aio). The calls themselves are the family's other files: opens cow-open.c's,
 * stat, access, readlink and getdents cow-look.c's, the tree changes (mkdir, mknod, remove,
 * rename, link, symlink, truncate) cow-tree.c's, chmod, chown, the times and the inode
 * attributes cow-meta.c's.
 *
 * Kernel objects (FIFOs, sockets, device nodes) are opened by the kernel under the Landlock
 * rules; renaming or linking them is EXDEV. chdir and exec are cow-exec.c's (the anchors and
 * links the workdir holds for the run), max_disk's charges cow-quota.c's, extended attributes
 * cow-xattr.c's, large copy-ups cow-copy.c's. Limits (docs/decisions.md): openat2 with
 * resolve flags under the workdir is EXDEV; metadata calls on a descriptor (fchmod, fchown,
 * futimens) copy up the file the descriptor names at the time of the check.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cow/cow.h"
#include "fd-util.h"
#include "cow-internal.h"
#include "handlers.h"
#include "macro.h"
#include "supervisor/child.h"
#include "supervisor/notif.h"
#include "supervisor/supervisor.h"

void cow_virtual_of(struct cow *c, const char *real, char *out, size_t size)
{
	const char *rel = cow_rel_to(c->upper, real);
	if (rel)
		snprintf(out, size, "%s%s%s", c->lower, *rel ? "/" : "", rel);
	else
		snprintf(out, size, "%s", real);
}

/* The directory a relative name starts from: the trapped task's working directory, or the one
 * its descriptor @dirfd names. */
static int base_of(struct supervisor *sv, const struct seccomp_notif *req, int dirfd, char *out,
		   size_t size)
{
	char real[PATH_MAX];
	ssize_t k = proc_fd_path((pid_t)req->pid, dirfd, real, sizeof(real));

	if (k < 0) /* answered either way: never left waiting */
		return k == -ENAMETOOLONG ? (int)k : dirfd != AT_FDCWD ? -EBADF : -ENOENT;
	if (!notif_id_valid(sv->listener, req->id))
		return NOTIF_GONE;
	if (real[0] != '/')
		return NOTIF_NOT_MINE; /* a descriptor of no directory (a pipe, a socket) */
	cow_virtual_of(sv->cow, real, out, size);
	return 0;
}

/* N for "/proc/self/fd/N", "/proc/thread-self/fd/N" or "/dev/fd/N" (alone or followed by
 * "/..."), the caller's own descriptor, which the supervisor would take for its own; else -1. */
static int own_fd_of(const char *path, const char **rest)
{
	static const char *const prefixes[] = { "/proc/self/fd/", "/proc/thread-self/fd/",
						"/dev/fd/" };
	for (size_t i = 0; i < ELEMENTSOF(prefixes); i++) {
		size_t k = strlen(prefixes[i]);
		char *end;
		if (strncmp(path, prefixes[i], k) != 0 || path[k] < '0' || path[k] > '9')
			continue;
		errno = 0;
		long v = strtol(path + k, &end, 10);
		if ((*end && *end != '/') || errno || v > INT_MAX)
			return -1;
		*rest = end;
		return (int)v;
	}
	return -1;
}

/* Whether @abs may reach the workdir: beneath it as it reads, or holding a ".." (a symlink
 * inside is read here, never a symlink outside: cow_resolve). */
static int may_reach(struct cow *c, const char *abs)
{
	if (cow_rel_to(c->lower, abs))
		return 1;
	for (const char *p = strstr(abs, ".."); p; p = strstr(p + 2, ".."))
		if ((p == abs || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
			return 1;
	return 0;
}

/* The last component of @path as the kernel tells it apart (struct cow_res's last). */
static int last_of(const char *path)
{
	size_t n = strlen(path), b;

	while (n > 0 && path[n - 1] == '/')
		n--;
	if (n == 0)
		return 3;
	for (b = n; b > 0 && path[b - 1] != '/';)
		b--;
	if (n - b == 1 && path[b] == '.')
		return 1;
	return n - b == 2 && path[b] == '.' && path[b + 1] == '.' ? 2 : 0;
}

int cow_resolve_arg(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		    uint64_t addr, int follow, int empty_ok, struct cow_res *res)
{
	char path[PATH_MAX], base[PATH_MAX], abs[2 * PATH_MAX + 2];

	res->last = res->magic = 0;
	if (!addr) /* statx(fd, NULL, AT_EMPTY_PATH) (6.11+): the descriptor's */
		return empty_ok ? NOTIF_NOT_MINE : -EFAULT;
	/* Most names are absolute and elsewhere: a look without the ID_VALID check decides
	 * those (its only outcome is "not the workdir's", whose answer is the kernel's or
	 * another handler's, which reads the name again itself). */
	const char *rest = NULL;
	int peeked = notif_mem_peek(req, addr, path, 256) == 0 && memchr(path, '\0', 256);
	res->last = peeked ? last_of(path) : 0;
	if (peeked && path[0] == '/' && own_fd_of(path, &rest) < 0 && !may_reach(sv->cow, path))
		return NOTIF_NOT_MINE;
	/* Else the look is made a checked read: the notification still pending proves it came
	 * from the trapped task (what notif_mem_read checks after its read). */
	int r = 0;
	if (!peeked)
		r = child_read_path(sv, req, addr, path, sizeof(path));
	else if (!notif_id_valid(sv->listener, req->id))
		r = NOTIF_GONE;
	if (r < 0)
		return r;
	if (!path[0])
		return empty_ok ? NOTIF_NOT_MINE : -ENOENT;
	res->last = last_of(path);
	int own = own_fd_of(path, &rest);
	if (own >= 0) {
		/* "/proc/self/fd/N" and its spellings (glibc's fchmodat(AT_SYMLINK_NOFOLLOW)
		 * chmods through one): the file the caller's descriptor N names, with what
		 * follows it. */
		if ((r = base_of(sv, req, own, base, sizeof(base))) != 0)
			return r;
		snprintf(abs, sizeof(abs), "%s%s", base, rest);
		if (!*rest)
			follow = 0; /* the magic link names the file itself, a symlink too */
	} else if (path[0] == '/')
		snprintf(abs, sizeof(abs), "%s", path);
	else {
		if ((r = base_of(sv, req, dirfd, base, sizeof(base))) != 0)
			return r;
		snprintf(abs, sizeof(abs), "%s/%s", base, path);
	}
	if (!may_reach(sv->cow, abs))
		return NOTIF_NOT_MINE;
	r = cow_resolve(sv->cow, abs, follow, res);
	res->last = last_of(path);
	res->magic = own >= 0 && !*rest;
	if (r == 0 && res->inside && cow_held(sv))
		return NOTIF_HOLD;
	if (r == -EXDEV)
		return -EACCES; /* leaves the workdir through a symlink made in the run */
	if (r == 0 && !res->inside)
		return NOTIF_NOT_MINE;
	return r;
}

int cow_resolve_call(struct supervisor *sv, const struct seccomp_notif *req, struct path_args *pa,
		     struct cow_res *res)
{
	int r = path_args_decode(&req->data, pa);

	if (r < 0)
		return r;
	return cow_resolve_arg(sv, req, pa->dirfd, pa->path, pa->follow, pa->empty_ok, res);
}

int cow_create_mask(struct supervisor *sv, const struct seccomp_notif *req, const char *rel,
		    mode_t *ret)
{
	int r = sandbox_umask(sv, req, ret);
	if (r == 0 && *ret && cow_parent_has_default_acl(sv->cow, rel)) /* no mask: no getxattr */
		*ret = 0;
	return r;
}

/* @real, a path the kernel gives, as an entry of the workdir in @res (looked up).
 * NOTIF_NOT_MINE: not beneath the workdir; 0; NOTIF_HOLD (cow_held); -errno. */
static int res_of_real(struct supervisor *sv, const char *real, struct cow_res *res)
{
	struct cow *c = sv->cow;
	const char *rel = cow_rel_to(c->lower, real);

	if (!rel)
		return NOTIF_NOT_MINE;
	if (cow_held(sv))
		return NOTIF_HOLD;
	memset(res, 0, sizeof(*res));
	res->inside = 1;
	snprintf(res->rel, sizeof(res->rel), "%s", rel);
	return cow_lookup(c, res->rel, &res->n);
}

/* A name outside the workdir as it reads, for a call Landlock does not cover (metadata): the
 * file it reaches, opened as the child would (symlinks followed, magic links not).
 * NOTIF_NOT_MINE: not a file of the workdir; 0: @res set to the workdir's file it reaches;
 * -EACCES: a magic link of /proc (cwd, root, another process's) the supervisor cannot follow as
 * the child. */
int cow_outside_target(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		       uint64_t addr, int follow, int copy, struct cow_res *res)
{
	char path[PATH_MAX], real[PATH_MAX];
	int r = child_read_path(sv, req, addr, path, sizeof(path));

	if (r < 0)
		return r;
	if (!path[0]) /* AT_EMPTY_PATH: the descriptor's own file (copied up with @copy) */
		return copy ? cow_fd_target(sv, req, dirfd, res)
			    : cow_fd_entry(sv, req, dirfd, res);
	_cleanup_close_ int fd = child_path_open(sv, req, dirfd, path, 0, !follow);
	if (fd == -ELOOP)
		return -EACCES; /* a magic link (however spelled) or a loop: not followed here */
	if (fd < 0 || fd_real_path(fd, real, sizeof(real)) <= 0)
		return NOTIF_NOT_MINE; /* the kernel's answer (ENOENT, ...) */
	r = res_of_real(sv, real, res);
	return r != 0 ? r : res->n.layer == COW_NONE ? -ENOENT : 0;
}

/* Descriptor @fd of the caller, when it is a workdir file's (its entry in @res): 0;
 * NOTIF_NOT_MINE when it is not one. */
int cow_fd_entry(struct supervisor *sv, const struct seccomp_notif *req, int fd,
		 struct cow_res *res)
{
	char real[PATH_MAX];

	/* Elsewhere, or the branch's own file: the kernel's. A descriptor the supervisor may not
	 * look at (a task that made itself non-dumpable, to a supervisor without
	 * CAP_SYS_PTRACE) may be a workdir file's: refused. */
	ssize_t k = proc_fd_path((pid_t)req->pid, fd, real, sizeof(real));
	if (k == -EACCES || k == -EPERM)
		return -EPERM;
	if (k <= 0)
		return NOTIF_NOT_MINE;
	int r = res_of_real(sv, real, res);
	if (r == NOTIF_HOLD || r == NOTIF_NOT_MINE)
		return r;
	/* A workdir file (its name is under the workdir, where the branch never lies) that the
	 * merged view no longer shows there: deleted or renamed in the run, or by the host. It
	 * has no copy in the branch to change instead, and the kernel would change the
	 * workdir's own: refused. */
	if (r < 0 || res->n.layer == COW_NONE)
		return -EPERM;
	/* A symlink's descriptor (O_PATH): the kernel's EBADF; never followed. */
	if (cow_is_special(res->n.st.st_mode) || S_ISLNK(res->n.st.st_mode))
		return NOTIF_NOT_MINE;
	/* The file the name holds now must be the descriptor's: the workdir's own, or its copy
	 * in the branch; not another made at that name since (the descriptor's file was renamed
	 * away, or the host replaced it). */
	char self[64];
	struct stat st;
	if (fd == AT_FDCWD) /* "" with AT_EMPTY_PATH: the working directory */
		snprintf(self, sizeof(self), "/proc/%u/cwd", req->pid);
	else
		snprintf(self, sizeof(self), "/proc/%u/fd/%d", req->pid, fd);
	if (stat(self, &st) < 0)
		return -EBADF; /* gone meanwhile (its number may name another file by then) */
	if (res->n.layer == COW_LOWER
		    ? st.st_ino != res->n.st.st_ino || st.st_dev != res->n.st.st_dev
		    : !cow_copy_of(sv->cow, res->rel, &st))
		return -EPERM;
	return 0;
}

int cow_fd_target(struct supervisor *sv, const struct seccomp_notif *req, int fd,
		  struct cow_res *res)
{
	int r = cow_fd_entry(sv, req, fd, res);
	return r != 0 ? r : cow_copy_up_off_loop(sv, req, res->rel, 0);
}

/* ---- dispatch ---------------------------------------------------------------------------- */

int cow_quota_call(struct supervisor *sv, const struct seccomp_notif *req,
		   struct seccomp_notif_resp *resp)
{
	/* Without max_disk nothing is charged: a write is the plain handler's. */
	return sv->cow->max_disk ? cow_quota(sv, req, resp) : NOTIF_NOT_MINE;
}

int handle_cow_no_aio(struct supervisor *sv, const struct seccomp_notif *req,
		      struct seccomp_notif_resp *resp)
{
	/* Under max_disk: Linux AIO writes (io_submit) would grow branch files unseen; programs
	 * fall back to ordinary writes on ENOSYS. */
	return -ENOSYS;
}

int handle_outside_workdir(struct supervisor *sv, const struct seccomp_notif *req,
			   struct seccomp_notif_resp *resp)
{
	/* CONTINUE: a name outside the workdir of a call that reads (stat, access, readlink,
	 * getxattr, listxattr), enters (chdir, exec) or reports (getcwd), trapped because the
	 * workdir's names are served here, or (exec, without a workdir) only for the denial log,
	 * which judges it after this answer and changes nothing of it. Whatever it reads by the
	 * time the kernel looks again, Landlock grants the workdir no write, so the kernel changes
	 * nothing there, and reads and exec are Landlock's to allow. The calls that change metadata
	 * are never answered here: elsewhere they are handlers/fs-meta.c's. A write through a
	 * descriptor of no branch file (max_disk) reads no memory to decide: the descriptor's
	 * rights were Landlock's at its open. */
	return notif_answer_continue(resp);
}
