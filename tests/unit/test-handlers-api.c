/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-handlers-api: extension handlers through the public header only. The sandboxed command
 * is this binary again (argv[1] "child", a mode), which makes one call and exits with what it
 * saw (0: as expected). Each behaviour is checked against the same command without the handler
 * (the negative control): errno and return-value answers, a raising handler under the kill and
 * EIO exception policies, no undoing a built-in denial (connect without a rule), registration
 * refused for a blocked, an extra-denied, an argument-filtered and an unknown syscall, bytes
 * injected for an open of a path that exists nowhere (the path read from the child's memory),
 * a descriptor injected, a buffer written, a held call answered from a worker, a kill action,
 * and the deferred bound (64 in flight, then EAGAIN).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <seccomp.h>

#include "plan/traps.h"
#include "sandlock.h"
#include "spawn-helpers.h"
#include "tap.h"

#define RETVAL 4242
#define VIRTUAL_PATH "/sandlock-handler-virtual"
#define VIRTUAL_BYTES "bytes from a handler\n"
#define PIPE_BYTES "through an injected pipe"
#define THREADS 80

/* ---- the child --------------------------------------------------------------------------- */

static pthread_barrier_t child_barrier;
static atomic_int child_ok, child_eagain;

static void *child_thread(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&child_barrier);
	long r = syscall(SYS_sched_yield);
	if (r == 0)
		atomic_fetch_add(&child_ok, 1);
	else if (errno == EAGAIN)
		atomic_fetch_add(&child_eagain, 1);
	return NULL;
}

static int child_many(void)
{
	pthread_t t[THREADS];

	pthread_barrier_init(&child_barrier, NULL, THREADS);
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, child_thread, NULL) != 0)
			return 100;
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	fprintf(stderr, "child: %d answered, %d EAGAIN\n", child_ok, child_eagain);
	return child_ok == 64 && child_eagain == THREADS - 64 ? 0 : 1;
}

static int child_read_fd(int fd, const char *want)
{
	char buf[128] = "";
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	return n == (ssize_t)strlen(want) && memcmp(buf, want, (size_t)n) == 0 ? 0 : 1;
}

static int child_connect(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(9) };
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	if (connect(s, (struct sockaddr *)&sin, sizeof(sin)) == 0)
		return 0;
	return errno; /* the errno the connect got */
}

static int child(const char *mode)
{
	if (strcmp(mode, "getppid") == 0)
		return getppid() == RETVAL ? 0 : 1;
	if (strcmp(mode, "yield") == 0) /* the errno sched_yield got (0: none) */
		return syscall(SYS_sched_yield) < 0 ? errno : 0;
	if (strcmp(mode, "connect") == 0)
		return child_connect();
	if (strcmp(mode, "open") == 0) {
		int fd = open(VIRTUAL_PATH, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && write(fd, "x", 1) >= 0)
			return 2; /* sealed: never writable */
		return child_read_fd(fd, VIRTUAL_BYTES);
	}
	if (strcmp(mode, "dup") == 0)
		return child_read_fd((int)syscall(SYS_dup, 1000), PIPE_BYTES);
	if (strcmp(mode, "getcwd") == 0) {
		char buf[64] = "";
		long n = syscall(SYS_getcwd, buf, sizeof(buf));
		return n == 6 && strcmp(buf, "/virt") == 0 ? 0 : 1;
	}
	if (strcmp(mode, "getpgid") == 0)
		return syscall(SYS_getpgid, 0) == 777 ? 0 : 1;
	if (strcmp(mode, "prlimit-self") == 0 || strcmp(mode, "prlimit-init") == 0) {
		/* pid 0 with no new limit: no built-in row traps it; pid 1 with one: the built-in
		 * route for another process's limits decides it. */
		struct rlimit lim = { 0 };
		int init = strcmp(mode, "prlimit-init") == 0;
		long r = syscall(SYS_prlimit64, init ? 1 : 0, RLIMIT_RTTIME, init ? &lim : NULL,
				 init ? NULL : &lim);
		return r < 0 ? errno : 0;
	}
	if (strcmp(mode, "many") == 0)
		return child_many();
	return 99;
}

/* ---- the handlers ------------------------------------------------------------------------ */

static atomic_int calls;

static int h_return(const sandlock_notif_t *n, sandlock_mem_t *m, sandlock_action_t *a, void *u)
{
	(void)n, (void)m;
	atomic_fetch_add(&calls, 1);
	return sandlock_action_return(a, (int64_t)(intptr_t)u);
}

