/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * notif: answers, ID_VALID and race-free access to the trapped task's memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kcmp.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fd-util.h"
#include "macro.h"
#include "notif.h"
#include "syscall-util.h"

int notif_id_valid(int listener, uint64_t id)
{
	return ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* 6.9 */
#endif

/* A pidfd whose descriptor table is the one thread @tid uses. A thread's own pidfd (6.9+);
 * before that the process's, only when kcmp says the thread shares its table (a CLONE_THREAD
 * thread without CLONE_FILES has one of its own, and the wrong socket would be taken). */
static int pidfd_of_thread(pid_t tid)
{
	int pidfd = sys_pidfd_open(tid, PIDFD_THREAD);
	if (pidfd >= 0 || errno != EINVAL)
		return pidfd;
	pid_t tgid;
	int r = proc_status_field(tid, "Tgid", &tgid);
	if (r < 0) {
		errno = r == -ESRCH ? ESRCH : EPERM;
		return -1;
	}
	if (tgid != tid && syscall(SYS_kcmp, tid, tgid, KCMP_FILES, 0, 0) != 0) {
		errno = EPERM;
		return -1;
	}
	return sys_pidfd_open(tgid, 0);
}

int notif_get_fd(int listener, const struct seccomp_notif *req, int fd)
{
	_cleanup_close_ int pidfd = pidfd_of_thread((pid_t)req->pid);
	if (pidfd < 0)
		return errno == ESRCH || errno == ENOENT ? NOTIF_GONE : negative_errno();
	int copy = sys_pidfd_getfd(pidfd, fd, 0);
	if (copy < 0)
		return errno == ESRCH ? NOTIF_GONE : negative_errno();
	if (!notif_id_valid(listener, req->id)) {
		close(copy);
		return NOTIF_GONE;
	}
	return copy;
}

void notif_pidfd_drop(struct notif_pidfd *kept)
{
	if (kept->fd_plus1 > 0)
		close(kept->fd_plus1 - 1);
	*kept = (struct notif_pidfd){ 0 };
}

int notif_get_fd_kept(int listener, const struct seccomp_notif *req, int fd,
		      struct notif_pidfd *kept)
{
	for (int tries = 0; tries < 2; tries++) {
		int fresh = !kept->fd_plus1 || kept->tid != (pid_t)req->pid;
		if (fresh) {
			notif_pidfd_drop(kept);
			int pidfd = sys_pidfd_open((pid_t)req->pid, PIDFD_THREAD);
			if (pidfd < 0 && errno == EINVAL) /* no thread pidfds: none kept */
				return notif_get_fd(listener, req, fd);
			if (pidfd < 0)
				return errno == ESRCH || errno == ENOENT ? NOTIF_GONE
									 : negative_errno();
			*kept = (struct notif_pidfd){ (pid_t)req->pid, pidfd + 1 };
		}
		int copy = sys_pidfd_getfd(kept->fd_plus1 - 1, fd, 0);
		if (copy < 0 && errno == ESRCH) {
			/* The thread kept is gone: its tid names another task now (or none). */
			notif_pidfd_drop(kept);
			continue;
		}
		if (copy < 0)
			return negative_errno();
		/* A pidfd opened for this call names the caller once the call is known to wait
		 * still (its tid named it then); a pidfd kept from such a call names it while it
		 * lives, which the copy just proved. */
		if (fresh && !notif_id_valid(listener, req->id)) {
			close(copy);
			return NOTIF_GONE;
		}
		return copy;
	}
	return NOTIF_GONE;
}

static int open_mem(const struct seccomp_notif *req, int flags)
{
	char path[sizeof("/proc//mem") + 10];

	snprintf(path, sizeof(path), "/proc/%u/mem", req->pid);
	int fd = open(path, flags | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? NOTIF_GONE : negative_errno();
	return fd;
}

static ssize_t mem_read_proc(const struct seccomp_notif *req, uint64_t addr, void *buf, size_t len)
{
	_cleanup_close_ int fd = open_mem(req, O_RDONLY);
	if (fd < 0) {
		errno = fd == NOTIF_GONE ? ESRCH : -fd;
		return -1;
	}
	return pread(fd, buf, len, (off_t)addr);
}

int notif_mem_read(int listener, const struct seccomp_notif *req, uint64_t addr, void *buf,
		   size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };

	ssize_t n = process_vm_readv((pid_t)req->pid, &local, 1, &remote, 1, 0);
	if (n < 0 && (errno == EPERM || errno == ENOSYS))
		n = mem_read_proc(req, addr, buf, len);
	int saved = errno;
	/* The pid may have been recycled between the notification and the read: only a
	 * notification still pending proves the copy came from the trapped task. */
	if (!notif_id_valid(listener, req->id))
		return NOTIF_GONE;
	errno = saved;
	if (n < 0)
		return errno == EPERM || errno == EACCES ? -errno : -EFAULT;
	return (size_t)n == len ? 0 : -EFAULT;
}

int notif_mem_peek(const struct seccomp_notif *req, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };

	ssize_t n = process_vm_readv((pid_t)req->pid, &local, 1, &remote, 1, 0);
	return n == (ssize_t)len ? 0 : -EFAULT;
}

