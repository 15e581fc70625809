/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/startup: what confinement adds to starting a process. Runs /bin/true
 *
 *   (a) bare: posix_spawn + waitpid of /bin/true
 *   (b) sandlock run -r /usr -r /lib -r /lib64 -r /bin -- /bin/true   (supervised, the default)
 *   (c) the same with --no-supervisor
 *   (d) bwrap --ro-bind / / --dev /dev --proc /proc /bin/true        (skipped if it fails)
 *
 * interleaved (a b c d a b c d ...), each run timed with CLOCK_MONOTONIC from before
 * posix_spawn to after waitpid, and reports per variant the median, p10 and p90 in microseconds,
 * the ratio of its median to bare's and the difference in milliseconds. Breakdown variants
 * (unless -q) help place the overhead: the sandlock binary alone (--version: exec + linking;
 * the CLI links libseccomp statically, so only libc is a shared object), the grants plus /etc
 * (ld.so can read its cache), and sandlock_spawn() called in-process (no sandlock binary to exec).
 * A last section times the steps of a spawn: "cold", the first call in a freshly exec'd copy of
 * this program (what the CLI pays: plan building, the seccomp program (a copy of the one
 * precompiled at build time for a default policy; the libseccomp compile a custom policy pays, for
 * reference), the Landlock ruleset, the child's landlock_restrict_self and filter load, a whole
 * in-process spawn), and "warm", repeated in this process, next to references (posix_spawn, fork +
 * execve, clone(CLONE_VM) + execve, a thread).
 *
 *   startup [-n RUNS] [-s PATH-TO-SANDLOCK] [-q]
 *
 * The sandlock binary defaults to <dir>/../sandlock next to this program (the build tree:
 * <build>/bench/startup -> <build>/sandlock), else ./build/sandlock.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "plan/landlock.h"
#include "plan/plan.h"
#include "plan/seccomp.h"
#include "policy/policy.h"
#include "sandlock.h"
#include "supervisor/dispatch.h"

extern char **environ;

#define MAX_ARGS 24
#define WARMUP 5

enum kind { KIND_SPAWN, KIND_API };

struct variant {
	const char *label;
	enum kind kind;
	const char *argv[MAX_ARGS];
	int quiet;			 /* stdout to /dev/null */
	const sandlock_policy_t *policy; /* KIND_API */
	int extra;			 /* a breakdown variant (-q drops it) */
	int off;
	char note[256];
	double *us;
	size_t n;
};

static void set_argv(struct variant *v, const char *const *args)
{
	size_t i = 0;

	for (; args[i] && i < MAX_ARGS - 1; i++)
		v->argv[i] = args[i];
	v->argv[i] = NULL;
}

/* One run of a process variant: microseconds, or -1 with @v->note filled on failure. */
static double run_spawn(struct variant *v)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status;

	posix_spawn_file_actions_init(&fa);
	if (v->quiet)
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	int64_t t0 = bench_now_ns();
	int r = posix_spawn(&pid, v->argv[0], &fa, NULL, (char *const *)v->argv, environ);
	if (r == 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	int64_t t1 = bench_now_ns();
	posix_spawn_file_actions_destroy(&fa);
	if (r != 0) {
		snprintf(v->note, sizeof(v->note), "posix_spawn %s: %s", v->argv[0], strerror(r));
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(v->note, sizeof(v->note), "%s failed (wait status 0x%x)", v->argv[0],
			 status);
		return -1;
	}
	return (double)(t1 - t0) / 1000.0;
}

