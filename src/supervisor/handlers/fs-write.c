/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/fs-write: the writable grants that hold a denied path (plan.fs.write_roots, the
 * "roots").
 *
 * Landlock grants such a tree carved (plan/landlock.c): the directories on the way to a denied
 * path (the spine) get no rights of their own but listing, every other entry there is granted
 * one by one, and the denied path nothing. So the kernel never reaches a denied file under any
 * name (a hard link or a rename of it would give it rights it has not: Landlock refuses), and
 * neither can the sandbox create, remove or rename anything in the spine, nor use what was
 * created there. That is done here, on the child's behalf, for the names the supervisor
 * resolves (as the child would: child_path_open) to a directory beneath a root:
 *  - open, openat, openat2, creat (fs_write_open, from handlers/open.c; fs-write-open.c, with
 *    the worker jobs): decided on the file reached, reopened through that very file (never by
 *    name again) and installed in the child; a create is made there, with the child's umask;
 *  - mkdir, mknod (files, FIFOs, sockets), symlink, unlink, rmdir, rename, link, truncate,
 *    and bind of a named UNIX socket (fs_write_bind, from handlers/ports.c).
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
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "fd-util.h"
#include "fs-write-internal.h"
#include "fs-write.h"
#include "handlers.h"
#include "macro.h"
#include "path-util.h"
#include "plan/plan.h"
#include "supervisor/args.h"
#include "supervisor/child.h"
#include "supervisor/supervisor.h"

/* Where @fd lies, by the path the kernel gives it (in @real): a procfs or sysfs file is never
 * the supervisor's here (handlers/open.c serves /proc). */
enum where fsw_where_is(struct supervisor *sv, int fd, char *real, size_t size)
{
	struct statfs fs;

	if (fd_real_path(fd, real, size) <= 0 || real[0] != '/' || fstatfs(fd, &fs) < 0 ||
	    fs.f_type == PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC)
		return WHERE_OTHER;
	if (path_is_beneath_any(real, sv->plan->fs.write_roots))
		return WHERE_ROOT;
	return path_is_beneath_any(real, sv->plan->fs.write_grants) ? WHERE_WRITABLE : WHERE_OTHER;
}

/* Whether @real is a denied path or beneath one, or (@st, may be NULL) a denied file. */
int fsw_is_denied(struct supervisor *sv, const char *real, const struct stat *st)
{
	if (path_is_beneath_any(real, sv->plan->fs.denied))
		return 1;
	for (size_t i = 0; st && i < sv->plan->fs.n_denied_ids; i++)
		if (sv->plan->fs.denied_ids[i].dev == st->st_dev &&
		    sv->plan->fs.denied_ids[i].ino == st->st_ino)
			return 1;
	return 0;
}

/* Whether @real lies beneath an entry Landlock grants one by one (supervisor.fs_granted):
 * there the kernel's call does what the supervisor's would, under the grant's rules. Those
 * entries' names are in the directories on the way to a denied path, which only the supervisor
 * changes (forget_granted). */
int fsw_in_granted(struct supervisor *sv, const char *real)
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
int fsw_is_spine(struct supervisor *sv, const char *real)
{
	for (size_t i = 0; sv->plan->fs.denied[i]; i++)
		if (path_is_beneath(sv->plan->fs.denied[i], real) &&
		    strcmp(sv->plan->fs.denied[i], real))
			return 1;
	return 0;
}

/* @path with "//" and "/./" collapsed and a trailing "/." dropped (not ".." : a caller resolves
 * a name holding one), in @out of @size bytes; 0, or -ENAMETOOLONG. */
static int lexical(const char *path, char *out, size_t size)
{
	size_t n = 0;

	for (const char *p = path; *p;) {
		if (p[0] == '/' && (p[1] == '/' || (p[1] == '.' && (p[2] == '/' || !p[2])))) {
			p += p[1] == '/' ? 1 : 2;
			continue;
		}
		if (n + 1 >= size)
			return -ENAMETOOLONG;
		out[n++] = *p++;
	}
	if (n == 0 && size > 1)
		out[n++] = '/';
	out[n] = '\0';
	return 0;
}

/* Whether @path (relative to the child's @dirfd or cwd) may lie beneath a root: by its name, or
 * the name of the directory it starts from joined to it, or because it holds ".." or is a
 * descriptor's own name ("/proc/self/fd/N/..."): only those are resolved. Another name
 * reaching a root through a symlink is then the kernel's, which refuses what the spine does
 * not allow. */
