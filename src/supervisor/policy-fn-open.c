/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy-fn-open: the opens made on the child's behalf while deny_path's set holds anything
 * (policy_fn_path_gate). The name is resolved as the child would reach it (child_path_open:
 * its root, working directory or descriptor; its own "/proc/self/fd/N" and "/dev/fd/N" names
 * as its descriptor N; "/proc/self" and "/proc/thread-self" as its own directory), a symlink
 * in the last component followed here (bounded) unless the open says not to, and the file is
 * taken as an O_PATH descriptor of its directory's entry. That descriptor and each directory
 * above the one it was found in are checked against the set (pfn_denied), and the very file is
 * then opened again through it ("/proc/self/fd/N") by a thread confined by the sandbox's own
 * Landlock ruleset (it can never open more than the child could), with the child's umask for a
 * create, and installed in the child (ADDFD): no name is resolved twice, so no swap can get in
 * between the check and the descriptor handed out.
 *
 * The open itself runs on a worker (a FIFO's open waits for its other end; the worker pool cuts
 * it short at the sandbox's end through the descriptor it is given). The resolution and the
 * check are O_PATH work and stay on the loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "child.h"
#include "fd-util.h"
#include "macro.h"
#include "path-util.h"
#include "policy-fn-internal.h"
#include "supervisor.h"
#include "supervisor/args.h"
#include "syscall-util.h"
#include "handlers/handlers.h"

#define HOPS_MAX 40

/* The file an open names: its directory (-1 for a descriptor of the child's, reopened) and its
 * entry there (-1 when there is none: a create). */
struct target {
	int dir;
	int obj;
	char base[NAME_MAX + 1];
};

/* Split @name into its directory part (in @dir) and last component (in @base); a name that
 * ends in "/", ".", ".." or is "/" names a directory itself: @base is "." then. */
static int split_name(const char *name, char *dir, size_t size, char *base)
{
	size_t len = strlen(name);
	const char *slash = memrchr(name, '/', len);
	const char *last = slash ? slash + 1 : name;

	if (!*last || strcmp(last, ".") == 0 || strcmp(last, "..") == 0) {
		if (snprintf(dir, size, "%s", name) >= (int)size)
			return -ENAMETOOLONG;
		strcpy(base, ".");
		return 0;
	}
	if (strlen(last) > NAME_MAX)
		return -ENAMETOOLONG;
	strcpy(base, last);
	size_t dlen = slash ? (size_t)(slash - name) : 0;
	if (dlen + 2 > size)
		return -ENAMETOOLONG;
	if (slash && dlen == 0)
		strcpy(dir, "/");
	else if (slash)
		memcpy(dir, name, dlen), dir[dlen] = '\0';
	else
		strcpy(dir, ".");
	return 0;
}

/* The directory @dir, from the child's (@from -1: its root, working directory or @dirfd, as
 * child_path_open) or from the supervisor's descriptor @from (a relative symlink's). */
static int open_dir(struct supervisor *sv, const struct seccomp_notif *req, int from, int dirfd,
		    const char *dir, uint64_t resolve)
{
	if (from < 0)
		return child_path_open(sv, req, dirfd, dir, resolve, 0);
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
				.resolve = RESOLVE_NO_MAGICLINKS | resolve };
	int fd = (int)syscall(SYS_openat2, from, dir, &how, sizeof(how));
	return fd < 0 ? negative_errno() : fd;
}

