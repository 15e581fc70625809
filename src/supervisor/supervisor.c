/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * supervisor: receive, dispatch, answer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

#include "dispatch.h"
#include "fd-util.h"
#include "macro.h"
#include "notif.h"
#include "supervisor.h"
#include "syscall-util.h"

int supervisor_prepare(struct supervisor *sv, const char *name, struct groups *groups,
		       const struct net_plan *net)
{
	*sv = (struct supervisor){
		.listener = -1, .name = name, .groups = groups, .net = net, .prepared = 1
	};
	pthread_mutex_init(&sv->workers.lock, NULL);
	pthread_cond_init(&sv->workers.idle, NULL);
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
	sv->listener = listener;
	/* 6.6+: wake this thread synchronously on a notification (the child's CPU switches
	 * straight to us), which shortens every round trip. Optional. */
	uint64_t flags = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
	(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, flags);
}

int supervisor_handle(struct supervisor *sv)
{
	struct seccomp_notif *req = sv->req;
	struct seccomp_notif_resp *resp = sv->resp;

	memset(req, 0, MAX(sv->sizes.seccomp_notif, sizeof(*req)));
	if (ioctl(sv->listener, SECCOMP_IOCTL_NOTIF_RECV, req) < 0) {
		/* ENOENT: the task died (or was signalled) before we received it. */
		if (errno == EINTR || errno == ENOENT)
			return 0;
		return negative_errno();
	}

	memset(resp, 0, MAX(sv->sizes.seccomp_notif_resp, sizeof(*resp)));
	resp->id = req->id;
	notif_handler_t h = dispatch_lookup(req->data.nr);
	int r = h ? h(sv, req, resp) : -ENOSYS;
	if (r == NOTIF_GONE || r == NOTIF_DEFERRED)
		return 0; /* the task is gone, or a worker answers */
	if (r < 0)
		notif_answer_errno(resp, r); /* fail closed */

	if (ioctl(sv->listener, SECCOMP_IOCTL_NOTIF_SEND, resp) < 0 && errno != ENOENT)
		return negative_errno();
	sv->answered++;
	return 0;
}

struct worker {
	struct supervisor_workers *w;
	int slot;
	int listener; /* our own copy: the loop's may be closed before we answer */
	void (*fn)(int listener, void *arg);
	void *arg;
};

static void *worker_main(void *p)
{
	struct worker *wk = p;
	struct supervisor_workers *w = wk->w;

	wk->fn(wk->listener, wk->arg);
	safe_close(wk->listener);
	pthread_mutex_lock(&w->lock);
	safe_close(w->socks[wk->slot]);
	w->socks[wk->slot] = -1;
	if (--w->n == 0)
		pthread_cond_broadcast(&w->idle);
	pthread_mutex_unlock(&w->lock);
	free(wk);
	return NULL;
}

int supervisor_run_worker(struct supervisor *sv, int sock, void (*fn)(int listener, void *arg),
			  void *arg)
{
	struct supervisor_workers *w = &sv->workers;
	struct worker *wk = calloc(1, sizeof(*wk));
	pthread_attr_t attr;
	pthread_t t;
	int slot = -1;

	if (!wk)
		return -ENOMEM;
	wk->listener = fcntl(sv->listener, F_DUPFD_CLOEXEC, 3);
	if (wk->listener < 0) {
		free(wk);
		return negative_errno();
	}
	pthread_mutex_lock(&w->lock);
	for (int i = 0; i < SUPERVISOR_MAX_WORKERS && slot < 0; i++)
		if (w->socks[i] < 0)
			slot = i;
	if (slot >= 0) {
		w->socks[slot] = sock;
		w->n++;
	}
	pthread_mutex_unlock(&w->lock);
	if (slot < 0) {
		safe_close(wk->listener);
		free(wk);
		return -EAGAIN;
	}
	*wk = (struct worker){ w, slot, wk->listener, fn, arg };
	/* Every signal blocked in the worker (it inherits the mask it is created with), so none
	 * interrupts its blocking call with EINTR the child never asked for. A small stack: it
	 * makes one call. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	int r = -pthread_create(&t, &attr, worker_main, wk);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		pthread_mutex_lock(&w->lock);
		w->socks[slot] = -1; /* the caller still owns @sock */
		if (--w->n == 0)
			pthread_cond_broadcast(&w->idle);
		pthread_mutex_unlock(&w->lock);
		safe_close(wk->listener);
		free(wk);
	}
	return r;
}

void supervisor_done(struct supervisor *sv)
{
	struct supervisor_workers *w = &sv->workers;

	if (!sv->prepared) /* never prepared (no supervisor, or a spawn that failed first) */
		return;
	/* Workers blocked in a connect for a sandbox that has ended: cut them short, again every
	 * 50 ms, for one that had not entered its connect yet when the first shutdown came. */
	pthread_mutex_lock(&w->lock);
	while (w->n > 0) {
		for (int i = 0; i < SUPERVISOR_MAX_WORKERS; i++)
			if (w->socks[i] >= 0)
				(void)shutdown(w->socks[i], SHUT_RDWR);
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 50 * 1000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		(void)pthread_cond_timedwait(&w->idle, &w->lock, &until);
	}
	pthread_mutex_unlock(&w->lock);
	sv->listener = safe_close(sv->listener);
	free(sv->req);
	free(sv->resp);
	sv->req = NULL;
	sv->resp = NULL;
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->idle);
	sv->prepared = 0;
}
