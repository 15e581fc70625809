/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy-fn-freeze: an exec shown to the policy_fn while other tasks share the caller's memory
 * (threads of its process, processes cloned with CLONE_VM). Those tasks could rewrite the
 * argument vector between the read shown to the callback and the kernel's own read when the
 * call goes on, so they are held in ptrace-stop for that span:
 *  - one short-lived thread is their tracer (ptrace relations belong to the tracing thread);
 *    it seizes the caller (PTRACE_O_TRACEEXEC, not interrupted: it waits in the notification)
 *    and seizes and interrupts every peer, then waits for each to stop (waitid on its thread
 *    id, WNOWAIT: a signal it stopped on is still delivered after), bounded;
 *  - a peer waiting in the vfork whose child is the caller runs no code before the caller's
 *    exec has replaced the memory, and stops then (its interrupt is pending);
 *  - the peer set is looked up again once all are stopped: a task created meanwhile is seized
 *    in another round; a set that keeps changing is refused;
 *  - the vector is read and shown; an allowed exec is CONTINUEd from this thread, the caller is
 *    interrupted (it stops at PTRACE_EVENT_EXEC, or on its way back from a failed exec, before
 *    any code of its own), and the thread waits for that, reaping the threads the exec kills
 *    (the kernel's exec waits for a traced thread's exit to be reaped), bounded: an exec still
 *    running then is ended with SIGKILL rather than let the peers run;
 *  - the thread exits. The kernel detaches every task a tracer thread traced when it exits
 *    (exit_ptrace), stopped ones resume: that is the release, on every path, and the fail-safe.
 * Anything that fails (a peer that cannot be traced: Yama's ptrace_scope, another tracer, a
 * process not dumpable; a timeout) refuses the exec with EPERM and says why.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fd-util.h"
#include "macro.h"
#include "notif.h"
#include "policy-fn-internal.h"
#include "syscall-util.h"

#define FREEZE_STOP_NS (2LL * 1000000000)  /* for every peer to stop */
#define FREEZE_EXEC_NS (10LL * 1000000000) /* for a continued exec to be over */
#define FREEZE_ROUNDS 4			   /* lookups of the peer set */

enum { T_SEIZED, T_STOPPED, T_PARKED, T_GONE };
enum { GO_WAIT, GO_CONTINUE, GO_END };

struct frozen_task {
	pid_t tid, tgid;
	int state;
};

struct pfn_freeze {
	pthread_t thread;
	int listener, pidfd; /* pidfd: the caller's process */
	pid_t tid, tgid;
	uint64_t id;
	int64_t verdict_deadline;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int phase; /* 0 freezing, 1 frozen, -1 failed, 2 over: under the lock */
	int go;	   /* GO_*, under the lock */
	const char *why;
	struct frozen_task *t; /* [0]: the caller */
	size_t n, cap;
};

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A poll's pause: from 10 us, doubling to 100 us (the peers wait on this thread's look at
 * the exec's end: a longer pause is that much longer a stop for them). */
static void pause_step(long *ns)
{
	struct timespec ts = { 0, *ns };

	nanosleep(&ts, NULL);
	*ns = MIN(*ns * 2, 100000L);
}

static int fail(struct pfn_freeze *f, const char *why)
{
	f->why = why;
	return -EPERM;
}

static int add_task(struct pfn_freeze *f, pid_t tid, pid_t tgid, int state)
{
	if (f->n == f->cap) {
		struct frozen_task *g =
			realloc(f->t, (f->cap = f->cap ? f->cap * 2 : 16) * sizeof(*g));
		if (!g)
			return -ENOMEM;
		f->t = g;
	}
	f->t[f->n++] = (struct frozen_task){ tid, tgid, state };
	return 0;
}

/* Whether @tid is held already. A task seen gone no longer holds its id: a task listed under it
 * is another, created since, and is seized in turn. */
static int known(const struct pfn_freeze *f, pid_t tid)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->t[i].tid == tid && f->t[i].state != T_GONE)
			return 1;
	return 0;
}

/* Whether thread @tid of process @tgid has exited (a zombie: a leader kept while other threads
 * of its process run, or a process its parent has not reaped). It runs no code again, and the
 * kernel refuses to trace it (EPERM). */
static int exited(pid_t tgid, pid_t tid)
{
	char name[64], buf[512];

	snprintf(name, sizeof(name), "task/%d/stat", tid);
	if (proc_read(tgid, name, buf, sizeof(buf)) < 0)
		return 0;
	const char *p = strrchr(buf, ')'); /* after the name, which may hold anything */
	return p && (p[1] == ' ') && (p[2] == 'Z' || p[2] == 'X');
}

