/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/umask: the umask of the task a file is made for, without reading /proc at every
 * create. Where the supervisor makes files on the child's behalf (a workdir; a writable grant
 * holding a denied path), umask() is trapped: the kernel sets the mask (CONTINUE), and the
 * supervisor forgets every mask it knew (the caller may share its mask with other tasks:
 * CLONE_FS). A mask read from /proc/<tid>/status is then kept for that task, when it is alone in
 * its process, while a pidfd of it says it lives (so the tid still names that task: a thread's
 * exec would give it the leader's), except while a umask() is on its way: from
 * its notification until the same task's next one (which proves the call returned), what /proc
 * shows may be about to change, so the mask is read each time and kept by nobody.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd-util.h"
#include "handlers.h"
#include "macro.h"
#include "supervisor/child.h"
#include "supervisor/supervisor.h"
#include "syscall-util.h"
#include "umask.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* 6.9 */
#endif

static void forget_all(struct umask_cache *u)
{
	for (size_t i = 0; i < u->n; i++)
		safe_close(u->v[i].pidfd);
	u->n = 0;
}

int handle_umask(struct supervisor *sv, const struct seccomp_notif *req,
		 struct seccomp_notif_resp *resp)
{
	struct umask_cache *u = &sv->umasks;

	forget_all(u);
	if (u->n_flying < ELEMENTSOF(u->flying))
		u->flying[u->n_flying++] = (pid_t)req->pid;
	else
		u->lost = 1; /* too many at once to follow: read every mask from now on */
	/* CONTINUE: umask sets the caller's own file-creation mask, which no policy restricts;
	 * the kernel makes the call, the supervisor only forgets what it knew of the mask. */
	return notif_answer_continue(resp);
}

void umask_seen(struct supervisor *sv, pid_t tid)
{
	struct umask_cache *u = &sv->umasks;

	for (size_t i = 0; i < u->n_flying; i++)
		if (u->flying[i] == tid) /* its umask() returned: this is a new call */
			u->flying[i--] = u->flying[--u->n_flying];
}

/* Whether @pidfd's task has exited. */
static int gone(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };
	return poll(&p, 1, 0) != 0;
}

int sandbox_umask(struct supervisor *sv, const struct seccomp_notif *req, mode_t *ret)
{
	struct umask_cache *u = &sv->umasks;
	pid_t tid = (pid_t)req->pid;

	if (!sv->umask_traced || u->n_flying || u->lost)
		return proc_umask(tid, ret, NULL); /* not followed, or about to change */
	for (size_t i = 0; i < u->n; i++) {
		if (u->v[i].tid != tid)
			continue;
		if (!gone(u->v[i].pidfd)) {
			*ret = u->v[i].mask;
			return 0;
		}
		safe_close(u->v[i].pidfd); /* the tid may name another task now */
		u->v[i] = u->v[--u->n];
		break;
	}
	long threads;
	int r = proc_umask(tid, ret, &threads);
	if (r < 0 || threads != 1)
		/* Kept for a task alone in its process only: a thread's exec moves it to the
		 * leader's tid (de_thread), whose pidfd then names a task with the thread's own
		 * mask (a CLONE_THREAD thread need not share the umask: CLONE_FS). A thread made
		 * later starts with the mask kept, and changes it only by a trapped umask(). */
		return r;
	/* A thread's own pidfd (6.9+), else the process's, which names a thread group leader
	 * only (a tid that is no leader is then not kept). */
	int pidfd = sys_pidfd_open(tid, PIDFD_THREAD);
	if (pidfd < 0 && errno == EINVAL)
		pidfd = sys_pidfd_open(tid, 0);
	if (pidfd < 0)
		return 0;
	/* The mask and the pidfd are the trapped task's only if the tid still named it when the
	 * pidfd was taken: its notification, still pending after, shows it was alive. */
	if (!notif_id_valid(sv->listener, req->id)) {
		safe_close(pidfd);
		return 0;
	}
	if (u->n == ELEMENTSOF(u->v)) {
		safe_close(u->v[0].pidfd);
		u->v[0] = u->v[--u->n];
	}
	u->v[u->n++] = (struct umask_entry){ .tid = tid, .pidfd = pidfd, .mask = *ret };
	return 0;
}

void umask_cache_done(struct supervisor *sv)
{
	forget_all(&sv->umasks);
	sv->umasks.n_flying = 0;
	sv->umasks.lost = 0;
}
