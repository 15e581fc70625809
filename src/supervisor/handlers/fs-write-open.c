/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/fs-write-open: the opens beneath a writable grant that holds a denied path
 * (fs_write_open, from handlers/open.c), decided on the file reached, reopened through that very
 * file (never by name again) and installed in the child; a create made here, with the child's
 * umask; and the worker jobs an open or a truncate (fs-write.c) may need. The lookups are
 * fs-write.c's; what the two files decide is said there.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd-util.h"
#include "fs-write-internal.h"
#include "fs-write.h"
#include "handlers.h"
#include "macro.h"
#include "path-util.h"
#include "plan/plan.h"
#include "supervisor/args.h"
#include "supervisor/child.h"
#include "supervisor/supervisor.h"

/* ---- the calls that may wait, made on a worker ------------------------------------------ */

/* Open descriptor @fd (O_PATH) again through /proc/self/fd: the very file, whatever its name is
 * by now. The kernel checks the permissions the child (the same ids: fsw_served()) would meet. */
static int reopen(int fd, int flags, mode_t mode)
{
	char self[64];

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	int r = open(self, flags | O_NOCTTY | O_CLOEXEC, mode);
	return r < 0 ? negative_errno() : r;
}

/* The job's call on @fd; NOTIF_DEFERRED when the answer went with a descriptor, else 0 or
 * -errno (NOTIF_GONE). @nonblock: opened O_NONBLOCK (-EAGAIN where it would wait, a lease
 * being broken), then cleared unless asked. */
static int job_run(int listener, int fd, const struct fs_job *job, int nonblock)
{
	int flags = (int)job->flags | (nonblock ? O_NONBLOCK : 0), made = 0;
	int tmpfile = (flags & O_TMPFILE) == O_TMPFILE;
	_cleanup_close_ int opened = -1;

	if (job->kind == JOB_TRUNCATE) {
		opened = reopen(fd, O_WRONLY | (nonblock ? O_NONBLOCK : 0), 0);
		if (opened < 0)
			return opened;
		return ftruncate(opened, job->length) < 0 ? negative_errno() : 0;
	}
	if (job->kind == JOB_REOPEN) {
		/* O_EXCL stays with O_TMPFILE (a file never to be linked). */
		opened = reopen(fd, flags & ~(O_CREAT | O_NOFOLLOW | (tmpfile ? 0 : O_EXCL)),
				job->want);
		if (opened < 0)
			return opened;
		made = tmpfile;
	} else {
		opened = openat(fd, job->name,
				(flags & ~O_TRUNC) | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY |
					O_CLOEXEC,
				job->want);
		made = opened >= 0;
		/* Made meanwhile by another thread of the sandbox (where the supervisor makes the
		 * names, nothing else does, and never a denied file's): opened as it is. */
		if (opened < 0 && errno == EEXIST && !(flags & O_EXCL) && nonblock)
			return -EAGAIN; /* opened as it is, by a worker: it may be a FIFO */
		if (opened < 0 && errno == EEXIST && !(flags & O_EXCL))
			opened = openat(fd, job->name,
					(flags & ~(O_CREAT | O_EXCL)) | O_NOFOLLOW | O_NOCTTY |
						O_CLOEXEC);
		if (opened < 0)
			return negative_errno();
	}
	if (nonblock && !(job->flags & O_NONBLOCK) &&
	    fcntl(opened, F_SETFL, fcntl(opened, F_GETFL) & ~O_NONBLOCK) < 0)
		return negative_errno();
	/* The kernel applied the supervisor's umask: the child's is what counts. */
	struct stat st;
	if (made && fstat(opened, &st) == 0 && (st.st_mode & 0777) != (job->want & 0777))
		(void)!fchmod(opened, (st.st_mode & 07000) | (job->want & 0777));
	return notif_addfd_answer(listener, &job->req, &opened, (flags & O_CLOEXEC) != 0);
}