/* One run through the library, in this process: sandlock_spawn + wait + free. */
static double run_api(struct variant *v)
{
	sandlock_sandbox_t *sb = NULL;
	sandlock_error_t *err = NULL;

	int64_t t0 = bench_now_ns();
	int r = sandlock_spawn(v->policy, v->argv, NULL, &sb, &err);
	if (r == 0)
		r = sandlock_sandbox_wait(sb, -1);
	int ok = r == 0 && sandlock_sandbox_exit_kind(sb) == SANDLOCK_EXIT_CODE &&
		 sandlock_sandbox_exit_code(sb) == 0;
	sandlock_sandbox_free(sb);
	int64_t t1 = bench_now_ns();
	if (!ok) {
		snprintf(v->note, sizeof(v->note), "sandlock_spawn: %s",
			 err ? sandlock_error_message(err) : strerror(r < 0 ? -r : EIO));
		sandlock_error_free(err);
		return -1;
	}
	return (double)(t1 - t0) / 1000.0;
}

static double run_once(struct variant *v)
{
	return v->kind == KIND_API ? run_api(v) : run_spawn(v);
}

static const char *find_in_path(const char *name, char *buf, size_t size)
{
	const char *path = getenv("PATH");

	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; *p;) {
		size_t len = strcspn(p, ":");
		snprintf(buf, size, "%.*s/%s", (int)len, p, name);
		if (len && access(buf, X_OK) == 0)
			return buf;
		p += len + (p[len] == ':');
	}
	return NULL;
}

/* <dir of this program>/../sandlock, else ./build/sandlock. */
static const char *default_sandlock(char *buf, size_t size)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			slash = strrchr(self, '/');
			if (slash) {
				*slash = '\0';
				size_t len = strlen(self);
				if (len + sizeof("/sandlock") <= size) {
					memcpy(buf, self, len);
					memcpy(buf + len, "/sandlock", sizeof("/sandlock"));
					if (access(buf, X_OK) == 0)
						return buf;
				}
			}
		}
	}
	snprintf(buf, size, "./build/sandlock");
	return buf;
}

static sandlock_policy_t *make_policy(int no_supervisor, int with_etc)
{
	static const char *const dirs[] = { "/usr", "/lib", "/lib64", "/bin", "/etc" };
	sandlock_policy_t *p = NULL;

	if (sandlock_policy_new(&p) < 0)
		return NULL;
	for (size_t i = 0; i < (with_etc ? 5u : 4u); i++)
		sandlock_policy_add_fs_read(p, dirs[i]);
	sandlock_policy_set_no_supervisor(p, no_supervisor);
	return p;
}

static void print_row(const struct variant *v, const struct bench_stats *bare)
{
	if (v->off) {
		printf("  %-44s skipped: %s\n", v->label, v->note);
		return;
	}
	struct bench_stats s = bench_stats_of(v->us, v->n);
	printf("  %-44s %8.0f %8.0f %8.0f %7.2fx %+8.3f\n", v->label, s.median, s.p10, s.p90,
	       s.median / bare->median, (s.median - bare->median) / 1000.0);
}

/* ---- where the time goes ----------------------------------------------------------------- */

/* Steps timed in a freshly exec'd copy of this program, one sample per exec ("cold"): the state
 * the CLI is in when it spawns its only sandbox. Each prints its timings in ns on stdout. */
enum cold_step {
	COLD_PLAN,
	COLD_SECCOMP,
	COLD_COMPILE,
	COLD_LANDLOCK,
	COLD_CONFINE,
	COLD_SPAWN,
	COLD_POSIX_SPAWN,
	_COLD_MAX
};
static const char *const cold_names[_COLD_MAX] = { "plan",    "seccomp", "compile",    "landlock",
						   "confine", "spawn",	 "posix_spawn" };
#define COLD_VALUES 2

static const char *const true_argv[] = { "/bin/true", NULL };
#define TRAPS_MAX DISPATCH_MAX_TRAPS

