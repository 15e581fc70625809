/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/fs-meta-take: what every metadata call of fs-meta.c and fs-meta-attr.c rests on: the
 * file the call names, taken once and checked to be one the sandbox may change (fs_meta_take),
 * whether the supervisor's rights stand for the caller's (fs_meta_creds), and the caller's ids
 * as its user namespace maps them (fs_meta_map_id). Both families call it; it calls neither.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cow/cow.h"
#include "cow-internal.h"
#include "fd-util.h"
#include "fs-meta.h"
#include "handlers.h"
#include "macro.h"
#include "path-util.h"
#include "plan/plan.h"
#include "supervisor/child.h"
#include "supervisor/supervisor.h"
#include "syscall-util.h"

#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#define OPEN_TREE_CLOEXEC_ O_CLOEXEC

/* How the supervisor's rights stand for a sandbox task's (supervisor.meta.creds). */
enum {
	CREDS_FIXED = 1, /* no capability, one uid and one gid: no task can hold other rights */
	CREDS_CHECKED,	 /* privileged: each caller's ids and capabilities compared with ours */
	CREDS_NONE,	 /* privileged, and the sandbox in a user namespace: never */
};

void fs_meta_done(struct supervisor *sv)
{
	notif_pidfd_drop(&sv->meta.pidfd);
	if (sv->meta.fd_dir_plus1 > 0)
		close(sv->meta.fd_dir_plus1 - 1);
	if (sv->meta.kept_plus1 > 0)
		close(sv->meta.kept_plus1 - 1);
	sv->meta.fd_dir_plus1 = sv->meta.kept_plus1 = 0;
}

/* The last file allowed, kept by an O_PATH descriptor of its own (never the caller's open file,
 * whose writers and leases it would hold): while the supervisor holds it, its identity names
 * no other file, so a call on the same file again (tar: fchown, fchmod, futimens of each) is
 * allowed by identity, not looked up again. What was decided for it stays true: no task of the
 * sandbox can move a file out of the writable grants (Landlock refuses the rename), nor into a
 * denied path or the workdir. */
static void keep(struct supervisor *sv, int own, int is_path, const struct stat *st)
{
	int k = is_path ? fcntl(own, F_DUPFD_CLOEXEC, 3)
			: (int)syscall(SYS_open_tree, own, "", AT_EMPTY_PATH | OPEN_TREE_CLOEXEC_);
	if (k < 0)
		return;
	if (sv->meta.kept_plus1 > 0)
		close(sv->meta.kept_plus1 - 1);
	sv->meta.kept_plus1 = k + 1;
	sv->meta.kept_dev = st->st_dev;
	sv->meta.kept_ino = st->st_ino;
}

/* The path the kernel gives the supervisor's descriptor @fd (fd_real_path), read through
 * /proc/self/fd opened once: the name of each call's file is one lookup, not four. */
static ssize_t real_path(struct supervisor *sv, int fd, char *buf, size_t size)
{
	char num[16];

	if (!sv->meta.fd_dir_plus1) {
		int dir = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dir < 0)
			return fd_real_path(fd, buf, size);
		sv->meta.fd_dir_plus1 = dir + 1;
	}
	snprintf(num, sizeof(num), "%d", fd);
	ssize_t k = readlinkat(sv->meta.fd_dir_plus1 - 1, num, buf, size - 1);
	if (k > 0)
		buf[k] = '\0';
	return k;
}

/* Whether the file taken (@own, @st) may be changed: beneath a writable grant and not denied, or
 * a file of the workdir's branch; never a file of the workdir itself. 0, -EACCES, -EPERM. */
static int meta_allowed(struct supervisor *sv, int own, const struct stat *st)
{
	const struct plan_fs *fs = &sv->plan->fs;
	char real[PATH_MAX];

	if (real_path(sv, own, real, sizeof(real)) <= 0 || real[0] != '/')
		return -EACCES; /* no path (a socket, a pipe, an anonymous inode): no grant */
	if (sv->cow && !cow_is_special(st->st_mode) && cow_rel_to(sv->cow->lower, real))
		return -EPERM;
	/* A file of the workdir's branch (by a descriptor a workdir open installed, or its own
	 * path): the run's copy, where its changes of the workdir are made. */
	if (sv->cow && cow_rel_to(sv->cow->upper, real))
		return 0;
	if (!path_is_beneath_any(real, fs->write_grants) || path_is_beneath_any(real, fs->denied))
		return -EACCES;
	for (size_t i = 0; i < fs->n_denied_ids; i++)
		if (fs->denied_ids[i].dev == st->st_dev && fs->denied_ids[i].ino == st->st_ino)
			return -EACCES; /* a denied file under another name (a bind mount) */
	return 0;
}