/* Resolve @name (read from the child, rewritten in place) into @t: 0 or -errno, NOTIF_GONE. */
static int resolve_target(struct supervisor *sv, const struct seccomp_notif *req,
			  const struct path_args *pa, char *name, size_t size, struct target *t)
{
	char dir[PATH_MAX];
	struct stat s;
	int from = -1, n;
	const char *rest;

	for (int hops = 0;; hops++) {
		if (from < 0 && own_fd_name(name, &n, &rest) && !rest[strspn(rest, "/")]) {
			t->obj = notif_get_fd(sv->listener, req, n);
			return t->obj < 0 ? t->obj : 0;
		}
		if (from < 0 && !own_fd_name(name, &n, &rest)) {
			int r = child_proc_self_name(req, name, size);
			if (r < 0)
				return r;
		}
		int r = split_name(name, dir, sizeof(dir), t->base);
		if (r < 0)
			return r;
		t->dir = open_dir(sv, req, from, pa->dirfd, dir, pa->resolve);
		from = safe_close(from);
		if (t->dir < 0)
			return t->dir;
		t->obj = openat(t->dir, t->base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (t->obj < 0)
			return errno == ENOENT ? 0 : negative_errno();
		if (fstat(t->obj, &s) < 0)
			return negative_errno();
		if (!S_ISLNK(s.st_mode) || !pa->follow)
			return 0;
		if ((pa->resolve & RESOLVE_NO_SYMLINKS) || hops == HOPS_MAX)
			return -ELOOP;
		ssize_t k = readlinkat(t->obj, "", name, size - 1);
		if (k <= 0)
			return k < 0 ? negative_errno() : -ENOENT;
		name[k] = '\0';
		from = name[0] == '/' ? -1 : TAKE_FD(t->dir);
		t->obj = safe_close(t->obj);
		t->dir = safe_close(t->dir);
	}
}

/* resolve_target on a copy of @path (PATH_MAX bytes), which stays the child's name for the
 * events. */
static int resolve_copy(struct supervisor *sv, const struct seccomp_notif *req,
			const struct path_args *pa, const char *path, struct target *t)
{
	char name[PATH_MAX];

	snprintf(name, sizeof(name), "%s", path);
	return resolve_target(sv, req, pa, name, sizeof(name), t);
}

/* Whether @fd is a file of the supervisor's own /proc directory (a symlink into /proc/self
 * resolved here): never handed to the child. */
static int supervisor_proc(int fd)
{
	struct statfs fs;
	char real[PATH_MAX], own[32];

	if (fstatfs(fd, &fs) < 0)
		return 1;
	if (fs.f_type != PROC_SUPER_MAGIC)
		return 0;
	snprintf(own, sizeof(own), "/proc/%d", (int)getpid());
	return fd_real_path(fd, real, sizeof(real)) <= 0 || path_is_beneath(real, own);
}

/* The line of a status text that starts with @key, to its end. */
static size_t status_line(const char *buf, const char *key, const char **ret)
{
	const char *p = strstr(buf, key);
	const char *e = p ? strchr(p + 1, '\n') : NULL;

	*ret = p ? p : "";
	return p ? (e ? (size_t)(e - p) : strlen(p)) : 0;
}

/* Whether thread @tid has the supervisor's ids and groups (what the permission bits decide on
 * for the supervisor's open), its effective capabilities, within the supervisor's, in *@caps.
 * The names are looked up on the loop with the supervisor's capabilities, so one that lets it
 * search a directory (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH) must be the thread's too, in the
 * same user namespace. 0, or -EACCES (fail closed). */
int pfn_same_ids(pid_t tid, uint64_t *caps)
{
	static const char *const keys[] = { "\nUid:", "\nGid:", "\nGroups:" };
	const uint64_t dac = (1ULL << CAP_DAC_OVERRIDE) | (1ULL << CAP_DAC_READ_SEARCH);
	char theirs[4096], mine[4096];
	const char *x, *y;

	if (proc_read(tid, "status", theirs, sizeof(theirs)) < 0 ||
	    proc_read(0, "status", mine, sizeof(mine)) < 0)
		return -EACCES;
	for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
		size_t n = status_line(theirs, keys[i], &x), m = status_line(mine, keys[i], &y);
		if (!n || n != m || memcmp(x, y, n) != 0)
			return -EACCES;
	}
	if (!status_line(theirs, "\nCapEff:", &x) || !status_line(mine, "\nCapEff:", &y))
		return -EACCES;
	uint64_t their_caps = strtoull(x + 8, NULL, 16), my_caps = strtoull(y + 8, NULL, 16);
	if ((my_caps & dac) &&
	    ((their_caps & my_caps & dac) != (my_caps & dac) || proc_userns_is_ours(tid) != 1))
		return -EACCES;
	*caps = their_caps & my_caps;
	return 0;
}

/* Field 7 of /proc/<pid>/stat, the controlling terminal (0: none), or -1. */
static long tty_of(pid_t pid)
{
	char buf[1024];
	long tty = -1;

	if (proc_read(pid, "stat", buf, sizeof(buf)) < 0)
		return -1;
	const char *p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %ld", &tty) != 1)
		return -1;
	return tty;
}

