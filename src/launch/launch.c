/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * launch: the child's confinement sequence.
 *
 *   close the host's fds (but pass_fds) -> stdio -> signals -> setpgid -> PDEATHSIG -> process
 *   knobs -> user namespace (uid/gid) -> chdir -> NO_NEW_PRIVS
 *   -> landlock_restrict_self -> [sendmsg trapped: the listener's number to the parent]
 *   -> seccomp (+ listener) -> "ready" (+ listener) to the parent, or wait until it took it
 *   -> wait for "go"
 *   -> close fds >= 3 but pass_fds, which lose FD_CLOEXEC -> rlimits -> execve (PATH search)
 *
 * Any call after the filter may be trapped: the parent answers them from the moment it holds
 * the listener, and the hand-off itself never waits on such a call.
 *
 * Everything here runs in a child cloned from a possibly multi-threaded parent, and usually
 * with CLONE_VM (sandbox/sandbox.c): in the parent's memory, on a stack of its own, with the
 * parent's thread-local storage. So it makes raw syscalls that return -errno (raw_sc: glibc's
 * syscall() would write errno, which belongs to a parent thread), touches no
 * allocator, lock, stdio or TLS, and writes no memory but its own stack and plan->sh_argv[1].
 * The Makefile builds this file without sanitizer instrumentation, whose shadow writes would
 * land in the parent's shadow memory. The plan was built in the parent.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <signal.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "launch.h"
#include "sandlock.h"
#include "syscall-util.h"

/* A raw syscall: the kernel's return value, -errno on failure; no errno, no TLS. */
static inline long raw_sc6(long n, long a, long b, long c, long d, long e, long f)
{
#if defined(__x86_64__)
	long ret;
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;
	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory", "cc");
	return x0;
#else
#error "raw_sc6: unsupported architecture"
#endif
}

#define RAW_SC_(n, a, b, c, d, e, f, ...)                                                          \
	raw_sc6((long)(n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))
/* raw_sc(SYS_x, args...): up to six arguments, the missing ones 0. */
#define raw_sc(...) RAW_SC_(__VA_ARGS__, 0, 0, 0, 0, 0, 0, 0)

static const char *const step_names[_LAUNCH_STEP_MAX] = {
	[LAUNCH_STEP_STDIO] = "dup2",
	[LAUNCH_STEP_SIGNALS] = "rt_sigaction",
	[LAUNCH_STEP_SETPGID] = "setpgid",
	[LAUNCH_STEP_PDEATHSIG] = "prctl(PR_SET_PDEATHSIG)",
	[LAUNCH_STEP_PERSONALITY] = "personality(ADDR_NO_RANDOMIZE)",
	[LAUNCH_STEP_THP] = "prctl(PR_SET_THP_DISABLE)",
	[LAUNCH_STEP_COREDUMP] = "setrlimit(RLIMIT_CORE)",
	[LAUNCH_STEP_AFFINITY] = "sched_setaffinity",
	[LAUNCH_STEP_CHDIR] = "chdir",
	[LAUNCH_STEP_USERNS] = "unshare(CLONE_NEWUSER)",
	[LAUNCH_STEP_ID_MAP] = "writing the uid and gid maps",
	[LAUNCH_STEP_NO_NEW_PRIVS] = "prctl(PR_SET_NO_NEW_PRIVS)",
	[LAUNCH_STEP_LANDLOCK] = "landlock_restrict_self",
	[LAUNCH_STEP_SECCOMP] = "seccomp",
	[LAUNCH_STEP_SEND_LISTENER] = "sendmsg(ready)",
	[LAUNCH_STEP_WAIT] = "wait for start",
	[LAUNCH_STEP_CLOSE_FDS] = "close_range",
	[LAUNCH_STEP_RLIMIT] = "setrlimit(RLIMIT_NOFILE)",
	[LAUNCH_STEP_EXECVE] = "execve",
};

const char *launch_step_name(int step)
{
	if (step < 0 || step >= _LAUNCH_STEP_MAX)
		return "launch";
	return step_names[step];
}

static _noreturn_ void child_exit(int code)
{
	for (;;)
		raw_sc(SYS_exit_group, code);
}

static _noreturn_ void fail(const struct launch_io *io, int step, int err)
{
	struct launch_report rep = { .step = step, .err = err };

	raw_sc(SYS_write, io->errpipe, &rep, sizeof(rep));
	child_exit(127);
}

/* The kernel's sigaction layout (not glibc's). */
struct k_sigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};

