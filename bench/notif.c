/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/notif: the cost of one syscall trapped to the supervisor, against the bare seccomp
 * user-notification round trip. Every variant runs the same helper loop (one syscall N times,
 * timed by the trapped process itself) in its own process; they differ only in who answers.
 * Two trapped syscalls are measured:
 *
 *   setpgid(0, getpgrp())  the cheapest real trapped path of every supervised sandbox: a move
 *                          into a group the sandbox owns (shells do it for every job), which
 *                          handle_setpgid answers with CONTINUE after groups_owns() (a mutex
 *                          and one pidfd_send_signal(sig 0)); the headline, against the raw
 *                          RECV + SEND CONTINUE
 *   uname                  a handler that writes the task's memory: handle_uname writes a
 *                          utsname through a freshly opened /proc/<pid>/mem; against the raw
 *                          RECV + SEND val=0
 *
 * The variants:
 *
 *   bare              no filter: the untrapped floor (getpid, uname, setpgid)
 *   raw val=0         a filter trapping uname, setsid and setpgid, and a thread doing nothing
 *                     but NOTIF_RECV + NOTIF_SEND(val=0): the raw round trip for uname (for
 *                     setpgid the kernel then skips the syscall)
 *   raw val=0 nosync  the same without SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
 *   raw CONTINUE      the same answering FLAG_CONTINUE (the kernel then runs the syscall): the
 *                     raw round trip for setpgid
 *   raw owns          CONTINUE after groups_owns() on the helper's group: handle_setpgid's work
 *   raw alive         the same lookup, but poll(leader pidfd) instead of pidfd_send_signal(0):
 *                     a cheaper ownership check (while the leader lives, its pid pins the
 *                     group number; see docs/PERFORMANCE.md)
 *   raw epoll         epoll_wait before each NOTIF_RECV, CONTINUE: the epoll hop of sandlock's
 *                     event loop, alone
 *   raw epoll+owns    both: handle_setpgid's work in the shape of sandlock's event loop
 *   raw /proc/mem     the same work as sandlock's handle_uname: uname() in the supervisor, open
 *                     /proc/<pid>/mem, ID_VALID, pwrite the utsname, close
 *   raw open only     the open, ID_VALID and close of that, no write (what caching could save)
 *   raw kept dir      openat(a kept /proc/<pid> directory, "mem") instead of the full path
 *   raw kept mem fd   pwrite through a /proc/<pid>/mem descriptor kept open (the write alone)
 *   raw vm_writev     the same utsname written with process_vm_writev instead
 *   raw epoll+mem     /proc/mem work behind epoll_wait, the shape of sandlock's event loop
 *   lib handle()      sandlock's own supervisor_prepare/attach() + supervisor_handle() in a loop
 *                     (its dispatch, handle_uname and handle_setpgid, no event loop)
 *   sandlock          a real sandbox from sandlock_spawn(): this program re-executed as the
 *                     helper, answered by the sandbox thread's event loop
 *
 * The event stream (section 3), each against its own variant without it:
 *
 *   lib events        lib handle() with the run's stream (sv->events) asking for
 *                     SANDLOCK_EVENTS_DENIALS and no denial happening: what every trapped call
 *                     pays for the stream being there (the target: <= 1%)
 *   lib allowed       the stream with DENIALS | ALLOWED and a no-op callback, and one allowed
 *                     event emitted after each answered call, as a path or network handler
 *                     emits it: (lib allowed - lib events) is the cost of one event on the loop
 *   sandlock plain    a real sandbox without a name (a name makes it trap opens, to serve
 *                     /etc/hostname) and without the stream: Landlock alone answers an open
 *   sandlock events   the same spawned with events = DENIALS (what --log-denials asks): setpgid
 *                     and uname as above, and an open of an allowed file, which logging mode
 *                     traps to judge it: (events - plain) is the cost of logging per open
 *   sandlock allowed  events = DENIALS | ALLOWED and a no-op callback (what --log-events asks):
 *                     the open also emits an allowed event
 *
 * The open (open + close of OPEN_PATH, timed in the helper) runs in bare and the three sandlock
 * variants above only. Checks that the stream is really there: the callbacks count what they
 * got, and a run with the stream records no denial but the setpgid that proves it trapped.
 *
 * Every raw helper first makes itself a process-group leader (as sandlock's launch does), so
 * setpgid(0, getpgrp()) takes the same kernel path everywhere. Checks that a variant is really
 * trapped: the raw threads count the setpgid notifications they answer (each batch must add
 * exactly its calls); sandlock and lib must refuse setpgid into this program's group (EPERM,
 * which the kernel alone allows) and show their nodename; the raw variants that write the
 * utsname must show theirs.
 *
 * Batches of the variants are interleaved (the starting variant rotates each round); the report
 * gives the median, p10 and p90 of the per-batch mean latency, and ratios of medians. A last
 * section times the pieces of handle_setpgid's path in this process (mutex, pidfd_send_signal,
 * groups_owns, dispatch, the syscall part of epoll_wait).
 *
 *   notif [-n CALLS] [-b BATCH]
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "fd-util.h"
#include "macro.h"
#include "supervisor/groups.h"
#include "sandlock.h"
#include "supervisor/dispatch.h"
#include "supervisor/events.h"
#include "supervisor/notif.h"
#include "supervisor/supervisor.h"
#include "syscall-util.h"

#if defined(__x86_64__)
#define BENCH_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define BENCH_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "bench/notif: unsupported architecture"
#endif

#define WARMUP_CALLS 16
/* What OP_OPEN opens: under one of start_sandlock()'s read grants. */
#define OPEN_PATH "/etc/passwd"
#define REPLY_TIMEOUT_MS 30000

/* ---- the helper: the trapped side ---------------------------------------------------------- */

enum { OP_GETPID = 1, OP_UNAME, OP_SETPGID, OP_NODENAME, OP_MOVE, OP_OPEN, OP_QUIT };

struct cmd {
	uint32_t op, n;
	int32_t arg; /* OP_MOVE: the group */
};

struct reply {
	int64_t ns;
	int32_t err; /* errno of a failed call, 0 */
	char nodename[65];
};

/* Runs in the measured process: raw syscalls in a tight loop, timed with the vDSO clock (which
 * makes no syscall, so the filter never sees it). */
static _Noreturn void helper_loop(int in, int out)
{
	struct cmd c;
	struct utsname u;

	while (read_full(in, &c, sizeof(c)) == 0 && c.op != OP_QUIT) {
		struct reply r = { 0 };

		if (c.op == OP_NODENAME) {
			if (syscall(SYS_uname, &u) < 0)
				r.err = errno;
			else
				memcpy(r.nodename, u.nodename, sizeof(r.nodename) - 1);
		} else if (c.op == OP_MOVE) {
			/* One setpgid into another group: the check that it is trapped. */
			if (syscall(SYS_setpgid, 0, (pid_t)c.arg) < 0)
				r.err = errno;
		} else if (c.op == OP_SETPGID) {
			/* Into the group it is in (its own: it leads it): what shells do for every
			 * job, and what handle_setpgid answers cheapest. getpgrp is not trapped. */
			pid_t pgrp = getpgrp();
			for (uint32_t i = 0; i < WARMUP_CALLS; i++)
				syscall(SYS_setpgid, 0, pgrp);
			int64_t t0 = bench_now_ns();
			for (uint32_t i = 0; i < c.n; i++)
				if (syscall(SYS_setpgid, 0, pgrp) < 0)
					r.err = errno;
			r.ns = bench_now_ns() - t0;
		} else if (c.op == OP_OPEN) {
			/* An allowed open and its close (the close is never trapped). */
			int64_t t0 = 0;
			for (uint32_t i = 0; i < c.n + WARMUP_CALLS; i++) {
				if (i == WARMUP_CALLS)
					t0 = bench_now_ns();
				int fd = open(OPEN_PATH, O_RDONLY | O_CLOEXEC);
				if (fd < 0)
					r.err = errno;
				else
					close(fd);
			}
			r.ns = bench_now_ns() - t0;
		} else {
			long nr = c.op == OP_GETPID ? SYS_getpid : SYS_uname;
			for (uint32_t i = 0; i < WARMUP_CALLS; i++)
				syscall(nr, &u);
			int64_t t0 = bench_now_ns();
			for (uint32_t i = 0; i < c.n; i++)
				if (syscall(nr, &u) < 0)
					r.err = errno;
			r.ns = bench_now_ns() - t0;
		}
		if (write_full(out, &r, sizeof(r)) < 0)
			break;
	}
	_exit(0);
}

