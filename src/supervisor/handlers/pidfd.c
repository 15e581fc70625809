/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/pidfd: the calls that act on another process named by a pidfd rather than a pid:
 * process_madvise (advice on its memory: MADV_COLD, MADV_PAGEOUT, MADV_COLLAPSE...) and
 * process_mrelease (reaping a dying process's memory). The kernel checks the uid (and
 * CAP_SYS_NICE) there, and Landlock scopes neither: a sandbox started as root reached any
 * process of the host. Trapped in every supervised sandbox (they are rare), refused (EPERM) by
 * the filter where there is no supervisor.
 *
 * The pidfd is taken from the child (pidfd_getfd), the process it refers to read from its
 * fdinfo ("Pid:"), and only a process of the sandbox is acted on: the call is made here, on the
 * supervisor's copy of the pidfd, with the iovec array copied, so a thread that puts another
 * pidfd at the same number after the check changes nothing. The supervisor's own rights stand
 * in for the caller's on the sandbox's processes, so only a caller the kernel would let advise
 * another process (CAP_SYS_NICE, in the supervisor's user namespace) is served; one without it
 * is left to the kernel, which lets it advise its own memory only. Refused: EPERM, as for the
 * other calls that name another process (other-process.c).
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fd-util.h"
#include "handlers.h"
#include "macro.h"
#include "procs.h"
#include "supervisor/child.h"
#include "supervisor/supervisor.h"

#ifndef SYS_process_madvise
#define SYS_process_madvise 440
#endif
#ifndef SYS_process_mrelease
#define SYS_process_mrelease 448
#endif
#define CAP_SYS_NICE_BIT 23

/* The process the supervisor's pidfd @fd refers to: > 0, -ESRCH (it exited), -EBADF (not a
 * pidfd), -EPERM (in another pid namespace, or unreadable: cannot tell). */
static int pidfd_pid(int fd, pid_t *ret)
{
	char name[32], buf[1024];

	snprintf(name, sizeof(name), "fdinfo/%d", fd);
	int r = proc_read(0, name, buf, sizeof(buf));
	if (r < 0)
		return -EPERM;
	const char *p = strstr(buf, "\nPid:");
	if (!p)
		return -EBADF;
	long v = strtol(p + 5, NULL, 10);
	if (v == -1)
		return -ESRCH;
	if (v <= 0 || v > INT32_MAX)
		return -EPERM;
	*ret = (pid_t)v;
	return 0;
}

/* The child's copy of its pidfd argument, checked to name one of the sandbox's processes
 * (*@ret_pid): the descriptor, or -errno. */
static int owned_pidfd(struct supervisor *sv, const struct seccomp_notif *req, pid_t *ret_pid)
{
	_cleanup_close_ int fd = notif_get_fd(sv->listener, req, (int)req->data.args[0]);
	if (fd < 0)
		return fd;
	int r = pidfd_pid(fd, ret_pid);
	if (r < 0)
		return r;
	if (!sandbox_owns_pid(sv, *ret_pid))
		return -EPERM;
	return TAKE_FD(fd);
}

/* Whether the caller has CAP_SYS_NICE where the kernel looks for it (capable(): the initial
 * user namespace, taken here as the supervisor's, which the supervisor's own call is checked
 * in): 1, 0, or -errno. */
static int caller_has_nice(const struct seccomp_notif *req)
{
	char buf[4096];

	int r = proc_userns_is_ours((pid_t)req->pid);
	if (r <= 0)
		return r;
	r = proc_read((pid_t)req->pid, "status", buf, sizeof(buf));
	if (r < 0)
		return r;
	const char *p = strstr(buf, "\nCapEff:");
	if (!p)
		return -EPERM;
	unsigned long long caps = strtoull(p + 8, NULL, 16);
	return (caps >> CAP_SYS_NICE_BIT) & 1;
}

struct advice_job {
	struct seccomp_notif req;
	int pidfd;
	struct iovec *iov;
	size_t vlen;
	int advice;
};

static void advice_job_free(struct advice_job *job)
{
	safe_close(job->pidfd);
	free(job->iov);
	free(job);
}

/* On a worker: advice may take long (MADV_PAGEOUT writes pages out, MADV_COLLAPSE copies
 * them), and the loop must not wait for it. Made here, the call is on another process even
 * where the caller names its own: the kernel then takes only the advice it allows on another's
 * memory (EINVAL for the rest). */
static void advice_worker(int listener, int sock, void *arg)
{
	struct advice_job *job = arg;
	struct seccomp_notif_resp resp = { .id = job->req.id };

	(void)sock;
	if (listener >= 0 && notif_id_valid(listener, job->req.id)) {
		long n = syscall(SYS_process_madvise, job->pidfd, job->iov, job->vlen, job->advice,
				 0);
		if (n < 0)
			notif_answer_errno(&resp, negative_errno());
		else
			notif_answer_value(&resp, n);
		(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp); /* ENOENT: gone */
	}
	advice_job_free(job);
}

int handle_process_madvise(struct supervisor *sv, const struct seccomp_notif *req,
			   struct seccomp_notif_resp *resp)
{
	size_t vlen = (size_t)req->data.args[2];
	pid_t target;

	/* Without CAP_SYS_NICE the kernel lets a caller advise its own memory only (a process
	 * sharing its address space), whatever process the pidfd names by the time it looks.
	 * CONTINUE: that capability check refuses every other process (EPERM). */
	int r = caller_has_nice(req);
	if (r < 0)
		return r;
	if (r == 0) {
		return notif_answer_continue(resp);
	}
	/* The kernel's own checks of the arguments, first, as it makes them. */
	if ((unsigned)req->data.args[4] != 0 || vlen > IOV_MAX)
		return -EINVAL;
	_cleanup_close_ int fd = owned_pidfd(sv, req, &target);
	if (fd < 0)
		return fd;
	_cleanup_free_ struct iovec *iov = calloc(vlen ? vlen : 1, sizeof(*iov));
	if (!iov)
		return -ENOMEM;
	r = vlen ? notif_mem_read(sv->listener, req, req->data.args[1], iov, vlen * sizeof(*iov))
		 : 0;
	if (r < 0)
		return r;
	struct advice_job *job = malloc(sizeof(*job));
	if (!job)
		return -ENOMEM;
	*job = (struct advice_job){ .req = *req,
				    .pidfd = TAKE_FD(fd),
				    .iov = TAKE_PTR(iov),
				    .vlen = vlen,
				    .advice = (int)req->data.args[3] };
	r = supervisor_run_worker(sv, -1, advice_worker, job);
	if (r < 0) {
		advice_job_free(job);
		return r;
	}
	return NOTIF_DEFERRED;
}

int handle_process_mrelease(struct supervisor *sv, const struct seccomp_notif *req,
			    struct seccomp_notif_resp *resp)
{
	pid_t target;

	if ((unsigned)req->data.args[1] != 0)
		return -EINVAL;
	_cleanup_close_ int fd = owned_pidfd(sv, req, &target);
	if (fd < 0)
		return fd;
	/* The kernel checks no right of the caller's here (only that the process is dying). */
	if (syscall(SYS_process_mrelease, fd, 0) < 0)
		return negative_errno();
	notif_answer_value(resp, 0);
	return 0;
}
