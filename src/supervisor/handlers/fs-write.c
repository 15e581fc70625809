/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/fs-write: the writable grants that hold a denied path (plan.net.write_roots, the
 * "roots").
 *
 * Landlock grants such a tree carved (plan/landlock.c): the directories on the way to a denied
 * path (the spine) get no rights of their own but listing, every other entry there is granted
 * one by one, and the denied path nothing. So the kernel never reaches a denied file under any
 * name (a hard link or a rename of it would give it rights it has not: Landlock refuses), and
 * neither can the sandbox create, remove or rename anything in the spine, nor use what was
 * created there. That is done here, on the child's behalf, for the names the supervisor
 * resolves (as the child would: child_path_open) to a directory beneath a root:
 *  - open, openat, openat2, creat (fs_write_open, from handlers/open.c): decided on the file
 *    reached, reopened through that very file (never by name again) and installed in the
 *    child; a create is made here, with the child's umask;
 *  - mkdir, mknod (files, FIFOs, sockets), symlink, unlink, rmdir, rename, link, truncate.
 * Refused (EACCES): a denied path, anything beneath one (by name, and by identity for what
 * exists), and, so that the denied paths keep their names, removing or renaming a directory of
 * the spine. The only names that change in the spine and in what was created there are those
 * changed here, one call at a time on the supervisor loop: a name checked here stays what it
 * was until the call made on it.
 * Anything else is the kernel's (CONTINUE), under Landlock's carve, which keeps it off the
 * denied paths whatever the name reads by then: a name that reaches a root only through a
 * symlink of another name, a process that confined itself further, a thread whose ids are no
 * longer the sandbox's (the supervisor acts with its own), a rename or link whose other end lies
 * outside every writable grant. There Landlock refuses what the spine does not allow.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fd-util.h"
#include "handlers.h"
#include "macro.h"
#include "net-internal.h"
#include "path-util.h"
#include "plan/plan.h"
#include "supervisor/notif.h"
#include "supervisor/supervisor.h"

/* What the open helpers return for a file beneath a granted entry: the kernel's. */
#define FS_WRITE_CONTINUE 2

/* Where a directory (or file) lies. */
enum where {
	WHERE_OTHER,	/* outside every writable grant */
	WHERE_WRITABLE, /* in a writable grant without a denied path */
	WHERE_ROOT,	/* beneath a root: the supervisor's */
};

/* Where @fd lies, by the path the kernel gives it (in @real): a procfs or sysfs file is never
 * the supervisor's here (handlers/open.c serves /proc). */
static enum where where_is(struct supervisor *sv, int fd, char *real, size_t size)
{
	struct statfs fs;

	if (fd_real_path(fd, real, size) <= 0 || real[0] != '/' || fstatfs(fd, &fs) < 0 ||
	    fs.f_type == PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC)
		return WHERE_OTHER;
	if (path_is_beneath_any(real, sv->net->write_roots))
		return WHERE_ROOT;
	return path_is_beneath_any(real, sv->net->unix_write) ? WHERE_WRITABLE : WHERE_OTHER;
}

/* Whether @real is a denied path or beneath one, or (@st, may be NULL) a denied file. */
static int is_denied(struct supervisor *sv, const char *real, const struct stat *st)
{
	if (path_is_beneath_any(real, sv->net->denied))
		return 1;
	for (size_t i = 0; st && i < sv->net->n_denied_ids; i++)
		if (sv->net->denied_ids[i].dev == st->st_dev &&
		    sv->net->denied_ids[i].ino == st->st_ino)
			return 1;
	return 0;
}

/* Whether @real lies beneath an entry Landlock grants one by one (supervisor.fs_granted):
 * there the kernel's call does what the supervisor's would, under the grant's rules. Those
 * entries' names are in the directories on the way to a denied path, which only the supervisor
 * changes (forget_granted). */
static int in_granted(struct supervisor *sv, const char *real)
{
	return path_is_beneath_any(real, sv->fs_granted);
}