/* ---- the answering side ---------------------------------------------------------------------- */

enum mode {
	MODE_BARE,
	MODE_VAL0,
	MODE_VAL0_NOSYNC,
	MODE_CONTINUE,
	MODE_OWNS,
	MODE_ALIVE,
	MODE_EPOLL_CONTINUE,
	MODE_EPOLL_OWNS,
	MODE_PROCMEM,
	MODE_OPEN_ONLY,
	MODE_CACHED_DIR,
	MODE_CACHED_FD,
	MODE_VMWRITEV,
	MODE_EPOLL_PROCMEM,
	MODE_LIB,
	MODE_SANDLOCK,
	MODE_LIB_EVENTS,
	MODE_LIB_ALLOWED,
	MODE_SANDLOCK_PLAIN,
	MODE_SANDLOCK_EVENTS,
	MODE_SANDLOCK_ALLOWED,
	_MODE_MAX,
};

struct worker {
	const char *ulabel; /* row in the uname table; NULL: not measured */
	const char *slabel; /* row in the setpgid table; NULL: not measured */
	const char *olabel; /* row in the open table; NULL: not measured */
	enum mode mode;
	int floor; /* also measure getpid */
	int cmd_w, rep_r;
	pid_t pid;
	int listener;
	sandlock_sandbox_t *sb;
	struct groups groups; /* MODE_OWNS, MODE_EPOLL_OWNS, MODE_LIB: the helper's group */
	int has_groups;
	int leader_pidfd;	      /* a second pidfd of the helper (the component timings) */
	atomic_uint_fast64_t trapped; /* setpgid notifications answered (raw threads) */
	uint64_t expected;	      /* ... and how many there should be */
	double *getpid_ns, *uname_ns, *setpgid_ns, *open_ns;
	atomic_uint_fast64_t delivered; /* events the no-op callback got */
	size_t denials;			/* a sandbox with the stream: the denials it recorded */
	size_t n;
	char nodename[65];
	int move_err; /* errno of setpgid into this program's group */
};

static int uses_epoll(enum mode m)
{
	return m == MODE_EPOLL_CONTINUE || m == MODE_EPOLL_OWNS || m == MODE_EPOLL_PROCMEM;
}

static int is_lib(enum mode m)
{
	return m == MODE_LIB || m == MODE_LIB_EVENTS || m == MODE_LIB_ALLOWED;
}

static int is_sandlock(enum mode m)
{
	return m == MODE_SANDLOCK || m == MODE_SANDLOCK_PLAIN || m == MODE_SANDLOCK_EVENTS ||
	       m == MODE_SANDLOCK_ALLOWED;
}

/* The name of a sandbox variant's sandbox, which its helper sees as its nodename; NULL: none
 * given (a name makes the sandbox trap opens, for /etc/hostname: the variants that measure the
 * open have none, so that without the stream Landlock alone answers it). */
static const char *sandbox_name(enum mode m)
{
	return m == MODE_SANDLOCK ? "sandlock-bench" : NULL;
}

/* The SANDLOCK_EVENTS_* flags of a variant's stream; 0: none. */
static uint32_t events_of(enum mode m)
{
	if (m == MODE_LIB_EVENTS || m == MODE_SANDLOCK_EVENTS)
		return SANDLOCK_EVENTS_DENIALS;
	if (m == MODE_LIB_ALLOWED || m == MODE_SANDLOCK_ALLOWED)
		return SANDLOCK_EVENTS_DENIALS | SANDLOCK_EVENTS_ALLOWED;
	return 0;
}

static int uses_groups(enum mode m)
{
	return m == MODE_OWNS || m == MODE_ALIVE || m == MODE_EPOLL_OWNS || is_lib(m);
}

static const char *const raw_nodename = "raw-bench";

/* The utsname sandlock's handle_uname writes: the supervisor's own, with the sandbox name. */
static void make_utsname(struct utsname *u)
{
	if (uname(u) < 0)
		memset(u, 0, sizeof(*u));
	memset(u->nodename, 0, sizeof(u->nodename));
	strncpy(u->nodename, raw_nodename, sizeof(u->nodename) - 1);
}

static int id_valid(int listener, uint64_t id)
{
	return ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/* What notif_mem_write() does: open, ID_VALID (the fd now pins the right mm), pwrite, close. */
static int answer_procmem(int listener, const struct seccomp_notif *req,
			  struct seccomp_notif_resp *resp)
{
	struct utsname u;
	char path[32];

	make_utsname(&u);
	snprintf(path, sizeof(path), "/proc/%u/mem", req->pid);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!id_valid(listener, req->id)) {
		close(fd);
		return -ESRCH;
	}
	ssize_t k = pwrite(fd, &u, sizeof(u), (off_t)req->data.args[0]);
	close(fd);
	resp->error = k == (ssize_t)sizeof(u) ? 0 : -EFAULT;
	return 0;
}

/* Only the open and close of answer_procmem(): what a cached descriptor would save. */
static int answer_open_only(int listener, const struct seccomp_notif *req,
			    struct seccomp_notif_resp *resp)
{
	struct utsname u;
	char path[32];

	make_utsname(&u);
	snprintf(path, sizeof(path), "/proc/%u/mem", req->pid);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int valid = id_valid(listener, req->id);
	close(fd);
	return valid ? 0 : -ESRCH;
}

/* answer_procmem() with the /proc/<pid> directory kept open across calls (one helper, one pid):
 * openat(dirfd, "mem") per call. As safe as the per-call open: the directory descriptor is
 * bound to the struct pid (after the task is reaped, openat fails instead of reaching a reused
 * pid), and the mem descriptor is still opened per call on the task's current mm. */
static int answer_cached_dir(int listener, const struct seccomp_notif *req,
			     struct seccomp_notif_resp *resp, int *cached_dir, uint32_t *cached_pid)
{
	struct utsname u;
	char path[32];

	make_utsname(&u);
	if (*cached_dir < 0 || *cached_pid != req->pid) {
		if (*cached_dir >= 0)
			close(*cached_dir);
		snprintf(path, sizeof(path), "/proc/%u", req->pid);
		*cached_dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		*cached_pid = req->pid;
		if (*cached_dir < 0)
			return -errno;
	}
	int fd = openat(*cached_dir, "mem", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!id_valid(listener, req->id)) {
		close(fd);
		return -ESRCH;
	}
	ssize_t k = pwrite(fd, &u, sizeof(u), (off_t)req->data.args[0]);
	close(fd);
	resp->error = k == (ssize_t)sizeof(u) ? 0 : -EFAULT;
	return 0;
}

/* pwrite through a /proc/<pid>/mem descriptor kept open across calls (one helper, one pid).
 * Measures the write alone; not a safe design as is (see docs/PERFORMANCE.md). */
static int answer_cached_fd(int listener, const struct seccomp_notif *req,
			    struct seccomp_notif_resp *resp, int *cached_fd, uint32_t *cached_pid)
{
	struct utsname u;
	char path[32];