int fs_meta_take(struct supervisor *sv, const struct seccomp_notif *req, int by_fd, int fd,
		 int dirfd, uint64_t addr, int empty_ok, int nofollow, struct stat *st,
		 int *of_dirfd)
{
	char path[PATH_MAX] = ".";
	int r, named = !by_fd;

	if (named && addr && (r = child_read_path(sv, req, addr, path, sizeof(path))) < 0)
		return r;
	if (named && !empty_ok && (!addr || !path[0]))
		return addr ? -ENOENT : -EFAULT;
	if (of_dirfd)
		*of_dirfd = 0;
	if (named && (!addr || !path[0]) && dirfd != AT_FDCWD) {
		/* an empty (or NULL) name with AT_EMPTY_PATH: the descriptor's own file */
		named = 0, fd = dirfd;
		if (of_dirfd)
			*of_dirfd = 1;
	} else if (named && !path[0])
		snprintf(path, sizeof(path), "."); /* ... with AT_FDCWD: the working directory */
	/* A descriptor the supervisor may not take (a non-dumpable task, to a supervisor without
	 * CAP_SYS_PTRACE): EPERM, never the kernel's call. A bad one: EBADF. */
	_cleanup_close_ int own = !named ? notif_get_fd_kept(sv->listener, req, fd, &sv->meta.pidfd)
					 : child_path_open(sv, req, dirfd, path, 0, nofollow);
	if (own < 0)
		return own == -ELOOP ? -EACCES : own; /* a magic link or a loop: not followed */
	/* Decided on the file taken, by the path the kernel gives it now. */
	if (fstat(own, st) < 0)
		return -EPERM;
	if (sv->meta.kept_plus1 && sv->meta.kept_dev == st->st_dev &&
	    sv->meta.kept_ino == st->st_ino)
		return TAKE_FD(own);
	if ((r = meta_allowed(sv, own, st)) < 0)
		return r;
	keep(sv, own, named, st);
	return TAKE_FD(own);
}

/* The lines of @tid's status (0: the supervisor) that a change's permission rests on: the ids,
 * the groups, the effective capabilities; the permitted and ambient ones with @all. */
static int creds_of(pid_t tid, int all, char *out, size_t size)
{
	static const char *const keys[] = { "\nUid:",	 "\nGid:",    "\nGroups:",
					    "\nCapEff:", "\nCapPrm:", "\nCapAmb:" };
	char buf[8192];
	size_t n = 0;

	if (proc_read(tid, "status", buf, sizeof(buf)) < 0)
		return -ESRCH;
	out[0] = '\0';
	for (size_t i = 0; i < (all ? ELEMENTSOF(keys) : 4); i++) {
		const char *p = strstr(buf, keys[i]);
		const char *e = p ? strchr(p + 1, '\n') : NULL;
		size_t len = p ? (e ? (size_t)(e - p) : strlen(p)) : 0;
		if (!p || n + len + 1 >= size)
			return -EPERM; /* cannot tell: fail closed */
		memcpy(out + n, p, len);
		n += len;
		out[n] = '\0';
	}
	return 0;
}

/* Whether the status line @key of @ids holds one value repeated ("Uid:\t5\t5\t5\t5"). */
static int one_value(const char *ids, const char *key)
{
	const char *p = strstr(ids, key);
	unsigned long v[4];

	return p && sscanf(p + strlen(key), "%lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) == 4 &&
	       v[0] == v[1] && v[1] == v[2] && v[2] == v[3];
}

/* What the supervisor's rights are, once: a supervisor without capabilities and with one uid and
 * one gid has rights no task of the sandbox can lose or exceed (it starts with them; without a
 * capability it can change neither its ids nor its groups, no_new_privs keeps an exec from
 * granting any, and no user namespace can be made in it), so no caller is looked at. A
 * privileged one compares the callers' credentials with its own (fs_meta_creds). */
static int creds_kind(struct supervisor *sv)
{
	char all[sizeof(sv->meta.ids)];

	if (sv->meta.creds)
		return sv->meta.creds;
	if (creds_of(0, 1, all, sizeof(all)) < 0 ||
	    creds_of(0, 0, sv->meta.ids, sizeof(sv->meta.ids)))
		return CREDS_NONE; /* not kept: asked again */
	int plain = one_value(all, "\nUid:") && one_value(all, "\nGid:") &&
		    strstr(all, "\nCapEff:\t0000000000000000") &&
		    strstr(all, "\nCapPrm:\t0000000000000000") &&
		    strstr(all, "\nCapAmb:\t0000000000000000");
	/* A privileged supervisor cannot stand for a task of another user namespace: the
	 * capabilities it holds are not the ones the task's namespace gives. */
	sv->meta.creds = plain ? CREDS_FIXED : sv->meta.userns ? CREDS_NONE : CREDS_CHECKED;
	return sv->meta.creds;
}

int fs_meta_creds(struct supervisor *sv, const struct seccomp_notif *req)
{
	char ids[sizeof(sv->meta.ids)];

	switch (creds_kind(sv)) {
	case CREDS_FIXED:
		return 1;
	case CREDS_CHECKED:
		break;
	default:
		return -EPERM;
	}
	/* Until a task changes its credentials (handle_creds_change), every task has those the
	 * sandbox started with: found equal to the supervisor's once, they are not read again. */
	if (!sv->meta.changed && sv->meta.verified)
		return 1;
	/* The caller waits in the call: its own ids and capabilities cannot change meanwhile. */
	if (creds_of((pid_t)req->pid, 0, ids, sizeof(ids)) < 0)
		return notif_id_valid(sv->listener, req->id) ? -EPERM : NOTIF_GONE;
	int same = strcmp(ids, sv->meta.ids) == 0;
	if (same && !sv->meta.changed)
		sv->meta.verified = 1;
	return same ? 1 : -EPERM;
}

int fs_meta_map_id(const struct seccomp_notif *req, const char *map, uint32_t id, uint32_t *ret)
{
	char buf[4096];

	if (id == (uint32_t)-1) {
		*ret = id;
		return 0;
	}
	if (proc_read((pid_t)req->pid, map, buf, sizeof(buf)) < 0)
		return -EPERM;
	for (char *line = buf; line && *line;
	     line = strchr(line, '\n'), line = line ? line + 1 : 0) {
		unsigned long in, out, count;
		if (sscanf(line, "%lu %lu %lu", &in, &out, &count) == 3 && id >= in &&
		    id - in < count) {
			*ret = (uint32_t)(out + (id - in));
			return 0;
		}
	}
	return -EINVAL;
}