/* @real, a name the supervisor removed or replaced: whatever it names next is not granted. */
static void forget_granted(struct supervisor *sv, const char *real)
{
	size_t n = 0, k = 0;

	for (; sv->fs_granted && sv->fs_granted[n]; n++)
		if (strcmp(sv->fs_granted[n], real) == 0)
			free(sv->fs_granted[n]);
		else
			sv->fs_granted[k++] = sv->fs_granted[n];
	if (sv->fs_granted)
		sv->fs_granted[k] = NULL;
}

/* Whether @real is a directory on the way to a denied path: never removed or renamed. */
static int is_spine(struct supervisor *sv, const char *real)
{
	for (size_t i = 0; sv->net->denied[i]; i++)
		if (path_is_beneath(sv->net->denied[i], real) && strcmp(sv->net->denied[i], real))
			return 1;
	return 0;
}

/* Whether @path (relative to the child's @dirfd or cwd) may lie beneath a root: an absolute name
 * there, a relative one from a directory there, one with ".." or a descriptor's own name
 * ("/proc/self/fd/N/..."): only those are resolved. Another name reaching a root through a
 * symlink is then the kernel's, which refuses what the spine does not allow. */
static int may_reach_root(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
			  const char *path)
{
	char link[64], dir[PATH_MAX];

	if (strstr(path, "..") || strncmp(path, "/proc/self/fd/", 14) == 0 ||
	    strncmp(path, "/proc/thread-self/fd/", 21) == 0 || strncmp(path, "/dev/fd/", 8) == 0)
		return 1;
	if (path[0] == '/') {
		while (path[1] == '/')
			path++; /* "//w" */
		return path_is_beneath_any(path, sv->net->write_roots);
	}
	if (dirfd == AT_FDCWD)
		snprintf(link, sizeof(link), "/proc/%u/cwd", req->pid);
	else
		snprintf(link, sizeof(link), "/proc/%u/fd/%d", req->pid, dirfd);
	ssize_t k = readlink(link, dir, sizeof(dir) - 1);
	if (k <= 0)
		return 1; /* cannot tell: resolve */
	dir[k] = '\0';
	return path_is_beneath_any(dir, sv->net->write_roots);
}

/* Whether the trapped thread is served here: /proc not nested, the sandbox's ids. 1, 0 or
 * NOTIF_GONE. */
static int served(struct supervisor *sv, const struct seccomp_notif *req)
{
	return sv->proc_nested ? 0 : proc_same_ids(sv, (pid_t)req->pid);
}

/* The trapped thread's umask. */
static int child_umask(const struct seccomp_notif *req, mode_t *ret)
{
	char buf[4096];

	if (proc_read((pid_t)req->pid, "status", buf, sizeof(buf)) < 0)
		return NOTIF_GONE;
	const char *u = strstr(buf, "\nUmask:");
	char *end;
	long v = u ? strtol(u + 7, &end, 8) : -1;
	if (v < 0 || v > 0777)
		return -EIO;
	*ret = (mode_t)v;
	return 0;
}

/* The directory @path's last component is in (O_PATH, as the child reaches it, in *@ret_fd)
 * and that component (in @name). 1: split; 0: nothing to split ("", "/", ".", ".." or a name
 * too long: the kernel's); -errno, NOTIF_GONE. *@trailing: the path ended in '/'. */
static int split_parent(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
			const char *path, uint64_t resolve, int *ret_fd, char name[NAME_MAX + 1],
			int *trailing)
{
	char dir[PATH_MAX];
	size_t len = strlen(path);

	while (len > 1 && path[len - 1] == '/')
		len--;
	*trailing = len != strlen(path);
	const char *slash = len ? memrchr(path, '/', len) : NULL;
	const char *base = slash ? slash + 1 : path;
	size_t blen = (size_t)(path + len - base);
	if (blen == 0 || blen > NAME_MAX || (blen == 1 && base[0] == '.') ||
	    (blen == 2 && base[0] == '.' && base[1] == '.'))
		return 0;
	memcpy(name, base, blen);
	name[blen] = '\0';
	if (!slash)
		strcpy(dir, ".");
	else if (slash == path)
		strcpy(dir, "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	int fd = child_path_open(sv, req, dirfd, dir, resolve, 0);
	if (fd < 0)
		return fd;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
		close(fd);
		return -ENOTDIR;
	}
	*ret_fd = fd;
	return 1;
}