int notif_mem_write(int listener, const struct seccomp_notif *req, uint64_t addr, const void *buf,
		    size_t len)
{
	_cleanup_close_ int fd = open_mem(req, O_WRONLY);
	if (fd < 0)
		return fd;
	/* The descriptor is bound to the address space it was opened on. If the task died and
	 * its pid was reused before the open, the notification is no longer valid: checking
	 * after the open proves the descriptor points at the trapped task. */
	if (!notif_id_valid(listener, req->id))
		return NOTIF_GONE;
	ssize_t n = pwrite(fd, buf, len, (off_t)addr);
	return n == (ssize_t)len ? 0 : -EFAULT;
}

int proc_read(pid_t pid, const char *name, char *buf, size_t size)
{
	char path[64];

	if (pid == 0)
		snprintf(path, sizeof(path), "/proc/self/%s", name);
	else
		snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) /* gone, or /proc is not readable here: cannot tell */
		return errno == ENOENT || errno == ESRCH ? -ESRCH : -EPERM;
	ssize_t n = read(fd, buf, size - 1);
	if (n < 0 && errno != ESRCH)
		return -EPERM; /* refused (a non-dumpable task's smaps_rollup): cannot tell */
	if (n <= 0)
		return -ESRCH;
	buf[n] = '\0';
	return 0;
}

int proc_status_number(pid_t pid, const char *field, long *ret)
{
	char buf[4096];
	size_t flen = strlen(field);

	int r = proc_read(pid, "status", buf, sizeof(buf));
	if (r < 0)
		return r;
	for (char *line = buf; line && *line;
	     line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		if (strncmp(line, field, flen) == 0 && line[flen] == ':') {
			char *end;
			errno = 0;
			long v = strtol(line + flen + 1, &end, 10);
			if (errno || end == line + flen + 1)
				return -EINVAL;
			*ret = v;
			return 0;
		}
	return -EINVAL;
}

int proc_status_field(pid_t pid, const char *field, pid_t *ret)
{
	long v;
	int r = proc_status_number(pid, field, &v);

	if (r < 0)
		return r;
	if (v <= 0 || v > INT32_MAX)
		return -EINVAL;
	*ret = (pid_t)v;
	return 0;
}

int notif_addfd_send(int listener, const struct seccomp_notif *req, int fd, int cloexec)
{
	struct seccomp_notif_addfd add = {
		.id = req->id,
		.flags = SECCOMP_ADDFD_FLAG_SEND,
		.srcfd = (uint32_t)fd,
		.newfd_flags = cloexec ? O_CLOEXEC : 0,
	};
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0)
		return errno == ENOENT ? NOTIF_GONE : negative_errno();
	return NOTIF_DEFERRED;
}

int notif_addfd_answer(int listener, const struct seccomp_notif *req, int *fd, int cloexec)
{
	struct seccomp_notif_addfd add = {
		.id = req->id,
		.srcfd = (uint32_t)*fd,
		.newfd_flags = cloexec ? O_CLOEXEC : 0,
	};
	int newfd = ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
	if (newfd < 0)
		return errno == ENOENT ? NOTIF_GONE : negative_errno();
	/* Ours closed before the task runs on: it holds the only descriptor (a lease, an exec
	 * of the file, or another open's sharing mode see no other opener). */
	*fd = safe_close(*fd);
	struct seccomp_notif_resp resp = { .id = req->id, .val = newfd };
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
		return negative_errno();
	return NOTIF_DEFERRED;
}

int proc_umask(pid_t pid, mode_t *ret, long *ret_threads)
{
	char buf[4096];

	if (proc_read(pid, "status", buf, sizeof(buf)) < 0)
		return -EIO; /* answered: a task gone reads no answer */
	const char *u = strstr(buf, "\nUmask:"), *t = strstr(buf, "\nThreads:");
	char *end;
	long v = u ? strtol(u + 7, &end, 8) : -1;
	if (v < 0 || v > 0777)
		return -EIO;
	*ret = (mode_t)v;
	if (ret_threads)
		*ret_threads = t ? strtol(t + 9, &end, 10) : -1;
	return 0;
}

ssize_t proc_fd_path(pid_t pid, int fd, char *buf, size_t size)
{
	char link[64];

	if (fd == AT_FDCWD)
		snprintf(link, sizeof(link), "/proc/%u/cwd", (unsigned)pid);
	else
		snprintf(link, sizeof(link), "/proc/%u/fd/%d", (unsigned)pid, fd);
	ssize_t k = readlink(link, buf, size - 1);
	if (k < 0)
		return -errno;
	if ((size_t)k >= size - 1)
		return -ENAMETOOLONG;
	buf[k] = '\0';
	return k;
}
