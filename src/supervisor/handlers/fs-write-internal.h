/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/fs-write-internal: what the two halves of the writes beneath a writable grant that
 * holds a denied path share: the lookups of fs-write.c (where a name lies, whether it is denied
 * or on the way to a denied path, whether the caller is served) and the worker jobs of
 * fs-write-open.c (an open or a truncate that may wait).
 */
#pragma once

#include <limits.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

struct supervisor;

/* Where a directory (or file) lies. */
enum where {
	WHERE_OTHER,	/* outside every writable grant */
	WHERE_WRITABLE, /* in a writable grant without a denied path */
	WHERE_ROOT,	/* beneath a root: the supervisor's */
};

/* fs-write.c: where @fd lies (its real path in @real); whether @real is denied (or @st, may be
 * NULL, a denied file), beneath a granted entry, a directory on the way to a denied path;
 * whether @path may lie beneath a root; whether the trapped thread is served (1, 0,
 * NOTIF_GONE); the directory and last component of @path (1, 0: the kernel's, -errno); a real
 * path joined; an answer of 0 or @r. */
enum where fsw_where_is(struct supervisor *sv, int fd, char *real, size_t size);
int fsw_is_denied(struct supervisor *sv, const char *real, const struct stat *st);
int fsw_in_granted(struct supervisor *sv, const char *real);
int fsw_is_spine(struct supervisor *sv, const char *real);
int fsw_may_reach_root(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		       const char *path);
int fsw_served(struct supervisor *sv, const struct seccomp_notif *req);
int fsw_split_parent(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		     const char *path, uint64_t resolve, int *ret_fd, char name[NAME_MAX + 1],
		     int *trailing);
void fsw_join(char *out, size_t size, const char *dir, const char *name);
void fsw_answer_zero_or(struct seccomp_notif_resp *resp, int r);

/* An open or a truncate can wait as long as another process wants (a lease being broken, a
 * fanotify permission event, a FIFO without its other end): made on a worker, never on the
 * loop. What was decided stays decided: the worker acts on the descriptor the loop checked (the
 * file itself, or the directory a new name is made in). */
enum job_kind {
	JOB_REOPEN,   /* open the file itself (O_PATH descriptor) again with the flags */
	JOB_CREATE,   /* make the name in the directory (O_EXCL), or open it if made meanwhile */
	JOB_TRUNCATE, /* truncate the file itself (O_PATH descriptor) */
};

struct fs_job {
	struct seccomp_notif req;
	enum job_kind kind;
	uint64_t flags;
	mode_t want; /* the mode of what is made, the child's umask applied */
	off_t length;
	char name[NAME_MAX + 1];
};

/* fs-write-open.c: run @job on descriptor @fd, on the loop when it cannot wait (@plain: a
 * regular file or a directory), else on a worker: 0, NOTIF_DEFERRED, -errno. */
int fsw_job_queue(struct supervisor *sv, const struct seccomp_notif *req, int fd,
		  const struct fs_job *job, int plain);