/* The path of @name in directory @dir (real paths). */
static void join(char *out, size_t size, const char *dir, const char *name)
{
	snprintf(out, size, "%s%s%s", dir, strcmp(dir, "/") == 0 ? "" : "/", name);
}

/* A name resolved for a call made here: its directory, where that lies, its real path, and
 * the entry's own path. */
struct entry {
	int dir; /* O_PATH */
	enum where where;
	char name[NAME_MAX + 1];
	char real[PATH_MAX];		    /* the directory's */
	char path[PATH_MAX + NAME_MAX + 2]; /* the entry's */
	int trailing;
};

/* Read the path at @addr and split it (split_parent). 1: resolved, in @e; 0: the kernel's
 * (CONTINUE); -errno, NOTIF_GONE. */
static int entry_resolve(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
			 uint64_t addr, struct entry *e)
{
	char path[PATH_MAX];

	e->dir = -1;
	int r = child_read_path(sv, req, addr, path, sizeof(path));
	if (r < 0)
		return r;
	if (!may_reach_root(sv, req, dirfd, path))
		return 0;
	r = split_parent(sv, req, dirfd, path, 0, &e->dir, e->name, &e->trailing);
	if (r <= 0) /* a directory that does not resolve: the kernel says why */
		return r == NOTIF_GONE ? r : 0;
	e->where = where_is(sv, e->dir, e->real, sizeof(e->real));
	join(e->path, sizeof(e->path), e->real, e->name);
	return 1;
}

/* Whether the existing entry @e may be removed, renamed or linked: -EACCES for a denied path
 * or a directory on the way to one, -errno when it is not there. */
