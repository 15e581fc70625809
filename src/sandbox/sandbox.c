/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sandbox: spawn, the launch handshake, and the per-sandbox thread.
 *
 *  launcher (the main thread spawning, else the sandbox thread)        child
 *  plan_build, pipes, clone(CLONE_PIDFD) -------------------------->  close host fds, confine
 *  setpgid, record the group, tty                                     "ready" (+ listener)
 *  [parked: take "ready", wait for sandlock_sandbox_start()]          wait for "go"
 *  "go" ---------------------------------------------------------->  close fds, execve
 *  take "ready" + listener; error pipe: EOF = exec'd
 *  sandbox thread: event loop until the sandbox ends
 *
 * PDEATHSIG follows the thread that cloned the child, so only a thread that outlives the
 * sandbox may launch: the main thread, or the sandbox's own thread (for spawns from other
 * threads, and for parked spawns, whose launch finishes later on that thread).
 *
 * When the command exits, whatever is left of the sandbox is killed (every recorded process
 * group), captured output is drained, and the outcome is published.
 */
#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "control-serve.h"
#include "fd-util.h"
#include "launch/launch.h"
#include "policy/policy.h"
#include "sandbox.h"
#include "supervisor/child.h"
#include "supervisor/handlers/handlers.h"
#include "supervisor/notif.h"
#include "syscall-util.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* How long to keep draining captured output after the command exited and the rest of the
 * sandbox was killed. Only a descriptor passed out of the sandbox can keep a pipe open that
 * long. */
#define DRAIN_GRACE_MS 2000

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- launch (sandbox thread) ------------------------------------------------------------- */

enum { LW_CTL, LW_ERR, LW_LISTENER, LW_TIMER, LW_N };

static void on_listener(struct sandlock_sandbox *sb, short revents);

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

