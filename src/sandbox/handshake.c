/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handshake: the launch, as the launcher sees it: the clone (sharing our memory, or a fork that
 * waits for "go"), the child's "ready" with its seccomp listener (attached, or taken by number
 * with pidfd_getfd), "go", and the report on the error pipe (EOF: it exec'd). Until then the
 * child's trapped calls are answered here, and the timeout, which counts from the clone, is
 * kept. The order of the steps is sandbox-internal.h's.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "fd-util.h"
#include "launch/launch.h"
#include "sandbox-internal.h"
#include "sandbox.h"
#include "supervisor/child.h"
#include "supervisor/handlers/handlers.h"
#include "syscall-util.h"

enum { LW_CTL, LW_ERR, LW_LISTENER, LW_TIMER, LW_N };

/* Wait until descriptor @want (LW_CTL, LW_ERR) is readable, at most @wait_ns (< 0: no limit).
 * Meanwhile the child's trapped calls are answered once the listener is ours (any call it makes
 * after its filter may be trapped, and it runs on until its execve), and the timeout, which
 * counts from the clone, ends the sandbox: the child then dies and the launch goes on to its
 * end, which the event loop reports as the timeout. Returns 1 (ready), 0 (@wait_ns passed) or
 * -errno. */
static int launch_poll(struct sandlock_sandbox *sb, int want, int64_t wait_ns)
{
	for (;;) {
		struct pollfd pfd[LW_N] = {
			[LW_CTL] = { .fd = want == LW_CTL ? sb->ctl[0] : -1, .events = POLLIN },
			[LW_ERR] = { .fd = sb->errpipe[0], .events = POLLIN },
			[LW_LISTENER] = { .fd = sb->has_sv ? sb->sv.listener : -1,
					  .events = POLLIN },
			/* Left readable once it fired: the event loop closes it. */
			[LW_TIMER] = { .fd = sb->timed_out ? -1 : sb->timer_fd, .events = POLLIN },
		};
		struct timespec ts = { .tv_sec = wait_ns / 1000000000,
				       .tv_nsec = wait_ns % 1000000000 };
		int n = ppoll(pfd, LW_N, wait_ns >= 0 ? &ts : NULL, NULL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? negative_errno() : 0;
		if (pfd[LW_TIMER].revents) {
			sb->timed_out = 1;
			(void)sandbox_signal_all(sb, SIGKILL);
		}
		if (pfd[LW_LISTENER].revents)
			on_listener(sb, pfd[LW_LISTENER].revents);
		if (pfd[want].revents)
			return 1;
	}
}

/* The listener at @number in the child (plan.listener_by_number), announced before its filter:
 * it exists once the child's seccomp() has returned, which nothing the child could send then
 * would tell for sure (the call may be trapped, and nobody can answer it before we hold the
 * listener), so it is looked for again after short, growing sleeps (the filter loads in tens
 * of microseconds). Returns it, or -errno (-EPIPE: the child failed or was killed first). */
static int take_by_number(struct sandlock_sandbox *sb, int number)
{
	int64_t wait_ns = 10000;
	uint64_t id = 0;

	for (;;) {
		int fd = sys_pidfd_getfd(sb->pidfd, number, 0);
		if (fd >= 0) {
			/* A listener knows no notification 0 (or, once in 2^64, has it). */
			if (ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0 || errno == ENOENT)
				return fd;
			close(fd);
			return -EPROTO;
		}
		if (errno != EBADF) {
			int e = negative_errno();
			return e == -EPIPE ? -EPERM : e;
		}
		int r = launch_poll(sb, LW_ERR, wait_ns);
		if (r < 0)
			return r;
		if (r > 0 || sb->timed_out)
			return -EPIPE;
		wait_ns = MIN(wait_ns * 2, 1000000);
	}
}

/* The child's "ready": one byte, with the listener attached when there is one, or 'N' and the
 * listener's number in the child, taken from there (plan.listener_by_number). Returns the
 * listener, 0 when none came (unsupervised), or -errno (-EPIPE: the child failed first). */
static int recv_ready(struct sandlock_sandbox *sb, int want_fd)
{
	char dummy[1 + sizeof(int)];
	struct iovec iov = { .iov_base = dummy, .iov_len = sizeof(dummy) };
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.buf,
		.msg_controllen = sizeof(u.buf),
	};

	int r = launch_poll(sb, LW_CTL, -1);
	if (r < 0)
		return r;
	ssize_t n;
	do
		n = recvmsg(sb->ctl[0], &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return negative_errno();
	if (n == 0)
		return -EPIPE;
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	int fd = -1;
	if (dummy[0] == 'N' && n == (ssize_t)sizeof(dummy) && want_fd) {
		int number;
		memcpy(&number, dummy + 1, sizeof(number));
		fd = take_by_number(sb, number);
		if (fd < 0) {
			/* The child waits for 'T' holding the report pipe: it must not wait. */
			(void)sys_pidfd_send_signal(sb->pidfd, SIGKILL, NULL, 0);
			return fd;
		}
		char taken = 'T'; /* the child may close its copy now */
		if (send(sb->ctl[0], &taken, 1, MSG_NOSIGNAL) != 1) {
			close(fd);
			return -EPIPE;
		}
		return fd;
	}
	if (c && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	if (!want_fd) {
		safe_close(fd);
		return 0;
	}
	return fd >= 0 ? fd : -EPROTO;
}

/* Read the child's verdict: EOF means execve succeeded (the pipe was O_CLOEXEC). */
static int read_launch_report(struct sandlock_sandbox *sb, struct sandlock_error **reterr)
{
	struct launch_report rep;
	int r = read_full(sb->errpipe[0], &rep, sizeof(rep));

	if (r == -EPIPE)
		return 0;
	if (r < 0)
		return error_set(reterr, r, "reading the launch status: %s", strerror(-r));

	const char *step = launch_step_name(rep.step);
	int err = rep.err > 0 ? rep.err : EIO;
	if (rep.step == LAUNCH_STEP_EXECVE)
		return error_set_step(reterr, -err, step, "execve %s: %s", sb->plan.argv[0],
				      strerror(err));
	if (rep.step == LAUNCH_STEP_SECCOMP && err == EBUSY)
		return error_set_step(reterr, -err, step,
				      "seccomp: %s: already inside a supervised sandbox (the "
				      "kernel allows one listener per process); run the inner "
				      "sandlock with --no-supervisor",
				      strerror(err));
	if (rep.step == LAUNCH_STEP_USERNS || rep.step == LAUNCH_STEP_ID_MAP)
		return error_set_step(reterr, -err, step,
				      "uid, gid: user namespaces are not available here (%s: %s)",
				      step, strerror(err));
	if (rep.step == LAUNCH_STEP_CHDIR)
		return error_set_step(reterr, -err, step, "chdir %s: %s", sb->plan.cwd,
				      strerror(err));
	return error_set_step(reterr, -err, step, "%s: %s", step, strerror(err));
}

/* The timerfd was created at spawn, so a failure there is a spawn error and never a silently
 * missing limit; it starts counting at the clone, or when a parked sandbox starts, not while
 * it was parked. Returns 0 or -errno. */
static int arm_timeout(int fd, uint64_t timeout_ms)
{
	struct itimerspec its = {
		.it_value = { .tv_sec = (time_t)(timeout_ms / 1000),
			      .tv_nsec = (long)(timeout_ms % 1000) * 1000000 },
	};

	if (fd < 0)
		return 0;
	return timerfd_settime(fd, 0, &its, NULL) < 0 ? negative_errno() : 0;
}

/* The stack of a child that shares our memory: it runs there until it has exec'd or exited. */
#define CHILD_STACK_SIZE (128 * 1024)

/* Clone the child. When nothing has to happen between its confinement and its execve (not
 * parked, no terminal to hand over), it shares our memory (CLONE_VM, as posix_spawn does, on a
 * stack of its own): no page tables to copy. Not CLONE_VFORK: this thread stays free to answer
 * the child's trapped calls, to end a launch that outlives the timeout, and to be ended by a
 * signal, however long the child's steps take (an execve waiting on a file lease, say).
 * Otherwise it is a fork that waits for "go". Returns the pid or -errno. */
static pid_t clone_child(struct sandlock_sandbox *sb, int vm_mode)
{
	if (!vm_mode) {
		pid_t pid = sys_clone_pidfd(&sb->pidfd);
		if (pid == 0)
			launch_child(&sb->plan, &sb->launch_io);
		return pid;
	}
	void *stack = mmap(NULL, CHILD_STACK_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return -1;
	sb->launch_arg = (struct launch_arg){ .plan = &sb->plan, .io = &sb->launch_io };
	pid_t pid = clone(launch_child_main, (char *)stack + CHILD_STACK_SIZE,
			  CLONE_VM | CLONE_PIDFD | SIGCHLD, &sb->launch_arg, &sb->pidfd);
	if (pid < 0) {
		int saved = errno;
		munmap(stack, CHILD_STACK_SIZE);
		errno = saved;
	} else
		sb->child_stack = stack;
	return pid;
}

/* Once the child has left our memory: its error pipe's end is closed (exec'd, or exited after
 * its memory was released), or it was reaped. */
static void release_stack(struct sandlock_sandbox *sb)
{
	if (sb->child_stack)
		munmap(sb->child_stack, CHILD_STACK_SIZE);
	sb->child_stack = NULL;
}

int launch_clone(struct sandlock_sandbox *sb, struct sandlock_error **reterr)
{
	int parked = !!(sb->flags & SANDLOCK_SPAWN_PARKED);
	int vm_mode = !parked && sb->tty_fd < 0;
	int r;

	sb->launch_io = (struct launch_io){
		.stdio = { sb->child_stdio[0], sb->child_stdio[1], sb->child_stdio[2] },
		.sock = sb->ctl[1],
		.errpipe = sb->errpipe[1],
		.parent = getpid(),
		.wait_go = !vm_mode,
		.pass_fds = sb->pass_fds,
		.n_pass_fds = sb->n_pass_fds,
		.fds_from_3 = !!(sb->flags & SANDLOCK_SPAWN_FDS_FROM_3),
	};
	sb->waits_go = !vm_mode;
	/* The timeout covers the launch: it counts from here (a parked sandbox's from its
	 * start), so a launch that stalls ends as a timeout. */
	if (!parked && (r = arm_timeout(sb->timer_fd, sb->timeout_ms)) < 0)
		return error_set(reterr, r, "timerfd_settime: %s", strerror(-r));
	pid_t pid = clone_child(sb, vm_mode);
	if (pid < 0) {
		sb->pidfd = -1;
		return error_set(reterr, negative_errno(), "clone: %s", strerror(errno));
	}

	sb->pid = pid;
	sb->sv.main_pid = pid;
	sb->ctl[1] = safe_close(sb->ctl[1]);
	sb->errpipe[1] = safe_close(sb->errpipe[1]);
	for (int i = 0; i < 3; i++)
		sb->child_stdio[i] = safe_close(sb->child_stdio[i]);
	/* Both sides set the group, so it exists whichever runs first (the shell idiom). */
	(void)setpgid(pid, pid);
	if (!sb->plan.name)
		snprintf(sb->name, sizeof(sb->name), "sandbox-%d", pid);

	int leader_pidfd = fcntl(sb->pidfd, F_DUPFD_CLOEXEC, 3);
	r = leader_pidfd < 0 ? negative_errno() : groups_track(&sb->groups, pid, leader_pidfd);
	/* ESRCH: the group is empty already, the command exited and was reaped (by the kernel,
	 * when the host ignores SIGCHLD): nothing of it is left to track. */
	if (r < 0 && r != -ESRCH)
		return error_set(reterr, r, "recording the sandbox's process group: %s",
				 strerror(-r));

	if (sb->tty_fd >= 0 && tcsetpgrp(sb->tty_fd, pid) < 0)
		return error_set(reterr, negative_errno(), "tcsetpgrp: %s", strerror(errno));

	return 0;
}

/* Wait for the child to be confined and take its listener. */
int launch_ready(struct sandlock_sandbox *sb, struct sandlock_error **reterr)
{
	int listener = recv_ready(sb, sb->plan.supervised);

	if (listener < 0) {
		int r = launch_poll(sb, LW_ERR, -1);
		if (r >= 0)
			r = read_launch_report(sb, reterr);
		if (r < 0)
			return r;
		/* Killed by the timeout before it was confined: nothing of it runs, and the
		 * event loop reports the timeout. */
		if (sb->timed_out)
			return 0;
		return sb->plan.listener_by_number && listener != -EPIPE
			       ? error_set(reterr, listener,
					   "taking the child's seccomp listener (pidfd_getfd, "
					   "which needs ptrace access to it): %s",
					   strerror(-listener))
			       : error_set(reterr, listener, "waiting for the child: %s",
					   strerror(-listener));
	}
	if (sb->plan.supervised) {
		supervisor_attach(&sb->sv, listener);
		sb->has_sv = 1;
		/* Confined by now (the listener comes after its filter): what /proc, the writes
		 * beneath a denied path's grant and a workdir's set-ID chmods are served to. It
		 * ends its launch with this thread's filters and two of its own (launch.c: the
		 * policy's, then close_launch_flag's, which it may not have installed yet).
		 */
		long own = -1;
		if (!sb->plan.proc.served && !sb->plan.fs.write_roots && !sb->cow)
			return 0;
		if (proc_status_number((pid_t)syscall(SYS_gettid), "Seccomp_filters", &own) < 0)
			own = -1; /* the snapshot matches nobody: fail closed */
		proc_ids_snapshot(&sb->sv, sb->pid, own < 0 ? -1 : own + 2);
	}
	return 0;
}

static void send_go(struct sandlock_sandbox *sb)
{
	char go = 'G';

	/* A child that died meanwhile makes this fail with EPIPE; its report says why. */
	(void)!send(sb->ctl[0], &go, 1, MSG_NOSIGNAL);
}

/* Let the child exec and read its verdict. A parked child is confined already (the parent
 * waited for its "ready" before parking). Otherwise "go" goes first: the child sends "ready"
 * before it starts waiting, so both are in flight at once and the launch costs one round trip
 * less. Until the verdict, the child's trapped calls are answered here (its close_range,
 * execve, a report's write, ...: whatever the policy traps), since the event loop starts only
 * after it. */
int launch_go(struct sandlock_sandbox *sb, int parked, struct sandlock_error **reterr)
{
	int r;

	if (parked && (r = arm_timeout(sb->timer_fd, sb->timeout_ms)) < 0)
		return error_set(reterr, r, "timerfd_settime: %s", strerror(-r));
	if (sb->waits_go)
		send_go(sb);
	if (!parked && (r = launch_ready(sb, reterr)) < 0)
		return r;
	r = launch_poll(sb, LW_ERR, -1);
	if (r >= 0)
		r = read_launch_report(sb, reterr);
	if (r == 0)
		release_stack(sb); /* exec'd */
	return r;
}

/* The launch failed: a child still waiting for "go" reads EOF and exits; one that failed a step
 * exits 127 by itself; anything else the parent gave up on is killed. */
void launch_abandon(struct sandlock_sandbox *sb, const struct sandlock_error *err)
{
	sb->ctl[0] = safe_close(sb->ctl[0]);
	if (sb->pidfd >= 0 && !(err && err->step))
		(void)sys_pidfd_send_signal(sb->pidfd, SIGKILL, NULL, 0);
	reap_child(sb, 0);
	if (sb->exit_kind != SANDLOCK_EXIT_RUNNING || sb->pidfd < 0)
		release_stack(sb);
}
