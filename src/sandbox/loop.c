/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loop: the sandbox thread's event loop, from the launch to the command's end: the listener
 * (polled beside the epoll set, answered by supervisor/), the child's pidfd, captured output,
 * the timeout, max_cpu's duty cycle, max_memory's periodic check, the control socket and a
 * copy-up's completion. When the command exits, the rest of the sandbox is killed and output is
 * drained for a grace period.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "control-serve.h"
#include "fd-util.h"
#include "sandbox-internal.h"
#include "sandbox.h"
#include "supervisor/handlers/handlers.h"
#include "supervisor/policy-fn.h"

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

void on_listener(struct sandlock_sandbox *sb, short revents)
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
	case EV_POLICY_FN:
		policy_fn_on_ready(&sb->sv);
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

/* The sandbox's descriptors in the epoll set, its timers armed; a limit that cannot be kept
 * ends the sandbox (fail closed). */
static void loop_watch(struct sandlock_sandbox *sb, struct loop *l)
{
	/* A sandbox held to some CPUs (cpu_cores, num_cpus) has its supervisor on the same ones:
	 * its notifications then wake a thread on a CPU the child just left, not one that may be
	 * idle (waking an idle CPU took ~50 us per trapped call on a VM against ~10 us). Workers
	 * inherit it. */
	if (sb->plan.has_cpus)
		(void)pthread_setaffinity_np(pthread_self(), sizeof(sb->plan.cpus), &sb->plan.cpus);
	l->timer = TAKE_FD(sb->timer_fd); /* armed at the launch */
	/* A named sandbox claimed its directory before the clone (sandbox_spawn); a pid-named
	 * one can only now that the pid is known. Done here, on the sandbox thread, while the
	 * command starts, rather than on the launch path; nothing here may fail the sandbox: a
	 * claim that does not succeed leaves it without a runtime directory. */
	if (sb->plan.control && !sb->plan.name)
		(void)control_claim(&sb->control, sb->name, sb->pid, NULL);
	else
		control_publish(&sb->control, sb->pid);
	epoll_add(l->epfd, sb->pidfd, EV_PIDFD);
	epoll_add(l->epfd, sb->out_r, EV_OUT);
	epoll_add(l->epfd, sb->err_r, EV_ERR);
	epoll_add(l->epfd, l->timer, EV_TIMER);
	epoll_add(l->epfd, sb->control.fd, EV_CONTROL);
	epoll_add(l->epfd, sb->cow_copy_fd, EV_COW_COPY);
	/* policy_fn: held calls from here on (the launch's own exec is not one); the calls the
	 * callback allowed come back through this descriptor. */
	epoll_add(l->epfd, policy_fn_arm(&sb->sv), EV_POLICY_FN);
	if (sb->memory_fd >= 0) {
		/* max_memory: what no trapped call shows (memory made writable later, pages
		 * touched) is caught every 100 ms. */
		struct itimerspec its = { .it_value = { .tv_nsec = 100000000 },
					  .it_interval = { .tv_nsec = 100000000 } };
		if (timerfd_settime(sb->memory_fd, 0, &its, NULL) == 0)
			epoll_add(l->epfd, sb->memory_fd, EV_MEMORY);
		else { /* the limit cannot be kept: fail closed */
			sb->timed_out = 1;
			(void)sandbox_signal_all(sb, SIGKILL);
		}
	}
	if (sb->throttle_fd >= 0 && throttle_start(sb) == 0)
		epoll_add(l->epfd, sb->throttle_fd, EV_THROTTLE);
	else if (sb->throttle_fd >= 0) { /* the limit cannot be kept: fail closed */
		sb->timed_out = 1;
		(void)sandbox_signal_all(sb, SIGKILL);
	}
}

void event_loop(struct sandlock_sandbox *sb)
{
	struct loop l = { .epfd = epoll_create1(EPOLL_CLOEXEC), .timer = -1, .deadline = -1 };

	if (l.epfd < 0) {
		/* Cannot supervise: end the sandbox rather than leave it unanswered. */
		(void)sandbox_signal_all(sb, SIGKILL);
		reap_child(sb, 0);
		return;
	}
	loop_watch(sb, &l);
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
