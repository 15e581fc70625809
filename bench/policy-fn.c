/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/policy-fn: what a policy_fn adds to a held call. The helper (this program re-executed)
 * times batches of openat("/usr/.sandlock-bench-none") (ENOENT, the kernel's answer) in three
 * variants, run side by side in rounds:
 *
 *   bare        no sandbox: the untrapped floor
 *   trapped     a named sandbox (opens are trapped to serve /etc/hostname): the supervisor's
 *               round trip, answered CONTINUE on the loop
 *   policy_fn   the same with a no-op C policy_fn: the open is held, handed to the policy
 *               thread, allowed, handed back to the loop (its handler serves /etc/hostname),
 *               CONTINUE
 *   direct      a no-op C policy_fn in a sandbox without a name: the open is trapped for the
 *               policy_fn alone, and the policy thread answers CONTINUE itself
 *
 * and two more that open (and close) a file that exists, this program, under a policy_fn:
 *
 *   open_fn     the no-op policy_fn of direct: the policy thread answers CONTINUE
 *   open_deny   a policy_fn that denies another file at its first call: every open is then
 *               made on the child's behalf (resolved, checked, reopened by a confined thread
 *               on a worker, installed with ADDFD)
 *
 * The report gives the median per-call latency of each and the held call's overhead over the
 * round trip: (policy_fn - bare) / (trapped - bare), and the same for direct; the target is at
 * most 1.5; and what an open costs while a deny is in force, open_deny over open_fn.
 *
 *   policy-fn [-n CALLS] [-r ROUNDS]
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "sandlock.h"

#define PROBE "/usr/.sandlock-bench-none"
#define PROBE_DENIED "/bin/sh" /* a file the helper never opens */

