/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * supervisor: receive, dispatch, answer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

#include "dispatch.h"
#include "handlers/handlers.h"
#include "fd-util.h"
#include "macro.h"
#include "notif.h"
#include "plan/plan.h"
#include "strv.h"
#include "supervisor.h"
#include "syscall-util.h"

int supervisor_prepare(struct supervisor *sv, const char *name, struct groups *groups,
		       const struct net_plan *net)
{
	*sv = (struct supervisor){
		.listener = -1, .name = name, .groups = groups, .net = net, .prepared = 1
	};
	pthread_mutex_init(&sv->workers.lock, NULL);
	pthread_mutex_init(&sv->netlink_lock, NULL);
	port_map_init(&sv->ports);
	struct stat proc_st; /* what /proc is, for handlers/open.c and getdents.c, which serve it */
	if (net && net->proc_mediated && stat("/proc", &proc_st) == 0) {
		sv->proc_dev = proc_st.st_dev;
		sv->proc_ino = proc_st.st_ino;
	}
	pthread_cond_init(&sv->workers.work, NULL);
	pthread_cond_init(&sv->workers.idle_cond, NULL);
	sv->workers.listener = -1;
	for (int i = 0; i < SUPERVISOR_MAX_WORKERS; i++)
		sv->workers.socks[i] = -1;

	if (sys_seccomp(SECCOMP_GET_NOTIF_SIZES, 0, &sv->sizes) < 0)
		return negative_errno();
	/* The kernel's structs may be larger than ours: allocate what it says. */
	sv->req = calloc(1, MAX(sv->sizes.seccomp_notif, sizeof(struct seccomp_notif)));
	sv->resp = calloc(1, MAX(sv->sizes.seccomp_notif_resp, sizeof(struct seccomp_notif_resp)));
	if (!sv->req || !sv->resp) {
		supervisor_done(sv);
		return -ENOMEM;
	}
	return 0;
}

void supervisor_attach(struct supervisor *sv, int listener)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	sv->started_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	sv->listener = listener;
	/* 6.6+: wake this thread synchronously on a notification (the child's CPU switches
	 * straight to us), which shortens every round trip. Optional. */
	uint64_t flags = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
	(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, flags);
}

int supervisor_handle(struct supervisor *sv)
{
	struct seccomp_notif *req = sv->req;

	memset(req, 0, MAX(sv->sizes.seccomp_notif, sizeof(*req)));
	if (ioctl(sv->listener, SECCOMP_IOCTL_NOTIF_RECV, req) < 0) {
		/* ENOENT: the task died (or was signalled) before we received it. */
		if (errno == EINTR || errno == ENOENT)
			return 0;
		return negative_errno();
	}
	return supervisor_answer(sv, req);
}

/* The handlers of route @rt in order: the workdir's first, where the sandbox has one, then the
 * plain one where it passed (NOTIF_NOT_MINE). */
static int route_answer(struct supervisor *sv, const struct route *rt,
			const struct seccomp_notif *req, struct seccomp_notif_resp *resp)
{
	int r = NOTIF_NOT_MINE;

	if (sv->cow && rt->workdir) {
		/* A large copy-up on its way: a call that may change the workdir's tree waits
		 * for it (its handler answers NOTIF_HOLD once it finds a name there:
		 * cow_resolve_arg, res_of_real). */
		cow_wait_arm(sv, !dispatch_keeps_tree(rt, req));
		r = rt->workdir(sv, req, resp);
		cow_wait_arm(sv, 0);
		if (r == NOTIF_HOLD)
			r = cow_wait_hold(sv, req);
	}
	if (r == NOTIF_NOT_MINE && rt->handler)
		r = rt->handler(sv, req, resp);
	return r;
}