static int entry_movable(struct supervisor *sv, const struct entry *e)
{
	struct stat st;

	if (fstatat(e->dir, e->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return negative_errno();
	return is_denied(sv, e->path, &st) || is_spine(sv, e->path) ? -EACCES : 0;
}

/* Make the mode of new entry @name in @dir @want where the supervisor's umask took more than
 * the child's (the kernel applied the supervisor's). */
static void fix_mode(int dir, const char *name, mode_t want)
{
	struct stat st;

	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISLNK(st.st_mode) &&
	    (st.st_mode & 0777) != (want & 0777))
		(void)!fchmodat(dir, name, (st.st_mode & 07000) | (want & 0777), 0);
}

static void answer_zero_or(struct seccomp_notif_resp *resp, int r)
{
	if (r < 0)
		notif_answer_errno(resp, r);
	else
		notif_answer_value(resp, 0);
}

/* ---- open ------------------------------------------------------------------------------ */

/* The open of existing file @fd (O_PATH, resolved as the child would) with @flags: reopened
 * here through that file and installed in the child, when it lies beneath a root. */
static int open_existing(struct supervisor *sv, const struct seccomp_notif *req, int fd,
			 uint64_t flags, uint64_t mode)
{
	char real[PATH_MAX], self[64];
	struct stat st;

	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (where_is(sv, fd, real, sizeof(real)) != WHERE_ROOT)
		return FS_WRITE_NOT_MINE;
	if (is_denied(sv, real, &st))
		return -EACCES;
	if (S_ISLNK(st.st_mode))
		return -ELOOP; /* O_NOFOLLOW */
	if (in_granted(sv, real))
		return FS_WRITE_CONTINUE;
	int r = served(sv, req);
	if (r <= 0)
		return r == NOTIF_GONE ? r : FS_WRITE_NOT_MINE;
	/* A FIFO would block the loop, a device is not the supervisor's to open: the kernel's,
	 * which opens what the carve grants (not what was made in the spine). */
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return FS_WRITE_NOT_MINE;
	mode_t umask = 0;
	if ((flags & O_TMPFILE) == O_TMPFILE) {
		r = child_umask(req, &umask);
		if (r < 0)
			return r;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	/* Through the file resolved: the very file checked, whatever its name is by now. The
	 * kernel checks the permissions the child (the same ids: served()) would meet. */
	_cleanup_close_ int opened = open(
		self,
		(int)(flags & ~(uint64_t)(O_CREAT | O_EXCL | O_NOFOLLOW)) | O_NOCTTY | O_CLOEXEC,
		(mode_t)mode & ~umask & 07777);
	if (opened < 0)
		return negative_errno();
	return notif_addfd_send(sv->listener, req, opened, (flags & O_CLOEXEC) != 0);
}

/* An O_CREAT open beneath a root: made here when the name is not there. */
static int open_create(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		       const char *path, uint64_t flags, uint64_t mode, uint64_t resolve)
{
	char name[NAME_MAX + 1], real[PATH_MAX], full[PATH_MAX + NAME_MAX + 2];
	int trailing, r;
	_cleanup_close_ int dir = -1;

	r = split_parent(sv, req, dirfd, path, resolve, &dir, name, &trailing);
	if (r <= 0)
		return r == NOTIF_GONE ? r : FS_WRITE_NOT_MINE;
	if (where_is(sv, dir, real, sizeof(real)) != WHERE_ROOT)
		return FS_WRITE_NOT_MINE;
	if (in_granted(sv, real))
		return FS_WRITE_CONTINUE;
	join(full, sizeof(full), real, name);
	if (is_denied(sv, full, NULL))
		return -EACCES;
	r = served(sv, req);
	if (r <= 0)
		return r == NOTIF_GONE ? r : FS_WRITE_NOT_MINE;
	/* Made here unless a thread of the sandbox makes it meanwhile (beneath a granted entry
	 * it may): then opened as it is. */
	for (int tries = 0; tries < 4; tries++) {
		struct stat st;
		if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			if (flags & O_EXCL)
				return -EEXIST;
			int nofollow = (flags & O_NOFOLLOW) || (resolve & RESOLVE_NO_SYMLINKS);
			if (S_ISLNK(st.st_mode) && nofollow)
				return -ELOOP;
			_cleanup_close_ int fd =
				S_ISLNK(st.st_mode)
					? child_path_open(sv, req, dirfd, path, resolve, 0)
					: openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
			if (fd == NOTIF_GONE)
				return fd;
			if (fd < 0 && S_ISLNK(st.st_mode))
				return FS_WRITE_NOT_MINE; /* dangling: the kernel's */
			if (fd < 0)
				continue;
			return open_existing(sv, req, fd, flags & ~(uint64_t)O_CREAT, mode);
		}
		if (errno != ENOENT)
			return negative_errno();
		if (trailing)
			return -EISDIR;
		mode_t umask;
		r = child_umask(req, &umask);
		if (r < 0)
			return r;
		mode_t want = (mode_t)mode & ~umask & 07777;
		_cleanup_close_ int fd = openat(dir, name,
						(int)(flags & ~(uint64_t)O_TRUNC) | O_CREAT |
							O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
						want);
		if (fd < 0 && errno == EEXIST && !(flags & O_EXCL))
			continue;
		if (fd < 0)
			return negative_errno();
		fix_mode(dir, name, want);
		return notif_addfd_send(sv->listener, req, fd, (flags & O_CLOEXEC) != 0);
	}
	return FS_WRITE_NOT_MINE;
}

static int fs_write_open_one(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
			     const char *path, uint64_t flags, uint64_t mode, uint64_t resolve);

int fs_write_open(struct supervisor *sv, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp, int dirfd, const char *path, uint64_t flags,
		  uint64_t mode, uint64_t resolve)
{
	int r = fs_write_open_one(sv, req, dirfd, path, flags, mode, resolve);
	if (r != FS_WRITE_CONTINUE)
		return r;
	/* Beneath an entry Landlock grants with the write grant's rights: the kernel's open
	 * does what the supervisor's would, and, whatever the name reads by then, Landlock
	 * decides on the file it reaches (the carve keeps the denied paths out). */
	notif_answer_continue(resp);
	return 0;
}

static int fs_write_open_one(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
			     const char *path, uint64_t flags, uint64_t mode, uint64_t resolve)
{
	/* O_PATH grants nothing to read or write, and every open made through it later is
	 * trapped (a dirfd, /proc/self/fd/N): the other handlers' (CONTINUE). */
	if ((flags & O_PATH) || sv->proc_nested || !may_reach_root(sv, req, dirfd, path))
		return FS_WRITE_NOT_MINE;
	if ((flags & O_CREAT) && (flags & O_TMPFILE) != O_TMPFILE)
		return open_create(sv, req, dirfd, path, flags, mode, resolve);
	int nofollow = (flags & O_NOFOLLOW) != 0;
	_cleanup_close_ int fd = child_path_open(sv, req, dirfd, path, resolve, nofollow);
	if (fd == NOTIF_GONE)
		return fd;
	if (fd < 0) /* not there, or not resolved here: the kernel's, which says why */
		return FS_WRITE_NOT_MINE;
	return open_existing(sv, req, fd, flags, mode);
}

/* ---- mkdir, mknod, symlink ------------------------------------------------------------- */

int handle_fs_create(struct supervisor *sv, const struct seccomp_notif *req,
		     struct seccomp_notif_resp *resp)
{
	const __u64 *a = req->data.args;
	int dirfd = AT_FDCWD, r;
	uint64_t addr, mode = 0;
	char target[PATH_MAX] = "";

	switch (req->data.nr) {
	case SYS_mkdir:
		addr = a[0], mode = a[1];
		break;
	case SYS_mkdirat:
		dirfd = (int)a[0], addr = a[1], mode = a[2];
		break;
	case SYS_mknod:
		addr = a[0], mode = a[1];
		break;
	case SYS_mknodat:
		dirfd = (int)a[0], addr = a[1], mode = a[2];
		break;
	case SYS_symlink:
		addr = a[1];
		break;
	default: /* symlinkat */
		dirfd = (int)a[1], addr = a[2];
		break;
	}
	int is_symlink = req->data.nr == SYS_symlink || req->data.nr == SYS_symlinkat;
	int is_mknod = req->data.nr == SYS_mknod || req->data.nr == SYS_mknodat;
	mode_t type = (mode_t)mode & S_IFMT;
	struct entry e;
	r = entry_resolve(sv, req, dirfd, addr, &e);
	_cleanup_close_ int dir = e.dir;
	/* Made here: beneath a root, not beneath a granted entry (there the kernel's call does
	 * the same, under that grant's rules), not a device node (CAP_MKNOD) nor a trailing
	 * slash on what is not a directory (the kernel's answer), for a thread served. */
	if (r == 1 && e.where == WHERE_ROOT && !in_granted(sv, e.real) &&
	    !(is_mknod && type && type != S_IFREG && type != S_IFIFO && type != S_IFSOCK) &&
	    !(e.trailing && req->data.nr != SYS_mkdir && req->data.nr != SYS_mkdirat))
		r = served(sv, req);
	else if (r == 1)
		r = 0;
	if (r < 0)
		return r;
	if (r == 0) {
		/* Landlock's carve: in the spine, and in what was made there, nothing is created
		 * by the kernel; elsewhere the grants decide on the path it resolves. */
		notif_answer_continue(resp);
		return 0;
	}
	if (is_denied(sv, e.path, NULL))
		return -EACCES;
	if (is_symlink) {
		r = child_read_path(sv, req, a[0], target, sizeof(target));
		if (r < 0)
			return r;
		answer_zero_or(resp, symlinkat(target, dir, e.name) < 0 ? negative_errno() : 0);
		return 0;
	}
	mode_t umask;
	r = child_umask(req, &umask);
	if (r < 0)
		return r;
	mode_t want = (mode_t)mode & ~umask & 07777;
	if (is_mknod)
		r = mknodat(dir, e.name, (type ? type : S_IFREG) | want, 0);
	else
		r = mkdirat(dir, e.name, want);
	if (r < 0)
		return negative_errno();
	fix_mode(dir, e.name, want);
	notif_answer_value(resp, 0);
	return 0;
}

/* ---- unlink, rmdir ---------------------------------------------------------------------- */

int handle_fs_remove(struct supervisor *sv, const struct seccomp_notif *req,
		     struct seccomp_notif_resp *resp)
{
	const __u64 *a = req->data.args;
	int dirfd = AT_FDCWD, flags = 0;
	uint64_t addr = a[0];

	if (req->data.nr == SYS_unlinkat)
		dirfd = (int)a[0], addr = a[1], flags = (int)a[2];
	else if (req->data.nr == SYS_rmdir)
		flags = AT_REMOVEDIR;
	struct entry e;
	int r = entry_resolve(sv, req, dirfd, addr, &e);
	_cleanup_close_ int dir = e.dir;
	/* Removed here: beneath a root, not beneath a granted entry (there the kernel's call does
	 * the same), for a thread served. */
	if (r == 1 && e.where == WHERE_ROOT && !in_granted(sv, e.real) &&
	    !(flags & ~AT_REMOVEDIR) && !(e.trailing && !(flags & AT_REMOVEDIR)))
		r = served(sv, req);
	else if (r == 1)
		r = 0;
	if (r < 0)
		return r;
	if (r == 0) {
		/* Landlock's carve: nothing is removed from the spine, or from what was made
		 * there, by the kernel; elsewhere the grants decide. */
		notif_answer_continue(resp);
		return 0;
	}
	r = entry_movable(sv, &e);
	if (r == 0 && unlinkat(dir, e.name, flags) < 0)
		r = negative_errno();
	if (r == 0)
		forget_granted(sv, e.path);
	answer_zero_or(resp, r);
	return 0;
}

/* ---- rename, link ----------------------------------------------------------------------- */

/* The source of a link following a final symlink: the file it reaches, checked, linked through
 * its descriptor (so the very file checked). */
static int link_followed(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
			 uint64_t addr, const struct entry *to)
{
	char path[PATH_MAX], real[PATH_MAX], self[64];
	struct stat st;

	int r = child_read_path(sv, req, addr, path, sizeof(path));
	if (r < 0)
		return r;
	_cleanup_close_ int fd = child_path_open(sv, req, dirfd, path, 0, 0);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (where_is(sv, fd, real, sizeof(real)) == WHERE_OTHER)
		return -EXDEV; /* a file of no writable grant would become writable */
	if (is_denied(sv, real, &st))
		return -EACCES;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	return linkat(AT_FDCWD, self, to->dir, to->name, AT_SYMLINK_FOLLOW) < 0 ? negative_errno()
										: 0;
}

int handle_fs_rename(struct supervisor *sv, const struct seccomp_notif *req,
		     struct seccomp_notif_resp *resp)
{
	const __u64 *a = req->data.args;
	int olddir = AT_FDCWD, newdir = AT_FDCWD, r;
	uint64_t oldaddr = a[0], newaddr = a[1], flags = 0;
	int is_link = req->data.nr == SYS_link || req->data.nr == SYS_linkat;

	if (req->data.nr == SYS_renameat || req->data.nr == SYS_renameat2 ||
	    req->data.nr == SYS_linkat) {
		olddir = (int)a[0], oldaddr = a[1], newdir = (int)a[2], newaddr = a[3];
		flags = req->data.nr == SYS_renameat ? 0 : (uint32_t)a[4];
	}
	struct entry from, to;
	r = entry_resolve(sv, req, newdir, newaddr, &to);
	_cleanup_close_ int todir = to.dir;
	int rfrom = r >= 0 ? entry_resolve(sv, req, olddir, oldaddr, &from) : 0;
	_cleanup_close_ int fromdir = r >= 0 ? from.dir : -1;
	if (r >= 0 && rfrom < 0)
		r = rfrom;
	if (r == 1 && rfrom == 0 && !(is_link && (flags & AT_SYMLINK_FOLLOW)))
		r = 0; /* the source not resolved here */
	if (r < 0)
		return r;
	/* Both ends in writable grants, one beneath a root, and no flag the kernel reserves to
	 * privilege (AT_EMPTY_PATH, RENAME_WHITEOUT) or that this does not know. */
	int mine = r == 1 && to.where != WHERE_OTHER && (rfrom == 0 || from.where != WHERE_OTHER) &&
		   (to.where == WHERE_ROOT || (rfrom == 1 && from.where == WHERE_ROOT)) &&
		   !(flags & ~(uint64_t)(is_link ? AT_SYMLINK_FOLLOW
						 : RENAME_NOREPLACE | RENAME_EXCHANGE)) &&
		   !to.trailing;
	/* Both ends beneath granted entries or in another writable grant: the kernel's. */
	if (mine && (to.where != WHERE_ROOT || in_granted(sv, to.real)) && rfrom == 1 &&
	    (from.where != WHERE_ROOT || in_granted(sv, from.real)))
		mine = 0;
	if (mine && (r = served(sv, req)) < 0)
		return r;
	if (!mine || !r) {
		/* Landlock's carve: the kernel neither makes nor removes a name in the spine or
		 * in what was made there, and never gives a denied file another (the link or
		 * rename would give it rights it has not: EXDEV); elsewhere the grants decide. */
		notif_answer_continue(resp);
		return 0;
	}
	if (is_denied(sv, to.path, NULL) || is_spine(sv, to.path))
		return -EACCES;
	struct stat st;
	if (fstatat(todir, to.name, &st, AT_SYMLINK_NOFOLLOW) == 0 && is_denied(sv, to.path, &st))
		return -EACCES;
	if (is_link && (flags & AT_SYMLINK_FOLLOW)) {
		answer_zero_or(resp, link_followed(sv, req, olddir, oldaddr, &to));
		return 0;
	}
	r = entry_movable(sv, &from);
	if (r == 0 && is_link && linkat(fromdir, from.name, todir, to.name, 0) < 0)
		r = negative_errno();
	else if (r == 0 && !is_link &&
		 syscall(SYS_renameat2, fromdir, from.name, todir, to.name, (unsigned)flags) < 0)
		r = negative_errno();
	if (r == 0 && !is_link)
		forget_granted(sv, from.path);
	if (r == 0)
		forget_granted(sv, to.path);
	answer_zero_or(resp, r);
	return 0;
}

/* ---- truncate --------------------------------------------------------------------------- */

int handle_fs_truncate(struct supervisor *sv, const struct seccomp_notif *req,
		       struct seccomp_notif_resp *resp)
{
	char path[PATH_MAX], real[PATH_MAX], self[64];
	struct stat st;

	int r = child_read_path(sv, req, req->data.args[0], path, sizeof(path));
	if (r < 0)
		return r;
	_cleanup_close_ int fd = may_reach_root(sv, req, AT_FDCWD, path)
					 ? child_path_open(sv, req, AT_FDCWD, path, 0, 0)
					 : -ENOENT;
	if (fd == NOTIF_GONE)
		return fd;
	/* Truncated here: beneath a root, not beneath a granted entry (there the kernel's call
	 * does the same), for a thread served. */
	r = fd >= 0 && fstat(fd, &st) == 0 && where_is(sv, fd, real, sizeof(real)) == WHERE_ROOT &&
			    !in_granted(sv, real)
		    ? served(sv, req)
		    : 0;
	if (r < 0)
		return r;
	if (r == 0) {
		/* Landlock's carve: the kernel truncates nothing made in the spine, and never a
		 * denied file; elsewhere the grants decide (LANDLOCK_ACCESS_FS_TRUNCATE). */
		notif_answer_continue(resp);
		return 0;
	}
	if (is_denied(sv, real, &st))
		return -EACCES;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	_cleanup_close_ int w = open(self, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (w < 0)
		return negative_errno();
	answer_zero_or(resp, ftruncate(w, (off_t)req->data.args[1]) < 0 ? negative_errno() : 0);
	return 0;
}