static int h_errno(const sandlock_notif_t *n, sandlock_mem_t *m, sandlock_action_t *a, void *u)
{
	(void)n, (void)m;
	return sandlock_action_errno(a, (int32_t)(intptr_t)u);
}

static int h_raise(const sandlock_notif_t *n, sandlock_mem_t *m, sandlock_action_t *a, void *u)
{
	(void)n, (void)m, (void)a, (void)u;
	return 1;
}

/* Kill the caller's process group (u NULL), or the test's own, outside the sandbox (u set). */
static int h_kill_group(const sandlock_notif_t *n, sandlock_mem_t *m, sandlock_action_t *a,
			void *u)
{
	(void)m;
	int r = sandlock_action_kill(a, SIGKILL, (int32_t)getpgid(u ? 0 : n->pid));
	return r < 0 ? sandlock_action_errno(a, -r) : 0;
}

static int h_two(const sandlock_notif_t *n, sandlock_mem_t *m, sandlock_action_t *a, void *u)
{
	(void)n, (void)m, (void)u;
	sandlock_action_continue(a);
	return sandlock_action_errno(a, EXDEV) == -EALREADY ? 0 : 1;
}

static int h_continue(const sandlock_notif_t *n, sandlock_mem_t *m, sandlock_action_t *a, void *u)
{
	(void)n, (void)m, (void)u;
	atomic_fetch_add(&calls, 1);
	return sandlock_action_continue(a);
}

/* openat(dirfd, path, ...): the path read from the child, the bytes injected for one. */
static int h_open(const sandlock_notif_t *n, sandlock_mem_t *m, sandlock_action_t *a, void *u)
{
	char path[256];

	(void)u;
	if (sandlock_mem_read_cstr(m, n->args[1], path, sizeof(path)) < 0 ||
	    strcmp(path, VIRTUAL_PATH) != 0)
		return sandlock_action_continue(a);
	atomic_fetch_add(&calls, 1);
	return sandlock_action_inject_bytes(a, VIRTUAL_BYTES, strlen(VIRTUAL_BYTES), 0);
}

static int h_inject_fd(const sandlock_notif_t *n, sandlock_mem_t *m, sandlock_action_t *a, void *u)
{
	(void)n, (void)m;
	return sandlock_action_inject_fd(a, (int)(intptr_t)u, O_CLOEXEC);
}

/* getcwd(buf, size): "/virt" written into the child's buffer, its length answered. */
static int h_getcwd(const sandlock_notif_t *n, sandlock_mem_t *m, sandlock_action_t *a, void *u)
{
	(void)u;
	if (n->args[1] < 6 || sandlock_mem_write(m, n->args[0], "/virt", 6) != 6)
		return 1;
	return sandlock_action_return(a, 6);
}

static int h_hold(const sandlock_notif_t *n, sandlock_mem_t *m, sandlock_action_t *a, void *u)
{
	(void)m, (void)u;
	if (!(n->flags & SANDLOCK_NOTIF_HELD))
		return sandlock_action_hold(a);
	return sandlock_action_return(a, 777);
}

static int h_kill(const sandlock_notif_t *n, sandlock_mem_t *m, sandlock_action_t *a, void *u)
{
	(void)n, (void)m, (void)u;
	return sandlock_action_kill(a, SIGTERM, 0);
}

static pthread_mutex_t many_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t many_cond = PTHREAD_COND_INITIALIZER;
static int many_entered;

/* Deferred: each call waits until 64 are in flight (or 10 s), then half a second more, so the
 * calls beyond arrive while those are held. */
static int h_many(const sandlock_notif_t *n, sandlock_mem_t *m, sandlock_action_t *a, void *u)
{
	struct timespec until;

	(void)n, (void)m, (void)u;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&many_lock);
	if (++many_entered >= 64)
		pthread_cond_broadcast(&many_cond);
	while (many_entered < 64 && pthread_cond_timedwait(&many_cond, &many_lock, &until) == 0)
		;
	pthread_mutex_unlock(&many_lock);
	usleep(500 * 1000);
	return sandlock_action_return(a, 0);
}

static int dropped;
static void drop(void *u)
{
	(void)u;
	dropped++;
}

/* ---- the parent -------------------------------------------------------------------------- */

static char self[PATH_MAX];

/* Run this binary's @mode under @p with @h on @name (NULL: no handler): the exit status as
 * 0..255, 1000 + signal, or the negative errno of the run (its message in @msg). */
