/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/policy-fn-exec: what an exec costs under a policy_fn when other threads share the
 * caller's memory (they are frozen with ptrace while the argv is read and until the exec is
 * over). The helper (this program re-executed) times posix_spawn("/bin/true") and its wait, in
 * four variants, run side by side in rounds:
 *
 *   bare       no sandbox
 *   sandbox    a sandbox without a policy_fn (the exec is not trapped)
 *   alone      a no-op C policy_fn, a single-threaded caller: the exec is held and shown
 *   frozen     the same with a second thread (idle in pause): it is frozen for each exec
 *
 * The report gives the median per-spawn time of each and what the freeze adds (frozen - alone).
 *
 *   policy-fn-exec [-n SPAWNS] [-r ROUNDS]
 */
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "sandlock.h"

#define N_VARIANTS 4

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static int helper(size_t n, int threaded)
{
	char *const v[] = { (char[]){ "/bin/true" }, NULL };
	pthread_t t;

	if (threaded && pthread_create(&t, NULL, idle, NULL) != 0)
		return 1;
	int64_t t0 = bench_now_ns();
	for (size_t i = 0; i < n; i++) {
		pid_t pid;
		int st;
		if (posix_spawn(&pid, v[0], NULL, NULL, v, NULL) != 0 || waitpid(pid, &st, 0) < 0 ||
		    st != 0)
			return 1;
	}
	printf("%.1f\n", (double)(bench_now_ns() - t0) / (double)n / 1000.0);
	fflush(stdout);
	_exit(0);
}

static int32_t noop(const sandlock_policy_event_t *ev, sandlock_policy_ctx_t *ctx, void *ud)
{
	(void)ev;
	(void)ctx;
	(void)ud;
	return SANDLOCK_POLICY_ALLOW;
}

static double bare(const char *self, const char *count)
{
	char buf[64] = "";
	int fd[2];

	if (pipe(fd) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		execl(self, self, "--helper", count, "0", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	ssize_t k = read(fd[0], buf, sizeof(buf) - 1);
	close(fd[0]);
	waitpid(pid, NULL, 0);
	buf[k > 0 ? k : 0] = '\0';
	return k > 0 ? atof(buf) : -1;
}

/* One batch in variant @v: the mean us per spawn, or < 0. */
static double batch(const char *self, const char *dir, int v, size_t n)
{
	char count[32], buf[64] = "";
	const char *argv[] = { self, "--helper", count, v == 3 ? "1" : "0", NULL };
	static const char *const dirs[] = { "/usr", "/lib", "/lib64", "/bin" };
	sandlock_policy_t *p = NULL;
	sandlock_sandbox_t *sb = NULL;
	size_t len = 0;

	snprintf(count, sizeof(count), "%zu", n);
	if (v == 0)
		return bare(self, count);
	sandlock_policy_new(&p);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (access(dirs[i], F_OK) == 0)
			sandlock_policy_add_fs_read(p, dirs[i]);
	sandlock_policy_add_fs_read(p, dir);
	for (uint32_t i = 0; i < SANDLOCK_PROTECTION_COUNT; i++)
		sandlock_policy_set_protection(p, i, SANDLOCK_PROTECTION_DEGRADED);
	if (v >= 2)
		sandlock_policy_set_policy_fn(p, noop, NULL, NULL);
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
	static const char *const names[] = { "bare", "sandbox", "alone", "frozen" };
	char self[PATH_MAX], dir[PATH_MAX];
	size_t n = 300, rounds = 7;
	int opt;

	if (argc == 4 && strcmp(argv[1], "--helper") == 0)
		return helper((size_t)strtoull(argv[2], NULL, 10), atoi(argv[3]));
	while ((opt = getopt(argc, argv, "n:r:h")) != -1) {
		if (opt == 'n')
			n = (size_t)strtoull(optarg, NULL, 10);
		else if (opt == 'r')
			rounds = (size_t)strtoull(optarg, NULL, 10);
		else {
			fprintf(opt == 'h' ? stdout : stderr,
				"usage: policy-fn-exec [-n SPAWNS] [-r ROUNDS]\n");
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
			int k = (int)((i + (size_t)j) % N_VARIANTS); /* the first one rotates */
			if ((v[k][i] = batch(self, dir, k, n)) < 0) {
				fprintf(stderr, "policy-fn-exec: the %s variant failed\n", names[k]);
				return 1;
			}
		}
	bench_print_machine(stdout);
	printf("policy_fn exec benchmark: %zu posix_spawn+wait per run, %zu rounds\n", n, rounds);
	struct bench_stats s[N_VARIANTS];
	for (int k = 0; k < N_VARIANTS; k++) {
		s[k] = bench_stats_of(v[k], rounds);
		printf("  %-8s median %8.1f us/spawn  p10 %8.1f  p90 %8.1f\n", names[k], s[k].median,
		       s[k].p10, s[k].p90);
	}
	printf("  the freeze adds %.1f us per exec (frozen - alone)\n", s[3].median - s[2].median);
	for (int k = 0; k < N_VARIANTS; k++)
		free(v[k]);
	return 0;
}