struct open_job {
	struct supervisor *sv;
	struct seccomp_notif req;
	int dir;
	char base[NAME_MAX + 1];
	int flags;
	mode_t mode, umask;
	int ruleset;
	uint64_t caps; /* the child's effective capabilities: the thread's own */
	int obj;       /* the job's socket: the entry, or -1 */
	int nonblock;  /* opened O_NONBLOCK (then cleared unless asked): from the loop */
	int r;	       /* the confined thread's: the descriptor or -errno */
};

int pfn_confine(int ruleset, uint64_t caps)
{
	/* Capabilities are per thread (capset), as the Landlock domain and, once unshared, the
	 * umask: the thread holds the child's and no more. */
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {
		{ .effective = (uint32_t)caps, .permitted = (uint32_t)caps },
		{ .effective = (uint32_t)(caps >> 32), .permitted = (uint32_t)(caps >> 32) },
	};
	if (ruleset <= 0 || syscall(SYS_capset, &h, d) < 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    sys_landlock_restrict_self(ruleset, 0) < 0 || unshare(CLONE_FS) < 0)
		return -EACCES;
	return 0;
}

/* The open, on a thread under the sandbox's Landlock domain (pfn_confined_run), with the
 * child's umask. */
static void confined_open(void *arg)
{
	struct open_job *j = arg;
	char self[64];

	umask(j->umask);
	int flags = j->flags | O_NOCTTY | O_CLOEXEC, fd;
	if (j->obj >= 0) {
		int tmpfile = (flags & O_TMPFILE) == O_TMPFILE;
		snprintf(self, sizeof(self), "/proc/self/fd/%d", j->obj);
		fd = open(self,
			  (flags & ~(O_CREAT | O_NOFOLLOW | (tmpfile ? 0 : O_EXCL))) |
				  (j->nonblock ? O_NONBLOCK : 0),
			  j->mode);
		if (fd >= 0 && j->nonblock && !(flags & O_NONBLOCK) &&
		    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
			fd = safe_close(fd);
	} else {
		/* Made meanwhile by another thread, it may be a FIFO: no wait for its peer. */
		fd = openat(j->dir, j->base, flags | O_NOFOLLOW | O_NONBLOCK, j->mode);
		if (fd >= 0 && !(flags & O_NONBLOCK) &&
		    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
			fd = safe_close(fd);
	}
	j->r = fd < 0 ? negative_errno() : fd;
}

/* The opened file, checked again (a create may have met a file made meanwhile), or -errno. */
static int opened_check(struct open_job *j, int fd)
{
	char entry[PATH_MAX];
	struct stat s;

	int r = pfn_denied(j->sv->pfn, fd, -1, entry, sizeof(entry));
	if (r != 0)
		return r < 0 ? r : -EACCES;
	if (supervisor_proc(fd))
		return -EACCES;
	/* /dev/tty opened here is the supervisor's terminal: the child's only if the same. */
	if (fstat(fd, &s) == 0 && S_ISCHR(s.st_mode) && s.st_rdev == makedev(5, 0) &&
	    (tty_of((pid_t)j->req.pid) != tty_of(getpid()) || tty_of(getpid()) <= 0))
		return -ENXIO;
	return 0;
}

/* The open of job @j, answered on @listener: NOTIF_DEFERRED (answered), NOTIF_GONE, -errno. */
static int open_run(int listener, struct open_job *j)
{
	j->r = -EACCES;
	int r = pfn_confined_run(j->sv->pfn, j->ruleset, j->caps, confined_open, j);
	if (r == 0)
		r = j->r;
	int fd = r;
	if (fd >= 0 && (r = opened_check(j, fd)) == 0)
		r = notif_addfd_answer(listener, &j->req, &fd, (j->flags & O_CLOEXEC) != 0);
	safe_close(fd);
	return r;
}

static void open_worker(int listener, int sock, void *arg)
{
	struct open_job *j = arg;
	struct seccomp_notif_resp resp = { .id = j->req.id };

	j->obj = sock;
	if (listener >= 0 && notif_id_valid(listener, j->req.id)) {
		int r = open_run(listener, j);
		if (r != NOTIF_DEFERRED && r != NOTIF_GONE) {
			notif_answer_errno(&resp, r < 0 ? r : -EIO);
			(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp); /* ENOENT: gone */
		}
	}
	safe_close(j->dir);
	free(j);
}

/* Queue the open of @t on a worker (the entry, if any, as its socket). */
static int open_queue(struct supervisor *sv, const struct seccomp_notif *req,
		      const struct path_args *pa, struct target *t, uint64_t caps)
{
	mode_t umask = 0;

	/* Only what makes a file reads the mask (handlers/umask.c keeps it where it can). */
	if ((pa->flags & (O_CREAT | O_TMPFILE)) && sandbox_umask(sv, req, &umask) < 0)
		return -EACCES;
	struct open_job *j = malloc(sizeof(*j));
	if (!j)
		return -ENOMEM;
	*j = (struct open_job){ .sv = sv,
				.req = *req,
				.dir = t->dir,
				.flags = (int)pa->flags,
				.mode = (mode_t)pa->mode & 07777,
				.umask = umask,
				.ruleset = sv->ruleset_fd,
				.caps = caps,
				.obj = -1 };
	snprintf(j->base, sizeof(j->base), "%s", t->base);
	/* A regular file or a directory opened O_NONBLOCK cannot wait where the sandbox holds no
	 * capability (no fanotify permission event of its own holds it): opened from the loop.
	 * EAGAIN (a lease being broken): a worker's, which may wait. */
	struct stat s;
	if (t->obj >= 0 && sv->proc_no_caps && fstat(t->obj, &s) == 0 &&
	    (S_ISREG(s.st_mode) || S_ISDIR(s.st_mode))) {
		j->obj = t->obj;
		j->nonblock = 1;
		int r = open_run(sv->listener, j);
		j->obj = -1;
		j->nonblock = 0;
		if (r != -EAGAIN) {
			free(j);
			return r;
		}
	}
	int r = supervisor_run_worker(sv, t->obj, open_worker, j);
	if (r < 0) {
		free(j);
		return r;
	}
	t->dir = t->obj = -1; /* the job's now */
	return NOTIF_DEFERRED;
}

/* The open's arguments, openat2's struct read: 0 or -EACCES with @why (what cannot be honoured
 * here is refused, never let through). */
static int open_args(struct supervisor *sv, const struct seccomp_notif *req, struct path_args *pa,
		     const char **why)
{
	const uint64_t known = RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS;
	struct open_how how;

	if (path_args_decode(&req->data, pa) < 0)
		return -EACCES;
	pa->flags = (uint32_t)pa->flags;
	if (!pa->flags_in_mem)
		return 0;
	int r = pa->mem_size == sizeof(how)
			? notif_mem_read(sv->listener, req, pa->mem, &how, sizeof(how))
			: -EINVAL;
	if (r == NOTIF_GONE)
		return r;
	if (r < 0 || (how.resolve & ~known)) {
		*why = "an openat2 with these resolve flags is refused while deny_path is in force";
		return -EACCES;
	}
	path_args_set_how(pa, how.flags, how.mode, how.resolve);
	return 0;
}

static int open_decide(struct supervisor *sv, const struct seccomp_notif *req,
		       const struct path_args *pa, char *path, struct target *t, char *entry,
		       const char **why, uint64_t *caps)
{
	struct stat s;

	int r = child_read_path(sv, req, pa->path, path, PATH_MAX);
	if (r == 0)
		r = resolve_copy(sv, req, pa, path, t);
	if (r == -ELOOP && !(pa->resolve & RESOLVE_NO_SYMLINKS)) {
		*why = "deny_path: a name through a magic link is refused while deny_path is in "
		       "force";
		return -EACCES;
	}
	if (r < 0)
		return r;
	if (!notif_id_valid(sv->listener, req->id))
		return NOTIF_GONE;
	int obj_dir = t->obj >= 0 && fstat(t->obj, &s) == 0 && S_ISDIR(s.st_mode);
	r = pfn_denied(sv->pfn, t->obj,
		       t->dir >= 0 ? t->dir
		       : obj_dir   ? t->obj
				   : -1,
		       entry, PATH_MAX);
	if (r != 0)
		return r < 0 ? r : 1;
	if (t->obj >= 0 && supervisor_proc(t->obj))
		return -EACCES;
	if (t->obj < 0 && !(pa->flags & O_CREAT))
		return -ENOENT;
	if (t->obj >= 0 && (pa->flags & O_CREAT) && (pa->flags & O_EXCL) &&
	    (pa->flags & O_TMPFILE) != O_TMPFILE)
		return -EEXIST;
	if (t->obj >= 0 && S_ISLNK(s.st_mode) && !(pa->flags & O_PATH))
		return -ELOOP; /* O_NOFOLLOW */
	if (t->obj >= 0 && (pa->flags & O_DIRECTORY) && !S_ISDIR(s.st_mode))
		return -ENOTDIR;
	if (t->obj >= 0 && S_ISDIR(s.st_mode) && (pa->flags & O_CREAT) &&
	    (pa->flags & O_TMPFILE) != O_TMPFILE)
		return -EISDIR;
	/* What changes ids changes what the supervisor's own open would be allowed. */
	r = pfn_same_ids((pid_t)req->pid, caps);
	if (r < 0)
		*why = PFN_WHY_IDS;
	return r;
}

/* O_PATH: the entry itself, or an O_PATH descriptor of the child's descriptor's file. */
static int answer_path(struct supervisor *sv, const struct seccomp_notif *req,
		       const struct target *t, int cloexec)
{
	char self[64];

	if (t->dir >= 0)
		return notif_addfd_send(sv->listener, req, t->obj, cloexec);
	snprintf(self, sizeof(self), "/proc/self/fd/%d", t->obj);
	_cleanup_close_ int fd = open(self, O_PATH | O_CLOEXEC);
	return fd < 0 ? negative_errno() : notif_addfd_send(sv->listener, req, fd, cloexec);
}

int pfn_open_gate(struct supervisor *sv, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp)
{
	struct path_args pa;
	struct target t = { .dir = -1, .obj = -1 };
	const char *why = NULL;
	char path[PATH_MAX] = "", entry[PATH_MAX];
	uint64_t caps = 0;

	int r = open_args(sv, req, &pa, &why);
	if (r == 0)
		r = open_decide(sv, req, &pa, path, &t, entry, &why, &caps);
	if (r == 0 && (pa.flags & O_PATH)) /* grants nothing to read or write: the entry */
		r = answer_path(sv, req, &t, (pa.flags & O_CLOEXEC) != 0);
	else if (r == 0 && sv->ruleset_fd <= 0)
		r = -EACCES;
	else if (r == 0)
		r = open_queue(sv, req, &pa, &t, caps);
	safe_close(t.dir);
	safe_close(t.obj);
	if (r == 1) {
		pfn_denied_event(sv, req, path, entry);
		r = -EACCES;
	} else if (why)
		pfn_deny_event(sv, req, path, why);
	if (r == NOTIF_GONE || r == NOTIF_DEFERRED)
		return NOTIF_DEFERRED;
	notif_answer_errno(resp, r < 0 ? r : -EIO);
	return NOTIF_ANSWERED;
}

int policy_fn_path_precheck(struct supervisor *sv, const struct seccomp_notif *req)
{
	struct path_args pa;
	struct target t = { .dir = -1, .obj = -1 };
	const char *why = NULL;
	char path[PATH_MAX] = "", entry[PATH_MAX];
	struct stat s;

	if (!policy_fn_denies_paths(sv))
		return 0;
	int r = open_args(sv, req, &pa, &why);
	if (r == 0)
		r = child_read_path(sv, req, pa.path, path, sizeof(path));
	if (r == 0)
		r = resolve_copy(sv, req, &pa, path, &t);
	if (r == 0 && (t.obj >= 0 || t.dir >= 0)) {
		int obj_dir = t.obj >= 0 && fstat(t.obj, &s) == 0 && S_ISDIR(s.st_mode);
		r = pfn_denied(sv->pfn, t.obj,
			       t.dir >= 0 ? t.dir
			       : obj_dir  ? t.obj
					  : -1,
			       entry, sizeof(entry));
	}
	safe_close(t.dir);
	safe_close(t.obj);
	if (r == NOTIF_GONE)
		return r;
	if (r == 1)
		pfn_denied_event(sv, req, path, entry);
	else if (why)
		pfn_deny_event(sv, req, path, why);
	/* Not resolved here (a name that does not exist, a magic link): the server's own
	 * resolution decides, as without a deny. */
	return r == 1 || why ? -EACCES : 0;
}
