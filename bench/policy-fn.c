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
 *   raw         the mechanism without sandlock: a filter trapping openat in this process and a
 *               thread answering NOTIF_RECV with CONTINUE (the bare round trip)
 *   hop         the same, the call handed from the receiving thread to a second one (a mutex
 *               and a condition variable, as the policy thread is woken) that answers: the
 *               floor of a decision made on a thread of its own (direct's shape)
 *   hop+back    handed to the second thread and back (an eventfd the receiver polls with the
 *               listener) before the receiver answers: the floor of policy_fn's shape
 *
 * The report gives the median per-call latency of each and the held call's overhead over the
 * round trip: (policy_fn - bare) / (trapped - bare), and the same for direct; the target is at
 * most 1.5. The floors are given the same way: what a callback on its own thread costs at the
 * least, before any of sandlock's work.
 *
 *   policy-fn [-n CALLS] [-r ROUNDS]
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "sandlock.h"

#define PROBE "/usr/.sandlock-bench-none"

static int helper(size_t n)
{
	int64_t t0 = bench_now_ns();

	for (size_t i = 0; i < n; i++)
		(void)syscall(SYS_openat, AT_FDCWD, PROBE, O_RDONLY | O_CLOEXEC);
	printf("%.1f\n", (double)(bench_now_ns() - t0) / (double)n);
	return 0;
}

/* ---- the floors: one process, a filter on its main thread, answered by its own threads ---- */

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, uint64_t)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP 1
#endif

enum floor_mode { FLOOR_RAW, FLOOR_HOP, FLOOR_BACK };

struct floor {
	enum floor_mode mode;
	atomic_int listener; /* -1 until the main thread installed its filter */
	int ready_fd;	     /* FLOOR_BACK: the second thread's answer is ready */
	pthread_mutex_t lock;
	pthread_cond_t work;
	int queued, ready; /* one call in flight at a time: the helper loop is serial */
	struct seccomp_notif req;
};

static int floor_send(int listener, uint64_t id)
{
	struct seccomp_notif_resp resp = { .id = id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE };

	/* The benchmark's own openat of a missing file: nothing is decided on its name. */
	return ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

/* The second thread: takes the call handed to it, answers it (hop) or hands it back. */
static void *floor_decider(void *arg)
{
	struct floor *f = arg;
	const uint64_t one = 1;

	for (;;) {
		pthread_mutex_lock(&f->lock);
		while (!f->queued)
			pthread_cond_wait(&f->work, &f->lock);
		f->queued = 0;
		uint64_t id = f->req.id;
		if (f->mode == FLOOR_BACK)
			f->ready = 1;
		pthread_mutex_unlock(&f->lock);
		if (f->mode == FLOOR_HOP)
			(void)floor_send(atomic_load(&f->listener), id);
		else
			(void)!write(f->ready_fd, &one, sizeof(one));
	}
	return NULL;
}

/* The receiving thread: the listener (and, for hop+back, the ready eventfd) in one poll. */
static void *floor_receiver(void *arg)
{
	struct floor *f = arg;
	int listener;
	uint64_t n;

	while ((listener = atomic_load(&f->listener)) < 0)
		sched_yield();
	for (;;) {
		struct pollfd p[2] = { { .fd = listener, .events = POLLIN },
				       { .fd = f->ready_fd, .events = POLLIN } };
		if (poll(p, f->mode == FLOOR_BACK ? 2 : 1, -1) < 0)
			continue;
		if (p[1].revents & POLLIN) {
			(void)!read(f->ready_fd, &n, sizeof(n));
			pthread_mutex_lock(&f->lock);
			uint64_t id = f->req.id;
			f->ready = 0;
			pthread_mutex_unlock(&f->lock);
			(void)floor_send(listener, id);
		}
		if (!(p[0].revents & POLLIN))
			continue;
		struct seccomp_notif req;
		memset(&req, 0, sizeof(req));
		if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
			continue;
		if (f->mode == FLOOR_RAW) {
			(void)floor_send(listener, req.id);
			continue;
		}
		pthread_mutex_lock(&f->lock);
		f->req = req;
		f->queued = 1;
		pthread_cond_signal(&f->work);
		pthread_mutex_unlock(&f->lock);
	}
	return NULL;
}

/* Traps openat on the calling thread alone (the answering threads were started before it). */
static int floor_filter(void)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(insns) / sizeof(insns[0]), .filter = insns };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	int fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			      SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (fd >= 0) { /* what sandlock's supervisor asks too */
		uint64_t flags = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
		(void)ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, flags);
	}
	return fd;
}

