/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * workers: the pool of threads that runs the supervisor's blocking operations (workers.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fd-util.h"
#include "macro.h"
#include "supervisor.h"
#include "workers.h"

void workers_init(struct supervisor_workers *w)
{
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->work, NULL);
	pthread_cond_init(&w->idle_cond, NULL);
	w->listener = -1;
	for (int i = 0; i < SUPERVISOR_MAX_WORKERS; i++)
		w->socks[i] = -1;
}

void workers_done(struct supervisor_workers *w)
{
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->work);
	pthread_cond_destroy(&w->idle_cond);
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
 * job it runs, so that workers_stop() can cut that job short. */
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

/* Queue a job on @w; @listener is the loop's, copied for the pool on its first job. */
static int run_worker(struct supervisor_workers *w, int listener, int sock,
		      void (*fn)(int listener, int sock, void *arg), void *arg, int now)
{
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
	if (r == 0 && w->listener < 0 && (w->listener = fcntl(listener, F_DUPFD_CLOEXEC, 3)) < 0)
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
	return run_worker(&sv->workers, sv->listener, sock, fn, arg, 0);
}

int supervisor_run_worker_now(struct supervisor *sv, int sock,
			      void (*fn)(int listener, int sock, void *arg), void *arg)
{
	return run_worker(&sv->workers, sv->listener, sock, fn, arg, 1);
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

void workers_stop(struct supervisor_workers *w)
{
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
}