	make_utsname(&u);
	if (*cached_fd < 0 || *cached_pid != req->pid) {
		if (*cached_fd >= 0)
			close(*cached_fd);
		snprintf(path, sizeof(path), "/proc/%u/mem", req->pid);
		*cached_fd = open(path, O_WRONLY | O_CLOEXEC);
		*cached_pid = req->pid;
		if (*cached_fd < 0)
			return -errno;
	}
	if (!id_valid(listener, req->id))
		return -ESRCH;
	ssize_t k = pwrite(*cached_fd, &u, sizeof(u), (off_t)req->data.args[0]);
	resp->error = k == (ssize_t)sizeof(u) ? 0 : -EFAULT;
	return 0;
}

/* The same bytes with process_vm_writev, ID_VALID after. */
static int answer_vmwritev(int listener, const struct seccomp_notif *req,
			   struct seccomp_notif_resp *resp)
{
	struct utsname u;

	make_utsname(&u);
	struct iovec local = { .iov_base = &u, .iov_len = sizeof(u) };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)req->data.args[0],
				.iov_len = sizeof(u) };
	ssize_t k = process_vm_writev((pid_t)req->pid, &local, 1, &remote, 1, 0);
	if (!id_valid(listener, req->id))
		return -ESRCH;
	resp->error = k == (ssize_t)sizeof(u) ? 0 : -EFAULT;
	return 0;
}

/* handle_setpgid's fast path: the group is ours (groups_owns), so CONTINUE; else refuse. */
static int answer_owns(struct worker *w, const struct seccomp_notif *req,
		       struct seccomp_notif_resp *resp)
{
	pid_t pgid = (pid_t)req->data.args[1];

	if (pgid == 0 || !groups_owns(&w->groups, pgid))
		return -EPERM;
	resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	return 0;
}

/* A cheaper check than groups_owns(): the same lookup under the same lock, but "the leader has
 * not exited" (poll on its pidfd) instead of "the group has members" (pidfd_send_signal, sig 0). */
static int answer_alive(struct worker *w, const struct seccomp_notif *req,
			struct seccomp_notif_resp *resp)
{
	pid_t pgid = (pid_t)req->data.args[1];
	int ours = 0;

	pthread_mutex_lock(&w->groups.lock);
	for (size_t i = 0; i < w->groups.n && !ours; i++)
		if (w->groups.v[i].pgid == pgid) {
			struct pollfd p = { .fd = w->groups.v[i].leader_pidfd, .events = POLLIN };
			ours = poll(&p, 1, 0) == 0;
		}
	pthread_mutex_unlock(&w->groups.lock);
	if (pgid == 0 || !ours)
		return -EPERM;
	resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	return 0;
}

/* The callback of the variants with SANDLOCK_EVENTS_ALLOWED: counts, nothing else. */
static void noop_event(const sandlock_event_t *ev, void *user_data)
{
	struct worker *w = user_data;

	(void)ev;
	atomic_fetch_add(&w->delivered, 1);
}

/* MODE_LIB*: sandlock's dispatch in a bare loop; with a stream for the events variants (and one
 * allowed event after each answered call for MODE_LIB_ALLOWED: what a path or network handler
 * emits for a call it let through). */
static void *lib_thread(struct worker *w)
{
	const struct event allowed = { .nr = SYS_openat,
				       .category = EVENT_FILE,
				       .pid = w->pid,
				       .verdict = SANDLOCK_VERDICT_ALLOW,
				       .path = OPEN_PATH,
				       .access = "O_RDONLY" };
	uint32_t flags = events_of(w->mode);
	struct events *evs = NULL;
	struct supervisor sv;

	if (flags &&
	    (events_new(&evs, flags, flags & SANDLOCK_EVENTS_ALLOWED ? noop_event : NULL, w) < 0 ||
	     events_start(evs) < 0))
		goto out; /* its helper's calls hang: the orchestrator's poll says so */
	if (supervisor_prepare(&sv, "lib-bench", &w->groups, NULL) < 0)
		goto out;
	sv.events = evs;
	supervisor_attach(&sv, w->listener);
	while (supervisor_handle(&sv) == 0)
		if (w->mode == MODE_LIB_ALLOWED)
			events_emit(&sv, &allowed);
	supervisor_done(&sv);
out:
	events_free(evs);
	return NULL;
}

/* The answer to a trapped setpgid, by mode: 0 or a negative errno for the response. */
static int raw_answer_setpgid(struct worker *w, const struct seccomp_notif *req,
			      struct seccomp_notif_resp *resp)
{
	switch (w->mode) {
	case MODE_VAL0:
	case MODE_VAL0_NOSYNC:
		return 0; /* val = 0: the kernel skips setpgid */
	case MODE_OWNS:
	case MODE_EPOLL_OWNS:
		return answer_owns(w, req, resp);
	case MODE_ALIVE:
		return answer_alive(w, req, resp);
	default:
		resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		return 0;
	}
}

/* The answer to a trapped uname, by mode; @cached_fd and @cached_pid: the thread's cache. */
static int raw_answer_uname(struct worker *w, const struct seccomp_notif *req,
			    struct seccomp_notif_resp *resp, int *cached_fd, uint32_t *cached_pid)
{
	switch (w->mode) {
	case MODE_CONTINUE:
	case MODE_EPOLL_CONTINUE:
	case MODE_OWNS:
	case MODE_EPOLL_OWNS:
		resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		return 0;
	case MODE_PROCMEM:
	case MODE_EPOLL_PROCMEM:
		return answer_procmem(w->listener, req, resp);
	case MODE_OPEN_ONLY:
		return answer_open_only(w->listener, req, resp);
	case MODE_CACHED_DIR:
		return answer_cached_dir(w->listener, req, resp, cached_fd, cached_pid);
	case MODE_CACHED_FD:
		return answer_cached_fd(w->listener, req, resp, cached_fd, cached_pid);
	case MODE_VMWRITEV:
		return answer_vmwritev(w->listener, req, resp);
	default: /* val = 0, error = 0 */
		return 0;
	}
}

static int raw_answer(struct worker *w, const struct seccomp_notif *req,
		      struct seccomp_notif_resp *resp, int *cached_fd, uint32_t *cached_pid)
{
	if (req->data.nr == SYS_setpgid) {
		/* Counted before the answer: the helper cannot report a batch before its last
		 * call is counted. */
		atomic_fetch_add(&w->trapped, 1);
		return raw_answer_setpgid(w, req, resp);
	}
	if (req->data.nr != SYS_uname) {
		resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE; /* setsid: never called */
		return 0;
	}
	return raw_answer_uname(w, req, resp, cached_fd, cached_pid);
}

/* The next notification into @req (behind epoll_wait on @epfd, if >= 0): 1, 0 to try again,
 * -1 to stop (the helper is gone, or an error). */
static int raw_recv(int listener, int epfd, struct seccomp_notif *req, size_t req_size)
{
	if (epfd >= 0) {
		struct epoll_event ev;
		int n = epoll_wait(epfd, &ev, 1, -1);
		if (n < 0 && errno == EINTR)
			return 0;
		if (n <= 0 || (ev.events & (EPOLLHUP | EPOLLERR)))
			return -1;
	}
	memset(req, 0, req_size);
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, req) < 0)
		return errno == EINTR || errno == ENOENT ? 0 : -1;
	return 1;
}

/* An epoll instance watching @listener, or -1. */
static int raw_epoll(int listener)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int epfd = epoll_create1(EPOLL_CLOEXEC);

	if (epfd >= 0 && epoll_ctl(epfd, EPOLL_CTL_ADD, listener, &ev) < 0)
		epfd = safe_close(epfd);
	return epfd;
}

