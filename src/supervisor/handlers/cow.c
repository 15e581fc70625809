/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/cow: the syscalls that read or change the tree under the workdir, made on the
 * child's behalf in its copy-on-write branch (src/cow). Each name is read from the child,
 * joined to its working directory or to the directory its descriptor names (a directory of
 * the upper layer stands for its workdir path), and resolved as the kernel would, with the
 * symlinks inside the workdir read in the merged view (cow_resolve). A name outside the
 * workdir is not this file's (NOTIF_NOT_MINE): another handler's, or the kernel's (CONTINUE).
 *
 * Landlock grants the workdir read and execute only (plan/landlock.c), and the branch read
 * and execute: every write under the workdir is made here, so whatever a name reads by the
 * time the kernel would look at it again, the kernel itself never writes into the workdir.
 * Reads are made here too (the file opened in the layer that holds it and installed in the
 * child), so that a deleted, replaced or new file reads as the branch has it.
 *
 * Kernel objects (FIFOs, sockets, device nodes) are opened by the kernel under the Landlock
 * rules; renaming or linking them is EXDEV. chdir and exec are cow-exec.c's (the anchors and
 * links the workdir holds for the run), max_disk's charges cow-quota.c's, extended attributes
 * cow-xattr.c's, large copy-ups cow-copy.c's. Limits (docs/decisions.md): openat2 with
 * resolve flags under the workdir is EXDEV; metadata calls on a descriptor (fchmod, fchown,
 * futimens) copy up the file the descriptor names at the time of the check.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

#include "cow/cow.h"
#include "fd-util.h"
#include "cow-internal.h"
#include "fs-meta.h"
#include "handlers.h"
#include "macro.h"
#include "supervisor/child.h"
#include "supervisor/args.h"
#include "supervisor/dispatch.h"
#include "supervisor/notif.h"
#include "supervisor/supervisor.h"
#include "syscall-util.h"

#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 1
#endif

void cow_virtual_of(struct cow *c, const char *real, char *out, size_t size)
{
	const char *rel = cow_rel_to(c->upper, real);
	if (rel)
		snprintf(out, size, "%s%s%s", c->lower, *rel ? "/" : "", rel);
	else
		snprintf(out, size, "%s", real);
}

/* The directory a relative name starts from: the trapped task's working directory, or the one
 * its descriptor @dirfd names. */
static int base_of(struct supervisor *sv, const struct seccomp_notif *req, int dirfd, char *out,
		   size_t size)
{
	char real[PATH_MAX];
	ssize_t k = proc_fd_path((pid_t)req->pid, dirfd, real, sizeof(real));

	if (k < 0) /* answered either way: never left waiting */
		return k == -ENAMETOOLONG ? (int)k : dirfd != AT_FDCWD ? -EBADF : -ENOENT;
	if (!notif_id_valid(sv->listener, req->id))
		return NOTIF_GONE;
	if (real[0] != '/')
		return NOTIF_NOT_MINE; /* a descriptor of no directory (a pipe, a socket) */
	cow_virtual_of(sv->cow, real, out, size);
	return 0;
}

/* N for "/proc/self/fd/N", "/proc/thread-self/fd/N" or "/dev/fd/N" (alone or followed by
 * "/..."), the caller's own descriptor, which the supervisor would take for its own; else -1. */
static int own_fd_of(const char *path, const char **rest)
{
	static const char *const prefixes[] = { "/proc/self/fd/", "/proc/thread-self/fd/",
						"/dev/fd/" };
	for (size_t i = 0; i < ELEMENTSOF(prefixes); i++) {
		size_t k = strlen(prefixes[i]);
		char *end;
		if (strncmp(path, prefixes[i], k) != 0 || path[k] < '0' || path[k] > '9')
			continue;
		errno = 0;
		long v = strtol(path + k, &end, 10);
		if ((*end && *end != '/') || errno || v > INT_MAX)
			return -1;
		*rest = end;
		return (int)v;
	}
	return -1;
}

/* Whether @abs may reach the workdir: beneath it as it reads, or holding a ".." (a symlink
 * inside is read here, never a symlink outside: cow_resolve). */
