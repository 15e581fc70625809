/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/fork: max_processes, the most processes the sandbox may have at once (threads are
 * not processes). fork, vfork and a clone that makes a process (no CLONE_THREAD, no namespace
 * flag: those are refused by the filter) are trapped, and a fork that would make one too many
 * fails with EAGAIN, as the kernel's RLIMIT_NPROC answers.
 *
 * The count errs on the side of refusing. At each trapped fork the sandbox's processes are
 * counted from /proc (procs.c: every process of its groups, orphans included, and the zombies
 * a process of the sandbox has not reaped yet: they hold their pids), and to them are added
 * the forks allowed earlier that may not have made their child yet: a fork is pending from
 * the moment it is allowed until its thread is seen past it (the thread forks again, is gone,
 * or /proc/<tid>/syscall shows it blocked in another syscall). Until then a fork whose child
 * exists counts twice; a fork never counts zero times. A count that cannot be made (a stat
 * unreadable, the supervisor out of descriptors) refuses the fork.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fd-util.h"
#include "fork.h"
#include "handlers.h"
#include "macro.h"
#include "procs.h"
#include "supervisor/child.h"
#include "supervisor/events.h"
#include "supervisor/groups.h"
#include "supervisor/supervisor.h"

/* Whether thread @tid is known to be past its fork: 1 when it is gone or blocked in a syscall
 * other than the fork family; 0 when it may still be in it (running, unreadable: fail closed). */
static int past_fork(pid_t tid)
{
	long nr;

	int r = proc_syscall_nr(tid, &nr);
	if (r < 0)
		return r == -ESRCH;
	return nr >= 0 && nr != SYS_clone && nr != SYS_fork && nr != SYS_vfork && nr != SYS_clone3;
}

struct count {
	struct supervisor *sv;
	size_t n;
};

/* A process counts while it lives, and as a zombie while its parent is a process of the
 * sandbox, which could reap it and does not. An orphan's zombie waits for a parent outside
 * (init, a subreaper): the host's to reap, never the sandbox's, so it does not count. */
static int count_process(const struct proc_info *p, void *arg)
{
	struct count *c = arg;
	struct proc_info parent;

	pid_t live = proc_live_task(p);
	if (live < 0)
		return live;
	if (live == 0) {
		if (p->ppid <= 0)
			return 0; /* no parent to reap it in this pid namespace */
		int r = proc_info_of(p->ppid, &parent);
		if (r < 0 && r != -ESRCH)
			return r;
		/* A parent gone meanwhile: the zombie is being handed on; it counts. */
		if (r == 0 && (parent.pgrp <= 0 || !groups_owns(c->sv->groups, parent.pgrp)))
			return 0;
	}
	c->n++;
	return 0;
}

int proc_limit_init(struct proc_limit *pl, unsigned max)
{
	*pl = (struct proc_limit){ .max = max };
	return 0;
}

void proc_limit_done(struct proc_limit *pl)
{
	free(pl->pending);
	*pl = (struct proc_limit){ 0 };
}

size_t forks_settle(struct supervisor *sv, pid_t caller)
{
	struct proc_limit *pl = &sv->procs;
	size_t k = 0;

	for (size_t i = 0; i < pl->n_pending; i++)
		if (pl->pending[i] != caller && !past_fork(pl->pending[i]))
			pl->pending[k++] = pl->pending[i];
	return pl->n_pending = k;
}

/* The event of a fork refused for the limit (@uncounted: the processes could not be counted). */
static void fork_refused_event(struct supervisor *sv, const struct seccomp_notif *req,
			       int uncounted)
{
	char reason[96];
	struct event ev = {
		.nr = (int)req->data.nr,
		.category = EVENT_PROCESS,
		.pid = (pid_t)req->pid,
		.verdict = SANDLOCK_VERDICT_DENY,
		.error = EAGAIN,
		.amount = sv->procs.max,
		.reason = reason,
		.hint = uncounted ? NULL : "raise --max-processes",
	};

	snprintf(reason, sizeof(reason),
		 uncounted ? "the processes could not be counted (process limit %u)"
			   : "process limit %u reached",
		 sv->procs.max);
	events_emit(sv, &ev);
}

/* fork, vfork, clone making a process, under max_processes (counted) or max_memory (noted:
 * memory.c finds the sandbox's processes again once the fork is past). CONTINUE when allowed:
 * the decision is on the syscall number and the flags register (the filter sent only
 * process-making clones here), which the kernel uses unchanged; the pointer arguments (tid
 * slots, the stack) decide nothing. */
int handle_fork(struct supervisor *sv, const struct seccomp_notif *req,
		struct seccomp_notif_resp *resp)
{
	struct proc_limit *pl = &sv->procs;
	pid_t caller = (pid_t)req->pid;
	struct count c = { .sv = sv };

	/* Settle the pending forks whose thread is past them (the caller is: it forks again). */
	forks_settle(sv, caller);
	if (pl->max) {
		int r = sandbox_processes(sv, count_process, &c);
		if (!notif_id_valid(sv->listener, req->id))
			return NOTIF_GONE;
		if (r < 0 || c.n + pl->n_pending + 1 > pl->max) {
			/* Told once per run: a program that forks in a loop would say it on
			 * every try. */
			if (!sv->notices.fork_refused)
				notices_add(&sv->notices,
					    r < 0 ? "fork refused: the processes could not be "
						    "counted (process limit %u)"
						  : "fork refused: process limit %u reached",
					    pl->max);
			sv->notices.fork_refused = 1;
			fork_refused_event(sv, req, r < 0);
			return -EAGAIN; /* as the kernel's RLIMIT_NPROC; uncounted: refused */
		}
	}
	if (pl->n_pending == pl->cap_pending) {
		size_t cap = pl->cap_pending ? 2 * pl->cap_pending : 16;
		pid_t *v = realloc(pl->pending, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		pl->pending = v;
		pl->cap_pending = cap;
	}
	pl->pending[pl->n_pending++] = caller;
	sv->mem_pids.dirty = 1;
	return notif_answer_continue(resp);
}