static void *raw_thread(void *arg)
{
	struct worker *w = arg;
	struct seccomp_notif_sizes sizes;
	int epfd = -1, cached_fd = -1;
	uint32_t cached_pid = 0;

	if (is_lib(w->mode))
		return lib_thread(w);
	if (sys_seccomp(SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
		return NULL;
	size_t req_size = MAX(sizes.seccomp_notif, sizeof(struct seccomp_notif));
	size_t resp_size = MAX(sizes.seccomp_notif_resp, sizeof(struct seccomp_notif_resp));
	struct seccomp_notif *req = calloc(1, req_size);
	struct seccomp_notif_resp *resp = calloc(1, resp_size);
	if (req && resp && uses_epoll(w->mode))
		epfd = raw_epoll(w->listener);
	/* Loop until the helper is gone (or setup failed: then its trapped calls hang and the
	 * orchestrator's poll times out with a message). */
	while (req && resp && (!uses_epoll(w->mode) || epfd >= 0)) {
		int got = raw_recv(w->listener, epfd, req, req_size);
		if (got == 0)
			continue;
		if (got < 0)
			break;
		memset(resp, 0, resp_size);
		resp->id = req->id;
		int r = raw_answer(w, req, resp, &cached_fd, &cached_pid);
		if (r == -ESRCH)
			continue; /* the task is gone */
		if (r < 0)
			resp->error = r;
		if (ioctl(w->listener, SECCOMP_IOCTL_NOTIF_SEND, resp) < 0 && errno != ENOENT)
			break;
	}
	safe_close(epfd);
	safe_close(cached_fd);
	free(req);
	free(resp);
	return NULL;
}

/* ---- starting the workers -------------------------------------------------------------------- */

static int send_fd(int sock, int fd)
{
	char dummy = 'L';
	struct iovec iov = { .iov_base = &dummy, .iov_len = 1 };
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };

	memset(u.buf, 0, sizeof(u.buf));
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : -errno;
}

static int recv_fd(int sock)
{
	char dummy;
	struct iovec iov = { .iov_base = &dummy, .iov_len = 1 };
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	int fd;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -EPIPE;
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -EPIPE;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* Trap what every supervised sandbox traps (uname, setsid, setpgid) to a new listener;
 * everything else is allowed. The flags are launch.c's. */
static int install_raw_filter(void)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, BENCH_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_uname, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_setsid, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_setpgid, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	};
	struct sock_fprog prog = { .len = sizeof(insns) / sizeof(insns[0]), .filter = insns };
	unsigned flags = SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	int fd = sys_seccomp(SECCOMP_SET_MODE_FILTER, flags, &prog);
	if (fd < 0 && errno == EINVAL)
		fd = sys_seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	return fd < 0 ? -errno : fd;
}

/* In the forked helper: its own group, the raw filter (its listener sent on @sock), then the
 * helper loop on @in and @out. */
static _Noreturn void raw_child(const struct worker *w, int in, int out, int sock)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* Its own group, as sandlock's launch makes the command: the setpgid calls then take the
	 * same kernel path as in the sandbox, and a recorded group (lifeline) holds the helper
	 * alone. */
	if (setpgid(0, 0) < 0)
		_exit(127);
	if (w->mode != MODE_BARE) {
		int fd = install_raw_filter();
		if (fd < 0 || send_fd(sock, fd) < 0)
			_exit(127);
		close(fd);
	}
	helper_loop(in, out);
}

/* Record the helper's group as sandlock records the sandbox's (launch_clone). */
static int raw_track_group(struct worker *w)
{
	int pidfd = fcntl(w->leader_pidfd, F_DUPFD_CLOEXEC, 3);

	if (groups_init(&w->groups) < 0) {
		fprintf(stderr, "notif: groups_init: out of memory\n");
		exit(1);
	}
	w->has_groups = 1;
	return pidfd < 0 ? -errno : groups_track(&w->groups, w->pid, pidfd);
}

/* The helper's listener from @sock, and the thread that answers it. */
static int raw_attach(struct worker *w, int sock)
{
	w->listener = recv_fd(sock);
	if (w->listener < 0)
		return w->listener;
	/* sandlock's supervisor_attach() asks for this too (6.6+); MODE_LIB does it there. */
	if (w->mode != MODE_VAL0_NOSYNC && !is_lib(w->mode)) {
		uint64_t flags = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
		(void)ioctl(w->listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, flags);
	}
	pthread_t t;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int r = pthread_create(&t, NULL, raw_thread, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0)
		return -r;
	pthread_detach(t);
	return 0;
}

static int start_raw(struct worker *w)
{
	int cmd[2], rep[2], sock[2], r = 0;

	if (pipe2(cmd, O_CLOEXEC) < 0 || pipe2(rep, O_CLOEXEC) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sock) < 0)
		return -errno;
	w->pid = fork();
	if (w->pid < 0)
		return -errno;
	if (w->pid == 0)
		raw_child(w, cmd[0], rep[1], sock[1]);
	(void)setpgid(w->pid, w->pid); /* both sides, whichever runs first */
	close(cmd[0]);
	close(rep[1]);
	close(sock[1]);
	w->cmd_w = cmd[1];
	w->rep_r = rep[0];
	w->leader_pidfd = sys_pidfd_open(w->pid, 0);
	if (w->leader_pidfd < 0)
		r = -errno;
	if (r == 0 && uses_groups(w->mode))
		r = raw_track_group(w);
	if (r == 0 && w->mode != MODE_BARE)
		r = raw_attach(w, sock[0]);
	close(sock[0]);
	return r;
}

static int start_sandlock(struct worker *w, const char *self)
{
	static const char *const dirs[] = { "/usr", "/lib", "/lib64", "/bin", "/etc" };
	const char *argv[] = { self, "--helper", NULL };
	sandlock_policy_t *p = NULL;
	sandlock_error_t *err = NULL;
	char dir[PATH_MAX];
	int cmd[2], rep[2], r;

	snprintf(dir, sizeof(dir), "%s", self);
	if (strrchr(dir, '/'))
		*strrchr(dir, '/') = '\0';
	if (pipe2(cmd, O_CLOEXEC) < 0 || pipe2(rep, O_CLOEXEC) < 0)
		return -errno;
	if ((r = sandlock_policy_new(&p)) < 0)
		return r;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (access(dirs[i], F_OK) == 0)
			sandlock_policy_add_fs_read(p, dirs[i]);
	sandlock_policy_add_fs_read(p, dir);
	if (sandbox_name(w->mode))
		sandlock_policy_set_name(p, sandbox_name(w->mode), NULL);
	sandlock_spawn_opts_t opts = {
		.size = sizeof(opts),
		.stdin_mode = SANDLOCK_STDIO_FD,
		.stdin_fd = cmd[0],
		.stdout_mode = SANDLOCK_STDIO_FD,
		.stdout_fd = rep[1],
		.events = events_of(w->mode),
		.on_event = events_of(w->mode) & SANDLOCK_EVENTS_ALLOWED ? noop_event : NULL,
		.event_user_data = w,
	};
	r = sandlock_spawn(p, argv, &opts, &w->sb, &err);
	sandlock_policy_free(p);
	close(cmd[0]);
	close(rep[1]);
	if (r < 0) {
		fprintf(stderr, "notif: sandlock_spawn: %s\n",
			err ? sandlock_error_message(err) : strerror(-r));
		sandlock_error_free(err);
		return r;
	}
	w->cmd_w = cmd[1];
	w->rep_r = rep[0];
	w->pid = sandlock_sandbox_pid(w->sb);
	w->leader_pidfd = -1;
	return 0;
}

