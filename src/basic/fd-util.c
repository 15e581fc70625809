/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fd-util: descriptor helpers. Nothing here knows about sandboxes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd-util.h"
#include "macro.h"

int safe_close(int fd)
{
	if (fd >= 0) {
		int saved = errno;
		close(fd);
		errno = saved;
	}
	return -1;
}

void closep(int *fd)
{
	*fd = safe_close(*fd);
}

void close_pair(int pair[2])
{
	pair[0] = safe_close(pair[0]);
	pair[1] = safe_close(pair[1]);
}

int read_full(int fd, void *buf, size_t n)
{
	char *p = buf;

	while (n > 0) {
		ssize_t k = read(fd, p, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		if (k == 0)
			return -EPIPE;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int write_full(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n > 0) {
		ssize_t k = write(fd, p, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int fd_move_above_stdio(int fd)
{
	if (fd < 0 || fd > 2)
		return fd;
	int n = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	int r = n < 0 ? negative_errno() : n;
	safe_close(fd);
	return r;
}

int fd_set_nonblock(int fd, int on)
{
	int flags = fcntl(fd, F_GETFL);
	if (flags < 0)
		return negative_errno();
	int nflags = on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK;
	if (nflags != flags && fcntl(fd, F_SETFL, nflags) < 0)
		return negative_errno();
	return 0;
}

int memfd_sealed_readonly(const char *name, const void *data, size_t len)
{
	char self[sizeof("/proc/self/fd/") + 12];

	_cleanup_close_ int mem = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mem < 0)
		return negative_errno();
	int r = write_full(mem, data, len);
	if (r < 0)
		return r;
	if (fcntl(mem, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0)
		return negative_errno();
	/* A read-only file of its own (offset 0). */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", mem);
	int fd = open(self, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? negative_errno() : fd;
}

int private_dir_open(const char *path, int create)
{
	struct stat st;

	_cleanup_close_ int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && create) {
		if (mkdir(path, 0700) < 0 && errno != EEXIST)
			return negative_errno();
		fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return errno == ELOOP || errno == ENOTDIR ? -EPERM : negative_errno();
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (st.st_uid != geteuid() || (st.st_mode & 077))
		return -EPERM;
	return TAKE_FD(fd);
}