static int wait_true(pid_t pid)
{
	int status;

	if (pid < 0)
		return -errno;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

/* The state of one cold step, in the freshly exec'd copy. */
struct cold_ctx {
	sandlock_policy_t *p;
	struct sandlock_error *err;
	struct sock_fprog prog;
	struct plan plan;
	int64_t t[3];
};

static int cold_seccomp(struct cold_ctx *c, int step)
{
	struct trap traps[TRAPS_MAX];
	size_t n = dispatch_trap_set(c->p, traps, TRAPS_MAX);
	int r;

	c->t[0] = bench_now_ns();
	if (step == COLD_SECCOMP) /* the precompiled program of this default policy */
		r = seccomp_program_build(c->p, 1, traps, n, &c->prog, &c->err);
	else
		r = seccomp_program_compile(c->p, 1, traps, n, &c->prog, &c->err);
	c->t[1] = bench_now_ns();
	return r;
}

static int cold_landlock(struct cold_ctx *c)
{
	uint32_t status[SANDLOCK_PROTECTION_COUNT];
	int abi = landlock_abi();
	int r = abi < 0 ? abi : policy_resolve_protections(c->p, abi, status, &c->err);

	c->t[0] = bench_now_ns();
	if (r == 0)
		r = landlock_ruleset_build(c->p, abi, status, 0, NULL, NULL, NULL, &c->err);
	c->t[1] = bench_now_ns();
	if (r >= 0)
		r = close(r);
	return r;
}

/* Time @step (all but the child's confinement) into c->t[0..1]; 0 or a negative errno. */
static int cold_measure(struct cold_ctx *c, int step)
{
	int r;

	if (step == COLD_PLAN || step == COLD_CONFINE) {
		c->t[0] = bench_now_ns();
		r = plan_build(c->p, true_argv, 0, &c->plan, &c->err);
		c->t[1] = bench_now_ns();
	} else if (step == COLD_SECCOMP || step == COLD_COMPILE) {
		r = cold_seccomp(c, step);
	} else if (step == COLD_LANDLOCK) {
		r = cold_landlock(c);
	} else if (step == COLD_SPAWN) {
		/* Where sandlock_spawn() returns and where wait() does depends on which thread
		 * the scheduler runs first on a small machine; only the sum is stable. */
		sandlock_sandbox_t *sb = NULL;
		c->t[0] = bench_now_ns();
		r = sandlock_spawn(c->p, true_argv, NULL, &sb, &c->err);
		if (r == 0)
			r = sandlock_sandbox_wait(sb, -1);
		sandlock_sandbox_free(sb);
		c->t[1] = bench_now_ns();
	} else {
		pid_t pid;
		c->t[0] = bench_now_ns();
		r = posix_spawn(&pid, true_argv[0], NULL, NULL, (char *const *)true_argv, environ);
		r = r ? -r : wait_true(pid);
		c->t[1] = bench_now_ns();
	}
	return r;
}

/* The child's confinement, as launch_child() does it (same flags), into c->t[0..2]. The listener
 * stays open; nothing here makes a trapped syscall. */
static int cold_confine(struct cold_ctx *c)
{
	unsigned flags = SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
	int r = 0;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		r = -errno;
	c->t[0] = bench_now_ns();
	if (r == 0 && syscall(SYS_landlock_restrict_self, c->plan.ruleset_fd, 0) < 0)
		r = -errno;
	c->t[1] = bench_now_ns();
	if (r == 0 && syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &c->plan.prog) < 0)
		r = -errno;
	c->t[2] = bench_now_ns();
	return r;
}

static int cold_child(const char *name)
{
	struct cold_ctx c = { .p = make_policy(0, 0), .plan = { .ruleset_fd = -1 } };
	int step = -1, r;

	for (int i = 0; i < _COLD_MAX; i++)
		if (strcmp(name, cold_names[i]) == 0)
			step = i;
	if (!c.p || step < 0)
		return 1;
	r = cold_measure(&c, step);
	if (r == 0 && step == COLD_CONFINE)
		r = cold_confine(&c);
	if (r == 0)
		printf("%lld %lld\n", (long long)(c.t[1] - c.t[0]),
		       step == COLD_CONFINE ? (long long)(c.t[2] - c.t[1]) : 0LL);
	if (step == COLD_CONFINE) {
		/* Confined now: skip exit handlers that read /proc (LeakSanitizer's). */
		fflush(stdout);
		_exit(r == 0 ? 0 : 1);
	}
	if (step == COLD_PLAN || step == COLD_CONFINE)
		plan_done(&c.plan);
	seccomp_program_done(&c.prog);
	error_free(c.err);
	sandlock_policy_free(c.p);
	return r == 0 ? 0 : 1;
}

