/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/fs-meta: the calls that change a file's metadata (chmod, chown, the times; the
 * extended attributes, inode flags and file_setattr are fs-meta-attr.c's), in every supervised
 * sandbox. Landlock has no right for them: left to the kernel, they would change any file the
 * caller's ids own, inside the grants or not. So each is made here, on the file the call names,
 * taken once (the caller's descriptor with pidfd_getfd, or the name opened as the caller reaches
 * it: child_path_open) and changed through that descriptor, never by name again; a rename or a
 * descriptor swap after the check changes nothing of what is changed. Allowed only for a file
 * beneath a writable grant that is not a denied path (else EACCES, what Landlock answers a
 * write), made with the supervisor's rights where those stand for the caller's (fs_meta_creds,
 * else EPERM). With a workdir, the names under it are cow.c's (asked first); what reaches this
 * file is elsewhere. Without a supervisor these calls are refused by the filter (plan/routes.def).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>
#include <utime.h>

#include "cow/cow.h"
#include "cow-internal.h"
#include "fd-util.h"
#include "fs-meta.h"
#include "handlers.h"
#include "macro.h"
#include "path-util.h"
#include "plan/plan.h"
#include "supervisor/args.h"
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

/* The calls of the older ABIs, where this one has them (distinct numbers otherwise). */
#ifdef SYS_chmod
#define SYS_chmod_ SYS_chmod
#define SYS_chown_ SYS_chown
#define SYS_lchown_ SYS_lchown
#define SYS_utime_ SYS_utime
#define SYS_utimes_ SYS_utimes
#define SYS_futimesat_ SYS_futimesat
#else
#define SYS_chmod_ (-2)
#define SYS_chown_ (-3)
#define SYS_lchown_ (-4)
#define SYS_utime_ (-5)
#define SYS_utimes_ (-6)
#define SYS_futimesat_ (-7)
#endif

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

int handle_creds_change(struct supervisor *sv, const struct seccomp_notif *req,
			struct seccomp_notif_resp *resp)
{
	(void)req;
	/* From now on each metadata call compares its caller's credentials with the supervisor's
	 * (fs_meta_creds), marked before this call runs: a call of another task answered
	 * earlier was made by a task whose credentials this call does not change (they are each
	 * thread's own). CONTINUE: the call changes only the caller's own credentials, which
	 * the kernel checks against the caller's capabilities; no decision of the supervisor's
	 * rests on its arguments. */
	sv->meta.changed = 1;
	return notif_answer_continue(resp);
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

/* A named call's AT_ flags: only @allowed, else the kernel's EINVAL. */
static int at_flags(int fl, int allowed)
{
	return fl & ~allowed ? -EINVAL : 0;
}

static int meta_chmod(struct supervisor *sv, const struct seccomp_notif *req,
		      struct seccomp_notif_resp *resp)
{
	char self[64];
	struct stat st;
	struct path_args pa;
	int r = path_args_decode(&req->data, &pa);

	if (r < 0)
		return r;
	/* (chmod and fchmod have no flags; fchmodat has none either, fchmodat2 has) */
	int by_fd = pa.by_fd, fl = (int)pa.flags;
	mode_t mode = (mode_t)pa.mode;
	if ((r = at_flags(fl, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) < 0)
		return r;
	if ((r = fs_meta_creds(sv, req)) != 1)
		return r;
	_cleanup_close_ int own =
		fs_meta_take(sv, req, by_fd, pa.fd, pa.dirfd, pa.path, fl & AT_EMPTY_PATH,
			     fl & AT_SYMLINK_NOFOLLOW, &st, NULL);
	if (own < 0)
		return own;
	/* A file of the branch linked into the workdir for an exec loses that link before it
	 * takes a set-user-ID or set-group-ID bit (cow/anchor.c). */
	struct stat up;
	if (sv->cow && (mode & (S_ISUID | S_ISGID)) &&
	    cow_layer_stat(sv->cow, COW_UPPER, "", &up) == 0 && st.st_dev == up.st_dev)
		cow_unanchor_ino(sv->cow, st.st_ino);
	if (by_fd)
		return notif_answer_libc(resp, fchmod(own, mode)); /* an O_PATH descriptor: EBADF */
	if (S_ISLNK(st.st_mode))
		return -EOPNOTSUPP; /* a symlink's mode is not changed */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", own);
	return notif_answer_libc(resp, chmod(self, mode));
}

static int meta_chown(struct supervisor *sv, const struct seccomp_notif *req,
		      struct seccomp_notif_resp *resp)
{
	struct stat st;
	struct path_args pa;
	int r = path_args_decode(&req->data, &pa);

