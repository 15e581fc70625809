/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sandbox: the sandbox thread (parked, launching, running the event loop) and the end of a
 * sandbox: the command reaped and its status recorded (someone else may have reaped it), the
 * rest of the sandbox killed, a workdir's branch settled, the outcome published. The launch is
 * handshake.c's, the loop loop.c's, spawn and the caller's calls lifecycle.c's
 * (sandbox-internal.h).
 *
 * PDEATHSIG follows the thread that cloned the child, so only a thread that outlives the
 * sandbox may launch: the main thread, or the sandbox's own thread (for spawns from other
 * threads, and for parked spawns, whose launch finishes later on that thread).
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fd-util.h"
#include "sandbox-internal.h"
#include "sandbox.h"
#include "supervisor/events.h"
#include "supervisor/handlers/handlers.h"
#include "syscall-util.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* PIDFD_GET_INFO (Linux 6.13; PIDFD_INFO_EXIT 6.15): the exit status of a process someone
 * else reaped. Our own copy of the first version of the struct. */
struct sl_pidfd_info {
	uint64_t mask;
	uint64_t cgroupid;
	uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	int32_t exit_code;
};
#define SL_PIDFD_INFO_EXIT (1ULL << 3)
#define SL_PIDFD_GET_INFO _IOWR(0xFF, 11, struct sl_pidfd_info)

static void set_exit(struct sandlock_sandbox *sb, int exited, int status)
{
	if (sb->timed_out) {
		sb->exit_kind = SANDLOCK_EXIT_TIMEOUT;
		sb->exit_signal = SIGKILL;
	} else if (exited) {
		sb->exit_kind = SANDLOCK_EXIT_CODE;
		sb->exit_code = status;
	} else {
		sb->exit_kind = SANDLOCK_EXIT_SIGNAL;
		sb->exit_signal = status;
		/* A kill asked for or made for the limit, and the command died of a SIGKILL:
		 * that one (the command could not have caught it). */
		if (status == SIGKILL)
			sb->exit_cause = atomic_load(&sb->kill_cause);
	}
}

/* The command was reaped by someone else: a host that ignores SIGCHLD (inherited across
 * execve) or sets SA_NOCLDWAIT, or calls waitpid(-1). Ask the pidfd for the status; where the
 * kernel cannot tell, report exit code -1 rather than wait forever. */