/* Run "this-program --cold STEP" once; its values in us. */
static int run_cold(const char *self, int step, double out[COLD_VALUES])
{
	const char *argv[] = { self, "--cold", cold_names[step], NULL };
	posix_spawn_file_actions_t fa;
	char buf[256];
	size_t len = 0;
	int fds[2], status;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	int r = posix_spawn(&pid, self, &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (r != 0) {
		close(fds[0]);
		return -r;
	}
	for (ssize_t k;
	     len < sizeof(buf) - 1 && (k = read(fds[0], buf + len, sizeof(buf) - 1 - len)) != 0;)
		if (k > 0)
			len += (size_t)k;
		else if (errno != EINTR)
			break;
	buf[len] = '\0';
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	long long v[COLD_VALUES];
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    sscanf(buf, "%lld %lld", &v[0], &v[1]) != COLD_VALUES)
		return -EIO;
	for (int i = 0; i < COLD_VALUES; i++)
		out[i] = (double)v[i] / 1000.0;
	return 0;
}

/* ---- warm steps, looped in this process ---- */

struct warm_ctx {
	sandlock_policy_t *policy;
	uint32_t status[SANDLOCK_PROTECTION_COUNT];
	int abi;
	struct trap traps[TRAPS_MAX];
	size_t n_traps;
};

static int warm_plan(struct warm_ctx *c)
{
	struct plan plan;
	struct sandlock_error *err = NULL;

	int r = plan_build(c->policy, true_argv, 0, &plan, &err);
	if (r == 0)
		plan_done(&plan);
	error_free(err);
	return r;
}

static int warm_seccomp(struct warm_ctx *c)
{
	struct sock_fprog prog = { 0 };
	struct sandlock_error *err = NULL;

	int r = seccomp_program_build(c->policy, 1, c->traps, c->n_traps, &prog, &err);
	seccomp_program_done(&prog);
	error_free(err);
	return r;
}

static int warm_compile(struct warm_ctx *c)
{
	struct sock_fprog prog = { 0 };
	struct sandlock_error *err = NULL;

	int r = seccomp_program_compile(c->policy, 1, c->traps, c->n_traps, &prog, &err);
	seccomp_program_done(&prog);
	error_free(err);
	return r;
}