int fsw_may_reach_root(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		       const char *path)
{
	char dir[PATH_MAX], joined[2 * PATH_MAX], norm[2 * PATH_MAX];

	if (strstr(path, "..") || strncmp(path, "/proc/self/fd/", 14) == 0 ||
	    strncmp(path, "/proc/thread-self/fd/", 21) == 0 || strncmp(path, "/dev/fd/", 8) == 0)
		return 1;
	if (path[0] != '/') {
		if (proc_fd_path((pid_t)req->pid, dirfd, dir, sizeof(dir)) <= 0 || dir[0] != '/')
			return 1; /* cannot tell: resolve */
		snprintf(joined, sizeof(joined), "%s/%s", dir, path);
		path = joined;
	}
	return lexical(path, norm, sizeof(norm)) < 0 ||
	       path_is_beneath_any(norm, sv->plan->fs.write_roots);
}

/* Whether the trapped thread is served here: /proc not nested, the sandbox's ids. 1, 0 or
 * NOTIF_GONE. */
int fsw_served(struct supervisor *sv, const struct seccomp_notif *req)
{
	return sv->proc_nested ? 0 : proc_same_ids(sv, (pid_t)req->pid);
}

/* The directory @path's last component is in (O_PATH, as the child reaches it, in *@ret_fd)
 * and that component (in @name). 1: split; 0: nothing to split ("", "/", ".", ".." or a name
 * too long: the kernel's); -errno, NOTIF_GONE. *@trailing: the path ended in '/'. */
int fsw_split_parent(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
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
void fsw_join(char *out, size_t size, const char *dir, const char *name)
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
	if (!fsw_may_reach_root(sv, req, dirfd, path))
		return 0;
	r = fsw_split_parent(sv, req, dirfd, path, 0, &e->dir, e->name, &e->trailing);
	if (r <= 0) /* a directory that does not resolve: the kernel says why */
		return r == NOTIF_GONE ? r : 0;
	e->where = fsw_where_is(sv, e->dir, e->real, sizeof(e->real));
	fsw_join(e->path, sizeof(e->path), e->real, e->name);
	return 1;
}

/* Whether the call on @e (entry_resolve gave @r) is made here: @e lies beneath a root, not
 * beneath a granted entry (there the kernel's call does the same, under that grant's rules),
 * the call's own conditions hold (@ok), and the thread is served. 1, 0 (the kernel's), or
 * -errno, NOTIF_GONE. */
static int entry_mine(struct supervisor *sv, const struct seccomp_notif *req, int r,
		      const struct entry *e, int ok)
{
	if (r != 1)
		return r;
	if (e->where != WHERE_ROOT || fsw_in_granted(sv, e->real) || !ok)
		return 0;
	return fsw_served(sv, req);
}

/* Whether the existing entry @e may be removed, renamed or linked: -EACCES for a denied path
 * or a directory on the way to one, -errno when it is not there. */