static int reset_signals(void)
{
	/* The parent blocks every signal around the clone, so no handler of the host has run in
	 * here yet; but the host's handlers are still installed in this copy, and a signal that
	 * is pending when the mask is lifted before execve would run one of them in the child.
	 * As posix_spawn does: every signal with a handler goes back to SIG_DFL. SIG_IGN is
	 * kept (execve keeps it too), so "nohup sandlock run ..." keeps its meaning, except for
	 * SIGPIPE and SIGXFSZ, which hosts such as Python ignore and commands expect at their
	 * defaults (as subprocess's restore_signals does). */
	struct k_sigaction dfl = { .handler = SIG_DFL }, cur;

	for (int sig = 1; sig <= 64; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		long r = raw_sc(SYS_rt_sigaction, sig, NULL, &cur, sizeof(uint64_t));
		if (r < 0)
			return (int)r;
		if (cur.handler == SIG_DFL ||
		    (cur.handler == SIG_IGN && sig != SIGPIPE && sig != SIGXFSZ))
			continue;
		r = raw_sc(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(uint64_t));
		if (r < 0)
			return (int)r;
	}
	return 0;
}

/* Close every descriptor above 2 but the @n in @keep (sorted here, in place). Returns 0 or
 * -errno. */
static long close_except(int *keep, int n)
{
	long r;

	for (int i = 1; i < n; i++) /* insertion sort: no allocation here */
		for (int j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			int t = keep[j];
			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	unsigned first = 3;
	for (int i = 0; i < n; i++) {
		if ((unsigned)keep[i] > first &&
		    (r = raw_sc(__NR_close_range, first, (unsigned)keep[i] - 1, 0)) < 0)
			return r;
		if ((unsigned)keep[i] + 1 > first)
			first = (unsigned)keep[i] + 1;
	}
	return raw_sc(__NR_close_range, first, ~0U, 0);
}

#define KEEP_MAX (6 + SANDLOCK_PASS_FDS_MAX)

/* Close every descriptor above 2 but the ones the launch still needs. The clone copied all of
 * the host's: another sandbox's error pipe among them, whose reader would wait for this child
 * (parked, perhaps for long) instead of its own. */
static long close_all_but(const struct plan *plan, const struct launch_io *io)
{
	int keep[KEEP_MAX], n = 0;

	keep[n++] = io->sock;
	keep[n++] = io->errpipe;
	keep[n++] = plan->ruleset_fd;
	for (int i = 0; i < 3; i++)
		if (io->stdio[i] >= 0)
			keep[n++] = io->stdio[i];
	for (int i = 0; i < io->n_pass_fds; i++)
		keep[n++] = io->pass_fds[i];
	return close_except(keep, n);
}

static void apply_knobs(const struct plan *plan, const struct launch_io *io)
{
	long r;

	if (plan->no_randomize_memory) {
		/* Before the filter: personality(2) is on the default blocklist. The persona
		 * survives execve. */
		long cur = raw_sc(SYS_personality, 0xffffffffUL);
		r = cur < 0 ? cur : raw_sc(SYS_personality, (unsigned long)cur | ADDR_NO_RANDOMIZE);
		if (r < 0)
			fail(io, LAUNCH_STEP_PERSONALITY, (int)-r);
	}
	if (plan->no_huge_pages && (r = raw_sc(SYS_prctl, PR_SET_THP_DISABLE, 1)) < 0)
		fail(io, LAUNCH_STEP_THP, (int)-r);
	if (plan->no_coredump) {
		/* RLIMIT_CORE, not PR_SET_DUMPABLE: execve resets the dumpable flag of the new
		 * program's mm, while rlimits survive it. */
		struct rlimit rl = { 0, 0 };
		if ((r = raw_sc(SYS_prlimit64, 0, RLIMIT_CORE, &rl, NULL)) < 0)
			fail(io, LAUNCH_STEP_COREDUMP, (int)-r);
	}
	if (plan->has_cpus &&
	    (r = raw_sc(SYS_sched_setaffinity, 0, sizeof(plan->cpus), &plan->cpus)) < 0)
		fail(io, LAUNCH_STEP_AFFINITY, (int)-r);
}

/* Write @len bytes of @text to /proc/self/@name. 0 or -errno. */
static long write_self(const char *name, const char *text, size_t len)
{
	long fd = raw_sc(SYS_openat, AT_FDCWD, name, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return fd;
	long r = raw_sc(SYS_write, fd, text, len);
	raw_sc(SYS_close, fd);
	return r < 0 ? r : r == (long)len ? 0 : -EIO;
}

/* "@inner @outer 1\n" in @buf; its length. */
static size_t id_line(char *buf, uint32_t inner, uint32_t outer)
{
	char tmp[24];
	size_t n = 0;
	uint32_t v[2] = { inner, outer };

	for (int k = 0; k < 2; k++) {
		size_t t = 0;
		do
			tmp[t++] = (char)('0' + v[k] % 10);
		while ((v[k] /= 10));
		while (t)
			buf[n++] = tmp[--t];
		buf[n++] = ' ';
	}
	buf[n++] = '1';
	buf[n++] = '\n';
	return n;
}

/* uid/gid: a user namespace of the child's own, where it is @plan's ids, mapped to the ids it
 * has outside (the one mapping an unprivileged process may write for itself). Before Landlock,
 * which would refuse the writes to /proc/self, and before the filter, which refuses unshare. */
static void enter_userns(const struct plan *plan, const struct launch_io *io)
{
	char line[48];
	long uid = raw_sc(SYS_geteuid), gid = raw_sc(SYS_getegid), r;

	if ((r = raw_sc(SYS_unshare, CLONE_NEWUSER)) < 0)
		fail(io, LAUNCH_STEP_USERNS, (int)-r);
	if ((r = write_self("/proc/self/setgroups", "deny", 4)) < 0 ||
	    (r = write_self("/proc/self/uid_map", line, id_line(line, plan->uid, (uint32_t)uid))) <
		    0 ||
	    (r = write_self("/proc/self/gid_map", line, id_line(line, plan->gid, (uint32_t)gid))) <
		    0)
		fail(io, LAUNCH_STEP_ID_MAP, (int)-r);
}

/* Returns the listener (supervised), 0, or -errno. */
static long install_filter(const struct plan *plan)
{
	unsigned flags = 0;

	if (plan->supervised)
		flags = SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
	long r = raw_sc(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &plan->prog);
	if (r == -EINVAL && (flags & SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)) {
		/* Before 5.19: a signal can interrupt a trapped syscall that the supervisor is
		 * answering; handlers then see the notification vanish (ID_VALID fails). */
		flags &= ~SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
		r = raw_sc(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &plan->prog);
	}
	return r;
}

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#elif defined(__riscv) && __riscv_xlen == 64
#define NATIVE_ARCH AUDIT_ARCH_RISCV64
#else
#error "the native audit architecture of this target"
#endif
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define ARG_LOW(n) (offsetof(struct seccomp_data, args[n]) + 4)
#else
#define ARG_LOW(n) offsetof(struct seccomp_data, args[n])
#endif

/* After the launch's own sendmsg: sendmsg with LAUNCH_SENDMSG_FLAG is refused (EINVAL), which
 * the supervised filter leaves untrapped (launch.h). Another ABI's calls are the first
 * filter's to decide (it refuses them). */
static long close_launch_flag(void)
{
	static const struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_sendmsg, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LOW(2)),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, LAUNCH_SENDMSG_FLAG, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	const struct sock_fprog prog = { .len = ELEMENTSOF(insns),
					 .filter = (struct sock_filter *)insns };

	return raw_sc(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

/* Tell the parent the child is confined: one byte, carrying the listener (SCM_RIGHTS) when
 * there is one. */
static int send_ready(int sock, int listener, unsigned flag)
{
	char dummy = 'R';
	struct iovec iov = { .iov_base = &dummy, .iov_len = 1 };
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
	};

	if (listener >= 0) {
		memset(u.buf, 0, sizeof(u.buf));
		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof(u.buf);
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &listener, sizeof(int));
	}
	/* Untrapped with LAUNCH_SENDMSG_FLAG (@flag): nobody answers trapped calls yet. */
	long r = raw_sc(SYS_sendmsg, sock, &msg, MSG_NOSIGNAL | flag);
	return r == 1 ? 0 : r < 0 ? (int)r : -EPIPE;
}

/* plan.listener_by_number: sendmsg is trapped, so it cannot carry the listener, and nothing
 * the child calls once its filter is in may be relied on to reach the parent (any of it may be
 * trapped, and nobody answers before the parent holds the listener). So before the filter, the
 * child says which number the listener will have: the lowest free descriptor, found here. The
 * parent takes it with pidfd_getfd once it exists. Returns the number. */
static long announce_listener(const struct launch_io *io)
{
	long n = raw_sc(SYS_fcntl, io->sock, F_DUPFD_CLOEXEC, 0);

	if (n < 0)
		fail(io, LAUNCH_STEP_SEND_LISTENER, (int)-n);
	raw_sc(SYS_close, n);
	char ready[1 + sizeof(int)] = { 'N' };
	int num = (int)n;
	memcpy(ready + 1, &num, sizeof(num));
	long r = raw_sc(SYS_write, io->sock, ready, sizeof(ready));
	if (r != (long)sizeof(ready))
		fail(io, LAUNCH_STEP_SEND_LISTENER, r < 0 ? (int)-r : EPIPE);
	return n;
}

static _noreturn_ void exec_command(const struct plan *plan, const struct launch_io *io)
{
	int seen_eacces = 0;

	/* The PATH search of execvp(3): skip what is not there, remember a denied candidate,
	 * stop at any other error, and hand a file without a binary format to /bin/sh. */
	for (size_t i = 0; plan->exec_paths[i]; i++) {
		int err = (int)-raw_sc(SYS_execve, plan->exec_paths[i], plan->argv, plan->envp);
		switch (err) {
		case ENOEXEC:
			plan->sh_argv[1] = plan->exec_paths[i];
			raw_sc(SYS_execve, "/bin/sh", plan->sh_argv, plan->envp);
			fail(io, LAUNCH_STEP_EXECVE, ENOEXEC);
		case EACCES:
			seen_eacces = 1;
			break;
		case ENOENT:
		case ENOTDIR:
		case ESTALE:
		case ENODEV:
		case ETIMEDOUT:
			break;
		default:
			fail(io, LAUNCH_STEP_EXECVE, err);
		}
	}
	fail(io, LAUNCH_STEP_EXECVE, seen_eacces ? EACCES : ENOENT);
}

/* SANDLOCK_SPAWN_FDS_FROM_3: pass_fds[i] becomes descriptor 3 + i. Only the error pipe and
 * the pass_fds are open above 2 by now, but any of them may sit on another's target: all go
 * above the targets first, then each onto its own. @out is @io with the new numbers (its
 * pass_fds in @at); on failure its error pipe is still a valid one. */
static long renumber_fds(const struct launch_io *io, struct launch_io *out, int *at)
{
	int n = io->n_pass_fds, top = 3 + n;
	long r;

	/* Field by field: no memcpy in this code (see the top of the file). */
	for (int i = 0; i < 3; i++)
		out->stdio[i] = io->stdio[i];
	out->sock = io->sock;
	out->errpipe = io->errpipe;
	out->parent = io->parent;
	out->wait_go = io->wait_go;
	out->pass_fds = io->pass_fds;
	out->n_pass_fds = n;
	out->fds_from_3 = 0;
	if ((r = raw_sc(SYS_fcntl, io->errpipe, F_DUPFD_CLOEXEC, top)) < 0)
		return r;
	raw_sc(SYS_close, io->errpipe);
	out->errpipe = (int)r;
	for (int i = 0; i < n; i++) {
		if ((r = raw_sc(SYS_fcntl, io->pass_fds[i], F_DUPFD_CLOEXEC, top)) < 0)
			return r;
		raw_sc(SYS_close, io->pass_fds[i]);
		at[i] = (int)r;
	}
	for (int i = 0; i < n; i++) {
		if ((r = raw_sc(SYS_dup3, at[i], 3 + i, O_CLOEXEC)) < 0)
			return r;
		raw_sc(SYS_close, at[i]);
		at[i] = 3 + i;
	}
	out->pass_fds = at;
	return 0;
}

_noreturn_ void launch_child(const struct plan *plan, const struct launch_io *io)
{
	long r;

	if ((r = close_all_but(plan, io)) < 0)
		fail(io, LAUNCH_STEP_CLOSE_FDS, (int)-r);
	for (int i = 0; i < 3; i++)
		if (io->stdio[i] >= 0 && (r = raw_sc(SYS_dup3, io->stdio[i], i, 0)) < 0)
			fail(io, LAUNCH_STEP_STDIO, (int)-r);
	if ((r = reset_signals()) < 0)
		fail(io, LAUNCH_STEP_SIGNALS, (int)-r);
	if ((r = raw_sc(SYS_setpgid, 0, 0)) < 0)
		fail(io, LAUNCH_STEP_SETPGID, (int)-r);
	if ((r = raw_sc(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL)) < 0)
		fail(io, LAUNCH_STEP_PDEATHSIG, (int)-r);
	if (raw_sc(SYS_getppid) != io->parent) /* the parent died before PDEATHSIG was set */
		child_exit(127);
	apply_knobs(plan, io);
	if (plan->has_ids)
		enter_userns(plan, io);
	if (plan->cwd && (r = raw_sc(SYS_chdir, plan->cwd)) < 0)
		fail(io, LAUNCH_STEP_CHDIR, (int)-r);
	/* Before the filter: seccomp needs it unprivileged, and it keeps a setuid binary from
	 * gaining what the policy never granted. */
	if ((r = raw_sc(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1)) < 0)
		fail(io, LAUNCH_STEP_NO_NEW_PRIVS, (int)-r);
	if ((r = raw_sc(__NR_landlock_restrict_self, plan->ruleset_fd, 0)) < 0)
		fail(io, LAUNCH_STEP_LANDLOCK, (int)-r);

	int got_go = 0;
	long number = -1;
	if (plan->listener_by_number)
		number = announce_listener(io);
	long listener = install_filter(plan);
	if (listener < 0)
		fail(io, LAUNCH_STEP_SECCOMP, (int)-listener);
	if (plan->listener_by_number) {
		/* The kernel gives the lowest free descriptor, and this table is the child's own:
		 * anything else cannot happen, and the parent checks what it takes. */
		if (listener != number)
			child_exit(127);
		/* Keep it until the parent says it has it ('T'); its "go" may come first. Trapped
		 * or not, this read is answered: the parent holds the listener from then on. */
		char c = 0;
		while (c != 'T') {
			if (raw_sc(SYS_read, io->sock, &c, 1) != 1)
				child_exit(127); /* the parent gave up on this sandbox */
			got_go |= c == 'G';
		}
		raw_sc(SYS_close, listener); /* the listener never stays in the child */
	} else {
		unsigned flag = plan->launch_flag_refused ? 0 : LAUNCH_SENDMSG_FLAG;
		if ((r = send_ready(io->sock, plan->supervised ? (int)listener : -1, flag)) < 0)
			fail(io, LAUNCH_STEP_SEND_LISTENER, (int)-r);
		if (plan->supervised)
			raw_sc(SYS_close, listener); /* the listener never stays in the child */
	}

	/* A forked child: the parent has set-up to do before this may exec (-i, parked). */
	char go;
	if (io->wait_go && !got_go && raw_sc(SYS_read, io->sock, &go, 1) != 1)
		child_exit(127); /* the parent gave up on this sandbox */
	/* After "go": the parent's snapshot of this child's filters (proc_ids_snapshot), taken
	 * before it, counts this one too. */
	if (plan->supervised && (r = close_launch_flag()) < 0)
		fail(io, LAUNCH_STEP_SECCOMP, (int)-r);

	/* Descriptors inherited from the parent were opened before confinement, and the kernel
	 * would keep honouring them whatever Landlock says: close them all. The error pipe is
	 * O_CLOEXEC and goes at execve. */
	int keep[KEEP_MAX], n = 0;
	keep[n++] = io->errpipe;
	for (int i = 0; i < io->n_pass_fds; i++)
		keep[n++] = io->pass_fds[i];
	if ((r = close_except(keep, n)) < 0)
		fail(io, LAUNCH_STEP_CLOSE_FDS, (int)-r);
	struct launch_io moved;
	int at[SANDLOCK_PASS_FDS_MAX];
	if (io->fds_from_3) {
		if ((r = renumber_fds(io, &moved, at)) < 0)
			fail(&moved, LAUNCH_STEP_CLOSE_FDS, (int)-r);
		io = &moved;
	}
	/* The caller's grant (sandlock_spawn_opts_t.pass_fds): kept open across execve. This
	 * child has a table of its own (no CLONE_FILES), so the caller's flags are untouched. */
	for (int i = 0; i < io->n_pass_fds; i++)
		if ((r = raw_sc(SYS_fcntl, io->pass_fds[i], F_SETFD, 0)) < 0)
			fail(io, LAUNCH_STEP_CLOSE_FDS, (int)-r);
	if (plan->has_nofile) {
		struct rlimit rl = { plan->nofile, plan->nofile_max };
		if ((r = raw_sc(SYS_prlimit64, 0, RLIMIT_NOFILE, &rl, NULL)) < 0)
			fail(io, LAUNCH_STEP_RLIMIT, (int)-r);
	}
	uint64_t none = 0;
	if ((r = raw_sc(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, sizeof(none))) < 0)
		fail(io, LAUNCH_STEP_SIGNALS, (int)-r);
	exec_command(plan, io);
}

int launch_child_main(void *arg)
{
	const struct launch_arg *a = arg;

	launch_child(a->plan, a->io);
}
