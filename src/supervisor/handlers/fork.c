/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/fork: max_processes, the most processes the sandbox may have at once (threads are
 * not processes). fork, vfork and a clone that makes a process (no CLONE_THREAD, no namespace
 * flag: those are refused by the filter) are trapped; the supervisor keeps the sandbox's live
 * processes and refuses, with EAGAIN as the kernel's RLIMIT_NPROC does, a fork that would make
 * one too many.
 *
 * Every process of the sandbox but the first is made by a trapped fork, so the set is kept
 * without scanning /proc: each process is held by a pidfd in an epoll set (it leaves the set
 * when it exits), and each allowed fork is "pending" until its child shows up in the forking
 * thread's /proc/<tid>/task/<tid>/children, where it is taken in. A pending fork counts as a
 * process. It is settled when its child is found, when the same thread forks again (its fork
 * returned), when the thread is gone, or 10 ms after it was allowed while the thread is not
 * stopped (a CONTINUEd fork completes at once; a child reaped by then is gone anyway).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "fd-util.h"
#include "handlers.h"
#include "macro.h"
#include "supervisor/notif.h"
#include "supervisor/supervisor.h"
#include "syscall-util.h"

#define PENDING_SETTLE_NS (10 * 1000000LL)

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int known(const struct proc_limit *pl, pid_t pid)
{
	for (size_t i = 0; i < pl->n; i++)
		if (pl->v[i].pid == pid)
			return 1;
	return 0;
}

/* Take process @pid in (a pidfd in the epoll set). A process already gone is not. */
static int take_in(struct proc_limit *pl, pid_t pid)
{
	if (known(pl, pid))
		return 0;
	int fd = sys_pidfd_open(pid, 0);
	if (fd < 0)
		return errno == ESRCH ? 0 : negative_errno();
	if (pl->n == pl->cap) {
		size_t cap = pl->cap ? 2 * pl->cap : 16;
		struct proc_entry *v = realloc(pl->v, cap * sizeof(*v));
		if (!v) {
			close(fd);
			return -ENOMEM;
		}
		pl->v = v;
		pl->cap = cap;
	}
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
	if (epoll_ctl(pl->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int r = negative_errno();
		close(fd);
		return r;
	}
	pl->v[pl->n++] = (struct proc_entry){ .pid = pid, .pidfd = fd };
	return 0;
}

/* Drop the processes that exited. */
static void reap(struct proc_limit *pl)
{
	struct epoll_event evs[64];
	int n;

	while ((n = epoll_wait(pl->epfd, evs, ELEMENTSOF(evs), 0)) > 0)
		for (int i = 0; i < n; i++)
			for (size_t j = 0; j < pl->n; j++)
				if (pl->v[j].pidfd == evs[i].data.fd) {
					(void)epoll_ctl(pl->epfd, EPOLL_CTL_DEL, pl->v[j].pidfd,
							NULL);
					close(pl->v[j].pidfd);
					pl->v[j] = pl->v[--pl->n];
					break;
				}
}

/* The state letter of thread @tid ('T', 't': stopped), or 0 if it is gone. */
static char thread_state(pid_t tid)
{
	char buf[512];

	if (proc_read(tid, "stat", buf, sizeof(buf)) < 0)
		return 0;
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* Take in the children of thread @tid we do not know: 1 if there was one, 0 if none, or
 * -errno. */
static int take_children(struct proc_limit *pl, pid_t tid)
{
	char path[64], buf[4096];
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)tid, (int)tid);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t k = read(fd, buf, sizeof(buf) - 1);
	if (k <= 0)
		return 0;
	buf[k] = '\0';
	for (char *p = buf, *end; *p; p = end) {
		long pid = strtol(p, &end, 10);
		if (end == p)
			break;
		if (pid > 0 && !known(pl, (pid_t)pid)) {
			int r = take_in(pl, (pid_t)pid);
			if (r < 0)
				return r;
			found = 1;
		}
	}
	return found;
}

/* Settle what can be settled; @caller forks again, so its own pending fork has returned. */
static int refresh(struct proc_limit *pl, pid_t caller)
{
	int64_t now = now_ns();
	size_t k = 0;

	reap(pl);
	for (size_t i = 0; i < pl->n_pending; i++) {
		struct pending *p = &pl->pending[i];
		int r = take_children(pl, p->tid);
		if (r < 0)
			return r;
		char st = r || p->tid == caller ? 0 : thread_state(p->tid);
		int settled = r > 0 || p->tid == caller || st == 0 ||
			      (st != 'T' && st != 't' && now - p->since > PENDING_SETTLE_NS);
		if (!settled)
			pl->pending[k++] = *p;
	}
	pl->n_pending = k;
	reap(pl); /* a child found may have exited already */
	return 0;
}

int proc_limit_init(struct proc_limit *pl, unsigned max)
{
	*pl = (struct proc_limit){ .max = max, .epfd = -1 };
	if (!max)
		return 0;
	pl->epfd = epoll_create1(EPOLL_CLOEXEC);
	return pl->epfd < 0 ? negative_errno() : 0;
}

void proc_limit_done(struct proc_limit *pl)
{
	for (size_t i = 0; i < pl->n; i++)
		close(pl->v[i].pidfd);
	free(pl->v);
	free(pl->pending);
	safe_close(pl->epfd);
	*pl = (struct proc_limit){ .epfd = -1 };
}

/* fork, vfork, clone making a process. CONTINUE when allowed: the decision is on the syscall
 * number and the flags register (the filter sent only process-making clones here), which the
 * kernel uses unchanged; the pointer arguments (tid slots, the stack) decide nothing. */
int handle_fork(struct supervisor *sv, const struct seccomp_notif *req,
		struct seccomp_notif_resp *resp)
{
	struct proc_limit *pl = &sv->procs;
	pid_t tgid;

	int r = refresh(pl, (pid_t)req->pid);
	if (r < 0)
		return r;
	/* The caller is the sandbox's (the first process, or one found meanwhile). */
	r = proc_status_field((pid_t)req->pid, "Tgid", &tgid);
	if (r == -ESRCH)
		return NOTIF_GONE;
	if (r == 0)
		r = take_in(pl, tgid);
	if (r < 0)
		return r;
	if (pl->n + pl->n_pending + 1 > pl->max)
		return -EAGAIN; /* as the kernel's RLIMIT_NPROC */
	if (pl->n_pending == pl->cap_pending) {
		size_t cap = pl->cap_pending ? 2 * pl->cap_pending : 16;
		struct pending *v = realloc(pl->pending, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		pl->pending = v;
		pl->cap_pending = cap;
	}
	pl->pending[pl->n_pending++] =
		(struct pending){ .tid = (pid_t)req->pid, .since = now_ns() };
	notif_answer_continue(resp);
	return 0;
}