static void job_worker(int listener, int fd, void *arg)
{
	struct fs_job *job = arg;

	if (listener >= 0 && notif_id_valid(listener, job->req.id)) {
		int r = job_run(listener, fd, job, 0);
		if (r != NOTIF_DEFERRED && r != NOTIF_GONE) {
			struct seccomp_notif_resp resp = { .id = job->req.id };
			fsw_answer_zero_or(&resp, r);
			(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp); /* ENOENT: gone */
		}
	}
	free(job);
}

/* Run @job on descriptor @fd: on the loop when it cannot wait (a regular file or a directory,
 * @plain, opened O_NONBLOCK, for a sandbox without capabilities: no fanotify permission event
 * holds it), else, or when it would, on a worker (a duplicate of @fd goes to it). */
int fsw_job_queue(struct supervisor *sv, const struct seccomp_notif *req, int fd,
		  const struct fs_job *job, int plain)
{
	if (plain && sv->proc_no_caps) {
		struct fs_job now = *job;
		now.req = *req;
		int r = job_run(sv->listener, fd, &now, 1);
		if (r != -EAGAIN)
			return r;
	}
	struct fs_job *j = malloc(sizeof(*j));
	int dup = j ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : -1;

	if (dup < 0) {
		free(j);
		return j ? negative_errno() : -ENOMEM;
	}
	*j = *job;
	j->req = *req;
	int r = supervisor_run_worker(sv, dup, job_worker, j);
	if (r < 0) {
		close(dup);
		free(j);
		return r;
	}
	return NOTIF_DEFERRED;
}

/* ---- open ------------------------------------------------------------------------------ */

/* The open of existing file @fd (O_PATH, resolved as the child would) with @flags: reopened
 * here through that file and installed in the child, when it lies beneath a root. The open
 * helpers return NOTIF_CONTINUED for a file beneath a granted entry, the kernel's (@resp is
 * set by fs_write_open), and NOTIF_NOT_MINE for a file elsewhere. */
static int open_existing(struct supervisor *sv, const struct seccomp_notif *req, int fd,
			 uint64_t flags, uint64_t mode)
{
	char real[PATH_MAX];
	struct stat st;

	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (fsw_where_is(sv, fd, real, sizeof(real)) != WHERE_ROOT)
		return NOTIF_NOT_MINE;
	/* The private_tmp lies in the store root, carved out of the grant holding it, and has a
	 * Landlock rule of its own (plan_private_tmp). CONTINUE is safe: the kernel re-resolves the
	 * name under that Landlock domain, so a name swapped meanwhile opens only what the rules
	 * grant. */
	if (sv->private_tmp && path_is_beneath(real, sv->private_tmp))
		return NOTIF_CONTINUED;
	if (fsw_is_denied(sv, real, &st))
		return -EACCES;
	if (S_ISLNK(st.st_mode))
		return -ELOOP; /* O_NOFOLLOW */
	if (fsw_in_granted(sv, real))
		return NOTIF_CONTINUED;
	int r = fsw_served(sv, req);
	if (r <= 0)
		return r == NOTIF_GONE ? r : NOTIF_NOT_MINE;
	mode_t umask = 0;
	if ((flags & O_TMPFILE) == O_TMPFILE && (r = sandbox_umask(sv, req, &umask)) < 0)
		return r;
	struct fs_job job = { .kind = JOB_REOPEN,
			      .flags = flags,
			      .want = (mode_t)mode & ~umask & 07777 };
	return fsw_job_queue(sv, req, fd, &job, S_ISREG(st.st_mode) || S_ISDIR(st.st_mode));
}

