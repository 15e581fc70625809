/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/cow-meta: the calls that change a workdir file's metadata (chmod, chown, the
 * times; every form, by name or by descriptor) and its inode attributes (file_setattr, the
 * ioctls of COW_INODE_IOCTLS). A change of mode, owner or times is made on the branch's copy
 * (copied up first); a kernel object's on the object itself (special_obj), with the caller's
 * rights; the inode attributes are not staged, so refused. A name outside the workdir reaching
 * a workdir file is followed as the child would (cow_outside_target); any other is
 * handlers/fs-meta.c's (NOTIF_NOT_MINE).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>
#include <utime.h>

#include "cow/cow.h"
#include "fd-util.h"
#include "cow-internal.h"
#include "fs-meta.h"
#include "handlers.h"
#include "macro.h"
#include "supervisor/args.h"
#include "supervisor/notif.h"
#include "supervisor/supervisor.h"
#include "syscall-util.h"

#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

/* The entry a metadata call changes: resolved, copied up. NOTIF_NOT_MINE: not the workdir's;
 * 0: @res set; META_SPECIAL: @res set, a kernel object. */
#define META_SPECIAL 2
static int meta_target(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		       uint64_t addr, int follow, int empty_ok, struct cow_res *res,
		       struct seccomp_notif_resp *resp)
{
	int r = cow_resolve_arg(sv, req, dirfd, addr, follow, empty_ok, res);
	if (r == NOTIF_NOT_MINE && addr)
		r = cow_outside_target(sv, req, dirfd, addr, follow, 1, res);
	if (r != 0)
		return r;
	if (res->n.layer == COW_NONE)
		return -ENOENT;
	/* A kernel object: its metadata is changed on the object itself (special_obj), not in
	 * the branch; never left to the kernel, which would read the name again. */
	if (cow_is_special(res->n.st.st_mode))
		return META_SPECIAL;
	return cow_copy_up_off_loop(sv, req, res->rel, 0);
}

/* A change to a file's inode attributes (file_setattr, the ioctls of COW_INODE_IOCTLS: flags,
 * version...; extended attributes are cow-xattr.c's): not staged in the
 * branch, so refused for a file of the workdir (EOPNOTSUPP, what a filesystem without them
 * says) rather than made on the workdir's own file, and for a descriptor of the branch's own
 * files (made or copied in the run). Elsewhere handlers/fs-meta-attr.c's. */
int cow_attr(struct supervisor *sv, const struct seccomp_notif *req,
	     struct seccomp_notif_resp *resp)
{
	const __u64 *a = req->data.args;
	struct cow_res res;
	int r, fd = -1, dirfd = AT_FDCWD, follow = 1, empty_ok = 0;
	uint64_t path = 0;

	switch (req->data.nr) {
	case SYS_ioctl: {
		static const uint32_t inode_ioctls[] = { COW_INODE_IOCTLS };
		size_t i = 0;
		while (i < ELEMENTSOF(inode_ioctls) && inode_ioctls[i] != (uint32_t)a[1])
			i++;
		if (i == ELEMENTSOF(inode_ioctls))
			return NOTIF_NOT_MINE; /* not a change of the inode (trapped otherwise) */
		fd = (int)a[0];
		if (fd < 0)
			return NOTIF_NOT_MINE; /* the kernel's EBADF */
		break;
	}
	case SYS_file_setattr: {
		char name[2];
		struct path_args pa;
		if ((r = path_args_decode(&req->data, &pa)) < 0)
			return r;
		dirfd = pa.dirfd, path = pa.path, follow = pa.follow, empty_ok = pa.empty_ok;
		if (empty_ok && path && notif_mem_read(sv->listener, req, path, name, 1) == 0 &&
		    !name[0])
			fd = dirfd; /* "" with AT_EMPTY_PATH: the descriptor's own file */
		break;
	}
	default:
		return NOTIF_NOT_MINE;
	}
	if (fd >= 0)
		r = cow_fd_entry(sv, req, fd, &res);
	else if ((r = cow_resolve_arg(sv, req, dirfd, path, follow, empty_ok, &res)) ==
			 NOTIF_NOT_MINE &&
		 path)
		r = cow_outside_target(sv, req, dirfd, path, follow, 0, &res);
	else if (r == NOTIF_NOT_MINE && empty_ok) /* AT_EMPTY_PATH: the descriptor's own file */
		r = cow_fd_entry(sv, req, fd = dirfd, &res);
	/* A descriptor of the branch's own file: refused too (what it would set is not staged,
	 * and an immutable or append-only file would keep the branch from being removed). */
	char real[PATH_MAX];
	if (r == NOTIF_NOT_MINE && fd >= 0 &&
	    proc_fd_path((pid_t)req->pid, fd, real, sizeof(real)) > 0 &&
	    cow_rel_to(sv->cow->upper, real))
		return -EOPNOTSUPP;
	if (r < 0)
		return r;
	if (res.n.layer == COW_NONE)
		return -ENOENT;
	if (cow_is_special(res.n.st.st_mode))
		return NOTIF_NOT_MINE; /* a kernel object's: fs-meta-attr.c's, on its object */
	return -EOPNOTSUPP;
}