static int run(const sandlock_policy_t *p, const char *mode, const char *name,
	       sandlock_handler_t *h, char *msg, size_t msg_size)
{
	const char *argv[] = { self, "child", mode };
	sandlock_handler_reg_t reg = { .syscall = name, .handler = h };
	sandlock_sandbox_t *sb = NULL;
	sandlock_error_t *err = NULL;

	int r = sandlock_run_with_handlers(p, NULL, argv, 3, &reg, h ? 1 : 0, &sb, &err);
	if (msg)
		snprintf(msg, msg_size, "%s", err ? sandlock_error_message(err) : "");
	sandlock_error_free(err);
	if (r < 0)
		return r;
	int kind = (int)sandlock_sandbox_exit_kind(sb);
	r = kind == SANDLOCK_EXIT_CODE	   ? sandlock_sandbox_exit_code(sb)
	    : kind == SANDLOCK_EXIT_SIGNAL ? 1000 + sandlock_sandbox_exit_signal(sb)
					   : -EIO;
	sandlock_sandbox_free(sb);
	return r;
}

static int run_simple(const sandlock_policy_t *p, const char *mode, const char *name,
		      sandlock_handler_fn fn, void *u, uint32_t on_exception)
{
	sandlock_handler_t *h = sandlock_handler_new(fn, u, NULL, on_exception);
	int r = run(p, mode, name, h, NULL, 0);
	sandlock_handler_free(h);
	return r;
}

static void answers(const sandlock_policy_t *p)
{
	is_int(run(p, "getppid", NULL, NULL, NULL, 0), 1,
	       "getppid without a handler: the real one");
	atomic_store(&calls, 0);
	is_int(run_simple(p, "getppid", "getppid", h_return, (void *)(intptr_t)RETVAL, 0), 0,
	       "a return-value handler on getppid: the child sees %d", RETVAL);
	ok(atomic_load(&calls) >= 1, "the handler was called");

	is_int(run(p, "yield", NULL, NULL, NULL, 0), 0, "sched_yield without a handler: 0");
	is_int(run_simple(p, "yield", "sched_yield", h_errno, (void *)(intptr_t)EXDEV, 0), EXDEV,
	       "an errno handler: the child gets EXDEV");
	is_int(run_simple(p, "yield", "sched_yield", h_raise, NULL, SANDLOCK_EXCEPTION_KILL),
	       1000 + SIGKILL, "a raising handler, KILL policy: the child dies of SIGKILL");
	is_int(run_simple(p, "yield", "sched_yield", h_raise, NULL, SANDLOCK_EXCEPTION_DENY_EIO),
	       EIO, "a raising handler, DENY_EIO: EIO");
	is_int(run_simple(p, "yield", "sched_yield", h_kill_group, NULL, 0), 1000 + SIGKILL,
	       "a kill of the caller's process group: the child dies of SIGKILL");
	is_int(run_simple(p, "yield", "sched_yield", h_kill_group, (void *)1, 0), EPERM,
	       "a kill of a group outside the sandbox: EPERM");
	is_int(run_simple(p, "yield", "sched_yield", h_raise, NULL, SANDLOCK_EXCEPTION_DENY_EPERM),
	       EPERM, "a raising handler, DENY_EPERM: EPERM");
	is_int(run_simple(p, "yield", "sched_yield", h_raise, NULL, SANDLOCK_EXCEPTION_CONTINUE), 0,
	       "a raising handler, CONTINUE: the call runs");
	is_int(run_simple(p, "yield", "sched_yield", h_two, NULL, SANDLOCK_EXCEPTION_DENY_EIO), EIO,
	       "two actions set: an exception (EIO)");
	is_int(run_simple(p, "getpgid", "getpgid", h_hold, NULL, SANDLOCK_EXCEPTION_DENY_EIO), 0,
	       "a held call is answered from the worker (777)");
	is_int(run_simple(p, "yield", "sched_yield", h_kill, NULL, 0), 1000 + SIGTERM,
	       "a kill action: the child dies of SIGTERM");
}

/* A handler's denial is in the run's denial table, with reason "handler". */
static void denial_event(const sandlock_policy_t *p)
{
	const char *argv[] = { self, "child", "yield" };
	sandlock_handler_t *h = sandlock_handler_new(h_errno, (void *)(intptr_t)EXDEV, NULL, 0);
	sandlock_handler_reg_t reg = { .syscall = "sched_yield", .handler = h };
	sandlock_sandbox_t *sb = NULL;
	sandlock_event_t ev = { .size = sizeof(ev) };
	uint64_t count = 0;

	is_int(sandlock_run_with_handlers(p, "handler-events", argv, 3, &reg, 1, &sb, NULL), 0,
	       "run_with_handlers with a name");
	is_str(sb ? sandlock_sandbox_name(sb) : "", "handler-events", "the sandbox has the name");
	size_t n = sb ? sandlock_sandbox_denial_count(sb) : 0, i = 0;
	while (i < n && (sandlock_sandbox_denial(sb, i, &ev, &count) < 0 || !ev.syscall ||
			 strcmp(ev.syscall, "sched_yield") != 0))
		i++;
	ok(i < n, "the handler's denial is recorded");
	if (i < n) {
		is_str(ev.reason, "handler", "its reason");
		is_int(ev.error, EXDEV, "its errno");
	}
	sandlock_sandbox_free(sb);
	sandlock_handler_free(h);
}