/* One command to a helper and its reply. */
static int transact(struct worker *w, uint32_t op, uint32_t n, int32_t arg, struct reply *r)
{
	struct cmd c = { .op = op, .n = n, .arg = arg };
	struct pollfd pfd = { .fd = w->rep_r, .events = POLLIN };

	int k = write_full(w->cmd_w, &c, sizeof(c));
	if (k < 0)
		return k;
	if (op == OP_QUIT)
		return 0;
	k = poll(&pfd, 1, REPLY_TIMEOUT_MS);
	if (k <= 0)
		return k == 0 ? -ETIMEDOUT : -errno;
	k = read_full(w->rep_r, r, sizeof(*r));
	if (k == 0 && r->err)
		return -r->err;
	return k;
}

/* Whether the kernel alone lets a process move into this program's group (it does within a
 * session): what makes sandlock's EPERM proof that the call was trapped. 0 or -errno. */
static int kernel_move_result(pid_t pgrp)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (setpgid(0, 0) < 0)
			_exit(200);
		_exit(syscall(SYS_setpgid, 0, pgrp) < 0 ? errno : 0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) ? -WEXITSTATUS(status) : -ECHILD;
}

/* ---- the pieces of handle_setpgid's path, timed in this process ---------------------------- */

#define PIECE_ROUNDS 15
#define PIECE_CALLS 20000

struct pieces_ctx {
	pthread_mutex_t mutex;
	struct worker *lib; /* its helper's group is recorded in lib->groups */
	int epfd;
	volatile uintptr_t sink;
};

static int piece_mutex(struct pieces_ctx *c)
{
	pthread_mutex_lock(&c->mutex);
	pthread_mutex_unlock(&c->mutex);
	return 0;
}

static int piece_signal(struct pieces_ctx *c)
{
	return sys_pidfd_send_signal(c->lib->leader_pidfd, 0, NULL, PIDFD_SIGNAL_PROCESS_GROUP);
}

static int piece_owns(struct pieces_ctx *c)
{
	return groups_owns(&c->lib->groups, c->lib->pid) ? 0 : -ESRCH;
}

static int piece_dispatch(struct pieces_ctx *c)
{
	const struct route *rt = dispatch_lookup(SYS_setpgid);
	c->sink = (uintptr_t)rt;
	return rt ? 0 : -ENOSYS;
}

static int piece_epoll(struct pieces_ctx *c)
{
	struct epoll_event ev;
	return epoll_wait(c->epfd, &ev, 1, 0) == 1 ? 0 : -EAGAIN;
}

static int piece_poll(struct pieces_ctx *c)
{
	struct pollfd p = { .fd = c->lib->leader_pidfd, .events = POLLIN };
	return poll(&p, 1, 0) == 0 ? 0 : -ESRCH;
}

static int piece_getpgid(struct pieces_ctx *c)
{
	return getpgid(c->lib->pid) == c->lib->pid ? 0 : -ESRCH;
}

static int piece_status(struct pieces_ctx *c)
{
	pid_t tgid;
	return proc_status_field(c->lib->pid, "Tgid", &tgid);
}

static const struct {
	const char *label;
	int (*fn)(struct pieces_ctx *c);
} pieces[] = {
	{ "pthread_mutex_lock + unlock, uncontended", piece_mutex },
	{ "pidfd_send_signal(leader, 0, PROCESS_GROUP)", piece_signal },
	{ "groups_owns(), one group recorded (both above)", piece_owns },
	{ "poll(leader pidfd, timeout 0): is the leader alive", piece_poll },
	{ "getpgid(helper)", piece_getpgid },
	{ "dispatch_lookup(SYS_setpgid)", piece_dispatch },
	{ "epoll_wait(timeout 0) on a ready fd: the syscall", piece_epoll },
	{ "ref: proc_status_field(Tgid), the /proc read skipped", piece_status },
};
enum { N_PIECES = sizeof(pieces) / sizeof(pieces[0]) };

/* Median ns per call of each piece (PIECE_ROUNDS interleaved rounds of PIECE_CALLS). */
static int time_pieces(struct worker *lib, double out[N_PIECES])
{
	static double ns[N_PIECES][PIECE_ROUNDS];
	struct pieces_ctx c = { .lib = lib, .epfd = epoll_create1(EPOLL_CLOEXEC) };
	int efd = eventfd(1, EFD_CLOEXEC), r = 0;
	struct epoll_event ev = { .events = EPOLLIN };

	pthread_mutex_init(&c.mutex, NULL);
	if (c.epfd < 0 || efd < 0 || epoll_ctl(c.epfd, EPOLL_CTL_ADD, efd, &ev) < 0)
		r = -errno;
	for (int i = 0; r == 0 && i < PIECE_ROUNDS; i++)
		for (int k = 0; r == 0 && k < N_PIECES; k++) {
			int p = (i + k) % N_PIECES;
			/* The /proc read is ~100x the others: fewer calls. */
			int calls = pieces[p].fn == piece_status ? PIECE_CALLS / 20 : PIECE_CALLS;
			int64_t t0 = bench_now_ns();
			for (int j = 0; r == 0 && j < calls; j++)
				r = pieces[p].fn(&c);
			ns[p][i] = (double)(bench_now_ns() - t0) / calls;
		}
	for (int k = 0; k < N_PIECES; k++)
		out[k] = bench_stats_of(ns[k], PIECE_ROUNDS).median;
	pthread_mutex_destroy(&c.mutex);
	safe_close(c.epfd);
	safe_close(efd);
	return r;
}

/* ---- report ---------------------------------------------------------------------------------- */

static double median_of(const double *v, size_t n)
{
	return bench_stats_of(v, n).median;
}

static struct worker *by_mode(struct worker *ws, size_t n, enum mode m)
{
	for (size_t k = 0; k < n; k++)
		if (ws[k].mode == m)
			return &ws[k];
	abort(); /* every mode has a worker */
}

static void print_line(const char *label, const double *v, size_t n, double base)
{
	struct bench_stats s = bench_stats_of(v, n);

	printf("  %-52s %8.0f %8.0f %8.0f", label, s.median, s.p10, s.p90);
	if (base > 0)
		printf(" %7.2fx", s.median / base);
	printf("\n");
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: notif [-n CALLS] [-b BATCH]\n"
		"  -n CALLS  calls per variant and syscall (default 20000)\n"
		"  -b BATCH  calls per batch (default 500); batches of the variants interleave\n");
}

/* One batch of @op on @w into @out[w->n]; checks the setpgid count of raw threads. */
static int run_batch(struct worker *w, uint32_t op, size_t batch, double *out)
{
	struct reply rep;
	int r = transact(w, op, (uint32_t)batch, 0, &rep);

	if (r < 0)
		return r;
	out[w->n] = (double)rep.ns / (double)batch;
	if (op == OP_SETPGID && w->mode != MODE_BARE && !is_lib(w->mode) && !w->sb) {
		w->expected += batch + WARMUP_CALLS;
		if (atomic_load(&w->trapped) != w->expected) {
			fprintf(stderr, "notif: %s: %llu setpgid notifications, expected %llu\n",
				w->slabel, (unsigned long long)atomic_load(&w->trapped),
				(unsigned long long)w->expected);
			return -EPROTO;
		}
	}
	return 0;
}