int supervisor_answer(struct supervisor *sv, const struct seccomp_notif *req)
{
	struct seccomp_notif_resp *resp = sv->resp;

	if (sv->umasks.n_flying)
		umask_seen(sv, (pid_t)req->pid);

	memset(resp, 0, MAX(sv->sizes.seccomp_notif_resp, sizeof(*resp)));
	resp->id = req->id;
	const struct route *rt = dispatch_lookup(req->data.nr);
	int r = rt ? route_answer(sv, rt, req, resp) : NOTIF_NOT_MINE;
	switch (r) {
	case NOTIF_ANSWERED:
	case NOTIF_CONTINUED:
		break;
	case NOTIF_GONE:
	case NOTIF_DEFERRED:
		return 0; /* the task is gone, or a worker answers */
	case NOTIF_NOT_MINE:
	case NOTIF_HOLD:
		notif_answer_errno(resp, -ENOSYS); /* no handler took it: fail closed */
		break;
	default: /* -errno */
		if (r < 0)
			notif_answer_errno(resp, r); /* fail closed */
		break;
	}

	if (ioctl(sv->listener, SECCOMP_IOCTL_NOTIF_SEND, resp) < 0 && errno != ENOENT)
		return negative_errno();
	sv->answered++;
	return 0;
}

/* A queued blocking operation (supervisor_run_worker). */
struct job {
	struct job *next;
	int sock;
	void (*fn)(int listener, int sock, void *arg);
	void *arg;
};

struct worker_start {
	struct supervisor_workers *w;
	int slot;
};

/* A pool thread: takes jobs until the pool stops. Its slot in w->socks holds the socket of the
 * job it runs, so that supervisor_done() can cut that job short. */
static void *worker_main(void *p)
{
	struct worker_start *ws = p;
	struct supervisor_workers *w = ws->w;
	int slot = ws->slot;

	free(ws);
	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->queue && !w->stopping)
			pthread_cond_wait(&w->work, &w->lock);
		struct job *job = w->queue;
		if (!job)
			break; /* stopping, nothing left */
		w->queue = job->next;
		if (!w->queue)
			w->queue_tail = NULL;
		w->pending--;
		w->socks[slot] = job->sock;
		w->idle--;
		int stopping = w->stopping;
		pthread_mutex_unlock(&w->lock);
		/* A job queued for a sandbox that ended is dropped: run with no listener, it
		 * only releases what it holds. */
		job->fn(stopping ? -1 : w->listener, job->sock, job->arg);
		pthread_mutex_lock(&w->lock);
		w->socks[slot] = -1;
		w->idle++;
		safe_close(job->sock);
		free(job);
	}
	w->idle--;
	if (--w->n == 0)
		pthread_cond_broadcast(&w->idle_cond);
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* Start one more pool thread (called with w->lock held). */
static int worker_spawn(struct supervisor_workers *w)
{
	struct worker_start *ws = malloc(sizeof(*ws));
	pthread_attr_t attr;
	pthread_t t;
	int slot = -1;

	for (int i = 0; i < SUPERVISOR_MAX_WORKERS && slot < 0; i++)
		if (!w->slot_used[i])
			slot = i;
	if (!ws || slot < 0) {
		free(ws);
		return -EAGAIN;
	}
	*ws = (struct worker_start){ w, slot };
	/* Every signal blocked in the worker (it inherits the mask it is created with), so none
	 * interrupts its blocking call with EINTR the child never asked for. A small stack: it
	 * makes one call at a time. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	int r = -pthread_create(&t, &attr, worker_main, ws);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		free(ws);
		return r;
	}
	w->slot_used[slot] = 1;
	w->n++;
	w->idle++;
	return 0;
}

static int run_worker(struct supervisor *sv, int sock,
		      void (*fn)(int listener, int sock, void *arg), void *arg, int now)
{
	struct supervisor_workers *w = &sv->workers;
	struct job *job = malloc(sizeof(*job));
	int r = 0;

	if (!job)
		return -ENOMEM;
	*job = (struct job){ .sock = sock, .fn = fn, .arg = arg };
	pthread_mutex_lock(&w->lock);
	if (w->stopping)
		r = -ECANCELED; /* the sandbox has ended */
	/* The workers answer on a copy of the listener of their own: the loop's may be closed
	 * first when the sandbox ends. */
	if (r == 0 && w->listener < 0 &&
	    (w->listener = fcntl(sv->listener, F_DUPFD_CLOEXEC, 3)) < 0)
		r = negative_errno();
	/* Each queued job holds a descriptor of the host process: a bounded queue. */
	if (r == 0 && w->pending >= SUPERVISOR_MAX_QUEUED)
		r = -EAGAIN;
	/* No thread free, and no more to start: the job would wait behind the others. */
	if (r == 0 && now && w->idle <= w->pending && w->n >= SUPERVISOR_MAX_WORKERS)
		r = -EBUSY;
	/* A thread for each job that finds none idle (idle threads already woken for queued
	 * jobs do not count), up to the maximum; beyond, jobs wait. */
	if (r == 0 && w->idle <= w->pending && w->n < SUPERVISOR_MAX_WORKERS) {
		int k = worker_spawn(w);
		if (k < 0 && w->n == 0)
			r = k; /* no thread at all to run it */
	}
	if (r == 0) {
		if (w->queue_tail)
			w->queue_tail->next = job;
		else
			w->queue = job;
		w->queue_tail = job;
		w->pending++;
		pthread_cond_signal(&w->work);
	}
	pthread_mutex_unlock(&w->lock);
	if (r < 0)
		free(job); /* the caller still owns @sock and @arg */
	return r;
}