static void no_undo(const sandlock_policy_t *p)
{
	int plain = run(p, "connect", NULL, NULL, NULL, 0);
	ok(plain > 0 && plain != ECONNREFUSED, "connect without a rule: refused (errno %d)", plain);
	atomic_store(&calls, 0);
	is_int(run_simple(p, "connect", "connect", h_continue, NULL, SANDLOCK_EXCEPTION_CONTINUE),
	       plain, "a handler answering continue cannot undo the built-in denial");
	is_int(atomic_load(&calls), 0, "the handler is not consulted after a built-in denial");
}

/* A syscall with an argument-filtered built-in row: the built-in route takes only the calls
 * its filter would have trapped, the handler the rest. */
static int h_errno_count(const sandlock_notif_t *n, sandlock_mem_t *m, sandlock_action_t *a,
			 void *u)
{
	(void)m, (void)u;
	/* Only RLIMIT_RTTIME's: the launch (and ASan's runtime) ask about limits of their own. */
	if (n->args[1] != RLIMIT_RTTIME)
		return sandlock_action_continue(a);
	if (n->args[0] == 1)
		atomic_fetch_add(&calls, 1);
	return sandlock_action_errno(a, EXDEV);
}

static void builtin_filter(const sandlock_policy_t *p)
{
	is_int(run(p, "prlimit-self", NULL, NULL, NULL, 0), 0, "prlimit64 on itself: 0");
	int init = run(p, "prlimit-init", NULL, NULL, NULL, 0);
	ok(init > 0, "prlimit64 setting pid 1's limit: refused (errno %d)", init);
	is_int(run_simple(p, "prlimit-self", "prlimit64", h_errno_count, NULL, 0), EXDEV,
	       "a call no built-in row traps reaches the handler");
	atomic_store(&calls, 0);
	is_int(run_simple(p, "prlimit-init", "prlimit64", h_errno_count, NULL, 0), init,
	       "a call the built-in route refuses keeps its answer");
	is_int(atomic_load(&calls), 0, "and the handler is not consulted for it (pid 1)");
}

static void registration(sandlock_policy_t *p)
{
	char msg[512];
	sandlock_handler_t *h = sandlock_handler_new(h_continue, NULL, NULL, 0);

	is_int(run(p, "yield", "mount", h, msg, sizeof(msg)), -EINVAL,
	       "a handler on mount: -EINVAL");
	is_str(msg,
	       "handlers[0]: mount is blocked by the policy (the default blocklist or "
	       "extra_deny_syscalls): a handler on it would never run",
	       "the message names it");
	is_int(run(p, "yield", "no_such_call", h, msg, sizeof(msg)), -EINVAL, "an unknown name");
	is_str(msg,
	       "handlers[0]: unknown syscall \"no_such_call\" (a name of this architecture, as in "
	       "syscalls(2))",
	       "the message names it");
	is_int(run(p, "yield", "ioctl", h, msg, sizeof(msg)), -EINVAL,
	       "ioctl (filtered by argument): -EINVAL");
#ifdef SYS_fork
	is_int(run(p, "yield", "fork", h, msg, sizeof(msg)), -EINVAL,
	       "fork (counted for the process limit): -EINVAL");
	is_str(msg,
	       "handlers[0]: fork: not supported: the process limit counts each call before a "
	       "handler could refuse it",
	       "the message names it");
#endif

	const char *argv[] = { self, "child", "yield" };
	sandlock_handler_reg_t reg = { .syscall = NULL, .nr = 99999, .handler = h };
	sandlock_sandbox_t *sb = NULL;
	sandlock_error_t *err = NULL;
	is_int(sandlock_run_with_handlers(p, NULL, argv, 3, &reg, 1, &sb, &err), -EINVAL,
	       "an unknown number: -EINVAL");
	is_str(err ? sandlock_error_message(err) : "",
	       "handlers[0]: unknown syscall number 99999 on this architecture", "its message");
	sandlock_error_free(err);

	sandlock_policy_t *denied = system_policy();
	sandlock_policy_add_fs_read(denied, self);
	sandlock_policy_add_extra_deny_syscall(denied, "sched_yield");
	is_int(run(denied, "yield", NULL, NULL, NULL, 0), EPERM, "extra-denied sched_yield: EPERM");
	is_int(run(denied, "yield", "sched_yield", h, msg, sizeof(msg)), -EINVAL,
	       "a handler on an extra-denied syscall: -EINVAL");
	is_str(msg,
	       "handlers[0]: sched_yield is blocked by the policy (the default blocklist or "
	       "extra_deny_syscalls): a handler on it would never run",
	       "the message names it");
	sandlock_policy_set_no_supervisor(denied, 1);
	is_int(run(denied, "yield", "getppid", h, msg, sizeof(msg)), -EINVAL,
	       "handlers without the supervisor: -EINVAL");
	sandlock_policy_free(denied);
	sandlock_handler_free(h);
}