/* Whether thread @tid has process @child among its children. */
static int has_child(pid_t tgid, pid_t tid, pid_t child)
{
	char name[64], buf[4096];

	snprintf(name, sizeof(name), "task/%d/children", tid);
	if (proc_read(tgid, name, buf, sizeof(buf)) < 0)
		return 0;
	for (char *p = buf, *end; *p; p = end) {
		long v = strtol(p, &end, 10);
		if (end == p)
			break;
		if (v == child)
			return 1;
	}
	return 0;
}

/* A look at a task: T_STOPPED (in ptrace-stop), T_GONE (ended; a thread's exit reaped), or
 * T_SEIZED (running, or blocked in a call). The stop is left to be reported again (WNOWAIT). */
static int look(const struct frozen_task *t, siginfo_t *si)
{
	memset(si, 0, sizeof(*si));
	if (waitid(P_PID, (id_t)t->tid, si, WEXITED | WSTOPPED | __WALL | WNOHANG | WNOWAIT) < 0)
		return T_GONE; /* ECHILD: released, or its thread id taken by an exec */
	if (si->si_pid == 0)
		return T_SEIZED;
	if (si->si_code == CLD_TRAPPED || si->si_code == CLD_STOPPED)
		return T_STOPPED;
	/* An exit: a thread's is reaped (an exec waits for that); a process's is its parent's. */
	if (t->tid != t->tgid)
		(void)waitid(P_PID, (id_t)t->tid, si, WEXITED | __WALL | WNOHANG);
	return T_GONE;
}

/* Wait for every peer to stop (or end, or park in the caller's vfork). */
static int wait_stopped(struct pfn_freeze *f, int64_t deadline)
{
	long step = 10000;

	for (;;) {
		int left = 0;
		for (size_t i = 1; i < f->n; i++) {
			struct frozen_task *t = &f->t[i];
			siginfo_t si;
			if (t->state != T_SEIZED)
				continue;
			t->state = look(t, &si);
			/* Parked in the vfork whose child is the caller: the caller ran, so the
			 * clone is past every write it makes; the vfork ends only when the exec
			 * has replaced the caller's memory. */
			if (t->state == T_SEIZED && pfn_task_in_vfork(t->tid) &&
			    has_child(t->tgid, t->tid, f->tgid))
				t->state = T_PARKED;
			left += t->state == T_SEIZED;
		}
		if (!left)
			return 0;
		if (mono_ns() > deadline)
			return fail(f, "a task sharing its memory did not stop in time");
		pause_step(&step);
	}
}

/* Seize and interrupt the peers not seized yet: the number added, or -EPERM. */
static int seize_new(struct pfn_freeze *f)
{
	_cleanup_free_ struct pfn_task *v = NULL;
	size_t n = 0;
	int added = 0;

	if (pfn_peers(f->tid, f->tgid, &v, &n) < 0)
		return fail(f, "the tasks sharing its memory could not be listed");
	for (size_t i = 0; i < n; i++) {
		if (known(f, v[i].tid))
			continue;
		if (ptrace(PTRACE_SEIZE, v[i].tid, 0, 0) < 0) {
			if (errno == ESRCH || (errno == EPERM && exited(v[i].tgid, v[i].tid)))
				continue; /* it ended */
			return fail(f, "a task sharing its memory cannot be traced (ptrace_scope, "
				       "another tracer, or not dumpable)");
		}
		if (add_task(f, v[i].tid, v[i].tgid, T_SEIZED) < 0)
			return fail(f, "out of memory");
		if (ptrace(PTRACE_INTERRUPT, v[i].tid, 0, 0) < 0)
			f->t[f->n - 1].state = T_GONE; /* ESRCH: it ended */
		added++;
	}
	return added;
}

static int freeze_all(struct pfn_freeze *f)
{
	int64_t deadline = mono_ns() + FREEZE_STOP_NS;

	if (ptrace(PTRACE_SEIZE, f->tid, 0, PTRACE_O_TRACEEXEC) < 0)
		return fail(f, "the caller cannot be traced (ptrace_scope, another tracer, or not "
			       "dumpable)");
	if (add_task(f, f->tid, f->tgid, T_SEIZED) < 0)
		return fail(f, "out of memory");
	for (int round = 0; round < FREEZE_ROUNDS; round++) {
		int added = seize_new(f);
		if (added < 0)
			return added;
		if (round > 0 && added == 0)
			return 0; /* every task that could write the memory is held */
		int r = wait_stopped(f, deadline);
		if (r < 0)
			return r;
	}
	return fail(f, "the tasks sharing its memory keep changing");
}

/* Whether the continued exec is over: the caller stopped (at PTRACE_EVENT_EXEC, or back from a
 * failed exec) or ended, or its process's leader thread id reports the exec (a thread other
 * than the leader that execs takes the leader's id). */