/* The answer to a change the engine made (0: the call's own success), or its -errno. */
static int answer_change(struct seccomp_notif_resp *resp, int r)
{
	if (r < 0)
		return r;
	notif_answer_value(resp, 0);
	return 0;
}

/* A workdir's kernel object resolved in @res (meta_target's META_SPECIAL), whose mode, owner and
 * times are its own (a FIFO holds no content to stage): an O_PATH descriptor of it, made with
 * the supervisor's rights where they stand for the caller's (fs_meta_creds). Still the object
 * resolved (the host, or a commit of another sandbox, may have replaced the entry meanwhile),
 * else -EPERM. */
static int special_obj(struct supervisor *sv, const struct seccomp_notif *req,
		       const struct cow_res *res)
{
	int r = fs_meta_creds(sv, req);

	if (r != 1)
		return r;
	return cow_lower_object(sv->cow, res->rel, &res->n.st);
}

static int chmod_special(struct supervisor *sv, const struct seccomp_notif *req,
			 const struct cow_res *res, mode_t mode, struct seccomp_notif_resp *resp)
{
	char self[64];
	_cleanup_close_ int obj = special_obj(sv, req, res);

	if (obj < 0)
		return obj;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", obj);
	return notif_answer_libc(resp, chmod(self, mode));
}

static int chown_special(struct supervisor *sv, const struct seccomp_notif *req,
			 const struct cow_res *res, uint32_t uid, uint32_t gid,
			 struct seccomp_notif_resp *resp)
{
	int r;

	/* In a user namespace of the sandbox's, the ids are that namespace's. */
	if (sv->meta.userns && ((r = fs_meta_map_id(req, "uid_map", uid, &uid)) < 0 ||
				(r = fs_meta_map_id(req, "gid_map", gid, &gid)) < 0))
		return r;
	_cleanup_close_ int obj = special_obj(sv, req, res);
	if (obj < 0)
		return obj;
	return notif_answer_libc(resp, fchownat(obj, "", uid, gid, AT_EMPTY_PATH));
}

