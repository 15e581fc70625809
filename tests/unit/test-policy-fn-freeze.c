/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-policy-fn-freeze: a policy_fn shown the argv of an exec from a process whose memory other
 * threads share (they are frozen with ptrace from the read until the exec is over), through the
 * public header only. The sandboxed command is this program again (a helper mode: exec with an
 * idle or a busy second thread, a thread rewriting the argv, a thread other than the leader
 * exec'ing, posix_spawn from a threaded parent). The callback denies any argv that contains
 * "forbidden"; each case has its control (the allowed argv runs).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandlock.h"
#include "spawn-helpers.h"
#include "tap.h"

/* ---- the helper modes (run inside the sandbox) ------------------------------------------- */

static char race_buf[64] = "allowed", busy_buf[64];
static atomic_long counter;

/* A second thread: rewriting the argv (race), blocked in pause (idle), rewriting a buffer of
 * its own (busy), or counting. */
static void *second(void *arg)
{
	const char *kind = arg;

	if (strcmp(kind, "idle") == 0)
		pause();
	for (;;) {
		if (strcmp(kind, "race") == 0) {
			memcpy(race_buf, "forbidden", 10);
			memcpy(race_buf, "allowed\0\0", 10);
		} else if (strcmp(kind, "busy") == 0) {
			memcpy(busy_buf, "one", 4);
			memcpy(busy_buf, "two", 4);
		} else
			usleep(100);
		atomic_fetch_add(&counter, 1);
	}
	return NULL;
}

/* The kind lives as long as the thread: string literals and argv, never the helper's stack
 * (the thread runs on after a failed exec, while the helper returns). */
static void start_second(const char *kind)
{
	pthread_t t;

	pthread_create(&t, NULL, second, (void *)kind);
}

static char *thexec_word;

/* A thread other than the leader execs: the exec ends the leader, and takes its id. */
static void *thexec(void *arg)
{
	char echo[] = "/bin/echo";
	char *const v[] = { echo, thexec_word, NULL };

	(void)arg;
	execv(v[0], v);
	printf("%d\n", errno);
	fflush(stdout);
	_exit(0);
}

/* zleader: a process sharing the memory (CLONE_VM) whose leader thread has exited while a thread
 * of it runs on; that thread rewrites the argv once the exec waits for its verdict. Raw clones
 * and syscalls only: they share this thread's TLS. */
static char zl_stack[2][64 * 1024] __attribute__((aligned(16)));
static atomic_int zl_go;

static int zl_writer(void *arg)
{
	const struct timespec ts = { 0, 150 * 1000000L };

	(void)arg;
	while (!atomic_load(&zl_go))
		;
	syscall(SYS_nanosleep, &ts, NULL); /* the callback (400 ms) shows the argv meanwhile */
	for (int i = 0; i < 10; i++)
		race_buf[i] = "forbidden"[i];
	syscall(SYS_exit, 0);
	return 0;
}

static int zl_leader(void *arg)
{
	(void)arg;
	clone(zl_writer, zl_stack[1] + sizeof(zl_stack[1]),
	      CLONE_VM | CLONE_THREAD | CLONE_SIGHAND | CLONE_FS | CLONE_FILES, NULL);
	syscall(SYS_exit, 0); /* the leader alone: its process lives on in the writer */
	return 0;
}

static int zleader(const char *kind)
{
	char echo[] = "/bin/echo";
	char *const v[] = { echo, race_buf, NULL };

	snprintf(race_buf, sizeof(race_buf), "lateok");
	if (strcmp(kind, "thread") == 0)
		start_second("idle");
	if (clone(zl_leader, zl_stack[0] + sizeof(zl_stack[0]), CLONE_VM | SIGCHLD, NULL) < 0)
		return 126;
	usleep(20 * 1000);
	atomic_store(&zl_go, 1);
	execv(v[0], v);
	printf("%d\n", errno);
	return 0;
}

static int helper(const char *mode, char *word, char *kind)
{
	char echo[] = "/bin/echo";
	char *const v[] = { echo, strcmp(mode, "race") == 0 ? race_buf : word, NULL };
	pthread_t t;

	if (strcmp(mode, "nodump") == 0) /* nodump WORD: thread WORD idle, not dumpable */
		mode = prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0 ? "thread" : "prctl failed";
	if (strcmp(mode, "thread") == 0 || strcmp(mode, "race") == 0) {
		/* thread WORD idle|busy, race: exec /bin/echo with a second thread */
		start_second(strcmp(mode, "race") == 0 ? "race" : kind);
		usleep(1000);
		execv(v[0], v);
		printf("%d\n", errno);
		return 0;
	}
	if (strcmp(mode, "missing") == 0) { /* missing WORD: a failed exec, a thread counting */
		char none[] = "/nonexistent/echo";
		char *const m[] = { none, word, NULL };
		start_second("count");
		execv(m[0], m);
		long before = atomic_load(&counter);
		printf("%d\n", errno);
		usleep(50 * 1000);
		printf("%s\n", atomic_load(&counter) > before ? "counting" : "stuck");
		return 0;
	}
	if (strcmp(mode, "thexec") == 0) { /* thexec WORD: a second thread execs */
		thexec_word = word;
		pthread_create(&t, NULL, thexec, NULL);
		for (;;)
			atomic_fetch_add(&counter, 1);
	}
	if (strcmp(mode, "zleader") == 0) /* zleader alone|thread */
		return zleader(word);
	if (strcmp(mode, "spawnmt") == 0) { /* spawnmt WORD: posix_spawn, a thread counting */
		pid_t pid;
		start_second("count");
		int r = posix_spawn(&pid, v[0], NULL, NULL, v, NULL);
		if (r == 0)
			waitpid(pid, &r, 0);
		long before = atomic_load(&counter);
		usleep(50 * 1000);
		printf("%s\n", atomic_load(&counter) > before ? "counting" : "stuck");
		return r;
	}
	return 127;
}

/* ---- the spawn --------------------------------------------------------------------------- */

static char self_path[PATH_MAX], self_dir[PATH_MAX], out[4096];
static atomic_int unfrozen, handled; /* denials that say the freeze failed, or could not be */
static uint32_t run_events;	     /* SANDLOCK_EVENTS_* of the next runs */
static int exit_code;		     /* the last run's, -1: not an exit */

static int32_t policy(const sandlock_policy_event_t *ev, sandlock_policy_ctx_t *ctx, void *ud)
{
	(void)ctx;
	(void)ud;
	for (uint32_t i = 0; ev->argv && i < ev->argc; i++) {
		if (strstr(ev->argv[i], "forbidden"))
			return SANDLOCK_POLICY_DENY;
		if (strstr(ev->argv[i], "slow"))
			usleep(600 * 1000); /* past the timeout of slow_verdict's policy */
		if (strstr(ev->argv[i], "late"))
			usleep(400 * 1000); /* zleader's writer rewrites the argv meanwhile */
	}
	return SANDLOCK_POLICY_ALLOW;
}

static void on_event(const sandlock_event_t *ev, void *user_data)
{
	(void)user_data;
	if (ev->verdict == SANDLOCK_VERDICT_DENY && ev->reason && strstr(ev->reason, "not frozen"))
		atomic_fetch_add(&unfrozen, 1);
	if (ev->verdict == SANDLOCK_VERDICT_DENY && ev->reason &&
	    strstr(ev->reason, "another handler on exec"))
		atomic_fetch_add(&handled, 1);
}

/* Run the helper @mode (@a1, @a2) under @p: its stdout in out. */
static void run(const sandlock_policy_t *p, const char *mode, const char *a1, const char *a2)
{
	const char *argv[] = { self_path, mode, a1, a2, NULL };
	sandlock_spawn_opts_t o = { .size = sizeof(o), .on_event = on_event, .events = run_events };

	(void)spawn_output(p, argv, &o, out, sizeof(out), &exit_code, NULL);
}

static void racing(const sandlock_policy_t *p)
{
	int ran = 0, either = 1;

	for (int i = 0; i < 10; i++) {
		run(p, "race", "", "");
		ran |= strstr(out, "forbidden") != NULL;
		either &= strcmp(out, "allowed\n") == 0 || strcmp(out, "1\n") == 0;
	}
	ok(!ran && either,
	   "racing thread: the exec runs with the argv shown or is refused (last: %s)", out);
}

static void threaded(const sandlock_policy_t *p)
{
	run(p, "thread", "allowed", "idle");
	is_str(out, "allowed\n", "an exec with an idle second thread runs (the thread frozen)");
	is_int(exit_code, 0, "  the command's outcome is the program's exit");
	run(p, "missing", "allowed", "");
	is_str(out, "2\ncounting\n", "a failed exec (ENOENT): its threads run on after");
	run(p, "thread", "allowed", "busy");
	is_str(out, "allowed\n", "an exec with a second thread busy writing memory runs");
	run(p, "thread", "forbidden", "busy");
	is_str(out, "1\n", "the same exec denied by its argv: EPERM, the program never ran");
	run(p, "thexec", "allowed", "");
	is_str(out, "allowed\n", "a thread other than the leader execs (the exec ends the leader)");
	run(p, "thexec", "forbidden", "");
	is_str(out, "1\n", "the same denied by its argv: EPERM");
	run(p, "spawnmt", "allowed", "");
	is_str(out, "allowed\ncounting\n",
	       "posix_spawn from a multi-threaded parent runs; its threads run on after");
	run(p, "spawnmt", "forbidden", "");
	is_str(out, "counting\n", "the same denied by its argv: nothing ran, the threads run on");
}

/* A process sharing the caller's memory whose leader thread has exited: kcmp of its pid finds no
 * memory, but a thread of it runs on and rewrites the argv while the callback decides. */
static void zombie_leader(const sandlock_policy_t *p)
{
	run(p, "zleader", "alone", "");
	is_str(out, "lateok\n",
	       "a CLONE_VM peer whose leader exited is frozen (single-threaded caller)");
	run(p, "zleader", "thread", "");
	is_str(out, "lateok\n", "the same with a second thread in the caller");
}

/* Where the chain answers the exec (logging mode, a workdir, an extension handler on exec), the
 * freeze could not tell when the CONTINUE is sent: a threaded caller's exec is refused. */
static void chain_answers(const sandlock_policy_t *p)
{
	run(p, "thread", "allowed", "idle");
	is_str(out, "allowed\n", "control: without logging mode it runs");
	run_events = SANDLOCK_EVENTS_DENIALS;
	run(p, "thread", "allowed", "idle");
	run_events = 0;
	is_str(out, "1\n", "logging mode (its handler on exec): a threaded caller's exec is EPERM");
	is_int(atomic_load(&handled), 1, "the denial says why");
}

/* A verdict past the policy_fn's timeout: the exec is refused (EPERM) at the timeout, its peers
 * released, and the late verdict changes nothing. */
static void slow_verdict(void)
{
	sandlock_policy_t *p = system_policy();

	sandlock_policy_add_fs_read(p, self_dir);
	sandlock_policy_set_policy_fn(p, policy, NULL, NULL);
	sandlock_policy_set_policy_fn_timeout(p, 300);
	run(p, "thread", "allowed", "idle");
	is_str(out, "allowed\n", "control: a quick verdict within a 300 ms timeout runs");
	run(p, "thread", "slow", "idle");
	is_str(out, "1\n", "a verdict after the timeout: EPERM, the threads released");
	is_int(exit_code, 0, "  the command went on and exited by itself");
	sandlock_policy_free(p);
}

/* A process that is not dumpable can be traced only with CAP_SYS_PTRACE. */
static void not_dumpable(const sandlock_policy_t *p)
{
	run(p, "nodump", "allowed", "idle");
	if (geteuid() == 0) {
		is_str(out, "allowed\n",
		       "as root, a process that is not dumpable is frozen: it runs");
		return;
	}
	is_str(out, "1\n", "a process that is not dumpable cannot be frozen: EPERM");
	is_int(atomic_load(&unfrozen), 1, "the denial says the freeze failed");
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		/* _exit: an ASan build's leak check at exit cannot read /proc in the sandbox. */
		int code = helper(argv[1], argc > 2 ? argv[2] : NULL, argc > 3 ? argv[3] : NULL);
		fflush(stdout);
		_exit(code);
	}
	if (!realpath("/proc/self/exe", self_path))
		return 1;
	snprintf(self_dir, sizeof(self_dir), "%s", self_path);
	*strrchr(self_dir, '/') = '\0';
	if (sandlock_landlock_abi_version() < 1) {
		printf("1..0 # SKIP Landlock is not available\n");
		return 0;
	}
	sandlock_policy_t *p = system_policy();
	sandlock_policy_add_fs_read(p, self_dir);
	sandlock_policy_set_policy_fn(p, policy, NULL, NULL);
	racing(p);
	threaded(p);
	zombie_leader(p);
	chain_answers(p);
	slow_verdict();
	not_dumpable(p);
	sandlock_policy_free(p);
	return done_testing();
}