static int exec_over(struct pfn_freeze *f)
{
	int over = 0;

	for (size_t i = 0; i < f->n; i++) {
		struct frozen_task *t = &f->t[i];
		siginfo_t si, ev = { 0 };
		if (t->state == T_GONE)
			continue;
		int s = look(t, &si);
		if (s == T_GONE)
			t->state = T_GONE;
		if (i == 0 && s != T_SEIZED)
			over = 1;
		if (i > 0 && s == T_STOPPED && t->tid == f->tgid &&
		    ptrace(PTRACE_GETSIGINFO, t->tid, 0, &ev) == 0 &&
		    ev.si_code == (SIGTRAP | (PTRACE_EVENT_EXEC << 8)))
			over = 1;
	}
	return over;
}

static void exec_through(struct pfn_freeze *f)
{
	struct seccomp_notif_resp resp = { .id = f->id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE };
	int64_t deadline = mono_ns() + FREEZE_EXEC_NS;
	long step = 10000;

	/* CONTINUE: the kernel reads the argument vector again, and no task able to write it runs
	 * until the exec is over: every other task sharing the caller's memory is in ptrace-stop
	 * (or parked in the caller's vfork) under this thread, and the vector lies in memory no
	 * file or other process reaches (pfn_argv_private). */
	if (ioctl(f->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0)
		return; /* gone */
	(void)ptrace(PTRACE_INTERRUPT, f->tid, 0, 0);
	while (!exec_over(f)) {
		if (mono_ns() > deadline) {
			/* The peers must not run while the exec may still read the vector. */
			(void)sys_pidfd_send_signal(f->pidfd, SIGKILL, NULL, 0);
			break;
		}
		pause_step(&step);
	}
}

static void *freeze_thread(void *arg)
{
	struct pfn_freeze *f = arg;

	/* Its pauses are short polls: the default 50 us timer slack would double them. */
	(void)prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	int r = freeze_all(f);

	pthread_mutex_lock(&f->lock);
	f->phase = r == 0 ? 1 : -1;
	pthread_cond_broadcast(&f->cond);
	int64_t until = f->verdict_deadline + 1000000000;
	struct timespec ts = { .tv_sec = until / 1000000000, .tv_nsec = until % 1000000000 };
	while (r == 0 && f->go == GO_WAIT)
		if (pthread_cond_timedwait(&f->cond, &f->lock, &ts) == ETIMEDOUT)
			break;
	int go = f->go;
	if (r == 0)
		f->phase = 2; /* a verdict after this is answered EPERM by its caller */
	pthread_mutex_unlock(&f->lock);
	if (r == 0 && go == GO_CONTINUE)
		exec_through(f);
	return NULL; /* the thread's exit detaches (resumes) every task it traced */
}

static void freeze_free(struct pfn_freeze *f)
{
	safe_close(f->pidfd);
	pthread_mutex_destroy(&f->lock);
	pthread_cond_destroy(&f->cond);
	free(f->t);
	free(f);
}

int pfn_freeze_start(struct policy_fn *st, pid_t tid, pid_t tgid, uint64_t id, int64_t deadline_ns,
		     struct pfn_freeze **ret, const char **why)
{
	struct pfn_freeze *f = calloc(1, sizeof(*f));
	pthread_condattr_t ca;

	*why = "out of memory";
	if (!f)
		return -EPERM;
	*f = (struct pfn_freeze){ .listener = st->listener,
				  .tid = tid,
				  .tgid = tgid,
				  .id = id,
				  .verdict_deadline = deadline_ns };
	f->pidfd = sys_pidfd_open(tgid, 0);
	pthread_mutex_init(&f->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&f->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (f->pidfd < 0 || pthread_create(&f->thread, NULL, freeze_thread, f) != 0) {
		*why = "the caller's process could not be held";
		freeze_free(f);
		return -EPERM;
	}
	pthread_mutex_lock(&f->lock);
	while (f->phase == 0) /* the thread's waits are bounded */
		pthread_cond_wait(&f->cond, &f->lock);
	int frozen = f->phase == 1;
	pthread_mutex_unlock(&f->lock);
	if (!frozen) {
		*why = f->why;
		pthread_join(f->thread, NULL);
		freeze_free(f);
		return -EPERM;
	}
	*ret = f;
	return 0;
}

int pfn_freeze_continue(struct pfn_freeze *f)
{
	pthread_mutex_lock(&f->lock);
	int ok = f->phase == 1 && f->go == GO_WAIT;
	if (ok)
		f->go = GO_CONTINUE;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	return ok ? 0 : -EPERM;
}

void pfn_freeze_end(struct pfn_freeze *f)
{
	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	if (f->go == GO_WAIT)
		f->go = GO_END;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	pthread_join(f->thread, NULL); /* its exec wait is bounded */
	freeze_free(f);
}