/* chmod, fchmodat, fchmodat2 by name. */
static int meta_chmod_named(struct supervisor *sv, const struct seccomp_notif *req,
			    const struct path_args *pa, struct seccomp_notif_resp *resp)
{
	struct cow_res res;
	int r;

	if ((int)pa->flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL; /* the kernel's answer */
	r = meta_target(sv, req, pa->dirfd, pa->path, pa->follow, pa->empty_ok, &res, resp);
	if (r == META_SPECIAL)
		return chmod_special(sv, req, &res, (mode_t)pa->mode, resp);
	if (r != 0)
		return r;
	if (S_ISLNK(res.n.st.st_mode))
		return -EOPNOTSUPP; /* never followed here: a symlink's mode is not changed */
	return answer_change(resp, cow_chmod(sv->cow, res.rel, (mode_t)pa->mode));
}

/* chown (followed), lchown, fchownat by name. */
static int meta_chown_named(struct supervisor *sv, const struct seccomp_notif *req,
			    const struct path_args *pa, struct seccomp_notif_resp *resp)
{
	struct cow_res res;
	int r;

	r = meta_target(sv, req, pa->dirfd, pa->path, pa->follow, pa->empty_ok, &res, resp);
	if (r == META_SPECIAL)
		return chown_special(sv, req, &res, pa->uid, pa->gid, resp);
	if (r != 0)
		return r;
	return answer_change(resp, cow_chown(sv->cow, res.rel, (uid_t)pa->uid, (gid_t)pa->gid));
}

/* The times of utimensat, utime, utimes, futimesat, from the caller, in @ts. */
static int meta_read_times(struct supervisor *sv, const struct seccomp_notif *req,
			   const struct path_args *pa, struct timespec ts[2])
{
	int r;

	if (pa->call->times == PATH_TIMES_TIMESPEC)
		return notif_mem_read(sv->listener, req, pa->buf, ts, 2 * sizeof(ts[0]));
	if (pa->call->times == PATH_TIMES_UTIMBUF) {
		struct utimbuf u;
		if ((r = notif_mem_read(sv->listener, req, pa->buf, &u, sizeof(u))) < 0)
			return r;
		ts[0] = (struct timespec){ u.actime, 0 };
		ts[1] = (struct timespec){ u.modtime, 0 };
		return 0;
	}
	struct timeval tv[2];
	if ((r = notif_mem_read(sv->listener, req, pa->buf, tv, sizeof(tv))) < 0)
		return r;
	for (int i = 0; i < 2; i++)
		ts[i] = (struct timespec){ tv[i].tv_sec, tv[i].tv_usec * 1000 };
	return 0;
}

static int meta_times_call(struct supervisor *sv, const struct seccomp_notif *req,
			   const struct path_args *pa, struct seccomp_notif_resp *resp)
{
	struct timespec ts[2];
	struct cow_res res;
	int has_ts = pa->buf != 0, fl = (int)pa->flags, r;

	if (has_ts && (r = meta_read_times(sv, req, pa, ts)) < 0)
		return r;
	if (pa->call->null_path_fd && !pa->path) {
		/* futimens (and futimesat with no name): the descriptor's file; no flag goes
		 * with it (the kernel's EINVAL). */
		if (fl)
			return -EINVAL;
		if ((r = pa->dirfd < 0 ? NOTIF_NOT_MINE
				       : cow_fd_target(sv, req, pa->dirfd, &res)) != 0)
			return r;
	} else if ((r = meta_target(sv, req, pa->dirfd, pa->path, pa->follow, pa->empty_ok, &res,
				    resp)) == META_SPECIAL) {
		_cleanup_close_ int obj = special_obj(sv, req, &res); /* a kernel object */
		if (obj < 0)
			return obj;
		return notif_answer_libc(resp,
					 utimensat(obj, "", has_ts ? ts : NULL, AT_EMPTY_PATH));
	} else if (r != 0)
		return r;
	return answer_change(resp, cow_utimens(sv->cow, res.rel, has_ts ? ts : NULL));
}

int cow_meta(struct supervisor *sv, const struct seccomp_notif *req,
	     struct seccomp_notif_resp *resp)
{
	struct cow_res res;
	struct path_args pa;
	int r = path_args_decode(&req->data, &pa);

	if (r < 0)
		return r;
	int is_chmod = pa.call->family == PATH_CHMOD;
	if (pa.by_fd) { /* fchmod, fchown */
		/* (a negative descriptor is the kernel's EBADF, read from no memory) */
		r = pa.fd < 0 ? NOTIF_NOT_MINE : cow_fd_target(sv, req, pa.fd, &res);
		if (r == 0 && is_chmod)
			r = answer_change(resp, cow_chmod(sv->cow, res.rel, (mode_t)pa.mode));
		else if (r == 0)
			r = answer_change(
				resp, cow_chown(sv->cow, res.rel, (uid_t)pa.uid, (gid_t)pa.gid));
		return r;
	}
	if (is_chmod)
		return meta_chmod_named(sv, req, &pa, resp);
	if (pa.call->family == PATH_CHOWN)
		return meta_chown_named(sv, req, &pa, resp);
	return meta_times_call(sv, req, &pa, resp);
}