static void injection(const sandlock_policy_t *p)
{
	ok(run(p, "open", NULL, NULL, NULL, 0) == 1, "the virtual path does not exist");
	atomic_store(&calls, 0);
	is_int(run_simple(p, "open", "openat", h_open, NULL, 0), 0,
	       "inject_bytes: the child reads the bytes, and cannot write them");
	is_int(atomic_load(&calls), 1, "the path was read from the child's memory, once");

	int fds[2];
	if (pipe(fds) < 0 || write(fds[1], PIPE_BYTES, strlen(PIPE_BYTES)) < 0)
		return;
	close(fds[1]);
	is_int(run(p, "dup", NULL, NULL, NULL, 0), 1, "dup(1000) without a handler: EBADF");
	is_int(run_simple(p, "dup", "dup", h_inject_fd, (void *)(intptr_t)fds[0], 0), 0,
	       "inject_fd: the child reads the pipe");
	close(fds[0]);

	is_int(run(p, "getcwd", NULL, NULL, NULL, 0), 1, "getcwd without a handler: the real one");
	is_int(run_simple(p, "getcwd", "getcwd", h_getcwd, NULL, 0), 0,
	       "a handler writes the child's buffer");
}

static void deferred(const sandlock_policy_t *p)
{
	sandlock_handler_t *h = sandlock_handler_new(h_many, NULL, drop, 0);

	is_int(sandlock_handler_set_deferred(h, 2), -EINVAL, "set_deferred(2): -EINVAL");
	is_int(sandlock_handler_set_deferred(h, 1), 0, "set_deferred(1)");
	is_int(run(p, "many", "sched_yield", h, NULL, 0), 0,
	       "%d concurrent deferred calls: 64 answered, the rest EAGAIN", THREADS);
	is_int(dropped, 0, "user_data kept while the caller holds the handler");
	sandlock_handler_free(h);
	is_int(dropped, 1, "user_data dropped with the last reference");
}

/* A trap read by the supervisor as the filter compiles it: the conditions past those a trap
 * holds are not compiled, so they do not decide whether the call is the trap set's. */
static void trap_bounds(void)
{
	struct trap t = { .nr = SYS_prlimit64, .n_conds = 3 };
	t.cond[0] = (struct trap_cond){ .arg = 0, .op = SCMP_CMP_NE };
	t.cond[1] = (struct trap_cond){ .arg = 2, .op = SCMP_CMP_NE };
	struct seccomp_data d = { .nr = SYS_prlimit64, .args = { 1, 0, 1 } };

	is_int(trap_set_matches(&t, 1, &d), 1, "a trap with more conditions than compiled matches");
	d.args[2] = 0;
	is_int(trap_set_matches(&t, 1, &d), 0, "its compiled conditions still decide");
}

int main(int argc, char **argv)
{
	/* _exit: no atexit work in the child (under ASan, LeakSanitizer would need /proc). */
	if (argc >= 3 && strcmp(argv[1], "child") == 0)
		_exit(child(argv[2]));
	if (!realpath("/proc/self/exe", self))
		return 1;
	ok(sandlock_handler_new(NULL, NULL, NULL, 0) == NULL && errno == EINVAL,
	   "handler_new(NULL): EINVAL");
	ok(sandlock_handler_new(h_continue, NULL, NULL, 4) == NULL && errno == EINVAL,
	   "handler_new with an unknown exception policy: EINVAL");
	sandlock_policy_t *p = system_policy();
	if (!p)
		return 1;
	sandlock_policy_add_fs_read(p, self);
	answers(p);
	denial_event(p);
	no_undo(p);
	builtin_filter(p);
	registration(p);
	injection(p);
	deferred(p);
	trap_bounds();
	sandlock_policy_free(p);
	return done_testing();
}