/* The options into @calls and @batch: -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, size_t *calls, size_t *batch)
{
	int opt;

	while ((opt = getopt(argc, argv, "n:b:h")) != -1) {
		switch (opt) {
		case 'n':
			*calls = strtoul(optarg, NULL, 10);
			break;
		case 'b':
			*batch = strtoul(optarg, NULL, 10);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (*batch < 10 || *batch > UINT32_MAX || *calls < *batch * 5) {
		fprintf(stderr, "notif: need -b >= 10 and -n >= 5 * -b\n");
		return 2;
	}
	return -1;
}

static struct worker workers[] = {
	{ .mode = MODE_BARE, .floor = 1, .olabel = "(b) bare: no sandbox" },
	{ .ulabel = "(r) raw: RECV + SEND val=0",
	  .slabel = "raw: RECV + SEND val=0 (the kernel skips setpgid)",
	  .mode = MODE_VAL0,
	  .floor = 1 },
	{ .ulabel = "raw: RECV + SEND val=0, no SYNC_WAKE_UP",
	  .slabel = "raw: RECV + SEND val=0, no SYNC_WAKE_UP",
	  .mode = MODE_VAL0_NOSYNC },
	{ .ulabel = "raw: RECV + SEND CONTINUE (the kernel runs uname)",
	  .slabel = "(r) raw: RECV + SEND CONTINUE",
	  .mode = MODE_CONTINUE },
	{ .slabel = "(o) raw: + groups_owns() (handle_setpgid's work)", .mode = MODE_OWNS },
	{ .slabel = "(p) raw: + poll(leader pidfd) instead (cheaper)", .mode = MODE_ALIVE },
	{ .slabel = "(c) raw: epoll_wait + RECV + SEND CONTINUE", .mode = MODE_EPOLL_CONTINUE },
	{ .slabel = "(eo) raw: epoll_wait + groups_owns()", .mode = MODE_EPOLL_OWNS },
	{ .ulabel = "(m) raw: + utsname via /proc/pid/mem", .mode = MODE_PROCMEM },
	{ .ulabel = "raw: + open/close /proc/pid/mem only", .mode = MODE_OPEN_ONLY },
	{ .ulabel = "raw: + openat(kept /proc/pid dir, mem)", .mode = MODE_CACHED_DIR },
	{ .ulabel = "raw: + utsname via a kept-open mem fd", .mode = MODE_CACHED_FD },
	{ .ulabel = "raw: + utsname via process_vm_writev", .mode = MODE_VMWRITEV },
	{ .ulabel = "(e) raw: epoll_wait + /proc/pid/mem", .mode = MODE_EPOLL_PROCMEM },
	{ .ulabel = "(l) lib: supervisor_handle() loop",
	  .slabel = "(l) lib: supervisor_handle() loop",
	  .mode = MODE_LIB },
	{ .ulabel = "(s) sandlock: sandlock_spawn, real supervisor",
	  .slabel = "(s) sandlock: sandlock_spawn, real supervisor",
	  .mode = MODE_SANDLOCK,
	  .floor = 1 },
	{ .ulabel = "(le) lib: + events (DENIALS), no denial",
	  .slabel = "(le) lib: + events (DENIALS), no denial",
	  .mode = MODE_LIB_EVENTS },
	{ .ulabel = "(la) lib: + an allowed event per call, no-op cb",
	  .slabel = "(la) lib: + an allowed event per call, no-op cb",
	  .mode = MODE_LIB_ALLOWED },
	{ .ulabel = "(s0) sandlock: no name, no stream",
	  .slabel = "(s0) sandlock: no name, no stream",
	  .olabel = "(s0) sandlock: no stream: Landlock alone",
	  .mode = MODE_SANDLOCK_PLAIN },
	{ .ulabel = "(se) sandlock: events DENIALS (--log-denials)",
	  .slabel = "(se) sandlock: events DENIALS (--log-denials)",
	  .olabel = "(se) sandlock: DENIALS: trapped, judged",
	  .mode = MODE_SANDLOCK_EVENTS },
	{ .olabel = "(sa) sandlock: DENIALS|ALLOWED, no-op callback",
	  .mode = MODE_SANDLOCK_ALLOWED },
};
enum { N_WORKERS = sizeof(workers) / sizeof(workers[0]) };

static const char *worker_label(const struct worker *w)
{
	return w->ulabel ? w->ulabel : w->slabel ? w->slabel : w->olabel ? w->olabel : "bare";
}

/* Start every worker, with room for @rounds batches, and ask each helper its nodename (and lib
 * and sandlock's a setpgid into @own_pgrp): 0, or 1 after a message. */
static int start_workers(struct worker *ws, size_t rounds, const char *self, pid_t own_pgrp)
{
	for (size_t k = 0; k < N_WORKERS; k++) {
		struct worker *w = &ws[k];
		int r = is_sandlock(w->mode) ? start_sandlock(w, self) : start_raw(w);
		const char *label = worker_label(w);
		if (r < 0) {
			fprintf(stderr, "notif: starting %s: %s\n", label, strerror(-r));
			return 1;
		}
		w->getpid_ns = calloc(rounds, sizeof(double));
		w->uname_ns = calloc(rounds, sizeof(double));
		w->setpgid_ns = calloc(rounds, sizeof(double));
		w->open_ns = calloc(rounds, sizeof(double));
		struct reply rep;
		r = transact(w, OP_NODENAME, 0, 0, &rep);
		if (r < 0 || !w->getpid_ns || !w->uname_ns || !w->setpgid_ns || !w->open_ns) {
			fprintf(stderr, "notif: %s: %s\n", label, strerror(r < 0 ? -r : ENOMEM));
			return 1;
		}
		memcpy(w->nodename, rep.nodename, sizeof(w->nodename));
		if (is_lib(w->mode) || is_sandlock(w->mode)) {
			r = transact(w, OP_MOVE, 0, own_pgrp, &rep);
			w->move_err = r < 0 ? -r : 0;
		}
	}
	return 0;
}

/* Trapped, and answered by whom the label says: 0, or 1 after a message. */
static int check_trapped(struct worker *ws)
{
	for (size_t k = 0; k < N_WORKERS; k++) {
		struct worker *w = &ws[k];
		const char *want = is_sandlock(w->mode) ? sandbox_name(w->mode)
				   : is_lib(w->mode)	? "lib-bench"
				   : w->mode >= MODE_PROCMEM && w->mode != MODE_OPEN_ONLY
					   ? raw_nodename
					   : NULL;
		if (want && strcmp(w->nodename, want) != 0) {
			fprintf(stderr,
				"notif: %s: nodename \"%s\", expected \"%s\": not trapped?\n",
				worker_label(w), w->nodename, want);
			return 1;
		}
		if ((is_lib(w->mode) || is_sandlock(w->mode)) && w->move_err != EPERM) {
			fprintf(stderr,
				"notif: %s: setpgid into this program's group: %s, expected "
				"EPERM from handle_setpgid: not trapped?\n",
				worker_label(w), strerror(w->move_err));
			return 1;
		}
	}
	return 0;
}

/* @rounds rounds of batches, the variants interleaved: 0, or 1 after a message. */
static int measure_workers(struct worker *ws, size_t rounds, size_t batch)
{
	for (size_t i = 0; i < rounds; i++)
		for (size_t j = 0; j < N_WORKERS; j++) {
			struct worker *w = &ws[(i + j) % N_WORKERS];
			int do_u = w->ulabel || w->mode == MODE_BARE;
			int do_s = w->slabel || w->mode == MODE_BARE;
			int r = 0;
			if (w->floor)
				r = run_batch(w, OP_GETPID, batch, w->getpid_ns);
			if (r == 0 && w->olabel)
				r = run_batch(w, OP_OPEN, batch, w->open_ns);
			/* Alternate which syscall goes first. */
			for (int t = 0; t < 2 && r == 0; t++) {
				if ((t == (int)(i % 2)) && do_u)
					r = run_batch(w, OP_UNAME, batch, w->uname_ns);
				else if ((t != (int)(i % 2)) && do_s)
					r = run_batch(w, OP_SETPGID, batch, w->setpgid_ns);
			}
			if (r < 0) {
				fprintf(stderr, "notif: %s: %s\n", worker_label(w), strerror(-r));
				return 1;
			}
			w->n++;
		}
	return 0;
}

