/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lifecycle: a sandbox made, spawned, started, waited for, signalled and freed, on the
 * caller's threads. Spawning builds the plan and everything the launch needs before the clone
 * (descriptors, timers, the supervisor's state), then launches right here from the main
 * thread, or on the sandbox thread from any other (sandbox.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "fd-util.h"
#include "policy/schema.h"
#include "sandbox-internal.h"
#include "sandbox.h"
#include "supervisor/events.h"
#include "supervisor/handlers/handlers.h"
#include "supervisor/policy-fn.h"
#include "supervisor/user-handlers.h"
#include "syscall-util.h"

static int stdio_setup(struct sandlock_sandbox *sb, const sandlock_spawn_opts_t *o,
		       struct sandlock_error **reterr)
{
	const uint32_t modes[3] = { o->stdin_mode, o->stdout_mode, o->stderr_mode };
	const int fds[3] = { o->stdin_fd, o->stdout_fd, o->stderr_fd };
	int *ours[3] = { &sb->stdin_w, &sb->out_r, &sb->err_r };
	int r;

	for (int i = 0; i < 3; i++) {
		int p[2];
		switch (modes[i]) {
		case SANDLOCK_STDIO_INHERIT:
			break;
		case SANDLOCK_STDIO_NULL:
			sb->child_stdio[i] =
				fd_move_above_stdio(open("/dev/null", O_RDWR | O_CLOEXEC));
			if (sb->child_stdio[i] < 0)
				return error_set(reterr, negative_errno(), "/dev/null: %s",
						 strerror(errno));
			break;
		case SANDLOCK_STDIO_PIPE:
			if (pipe2(p, O_CLOEXEC) < 0)
				return error_set(reterr, negative_errno(), "pipe: %s",
						 strerror(errno));
			*ours[i] = i == 0 ? p[1] : p[0];
			sb->child_stdio[i] = fd_move_above_stdio(i == 0 ? p[0] : p[1]);
			if (sb->child_stdio[i] < 0)
				return error_set(reterr, sb->child_stdio[i], "pipe: %s",
						 strerror(-sb->child_stdio[i]));
			/* The event loop reads captured output; a blocking read would stall it. */
			if (i > 0 && (r = fd_set_nonblock(p[0], 1)) < 0)
				return error_set(reterr, r, "pipe: %s", strerror(-r));
			break;
		case SANDLOCK_STDIO_FD:
			/* A copy above 2, so the child's dup3 onto 0..2 never meets itself. */
			sb->child_stdio[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
			if (sb->child_stdio[i] < 0)
				return error_set(reterr, negative_errno(), "stdio fd %d: %s",
						 fds[i], strerror(errno));
			break;
		default:
			return error_set(reterr, -EINVAL, "unknown stdio mode %u", modes[i]);
		}
	}
	return 0;
}

static struct sandlock_sandbox *sandbox_new(void)
{
	struct sandlock_sandbox *sb = calloc(1, sizeof(*sb));
	pthread_condattr_t ca;

	if (!sb)
		return NULL;
	sb->pidfd = sb->tty_fd = sb->stdin_w = sb->out_r = sb->err_r = sb->done_efd = -1;
	sb->timer_fd = -1;
	sb->throttle_fd = -1;
	sb->memory_fd = -1;
	sb->cow_copy_fd = -1;
	sb->ctl[0] = sb->ctl[1] = sb->errpipe[0] = sb->errpipe[1] = -1;
	sb->child_stdio[0] = sb->child_stdio[1] = sb->child_stdio[2] = -1;
	sb->plan.ruleset_fd = -1;
	sb->sv.listener = -1;
	sb->branch_action = -1;
	control_init(&sb->control);
	pthread_mutex_init(&sb->lock, NULL);
	pthread_mutex_init(&sb->throttle_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sb->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (groups_init(&sb->groups) < 0) {
		free(sb);
		return NULL;
	}
	return sb;
}

/* The caller's descriptors the command inherits: checked now, used as they are at the clone. */
static int pass_fds_setup(struct sandlock_sandbox *sb, const sandlock_spawn_opts_t *o,
			  struct sandlock_error **reterr)
{
	if (o->n_pass_fds > SANDLOCK_PASS_FDS_MAX)
		return error_set(reterr, -EINVAL, "pass_fds: at most %u descriptors",
				 SANDLOCK_PASS_FDS_MAX);
	if (o->n_pass_fds && !o->pass_fds)
		return error_set(reterr, -EINVAL, "pass_fds: NULL with n_pass_fds %u",
				 o->n_pass_fds);
	for (uint32_t i = 0; i < o->n_pass_fds; i++) {
		int fd = o->pass_fds[i];
		if (fd < 3)
			return error_set(reterr, -EBADF, "pass_fds: %d: not above 2 (use stdio)",
					 fd);
		if (fcntl(fd, F_GETFD) < 0)
			return error_set(reterr, -EBADF, "pass_fds: %d: %s", fd, strerror(errno));
		for (uint32_t j = 0; j < i; j++)
			if (o->pass_fds[j] == fd)
				return error_set(reterr, -EINVAL, "pass_fds: %d: given twice", fd);
		sb->pass_fds[sb->n_pass_fds++] = fd;
	}
	return 0;
}

static int spawn_prepare(struct sandlock_sandbox *sb, const sandlock_spawn_opts_t *o,
			 struct sandlock_error **reterr)
{
	int r = pass_fds_setup(sb, o, reterr);
	if (r < 0)
		return r;
	r = stdio_setup(sb, o, reterr);
	if (r < 0)
		return r;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sb->ctl) < 0 ||
	    pipe2(sb->errpipe, O_CLOEXEC) < 0 ||
	    (sb->done_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
		return error_set(reterr, negative_errno(), "%s", strerror(errno));
	/* Everything the child uses must be above 2 (launch.h). */
	sb->ctl[1] = fd_move_above_stdio(sb->ctl[1]);
	sb->errpipe[1] = fd_move_above_stdio(sb->errpipe[1]);
	sb->plan.ruleset_fd = fd_move_above_stdio(sb->plan.ruleset_fd);
	if (sb->ctl[1] < 0 || sb->errpipe[1] < 0 || sb->plan.ruleset_fd < 0)
		return error_set(reterr, -EMFILE, "out of file descriptors");
	if (sb->timeout_ms &&
	    (sb->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) < 0)
		return error_set(reterr, negative_errno(), "timerfd_create: %s", strerror(errno));
	if (sb->plan.max_cpu &&
	    (sb->throttle_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) < 0)
		return error_set(reterr, negative_errno(), "timerfd_create: %s", strerror(errno));
	if (sb->plan.max_memory &&
	    (sb->memory_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) < 0)
		return error_set(reterr, negative_errno(), "timerfd_create: %s", strerror(errno));
	if ((o->flags & SANDLOCK_SPAWN_INTERACTIVE) && sb->plan.max_cpu)
		return error_set(
			reterr, -EINVAL,
			"interactive: max_cpu cannot be combined with a terminal (a shell's "
			"job control would take the throttle's stops for its own)");
	if (o->flags & SANDLOCK_SPAWN_INTERACTIVE) {
		sb->tty_fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
		if (sb->tty_fd < 0)
			return error_set(reterr, -ENOTTY,
					 "interactive: no controlling terminal (/dev/tty: %s)",
					 strerror(errno));
		sb->own_pgrp = getpgrp();
	}
	return 0;
}

static int start_thread(struct sandlock_sandbox *sb, void *(*fn)(void *),
			struct sandlock_error **reterr)
{
	sigset_t all, old;

	/* The thread, and the child it may clone, start with every signal blocked: no handler
	 * of the host can run in the child, and the host's signals go to its own threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int r = pthread_create(&sb->thread, NULL, fn, sb);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0)
		return error_set(reterr, -r, "pthread_create: %s", strerror(r));
	sb->has_thread = 1;
	return 0;
}

/* PR_SET_PDEATHSIG fires when the thread that cloned the child exits. The main thread lives as
 * long as the process, so when it spawns, the launch happens right here, and the sandbox thread
 * only runs the event loop: two thread hand-offs fewer, which is most of what a spawn costs
 * beyond the kernel's own work. Any other thread could exit before its sandbox does, so there
 * the sandbox thread launches (sandbox_thread). */
static int launch_inline(struct sandlock_sandbox *sb, struct sandlock_error **reterr)
{
	struct sandlock_error *err = NULL;
	sigset_t all, old;

	/* The child starts with every signal blocked, as when the sandbox thread clones it. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int r = launch_clone(sb, &err);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r == 0)
		r = launch_go(sb, 0, &err);
	if (r == 0)
		r = start_thread(sb, loop_thread, &err);
	if (r < 0) {
		launch_abandon(sb, err);
		record_launch(sb, r, NULL);
		/* finish() gives the terminal back (-i): from the background that raises SIGTTOU
		 * unless the calling thread blocks it, as the sandbox thread always does. */
		pthread_sigmask(SIG_SETMASK, &all, &old);
		finish(sb);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (reterr && !*reterr)
			*reterr = err;
		else
			error_free(err);
		return r;
	}
	record_launch(sb, 0, NULL);
	return 0;
}

static int is_main_thread(void)
{
	return (pid_t)syscall(SYS_gettid) == getpid();
}

/* Wait until the launch is decided (running, parked or failed); returns the launch result. */
static int wait_launched(struct sandlock_sandbox *sb, struct sandlock_error **reterr)
{
	pthread_mutex_lock(&sb->lock);
	while (sb->state == SANDBOX_LAUNCHING ||
	       (sb->state == SANDBOX_PARKED && sb->start_requested))
		pthread_cond_wait(&sb->cond, &sb->lock);
	int r = sb->state == SANDBOX_FAILED ? sb->launch_r : 0;
	if (r < 0 && reterr && !*reterr) {
		*reterr = sb->launch_err;
		sb->launch_err = NULL;
	}
	pthread_mutex_unlock(&sb->lock);
	return r;
}

/* The HTTP ACL proxy of a plan with HTTP rules, started before the launch: the first
 * redirected connect may come right after the exec. Its configuration points into the plan,
 * which outlives it (stopped by finish, or by sandbox_free when the launch never came). */
static int spawn_proxy(struct sandlock_sandbox *sb, struct sandlock_error **reterr)
{
	const struct plan_http *h = &sb->plan.http;
	char err[512] = "";

	if (!h->active)
		return 0;
	struct http_proxy_config cfg = {
		.allow = h->allow,
		.n_allow = h->n_allow,
		.deny = h->deny,
		.n_deny = h->n_deny,
		.auth = h->auth,
		.n_auth = h->n_auth,
		.secrets = h->secrets,
		.n_secrets = h->n_secrets,
		.hosts = h->hosts,
		.n_hosts = h->n_hosts,
		.ca = h->ca,
	};
	int r = http_proxy_start(&cfg, &sb->sv.proxy, err, sizeof(err));
	if (r < 0)
		return error_set(reterr, r, "%s", err[0] ? err : strerror(-r));
	return 0;
}

/* The supervisor's state, from the plan: prepared here, on the spawning thread, so that the
 * sandbox thread never allocates on the launch path. */
static int spawn_supervisor(struct sandlock_sandbox *sb, struct sandlock_error **reterr)
{
	int r = supervisor_prepare(&sb->sv, sb->name, &sb->groups, &sb->plan);
	if (r < 0)
		r = error_set(reterr, r, "supervisor: %s", strerror(-r));
	sb->sv.kill_cause = &sb->kill_cause;
	sb->sv.events = sb->events;
	sb->sv.user = sb->user;
	sb->sv.hostname_served = sb->plan.name != NULL;
	sb->sv.num_cpus = sb->plan.num_cpus;
	sb->sv.max_memory = sb->plan.max_memory;
	sb->sv.deterministic_dirs = sb->plan.deterministic_dirs;
	sb->sv.meta.userns = sb->plan.has_ids;
	if (sb->plan.has_random_seed)
		random_init(&sb->sv, sb->plan.random_seed);
	if (r == 0 && sb->plan.has_time_start &&
	    (r = vtime_init(&sb->sv, sb->plan.time_start_sec, sb->plan.time_start_nsec)) < 0)
		r = error_set(reterr, r, "time_start: %s", strerror(-r));
	if (r == 0)
		sb->sv.fs_granted = TAKE_PTR(sb->plan.fs.carved);
	sb->sv.umask_traced = sb->plan.umask_traced;
	sb->sv.ruleset_fd = sb->plan.ruleset_fd;
	if (r == 0)
		sb->sv.cow = sb->cow = TAKE_PTR(sb->plan.cow);
	if (r == 0 && sb->cow && (r = sb->cow_copy_fd = cow_wait_init(&sb->sv)) < 0)
		r = error_set(reterr, r, "supervisor: %s", strerror(-r));
	else if (r > 0)
		r = 0;
	if (r == 0 && (r = proc_limit_init(&sb->sv.procs, sb->plan.max_processes)) < 0)
		r = error_set(reterr, r, "supervisor: %s", strerror(-r));
	if (r == 0)
		r = spawn_proxy(sb, reterr);
	return r;
}

int sandbox_spawn(const struct sandlock_policy *p, const char *const *argv,
		  const sandlock_spawn_opts_t *opts, struct sandlock_sandbox **ret,
		  struct sandlock_error **reterr)
{
	sandlock_spawn_opts_t o = { .size = sizeof(o) };

	if (opts)
		memcpy(&o, opts, MIN((size_t)opts->size, sizeof(o)));
	struct sandlock_sandbox *sb = sandbox_new();
	if (!sb)
		return error_set(reterr, -ENOMEM, "out of memory");
	sb->flags = o.flags;
	sb->timeout_ms = o.timeout_ms;

	int r = events_new(&sb->events, o.events, o.on_event, o.event_user_data);
	if (r < 0)
		r = error_set(reterr, r, "out of memory");
	if (r == 0)
		r = user_handlers_new(p, o.handlers, o.n_handlers, &sb->user, reterr);
	if (r == 0)
		r = plan_build_with(p, argv, o.events, sb->user ? sb->user->nrs_flat : NULL,
				    sb->user ? sb->user->n_nrs : 0, &sb->plan, reterr);
	/* Without a supervisor nobody sees a decision: flags asking for events would be dropped. */
	if (r == 0 && o.events && !sb->plan.supervised)
		r = error_set(reterr, -EINVAL,
			      "no_supervisor: the event stream (events, a denial log) needs the "
			      "supervisor");
	if (r == 0) {
		if (sb->plan.name)
			snprintf(sb->name, sizeof(sb->name), "%s", sb->plan.name);
		r = spawn_prepare(sb, &o, reterr);
	}
	if (r == 0 && sb->plan.control) {
		/* What `sandlock inspect` reports: the policy with the command actually run. */
		sb->policy = policy_copy(p);
		r = sb->policy ? policy_set_command(sb->policy, (const char *const *)sb->plan.argv)
			       : -ENOMEM;
		if (r < 0)
			r = error_set(reterr, r, "out of memory");
	}
	if (r == 0 && sb->plan.control && sb->plan.name)
		r = control_claim(&sb->control, sb->name, 0, reterr);
	if (r == 0 && sb->plan.supervised)
		r = spawn_supervisor(sb, reterr);
	if (r == 0 && sb->plan.supervised &&
	    (r = policy_fn_start(&sb->sv, p->policy_fn, p->policy_fn_timeout_ms)) < 0)
		r = error_set(reterr, r, "policy_fn: %s", strerror(-r));
	if (r == 0 && (r = events_start(sb->events)) < 0)
		r = error_set(reterr, r, "the events thread: %s", strerror(-r));
	if (r == 0)
		r = sandbox_http_ca_out(&sb->plan, schema_label_of(p, "http_ca_out"), reterr);
	if (r == 0)
		sb->tmp = TAKE_PTR(sb->plan.tmp);
	if (r == 0 && sb->tmp && sb->plan.supervised)
		sb->sv.private_tmp = sb->tmp->path;
	if (r == 0 && !(o.flags & SANDLOCK_SPAWN_PARKED) && is_main_thread())
		r = launch_inline(sb, reterr);
	else if (r == 0) {
		r = start_thread(sb, sandbox_thread, reterr);
		if (r == 0)
			r = wait_launched(sb, reterr);
	}
	if (r < 0) {
		sandbox_free(sb);
		return r;
	}
	*ret = sb;
	return 0;
}

int sandbox_start(struct sandlock_sandbox *sb, struct sandlock_error **reterr)
{
	pthread_mutex_lock(&sb->lock);
	if (sb->state != SANDBOX_PARKED || sb->start_requested) {
		pthread_mutex_unlock(&sb->lock);
		return error_set(reterr, -EALREADY, "the sandbox is not parked");
	}
	sb->start_requested = 1;
	pthread_cond_broadcast(&sb->cond);
	pthread_mutex_unlock(&sb->lock);
	return wait_launched(sb, reterr);
}

const struct events *sandbox_events(const struct sandlock_sandbox *sb)
{
	return sb && __atomic_load_n(&sb->ended, __ATOMIC_ACQUIRE) ? sb->events : NULL;
}

int sandbox_wait(struct sandlock_sandbox *sb, int64_t timeout_ms)
{
	struct timespec deadline;
	int r = 0;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	if (timeout_ms >= 0) {
		deadline.tv_sec += timeout_ms / 1000;
		deadline.tv_nsec += (timeout_ms % 1000) * 1000000;
		if (deadline.tv_nsec >= 1000000000) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000;
		}
	}
	pthread_mutex_lock(&sb->lock);
	while (!sb->ended && r == 0)
		r = timeout_ms < 0 ? pthread_cond_wait(&sb->cond, &sb->lock)
				   : pthread_cond_timedwait(&sb->cond, &sb->lock, &deadline);
	int ended = sb->ended;
	pthread_mutex_unlock(&sb->lock);
	return ended ? 0 : -ETIMEDOUT;
}

void sandbox_note_kill(struct sandlock_sandbox *sb)
{
	uint32_t none = SANDLOCK_CAUSE_NONE;

	(void)atomic_compare_exchange_strong(&sb->kill_cause, &none, SANDLOCK_CAUSE_KILL);
}

int sandbox_signal(struct sandlock_sandbox *sb, int sig)
{
	pthread_mutex_lock(&sb->lock);
	int ended = sb->ended;
	pthread_mutex_unlock(&sb->lock);
	if (ended)
		return -ESRCH;
	/* A pause or resume and its flag together, under the throttle's lock: a tick in between
	 * would undo the pause (throttle_tick). */
	int pause = sig == SIGSTOP || sig == SIGCONT;
	if (sig == SIGKILL)
		sandbox_note_kill(sb);
	if (pause)
		pthread_mutex_lock(&sb->throttle_lock);
	int r = sandbox_signal_all(sb, sig);
	if (pause) {
		__atomic_store_n(&sb->paused, sig == SIGSTOP, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&sb->throttle_lock);
	}

	/* Only now release a parked launch: cancelling first would let the child exit and be
	 * reaped before the signal, which would then find nobody. */
	pthread_mutex_lock(&sb->lock);
	if (sb->state == SANDBOX_PARKED && sig == SIGKILL) {
		sb->cancel = 1;
		pthread_cond_broadcast(&sb->cond);
	}
	pthread_mutex_unlock(&sb->lock);
	return r == 0 ? -ESRCH : r < 0 ? r : 0;
}

void sandbox_free(struct sandlock_sandbox *sb)
{
	if (!sb)
		return;
	if (sb->has_thread) {
		pthread_mutex_lock(&sb->lock);
		sb->cancel = 1;
		int ended = sb->ended;
		pthread_cond_broadcast(&sb->cond);
		pthread_mutex_unlock(&sb->lock);
		if (!ended)
			(void)sandbox_signal_all(sb, SIGKILL);
		pthread_join(sb->thread, NULL);
	}
	control_close(&sb->control);
	policy_free(sb->policy);
	/* A launch that never came: no worker may use the proxy when it goes. */
	supervisor_stop_workers(&sb->sv);
	http_proxy_stop(sb->sv.proxy);
	sb->sv.proxy = NULL;
	events_free(sb->events); /* stopped already, unless the launch never came */
	sb->sv.events = NULL;
	supervisor_done(&sb->sv);
	user_handlers_free(sb->user); /* after the workers, which may run a deferred handler */
	sb->sv.user = sb->user = NULL;
	if (sb->cow) {
		/* Never settled (the launch failed): nothing ran in it. Settled: left as the
		 * action left it (a pending branch stays on disk, as KEEP leaves it). */
		if (sb->branch_action < 0)
			(void)cow_abort(sb->cow);
		cow_done(sb->cow);
		free(sb->cow);
	}
	cow_tmp_remove(sb->tmp); /* removed already unless the sandbox never ran */
	free(sb->tmp);
	cow_changes_free(sb->changes, sb->n_changes);
	error_free(sb->branch_err);
	groups_done(&sb->groups); /* closing the lifelines kills any straggler */
	plan_done(&sb->plan);
	error_free(sb->launch_err);
	safe_close(sb->pidfd);
	close_pair(sb->ctl);
	close_pair(sb->errpipe);
	for (int i = 0; i < 3; i++)
		safe_close(sb->child_stdio[i]);
	safe_close(sb->stdin_w);
	safe_close(sb->out_r);
	safe_close(sb->err_r);
	safe_close(sb->tty_fd);
	safe_close(sb->done_efd);
	safe_close(sb->timer_fd);
	safe_close(sb->throttle_fd);
	safe_close(sb->memory_fd);
	free(sb->out.data);
	free(sb->err.data);
	pthread_cond_destroy(&sb->cond);
	pthread_mutex_destroy(&sb->lock);
	pthread_mutex_destroy(&sb->throttle_lock);
	free(sb);
}