	if (r < 0)
		return r;
	/* (lchown's flags: AT_SYMLINK_NOFOLLOW, implied; chown and fchown have none) */
	int by_fd = pa.by_fd, fl = (int)pa.flags;
	uint32_t uid = pa.uid, gid = pa.gid;
	if ((r = at_flags(fl, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) < 0)
		return r;
	if ((r = fs_meta_creds(sv, req)) != 1)
		return r;
	/* In a user namespace of the sandbox's, the ids are that namespace's. */
	if (sv->meta.userns && ((r = fs_meta_map_id(req, "uid_map", uid, &uid)) < 0 ||
				(r = fs_meta_map_id(req, "gid_map", gid, &gid)) < 0))
		return r;
	_cleanup_close_ int own =
		fs_meta_take(sv, req, by_fd, pa.fd, pa.dirfd, pa.path, fl & AT_EMPTY_PATH,
			     fl & AT_SYMLINK_NOFOLLOW, &st, NULL);
	if (own < 0)
		return own;
	if (by_fd)
		return notif_answer_libc(resp, fchown(own, uid, gid));
	return notif_answer_libc(resp, fchownat(own, "", uid, gid, AT_EMPTY_PATH));
}

/* The times of utime, utimes, futimesat, utimensat, in @ts (*@has_ts 0: now). */
static int read_times(struct supervisor *sv, const struct seccomp_notif *req,
		      const struct path_args *pa, struct timespec ts[2], int *has_ts)
{
	uint64_t times = pa->buf;
	int r;

	*has_ts = times != 0;
	if (!times)
		return 0;
	if (pa->call->times == PATH_TIMES_TIMESPEC)
		return notif_mem_read(sv->listener, req, times, ts, 2 * sizeof(ts[0]));
	if (pa->call->times == PATH_TIMES_UTIMBUF) {
		struct utimbuf u;
		if ((r = notif_mem_read(sv->listener, req, times, &u, sizeof(u))) < 0)
			return r;
		ts[0] = (struct timespec){ u.actime, 0 };
		ts[1] = (struct timespec){ u.modtime, 0 };
		return 0;
	}
	struct timeval tv[2];
	if ((r = notif_mem_read(sv->listener, req, times, tv, sizeof(tv))) < 0)
		return r;
	for (int i = 0; i < 2; i++) {
		if (tv[i].tv_usec < 0 || tv[i].tv_usec >= 1000000)
			return -EINVAL;
		ts[i] = (struct timespec){ tv[i].tv_sec, tv[i].tv_usec * 1000 };
	}
	return 0;
}

static int meta_times(struct supervisor *sv, const struct seccomp_notif *req,
		      struct seccomp_notif_resp *resp)
{
	struct timespec ts[2];
	struct stat st;
	struct path_args pa;
	int by_fd = 0, has_ts;
	int r = path_args_decode(&req->data, &pa);

	if (r < 0)
		return r;
	int dirfd = pa.dirfd, fl = (int)pa.flags; /* utimensat's flags; the others have none */
	uint64_t addr = pa.path;
	if ((r = at_flags(fl, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) < 0)
		return r;
	if (pa.call->null_path_fd && dirfd != AT_FDCWD && !addr) {
		/* futimens (and futimesat with no name): the descriptor's file, no flag with it */
		if (fl)
			return -EINVAL;
		by_fd = 1;
	}
	if ((r = read_times(sv, req, &pa, ts, &has_ts)) < 0)
		return r;
	if ((r = fs_meta_creds(sv, req)) != 1)
		return r;
	_cleanup_close_ int own =
		fs_meta_take(sv, req, by_fd, dirfd, dirfd, addr, fl & AT_EMPTY_PATH,
			     fl & AT_SYMLINK_NOFOLLOW, &st, NULL);
	if (own < 0)
		return own;
	if (by_fd) /* as the kernel's futimens: an O_PATH descriptor is EBADF */
		return notif_answer_libc(resp,
					 syscall(SYS_utimensat, own, NULL, has_ts ? ts : NULL, 0));
	return notif_answer_libc(resp, utimensat(own, "", has_ts ? ts : NULL, AT_EMPTY_PATH));
}

int handle_fs_meta(struct supervisor *sv, const struct seccomp_notif *req,
		   struct seccomp_notif_resp *resp)
{
	switch (req->data.nr) {
	case SYS_chmod_:
	case SYS_fchmod:
	case SYS_fchmodat:
	case SYS_fchmodat2:
		return meta_chmod(sv, req, resp);
	case SYS_chown_:
	case SYS_lchown_:
	case SYS_fchown:
	case SYS_fchownat:
		return meta_chown(sv, req, resp);
	case SYS_utime_:
	case SYS_utimes_:
	case SYS_futimesat_:
	case SYS_utimensat:
		return meta_times(sv, req, resp);
	case SYS_ioctl:
	case SYS_file_setattr:
		return fs_meta_inode(sv, req, resp);
	default:
		return fs_meta_xattr(sv, req, resp);
	}
}