static int warm_landlock(struct warm_ctx *c)
{
	struct sandlock_error *err = NULL;

	int fd = landlock_ruleset_build(c->policy, c->abi, c->status, 0, NULL, NULL, NULL, &err);
	error_free(err);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

static int warm_posix_spawn(struct warm_ctx *c)
{
	pid_t pid;

	int r = posix_spawn(&pid, true_argv[0], NULL, NULL, (char *const *)true_argv, environ);
	return r ? -r : wait_true(pid);
}

static int warm_fork_exec(struct warm_ctx *c)
{
	pid_t pid = fork();

	if (pid == 0) {
		execve(true_argv[0], (char *const *)true_argv, environ);
		_exit(127);
	}
	return wait_true(pid);
}

static int clone_vm_child(void *arg)
{
	/* Shares the parent's memory until execve: raw syscalls only. */
	syscall(SYS_execve, true_argv[0], true_argv, environ);
	syscall(SYS_exit_group, 127);
	return 127;
}

static int warm_clone_vm_exec(struct warm_ctx *c)
{
	static char stack[64 * 1024] __attribute__((aligned(16)));

	return wait_true(clone(clone_vm_child, stack + sizeof(stack), CLONE_VM | SIGCHLD, NULL));
}

static void *empty_thread(void *arg)
{
	return arg;
}

static int warm_thread(struct warm_ctx *c)
{
	pthread_t t;

	if (pthread_create(&t, NULL, empty_thread, NULL) != 0)
		return -EAGAIN;
	return pthread_join(t, NULL) == 0 ? 0 : -EINVAL;
}

enum {
	WARM_PLAN,
	WARM_SECCOMP,
	WARM_COMPILE,
	WARM_LANDLOCK,
	WARM_POSIX_SPAWN,
	WARM_FORK,
	WARM_CLONE_VM,
	WARM_THREAD,
	_WARM_MAX
};
static int (*const warm_fns[_WARM_MAX])(struct warm_ctx *c) = {
	warm_plan,	  warm_seccomp,	  warm_compile,	      warm_landlock,
	warm_posix_spawn, warm_fork_exec, warm_clone_vm_exec, warm_thread,
};

static int run_warm(double *us[_WARM_MAX], size_t runs)
{
	struct warm_ctx c = { .policy = make_policy(0, 0) };
	struct sandlock_error *err = NULL;
	int r = -ENOMEM;

	c.abi = landlock_abi();
	if (c.policy && c.abi > 0 &&
	    (r = policy_resolve_protections(c.policy, c.abi, c.status, &err)) == 0)
		c.n_traps = dispatch_trap_set(c.policy, c.traps, TRAPS_MAX);
	/* Two groups, each interleaved within itself: the library steps, and the ways to start
	 * /bin/true. Apart, because the copy-on-write faults a fork leaves behind would land on
	 * whatever library step runs next. */
	static const int groups[][2] = { { WARM_PLAN, WARM_POSIX_SPAWN },
					 { WARM_POSIX_SPAWN, WARM_THREAD },
					 { WARM_THREAD, _WARM_MAX } };
	for (size_t g = 0; r == 0 && g < sizeof(groups) / sizeof(groups[0]); g++)
		for (size_t i = 0; r == 0 && i < runs + WARMUP; i++)
			for (int k = groups[g][0]; r == 0 && k < groups[g][1]; k++) {
				int64_t t0 = bench_now_ns();
				r = warm_fns[k](&c);
				int64_t t1 = bench_now_ns();
				if (i >= WARMUP)
					us[k][i - WARMUP] = (double)(t1 - t0) / 1000.0;
			}
	error_free(err);
	sandlock_policy_free(c.policy);
	return r;
}

/* Instructions in the supervised program of the default policy (the precompiled one). */
static unsigned default_program_len(void)
{
	sandlock_policy_t *p = make_policy(0, 0);
	struct sandlock_error *err = NULL;
	struct plan plan;
	unsigned len = 0;

	if (p && plan_build(p, true_argv, 0, &plan, &err) == 0) {
		len = plan.prog.len;
		plan_done(&plan);
	}
	error_free(err);
	sandlock_policy_free(p);
	return len;
}

static void print_phase(const char *label, const double *cold, const double *warm, size_t n)
{
	char cs[32] = "-", ws[32] = "-";

	if (cold)
		snprintf(cs, sizeof(cs), "%.1f", bench_stats_of(cold, n).median);
	if (warm)
		snprintf(ws, sizeof(ws), "%.1f", bench_stats_of(warm, n).median);
	printf("  %-52s %10s %10s\n", label, cs, ws);
}

/* The table of run_phases: @cold and @warm hold the samples, @g is variant (g). */
static void print_phases(size_t runs, double *cold[_COLD_MAX][COLD_VALUES], double *warm[_WARM_MAX],
			 const struct variant *g)
{
	static const struct {
		const char *label;
		int cold_step, cold_index, warm;
	} rows[] = {
		{ "plan_build() (policy -> plan, 4 grants)", COLD_PLAN, 0, WARM_PLAN },
		{ "  seccomp_program_build() (precompiled copy)", COLD_SECCOMP, 0, WARM_SECCOMP },
		{ "  landlock_ruleset_build() (4 grants)", COLD_LANDLOCK, 0, WARM_LANDLOCK },
		{ "ref: seccomp_program_compile() (libseccomp: custom)", COLD_COMPILE, 0,
		  WARM_COMPILE },
		{ "child: landlock_restrict_self()", COLD_CONFINE, 0, -1 },
		{ "child: seccomp(SET_MODE_FILTER), default program", COLD_CONFINE, 1, -1 },
		{ "sandlock_spawn+wait+free, /bin/true", COLD_SPAWN, 0, -2 },
		{ "ref: posix_spawn (vfork) + wait, /bin/true", COLD_POSIX_SPAWN, 0,
		  WARM_POSIX_SPAWN },
		{ "ref: fork + execve + wait, /bin/true", -1, 0, WARM_FORK },
		{ "ref: clone(CLONE_VM) + execve + wait, /bin/true", -1, 0, WARM_CLONE_VM },
		{ "ref: pthread_create + join", -1, 0, WARM_THREAD },
	};

	printf("\nwhere the time goes: median us of %zu samples; cold = first call in a "
	       "freshly exec'd\nprocess (what the CLI pays), warm = repeated in one "
	       "process; the default supervised\nseccomp program has %u instructions\n",
	       runs, default_program_len());
	printf("  %-52s %10s %10s\n", "step", "cold", "warm");
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		const double *c =
			rows[k].cold_step >= 0 ? cold[rows[k].cold_step][rows[k].cold_index] : NULL;
		const double *w = rows[k].warm >= 0		  ? warm[rows[k].warm]
				  : rows[k].warm == -2 && !g->off ? g->us
								  : NULL;
		print_phase(rows[k].label, c, w, runs);
	}
}