/* An O_CREAT open beneath a root: made here when the name is not there. */
static int open_create(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		       const char *path, uint64_t flags, uint64_t mode, uint64_t resolve)
{
	char real[PATH_MAX], full[PATH_MAX + NAME_MAX + 2];
	int trailing, r;
	struct fs_job job = { .kind = JOB_CREATE, .flags = flags };
	_cleanup_close_ int dir = -1;

	r = fsw_split_parent(sv, req, dirfd, path, resolve, &dir, job.name, &trailing);
	if (r <= 0)
		return r == NOTIF_GONE ? r : NOTIF_NOT_MINE;
	if (fsw_where_is(sv, dir, real, sizeof(real)) != WHERE_ROOT)
		return NOTIF_NOT_MINE;
	if (fsw_in_granted(sv, real))
		return NOTIF_CONTINUED;
	fsw_join(full, sizeof(full), real, job.name);
	if (fsw_is_denied(sv, full, NULL))
		return -EACCES;
	r = fsw_served(sv, req);
	if (r <= 0)
		return r == NOTIF_GONE ? r : NOTIF_NOT_MINE;
	struct stat st;
	if (fstatat(dir, job.name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (flags & O_EXCL)
			return -EEXIST;
		int nofollow = (flags & O_NOFOLLOW) || (resolve & RESOLVE_NO_SYMLINKS);
		if (S_ISLNK(st.st_mode) && nofollow)
			return -ELOOP;
		_cleanup_close_ int fd =
			S_ISLNK(st.st_mode)
				? child_path_open(sv, req, dirfd, path, resolve, 0)
				: openat(dir, job.name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd == NOTIF_GONE)
			return fd;
		if (fd < 0 && S_ISLNK(st.st_mode))
			return NOTIF_NOT_MINE; /* dangling: the kernel's */
		if (fd < 0)
			return negative_errno();
		return open_existing(sv, req, fd, flags & ~(uint64_t)O_CREAT, mode);
	}
	if (errno != ENOENT)
		return negative_errno();
	if (trailing)
		return -EISDIR;
	/* At a name on the way to a denied path only a directory is made (a symlink there would
	 * lead the denied name elsewhere; a file is refused alike). */
	if (fsw_is_spine(sv, full))
		return -EACCES;
	mode_t umask;
	r = sandbox_umask(sv, req, &umask);
	if (r < 0)
		return r;
	job.want = (mode_t)mode & ~umask & 07777;
	return fsw_job_queue(sv, req, dir, &job, 1);
}

static int fs_write_open_one(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
			     const char *path, uint64_t flags, uint64_t mode, uint64_t resolve);

int fs_write_open(struct supervisor *sv, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp, const struct path_args *pa, const char *path)
{
	int r = fs_write_open_one(sv, req, pa->dirfd, path, pa->flags, pa->mode, pa->resolve);
	if (r != NOTIF_CONTINUED)
		return r;
	/* Beneath an entry Landlock grants with the write grant's rights: the kernel's open
	 * does what the supervisor's would, and, whatever the name reads by then, Landlock
	 * decides on the file it reaches (the carve keeps the denied paths out). */
	return notif_answer_continue(resp);
}

static int fs_write_open_one(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
			     const char *path, uint64_t flags, uint64_t mode, uint64_t resolve)
{
	/* O_PATH grants nothing to read or write, and every open made through it later is
	 * trapped (a dirfd, /proc/self/fd/N): the other handlers' (CONTINUE). */
	if ((flags & O_PATH) || sv->proc_nested || !fsw_may_reach_root(sv, req, dirfd, path))
		return NOTIF_NOT_MINE;
	if ((flags & O_CREAT) && (flags & O_TMPFILE) != O_TMPFILE)
		return open_create(sv, req, dirfd, path, flags, mode, resolve);
	int nofollow = (flags & O_NOFOLLOW) != 0;
	_cleanup_close_ int fd = child_path_open(sv, req, dirfd, path, resolve, nofollow);
	if (fd == NOTIF_GONE)
		return fd;
	if (fd < 0) /* not there, or not resolved here: the kernel's, which says why */
		return NOTIF_NOT_MINE;
	return open_existing(sv, req, fd, flags, mode);
}