int supervisor_run_worker(struct supervisor *sv, int sock,
			  void (*fn)(int listener, int sock, void *arg), void *arg)
{
	return run_worker(sv, sock, fn, arg, 0);
}

int supervisor_run_worker_now(struct supervisor *sv, int sock,
			      void (*fn)(int listener, int sock, void *arg), void *arg)
{
	return run_worker(sv, sock, fn, arg, 1);
}

/* Cut short a worker blocked on @fd: a socket is shut down (a connect, a send); a FIFO (an open
 * made for the sandbox waiting for its other end: handlers/fs-write.c) is opened here for
 * reading and writing, which is both ends, and closed again. */
static void cut_short(int fd)
{
	struct stat st;
	char self[64];

	/* Not a socket (ENOTSOCK; EBADF for the O_PATH descriptor of a file). */
	if (shutdown(fd, SHUT_RDWR) == 0 || fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode))
		return;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	int both = open(self, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (both >= 0)
		close(both);
}

void supervisor_stop_workers(struct supervisor *sv)
{
	struct supervisor_workers *w = &sv->workers;

	if (!sv->prepared) { /* never prepared (no supervisor, or a spawn that failed first) */
		cow_wait_stop(sv);
		return;
	}
	/* Stop the pool: queued jobs are dropped, and a worker blocked in a connect for a sandbox
	 * that has ended is cut short, again every 50 ms, for one that had not entered its
	 * connect yet when the first shutdown came. */
	pthread_mutex_lock(&w->lock);
	w->stopping = 1;
	atomic_store(&w->cancel, 1);
	/* The queued jobs are released here, not left to workers that may all be busy: what
	 * they hold (descriptors passed with SCM_RIGHTS, say a listener a running job waits on)
	 * goes now. */
	while (w->queue) {
		struct job *job = w->queue;
		w->queue = job->next;
		w->pending--;
		pthread_mutex_unlock(&w->lock);
		job->fn(-1, job->sock, job->arg);
		safe_close(job->sock);
		free(job);
		pthread_mutex_lock(&w->lock);
	}
	w->queue_tail = NULL;
	pthread_cond_broadcast(&w->work);
	while (w->n > 0) {
		for (int i = 0; i < SUPERVISOR_MAX_WORKERS; i++)
			if (w->socks[i] >= 0)
				cut_short(w->socks[i]);
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 50 * 1000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		(void)pthread_cond_timedwait(&w->idle_cond, &w->lock, &until);
	}
	pthread_mutex_unlock(&w->lock);
	w->listener = safe_close(w->listener);
	cow_wait_stop(sv);
}

void supervisor_done(struct supervisor *sv)
{
	struct supervisor_workers *w = &sv->workers;

	if (!sv->prepared)
		return;
	supervisor_stop_workers(sv);
	sv->listener = safe_close(sv->listener);
	free(sv->req);
	free(sv->resp);
	sv->req = NULL;
	sv->resp = NULL;
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->work);
	pthread_cond_destroy(&w->idle_cond);
	port_map_done(&sv->ports);
	umask_cache_done(sv);
	fs_meta_done(sv);
	proc_limit_done(&sv->procs);
	free(sv->mem_pids.v);
	sv->mem_pids = (struct mem_pids){ 0 };
	sv->fs_granted = strv_free(sv->fs_granted);
	sv->prepared = 0;
}