static int may_reach(struct cow *c, const char *abs)
{
	if (cow_rel_to(c->lower, abs))
		return 1;
	for (const char *p = strstr(abs, ".."); p; p = strstr(p + 2, ".."))
		if ((p == abs || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
			return 1;
	return 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The last component of @path as the kernel tells it apart (struct cow_res's last). */
static int last_of(const char *path)
{
	size_t n = strlen(path), b;

	while (n > 0 && path[n - 1] == '/')
		n--;
	if (n == 0)
		return 3;
	for (b = n; b > 0 && path[b - 1] != '/';)
		b--;
	if (n - b == 1 && path[b] == '.')
		return 1;
	return n - b == 2 && path[b] == '.' && path[b + 1] == '.' ? 2 : 0;
}

int cow_resolve_arg(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		    uint64_t addr, int follow, int empty_ok, struct cow_res *res)
{
	char path[PATH_MAX], base[PATH_MAX], abs[2 * PATH_MAX + 2];

	res->last = res->magic = 0;
	if (!addr) /* statx(fd, NULL, AT_EMPTY_PATH) (6.11+): the descriptor's */
		return empty_ok ? NOTIF_NOT_MINE : -EFAULT;
	/* Most names are absolute and elsewhere: a look without the ID_VALID check decides
	 * those (its only outcome is "not the workdir's", whose answer is the kernel's or
	 * another handler's, which reads the name again itself). */
	const char *rest = NULL;
	int peeked = notif_mem_peek(req, addr, path, 256) == 0 && memchr(path, '\0', 256);
	res->last = peeked ? last_of(path) : 0;
	if (peeked && path[0] == '/' && own_fd_of(path, &rest) < 0 && !may_reach(sv->cow, path))
		return NOTIF_NOT_MINE;
	/* Else the look is made a checked read: the notification still pending proves it came
	 * from the trapped task (what notif_mem_read checks after its read). */
	int r = 0;
	if (!peeked)
		r = child_read_path(sv, req, addr, path, sizeof(path));
	else if (!notif_id_valid(sv->listener, req->id))
		r = NOTIF_GONE;
	if (r < 0)
		return r;
	if (!path[0])
		return empty_ok ? NOTIF_NOT_MINE : -ENOENT;
	res->last = last_of(path);
	int own = own_fd_of(path, &rest);
	if (own >= 0) {
		/* "/proc/self/fd/N" and its spellings (glibc's fchmodat(AT_SYMLINK_NOFOLLOW)
		 * chmods through one): the file the caller's descriptor N names, with what
		 * follows it. */
		if ((r = base_of(sv, req, own, base, sizeof(base))) != 0)
			return r;
		snprintf(abs, sizeof(abs), "%s%s", base, rest);
		if (!*rest)
			follow = 0; /* the magic link names the file itself, a symlink too */
	} else if (path[0] == '/')
		snprintf(abs, sizeof(abs), "%s", path);
	else {
		if ((r = base_of(sv, req, dirfd, base, sizeof(base))) != 0)
			return r;
		snprintf(abs, sizeof(abs), "%s/%s", base, path);
	}
	if (!may_reach(sv->cow, abs))
		return NOTIF_NOT_MINE;
	r = cow_resolve(sv->cow, abs, follow, res);
	res->last = last_of(path);
	res->magic = own >= 0 && !*rest;
	if (r == 0 && res->inside && cow_held(sv))
		return NOTIF_HOLD;
	if (r == -EXDEV)
		return -EACCES; /* leaves the workdir through a symlink made in the run */
	if (r == 0 && !res->inside)
		return NOTIF_NOT_MINE;
	return r;
}

/* The umask a create at @rel is made with: the child's, none beneath a default ACL. */
static int create_mask(struct supervisor *sv, const struct seccomp_notif *req, const char *rel,
		       mode_t *ret)
{
	int r = sandbox_umask(sv, req, ret);
	if (r == 0 && *ret && cow_parent_has_default_acl(sv->cow, rel)) /* no mask: no getxattr */
		*ret = 0;
	return r;
}

/* ---- open -------------------------------------------------------------------------------- */

static int cow_open_call(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
			 uint64_t addr, uint64_t flags, mode_t mode, uint64_t resolve,
			 struct seccomp_notif_resp *resp)
{
	struct cow *c = sv->cow;
	struct cow_res res;
	int excl = (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL);
	int r = cow_resolve_arg(sv, req, dirfd, addr, !(flags & O_NOFOLLOW) && !excl, 0, &res);

	if (r != 0)
		return r;
	if (resolve)
		return -EXDEV; /* openat2's resolve flags are not followed under the workdir */
	if ((flags & __O_TMPFILE) == __O_TMPFILE)
		return -EOPNOTSUPP;
	int acc = (int)(flags & O_ACCMODE);
	int write = !(flags & O_PATH) && (acc != O_RDONLY || (flags & O_TRUNC));
	struct cow_node *n = &res.n;
	int fd;
	if (n->layer == COW_NONE) {
		mode_t um;
		if (!(flags & O_CREAT))
			return -ENOENT;
		if (res.trailing)
			return -EISDIR;
		if ((r = create_mask(sv, req, res.rel, &um)) < 0)
			return r;
		if ((fd = cow_create(c, res.rel, &res.n, (int)flags, mode & ~um & 07777)) < 0)
			return fd;
	} else {
		if (excl)
			return -EEXIST;
		if (S_ISLNK(n->st.st_mode) && !(flags & O_PATH))
			return -ELOOP; /* O_NOFOLLOW on a symlink */
		if (S_ISDIR(n->st.st_mode) && write)
			return -EISDIR;
		if ((flags & O_DIRECTORY) && !S_ISDIR(n->st.st_mode))
			return -ENOTDIR;
		if ((flags & O_PATH) && n->layer == COW_LOWER) {
			/* CONTINUE: an O_PATH descriptor reads and writes nothing (a change of
			 * metadata through it is trapped and made in the branch: resolve_arg takes
			 * /proc/self/fd/N for the file it names), and Landlock does not restrict
			 * O_PATH opens, so whatever the name reads by then, the call gives the
			 * caller nothing it could not open itself. */
			return notif_answer_continue(resp);
		}
		if (cow_is_special(n->st.st_mode)) {
			/* A FIFO, socket or device node: the kernel opens it, under Landlock's
			 * read-only grant of the workdir (no name under it can be opened for
			 * writing by the kernel, whatever it reads by then). */
			return notif_answer_continue(resp);
		}
		if (write && n->layer == COW_LOWER) {
			if ((r = cow_copy_up_off_loop(sv, req, res.rel, (flags & O_TRUNC) != 0)) <
			    0)
				return r;
		} else if (write && (r = cow_touch_node(c, res.rel, n)) < 0)
			return r;

		uint64_t oflags = flags & ~(uint64_t)(O_CREAT | O_EXCL | O_CLOEXEC);
		if (flags & O_PATH) {
			/* A branch entry: the kernel installs no O_PATH file (ADDFD takes only
			 * ordinary ones), so the caller gets it open for reading, which the
			 * branch's file allows it anyway. A symlink has no such file. */
			if (S_ISLNK(n->st.st_mode))
				return -EOPNOTSUPP; /* what glibc's chmod of a symlink says */
			oflags = O_RDONLY | (flags & O_DIRECTORY) | O_NONBLOCK;
		}
		fd = cow_layer_open(c, write ? COW_UPPER : n->layer, res.rel, (int)oflags);
		if (fd < 0)
			return fd;
	}
	r = notif_addfd_answer(sv->listener, req, &fd, (flags & O_CLOEXEC) != 0);
	safe_close(fd);
	return r;
}

int cow_open_nr(struct supervisor *sv, const struct seccomp_notif *req,
		struct seccomp_notif_resp *resp)
{
	struct path_args pa;
	int r = path_args_decode(&req->data, &pa);

	if (r < 0)
		return r;
	if (pa.flags_in_mem) { /* openat2 */
		struct open_how how = { 0 };
		if (pa.mem_size < sizeof(how))
			return -EINVAL;
		if ((r = notif_mem_read(sv->listener, req, pa.mem, &how, sizeof(how))) < 0)
			return r;
		path_args_set_how(&pa, how.flags, how.mode, how.resolve);
	}
	return cow_open_call(sv, req, pa.dirfd, pa.path, pa.flags, (mode_t)pa.mode, pa.resolve,
			     resp);
}

/* ---- stat, access, readlink -------------------------------------------------------------- */

int cow_stat(struct supervisor *sv, const struct seccomp_notif *req,
	     struct seccomp_notif_resp *resp)
{
	struct cow_res res;
	struct path_args pa;
	int r = path_args_decode(&req->data, &pa);

	if (r < 0)
		return r;
	r = cow_resolve_arg(sv, req, pa.dirfd, pa.path, pa.follow, pa.empty_ok, &res);
	if (r != 0)
		return r;
	if (res.n.layer == COW_NONE)
		return -ENOENT;
	if (pa.call->nr == SYS_statx) {
		struct statx stx;
		if ((r = cow_layer_statx(sv->cow, res.n.layer, res.rel,
					 (int)pa.flags & AT_STATX_SYNC_TYPE, (unsigned)pa.mask,
					 &stx)) < 0)
			return r;
		r = notif_mem_write(sv->listener, req, pa.buf, &stx, sizeof(stx));
	} else {
		struct stat st;
		if ((r = cow_layer_stat(sv->cow, res.n.layer, res.rel, &st)) < 0)
			return r;
		r = notif_mem_write(sv->listener, req, pa.buf, &st, sizeof(st));
	}
	if (r < 0)
		return r;
	notif_answer_value(resp, 0);
	return 0;
}

int cow_access(struct supervisor *sv, const struct seccomp_notif *req,
	       struct seccomp_notif_resp *resp)
{
	struct cow_res res;
	struct path_args pa;
	int r = path_args_decode(&req->data, &pa);

	if (r < 0)
		return r;
	r = cow_resolve_arg(sv, req, pa.dirfd, pa.path, pa.follow, pa.empty_ok, &res);
	if (r != 0)
		return r;
	if (res.n.layer == COW_NONE)
		return -ENOENT;
	if ((r = cow_layer_access(sv->cow, res.n.layer, res.rel, (int)pa.mode,
				  (int)pa.flags & AT_EACCESS)) < 0)
		return r;
	notif_answer_value(resp, 0);
	return 0;
}

int cow_readlink(struct supervisor *sv, const struct seccomp_notif *req,
		 struct seccomp_notif_resp *resp)
{
	struct cow_res res;
	struct path_args pa;
	char target[PATH_MAX];

	int r = path_args_decode(&req->data, &pa);
	if (r < 0)
		return r;
	uint64_t buf = pa.buf;
	size_t size = (size_t)pa.size;
	r = cow_resolve_arg(sv, req, pa.dirfd, pa.path, pa.follow, pa.empty_ok, &res);
	if (r != 0)
		return r;
	if (res.n.layer == COW_NONE && !res.magic)
		return -ENOENT;
	if (!res.magic && !S_ISLNK(res.n.st.st_mode))
		return -EINVAL;
	if ((int)size <= 0)
		return -EINVAL;
	ssize_t k;
	if (res.magic) /* /proc/self/fd/N: the descriptor's file by its name in the workdir */
		k = snprintf(target, sizeof(target), "%s%s%s%s", sv->cow->lower,
			     *res.rel ? "/" : "", res.rel,
			     res.n.layer == COW_NONE && !ends_with(res.rel, " (deleted)")
				     ? " (deleted)"
				     : "");
	else if ((k = cow_layer_readlink(sv->cow, res.n.layer, res.rel, target, sizeof(target))) <
		 0)
		return (int)k;
	k = MIN((size_t)k, MIN(size, sizeof(target) - 1)); /* no NUL, as the kernel's */
	if ((r = notif_mem_write(sv->listener, req, buf, target, (size_t)k)) < 0)
		return r;
	notif_answer_value(resp, k);
	return 0;
}

/* ---- getdents ---------------------------------------------------------------------------- */

struct list_ctx {
	struct dent *v;
	size_t n, cap;
	int r;
};

static int list_add(struct list_ctx *l, const char *name, unsigned char type, uint64_t ino)
{
	if (l->n == l->cap) {
		struct dent *nv = realloc(l->v, (l->cap = l->cap ? 2 * l->cap : 64) * sizeof(*nv));
		if (!nv)
			return l->r = -ENOMEM;
		l->v = nv;
	}
	if (!(l->v[l->n].name = strdup(name)))
		return l->r = -ENOMEM;
	l->v[l->n].type = type;
	l->v[l->n++].ino = ino;
	return 0;
}

static void dents_free_all(void *p, size_t n)
{
	struct dent *v = p;
	for (size_t i = 0; v && i < n; i++)
		free(v[i].name);
	free(v);
}

static int list_cb(const char *name, unsigned char type, uint64_t ino, void *arg)
{
	return list_add(arg, name, type, ino) < 0;
}

int cow_getdents(struct supervisor *sv, const struct seccomp_notif *req,
		 struct seccomp_notif_resp *resp)
{
	struct cow *c = sv->cow;
	char real[PATH_MAX], virt[PATH_MAX];
	size_t count = MIN((size_t)(uint32_t)req->data.args[2], (size_t)(1 << 20));

	if (proc_fd_path((pid_t)req->pid, (int)req->data.args[0], real, sizeof(real)) <= 0)
		return NOTIF_NOT_MINE;
	cow_virtual_of(c, real, virt, sizeof(virt));
	const char *rel = cow_rel_to(c->lower, virt);
	if (!rel)
		return NOTIF_NOT_MINE;
	_cleanup_close_ int fd = notif_get_fd(sv->listener, req, (int)req->data.args[0]);
	if (fd < 0)
		return fd;
	/* The descriptor the child holds now is the one named above (or the answer is for
	 * another directory it holds, which it may list as well). */
	char again[PATH_MAX];
	struct stat st;
	if (fd_real_path(fd, again, sizeof(again)) <= 0 || strcmp(again, real) != 0 ||
	    fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode))
		return NOTIF_NOT_MINE;
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || (fl & O_PATH))
		return -EBADF;
	struct cow_node n;
	struct list_ctx l = { 0 };
	int r = cow_lookup(c, rel, &n);
	if (r == 0 && n.layer == COW_NONE)
		r = -ENOENT; /* a directory deleted in the run, still open: empty */
	if (r == -ENOENT) {
		notif_answer_value(resp, 0);
		return 0;
	}
	if (r < 0)
		return r;
	/* The listing made for the first call of a directory's reading is reused by the next
	 * ones while the branch has not changed (else each call would list it all again). */
	off_t pos = lseek(fd, 0, SEEK_CUR);
	struct cow_listing *cache = &c->listing;
	if (pos <= 0 || !cache->v || cache->gen != c->gen || !cache->rel ||
	    strcmp(cache->rel, rel) != 0) {
		list_add(&l, ".", DT_DIR, (uint64_t)n.st.st_ino);
		list_add(&l, "..", DT_DIR, 1);
		if (l.r == 0)
			r = cow_list(c, rel, list_cb, &l);
		char *krel = r == 0 && l.r == 0 ? strdup(rel) : NULL;
		if (!krel) {
			dents_free_all(l.v, l.n);
			return r < 0 ? r : l.r < 0 ? l.r : -ENOMEM;
		}
		if (cache->v)
			dents_free_all(cache->v, cache->n);
		free(cache->rel);
		*cache = (struct cow_listing){ krel, c->gen, l.v, l.n };
		c->listing_free = dents_free_all;
	}
	int64_t got = getdents_answer(sv->listener, req, fd, count, req->data.nr != SYS_getdents64,
				      cache->v, cache->n);
	if (got < 0)
		return (int)got;
	notif_answer_value(resp, got);
	return 0;
}

/* ---- changes ----------------------------------------------------------------------------- */

int cow_mkdir_call(struct supervisor *sv, const struct seccomp_notif *req,
		   struct seccomp_notif_resp *resp)
{
	struct cow_res res;
	struct path_args pa;
	mode_t um;

	int r = path_args_decode(&req->data, &pa);
	if (r < 0)
		return r;
	r = cow_resolve_arg(sv, req, pa.dirfd, pa.path, pa.follow, pa.empty_ok, &res);
	if (r != 0)
		return r == -ENOTDIR && res.trailing ? -EEXIST : r;
	if (res.n.layer != COW_NONE)
		return -EEXIST;
	if ((r = create_mask(sv, req, res.rel, &um)) < 0)
		return r;
	mode_t want = (mode_t)pa.mode & ~um & 07777;
	if ((r = cow_mkdir(sv->cow, res.rel, want)) < 0)
		return r;
	notif_answer_value(resp, 0);
	return 0;
}

int cow_mknod_call(struct supervisor *sv, const struct seccomp_notif *req,
		   struct seccomp_notif_resp *resp)
{
	struct cow_res res;
	struct path_args pa;
	mode_t um;

	int r = path_args_decode(&req->data, &pa);
	if (r < 0)
		return r;
	mode_t mode = (mode_t)pa.mode;
	r = cow_resolve_arg(sv, req, pa.dirfd, pa.path, pa.follow, pa.empty_ok, &res);
	if (r != 0)
		return r;
	if (res.n.layer != COW_NONE)
		return -EEXIST;
	if ((mode & S_IFMT) && !S_ISREG(mode)) {
		/* A FIFO, socket or device node: the kernel's, under Landlock, which grants
		 * the workdir no right to make one (EACCES). */
		return notif_answer_continue(resp);
	}
	if ((r = create_mask(sv, req, res.rel, &um)) < 0 ||
	    (r = cow_mknod(sv->cow, res.rel, &res.n, mode & ~um & 07777)) < 0)
		return r;
	notif_answer_value(resp, 0);
	return 0;
}

int cow_remove_call(struct supervisor *sv, const struct seccomp_notif *req,
		    struct seccomp_notif_resp *resp)
{
	struct cow_res res;
	struct path_args pa;

	int r = path_args_decode(&req->data, &pa);
	if (r < 0)
		return r;
	int dir = pa.dir;
	r = cow_resolve_arg(sv, req, pa.dirfd, pa.path, pa.follow, pa.empty_ok, &res);
	if (r != 0)
		return r;
	/* A name ending in "." or "..", or "/": never the directory it reaches (the kernel's
	 * answers). */
	static const int rmdir_err[] = { 0, -EINVAL, -ENOTEMPTY, -EBUSY };
	if (res.last)
		return dir ? rmdir_err[res.last] : -EISDIR;
	if (!dir && res.trailing)
		return res.n.layer == COW_NONE ? -ENOENT : -EISDIR;
	if ((r = cow_remove(sv->cow, res.rel, dir)) < 0)
		return r;
	notif_answer_value(resp, 0);
	return 0;
}

int cow_rename_call(struct supervisor *sv, const struct seccomp_notif *req,
		    struct seccomp_notif_resp *resp)
{
	struct cow_res from, to;
	struct path_args pa;

	int r1 = path_args_decode(&req->data, &pa);
	if (r1 < 0)
		return r1;
	int link = pa.call->family == PATH_LINK;
	unsigned flags = link ? 0 : (unsigned)pa.flags; /* RENAME_*; linkat's are AT_* */
	r1 = cow_resolve_arg(sv, req, pa.dirfd, pa.path, pa.follow, pa.empty_ok, &from);
	if (r1 < 0 && r1 != NOTIF_NOT_MINE)
		return r1;
	int r2 = cow_resolve_arg(sv, req, pa.dirfd2, pa.path2, 0, 0, &to);
	if (r2 < 0 && r2 != NOTIF_NOT_MINE)
		return r2;
	if (r1 == NOTIF_NOT_MINE && r2 == NOTIF_NOT_MINE)
		return NOTIF_NOT_MINE;
	/* A name ending in "." or "..", or "/" (the kernel's answers, before anything else,
	 * wherever the name lies). */
	if (!link && from.last)
		return -EBUSY;
	if (to.last)
		return link || (flags & RENAME_NOREPLACE) ? -EEXIST : -EBUSY;
	if (r1 == NOTIF_NOT_MINE || r2 == NOTIF_NOT_MINE)
		return -EXDEV; /* one end outside the workdir */
	if (flags & ~(unsigned)RENAME_NOREPLACE)
		return -EINVAL; /* RENAME_EXCHANGE, RENAME_WHITEOUT: not under the workdir */
	struct cow *c = sv->cow;
	int r;
	if (!link) {
		/* A large workdir file the move would copy (itself, or one beneath a directory)
		 * is copied up in place first, off the loop; the call is asked again then. */
		char big[PATH_MAX];
		if ((r = cow_rename_check(c, from.rel, to.rel, flags)) < 0)
			return r; /* nothing copied for a move that cannot be made */
		if (r == 0 && ((r = cow_large_lower(c, from.rel, big, sizeof(big))) < 0 ||
			       (r == 1 && (r = cow_copy_up_off_loop(sv, req, big, 0)) < 0)))
			return r;
		r = cow_rename(c, from.rel, to.rel, flags);
	} else {
		if (from.n.layer == COW_NONE)
			return -ENOENT;
		if (to.n.layer != COW_NONE)
			return -EEXIST;
		if (S_ISDIR(from.n.st.st_mode))
			return -EPERM;
		if (cow_is_special(from.n.st.st_mode))
			return -EXDEV;
		if ((r = cow_copy_up_off_loop(sv, req, from.rel, 0)) < 0)
			return r;
		r = cow_link(c, from.rel, to.rel);
	}
	if (r < 0)
		return r;
	notif_answer_value(resp, 0);
	return 0;
}

int cow_symlink_call(struct supervisor *sv, const struct seccomp_notif *req,
		     struct seccomp_notif_resp *resp)
{
	struct cow_res res;
	struct path_args pa;
	char target[PATH_MAX];

	int r = path_args_decode(&req->data, &pa);
	if (r < 0)
		return r;
	r = cow_resolve_arg(sv, req, pa.dirfd, pa.path, pa.follow, pa.empty_ok, &res);
	if (r != 0)
		return r;
	if ((r = child_read_path(sv, req, pa.target, target, sizeof(target))) < 0)
		return r;
	if (!target[0])
		return -ENOENT;
	if (res.n.layer != COW_NONE)
		return -EEXIST;
	if ((r = cow_symlink(sv->cow, target, res.rel, &res.n)) < 0)
		return r;
	notif_answer_value(resp, 0);
	return 0;
}

static int fd_target(struct supervisor *sv, const struct seccomp_notif *req, int fd,
		     struct cow_res *res);

/* @real, a path the kernel gives, as an entry of the workdir in @res (looked up).
 * NOTIF_NOT_MINE: not beneath the workdir; 0; NOTIF_HOLD (cow_held); -errno. */
static int res_of_real(struct supervisor *sv, const char *real, struct cow_res *res)
{
	struct cow *c = sv->cow;
	const char *rel = cow_rel_to(c->lower, real);

	if (!rel)
		return NOTIF_NOT_MINE;
	if (cow_held(sv))
		return NOTIF_HOLD;
	memset(res, 0, sizeof(*res));
	res->inside = 1;
	snprintf(res->rel, sizeof(res->rel), "%s", rel);
	return cow_lookup(c, res->rel, &res->n);
}

/* A name outside the workdir as it reads, for a call Landlock does not cover (metadata): the
 * file it reaches, opened as the child would (symlinks followed, magic links not).
 * NOTIF_NOT_MINE: not a file of the workdir; 0: @res set to the workdir's file it reaches;
 * -EACCES: a magic link of /proc (cwd, root, another process's) the supervisor cannot follow as
 * the child. */
int cow_outside_target(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		       uint64_t addr, int follow, int copy, struct cow_res *res)
{
	char path[PATH_MAX], real[PATH_MAX];
	int r = child_read_path(sv, req, addr, path, sizeof(path));

	if (r < 0)
		return r;
	if (!path[0]) /* AT_EMPTY_PATH: the descriptor's own file (copied up with @copy) */
		return copy ? fd_target(sv, req, dirfd, res) : cow_fd_entry(sv, req, dirfd, res);
	_cleanup_close_ int fd = child_path_open(sv, req, dirfd, path, 0, !follow);
	if (fd == -ELOOP)
		return -EACCES; /* a magic link (however spelled) or a loop: not followed here */
	if (fd < 0 || fd_real_path(fd, real, sizeof(real)) <= 0)
		return NOTIF_NOT_MINE; /* the kernel's answer (ENOENT, ...) */
	r = res_of_real(sv, real, res);
	return r != 0 ? r : res->n.layer == COW_NONE ? -ENOENT : 0;
}

/* The entry a metadata call changes: resolved, copied up. NOTIF_NOT_MINE: not the workdir's;
 * 0: @res set; META_SPECIAL: @res set, a kernel object. */
#define META_SPECIAL 2
static int meta_target(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		       uint64_t addr, int follow, int empty_ok, struct cow_res *res,
		       struct seccomp_notif_resp *resp)
{
	int r = cow_resolve_arg(sv, req, dirfd, addr, follow, empty_ok, res);
	if (r == NOTIF_NOT_MINE && addr)
		r = cow_outside_target(sv, req, dirfd, addr, follow, 1, res);
	if (r != 0)
		return r;
	if (res->n.layer == COW_NONE)
		return -ENOENT;
	/* A kernel object: its metadata is changed on the object itself (special_obj), not in
	 * the branch; never left to the kernel, which would read the name again. */
	if (cow_is_special(res->n.st.st_mode))
		return META_SPECIAL;
	return cow_copy_up_off_loop(sv, req, res->rel, 0);
}

/* Descriptor @fd of the caller, when it is a workdir file's (its entry in @res): 0;
 * NOTIF_NOT_MINE when it is not one. */
int cow_fd_entry(struct supervisor *sv, const struct seccomp_notif *req, int fd,
		 struct cow_res *res)
{
	char real[PATH_MAX];

	/* Elsewhere, or the branch's own file: the kernel's. A descriptor the supervisor may not
	 * look at (a task that made itself non-dumpable, to a supervisor without
	 * CAP_SYS_PTRACE) may be a workdir file's: refused. */
	ssize_t k = proc_fd_path((pid_t)req->pid, fd, real, sizeof(real));
	if (k == -EACCES || k == -EPERM)
		return -EPERM;
	if (k <= 0)
		return NOTIF_NOT_MINE;
	int r = res_of_real(sv, real, res);
	if (r == NOTIF_HOLD || r == NOTIF_NOT_MINE)
		return r;
	/* A workdir file (its name is under the workdir, where the branch never lies) that the
	 * merged view no longer shows there: deleted or renamed in the run, or by the host. It
	 * has no copy in the branch to change instead, and the kernel would change the
	 * workdir's own: refused. */
	if (r < 0 || res->n.layer == COW_NONE)
		return -EPERM;
	/* A symlink's descriptor (O_PATH): the kernel's EBADF; never followed. */
	if (cow_is_special(res->n.st.st_mode) || S_ISLNK(res->n.st.st_mode))
		return NOTIF_NOT_MINE;
	/* The file the name holds now must be the descriptor's: the workdir's own, or its copy
	 * in the branch; not another made at that name since (the descriptor's file was renamed
	 * away, or the host replaced it). */
	char self[64];
	struct stat st;
	if (fd == AT_FDCWD) /* "" with AT_EMPTY_PATH: the working directory */
		snprintf(self, sizeof(self), "/proc/%u/cwd", req->pid);
	else
		snprintf(self, sizeof(self), "/proc/%u/fd/%d", req->pid, fd);
	if (stat(self, &st) < 0)
		return -EBADF; /* gone meanwhile (its number may name another file by then) */
	if (res->n.layer == COW_LOWER
		    ? st.st_ino != res->n.st.st_ino || st.st_dev != res->n.st.st_dev
		    : !cow_copy_of(sv->cow, res->rel, &st))
		return -EPERM;
	return 0;
}

/* fchmod, fchown, futimens: a descriptor of a workdir file, copied up. NOTIF_NOT_MINE: not
 * one; 0: @res set. */
static int fd_target(struct supervisor *sv, const struct seccomp_notif *req, int fd,
		     struct cow_res *res)
{
	int r = cow_fd_entry(sv, req, fd, res);
	return r != 0 ? r : cow_copy_up_off_loop(sv, req, res->rel, 0);
}

/* A change to a file's inode attributes (file_setattr, the ioctls of COW_INODE_IOCTLS: flags,
 * version...; extended attributes are cow-xattr.c's): not staged in the
 * branch, so refused for a file of the workdir (EOPNOTSUPP, what a filesystem without them
 * says) rather than made on the workdir's own file, and for a descriptor of the branch's own
 * files (made or copied in the run). Elsewhere handlers/fs-meta-attr.c's. */
int cow_attr(struct supervisor *sv, const struct seccomp_notif *req,
	     struct seccomp_notif_resp *resp)
{
	const __u64 *a = req->data.args;
	struct cow_res res;
	int r, fd = -1, dirfd = AT_FDCWD, follow = 1, empty_ok = 0;
	uint64_t path = 0;

	switch (req->data.nr) {
	case SYS_ioctl: {
		static const uint32_t inode_ioctls[] = { COW_INODE_IOCTLS };
		size_t i = 0;
		while (i < ELEMENTSOF(inode_ioctls) && inode_ioctls[i] != (uint32_t)a[1])
			i++;
		if (i == ELEMENTSOF(inode_ioctls))
			return NOTIF_NOT_MINE; /* not a change of the inode (trapped otherwise) */
		fd = (int)a[0];
		if (fd < 0)
			return NOTIF_NOT_MINE; /* the kernel's EBADF */
		break;
	}
	case SYS_file_setattr: {
		char name[2];
		struct path_args pa;
		if ((r = path_args_decode(&req->data, &pa)) < 0)
			return r;
		dirfd = pa.dirfd, path = pa.path, follow = pa.follow, empty_ok = pa.empty_ok;
		if (empty_ok && path && notif_mem_read(sv->listener, req, path, name, 1) == 0 &&
		    !name[0])
			fd = dirfd; /* "" with AT_EMPTY_PATH: the descriptor's own file */
		break;
	}
	default:
		return NOTIF_NOT_MINE;
	}
	if (fd >= 0)
		r = cow_fd_entry(sv, req, fd, &res);
	else if ((r = cow_resolve_arg(sv, req, dirfd, path, follow, empty_ok, &res)) ==
			 NOTIF_NOT_MINE &&
		 path)
		r = cow_outside_target(sv, req, dirfd, path, follow, 0, &res);
	else if (r == NOTIF_NOT_MINE && empty_ok) /* AT_EMPTY_PATH: the descriptor's own file */
		r = cow_fd_entry(sv, req, fd = dirfd, &res);
	/* A descriptor of the branch's own file: refused too (what it would set is not staged,
	 * and an immutable or append-only file would keep the branch from being removed). */
	char real[PATH_MAX];
	if (r == NOTIF_NOT_MINE && fd >= 0 &&
	    proc_fd_path((pid_t)req->pid, fd, real, sizeof(real)) > 0 &&
	    cow_rel_to(sv->cow->upper, real))
		return -EOPNOTSUPP;
	if (r < 0)
		return r;
	if (res.n.layer == COW_NONE)
		return -ENOENT;
	if (cow_is_special(res.n.st.st_mode))
		return NOTIF_NOT_MINE; /* a kernel object's: fs-meta-attr.c's, on its object */
	return -EOPNOTSUPP;
}

/* The answer to a change the engine made (0: the call's own success), or its -errno. */
static int answer_change(struct seccomp_notif_resp *resp, int r)
{
	if (r < 0)
		return r;
	notif_answer_value(resp, 0);
	return 0;
}

/* A workdir's kernel object resolved in @res (meta_target's META_SPECIAL), whose mode, owner and
 * times are its own (a FIFO holds no content to stage): an O_PATH descriptor of it, made with
 * the supervisor's rights where they stand for the caller's (fs_meta_creds). Still the object
 * resolved (the host, or a commit of another sandbox, may have replaced the entry meanwhile),
 * else -EPERM. */
static int special_obj(struct supervisor *sv, const struct seccomp_notif *req,
		       const struct cow_res *res)
{
	int r = fs_meta_creds(sv, req);

	if (r != 1)
		return r;
	return cow_lower_object(sv->cow, res->rel, &res->n.st);
}

static int chmod_special(struct supervisor *sv, const struct seccomp_notif *req,
			 const struct cow_res *res, mode_t mode, struct seccomp_notif_resp *resp)
{
	char self[64];
	_cleanup_close_ int obj = special_obj(sv, req, res);

	if (obj < 0)
		return obj;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", obj);
	return notif_answer_libc(resp, chmod(self, mode));
}

static int chown_special(struct supervisor *sv, const struct seccomp_notif *req,
			 const struct cow_res *res, uint32_t uid, uint32_t gid,
			 struct seccomp_notif_resp *resp)
{
	int r;

	/* In a user namespace of the sandbox's, the ids are that namespace's. */
	if (sv->meta.userns && ((r = fs_meta_map_id(req, "uid_map", uid, &uid)) < 0 ||
				(r = fs_meta_map_id(req, "gid_map", gid, &gid)) < 0))
		return r;
	_cleanup_close_ int obj = special_obj(sv, req, res);
	if (obj < 0)
		return obj;
	return notif_answer_libc(resp, fchownat(obj, "", uid, gid, AT_EMPTY_PATH));
}

/* chmod, fchmodat, fchmodat2 by name. */
static int meta_chmod_named(struct supervisor *sv, const struct seccomp_notif *req,
			    const struct path_args *pa, struct seccomp_notif_resp *resp)
{
	struct cow_res res;
	int r;

	if ((int)pa->flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL; /* the kernel's answer */
	r = meta_target(sv, req, pa->dirfd, pa->path, pa->follow, pa->empty_ok, &res, resp);
	if (r == META_SPECIAL)
		return chmod_special(sv, req, &res, (mode_t)pa->mode, resp);
	if (r != 0)
		return r;
	if (S_ISLNK(res.n.st.st_mode))
		return -EOPNOTSUPP; /* never followed here: a symlink's mode is not changed */
	return answer_change(resp, cow_chmod(sv->cow, res.rel, (mode_t)pa->mode));
}

/* chown (followed), lchown, fchownat by name. */
static int meta_chown_named(struct supervisor *sv, const struct seccomp_notif *req,
			    const struct path_args *pa, struct seccomp_notif_resp *resp)
{
	struct cow_res res;
	int r;

	r = meta_target(sv, req, pa->dirfd, pa->path, pa->follow, pa->empty_ok, &res, resp);
	if (r == META_SPECIAL)
		return chown_special(sv, req, &res, pa->uid, pa->gid, resp);
	if (r != 0)
		return r;
	return answer_change(resp, cow_chown(sv->cow, res.rel, (uid_t)pa->uid, (gid_t)pa->gid));
}

/* The times of utimensat, utime, utimes, futimesat, from the caller, in @ts. */
static int meta_read_times(struct supervisor *sv, const struct seccomp_notif *req,
			   const struct path_args *pa, struct timespec ts[2])
{
	int r;

	if (pa->call->times == PATH_TIMES_TIMESPEC)
		return notif_mem_read(sv->listener, req, pa->buf, ts, 2 * sizeof(ts[0]));
	if (pa->call->times == PATH_TIMES_UTIMBUF) {
		struct utimbuf u;
		if ((r = notif_mem_read(sv->listener, req, pa->buf, &u, sizeof(u))) < 0)
			return r;
		ts[0] = (struct timespec){ u.actime, 0 };
		ts[1] = (struct timespec){ u.modtime, 0 };
		return 0;
	}
	struct timeval tv[2];
	if ((r = notif_mem_read(sv->listener, req, pa->buf, tv, sizeof(tv))) < 0)
		return r;
	for (int i = 0; i < 2; i++)
		ts[i] = (struct timespec){ tv[i].tv_sec, tv[i].tv_usec * 1000 };
	return 0;
}

static int meta_times_call(struct supervisor *sv, const struct seccomp_notif *req,
			   const struct path_args *pa, struct seccomp_notif_resp *resp)
{
	struct timespec ts[2];
	struct cow_res res;
	int has_ts = pa->buf != 0, fl = (int)pa->flags, r;

	if (has_ts && (r = meta_read_times(sv, req, pa, ts)) < 0)
		return r;
	if (pa->call->null_path_fd && !pa->path) {
		/* futimens (and futimesat with no name): the descriptor's file; no flag goes
		 * with it (the kernel's EINVAL). */
		if (fl)
			return -EINVAL;
		if ((r = pa->dirfd < 0 ? NOTIF_NOT_MINE : fd_target(sv, req, pa->dirfd, &res)) != 0)
			return r;
	} else if ((r = meta_target(sv, req, pa->dirfd, pa->path, pa->follow, pa->empty_ok, &res,
				    resp)) == META_SPECIAL) {
		_cleanup_close_ int obj = special_obj(sv, req, &res); /* a kernel object */
		if (obj < 0)
			return obj;
		return notif_answer_libc(resp,
					 utimensat(obj, "", has_ts ? ts : NULL, AT_EMPTY_PATH));
	} else if (r != 0)
		return r;
	return answer_change(resp, cow_utimens(sv->cow, res.rel, has_ts ? ts : NULL));
}

int cow_meta(struct supervisor *sv, const struct seccomp_notif *req,
	     struct seccomp_notif_resp *resp)
{
	struct cow_res res;
	struct path_args pa;
	int r = path_args_decode(&req->data, &pa);

	if (r < 0)
		return r;
	int is_chmod = pa.call->family == PATH_CHMOD;
	if (pa.by_fd) { /* fchmod, fchown */
		/* (a negative descriptor is the kernel's EBADF, read from no memory) */
		r = pa.fd < 0 ? NOTIF_NOT_MINE : fd_target(sv, req, pa.fd, &res);
		if (r == 0 && is_chmod)
			r = answer_change(resp, cow_chmod(sv->cow, res.rel, (mode_t)pa.mode));
		else if (r == 0)
			r = answer_change(
				resp, cow_chown(sv->cow, res.rel, (uid_t)pa.uid, (gid_t)pa.gid));
		return r;
	}
	if (is_chmod)
		return meta_chmod_named(sv, req, &pa, resp);
	if (pa.call->family == PATH_CHOWN)
		return meta_chown_named(sv, req, &pa, resp);
	return meta_times_call(sv, req, &pa, resp);
}

int cow_truncate_call(struct supervisor *sv, const struct seccomp_notif *req,
		      struct seccomp_notif_resp *resp)
{
	struct cow_res res;
	struct path_args pa;

	int r = path_args_decode(&req->data, &pa);
	if (r < 0)
		return r;
	int64_t len = (int64_t)pa.length;
	r = cow_resolve_arg(sv, req, pa.dirfd, pa.path, pa.follow, pa.empty_ok, &res);
	if (r != 0)
		return r;
	if (len < 0)
		return -EINVAL;
	if (res.n.layer == COW_NONE)
		return -ENOENT;
	if (S_ISDIR(res.n.st.st_mode))
		return -EISDIR;
	if (!S_ISREG(res.n.st.st_mode))
		return -EINVAL;
	if ((r = cow_copy_up_off_loop(sv, req, res.rel, len == 0)) < 0 ||
	    (r = cow_truncate(sv->cow, res.rel, len)) < 0)
		return r;
	notif_answer_value(resp, 0);
	return 0;
}

/* ---- dispatch ---------------------------------------------------------------------------- */

int cow_quota_call(struct supervisor *sv, const struct seccomp_notif *req,
		   struct seccomp_notif_resp *resp)
{
	/* Without max_disk nothing is charged: a write is the plain handler's. */
	return sv->cow->max_disk ? cow_quota(sv, req, resp) : NOTIF_NOT_MINE;
}

int handle_cow_no_aio(struct supervisor *sv, const struct seccomp_notif *req,
		      struct seccomp_notif_resp *resp)
{
	/* Under max_disk: Linux AIO writes (io_submit) would grow branch files unseen; programs
	 * fall back to ordinary writes on ENOSYS. */
	return -ENOSYS;
}

int handle_outside_workdir(struct supervisor *sv, const struct seccomp_notif *req,
			   struct seccomp_notif_resp *resp)
{
	/* CONTINUE: a name outside the workdir of a call that reads (stat, access, readlink,
	 * getxattr, listxattr), enters (chdir, exec) or reports (getcwd), trapped only because
	 * the workdir's names are served here. Whatever it reads by the time the kernel looks
	 * again, Landlock grants the workdir no write, so the kernel changes nothing there, and
	 * reads and exec are Landlock's to allow. The calls that change metadata are never
	 * answered here: elsewhere they are handlers/fs-meta.c's. A write through a descriptor
	 * of no branch file (max_disk) reads no memory to decide: the descriptor's rights were
	 * Landlock's at its open. */
	return notif_answer_continue(resp);
}