static int entry_movable(struct supervisor *sv, const struct entry *e)
{
	struct stat st;

	if (fstatat(e->dir, e->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return negative_errno();
	return fsw_is_denied(sv, e->path, &st) || fsw_is_spine(sv, e->path) ? -EACCES : 0;
}

/* Make the mode of new entry @name in @dir @want where the supervisor's umask took more than
 * the child's (the kernel applied the supervisor's). */
static void fix_mode(int dir, const char *name, mode_t want)
{
	struct stat st;

	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISLNK(st.st_mode) &&
	    (st.st_mode & 0777) != (want & 0777))
		(void)!fchmodat(dir, name, (st.st_mode & 07000) | (want & 0777),
				AT_SYMLINK_NOFOLLOW);
}

void fsw_answer_zero_or(struct seccomp_notif_resp *resp, int r)
{
	if (r < 0)
		notif_answer_errno(resp, r);
	else
		notif_answer_value(resp, 0);
}

/* Whether the writable grants hold a denied path (the roots): without one, these calls are
 * trapped only with a workdir (whose handlers passed the call on) or to be judged for the log
 * (routes.def's logging mode), and the kernel makes them as asked: CONTINUE, under the Landlock
 * rules, which decide on the path the kernel resolves. */
static int mediating(const struct supervisor *sv)
{
	return sv->plan && sv->plan->fs.write_roots;
}

/* ---- mkdir, mknod, symlink ------------------------------------------------------------- */

int handle_fs_create(struct supervisor *sv, const struct seccomp_notif *req,
		     struct seccomp_notif_resp *resp)
{
	char target[PATH_MAX] = "";
	struct path_args pa;
	int r = path_args_decode(&req->data, &pa);

	if (!mediating(sv)) /* CONTINUE: nothing to keep out here; Landlock decides (mediating) */
		return notif_answer_continue(resp);
	if (r < 0)
		return r;
	uint64_t mode = pa.mode; /* (a symlink has none) */
	int is_symlink = pa.call->family == PATH_SYMLINK;
	int is_mknod = pa.call->family == PATH_MKNOD;
	int is_mkdir = pa.call->family == PATH_MKDIR;
	mode_t type = (mode_t)mode & S_IFMT;
	struct entry e;
	r = entry_resolve(sv, req, pa.dirfd, pa.path, &e);
	_cleanup_close_ int dir = e.dir;
	/* Not a device node (CAP_MKNOD) nor a trailing slash on what is not a directory: the
	 * kernel's answer. */
	r = entry_mine(
		sv, req, r, &e,
		!(is_mknod && type && type != S_IFREG && type != S_IFIFO && type != S_IFSOCK) &&
			!(e.trailing && !is_mkdir));
	if (r < 0)
		return r;
	if (r == 0) {
		/* Landlock's carve: in the spine, and in what was made there, nothing is created
		 * by the kernel; elsewhere the grants decide on the path it resolves. */
		return notif_answer_continue(resp);
	}
	/* At a name on the way to a denied path only a directory is made: a symlink there would
	 * lead the denied name elsewhere (a file or a FIFO is refused alike). */
	if (fsw_is_denied(sv, e.path, NULL) || (!is_mkdir && fsw_is_spine(sv, e.path)))
		return -EACCES;
	if (is_symlink) {
		r = child_read_path(sv, req, pa.target, target, sizeof(target));
		if (r < 0)
			return r;
		fsw_answer_zero_or(resp, symlinkat(target, dir, e.name) < 0 ? negative_errno() : 0);
		return 0;
	}
	mode_t umask;
	r = sandbox_umask(sv, req, &umask);
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
	struct path_args pa;
	int r = path_args_decode(&req->data, &pa);

	if (!mediating(sv)) /* CONTINUE: nothing to keep out here; Landlock decides (mediating) */
		return notif_answer_continue(resp);
	if (r < 0)
		return r;
	int flags = (int)pa.flags; /* unlinkat's; rmdir's AT_REMOVEDIR, implied */
	struct entry e;
	r = entry_resolve(sv, req, pa.dirfd, pa.path, &e);
	_cleanup_close_ int dir = e.dir;
	r = entry_mine(sv, req, r, &e,
		       !(flags & ~AT_REMOVEDIR) && !(e.trailing && !(flags & AT_REMOVEDIR)));
	if (r < 0)
		return r;
	if (r == 0) {
		/* Landlock's carve: nothing is removed from the spine, or from what was made
		 * there, by the kernel; elsewhere the grants decide. */
		return notif_answer_continue(resp);
	}
	r = entry_movable(sv, &e);
	if (r == 0 && unlinkat(dir, e.name, flags) < 0)
		r = negative_errno();
	if (r == 0)
		forget_granted(sv, e.path);
	fsw_answer_zero_or(resp, r);
	return 0;
}

/* ---- rename, link ----------------------------------------------------------------------- */

/* A link of the file @fd (O_PATH, the source's name resolved, its final symlink followed) as
 * @to: linked through the descriptor, so the very file checked. */
static int link_followed(struct supervisor *sv, int fd, const struct entry *to)
{
	char real[PATH_MAX], self[64];
	struct stat st;

	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (fsw_where_is(sv, fd, real, sizeof(real)) == WHERE_OTHER)
		return -EXDEV; /* a file of no writable grant would become writable */
	if (fsw_is_denied(sv, real, &st))
		return -EACCES;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	return linkat(AT_FDCWD, self, to->dir, to->name, AT_SYMLINK_FOLLOW) < 0 ? negative_errno()
										: 0;
}

int handle_fs_rename(struct supervisor *sv, const struct seccomp_notif *req,
		     struct seccomp_notif_resp *resp)
{
	struct path_args pa;
	int r = path_args_decode(&req->data, &pa);

	if (!mediating(sv)) /* CONTINUE: nothing to keep out here; Landlock decides (mediating) */
		return notif_answer_continue(resp);
	if (r < 0)
		return r;
	int olddir = pa.dirfd, newdir = pa.dirfd2;
	uint64_t oldaddr = pa.path, newaddr = pa.path2;
	uint64_t flags = (uint32_t)pa.flags; /* renameat2's RENAME_*, linkat's AT_* */
	int is_link = pa.call->family == PATH_LINK;
	int follow = pa.follow; /* linkat's AT_SYMLINK_FOLLOW */
	/* No flag the kernel reserves to privilege (AT_EMPTY_PATH, RENAME_WHITEOUT) or that this
	 * does not know. */
	int known = !(flags & ~(uint64_t)(is_link ? AT_SYMLINK_FOLLOW
						  : RENAME_NOREPLACE | RENAME_EXCHANGE));
	struct entry from = { .dir = -1 }, to;
	char path[PATH_MAX];
	r = entry_resolve(sv, req, newdir, newaddr, &to);
	_cleanup_close_ int todir = to.dir;
	_cleanup_close_ int source = -1; /* follow: the file the source's name reaches */
	int rfrom = 0;
	if (r == 1 && follow) {
		rfrom = child_read_path(sv, req, oldaddr, path, sizeof(path));
		source = rfrom == 0 ? child_path_open(sv, req, olddir, path, 0, 0) : rfrom;
		rfrom = source >= 0 ? 1 : source == NOTIF_GONE ? source : 0;
		if (source >= 0)
			from.where = fsw_where_is(sv, source, from.real, sizeof(from.real));
	} else if (r == 1) {
		rfrom = entry_resolve(sv, req, olddir, oldaddr, &from);
	}
	_cleanup_close_ int fromdir = from.dir;
	if (rfrom < 0)
		return rfrom;
	if (r < 0)
		return r;
	/* Made here: both ends in writable grants, one beneath a root and not beneath a granted
	 * entry (both there, or in another writable grant: the kernel's call does the same),
	 * for a thread served. A trailing slash on a link is the kernel's answer. */
	int mine = r == 1 && rfrom == 1 && known && to.where != WHERE_OTHER &&
		   from.where != WHERE_OTHER && !(is_link && (to.trailing || from.trailing)) &&
		   ((to.where == WHERE_ROOT && !fsw_in_granted(sv, to.real)) ||
		    (from.where == WHERE_ROOT && !fsw_in_granted(sv, from.real)));
	if (mine && (r = fsw_served(sv, req)) < 0)
		return r;
	if (!mine || !r) {
		/* Landlock's carve: the kernel neither makes nor removes a name in the spine or
		 * in what was made there, and never gives a denied file another (the link or
		 * rename would give it rights it has not: EXDEV); elsewhere the grants decide. */
		return notif_answer_continue(resp);
	}
	if (fsw_is_denied(sv, to.path, NULL) || fsw_is_spine(sv, to.path))
		return -EACCES;
	struct stat st;
	if (fstatat(todir, to.name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    fsw_is_denied(sv, to.path, &st))
		return -EACCES;
	if (follow) {
		fsw_answer_zero_or(resp, link_followed(sv, source, &to));
		return 0;
	}
	r = entry_movable(sv, &from);
	/* "dir/" names a directory: without the slash the same, once the source is one. */
	if (r == 0 && (from.trailing || to.trailing) &&
	    (fstatat(fromdir, from.name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode)))
		r = -ENOTDIR;
	if (r == 0 && is_link && linkat(fromdir, from.name, todir, to.name, 0) < 0)
		r = negative_errno();
	else if (r == 0 && !is_link &&
		 syscall(SYS_renameat2, fromdir, from.name, todir, to.name, (unsigned)flags) < 0)
		r = negative_errno();
	if (r == 0 && !is_link)
		forget_granted(sv, from.path);
	if (r == 0)
		forget_granted(sv, to.path);
	fsw_answer_zero_or(resp, r);
	return 0;
}

/* ---- truncate --------------------------------------------------------------------------- */

int handle_fs_truncate(struct supervisor *sv, const struct seccomp_notif *req,
		       struct seccomp_notif_resp *resp)
{
	char path[PATH_MAX], real[PATH_MAX];
	struct stat st;
	struct path_args pa;

	if (!mediating(sv)) /* CONTINUE: nothing to keep out here; Landlock decides (mediating) */
		return notif_answer_continue(resp);
	int r = path_args_decode(&req->data, &pa);
	if (r < 0)
		return r;
	if ((r = child_read_path(sv, req, pa.path, path, sizeof(path))) < 0)
		return r;
	_cleanup_close_ int fd = fsw_may_reach_root(sv, req, AT_FDCWD, path)
					 ? child_path_open(sv, req, AT_FDCWD, path, 0, 0)
					 : -ENOENT;
	if (fd == NOTIF_GONE)
		return fd;
	/* Truncated here: beneath a root, not beneath a granted entry (there the kernel's call
	 * does the same), for a thread served. */
	r = fd >= 0 && fstat(fd, &st) == 0 &&
			    fsw_where_is(sv, fd, real, sizeof(real)) == WHERE_ROOT &&
			    !fsw_in_granted(sv, real)
		    ? fsw_served(sv, req)
		    : 0;
	if (r < 0)
		return r;
	if (r == 0) {
		/* Landlock's carve: the kernel truncates nothing made in the spine, and never a
		 * denied file; elsewhere the grants decide (LANDLOCK_ACCESS_FS_TRUNCATE). */
		return notif_answer_continue(resp);
	}
	if (fsw_is_denied(sv, real, &st))
		return -EACCES;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	struct fs_job job = { .kind = JOB_TRUNCATE, .length = (off_t)pa.length };
	r = fsw_job_queue(sv, req, fd, &job, 1);
	if (r == 0) /* truncated on the loop */
		notif_answer_value(resp, 0);
	return r;
}

/* ---- bind of a named UNIX socket ---------------------------------------------------------- */

struct bind_at {
	int sock, dir, err;
	struct sockaddr_un at;
};

/* On a thread of its own, with a working directory of its own (unshare CLONE_FS): bind in the
 * directory checked (a name resolved there, never again from the top), by the name alone, so
 * that the address the socket reports is the name, not a path of the supervisor's. */
static void *bind_in(void *arg)
{
	struct bind_at *b = arg;

	b->at.sun_family = AF_UNIX;
	if (unshare(CLONE_FS) < 0 || fchdir(b->dir) < 0 ||
	    bind(b->sock, (struct sockaddr *)&b->at, sizeof(b->at)) < 0)
		b->err = errno;
	return NULL;
}

int fs_write_bind(struct supervisor *sv, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp, int sock)
{
	struct sockaddr_un un = { 0 };
	size_t len = (size_t)req->data.args[2];
	const size_t head = offsetof(struct sockaddr_un, sun_path);

	/* A name made in the directories on the way to a denied path: the socket is bound here
	 * through the directory resolved. Abstract and unnamed addresses, and a length the
	 * kernel refuses, are the kernel's. */
	if (len <= head + 1 || len > sizeof(un) ||
	    notif_mem_read(sv->listener, req, req->data.args[1], &un, len) < 0 ||
	    un.sun_family != AF_UNIX || !un.sun_path[0])
		return NOTIF_NOT_MINE;
	char path[sizeof(un.sun_path) + 1];
	memcpy(path, un.sun_path, sizeof(un.sun_path));
	path[sizeof(un.sun_path)] = '\0';
	struct entry e = { .dir = -1 };
	int r = fsw_may_reach_root(sv, req, AT_FDCWD, path)
			? fsw_split_parent(sv, req, AT_FDCWD, path, 0, &e.dir, e.name, &e.trailing)
			: 0;
	_cleanup_close_ int dir = e.dir;
	if (r <= 0)
		return r == NOTIF_GONE ? r : NOTIF_NOT_MINE;
	e.where = fsw_where_is(sv, dir, e.real, sizeof(e.real));
	if (e.where != WHERE_ROOT || fsw_in_granted(sv, e.real) || e.trailing)
		return NOTIF_NOT_MINE;
	fsw_join(e.path, sizeof(e.path), e.real, e.name);
	if (fsw_is_denied(sv, e.path, NULL) || fsw_is_spine(sv, e.path))
		return -EACCES;
	r = fsw_served(sv, req);
	if (r <= 0)
		return r == NOTIF_GONE ? r : NOTIF_NOT_MINE;
	mode_t umask;
	r = sandbox_umask(sv, req, &umask);
	if (r < 0)
		return r;
	struct bind_at b = { .sock = sock, .dir = dir };
	size_t nlen = strlen(e.name); /* no longer than the path asked, which fitted */
	if (nlen >= sizeof(b.at.sun_path))
		return -ENAMETOOLONG;
	memcpy(b.at.sun_path, e.name, nlen + 1);
	pthread_t t;
	if ((r = pthread_create(&t, NULL, bind_in, &b)) != 0)
		return -r;
	pthread_join(t, NULL);
	if (b.err)
		return -b.err;
	fix_mode(dir, e.name, 0777 & ~umask);
	notif_answer_value(resp, 0);
	return 0;
}
