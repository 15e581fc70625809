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
 * else EPERM). With a workdir, the names under it are cow-meta.c's (asked first); what reaches this
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