static void reaped_elsewhere(struct sandlock_sandbox *sb)
{
	struct sl_pidfd_info info = { .mask = SL_PIDFD_INFO_EXIT };

	if (ioctl(sb->pidfd, SL_PIDFD_GET_INFO, &info) == 0 && (info.mask & SL_PIDFD_INFO_EXIT)) {
		int st = info.exit_code;
		set_exit(sb, WIFEXITED(st), WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	} else
		set_exit(sb, 1, -1);
}

static int is_exit(int code)
{
	return code == CLD_EXITED || code == CLD_KILLED || code == CLD_DUMPED;
}

void reap_child(struct sandlock_sandbox *sb, int options)
{
	siginfo_t si = { 0 };

	if (sb->pidfd < 0 || sb->exit_kind != SANDLOCK_EXIT_RUNNING)
		return;
	/* A policy_fn's exec may hold the command's threads traced by a thread of this process
	 * (policy-fn-freeze.c): a traced child's stops are reported to its parent's waits too,
	 * whatever the options. Only an exit is the outcome. */
	do {
		si = (siginfo_t){ 0 };
		if (waitid((idtype_t)P_PIDFD, (id_t)sb->pidfd, &si, WEXITED | options) < 0) {
			if (errno == ECHILD)
				reaped_elsewhere(sb);
			return;
		}
	} while (si.si_pid != 0 && !is_exit(si.si_code) && !(options & WNOHANG));
	if (si.si_pid != 0 && is_exit(si.si_code))
		set_exit(sb, si.si_code == CLD_EXITED, si.si_status);
}

/* Signal every process of the sandbox: its recorded groups, and the command itself (which,
 * without a supervisor, may have moved to a group nobody recorded). Returns how many were
 * reached, or -errno. */
int sandbox_signal_all(struct sandlock_sandbox *sb, int sig)
{
	int r = groups_signal(&sb->groups, sig);

	if (sb->pidfd >= 0 && sys_pidfd_send_signal(sb->pidfd, sig, NULL, 0) == 0 && r <= 0)
		r = 1;
	return r;
}

/* ---- the thread -------------------------------------------------------------------------- */

static void publish_state(struct sandlock_sandbox *sb, enum sandbox_state state)
{
	pthread_mutex_lock(&sb->lock);
	sb->state = state;
	pthread_cond_broadcast(&sb->cond);
	pthread_mutex_unlock(&sb->lock);
}

/* Wait for sandbox_start() or a cancel. Returns 0 to go on. */
static int wait_parked(struct sandlock_sandbox *sb)
{
	pthread_mutex_lock(&sb->lock);
	sb->state = SANDBOX_PARKED;
	pthread_cond_broadcast(&sb->cond);
	while (!sb->start_requested && !sb->cancel)
		pthread_cond_wait(&sb->cond, &sb->lock);
	int cancel = sb->cancel;
	pthread_mutex_unlock(&sb->lock);
	return cancel ? -ECANCELED : 0;
}

/* The workdir's branch, once nothing of the sandbox runs: its change set read, then the
 * action of the outcome applied (on_exit after exit 0, else on_error). A commit that fails
 * leaves the branch on disk (branch_err says where). */
static void branch_settle(struct sandlock_sandbox *sb)
{
	int ok = sb->exit_kind == SANDLOCK_EXIT_CODE && sb->exit_code == 0;
	int action = ok ? sb->plan.on_exit : sb->plan.on_error;

	/* Stragglers (a daemon the command left) write no more into the branch. */
	(void)sandbox_signal_all(sb, SIGKILL);
	/* The branch as the run left it, then its change set: a commit lands that, or nothing. */
	int r = cow_seal(sb->cow);
	if (r == 0)
		r = cow_changes(sb->cow, &sb->changes, &sb->n_changes);
	if (r < 0) {
		/* The change set cannot be read: nothing is merged unseen. */
		(void)error_set(&sb->branch_err, r, "reading the change set of %s: %s",
				sb->cow->dir, strerror(-r));
		action = BRANCH_KEEP;
	}
	sb->branch_action = action;
	switch (action) {
	case BRANCH_COMMIT:
		if (cow_commit(sb->cow, 5000, &sb->branch_err) < 0)
			sb->branch_action = BRANCH_KEEP;
		break;
	case BRANCH_ABORT:
		r = cow_abort(sb->cow);
		if (r < 0)
			(void)error_set(&sb->branch_err, r, "removing the branch %s: %s",
					sb->cow->dir, strerror(-r));
		break;
	case BRANCH_DEFER:
		sb->pending = 1;
		/* On disk as KEEP leaves it too, should the caller never decide. */
		__attribute__((fallthrough));
	default:
		r = cow_save(sb->cow);
		if (r < 0)
			(void)error_set(&sb->branch_err, r, "saving the branch %s: %s",
					sb->cow->dir, strerror(-r));
		break;
	}
}

void finish(struct sandlock_sandbox *sb)
{
	/* No connect made on behalf of a sandbox that has ended goes on (whether or not the
	 * listener is still open: it closes itself on a hang-up). */
	supervisor_stop_workers(&sb->sv);
	/* After the workers: a connect worker may be telling it a destination. */
	http_proxy_stop(sb->sv.proxy);
	sb->sv.proxy = NULL;
	if (sb->sv.prepared)
		port_map_clear(&sb->sv.ports); /* the ports are the host's again */
	if (sb->has_sv) {
		/* Close the listener now: trapped calls of stragglers fail instead of waiting. */
		sb->sv.listener = safe_close(sb->sv.listener);
		sb->has_sv = 0;
	}
	/* Nothing emits any more (the loop and the workers are done): every event queued reaches
	 * the callback before the outcome is published, so none runs after the caller's wait. */
	events_stop(sb->events);
	uint64_t overflowed = events_overflowed(sb->events);
	if (overflowed)
		notices_add(&sb->sv.notices,
			    "%llu event%s dropped: the event callback was too slow",
			    (unsigned long long)overflowed, overflowed == 1 ? "" : "s");
	if (sb->tty_fd >= 0) /* SIGTTOU is blocked on this thread, so this works from the
			      * background */
		(void)tcsetpgrp(sb->tty_fd, sb->own_pgrp);
	sb->ctl[0] = safe_close(sb->ctl[0]);
	/* Gone from `sandlock ps` before anyone can see the sandbox ended. */
	control_close(&sb->control);
	if (sb->cow && sb->exit_kind != SANDLOCK_EXIT_RUNNING)
		branch_settle(sb);
	if (sb->tmp) {
		/* Stragglers (a daemon the command left) make nothing more in it. */
		(void)sandbox_signal_all(sb, SIGKILL);
		cow_tmp_remove(sb->tmp);
	}
	sb->notices = notices_close(&sb->sv.notices);

	pthread_mutex_lock(&sb->lock);
	/* Release: the outcome written above is visible to whoever sees ended set. */
	__atomic_store_n(&sb->ended, 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&sb->cond);
	pthread_mutex_unlock(&sb->lock);
	uint64_t one = 1;
	(void)!write(sb->done_efd, &one, sizeof(one));
}

void record_launch(struct sandlock_sandbox *sb, int r, struct sandlock_error *err)
{
	pthread_mutex_lock(&sb->lock);
	sb->launch_r = r;
	sb->launch_err = err;
	pthread_mutex_unlock(&sb->lock);
	publish_state(sb, r == 0 ? SANDBOX_RUNNING : SANDBOX_FAILED);
}

/* The sandbox thread of a launch done by the caller: the event loop only. */
void *loop_thread(void *arg)
{
	struct sandlock_sandbox *sb = arg;

	event_loop(sb);
	finish(sb);
	return NULL;
}

/* The sandbox thread that also launches (parked sandboxes, callers other than the main thread). */
void *sandbox_thread(void *arg)
{
	struct sandlock_sandbox *sb = arg;
	struct sandlock_error *err = NULL;

	int parked = !!(sb->flags & SANDLOCK_SPAWN_PARKED);
	int r = launch_clone(sb, &err);
	if (r == 0 && parked) {
		/* Parked means confined: wait for the child's "ready" first. */
		r = launch_ready(sb, &err);
		if (r == 0)
			r = wait_parked(sb);
	}
	if (r == -ECANCELED)
		sb->ctl[0] = safe_close(sb->ctl[0]); /* the child reads EOF and exits */
	else if (r == 0)
		r = launch_go(sb, parked, &err);

	if (r < 0)
		launch_abandon(sb, err);
	record_launch(sb, r, err);
	if (r == 0)
		event_loop(sb);
	finish(sb);
	return NULL;
}

int sandbox_branch_commit(struct sandlock_sandbox *sb, struct sandlock_error **reterr)
{
	if (!sb->cow)
		return error_set(reterr, -ENOENT, "commit: the sandbox has no workdir");
	if (!sb->pending)
		return error_set(reterr, -EINVAL, "commit: no branch is pending");
	int r = cow_commit(sb->cow, 5000, reterr);
	if (r < 0)
		return r; /* still pending, on disk */
	sb->pending = 0;
	sb->branch_action = BRANCH_COMMIT;
	return 0;
}

int sandbox_branch_abort(struct sandlock_sandbox *sb, struct sandlock_error **reterr)
{
	if (!sb->cow)
		return error_set(reterr, -ENOENT, "abort: the sandbox has no workdir");
	if (!sb->pending)
		return error_set(reterr, -EINVAL, "abort: no branch is pending");
	int r = cow_abort(sb->cow);
	if (r < 0)
		return error_set(reterr, r, "abort: removing %s: %s", sb->cow->dir, strerror(-r));
	sb->pending = 0;
	sb->branch_action = BRANCH_ABORT;
	return 0;
}
