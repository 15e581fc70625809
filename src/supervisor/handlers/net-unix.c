/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/net-unix: connecting or sending to a named UNIX socket needs a write grant covering
 * the socket's real path (Landlock up to ABI 7 does not cover connect(2) or sendto(2) on a UNIX
 * socket file). The supervisor resolves the name as the child would, from the child's root or
 * the calling thread's working directory, with openat2(O_PATH), without magic links; the
 * descriptor pins the socket file, whose path the kernel then reports (/proc/self/fd/N), and
 * which the supervisor reaches through that same descriptor: no name is looked up twice, so a
 * symlink or rename swapped in after the check reaches nothing new.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "fd-util.h"
#include "net.h"
#include "path-util.h"
#include "macro.h"
#include "plan/plan.h"
#include "supervisor/child.h"
#include "supervisor/events.h"
#include "supervisor/supervisor.h"

/* Whether the socket file @st is a sandbox's control socket (<runtime>/<name>/control.sock of
 * this uid), whatever name reaches it: a hard link elsewhere is the same inode. (One renamed
 * away is refused by its own server, which checks that it is still in place.) */
static int is_control_socket(const struct plan_net *net, const struct stat *st)
{
	char root[PATH_MAX];
	struct stat cs;
	int found = 0;

	if (!net->runtime_prefix ||
	    (size_t)snprintf(root, sizeof(root), "%s%u", net->runtime_prefix,
			     (unsigned)geteuid()) >= sizeof(root))
		return 0;
	DIR *d = opendir(root);
	if (!d)
		return 0;
	for (struct dirent *e; !found && (e = readdir(d));) {
		char sock[NAME_MAX + 32];
		if (e->d_name[0] == '.')
			continue;
		snprintf(sock, sizeof(sock), "%s/control.sock", e->d_name);
		found = fstatat(dirfd(d), sock, &cs, AT_SYMLINK_NOFOLLOW) == 0 &&
			cs.st_dev == st->st_dev && cs.st_ino == st->st_ino;
	}
	closedir(d);
	return found;
}

/* A socket @d->path outside the write grants: the grant of its directory would reach it. */
static void unix_refused_event(struct supervisor *sv, const struct seccomp_notif *req,
			       const struct net_dest *d)
{
	char dir[PATH_MAX], reason[PATH_MAX + 32], hint[PATH_MAX + 16];
	const char *slash = strrchr(d->path, '/');
	size_t n = slash && slash != d->path ? (size_t)(slash - d->path) : 1;

	snprintf(dir, sizeof(dir), "%.*s", (int)n, d->path);
	snprintf(reason, sizeof(reason), "no write grant covers %s", dir);
	snprintf(hint, sizeof(hint), "add -w %s", dir);
	net_event(sv, req, d, SANDLOCK_VERDICT_DENY, EACCES, reason, hint);
}

int net_unix_route(struct supervisor *sv, const struct seccomp_notif *req,
		   struct sockaddr_storage *ss, socklen_t *len, int *pin)
{
	struct sockaddr_un *sun = (struct sockaddr_un *)ss;
	char path[sizeof(sun->sun_path) + 1], real[PATH_MAX], self[64];
	size_t n = *len - offsetof(struct sockaddr_un, sun_path);
	struct stat st;

	/* The kernel reads the name up to the first NUL or the length given. */
	memcpy(path, sun->sun_path, MIN(n, sizeof(sun->sun_path)));
	path[MIN(n, sizeof(sun->sun_path))] = '\0';
	/* "/proc/self/fd/N" is the caller's descriptor N: the name a sandlock nested in this
	 * sandbox connects with (its own supervisor reaching a socket it resolved). */
	int fd = child_path_open(sv, req, AT_FDCWD, path, 0, 0);
	if (fd == -EBADF)
		fd = -ENOENT; /* what resolving the name would have said */
	if (fd < 0)
		return fd;
	_cleanup_close_ int pinned = fd;
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (!S_ISSOCK(st.st_mode))
		return -ECONNREFUSED; /* what the kernel says of a file that is no socket */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	ssize_t k = readlink(self, real, sizeof(real) - 1);
	if (k <= 0 || (size_t)k >= sizeof(real) - 1)
		return -EACCES;
	real[k] = '\0';
	/* The control sockets of sandboxes (this one's and others'): their server refuses a
	 * confined peer, and a connect made here would come from the supervisor. */
	const struct plan_net *net = &sv->plan->net;
	struct net_dest d = { .family = AF_UNIX, .path = real };
	if ((net->runtime_prefix &&
	     strncmp(real, net->runtime_prefix, strlen(net->runtime_prefix)) == 0) ||
	    is_control_socket(net, &st)) {
		net_event(sv, req, &d, SANDLOCK_VERDICT_DENY, EACCES,
			  "the control sockets of sandboxes are not reached from one", NULL);
		return -EACCES;
	}
	int granted = 0;
	char *const *grants = sv->plan->fs.write_grants;
	for (size_t i = 0; grants && grants[i] && !granted; i++)
		granted = path_is_beneath(real, grants[i]);
	if (!granted) {
		unix_refused_event(sv, req, &d);
		return -EACCES; /* what a missing write permission on the socket gives */
	}
	if (events_wants(sv->events, SANDLOCK_VERDICT_ALLOW))
		net_event(sv, req, &d, SANDLOCK_VERDICT_ALLOW, 0, NULL, NULL);
	memset(sun->sun_path, 0, sizeof(sun->sun_path));
	memcpy(sun->sun_path, self, strlen(self));
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(self) + 1);
	*pin = TAKE_FD(pinned);
	return 0;
}