/* @g: the in-process sandlock_spawn variant (g), whose runs are the warm spawn row. */
static void run_phases(size_t runs, const struct variant *g)
{
	char self[PATH_MAX];
	double *cold[_COLD_MAX][COLD_VALUES], *warm[_WARM_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int r = n > 0 ? 0 : -errno;

	if (r == 0)
		self[n] = '\0';
	for (int s = 0; s < _COLD_MAX; s++)
		for (int i = 0; i < COLD_VALUES; i++)
			cold[s][i] = calloc(runs, sizeof(double));
	for (int k = 0; k < _WARM_MAX; k++)
		warm[k] = calloc(runs, sizeof(double));
	/* Cold steps interleaved, one fresh process per sample. */
	for (size_t i = 0; r == 0 && i < runs; i++)
		for (int s = 0; r == 0 && s < _COLD_MAX; s++) {
			double v[COLD_VALUES];
			r = run_cold(self, s, v);
			for (int k = 0; r == 0 && k < COLD_VALUES; k++)
				cold[s][k][i] = v[k];
		}
	if (r == 0)
		r = run_warm(warm, runs);
	if (r < 0)
		printf("\nwhere the time goes: skipped (%s)\n", strerror(-r));
	else
		print_phases(runs, cold, warm, g);
	for (int s = 0; s < _COLD_MAX; s++)
		for (int i = 0; i < COLD_VALUES; i++)
			free(cold[s][i]);
	for (int k = 0; k < _WARM_MAX; k++)
		free(warm[k]);
}

/* ---- main -------------------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f, "usage: startup [-n RUNS] [-s PATH-TO-SANDLOCK] [-q]\n"
		   "  -n RUNS  runs per variant (default 200)\n"
		   "  -s PATH  the sandlock binary (default: ../sandlock next to this program)\n"
		   "  -q       only the four comparison variants, no breakdown\n");
}

struct options {
	const char *sandlock;
	size_t runs;
	int quick;
};

/* The options into @o, @slbuf holding the default sandlock path: -1 to go on, else the exit
 * status. */
static int parse_options(int argc, char **argv, struct options *o, char *slbuf, size_t size)
{
	int opt;

	while ((opt = getopt(argc, argv, "n:s:qh")) != -1) {
		switch (opt) {
		case 'n':
			o->runs = strtoul(optarg, NULL, 10);
			break;
		case 's':
			o->sandlock = optarg;
			break;
		case 'q':
			o->quick = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (o->runs < 10) {
		fprintf(stderr, "startup: -n must be at least 10\n");
		return 2;
	}
	if (!o->sandlock)
		o->sandlock = default_sandlock(slbuf, size);
	if (access(o->sandlock, X_OK) < 0) {
		fprintf(stderr, "startup: %s: %s (give the sandlock binary with -s)\n", o->sandlock,
			strerror(errno));
		return 1;
	}
	return -1;
}

#define N_VARIANTS 9

/* The command lines of the variants; (d) off without @bwrap. */
static void set_variant_argvs(struct variant vs[N_VARIANTS], const char *sandlock,
			      const char *bwrap)
{
#define GRANTS "-r", "/usr", "-r", "/lib", "-r", "/lib64", "-r", "/bin"
	set_argv(&vs[0], (const char *const[]){ "/bin/true", NULL });
	set_argv(&vs[1], (const char *const[]){ sandlock, "run", GRANTS, "--", "/bin/true", NULL });
	set_argv(&vs[2], (const char *const[]){ sandlock, "run", "--no-supervisor", GRANTS, "--",
						"/bin/true", NULL });
	set_argv(&vs[3],
		 (const char *const[]){ bwrap ? bwrap : "bwrap", "--ro-bind", "/", "/", "--dev",
					"/dev", "--proc", "/proc", "/bin/true", NULL });
	set_argv(&vs[4], (const char *const[]){ sandlock, "--version", NULL });
	set_argv(&vs[5], (const char *const[]){ sandlock, "run", GRANTS, "-r", "/etc", "--",
						"/bin/true", NULL });
	set_argv(&vs[6], (const char *const[]){ "/bin/true", NULL });
	set_argv(&vs[7], (const char *const[]){ "/bin/true", NULL });
	set_argv(&vs[8], (const char *const[]){ sandlock, "run", "--no-control-socket", GRANTS,
						"--", "/bin/true", NULL });
#undef GRANTS

	if (!bwrap) {
		vs[3].off = 1;
		snprintf(vs[3].note, sizeof(vs[3].note), "bwrap not in PATH (Debian: bubblewrap)");
	}
}

/* Allocate each variant's samples and warm it up (which also proves it works here): 0, or 1
 * when one that must work does not. */
static int prepare_variants(struct variant vs[N_VARIANTS], size_t runs, int quick)
{
	for (size_t k = 0; k < N_VARIANTS; k++) {
		struct variant *v = &vs[k];
		if (quick && v->extra) {
			v->off = 1;
			snprintf(v->note, sizeof(v->note), "-q");
		}
		if (v->off)
			continue;
		v->us = calloc(runs, sizeof(double));
		if (!v->us || (v->kind == KIND_API && !v->policy)) {
			fprintf(stderr, "startup: out of memory\n");
			return 1;
		}
		/* Warm-up runs also prove the variant works here. */
		for (int i = 0; i < WARMUP && !v->off; i++)
			if (run_once(v) < 0)
				v->off = 1;
		if (v->off && k == 3) {
			/* Typically: no unprivileged user namespaces (bwrap says why above). */
			size_t len = strlen(v->note);
			snprintf(v->note + len, sizeof(v->note) - len, "; see bwrap's message");
		} else if (v->off) {
			fprintf(stderr, "startup: %s: %s\n", v->label, v->note);
			return 1;
		}
	}
	return 0;
}

/* The variants interleaved, @runs rounds: 0, or 1 when a run fails. */
static int measure_variants(struct variant vs[N_VARIANTS], size_t runs)
{
	for (size_t i = 0; i < runs; i++)
		for (size_t k = 0; k < N_VARIANTS; k++) {
			struct variant *v = &vs[k];
			if (v->off)
				continue;
			double t = run_once(v);
			if (t < 0) {
				fprintf(stderr, "startup: %s: %s\n", v->label, v->note);
				return 1;
			}
			v->us[v->n++] = t;
		}
	return 0;
}

static void report_variants(const struct variant vs[N_VARIANTS], const struct options *o)
{
	printf("sandlock startup benchmark: /bin/true, %zu runs per variant, interleaved "
	       "(a b c d ... a b c d ...)\n",
	       o->runs);
	bench_print_machine(stdout);
	printf("sandlock: %s\n", o->sandlock);
	printf("wall time per run, from before posix_spawn to after waitpid (us)\n\n");
	printf("  %-44s %8s %8s %8s %8s %8s\n", "variant", "median", "p10", "p90", "ratio", "+ms");
	struct bench_stats bare = bench_stats_of(vs[0].us, vs[0].n);
	for (size_t k = 0; k < N_VARIANTS; k++) {
		if (k == 4 && !o->quick)
			printf("  breakdown:\n");
		if (!(o->quick && vs[k].extra))
			print_row(&vs[k], &bare);
	}

	struct bench_stats sl = bench_stats_of(vs[1].us, vs[1].n);
	double over_ms = (sl.median - bare.median) / 1000.0;
	printf("\nsandlock median overhead vs bare: %.2f ms (target <= 1.0 ms): %s\n", over_ms,
	       over_ms <= 1.0 ? "MET" : "NOT MET");
	if (!vs[3].off) {
		struct bench_stats bw = bench_stats_of(vs[3].us, vs[3].n);
		printf("sandlock median / bwrap median: %.2f\n", sl.median / bw.median);
	}
}

int main(int argc, char **argv)
{
	char slbuf[PATH_MAX], bwbuf[PATH_MAX];
	struct options o = { .runs = 200 };

	if (argc == 3 && strcmp(argv[1], "--cold") == 0)
		return cold_child(argv[2]);
	int r = parse_options(argc, argv, &o, slbuf, sizeof(slbuf));
	if (r >= 0)
		return r;
	const char *bwrap = find_in_path("bwrap", bwbuf, sizeof(bwbuf));
	sandlock_policy_t *api_sup = make_policy(0, 0), *api_nosup = make_policy(1, 0);

	struct variant vs[N_VARIANTS] = {
		{ .label = "(a) bare /bin/true" },
		{ .label = "(b) sandlock run (fs grants, supervised)" },
		{ .label = "(c) sandlock run --no-supervisor" },
		{ .label = "(d) bwrap --ro-bind / / --dev --proc" },
		{ .label = "(e) sandlock --version (exec+link only)", .quiet = 1, .extra = 1 },
		{ .label = "(f) sandlock run, grants + -r /etc", .extra = 1 },
		{ .label = "(g) sandlock_spawn() in-process", .kind = KIND_API, .extra = 1 },
		{ .label = "(h) sandlock_spawn() in-process, no sup.",
		  .kind = KIND_API,
		  .extra = 1 },
		{ .label = "(i) sandlock run --no-control-socket", .extra = 1 },
	};
	set_variant_argvs(vs, o.sandlock, bwrap);
	vs[6].policy = api_sup;
	vs[7].policy = api_nosup;
	if (prepare_variants(vs, o.runs, o.quick) || measure_variants(vs, o.runs))
		return 1;
	report_variants(vs, &o);

	if (!o.quick)
		run_phases(o.runs, &vs[6]);
	for (size_t k = 0; k < N_VARIANTS; k++)
		free(vs[k].us);
	sandlock_policy_free(api_sup);
	sandlock_policy_free(api_nosup);
	return 0;
}