static int helper(size_t n, const char *file)
{
	int64_t t0 = bench_now_ns();

	for (size_t i = 0; i < n; i++) {
		long fd = syscall(SYS_openat, AT_FDCWD, file ? file : PROBE, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			close((int)fd);
	}
	printf("%.1f\n", (double)(bench_now_ns() - t0) / (double)n);
	return 0;
}

static int32_t noop(const sandlock_policy_event_t *ev, sandlock_policy_ctx_t *ctx, void *ud)
{
	(void)ev;
	(void)ctx;
	(void)ud;
	return SANDLOCK_POLICY_ALLOW;
}

static int32_t deny_first(const sandlock_policy_event_t *ev, sandlock_policy_ctx_t *ctx, void *ud)
{
	static _Thread_local int done;

	(void)ev;
	(void)ud;
	if (!done++)
		(void)sandlock_policy_ctx_deny_path(ctx, PROBE_DENIED);
	return SANDLOCK_POLICY_ALLOW;
}

#define N_VARIANTS 6

/* One batch in variant @v (0 bare, 1 trapped, 2 policy_fn, 3 direct, 4 open_fn, 5 open_deny):
 * the mean ns per call, or < 0. */
static double batch(const char *self, const char *dir, int v, size_t n)
{
	char count[32], buf[64] = "";
	const char *argv[] = { self, "--helper", count, v >= 4 ? self : NULL, NULL };
	size_t len = 0;

	snprintf(count, sizeof(count), "%zu", n);
	if (v == 0) {
		int fd[2];
		if (pipe(fd) < 0)
			return -1;
		pid_t pid = fork();
		if (pid == 0) {
			dup2(fd[1], 1);
			execv(self, (char *const *)argv);
			_exit(127);
		}
		close(fd[1]);
		ssize_t k = read(fd[0], buf, sizeof(buf) - 1);
		close(fd[0]);
		waitpid(pid, NULL, 0);
		buf[k > 0 ? k : 0] = '\0';
		return k > 0 ? atof(buf) : -1;
	}
	sandlock_policy_t *p = NULL;
	sandlock_sandbox_t *sb = NULL;
	static const char *const dirs[] = { "/usr", "/lib", "/lib64", "/bin" };
	sandlock_policy_new(&p);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (access(dirs[i], F_OK) == 0)
			sandlock_policy_add_fs_read(p, dirs[i]);
	sandlock_policy_add_fs_read(p, dir);
	if (v == 1 || v == 2)
		sandlock_policy_set_name(p, "bench", NULL);
	for (uint32_t i = 0; i < SANDLOCK_PROTECTION_COUNT; i++)
		sandlock_policy_set_protection(p, i, SANDLOCK_PROTECTION_DEGRADED);
	if (v >= 2)
		sandlock_policy_set_policy_fn(p, v == 5 ? deny_first : noop, NULL, NULL);
	sandlock_spawn_opts_t o = { .size = sizeof(o), .stdout_mode = SANDLOCK_STDIO_PIPE };
	int r = sandlock_spawn(p, argv, &o, &sb, NULL);
	sandlock_policy_free(p);
	if (r < 0)
		return -1;
	sandlock_sandbox_wait(sb, -1);
	const uint8_t *out = sandlock_sandbox_stdout(sb, &len);
	snprintf(buf, sizeof(buf), "%.*s", (int)len, out ? (const char *)out : "");
	sandlock_sandbox_free(sb);
	return len ? atof(buf) : -1;
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "bare",   "trapped", "policy_fn",
					     "direct", "open_fn", "open_deny" };
	char self[PATH_MAX], dir[PATH_MAX];
	size_t n = 20000, rounds = 7;
	int opt;

	if ((argc == 3 || argc == 4) && strcmp(argv[1], "--helper") == 0)
		return helper((size_t)strtoull(argv[2], NULL, 10), argc == 4 ? argv[3] : NULL);
	while ((opt = getopt(argc, argv, "n:r:h")) != -1) {
		if (opt == 'n')
			n = (size_t)strtoull(optarg, NULL, 10);
		else if (opt == 'r')
			rounds = (size_t)strtoull(optarg, NULL, 10);
		else {
			fprintf(opt == 'h' ? stdout : stderr,
				"usage: policy-fn [-n CALLS] [-r ROUNDS]\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	if (!n || !rounds || rounds > 1000 || !realpath("/proc/self/exe", self))
		return 2;
	snprintf(dir, sizeof(dir), "%s", self);
	*strrchr(dir, '/') = '\0';
	double *v[N_VARIANTS];
	for (int k = 0; k < N_VARIANTS; k++)
		v[k] = calloc(rounds, sizeof(double));
	for (size_t i = 0; i < rounds; i++)
		for (int j = 0; j < N_VARIANTS; j++) {
			int k = (int)((i + (size_t)j) %
				      N_VARIANTS); /* the starting variant rotates */
			if ((v[k][i] = batch(self, dir, k, n)) < 0) {
				fprintf(stderr, "policy-fn: the %s variant failed\n", names[k]);
				return 1;
			}
		}
	bench_print_machine(stdout);
	printf("policy_fn benchmark: %zu openat calls per run, %zu rounds\n", n, rounds);
	struct bench_stats s[N_VARIANTS];
	for (int k = 0; k < N_VARIANTS; k++) {
		s[k] = bench_stats_of(v[k], rounds);
		printf("  %-10s median %8.1f ns/call  p10 %8.1f  p90 %8.1f\n", names[k],
		       s[k].median, s[k].p10, s[k].p90);
	}
	double trip = s[1].median - s[0].median;
	for (int k = 2; k < 4; k++)
		printf("  %s: held call over the round trip: %.2fx (target <= 1.5x)\n", names[k],
		       trip > 0 ? (s[k].median - s[0].median) / trip : 0.0);
	printf("  open while a deny is in force: %.1f us more than without (%.2fx)\n",
	       (s[5].median - s[4].median) / 1000.0, s[4].median > 0 ? s[5].median / s[4].median : 0);
	for (int k = 0; k < N_VARIANTS; k++)
		free(v[k]);
	return 0;
}
