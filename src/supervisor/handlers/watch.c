/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/watch: inotify_add_watch(2) and fanotify_mark(2). A watch reports the names made,
 * removed and renamed in a directory, and the kernel checks only the file's permission bits
 * there: Landlock does not restrict watches, so without this a sandbox saw the names of files
 * created in a directory no grant covers. Trapped in every supervised sandbox (they are rare),
 * refused (EPERM) by the filter where there is no supervisor.
 *
 * The name is resolved as the child would (child_path_open: from its root, working directory
 * or descriptor, IN_DONT_FOLLOW / FAN_MARK_DONT_FOLLOW honoured) into an O_PATH descriptor of
 * the supervisor's; the watch is added on that descriptor ("/proc/self/fd/N"), through the
 * supervisor's copy of the child's inotify or fanotify descriptor (the same instance, so the
 * watch descriptor returned is the child's), and never on the name again: a symlink swapped in
 * after the check changes nothing.
 *
 * What the sandbox may read is what its Landlock domain lets it open, grants, fs_denied carves
 * and every internal carve included: a thread made for the question takes on the sandbox's own
 * ruleset (landlock_restrict_self acts on the calling thread only) and opens the file for
 * reading; only if that succeeds is the watch added. A device, FIFO or symlink cannot be
 * opened that way without side effects (a device's open, a FIFO's writer released), so a
 * watch on one is refused. The permission bits are checked by the kernel on the supervisor's
 * own call, with the supervisor's ids: the watch is added only for a thread with the same ids
 * and groups, and, where the supervisor could pass the bits with a capability, with that
 * capability too. Refused: EACCES, what Landlock answers for a file it does not grant.
 *
 * The work runs on a worker: the open for reading may wait (a fanotify permission event of the
 * sandbox's own), and the loop must not.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fd-util.h"
#include "handlers.h"
#include "macro.h"
#include "supervisor/args.h"
#include "supervisor/child.h"
#include "syscall-util.h"
#include "supervisor/supervisor.h"

#ifndef FAN_MARK_MNTNS
#define FAN_MARK_MNTNS 0x00000110
#endif
#define CAP_DAC_OVERRIDE_BIT 1
#define CAP_DAC_READ_SEARCH_BIT 2

struct watch_job {
	struct supervisor *sv;
	struct seccomp_notif req;
};

struct judge {
	int ruleset_fd;
	int fd; /* the supervisor's O_PATH descriptor of the file */
	int dir;
	int r;
};

/* A thread of its own under the sandbox's Landlock domain: may it open the file for reading? */
static void *judge_run(void *arg)
{
	struct judge *j = arg;
	char self[64];

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    sys_landlock_restrict_self(j->ruleset_fd, 0) < 0) {
		j->r = -EACCES; /* cannot ask: fail closed */
		return NULL;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", j->fd);
	int fd = open(self,
		      O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (j->dir ? O_DIRECTORY : 0));
	j->r = fd < 0 ? -EACCES : 0;
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* Whether the sandbox's Landlock domain lets it read @fd's file: 0 or -EACCES. */
static int sandbox_may_read(struct supervisor *sv, int fd)
{
	struct stat st;
	pthread_t t;

	if (sv->ruleset_fd <= 0 || fstat(fd, &st) < 0 ||
	    !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
		return -EACCES;
	struct judge j = { .ruleset_fd = sv->ruleset_fd, .fd = fd, .dir = S_ISDIR(st.st_mode) };
	if (pthread_create(&t, NULL, judge_run, &j) != 0)
		return -EACCES;
	pthread_join(t, NULL);
	return j.r;
}

/* The line starting with @key in a status text, up to its end (empty where absent). */
static size_t status_line(const char *buf, const char *key, const char **ret)
{
	const char *p = strstr(buf, key);
	const char *e = p ? strchr(p + 1, '\n') : NULL;

	*ret = p ? p : "";
	return p ? (e ? (size_t)(e - p) : strlen(p)) : 0;
}

static unsigned long long status_caps(const char *buf)
{
	const char *p = strstr(buf, "\nCapEff:");
	return p ? strtoull(p + 8, NULL, 16) : ~0ULL;
}

/* Whether the permission bits the kernel checks on the supervisor's call decide as they would
 * for thread @tid: the same ids and groups, and any capability that passes them held by the
 * thread too, in the same user namespace. 0 or -EACCES. */
static int same_file_rights(pid_t tid)
{
	static const char *const keys[] = { "\nUid:", "\nGid:", "\nGroups:" };
	const unsigned long long dac =
		(1ULL << CAP_DAC_OVERRIDE_BIT) | (1ULL << CAP_DAC_READ_SEARCH_BIT);
	char theirs[4096], mine[4096];

	if (proc_read(tid, "status", theirs, sizeof(theirs)) < 0 ||
	    proc_read(0, "status", mine, sizeof(mine)) < 0)
		return -EACCES;
	for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
		const char *x, *y;
		size_t n = status_line(theirs, keys[i], &x), m = status_line(mine, keys[i], &y);
		if (!n || n != m || memcmp(x, y, n) != 0)
			return -EACCES;
	}
	unsigned long long need = status_caps(mine) & dac;
	if (!need)
		return 0;
	if (proc_userns_is_ours(tid) != 1 || (status_caps(theirs) & need) != need)
		return -EACCES;
	return 0;
}

/* The file a watch names: @path (NULL: the descriptor @dirfd itself) as the child reaches it.
 * The supervisor's descriptor of it, checked readable by the sandbox, or -errno. */
static int watched_file(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
			uint64_t path_addr, int nofollow)
{
	char path[PATH_MAX];
	_cleanup_close_ int fd = -1;

	if (path_addr) {
		int r = child_read_path(sv, req, path_addr, path, sizeof(path));
		if (r < 0)
			return r;
		fd = child_path_open(sv, req, dirfd, path, 0, nofollow);
	} else if (dirfd == AT_FDCWD) {
		fd = child_path_open(sv, req, AT_FDCWD, ".", 0, 0);
	} else {
		fd = notif_get_fd(sv->listener, req, dirfd);
	}
	if (fd < 0)
		return fd;
	int r = same_file_rights((pid_t)req->pid);
	if (r == 0)
		r = sandbox_may_read(sv, fd);
	return r < 0 ? r : TAKE_FD(fd);
}

/* inotify_add_watch(fd, path, mask): the watch descriptor, or -errno. */
static long inotify_watch(struct supervisor *sv, const struct seccomp_notif *req,
			  const struct path_args *pa)
{
	uint32_t mask = (uint32_t)pa->mask;

	_cleanup_close_ int file = watched_file(sv, req, pa->dirfd, pa->path, !pa->follow);
	if (file < 0)
		return file;
	_cleanup_close_ int ino = notif_get_fd(sv->listener, req, (int)req->data.args[0]);
	if (ino < 0)
		return ino;
	char self[64];
	snprintf(self, sizeof(self), "/proc/self/fd/%d", file);
	/* The descriptor is the file (a symlink is never one: refused above): its link is
	 * followed, whatever IN_DONT_FOLLOW said of the child's name. */
	int wd = inotify_add_watch(ino, self, mask & ~(uint32_t)IN_DONT_FOLLOW);
	return wd < 0 ? negative_errno() : wd;
}

/* fanotify_mark(fd, flags, mask, dirfd, path): 0 or -errno. */
static long fanotify_watch(struct supervisor *sv, const struct seccomp_notif *req,
			   const struct path_args *pa)
{
	unsigned flags = (unsigned)pa->flags;

	/* A mark on a mount, a filesystem or a mount namespace reports what happens far beyond
	 * the file named: refused, as the kernel refuses it to an unprivileged caller. */
	if (flags & FAN_MARK_MNTNS)
		return -EPERM;
	_cleanup_close_ int file = watched_file(sv, req, pa->dirfd, pa->path, !pa->follow);
	if (file < 0)
		return file;
	_cleanup_close_ int fan = notif_get_fd(sv->listener, req, (int)req->data.args[0]);
	if (fan < 0)
		return fan;
	char self[64];
	snprintf(self, sizeof(self), "/proc/self/fd/%d", file);
	unsigned mark = flags & ~(unsigned)FAN_MARK_DONT_FOLLOW;
	if (fanotify_mark(fan, mark, pa->mask, AT_FDCWD, self) < 0)
		return negative_errno();
	return 0;
}

static void watch_worker(int listener, int sock, void *arg)
{
	struct watch_job *job = arg;
	struct seccomp_notif_resp resp = { .id = job->req.id };

	(void)sock;
	if (listener >= 0) {
		struct path_args pa;
		/* No row (fanotify_mark where its 64-bit mask takes two registers): refused. */
		long r = path_args_decode(&job->req.data, &pa) < 0 ? -EPERM
			 : pa.call->nr == SYS_inotify_add_watch
				 ? inotify_watch(job->sv, &job->req, &pa)
				 : fanotify_watch(job->sv, &job->req, &pa);
		if (r != NOTIF_GONE) {
			if (r < 0)
				notif_answer_errno(&resp, (int)r);
			else
				notif_answer_value(&resp, r);
			(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp); /* ENOENT: gone */
		}
	}
	free(job);
}

static int watch_defer(struct supervisor *sv, const struct seccomp_notif *req)
{
	struct watch_job *job = malloc(sizeof(*job));

	if (!job)
		return -ENOMEM;
	*job = (struct watch_job){ .sv = sv, .req = *req };
	int r = supervisor_run_worker(sv, -1, watch_worker, job);
	if (r < 0) {
		free(job);
		return r;
	}
	return NOTIF_DEFERRED;
}

int handle_inotify_add_watch(struct supervisor *sv, const struct seccomp_notif *req,
			     struct seccomp_notif_resp *resp)
{
	(void)resp;
	return watch_defer(sv, req);
}

int handle_fanotify_mark(struct supervisor *sv, const struct seccomp_notif *req,
			 struct seccomp_notif_resp *resp)
{
	/* Removing marks (FAN_MARK_REMOVE, FAN_MARK_FLUSH) adds nothing to what the group sees.
	 * CONTINUE: whatever the name reads by then, the kernel only takes marks away (it refuses
	 * a flag set that also adds one: FAN_MARK_ADD with either is EINVAL). */
	struct path_args pa;
	int r = path_args_decode(&req->data, &pa);
	if (r < 0)
		return -EPERM; /* no row: see watch_worker */
	unsigned flags = (unsigned)pa.flags;
	if ((flags & (FAN_MARK_REMOVE | FAN_MARK_FLUSH)) && !(flags & FAN_MARK_ADD)) {
		return notif_answer_continue(resp);
	}
	return watch_defer(sv, req);
}