/* The helper of a floor variant: its threads, then the filter, then the timed loop. */
static int floor_helper(enum floor_mode mode, size_t n)
{
	static struct floor f = { .lock = PTHREAD_MUTEX_INITIALIZER,
				  .work = PTHREAD_COND_INITIALIZER };
	pthread_t t;

	f.mode = mode;
	atomic_store(&f.listener, -1);
	f.ready_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (f.ready_fd < 0 || pthread_create(&t, NULL, floor_receiver, &f) != 0 ||
	    (mode != FLOOR_RAW && pthread_create(&t, NULL, floor_decider, &f) != 0))
		return 1;
	int fd = floor_filter();
	if (fd < 0)
		return 1;
	atomic_store(&f.listener, fd);
	return helper(n);
}

static int32_t noop(const sandlock_policy_event_t *ev, sandlock_policy_ctx_t *ctx, void *ud)
{
	(void)ev;
	(void)ctx;
	(void)ud;
	return SANDLOCK_POLICY_ALLOW;
}

#define N_VARIANTS 7
#define FIRST_FLOOR 4

/* One batch in variant @v (0 bare, 1 trapped, 2 policy_fn, 3 direct, 4.. the floors): the mean
 * ns per call, or < 0. */
static double batch(const char *self, const char *dir, int v, size_t n)
{
	char count[32], mode[16], buf[64] = "";
	const char *argv[] = { self, "--helper", count, NULL, NULL };
	size_t len = 0;

	snprintf(count, sizeof(count), "%zu", n);
	snprintf(mode, sizeof(mode), "%d", v - FIRST_FLOOR);
	if (v >= FIRST_FLOOR) {
		argv[1] = "--floor";
		argv[2] = mode;
		argv[3] = count;
	}
	if (v == 0 || v >= FIRST_FLOOR) {
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
	if (v != 3)
		sandlock_policy_set_name(p, "bench", NULL);
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
	static const char *const names[] = { "bare", "trapped", "policy_fn", "direct",
					     "raw",  "hop",	"hop+back" };
	char self[PATH_MAX], dir[PATH_MAX];
	size_t n = 20000, rounds = 7;
	int opt;

	if (argc == 3 && strcmp(argv[1], "--helper") == 0)
		return helper((size_t)strtoull(argv[2], NULL, 10));
	if (argc == 4 && strcmp(argv[1], "--floor") == 0)
		return floor_helper((enum floor_mode)atoi(argv[2]),
				    (size_t)strtoull(argv[3], NULL, 10));
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
	double trip = s[1].median - s[0].median, raw = s[4].median - s[0].median;
	for (int k = 2; k < FIRST_FLOOR; k++)
		printf("  %s: held call over the round trip: %.2fx (target <= 1.5x)\n", names[k],
		       trip > 0 ? (s[k].median - s[0].median) / trip : 0.0);
	for (int k = FIRST_FLOOR + 1; k < N_VARIANTS; k++)
		printf("  floor %s: over the raw round trip: %.2fx\n", names[k],
		       raw > 0 ? (s[k].median - s[0].median) / raw : 0.0);
	printf("  direct over hop: %.2fx, policy_fn over hop+back: %.2fx\n",
	       s[5].median > s[0].median ? (s[3].median - s[0].median) / (s[5].median - s[0].median)
					 : 0.0,
	       s[6].median > s[0].median ? (s[2].median - s[0].median) / (s[6].median - s[0].median)
					 : 0.0);
	for (int k = 0; k < N_VARIANTS; k++)
		free(v[k]);
	return 0;
}
