/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sandbox: one running sandbox. It owns the plan, the child, the sandbox thread (the event loop:
 * notifications, the child's pidfd, captured output, the timeout; and the launch itself when the
 * spawning thread is not one that outlives the sandbox, see sandbox.c), the process groups and
 * the outcome. The exported wrappers are in api-sandbox.c.
 */
#pragma once

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "control.h"
#include "cow/cow.h"
#include "error.h"
#include "launch/launch.h"
#include "plan/plan.h"
#include "sandlock.h"
#include "supervisor/groups.h"
#include "supervisor/supervisor.h"

struct buffer {
	uint8_t *data;
	size_t len, cap;
};

/* Tags of the event loop's epoll set (the listener is polled beside it: event_loop). */
enum {
	EV_PIDFD,
	EV_OUT,
	EV_ERR,
	EV_TIMER,
	EV_THROTTLE,
	EV_MEMORY,
	EV_CONTROL,
	EV_COW_COPY,
	EV_POLICY_FN,
	EV_CLIENT, /* + the client's slot: must stay last */
};

enum sandbox_state {
	SANDBOX_LAUNCHING,
	SANDBOX_PARKED,
	SANDBOX_RUNNING,
	SANDBOX_FAILED, /* the child's launch failed; ended is set */
};

struct sandlock_sandbox {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* state, start_requested, cancel, ended */
	enum sandbox_state state;
	int start_requested;
	int cancel;
	int ended;
	int launch_r;
	struct sandlock_error *launch_err;

	struct plan plan;
	uint32_t flags;
	uint64_t timeout_ms;
	char name[65];

	pid_t pid;
	int pidfd;
	int waits_go;	    /* the child waits for "go" (forked, not sharing our memory) */
	int ctl[2];	    /* [0] ours, [1] the child's: listener out, "go" in */
	int errpipe[2];	    /* [0] ours, [1] the child's */
	int child_stdio[3]; /* the child's ends, closed here after clone */
	int pass_fds[SANDLOCK_PASS_FDS_MAX]; /* the caller's, inherited by the command as they are
					      */
	int n_pass_fds;
	int stdin_w, out_r, err_r;
	int tty_fd;
	pid_t own_pgrp;

	/* A child sharing our memory runs on child_stack until it exec'd or exited, and reads
	 * these meanwhile: they outlive the clone's frame. */
	void *child_stack;
	struct launch_io launch_io;
	struct launch_arg launch_arg;

	pthread_t thread;
	int has_thread;
	int done_efd;
	int timer_fd;		 /* the timeout, armed at the clone (a parked one's at start) */
	int memory_fd;		 /* max_memory: the periodic check's timer, or -1 */
	int throttle_fd;	 /* max_cpu: the duty cycle's timer, or -1 */
	int cow_copy_fd;	 /* workdir: a copy-up's worker is done (sv.cow_wait's), or -1 */
	int throttled;		 /* max_cpu: the sandbox is stopped for the rest of the period */
	int64_t throttle_period; /* max_cpu: when the current period started (ns) */
	pthread_mutex_t throttle_lock; /* a pause and its flag, against the throttle ticks */
	struct groups groups;
	struct supervisor sv;
	int has_sv;
	struct buffer out, err;
	int timed_out;
	/* Why sandlock ended the command's process (SANDLOCK_CAUSE_*): the first kill asked for
	 * (a kill of the sandbox, max_memory's of the command's process), kept when the command
	 * died of it (set_exit). */
	_Atomic uint32_t kill_cause;
	uint32_t exit_cause;
	const char *notices; /* the supervisor's, closed when the sandbox ended */
	/* The decisions' stream (supervisor/events.h), made from the spawn options before the
	 * launch (sv.events points to it), stopped at the end, freed with the sandbox. */
	struct events *events;
	/* Extension handlers (supervisor/user-handlers.h), resolved from the spawn options
	 * before the plan (sv.user points to it), freed with the sandbox; NULL: none. */
	struct user_handlers *user;
	uint32_t exit_kind;
	int32_t exit_code, exit_signal;

	/* The runtime directory and control socket (control.h); the policy it reports. */
	struct control control;
	struct sandlock_policy *policy; /* NULL without a control socket */

	/* workdir: the branch (taken from the plan), settled when the sandbox ends
	 * (branch_settle): the change set, the action applied, a commit's error. */
	struct cow *cow;
	struct cow_tmp *tmp; /* private_tmp (taken from the plan), removed when the sandbox ends */
	struct cow_change *changes;
	size_t n_changes;
	int branch_action; /* enum branch_action applied; -1: none yet */
	int pending;	   /* DEFER: held for sandbox_branch_commit/abort */
	struct sandlock_error *branch_err;
	int paused; /* SIGSTOP sent and no SIGCONT since (as ps shows it) */
};

int sandbox_spawn(const struct sandlock_policy *p, const char *const *argv,
		  const sandlock_spawn_opts_t *opts, struct sandlock_sandbox **ret,
		  struct sandlock_error **reterr);
int sandbox_start(struct sandlock_sandbox *sb, struct sandlock_error **reterr);
int sandbox_wait(struct sandlock_sandbox *sb, int64_t timeout_ms);
int sandbox_signal(struct sandlock_sandbox *sb, int sig);
/* A kill of the whole sandbox is asked for (sandlock_sandbox_kill, the control socket's
 * "kill"): the cause of the command's end if it dies of it. Any thread. */
void sandbox_note_kill(struct sandlock_sandbox *sb);
/* Signal every process of the sandbox, from any thread; how many were reached, or -errno. */
int sandbox_signal_all(struct sandlock_sandbox *sb, int sig);
void sandbox_free(struct sandlock_sandbox *sb);
/* The run's event stream once the sandbox ended (its denial table complete), else NULL. */
const struct events *sandbox_events(const struct sandlock_sandbox *sb);
/* A deferred branch: merge it (waiting up to 5 s for another merge), or discard it. */
int sandbox_branch_commit(struct sandlock_sandbox *sb, struct sandlock_error **reterr);
int sandbox_branch_abort(struct sandlock_sandbox *sb, struct sandlock_error **reterr);
