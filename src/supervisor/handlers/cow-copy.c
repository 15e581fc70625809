/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/cow-copy: the copy-up of a large workdir file, made on a worker so that the
 * supervisor loop goes on answering (DESIGN.md: never block the loop). The engine is the
 * loop's alone (src/cow), so a copy is begun there (cow_copy_up_start: touched, parents made,
 * charged, both files open), its bytes copied on a worker (cow_copy_run), and put in place
 * back on the loop (cow_copy_land), which the worker wakes through an eventfd the event loop
 * watches (sandbox.c). Then the call that needed the copy is asked again from the start: it
 * now finds the file in the branch.
 *
 * Meanwhile, every call that may change the workdir's tree waits, in order, from the moment
 * its handler finds a name (or descriptor) of it there (NOTIF_HOLD, before anything is changed),
 * and is asked again once the copy has landed: nothing can rename, remove or replace what the
 * copy is for, nor begin a second copy. Calls that only read (open for reading, the stat
 * family, access, readlink, getdents, getcwd) go on: until the copy lands, the file reads as the
 * workdir's, unchanged, which is what it is until the open that asked for the copy returns.
 * Calls elsewhere go on. A copy no worker can take at once is made on the loop, as a small one.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cow/cow.h"
#include "fd-util.h"
#include "handlers.h"
#include "macro.h"
#include "supervisor/notif.h"
#include "supervisor/supervisor.h"

struct cow_wait {
	int efd;		     /* the worker's copy is done (the event loop watches it) */
	int busy;		     /* a copy is on a worker */
	atomic_int result;	     /* cow_copy_run's, set before efd is written */
	struct cow_copy cp;	     /* the copy on its way */
	struct seccomp_notif first;  /* the call that needs it */
	struct seccomp_notif *queue; /* the calls waiting for it, in order */
	size_t head, n, cap;
	const atomic_int *cancel;  /* the worker pool's: set when the sandbox ends */
	int armed;		   /* the call being handled may change the tree */
	uint64_t landed_id;	   /* the call the last copy that landed was made for, */
	char landed_rel[PATH_MAX]; /* and where (cow_copy_landed_for) */
};

int cow_wait_init(struct supervisor *sv)
{
	struct cow_wait *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->efd < 0) {
		int r = negative_errno();
		free(w);
		return r;
	}
	w->cp.in = w->cp.out = w->cp.dir = -1;
	w->cancel = &sv->workers.cancel;
	sv->cow_wait = w;
	return w->efd;
}

void cow_wait_arm(struct supervisor *sv, int on)
{
	if (sv->cow_wait)
		sv->cow_wait->armed = on;
}

int cow_copy_landed_for(struct supervisor *sv, const struct seccomp_notif *req, const char *rel)
{
	struct cow_wait *w = sv->cow_wait;
	return w && w->landed_id == req->id && strcmp(w->landed_rel, rel) == 0;
}

int cow_held(struct supervisor *sv)
{
	return sv->cow_wait && sv->cow_wait->armed && sv->cow_wait->busy;
}

int cow_wait_hold(struct supervisor *sv, const struct seccomp_notif *req)
{
	struct cow_wait *w = sv->cow_wait;

	if (!w || !w->busy)
		return 0;
	if (w->head && w->n == w->cap) { /* the calls already asked again: room at the front */
		memmove(w->queue, w->queue + w->head, (w->n - w->head) * sizeof(*w->queue));
		w->n -= w->head;
		w->head = 0;
	}
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 16;
		struct seccomp_notif *v = realloc(w->queue, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		w->queue = v;
		w->cap = cap;
	}
	w->queue[w->n++] = *req;
	return NOTIF_DEFERRED;
}

static void copy_worker(int listener, int sock, void *arg)
{
	struct cow_wait *w = arg;
	/* A job dropped because the sandbox ended (no listener) copies nothing. */
	int r = listener < 0 ? -ECANCELED : cow_copy_run(&w->cp, w->cancel);
	uint64_t one = 1;

	atomic_store_explicit(&w->result, r, memory_order_release);
	(void)!write(w->efd, &one, sizeof(one));
}

int cow_copy_up_off_loop(struct supervisor *sv, const struct seccomp_notif *req, const char *rel,
			 int truncate)
{
	struct cow_wait *w = sv->cow_wait;
	int r = cow_copy_up_start(sv->cow, rel, truncate, w && !w->busy ? &w->cp : NULL);

	if (r <= 0)
		return r;
	w->busy = 1;
	w->first = *req;
	r = supervisor_run_worker_now(sv, -1, copy_worker, w);
	if (r == 0)
		return NOTIF_DEFERRED;
	w->busy = 0;
	if (r == -ECANCELED) /* the sandbox has ended */
		return cow_copy_land(sv->cow, &w->cp, r);
	/* No worker free at once (others wait on FIFOs, connects...): made here, as a small
	 * one is, rather than failing the call or waiting behind them. */
	return cow_copy_land(sv->cow, &w->cp, cow_copy_run(&w->cp, NULL));
}

void cow_wait_on_done(struct supervisor *sv)
{
	struct cow_wait *w = sv->cow_wait;
	uint64_t v;

	if (!w || read(w->efd, &v, sizeof(v)) != sizeof(v) || !w->busy)
		return;
	int r = cow_copy_land(sv->cow, &w->cp,
			      atomic_load_explicit(&w->result, memory_order_acquire));
	w->busy = 0;
	w->landed_id = w->first.id;
	snprintf(w->landed_rel, sizeof(w->landed_rel), "%s", w->cp.rel);
	if (r < 0) {
		/* Fail closed: the call that needed the copy gets its error. */
		struct seccomp_notif_resp resp = { .id = w->first.id };
		notif_answer_errno(&resp, r);
		if (ioctl(sv->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
			return;
	} else
		(void)supervisor_answer(sv, &w->first); /* a broken listener: the loop sees it */
	/* The waiting calls, in order, until one begins another copy (the rest wait on). */
	while (!w->busy && w->head < w->n) {
		struct seccomp_notif req = w->queue[w->head++];
		(void)supervisor_answer(sv, &req);
	}
	if (w->head == w->n)
		w->head = w->n = 0;
}

void cow_wait_stop(struct supervisor *sv)
{
	struct cow_wait *w = sv->cow_wait;

	if (!w)
		return;
	/* The workers have stopped: a copy still on its way is taken back (its calls' tasks
	 * are gone with the sandbox). */
	if (w->busy)
		(void)cow_copy_land(sv->cow, &w->cp, -ECANCELED);
	safe_close(w->efd);
	free(w->queue);
	free(w);
	sv->cow_wait = NULL;
}
