/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * control: the runtime directory, the control socket's listening side, the peer check, and the
 * client side (control_running, control_request). See control.h for the rules; the requests are
 * answered in control-serve.c, on the sandbox's event loop.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "cow/cow.h"
#include "fd-util.h"
#include "macro.h"
#include "policy/policy.h"
#include "strv.h"
#include "supervisor/notif.h"
#include "syscall-util.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

#define PID_FILE "pid"
#define PID_NEW "pid.new"
#define SOCKET_FILE "control.sock"
#define CLAIM_GRACE_S 10 /* a directory without a pid file this old was abandoned */
#define LOCK_TRIES 200	 /* 1 ms apart */
#define ANSWER_MAX (1 << 20)

enum {
	DIR_GONE,
	DIR_STARTING, /* claimed; the child does not exist yet */
	DIR_RUNNING,
	DIR_STALE, /* its host died without removing it, or not a directory of ours */
};

int control_root(char *buf, size_t size)
{
	int n = snprintf(buf, size, "/dev/shm/sandlock-%u", (unsigned)geteuid());
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

void control_init(struct control *c)
{
	*c = (struct control){ .fd = -1, .dirfd = -1, .lockfd = -1 };
	for (int i = 0; i < CONTROL_CLIENTS; i++)
		c->clients[i].fd = -1;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Open the runtime root (creating it with @create). It must be a directory of ours that nobody
 * else can enter: another user who made it first could otherwise read or replace our sockets.
 * -EPERM when it is not; -ENOENT, -EACCES, -EROFS as the kernel says. */
static int root_open(int create)
{
	char root[64];

	int r = control_root(root, sizeof(root));
	if (r < 0)
		return r;
	return private_dir_open(root, create);
}

/* Claims and cleanups exclude each other. Bounded: whoever holds the lock too long (a stopped
 * sandlock, or a workload of ours that opened the root) costs a runtime directory, no more. */
static int root_lock(int rootfd)
{
	struct timespec ms = { 0, 1000000 };

	for (int i = 0; i < LOCK_TRIES; i++) {
		if (flock(rootfd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return negative_errno();
		nanosleep(&ms, NULL);
	}
	return -EWOULDBLOCK;
}

/* The host of a sandbox holds an exclusive flock on its pid file for as long as it lives (the
 * kernel drops it when the host dies, however it dies): a lock we can take means a stale one.
 * No pid is trusted, so a recycled pid or a zombie host cannot fool it. */
static int dir_state(int rootfd, const char *name)
{
	char buf[128];
	int spid, host;
	struct stat st;
	struct timespec now;

	_cleanup_close_ int dfd =
		openat(rootfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOENT ? DIR_GONE : DIR_STALE;
	if (fstat(dfd, &st) < 0 || st.st_uid != geteuid())
		return DIR_STALE;
	_cleanup_close_ int fd = openat(dfd, PID_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		/* Being claimed right now (mkdir comes before the pid file), unless that was long
		 * ago: a host that died in between. */
		clock_gettime(CLOCK_REALTIME, &now);
		return now.tv_sec - st.st_mtim.tv_sec > CLAIM_GRACE_S ? DIR_STALE : DIR_STARTING;
	}
	if (flock(fd, LOCK_SH | LOCK_NB) == 0)
		return DIR_STALE; /* nobody holds it: its host is gone */
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return DIR_STARTING;
	buf[n] = '\0';
	if (sscanf(buf, "%d %d", &spid, &host) != 2)
		return DIR_STARTING;
	return spid > 0 ? DIR_RUNNING : DIR_STARTING;
}

/* Remove directory @name of the root and what it holds (files only: a sandlock makes no
 * subdirectories there). Anything else under that name is removed too. */
static void dir_remove(int rootfd, const char *name)
{
	int dfd = openat(rootfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		if (errno == ENOTDIR || errno == ELOOP)
			(void)unlinkat(rootfd, name, 0);
		return;
	}
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			(void)unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
	(void)unlinkat(rootfd, name, AT_REMOVEDIR);
}

/* "SANDBOX-PID HOST-PID", replaced atomically, and locked (see dir_state) before it is in
 * place. Written with 0 for the sandbox when the name is claimed (so a concurrent claim sees a
 * live owner), again once the child exists. The new file's descriptor, which holds the lock,
 * replaces c->lockfd. */
static int write_pid_file(struct control *c, pid_t pid)
{
	char buf[64];

	int fd = openat(c->dirfd, PID_NEW, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			0600);
	if (fd < 0 && errno == EEXIST) { /* left by an earlier write that failed, or planted */
		(void)unlinkat(c->dirfd, PID_NEW, 0);
		fd = openat(c->dirfd, PID_NEW, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
	}
	if (fd < 0)
		return negative_errno();
	int n = snprintf(buf, sizeof(buf), "%d %d\n", pid, getpid());
	int r = flock(fd, LOCK_EX | LOCK_NB) < 0 ? negative_errno()
						 : write_full(fd, buf, (size_t)n);
	if (r == 0 && renameat(c->dirfd, PID_NEW, c->dirfd, PID_FILE) < 0)
		r = negative_errno();
	if (r < 0) {
		(void)unlinkat(c->dirfd, PID_NEW, 0);
		close(fd);
		return r;
	}
	safe_close(c->lockfd);
	c->lockfd = fd;
	return 0;
}

/* The socket's address in directory @dir (a path). */
static int socket_address(struct sockaddr_un *sa, const char *dir)
{
	*sa = (struct sockaddr_un){ .sun_family = AF_UNIX };
	int n = snprintf(sa->sun_path, sizeof(sa->sun_path), "%s/" SOCKET_FILE, dir);
	return n < 0 || (size_t)n >= sizeof(sa->sun_path) ? -ENAMETOOLONG : 0;
}

/* The same through the descriptor @dfd of the directory: /proc/self/fd/<dfd>, which resolves to
 * the directory we hold whatever is renamed meanwhile (what a client can afford). */
static void socket_address_at(struct sockaddr_un *sa, int dfd)
{
	*sa = (struct sockaddr_un){ .sun_family = AF_UNIX };
	snprintf(sa->sun_path, sizeof(sa->sun_path), "/proc/self/fd/%d/" SOCKET_FILE, dfd);
}

static int listen_in(int dfd, const char *name)
{
	struct sockaddr_un sa;
	char root[64], dir[200];

	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return negative_errno();
	/* Bound by path: /proc/self/fd/<dfd> would pin the directory but costs a fresh process
	 * the instantiation of its /proc fd entries. Only our uid can rename things in the root
	 * (0700), and fchmodat() through @dfd below fails unless the socket landed in the
	 * directory we hold. */
	if (control_root(root, sizeof(root)) < 0 ||
	    (size_t)snprintf(dir, sizeof(dir), "%s/%s", root, name) >= sizeof(dir) ||
	    socket_address(&sa, dir) < 0)
		return -ENAMETOOLONG;
	/* The directory (0700) is the lock; 0600 on the socket is the second one. No umask
	 * games: the umask is the whole process's, and the host may be creating files meanwhile. */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    fchmodat(dfd, SOCKET_FILE, 0600, 0) < 0 || listen(fd, CONTROL_BACKLOG) < 0)
		return negative_errno();
	return TAKE_FD(fd);
}

int control_claim(struct control *c, const char *name, pid_t pid, struct sandlock_error **reterr)
{
	_cleanup_close_ int rootfd = root_open(1);
	if (rootfd < 0 || root_lock(rootfd) < 0)
		return 0; /* no runtime directory to be had here: a sandbox without one */
	int r = mkdirat(rootfd, name, 0700) < 0 ? negative_errno() : 0;
	if (r == -EEXIST) {
		if (dir_state(rootfd, name) != DIR_STALE)
			return error_set(reterr, -EEXIST,
					 "name: a sandbox named %s is already running", name);
		dir_remove(rootfd, name);
		r = mkdirat(rootfd, name, 0700) < 0 ? negative_errno() : 0;
	}
	if (r < 0)
		return 0; /* e.g. a stale directory that would not go: run without one */
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->dirfd = openat(rootfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	r = c->dirfd < 0 ? negative_errno() : write_pid_file(c, pid);
	if (r == 0)
		r = c->fd = listen_in(c->dirfd, name);
	struct stat st;
	if (r >= 0 && fstatat(c->dirfd, SOCKET_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		c->sock_dev = st.st_dev;
		c->sock_ino = st.st_ino;
	}
	if (r < 0) {
		c->fd = safe_close(c->fd);
		c->dirfd = safe_close(c->dirfd);
		c->lockfd = safe_close(c->lockfd);
		dir_remove(rootfd, name);
		c->name[0] = '\0';
		return 0;
	}
	c->published = pid > 0;
	if (pid > 0)
		control_publish(c, pid);
	return 0;
}

void control_publish(struct control *c, pid_t pid)
{
	struct timespec now;

	if (c->fd < 0 || c->started)
		return; /* none, or published at the claim */
	if (!c->published && write_pid_file(c, pid) < 0) {
		control_close(c);
		return;
	}
	c->published = 1;
	clock_gettime(CLOCK_REALTIME, &now);
	c->started = now.tv_sec;
}

void control_close(struct control *c)
{
	char root[64], dir[200];

	for (int i = 0; i < CONTROL_CLIENTS; i++)
		c->clients[i].fd = safe_close(c->clients[i].fd);
	c->fd = safe_close(c->fd);
	if (c->dirfd < 0)
		return;
	/* No lock needed: while the pid file names us, or the directory is young, no claim or
	 * cleanup removes it. The files go through the descriptor we hold; the directory by name,
	 * which removes only an empty one (and a planted symlink not at all). Anything a workload
	 * left in it keeps it; the next claim or listing clears it. */
	(void)unlinkat(c->dirfd, SOCKET_FILE, 0);
	(void)unlinkat(c->dirfd, PID_FILE, 0); /* (a pid.new exists only after a failed write) */
	c->lockfd = safe_close(c->lockfd);
	if (control_root(root, sizeof(root)) == 0 &&
	    (size_t)snprintf(dir, sizeof(dir), "%s/%s", root, c->name) < sizeof(dir))
		(void)rmdir(dir);
	c->dirfd = safe_close(c->dirfd);
	c->name[0] = '\0';
	c->started = 0;
	c->published = 0;
}

/* ---- the peer check ------------------------------------------------------------------------ */

static int confinement_of(pid_t pid, long *filters, long *nnp)
{
	int r = proc_status_number(pid, "Seccomp_filters", filters);
	return r < 0 ? r : proc_status_number(pid, "NoNewPrivs", nnp);
}

int control_peer_refused(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	long theirs_f, theirs_n, ours_f, ours_n;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != geteuid() ||
	    cred.pid <= 0)
		return 1;
	/* Pin the peer first: what /proc says afterwards is about it as long as it still runs. */
	int pidfd = -1;
	len = sizeof(pidfd);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) < 0)
		pidfd = sys_pidfd_open(cred.pid, 0);
	_cleanup_close_ int pin = pidfd;
	if (pin < 0 || confinement_of(cred.pid, &theirs_f, &theirs_n) < 0 ||
	    confinement_of(0, &ours_f, &ours_n) < 0)
		return 1;
	struct pollfd p = { .fd = pin, .events = POLLIN };
	if (poll(&p, 1, 0) != 0)
		return 1; /* it exited: the numbers may be another process's */
	return theirs_f > ours_f || (theirs_n && !ours_n);
}

/* ---- the client side ------------------------------------------------------------------------ */

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int root_error(int r, struct sandlock_error **reterr)
{
	char root[64];

	if (control_root(root, sizeof(root)) < 0)
		return error_set(reterr, r, "%s", strerror(-r));
	if (r == -EPERM)
		return error_set(reterr, r, "%s is not a private directory of this user", root);
	return error_set(reterr, r, "%s: %s", root, strerror(-r));
}

int control_running(char ***ret_names, struct sandlock_error **reterr)
{
	_cleanup_strv_free_ char **names = NULL;
	char store[64];

	/* With the stale runtime directories, what killed runs left in their workdirs: the
	 * stand-ins recorded by the branches of the store root (cow/stale.c). */
	if (cow_store_root(store, sizeof(store)) == 0)
		cow_clean_stale(store, -1);

	int rootfd = root_open(0);
	if (rootfd == -ENOENT) {
		names = calloc(1, sizeof(char *));
		if (!names)
			return error_set(reterr, -ENOMEM, "out of memory");
		*ret_names = TAKE_PTR(names);
		return 0;
	}
	if (rootfd < 0)
		return root_error(rootfd, reterr);
	int locked = root_lock(rootfd) == 0;
	DIR *d = fdopendir(rootfd);
	if (!d) {
		close(rootfd);
		return error_set(reterr, -ENOMEM, "out of memory");
	}
	struct dirent *de;
	int r = 0;
	while (r == 0 && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		int state = dir_state(dirfd(d), de->d_name);
		if (state == DIR_STALE && locked)
			dir_remove(dirfd(d), de->d_name);
		if (state == DIR_RUNNING && strv_extend(&names, de->d_name) < 0)
			r = -ENOMEM;
	}
	closedir(d); /* and the lock with it */
	if (r == 0 && !names && !(names = calloc(1, sizeof(char *))))
		r = -ENOMEM;
	if (r < 0)
		return error_set(reterr, r, "out of memory");
	qsort(names, strv_length(names), sizeof(char *), cmp_names);
	*ret_names = TAKE_PTR(names);
	return 0;
}

static int wait_readable(int fd, int64_t deadline)
{
	for (;;) {
		int64_t left = deadline - now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int n = poll(&p, 1, (int)left);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return negative_errno();
	}
}

static int connect_to(const char *name, int64_t deadline, struct sandlock_error **reterr)
{
	struct sockaddr_un sa;
	char root[64], dir[200];

	_cleanup_close_ int rootfd = root_open(0);
	if (rootfd == -ENOENT)
		return error_set(reterr, -ENOENT, "no running sandbox named %s", name);
	if (rootfd < 0)
		return root_error(rootfd, reterr);
	_cleanup_close_ int dfd =
		openat(rootfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return error_set(reterr, -ENOENT, "no running sandbox named %s", name);
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return error_set(reterr, negative_errno(), "socket: %s", strerror(errno));
	socket_address_at(&sa, dfd);
	int r;
	/* EAGAIN: its queue is full for now (clients come faster than the loop takes them). */
	while ((r = connect(fd, (struct sockaddr *)&sa, sizeof(sa))) < 0 && errno == EAGAIN &&
	       now_ms() < deadline)
		nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
	if (r < 0 && errno == ENOENT && control_root(root, sizeof(root)) == 0 &&
	    access("/proc/self/fd", F_OK) < 0) {
		snprintf(dir, sizeof(dir), "%s/%s", root, name);
		r = socket_address(&sa, dir) < 0 ? -1
						 : connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	}
	if (r < 0) {
		r = negative_errno();
		if (r == -ECONNREFUSED || r == -ENOENT)
			return error_set(reterr, -ENOENT, "no running sandbox named %s", name);
		if (r == -EAGAIN)
			return error_set(reterr, -ETIMEDOUT, "the sandbox did not answer");
		return error_set(reterr, r, "%s: %s", name, strerror(-r));
	}
	/* Whoever serves the socket must be a process of ours that is not confined: a sandbox
	 * with a write grant on /dev/shm could put its own server there. */
	if (control_peer_refused(fd))
		return error_set(reterr, -EPERM, "%s: the control socket is not served by sandlock",
				 name);
	return TAKE_FD(fd);
}

/* Read until EOF (the server closes after its one answer), before @deadline. */
static int read_answer(int fd, int64_t deadline, char **ret, struct sandlock_error **reterr)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 0;

	for (;;) {
		int r = wait_readable(fd, deadline);
		if (r < 0)
			return error_set(reterr, r, "the sandbox did not answer");
		if (len + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 8192;
			char *nb = cap > ANSWER_MAX ? NULL : realloc(buf, cap);
			if (!nb)
				return error_set(reterr, cap > ANSWER_MAX ? -EPROTO : -ENOMEM,
						 "answer too long");
			buf = nb;
		}
		ssize_t n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return error_set(reterr, -EPROTO, "no answer (%s)", strerror(errno));
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (!buf || len == 0 || buf[len - 1] != '\n')
		return error_set(reterr, -EPROTO, "no answer (the sandbox is ending?)");
	buf[len - 1] = '\0';
	*ret = TAKE_PTR(buf);
	return 0;
}

int control_request(const char *name, const char *request, int timeout_ms, char **ret_answer,
		    struct sandlock_error **reterr)
{
	int64_t deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : CONTROL_TIMEOUT_MS);

	if (strchr(request, '\n'))
		return error_set(reterr, -EINVAL, "request: must be one line");
	int r = policy_check_name(name, reterr);
	if (r < 0)
		return r;
	_cleanup_close_ int fd = connect_to(name, deadline, reterr);
	if (fd < 0)
		return fd;
	/* One short line into an empty socket buffer; MSG_NOSIGNAL: a server that hung up is an
	 * error, not our SIGPIPE. */
	struct iovec iov[2] = { { (void *)request, strlen(request) }, { (void *)"\n", 1 } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
	ssize_t n = sendmsg(fd, &mh, MSG_NOSIGNAL);
	if (n < 0)
		return error_set(reterr, -EPROTO, "no answer (%s)", strerror(errno));
	if ((size_t)n != iov[0].iov_len + 1)
		return error_set(reterr, -EPROTO, "request too long");
	return read_answer(fd, deadline, ret_answer, reterr);
}
