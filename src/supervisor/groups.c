/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * groups: process-group records with pidfds and SIGKILL lifelines (see groups.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "fd-util.h"
#include "groups.h"
#include "macro.h"
#include "syscall-util.h"

int groups_init(struct groups *g)
{
	*g = (struct groups){ .cap = 4 };
	g->v = calloc(g->cap, sizeof(*g->v));
	if (!g->v)
		return -ENOMEM;
	pthread_mutex_init(&g->lock, NULL);
	return 0;
}

static int has_exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

/* Signal the group of @grp. The pidfd names the group even after its leader was reaped, and
 * never a later group that reuses the number. */
static int signal_group(const struct group *grp, int sig)
{
	if (sys_pidfd_send_signal(grp->leader_pidfd, sig, NULL, PIDFD_SIGNAL_PROCESS_GROUP) == 0)
		return 0;
	if (errno != EINVAL)
		return negative_errno();
	/* Before Linux 6.9 there is no PIDFD_SIGNAL_PROCESS_GROUP: signal by number, which is
	 * safe while the leader lives (its pid pins the group number). */
	if (has_exited(grp->leader_pidfd))
		return -ESRCH;
	return kill(-grp->pgid, sig) < 0 ? negative_errno() : 0;
}

/* The lifeline: both ends O_ASYNC, owned by the group, signalling SIGKILL. Whichever end the
 * kernel releases first, pipe_release() sends the other end's fasync signal (fs/pipe.c: "the
 * last reader or writer, but not the other side"), and __fput() removes the closing end's own
 * fasync entry first, so exactly one SIGKILL reaches the group. */
static int lifeline_open(pid_t pgid, int lifeline[2])
{
	struct f_owner_ex owner = { .type = F_OWNER_PGRP, .pid = pgid };

	if (pipe2(lifeline, O_CLOEXEC) < 0)
		return negative_errno();
	for (int i = 0; i < 2; i++) {
		int fl = fcntl(lifeline[i], F_GETFL);
		if (fl < 0 || fcntl(lifeline[i], F_SETOWN_EX, &owner) < 0 ||
		    fcntl(lifeline[i], F_SETSIG, SIGKILL) < 0 ||
		    fcntl(lifeline[i], F_SETFL, fl | O_ASYNC) < 0) {
			int r = negative_errno();
			/* Not armed on both ends yet: closing may or may not fire; the group is
			 * alive and ours, so a stray SIGKILL would only end the sandbox early. */
			close_pair(lifeline);
			return r;
		}
	}
	return 0;
}

static void group_release(struct group *grp)
{
	grp->leader_pidfd = safe_close(grp->leader_pidfd);
	close_pair(grp->lifeline);
}

/* Forget groups that are empty and whose leader is gone; called with the lock held. */
static void prune_locked(struct groups *g)
{
	size_t k = 0;

	for (size_t i = 0; i < g->n; i++) {
		struct group *grp = &g->v[i];
		if (has_exited(grp->leader_pidfd) && signal_group(grp, 0) == -ESRCH)
			group_release(grp);
		else
			g->v[k++] = *grp;
	}
	g->n = k;
}

int groups_track(struct groups *g, pid_t leader, int leader_pidfd)
{
	struct group grp = { .pgid = leader, .leader_pidfd = leader_pidfd };
	int r;

	pthread_mutex_lock(&g->lock);
	for (size_t i = 0; i < g->n; i++)
		if (g->v[i].pgid == leader && !has_exited(g->v[i].leader_pidfd)) {
			/* The live leader pins the number: this is the same group. */
			safe_close(leader_pidfd);
			pthread_mutex_unlock(&g->lock);
			return 0;
		}
	prune_locked(g);
	/* Each group holds three of the host's descriptors: bound what a sandbox can take. */
	if (g->n >= GROUPS_MAX) {
		r = -EAGAIN;
		goto fail;
	}
	if (g->n == g->cap) {
		struct group *nv = realloc(g->v, 2 * g->cap * sizeof(*nv));
		if (!nv) {
			r = -ENOMEM;
			goto fail;
		}
		g->v = nv;
		g->cap *= 2;
	}
	r = lifeline_open(leader, grp.lifeline);
	if (r < 0)
		goto fail;
	g->v[g->n++] = grp;
	pthread_mutex_unlock(&g->lock);
	return 0;
fail:
	pthread_mutex_unlock(&g->lock);
	safe_close(leader_pidfd);
	return r;
}

int groups_owns(struct groups *g, pid_t pgid)
{
	int owns = 0;

	pthread_mutex_lock(&g->lock);
	for (size_t i = 0; i < g->n && !owns; i++) {
		if (g->v[i].pgid != pgid)
			continue;
		/* A leader that is alive holds the number, so no group outside the sandbox can
		 * have it: cheaper than signalling the group (one poll). Once the leader is gone,
		 * the group is ours while it has members, which the pidfd's signal proves. */
		owns = !has_exited(g->v[i].leader_pidfd) || signal_group(&g->v[i], 0) == 0;
	}
	pthread_mutex_unlock(&g->lock);
	return owns;
}

int groups_signal(struct groups *g, int sig)
{
	int reached = 0, err = 0;

	/* Holding the lock for the whole sweep: a group recorded meanwhile has its creator in a
	 * group this sweep reaches. */
	pthread_mutex_lock(&g->lock);
	for (size_t i = 0; i < g->n; i++) {
		int r = signal_group(&g->v[i], sig);
		if (r == 0)
			reached++;
		else if (r != -ESRCH && !err)
			err = r;
	}
	pthread_mutex_unlock(&g->lock);
	return reached == 0 && err ? err : reached;
}

int groups_signal_one(struct groups *g, pid_t pgid, int sig)
{
	int r = -ESRCH;

	pthread_mutex_lock(&g->lock);
	for (size_t i = 0; i < g->n && r == -ESRCH; i++)
		if (g->v[i].pgid == pgid)
			r = signal_group(&g->v[i], sig);
	pthread_mutex_unlock(&g->lock);
	return r;
}

void groups_done(struct groups *g)
{
	for (size_t i = 0; i < g->n; i++)
		group_release(&g->v[i]);
	free(g->v);
	g->v = NULL;
	g->n = g->cap = 0;
	pthread_mutex_destroy(&g->lock);
}