static void report_floor(struct worker *ws, size_t rounds, size_t batch)
{
	struct worker *bare = by_mode(ws, N_WORKERS, MODE_BARE);
	struct worker *val0 = by_mode(ws, N_WORKERS, MODE_VAL0);
	struct worker *sl = by_mode(ws, N_WORKERS, MODE_SANDLOCK);

	printf("sandlock notification benchmark: %zu calls per variant and syscall, %zu "
	       "interleaved batches of %zu\n",
	       rounds * batch, rounds, batch);
	bench_print_machine(stdout);
	printf("per-call latency in ns: median, p10, p90 of the per-batch means; ratio to the "
	       "table's (r)\n\n");
	printf("  %-52s %8s %8s %8s %8s\n", "untrapped floor", "median", "p10", "p90", "");
	print_line("getpid, no filter", bare->getpid_ns, rounds, 0);
	print_line("getpid, raw filter (uname, setsid, setpgid)", val0->getpid_ns, rounds, 0);
	print_line("getpid, in a sandlock sandbox (its filter)", sl->getpid_ns, rounds, 0);
	print_line("uname, no filter", bare->uname_ns, rounds, 0);
	print_line("setpgid(0, own group), no filter", bare->setpgid_ns, rounds, 0);
}

/* 1. setpgid */
static void report_setpgid(struct worker *ws, size_t rounds)
{
	struct worker *cont = by_mode(ws, N_WORKERS, MODE_CONTINUE);
	struct worker *owns = by_mode(ws, N_WORKERS, MODE_OWNS);
	struct worker *ec = by_mode(ws, N_WORKERS, MODE_EPOLL_CONTINUE);
	struct worker *eo = by_mode(ws, N_WORKERS, MODE_EPOLL_OWNS);
	struct worker *lib = by_mode(ws, N_WORKERS, MODE_LIB);
	struct worker *sl = by_mode(ws, N_WORKERS, MODE_SANDLOCK);
	struct worker *bare = by_mode(ws, N_WORKERS, MODE_BARE);
	double rs = median_of(cont->setpgid_ns, rounds), os = median_of(owns->setpgid_ns, rounds);
	double cs = median_of(ec->setpgid_ns, rounds), eos = median_of(eo->setpgid_ns, rounds);
	double ls = median_of(lib->setpgid_ns, rounds), ss = median_of(sl->setpgid_ns, rounds);
	double fs = median_of(bare->setpgid_ns, rounds);

	printf("\n1. trapped setpgid(0, getpgrp()): a move into a group the sandbox owns\n"
	       "   (handle_setpgid: groups_owns, then CONTINUE; the kernel runs setpgid)\n");
	printf("  %-52s %8s %8s %8s %8s\n", "answered by", "median", "p10", "p90", "/ (r)");
	for (size_t k = 0; k < N_WORKERS; k++)
		if (ws[k].slabel)
			print_line(ws[k].slabel, ws[k].setpgid_ns, rounds, rs);
	printf("  decomposition of (s), ns per call: raw round trip (r) %.0f; + groups_owns "
	       "(o - r) %.0f;\n    + epoll hop (c - r) %.0f [with the work: eo - o = %.0f]; + the "
	       "rest of sandlock's loop (s - eo) %.0f;\n    (lib handle() vs raw, same work, no "
	       "epoll: l - o = %.0f)\n",
	       rs, os - rs, cs - rs, eos - os, ss - eos, ls - os);
	printf("  framework only, same work (groups_owns + CONTINUE): sandlock / (o) = %.2fx "
	       "(bare loop),\n    sandlock / (eo) = %.2fx (the same epoll shape)\n",
	       ss / os, ss / eos);
	printf("  above the untrapped setpgid (%.0f ns): sandlock +%.0f ns vs raw +%.0f ns = "
	       "%.2fx\n",
	       fs, ss - fs, rs - fs, (ss - fs) / (rs - fs));
	double ps = median_of(by_mode(ws, N_WORKERS, MODE_ALIVE)->setpgid_ns, rounds);
	double no_hop = ss - (eos - os), cheap = ss - (os - ps);
	printf("  estimates for (s): without the epoll hop (s - (eo - o)) %.0f = %.2fx; with the "
	       "poll check\n    (s - (o - p)) %.0f = %.2fx; both %.0f = %.2fx\n",
	       no_hop, no_hop / rs, cheap, cheap / rs, no_hop - (os - ps),
	       (no_hop - (os - ps)) / rs);
}

/* 2. uname */
static void report_uname(struct worker *ws, size_t rounds)
{
	struct worker *val0 = by_mode(ws, N_WORKERS, MODE_VAL0);
	struct worker *mem = by_mode(ws, N_WORKERS, MODE_PROCMEM);
	struct worker *ep = by_mode(ws, N_WORKERS, MODE_EPOLL_PROCMEM);
	struct worker *lib = by_mode(ws, N_WORKERS, MODE_LIB);
	struct worker *sl = by_mode(ws, N_WORKERS, MODE_SANDLOCK);
	struct worker *bare = by_mode(ws, N_WORKERS, MODE_BARE);
	double ru = median_of(val0->uname_ns, rounds), mu = median_of(mem->uname_ns, rounds);
	double eu = median_of(ep->uname_ns, rounds), lu = median_of(lib->uname_ns, rounds);
	double su = median_of(sl->uname_ns, rounds), fu = median_of(bare->uname_ns, rounds);

	printf("\n2. trapped uname: a handler that writes the task's memory\n"
	       "   (handle_uname: a utsname through a freshly opened /proc/<pid>/mem)\n");
	printf("  %-52s %8s %8s %8s %8s\n", "answered by", "median", "p10", "p90", "/ (r)");
	for (size_t k = 0; k < N_WORKERS; k++)
		if (ws[k].ulabel)
			print_line(ws[k].ulabel, ws[k].uname_ns, rounds, ru);
	printf("  decomposition of (s), ns per call: raw round trip (r) %.0f; + handler work "
	       "(m - r) %.0f;\n    + epoll (e - m) %.0f; + the rest of sandlock's loop (s - e) "
	       "%.0f;\n    (lib handle() vs raw, same work, no epoll: l - m = %.0f)\n",
	       ru, mu - ru, eu - mu, su - eu, lu - mu);
	printf("  framework only, same work (utsname via /proc/pid/mem): sandlock / (m) = %.2fx "
	       "(bare loop),\n    sandlock / (e) = %.2fx (the same epoll shape)\n",
	       su / mu, su / eu);
	printf("  above the untrapped uname (%.0f ns): sandlock +%.0f ns vs raw +%.0f ns = "
	       "%.2fx\n",
	       fu, su - fu, ru - fu, (su - fu) / (ru - fu));
}

/* The checks, the pieces (@pr: time_pieces' result) and the summary lines. */
static void report_end(struct worker *ws, size_t rounds, int kernel_move, int pr,
		       const double piece_ns[N_PIECES])
{
	struct worker *lib = by_mode(ws, N_WORKERS, MODE_LIB);
	struct worker *sl = by_mode(ws, N_WORKERS, MODE_SANDLOCK);
	struct worker *mem = by_mode(ws, N_WORKERS, MODE_PROCMEM);
	double rs = median_of(by_mode(ws, N_WORKERS, MODE_CONTINUE)->setpgid_ns, rounds);
	double os = median_of(by_mode(ws, N_WORKERS, MODE_OWNS)->setpgid_ns, rounds);
	double ss = median_of(sl->setpgid_ns, rounds);
	double ru = median_of(by_mode(ws, N_WORKERS, MODE_VAL0)->uname_ns, rounds);
	double mu = median_of(mem->uname_ns, rounds), su = median_of(sl->uname_ns, rounds);

	printf("\nchecks: every raw setpgid batch was counted by its answering thread;\n"
	       "  setpgid into this program's group: kernel alone %s, lib %s, sandlock %s;\n"
	       "  nodename: sandlock \"%s\", lib \"%s\", raw /proc/mem \"%s\"\n",
	       kernel_move == 0 ? "allowed" : strerror(-kernel_move), strerror(lib->move_err),
	       strerror(sl->move_err), sl->nodename, lib->nodename, mem->nodename);

	if (pr < 0) {
		printf("\npieces of handle_setpgid's path: skipped (%s)\n", strerror(-pr));
	} else {
		printf("\npieces of handle_setpgid's path, in this process: ns per call, median "
		       "of %d rounds\n",
		       PIECE_ROUNDS);
		for (int k = 0; k < N_PIECES; k++)
			printf("  %-52s %8.0f\n", pieces[k].label, piece_ns[k]);
	}

	printf("\ntrapped syscall (setpgid into own group): %.2fx the raw round trip (RECV + SEND "
	       "CONTINUE) (target <= 1.25x): %s\n",
	       ss / rs, ss / rs <= 1.25 ? "MET" : "NOT MET");
	printf("a handler that writes the task's memory (uname): %.2fx the raw round trip (RECV + "
	       "SEND val=0)\n",
	       su / ru);
	printf("framework only (sandlock / the same work in a bare-bones loop): setpgid %.2fx, "
	       "uname %.2fx\n",
	       ss / os, su / mu);
}

