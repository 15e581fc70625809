/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/hostname: /etc/hostname of a sandbox given a name. uname(2) shows the name; so does
 * the file, whatever the grants say: an open whose name ends in "hostname" and that reaches the
 * host's /etc/hostname (by its path, or by identity: a symlink of that name to it) is answered
 * with a sealed memfd holding the name, and one of them for writing is refused (EACCES). This
 * is a view, not a protection: an open by another name (a symlink called otherwise, a reopen
 * of an O_PATH descriptor through /proc/self/fd/N) and the path calls (rename, unlink,
 * truncate) are Landlock's to decide on the host's file, so under a writable grant of /etc the
 * host's file stays as writable as the grant makes it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fd-util.h"
#include "handlers.h"
#include "hostname.h"
#include "macro.h"
#include "path-util.h"
#include "proc-views.h"
#include "supervisor/child.h"
#include "supervisor/supervisor.h"

#define ETC_HOSTNAME "/etc/hostname"

/* Whether @fd (the child's open resolved here, or -errno) is the host's /etc/hostname. */
static int is_etc_hostname(int fd, const char *path)
{
	char real[PATH_MAX];
	struct stat st, etc;

	if (fd < 0) /* a host without one: the name alone */
		return fd == -ENOENT && strcmp(path, ETC_HOSTNAME) == 0 &&
		       lstat(ETC_HOSTNAME, &etc) < 0;
	if (fd_real_path(fd, real, sizeof(real)) > 0 && strcmp(real, ETC_HOSTNAME) == 0)
		return 1;
	return fstat(fd, &st) == 0 && stat(ETC_HOSTNAME, &etc) == 0 && st.st_dev == etc.st_dev &&
	       st.st_ino == etc.st_ino;
}

int hostname_open(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		  uint64_t path_addr, char *path, size_t size, int *have_path, uint64_t flags,
		  uint64_t resolve)
{
	char peek[257] = "";

	if (flags & O_PATH)
		return NOTIF_NOT_MINE; /* grants nothing to read or write */
	/* Most names cannot be it: a first look (unchecked: it only chooses between going on
	 * and a checked read) spares their ID_VALID. */
	if (!*have_path && notif_mem_peek(req, path_addr, peek, sizeof(peek) - 1) == 0 &&
	    memchr(peek, '\0', sizeof(peek) - 1) && !path_last_is(peek, "hostname"))
		return NOTIF_NOT_MINE;
	if (!*have_path) {
		int r = child_read_path(sv, req, path_addr, path, size);
		if (r == NOTIF_GONE)
			return r;
		if (r < 0)
			return NOTIF_NOT_MINE; /* the kernel's answer to the bad name */
		*have_path = 1;
	}
	if (!path_last_is(path, "hostname"))
		return NOTIF_NOT_MINE;
	_cleanup_close_ int fd =
		child_path_open(sv, req, dirfd, path, resolve, (flags & O_NOFOLLOW) != 0);
	if (fd == NOTIF_GONE)
		return fd;
	if (!is_etc_hostname(fd, path))
		return NOTIF_NOT_MINE;
	if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC)))
		return -EACCES; /* served read-only */
	if (flags & O_DIRECTORY)
		return -ENOTDIR;
	char *text = NULL;
	size_t len = 0;
	int r = view_hostname(sv, &text, &len);
	if (r < 0)
		return r;
	_cleanup_close_ int memfd = memfd_sealed_readonly("hostname", text, len);
	free(text);
	if (memfd < 0)
		return memfd;
	return notif_addfd_send(sv->listener, req, memfd, (flags & O_CLOEXEC) != 0);
}