static void reap_child(struct sandlock_sandbox *sb, int options)
{
	siginfo_t si = { 0 };

	if (sb->pidfd < 0 || sb->exit_kind != SANDLOCK_EXIT_RUNNING)
		return;
	if (waitid((idtype_t)P_PIDFD, (id_t)sb->pidfd, &si, WEXITED | options) < 0) {
		if (errno == ECHILD)
			reaped_elsewhere(sb);
		return;
	}
	if (si.si_pid != 0)
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

static int launch_clone(struct sandlock_sandbox *sb, struct sandlock_error **reterr)
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
static int launch_ready(struct sandlock_sandbox *sb, struct sandlock_error **reterr)
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
		if (!sb->plan.net.proc_mediated && !sb->plan.net.write_roots && !sb->cow)
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
static int launch_go(struct sandlock_sandbox *sb, int parked, struct sandlock_error **reterr)
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

/* ---- event loop (sandbox thread) --------------------------------------------------------- */

static int buffer_drain(struct buffer *b, int fd)
{
	for (;;) {
		if (b->cap - b->len < 65536) {
			size_t ncap = b->cap ? b->cap * 2 : 65536;
			uint8_t *n = realloc(b->data, ncap);
			if (!n)
				return -ENOMEM;
			b->data = n;
			b->cap = ncap;
		}
		ssize_t k = read(fd, b->data + b->len, b->cap - b->len);
		if (k > 0) {
			b->len += (size_t)k;
			continue;
		}
		if (k == 0)
			return 0; /* EOF */
		if (errno == EINTR)
			continue;
		return errno == EAGAIN ? 1 : negative_errno();
	}
}

static void epoll_add(int epfd, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

	if (fd >= 0)
		(void)epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

struct loop {
	int epfd;
	int timer;
	int main_done;
	int64_t deadline;
};

/* max_cpu: the sandbox runs max_cpu ms of each THROTTLE_PERIOD_MS, then every process group is
 * stopped (SIGSTOP) for the rest of the period and continued (SIGCONT) at its end, unless
 * someone paused it meanwhile (sandlock_sandbox_pause), whose SIGCONT it then waits for. */
#define THROTTLE_PERIOD_MS 100

/* Arm @fd to fire at @at (CLOCK_MONOTONIC, ns): an absolute schedule, so that the periods do
 * not stretch by the wake-up latency of each tick. */
static int arm_at(int fd, int64_t at)
{
	struct itimerspec its = {
		.it_value = { .tv_sec = (time_t)(at / 1000000000),
			      .tv_nsec = (long)(at % 1000000000) },
	};
	return timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL) < 0 ? negative_errno() : 0;
}

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int throttle_start(struct sandlock_sandbox *sb)
{
	sb->throttle_period = mono_ns();
	return arm_at(sb->throttle_fd, sb->throttle_period + (int64_t)sb->plan.max_cpu * 1000000);
}

static void throttle_tick(struct sandlock_sandbox *sb)
{
	uint64_t ticks;
	int64_t period = (int64_t)THROTTLE_PERIOD_MS * 1000000;
	int64_t run = (int64_t)sb->plan.max_cpu * 1000000;

	if (read(sb->throttle_fd, &ticks, sizeof(ticks)) < 0 && errno == EAGAIN)
		return; /* woken for nothing */
	/* The signal and the pause flag are read together (sandbox_signal). */
	pthread_mutex_lock(&sb->throttle_lock);
	int paused = __atomic_load_n(&sb->paused, __ATOMIC_RELAXED);
	if (!sb->throttled) {
		if (!paused)
			(void)sandbox_signal_all(sb, SIGSTOP);
		sb->throttled = 1;
	} else {
		if (!paused)
			(void)sandbox_signal_all(sb, SIGCONT);
		sb->throttled = 0;
		sb->throttle_period += period;
	}
	pthread_mutex_unlock(&sb->throttle_lock);
	/* Late by more than a period (the host was busy): start again from now. */
	if (mono_ns() > sb->throttle_period + period)
		sb->throttle_period = mono_ns() - (sb->throttled ? run : 0);
	int r = arm_at(sb->throttle_fd, sb->throttle_period + (sb->throttled ? period : run));
	if (r < 0 && sb->throttled) { /* cannot end the stop: let it run rather than hang */
		pthread_mutex_lock(&sb->throttle_lock);
		if (!__atomic_load_n(&sb->paused, __ATOMIC_RELAXED))
			(void)sandbox_signal_all(sb, SIGCONT);
		sb->throttled = 0;
		pthread_mutex_unlock(&sb->throttle_lock);
	}
}

static void on_listener(struct sandlock_sandbox *sb, short revents)
{
	if ((revents & POLLIN) && supervisor_handle(&sb->sv) == 0)
		return;
	if (revents & (POLLHUP | POLLERR | POLLNVAL | POLLIN)) {
		/* No task uses the filter any more, or the listener broke. */
		sb->sv.listener = safe_close(sb->sv.listener);
		sb->has_sv = 0;
	}
}

static void on_event(struct sandlock_sandbox *sb, struct loop *l, const struct epoll_event *ev)
{
	int *pipe_fd;

	switch (ev->data.u64) {
	case EV_PIDFD:
		reap_child(sb, WNOHANG);
		if (sb->exit_kind == SANDLOCK_EXIT_RUNNING)
			break;
		(void)epoll_ctl(l->epfd, EPOLL_CTL_DEL, sb->pidfd, NULL);
		l->main_done = 1;
		l->deadline = now_ms() + DRAIN_GRACE_MS;
		/* The command is done: so is the rest of the sandbox. */
		(void)sandbox_signal_all(sb, SIGKILL);
		break;
	case EV_TIMER:
		if (!l->main_done) {
			sb->timed_out = 1;
			(void)sandbox_signal_all(sb, SIGKILL);
		}
		l->timer = safe_close(l->timer);
		break;
	case EV_THROTTLE:
		if (!l->main_done)
			throttle_tick(sb);
		break;
	case EV_MEMORY: {
		uint64_t ticks;
		if (read(sb->memory_fd, &ticks, sizeof(ticks)) > 0 && !l->main_done)
			memory_check(&sb->sv);
		break;
	}
	case EV_CONTROL:
		control_on_listen(sb, l->epfd);
		break;
	case EV_COW_COPY:
		cow_wait_on_done(&sb->sv);
		break;
	case EV_OUT:
	case EV_ERR:
		pipe_fd = ev->data.u64 == EV_OUT ? &sb->out_r : &sb->err_r;
		if (buffer_drain(ev->data.u64 == EV_OUT ? &sb->out : &sb->err, *pipe_fd) <= 0)
			*pipe_fd =
				safe_close(*pipe_fd); /* EOF (or out of memory: stop capturing) */
		break;
	default:
		if (ev->data.u64 >= EV_CLIENT && ev->data.u64 < EV_CLIENT + CONTROL_CLIENTS)
			control_on_client(sb, l->epfd, (int)(ev->data.u64 - EV_CLIENT));
		break;
	}
}

static void event_loop(struct sandlock_sandbox *sb)
{
	struct loop l = { .epfd = epoll_create1(EPOLL_CLOEXEC), .timer = -1, .deadline = -1 };

	if (l.epfd < 0) {
		/* Cannot supervise: end the sandbox rather than leave it unanswered. */
		(void)sandbox_signal_all(sb, SIGKILL);
		reap_child(sb, 0);
		return;
	}
	/* A sandbox held to some CPUs (cpu_cores, num_cpus) has its supervisor on the same ones:
	 * its notifications then wake a thread on a CPU the child just left, not one that may be
	 * idle (waking an idle CPU took ~50 us per trapped call on a VM against ~10 us). Workers
	 * inherit it. */
	if (sb->plan.has_cpus)
		(void)pthread_setaffinity_np(pthread_self(), sizeof(sb->plan.cpus), &sb->plan.cpus);
	l.timer = TAKE_FD(sb->timer_fd); /* armed at the launch */
	/* A named sandbox claimed its directory before the clone (sandbox_spawn); a pid-named
	 * one can only now that the pid is known. Done here, on the sandbox thread, while the
	 * command starts, rather than on the launch path; nothing here may fail the sandbox: a
	 * claim that does not succeed leaves it without a runtime directory. */
	if (sb->plan.control && !sb->plan.name)
		(void)control_claim(&sb->control, sb->name, sb->pid, NULL);
	else
		control_publish(&sb->control, sb->pid);
	epoll_add(l.epfd, sb->pidfd, EV_PIDFD);
	epoll_add(l.epfd, sb->out_r, EV_OUT);
	epoll_add(l.epfd, sb->err_r, EV_ERR);
	epoll_add(l.epfd, l.timer, EV_TIMER);
	epoll_add(l.epfd, sb->control.fd, EV_CONTROL);
	epoll_add(l.epfd, sb->cow_copy_fd, EV_COW_COPY);
	if (sb->memory_fd >= 0) {
		/* max_memory: what no trapped call shows (memory made writable later, pages
		 * touched) is caught every 100 ms. */
		struct itimerspec its = { .it_value = { .tv_nsec = 100000000 },
					  .it_interval = { .tv_nsec = 100000000 } };
		if (timerfd_settime(sb->memory_fd, 0, &its, NULL) == 0)
			epoll_add(l.epfd, sb->memory_fd, EV_MEMORY);
		else { /* the limit cannot be kept: fail closed */
			sb->timed_out = 1;
			(void)sandbox_signal_all(sb, SIGKILL);
		}
	}
	if (sb->throttle_fd >= 0 && throttle_start(sb) == 0)
		epoll_add(l.epfd, sb->throttle_fd, EV_THROTTLE);
	else if (sb->throttle_fd >= 0) { /* the limit cannot be kept: fail closed */
		sb->timed_out = 1;
		(void)sandbox_signal_all(sb, SIGKILL);
	}

	for (;;) {
		int wait_ms = control_retry(sb, l.epfd);
		if (l.main_done) {
			if (sb->out_r < 0 && sb->err_r < 0)
				break;
			int64_t left = l.deadline - now_ms();
			if (left <= 0)
				break;
			if (wait_ms < 0 || left < wait_ms)
				wait_ms = (int)left;
		}
		/* The listener is polled beside the epoll set, not in it: a notification then
		 * wakes this thread on the CPU of the task that trapped, which is about to sleep
		 * (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP reaches poll()'s waiter as WF_CURRENT_CPU;
		 * epoll turns it into a WF_SYNC hint, and the scheduler then often wakes us on
		 * another CPU: an IPI, and on a VM an idle vCPU's wake-up, per trapped call). */
		struct pollfd pfd[2] = { { .fd = sb->has_sv ? sb->sv.listener : -1,
					   .events = POLLIN },
					 { .fd = l.epfd, .events = POLLIN } };
		int n = poll(pfd, ELEMENTSOF(pfd), wait_ms);
		if (n < 0 && errno != EINTR)
			break;
		if (n <= 0)
			continue;
		if (pfd[0].revents)
			on_listener(sb, pfd[0].revents);
		if (!pfd[1].revents)
			continue;
		struct epoll_event evs[8];
		n = epoll_wait(l.epfd, evs, ELEMENTSOF(evs), 0);
		for (int i = 0; i < n; i++)
			on_event(sb, &l, &evs[i]);
	}
	safe_close(l.timer);
	safe_close(l.epfd);
	if (sb->exit_kind == SANDLOCK_EXIT_RUNNING) {
		(void)sandbox_signal_all(sb, SIGKILL);
		reap_child(sb, 0);
	}
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

static void finish(struct sandlock_sandbox *sb)
{
	/* No connect made on behalf of a sandbox that has ended goes on (whether or not the
	 * listener is still open: it closes itself on a hang-up). */
	supervisor_stop_workers(&sb->sv);
	if (sb->sv.prepared)
		port_map_clear(&sb->sv.ports); /* the ports are the host's again */
	if (sb->has_sv) {
		/* Close the listener now: trapped calls of stragglers fail instead of waiting. */
		sb->sv.listener = safe_close(sb->sv.listener);
		sb->has_sv = 0;
	}
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

/* The launch failed: a child still waiting for "go" reads EOF and exits; one that failed a step
 * exits 127 by itself; anything else the parent gave up on is killed. */
static void launch_abandon(struct sandlock_sandbox *sb, const struct sandlock_error *err)
{
	sb->ctl[0] = safe_close(sb->ctl[0]);
	if (sb->pidfd >= 0 && !(err && err->step))
		(void)sys_pidfd_send_signal(sb->pidfd, SIGKILL, NULL, 0);
	reap_child(sb, 0);
	if (sb->exit_kind != SANDLOCK_EXIT_RUNNING || sb->pidfd < 0)
		release_stack(sb);
}

static void record_launch(struct sandlock_sandbox *sb, int r, struct sandlock_error *err)
{
	pthread_mutex_lock(&sb->lock);
	sb->launch_r = r;
	sb->launch_err = err;
	pthread_mutex_unlock(&sb->lock);
	publish_state(sb, r == 0 ? SANDBOX_RUNNING : SANDBOX_FAILED);
}

/* The sandbox thread of a launch done by the caller: the event loop only. */
static void *loop_thread(void *arg)
{
	struct sandlock_sandbox *sb = arg;

	event_loop(sb);
	finish(sb);
	return NULL;
}

/* The sandbox thread that also launches (parked sandboxes, callers other than the main thread). */
static void *sandbox_thread(void *arg)
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

/* ---- spawn and control (caller threads) -------------------------------------------------- */

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

	int r = plan_build(p, argv, &sb->plan, reterr);
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
	if (r == 0 && sb->plan.supervised) {
		r = supervisor_prepare(&sb->sv, sb->name, &sb->groups, &sb->plan.net);
		if (r < 0)
			r = error_set(reterr, r, "supervisor: %s", strerror(-r));
		sb->sv.kill_cause = &sb->kill_cause;
		sb->sv.hostname_served = sb->plan.name != NULL;
		sb->sv.num_cpus = sb->plan.num_cpus;
		sb->sv.max_memory = sb->plan.max_memory;
		sb->sv.deterministic_dirs = sb->plan.deterministic_dirs;
		sb->sv.meta.userns = sb->plan.has_ids;
		if (sb->plan.has_random_seed)
			random_init(&sb->sv, sb->plan.random_seed);
		if (r == 0 && sb->plan.has_time_start &&
		    (r = vtime_init(&sb->sv, sb->plan.time_start_sec, sb->plan.time_start_nsec)) <
			    0)
			r = error_set(reterr, r, "time_start: %s", strerror(-r));
		if (r == 0)
			sb->sv.fs_granted = TAKE_PTR(sb->plan.net.carved);
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
	}
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
	supervisor_done(&sb->sv);
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