/* The ratio @with / @without as a percent above 1. */
static double pct(double with, double without)
{
	return (with / without - 1) * 100;
}

/* 3. the event stream */
static void report_events(struct worker *ws, size_t rounds)
{
	struct worker *l = by_mode(ws, N_WORKERS, MODE_LIB);
	struct worker *le = by_mode(ws, N_WORKERS, MODE_LIB_EVENTS);
	struct worker *la = by_mode(ws, N_WORKERS, MODE_LIB_ALLOWED);
	struct worker *s = by_mode(ws, N_WORKERS, MODE_SANDLOCK_PLAIN);
	struct worker *se = by_mode(ws, N_WORKERS, MODE_SANDLOCK_EVENTS);
	struct worker *sa = by_mode(ws, N_WORKERS, MODE_SANDLOCK_ALLOWED);
	struct worker *bare = by_mode(ws, N_WORKERS, MODE_BARE);
	double ls = median_of(l->setpgid_ns, rounds), lu = median_of(l->uname_ns, rounds);
	double les = median_of(le->setpgid_ns, rounds), leu = median_of(le->uname_ns, rounds);
	double las = median_of(la->setpgid_ns, rounds), lau = median_of(la->uname_ns, rounds);
	double ss = median_of(s->setpgid_ns, rounds), su = median_of(s->uname_ns, rounds);
	double ses = median_of(se->setpgid_ns, rounds), seu = median_of(se->uname_ns, rounds);
	double bo = median_of(bare->open_ns, rounds), so = median_of(s->open_ns, rounds);
	double seo = median_of(se->open_ns, rounds), sao = median_of(sa->open_ns, rounds);
	int met = pct(les, ls) <= 1 && pct(leu, lu) <= 1;

	printf("\n3. the event stream: an open of %s (and its close), ratio to (s0)\n", OPEN_PATH);
	printf("  %-52s %8s %8s %8s %8s\n", "answered by", "median", "p10", "p90", "/ (s0)");
	for (size_t k = 0; k < N_WORKERS; k++)
		if (ws[k].olabel)
			print_line(ws[k].olabel, ws[k].open_ns, rounds, so);
	printf("  the stream on, no denial (DENIALS), against the same loop without it:\n"
	       "    lib: setpgid %+.1f%% (%.0f -> %.0f ns), uname %+.1f%% (%.0f -> %.0f ns) "
	       "(target <= 1%%): %s\n",
	       pct(les, ls), ls, les, pct(leu, lu), lu, leu, met ? "MET" : "NOT MET");
	printf("    sandlock (se / s0): setpgid %+.1f%% (%.0f -> %.0f ns), uname %+.1f%% (%.0f -> "
	       "%.0f ns)\n",
	       pct(ses, ss), ss, ses, pct(seu, su), su, seu);
	printf("  one allowed event on the loop (la - le, no-op callback): setpgid %+.0f ns, uname "
	       "%+.0f ns\n    (%llu delivered to lib's callback so far, %llu to sandlock's)\n",
	       las - les, lau - leu, (unsigned long long)atomic_load(&la->delivered),
	       (unsigned long long)atomic_load(&sa->delivered));
	printf("  logging mode, per allowed open: trapped and judged (se - s0) %+.0f ns = %.2fx "
	       "the "
	       "open\n    without the stream (bare: %.0f ns); + its allowed event (sa - se) "
	       "%+.0f ns\n",
	       seo - so, seo / so, bo, sao - seo);
}

/* What a sandbox with the stream recorded: the refused setpgid of check_trapped(), nothing
 * else when the run is as meant. */
static void print_denials(struct worker *w)
{
	for (size_t i = 0; i < w->denials; i++) {
		sandlock_event_t ev = { .size = sizeof(ev) };
		uint64_t count;
		char *line = NULL;
		if (sandlock_sandbox_denial(w->sb, i, &ev, &count) == 0 &&
		    sandlock_event_format(&ev, &line) == 0)
			printf("check: %s: %s (%llu times)\n", worker_label(w), line,
			       (unsigned long long)count);
		free(line);
	}
}

static void stop_workers(struct worker *ws)
{
	for (size_t k = 0; k < N_WORKERS; k++) {
		struct reply rep;
		(void)transact(&ws[k], OP_QUIT, 0, 0, &rep);
		if (ws[k].sb) {
			sandlock_sandbox_wait(ws[k].sb, 5000);
			ws[k].denials = sandlock_sandbox_denial_count(ws[k].sb);
			if (events_of(ws[k].mode))
				print_denials(&ws[k]);
			sandlock_sandbox_free(ws[k].sb);
		} else if (ws[k].pid > 0) {
			waitpid(ws[k].pid, NULL, 0);
		}
		if (ws[k].has_groups)
			groups_done(&ws[k].groups);
		safe_close(ws[k].leader_pidfd);
		free(ws[k].getpid_ns);
		free(ws[k].uname_ns);
		free(ws[k].setpgid_ns);
		free(ws[k].open_ns);
	}
	for (size_t k = 0; k < N_WORKERS; k++)
		if (events_of(ws[k].mode) && is_sandlock(ws[k].mode))
			printf("check: %s: %zu denials recorded (expected 1: the setpgid "
			       "of the check that it is trapped)\n",
			       worker_label(&ws[k]), ws[k].denials);
}

int main(int argc, char **argv)
{
	size_t calls = 20000, batch = 500;
	char self[PATH_MAX];

	if (argc == 2 && strcmp(argv[1], "--helper") == 0)
		helper_loop(0, 1);
	int r = parse_options(argc, argv, &calls, &batch);
	if (r >= 0)
		return r;
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0) {
		fprintf(stderr, "notif: /proc/self/exe: %s\n", strerror(errno));
		return 1;
	}
	self[len] = '\0';
	signal(SIGPIPE, SIG_IGN);

	struct worker *ws = workers;
	size_t rounds = calls / batch;
	pid_t own_pgrp = getpgrp();
	int kernel_move = kernel_move_result(own_pgrp);

	if (start_workers(ws, rounds, self, own_pgrp) || check_trapped(ws) ||
	    measure_workers(ws, rounds, batch))
		return 1;

	double piece_ns[N_PIECES];
	int pr = time_pieces(by_mode(ws, N_WORKERS, MODE_LIB), piece_ns);

	report_floor(ws, rounds, batch);
	report_setpgid(ws, rounds);
	report_uname(ws, rounds);
	report_end(ws, rounds, kernel_move, pr, piece_ns);
	report_events(ws, rounds);
	stop_workers(ws);
	return 0;
}
