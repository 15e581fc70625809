/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * judge: the kernel's denials for the log (judge.h). The access each path call needs is
 * Landlock's (security/landlock/fs.c): an open needs READ_FILE or READ_DIR, WRITE_FILE, and
 * TRUNCATE with O_TRUNC of an existing regular file, on the file; exec READ_FILE and EXECUTE on
 * the file; truncate TRUNCATE on the file; a create the MAKE_* right of its type on the
 * directory it is made in (an O_CREAT open also the open's rights there); a removal the
 * REMOVE_* right on its directory; a rename or link between two directories REFER on both
 * (EXDEV when only that is missing; EACCES first). A rule grants its access on the inode it was
 * added on and beneath it, so a call is refused when, for some access it needs, no rule on the
 * object or one of the directories above it (walked by "..", mounts crossed as the kernel
 * does) grants it. Not modelled: the check that a file moved between directories gains no
 * right (Landlock's EXDEV for it is not logged), the interpreter of a script or of an ELF
 * file, and the calls the kernel refuses before Landlock looks (no such file, EEXIST...), for
 * which nothing is logged. A named UNIX socket's bind needs MAKE_SOCK on its directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/landlock.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "events.h"
#include "fd-util.h"
#include "judge.h"
#include "landlock-compat.h"
#include "macro.h"
#include "path-util.h"
#include "args.h"
#include "child.h"
#include "supervisor.h"

#define READ_BITS                                                                                  \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define CHAIN_MAX 128 /* directories above an object: deeper is not judged */

uint64_t judge_open_access(uint64_t flags, int is_dir, int exists)
{
	int acc = (int)(flags & O_ACCMODE);
	uint64_t a = 0;

	/* O_PATH opens nothing Landlock checks; O_TMPFILE makes no name (left out). */
	if ((flags & O_PATH) || (flags & O_TMPFILE) == O_TMPFILE || acc == O_ACCMODE)
		return 0;
	if (!exists && !(flags & O_CREAT))
		return 0; /* ENOENT */
	if (exists && (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
		return 0;     /* EEXIST */
	if (exists && is_dir) /* a directory opens for reading only (else EISDIR) */
		return acc == O_RDONLY && !(flags & O_CREAT) ? LANDLOCK_ACCESS_FS_READ_DIR : 0;
	if (flags & O_DIRECTORY)
		return 0; /* ENOTDIR, or an O_CREAT the kernel refuses */
	if (acc == O_RDONLY || acc == O_RDWR)
		a |= LANDLOCK_ACCESS_FS_READ_FILE;
	if (acc == O_WRONLY || acc == O_RDWR)
		a |= LANDLOCK_ACCESS_FS_WRITE_FILE;
	if (exists && (flags & O_TRUNC))
		a |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (!exists)
		a |= LANDLOCK_ACCESS_FS_MAKE_REG;
	return a;
}

uint64_t judge_make_access(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR:
		return LANDLOCK_ACCESS_FS_MAKE_DIR;
	case S_IFLNK:
		return LANDLOCK_ACCESS_FS_MAKE_SYM;
	case S_IFIFO:
		return LANDLOCK_ACCESS_FS_MAKE_FIFO;
	case S_IFSOCK:
		return LANDLOCK_ACCESS_FS_MAKE_SOCK;
	case S_IFCHR:
		return LANDLOCK_ACCESS_FS_MAKE_CHAR;
	case S_IFBLK:
		return LANDLOCK_ACCESS_FS_MAKE_BLOCK;
	default:
		return LANDLOCK_ACCESS_FS_MAKE_REG;
	}
}

uint64_t judge_remove_access(mode_t mode)
{
	return S_ISDIR(mode) ? LANDLOCK_ACCESS_FS_REMOVE_DIR : LANDLOCK_ACCESS_FS_REMOVE_FILE;
}

uint64_t judge_missing(const struct plan_ll *ll, const struct file_id *chain, size_t n,
		       uint64_t access)
{
	/* REFER is denied whether the ruleset handles it or not (Landlock's "initially denied"
	 * right): without it no file changes directory. */
	uint64_t want = access & (ll->handled | LANDLOCK_ACCESS_FS_REFER), granted = 0;

	for (size_t i = 0; want & ~granted && i < ll->n; i++)
		for (size_t k = 0; k < n; k++)
			if (ll->rules[i].dev == chain[k].dev && ll->rules[i].ino == chain[k].ino)
				granted |= ll->rules[i].access;
	return want & ~granted;
}

void judge_texts(const struct plan_ll *ll, const char *real, const char *dir, uint64_t missing,
		 char *reason, size_t reason_size, char *hint, size_t hint_size)
{
	for (size_t i = 0; ll->denied && ll->denied[i]; i++)
		if (path_is_beneath(real, ll->denied[i])) {
			const char *as = ll->denied_as_written[i];
			snprintf(reason, reason_size, "fs_denied covers %s", as);
			snprintf(hint, hint_size, "remove --fs-deny %s", as);
			return;
		}
	int read = !(missing & ~(uint64_t)READ_BITS);
	/* A process's directory under /proc is another one in the next run: the grant that
	 * reaches it is /proc's (served by the supervisor). */
	if (strncmp(dir, "/proc/", 6) == 0 && dir[6] >= '0' && dir[6] <= '9')
		dir = "/proc";
	snprintf(reason, reason_size, "no %s grant covers %s", read ? "read" : "write", dir);
	snprintf(hint, hint_size, "add %s %s", read ? "-r" : "-w", dir);
}

void judge_open_text(uint64_t flags, char *buf, size_t size)
{
	static const struct {
		uint64_t flag;
		const char *name;
	} names[] = {
		{ O_CREAT, "O_CREAT" },		{ O_EXCL, "O_EXCL" },
		{ O_TRUNC, "O_TRUNC" },		{ O_APPEND, "O_APPEND" },
		{ O_DIRECTORY, "O_DIRECTORY" }, { O_NOFOLLOW, "O_NOFOLLOW" },
	};
	int acc = (int)(flags & O_ACCMODE);
	size_t off = (size_t)snprintf(buf, size, "%s",
				      acc == O_RDONLY	? "O_RDONLY"
				      : acc == O_WRONLY ? "O_WRONLY"
							: "O_RDWR");

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && off < size; i++)
		if (flags & names[i].flag)
			off += (size_t)snprintf(buf + off, size - off, "|%s", names[i].name);
}

/* ---- the object, as the child reaches it ------------------------------------------------ */

/* A path call's object: the file (or directory) the name reaches, or, for a name that does
 * not exist yet, the directory it would be made in. */
struct obj {
	int exists;
	mode_t mode;			    /* its type, when it exists */
	char real[PATH_MAX + NAME_MAX + 2]; /* its real path (a new one: its directory's + name) */
	char dir[PATH_MAX];		    /* the real path of its directory */
	struct file_id ids[CHAIN_MAX + 1];  /* the object itself when it exists, then its
					     * directory and each one above, to the root */
	size_t n;
	size_t parent_at; /* where its directory is in ids */
};

/* Append the identities of @dfd (a directory) and of each directory above it, to the root,
 * from ids[@at]. The number in all, or 0 (fail: judge nothing) when it cannot be walked. */
static size_t walk_up(int dfd, struct file_id *ids, size_t at, size_t max)
{
	_cleanup_close_ int fd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
	size_t n = at;

	while (fd >= 0) {
		struct stat st;
		if (fstat(fd, &st) < 0)
			return 0;
		/* The root is its own parent. */
		if (n > at && ids[n - 1].dev == st.st_dev && ids[n - 1].ino == st.st_ino)
			return n;
		if (n == max)
			return 0;
		ids[n++] = (struct file_id){ .dev = st.st_dev, .ino = st.st_ino };
		int up = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		fd = up;
	}
	return 0;
}

/* The chains of the directories judged lately, by identity: most opens are in a few
 * directories, and the walk to the root is most of a judgement's calls. A directory renamed
 * beneath another keeps its old chain here until its entry is taken: the judgement is a
 * diagnosis (judge.h), and a rename of a directory in a sandbox being diagnosed is rare. Shared
 * by the threads that answer calls (the loop, the workdir's copy-up thread): locked. */
#define CACHE_SLOTS 64
#define CACHE_DEPTH 32 /* deeper chains are walked each time */

struct judge_cache {
	pthread_mutex_t lock;
	struct {
		size_t n; /* 0: empty */
		struct file_id chain[CACHE_DEPTH];
	} slot[CACHE_SLOTS];
};

static size_t slot_of(const struct file_id *id)
{
	return (size_t)((id->ino * 0x9E3779B97F4A7C15ULL) ^ id->dev) % CACHE_SLOTS;
}

static size_t cache_get(struct supervisor *sv, const struct file_id *dir, struct file_id *ids,
			size_t at, size_t max)
{
	struct judge_cache *c = sv->judge_cache;
	size_t n = 0;

	if (!c)
		return 0;
	pthread_mutex_lock(&c->lock);
	const __typeof__(c->slot[0]) *e = &c->slot[slot_of(dir)];
	if (e->n && e->chain[0].dev == dir->dev && e->chain[0].ino == dir->ino &&
	    at + e->n <= max) {
		memcpy(ids + at, e->chain, e->n * sizeof(*ids));
		n = at + e->n;
	}
	pthread_mutex_unlock(&c->lock);
	return n;
}

static void cache_put(struct supervisor *sv, const struct file_id *chain, size_t n)
{
	struct judge_cache *c = sv->judge_cache;

	if (!c || n == 0 || n > CACHE_DEPTH)
		return;
	pthread_mutex_lock(&c->lock);
	c->slot[slot_of(&chain[0])].n = n;
	memcpy(c->slot[slot_of(&chain[0])].chain, chain, n * sizeof(*chain));
	pthread_mutex_unlock(&c->lock);
}

int judge_cache_new(struct supervisor *sv)
{
	struct judge_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	sv->judge_cache = c;
	return 0;
}

void judge_cache_free(struct supervisor *sv)
{
	if (!sv->judge_cache)
		return;
	pthread_mutex_destroy(&sv->judge_cache->lock);
	free(sv->judge_cache);
	sv->judge_cache = NULL;
}

/* The chain of directory @dfd (or, with @dfd -1, of the one at @path) from ids[@at]:
 * walk_up's, through the cache. */
static size_t chain_of(struct supervisor *sv, int dfd, const char *path, struct file_id *ids,
		       size_t at, size_t max)
{
	struct stat st;

	if ((dfd >= 0 ? fstat(dfd, &st) : stat(path, &st)) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	struct file_id dir = { .dev = st.st_dev, .ino = st.st_ino };
	size_t n = cache_get(sv, &dir, ids, at, max);
	if (n)
		return n;
	_cleanup_close_ int own = dfd >= 0 ? -1 : open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	n = walk_up(dfd >= 0 ? dfd : own, ids, at, max);
	if (n)
		cache_put(sv, ids + at, n - at);
	return n;
}

/* A symlink into /proc/self resolved here (/etc/mtab's) reached the supervisor's own
 * /proc/<pid>: name the caller's directory instead, as the kernel resolves it for the caller. */
static void proc_own_to_caller(const struct seccomp_notif *req, char *real, size_t size)
{
	char own[32], rest[PATH_MAX];
	static pid_t self; /* the supervisor's pid: the same for all its threads */
	if (!self)
		self = getpid();
	int n = snprintf(own, sizeof(own), "/proc/%d", (int)self);

	if (strncmp(real, own, (size_t)n) != 0 || (real[n] != '/' && real[n] != '\0'))
		return;
	snprintf(rest, sizeof(rest), "%s", real + n);
	if (child_proc_path(req, 0, rest, real, size) < 0)
		snprintf(real, size, "/proc/self%s", rest);
}

static int obj_existing(struct supervisor *sv, const struct seccomp_notif *req, struct obj *o,
			int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0 || fd_real_path(fd, o->real, PATH_MAX) <= 0 || o->real[0] != '/')
		return -EINVAL; /* no path (a pipe, a socket): no rule of Landlock applies */
	proc_own_to_caller(req, o->real, sizeof(o->real));
	o->exists = 1;
	o->mode = st.st_mode;
	o->ids[0] = (struct file_id){ .dev = st.st_dev, .ino = st.st_ino };
	o->parent_at = 1;
	size_t len = strnlen(o->real, sizeof(o->dir) - 1); /* below PATH_MAX: fd_real_path's */
	memcpy(o->dir, o->real, len);
	o->dir[len] = '\0';
	char *slash = strrchr(o->dir, '/');
	if (slash == o->dir)
		slash[1] = '\0'; /* "/x" is in "/", and "/" in itself */
	else
		*slash = '\0';
	o->n = chain_of(sv, -1, o->dir, o->ids, 1, CHAIN_MAX + 1);
	return o->n ? 0 : -ENOENT;
}

/* @path does not exist: its directory (which the name's other components reach), from @base. */
static int obj_new(struct supervisor *sv, int base, int abs, char *path, struct obj *o)
{
	size_t len = strlen(path);

	while (len > 1 && path[len - 1] == '/')
		path[--len] = '\0';
	char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -EINVAL;
	char parent[PATH_MAX];
	if (!slash)
		snprintf(parent, sizeof(parent), ".");
	else
		snprintf(parent, sizeof(parent), "%.*s", slash == path ? 1 : (int)(slash - path),
			 path);
	_cleanup_close_ int pfd = child_path_at(base, parent, abs, 0, 0);
	if (pfd < 0)
		return pfd;
	if (fd_real_path(pfd, o->dir, sizeof(o->dir)) <= 0 || o->dir[0] != '/')
		return -EINVAL;
	snprintf(o->real, sizeof(o->real), "%s%s%s", o->dir, strcmp(o->dir, "/") ? "/" : "", name);
	o->exists = 0;
	o->parent_at = 0;
	o->n = chain_of(sv, pfd, NULL, o->ids, 0, CHAIN_MAX + 1);
	return o->n ? 0 : -ENOENT;
}

/* The name at @addr, read while the notification is valid, with "/proc/self" made the
 * caller's: 0, or -errno (-ENOENT for an empty name). */
static int obj_name(struct supervisor *sv, const struct seccomp_notif *req, uint64_t addr,
		    char *path, size_t size)
{
	int r = child_read_path(sv, req, addr, path, size);

	if (r < 0 || !path[0])
		return r < 0 ? r : -ENOENT;
	r = child_proc_self_name(req, path, size);
	return r < 0 ? r : 0;
}

/* The object @path reaches from @base (child_path_base), its last symlink followed with
 * @follow. @path (NULL: @base itself) may be cut. */
static int obj_at(struct supervisor *sv, const struct seccomp_notif *req, int base, char *path,
		  int abs, int follow, uint64_t resolve, struct obj *o)
{
	_cleanup_close_ int fd = child_path_at(base, path, abs, resolve, !follow);

	if (fd >= 0)
		return obj_existing(sv, req, o, fd);
	return fd == -ENOENT && path ? obj_new(sv, base, abs, path, o) : fd;
}

/* The object of the name at @addr, from @dirfd, its last symlink followed with @follow. */
static int obj_resolve(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		       uint64_t addr, int follow, uint64_t resolve, struct obj *o)
{
	char path[PATH_MAX];
	const char *p = path;
	int abs, r = obj_name(sv, req, addr, path, sizeof(path));

	if (r < 0)
		return r;
	_cleanup_close_ int base = child_path_base(sv, req, dirfd, &p, &abs);
	if (base < 0)
		return base;
	return obj_at(sv, req, base, (char *)p, abs, follow, resolve, o);
}

/* ---- the calls ---------------------------------------------------------------------------- */

/* Emit the judgement of a call on @real (@dir: where its grant would be): a denial of
 * @missing with @err, or, when nothing is missing, an allowed event where one is wanted. */
static void emit(struct supervisor *sv, const struct seccomp_notif *req, const char *real,
		 const char *dir, const char *access, uint64_t missing, int err)
{
	char reason[PATH_MAX + 64], hint[PATH_MAX + 64];
	struct event ev = {
		.nr = (int)req->data.nr,
		.category = EVENT_FILE,
		.pid = (pid_t)req->pid,
		.judged = 1,
		.path = real,
		.access = access,
	};

	if (missing) {
		judge_texts(&sv->plan->fs.ll, real, dir, missing, reason, sizeof(reason), hint,
			    sizeof(hint));
		ev.verdict = SANDLOCK_VERDICT_DENY;
		ev.error = err;
		ev.reason = reason;
		ev.hint = hint;
	} else {
		if (!events_wants(sv->events, SANDLOCK_VERDICT_ALLOW))
			return;
		ev.verdict = SANDLOCK_VERDICT_ALLOW;
	}
	events_emit(sv, &ev);
}

/* An open, taken before the answer (judge_answer) and judged after it (judge_after): the
 * child then runs on while its open is judged, since the judgement never changes the answer. */
static void judge_open(struct supervisor *sv, const struct seccomp_notif *req, struct path_args *pa,
		       struct judge_later *later)
{
	const uint64_t resolve_known =
		RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH;
	uint64_t flags = (uint32_t)pa->flags, resolve = 0;
	const char *p = later->path;

	if (pa->flags_in_mem) { /* openat2 */
		struct open_how how;
		if (pa->mem_size < sizeof(how) ||
		    notif_mem_read(sv->listener, req, pa->mem, &how, sizeof(how)) < 0 ||
		    (how.resolve & ~resolve_known))
			return;
		path_args_set_how(pa, how.flags, how.mode, how.resolve);
		flags = how.flags;
		resolve = how.resolve;
	}
	if ((flags & O_PATH) || obj_name(sv, req, pa->path, later->path, sizeof(later->path)) < 0)
		return;
	int base = child_path_base(sv, req, pa->dirfd, &p, &later->abs);
	if (base < 0)
		return;
	later->base = base;
	later->self = !p;
	if (p && p != later->path)
		memmove(later->path, p, strlen(p) + 1);
	later->flags = flags;
	later->resolve = resolve;
	later->follow = pa->follow;
}

void judge_after(struct supervisor *sv, const struct seccomp_notif *req, struct judge_later *later)
{
	_cleanup_close_ int base = later->base;
	uint64_t flags = later->flags;
	struct obj o;
	char text[128];

	later->base = -1;
	if (base < 0 || obj_at(sv, req, base, later->self ? NULL : later->path, later->abs,
			       later->follow, later->resolve, &o))
		return;
	if (o.exists && S_ISLNK(o.mode))
		return; /* O_NOFOLLOW: ELOOP */
	uint64_t access = judge_open_access(flags, S_ISDIR(o.mode), o.exists);
	if (o.exists && !S_ISREG(o.mode))
		access &= ~(uint64_t)LANDLOCK_ACCESS_FS_TRUNCATE; /* O_TRUNC truncates files only */
	if (!access)
		return;
	judge_open_text(flags, text, sizeof(text));
	/* A directory listed and a device node are granted themselves: the hint for /dev/tty
	 * is that file, not all of /dev. */
	int itself = o.exists && (S_ISDIR(o.mode) || S_ISCHR(o.mode) || S_ISBLK(o.mode));
	emit(sv, req, o.real, itself ? o.real : o.dir, text,
	     judge_missing(&sv->plan->fs.ll, o.ids, o.n, access), EACCES);
}

/* exec and truncate: on the file the name reaches. */
static void judge_file(struct supervisor *sv, const struct seccomp_notif *req,
		       const struct path_args *pa, uint64_t access, const char *text)
{
	struct obj o;

	if (obj_resolve(sv, req, pa->dirfd, pa->path, pa->follow, 0, &o) || !o.exists ||
	    !S_ISREG(o.mode))
		return;
	emit(sv, req, o.real, o.dir, text, judge_missing(&sv->plan->fs.ll, o.ids, o.n, access),
	     EACCES);
}

/* mkdir, mknod, symlink, unlink, rmdir: on the directory the name is made in or removed from. */
static void judge_entry(struct supervisor *sv, const struct seccomp_notif *req,
			const struct path_args *pa)
{
	enum path_family f = pa->call->family;
	int create = f != PATH_REMOVE;
	struct obj o;
	uint64_t access;
	const char *text;

	if (obj_resolve(sv, req, pa->dirfd, pa->path, 0, 0, &o) || o.exists == create)
		return; /* EEXIST, ENOENT: the kernel's before Landlock's */
	if (f == PATH_MKDIR) {
		access = LANDLOCK_ACCESS_FS_MAKE_DIR, text = "mkdir";
	} else if (f == PATH_MKNOD) {
		access = judge_make_access((mode_t)pa->mode), text = "mknod";
	} else if (f == PATH_SYMLINK) {
		access = LANDLOCK_ACCESS_FS_MAKE_SYM, text = "symlink";
	} else {
		if (!!pa->dir != !!S_ISDIR(o.mode))
			return; /* ENOTDIR, EISDIR */
		access = judge_remove_access(o.mode), text = pa->dir ? "rmdir" : "unlink";
	}
	emit(sv, req, o.real, o.dir, text,
	     judge_missing(&sv->plan->fs.ll, o.ids + o.parent_at, o.n - o.parent_at, access),
	     EACCES);
}

/* rename, link: the make (and for a rename the removes) on the directories, and REFER on both
 * when they differ. */
static void judge_move(struct supervisor *sv, const struct seccomp_notif *req,
		       const struct path_args *pa)
{
	const struct plan_ll *ll = &sv->plan->fs.ll;
	int link = pa->call->family == PATH_LINK;
	uint64_t flags = (uint32_t)pa->flags;
	struct obj from, to;

	if (obj_resolve(sv, req, pa->dirfd, pa->path, link && pa->follow, 0, &from) ||
	    !from.exists || obj_resolve(sv, req, pa->dirfd2, pa->path2, 0, 0, &to))
		return;
	if ((link || (flags & RENAME_NOREPLACE)) && to.exists)
		return; /* EEXIST */
	if ((!link && (flags & RENAME_EXCHANGE) && !to.exists) || (link && S_ISDIR(from.mode)))
		return; /* ENOENT, EPERM */
	const struct file_id *p1 = from.ids + from.parent_at, *p2 = to.ids + to.parent_at;
	size_t n1 = from.n - from.parent_at, n2 = to.n - to.parent_at;
	if (p1->dev != p2->dev)
		return; /* EXDEV: another filesystem, the kernel's before Landlock's */
	uint64_t req1 = 0, req2 = judge_make_access(from.mode);
	if (!link) {
		req1 |= judge_remove_access(from.mode);
		if (to.exists)
			req2 |= judge_remove_access(to.mode);
		if (flags & RENAME_EXCHANGE)
			req1 |= judge_make_access(to.mode);
	}
	const char *text = link ? "link" : "rename";
	if (p1->ino == p2->ino) { /* the same directory: no REFER */
		emit(sv, req, to.real, to.dir, text, judge_missing(ll, p2, n2, req1 | req2),
		     EACCES);
		return;
	}
	uint64_t m1 = judge_missing(ll, p1, n1, req1 | LANDLOCK_ACCESS_FS_REFER);
	uint64_t m2 = judge_missing(ll, p2, n2, req2 | LANDLOCK_ACCESS_FS_REFER);
	/* EACCES before EXDEV, as Landlock orders them. */
	int err = ((m1 | m2) & ~(uint64_t)LANDLOCK_ACCESS_FS_REFER) ? EACCES : EXDEV;
	if (m2 || !m1)
		emit(sv, req, to.real, to.dir, text, m2, err);
	if (m1 || !link)
		emit(sv, req, from.real, from.dir, text, m1, err);
}

/* bind of a named UNIX socket: MAKE_SOCK on the directory its name is made in, resolved from
 * the binder's working directory (and never followed: a name that exists is EADDRINUSE). */
static void judge_bind(struct supervisor *sv, const struct seccomp_notif *req)
{
	const size_t head = offsetof(struct sockaddr_un, sun_path);
	struct sockaddr_un un = { 0 };
	uint64_t len = req->data.args[2] & 0xffffffffu;
	char path[PATH_MAX];
	int domain = 0;
	struct obj o;

	if (len <= head + 1 || len > sizeof(un) ||
	    notif_mem_read(sv->listener, req, req->data.args[1], &un, len) < 0 ||
	    un.sun_family != AF_UNIX || !un.sun_path[0])
		return; /* abstract, unnamed, or what the kernel refuses before Landlock */
	_cleanup_close_ int sock = net_take_socket(sv, req, &domain);
	if (sock < 0 || domain != AF_UNIX)
		return;
	snprintf(path, sizeof(path), "%.*s", (int)(len - head), un.sun_path);
	const char *p = path;
	int abs;
	if (child_proc_self_name(req, path, sizeof(path)) < 0)
		return;
	_cleanup_close_ int base = child_path_base(sv, req, AT_FDCWD, &p, &abs);
	if (base < 0 || !p || obj_at(sv, req, base, (char *)p, abs, 0, 0, &o) || o.exists)
		return;
	emit(sv, req, o.real, o.dir, "make_sock",
	     judge_missing(&sv->plan->fs.ll, o.ids + o.parent_at, o.n - o.parent_at,
			   LANDLOCK_ACCESS_FS_MAKE_SOCK),
	     EACCES);
}

static void judge_continued(struct supervisor *sv, const struct seccomp_notif *req,
			    struct path_args *pa, struct judge_later *later)
{
	switch (pa->call->family) {
	case PATH_OPEN:
		judge_open(sv, req, pa, later);
		break;
	case PATH_EXEC:
		judge_file(sv, req, pa, LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE,
			   "exec");
		break;
	case PATH_TRUNCATE:
		judge_file(sv, req, pa, LANDLOCK_ACCESS_FS_TRUNCATE, "truncate");
		break;
	case PATH_MKDIR:
	case PATH_MKNOD:
	case PATH_SYMLINK:
	case PATH_REMOVE:
		judge_entry(sv, req, pa);
		break;
	case PATH_RENAME:
	case PATH_LINK:
		judge_move(sv, req, pa);
		break;
	default:
		break;
	}
}

/* The user's fs_denied entry (as written) that @real is or lies beneath, or that lies beneath
 * @real (a directory on the way to it), or NULL. */
static const char *denied_entry(const struct plan_ll *ll, const char *real)
{
	for (size_t i = 0; ll->denied && ll->denied[i]; i++)
		if (path_is_beneath(real, ll->denied[i]) || path_is_beneath(ll->denied[i], real))
			return ll->denied_as_written[i];
	return NULL;
}

/* What handlers/fs-write.c refused (EACCES) beneath a writable grant holding a denied path:
 * the name is the denied path, beneath it, or a directory on the way to it. The supervisor's
 * own answer, so not judged: told with the entry it protects. */
static void judge_refused(struct supervisor *sv, const struct seccomp_notif *req,
			  const struct path_args *pa)
{
	static const char *const texts[] = {
		[PATH_OPEN] = "open",	    [PATH_MKDIR] = "mkdir",	  [PATH_MKNOD] = "mknod",
		[PATH_REMOVE] = "unlink",   [PATH_RENAME] = "rename",	  [PATH_LINK] = "link",
		[PATH_SYMLINK] = "symlink", [PATH_TRUNCATE] = "truncate",
	};
	enum path_family f = pa->call->family;
	const char *text = (size_t)f < ELEMENTSOF(texts) ? texts[f] : NULL;
	struct obj o;
	char open_text[128], reason[PATH_MAX + 64], hint[PATH_MAX + 64];

	if (!text)
		return;
	if (f == PATH_OPEN && !pa->flags_in_mem) {
		judge_open_text((uint32_t)pa->flags, open_text, sizeof(open_text));
		text = open_text;
	} else if (f == PATH_REMOVE && pa->dir) {
		text = "rmdir";
	}
	int follow = f == PATH_OPEN || f == PATH_TRUNCATE ? pa->follow : 0;
	const char *entry = NULL;
	if (obj_resolve(sv, req, pa->dirfd, pa->path, follow, 0, &o) == 0)
		entry = denied_entry(&sv->plan->fs.ll, o.real);
	if (!entry && pa->path2 && obj_resolve(sv, req, pa->dirfd2, pa->path2, 0, 0, &o) == 0)
		entry = denied_entry(&sv->plan->fs.ll, o.real);
	if (!entry)
		return; /* refused for another reason: not told here */
	snprintf(reason, sizeof(reason), "fs_denied covers %s", entry);
	snprintf(hint, sizeof(hint), "remove --fs-deny %s", entry);
	struct event ev = {
		.nr = (int)req->data.nr,
		.category = EVENT_FILE,
		.pid = (pid_t)req->pid,
		.verdict = SANDLOCK_VERDICT_DENY,
		.error = EACCES,
		.path = o.real,
		.access = text,
		.reason = reason,
		.hint = hint,
	};
	events_emit(sv, &ev);
}

/* A metadata change refused by handlers/fs-meta.c (EACCES: outside every writable grant, or a
 * denied path), told with the grant it needs. The supervisor's own answer: not judged. */
static void judge_meta(struct supervisor *sv, const struct seccomp_notif *req,
		       const struct path_args *pa)
{
	static const char *const texts[] = {
		[PATH_CHMOD] = "chmod",		  [PATH_CHOWN] = "chown",
		[PATH_TIMES] = "utimes",	  [PATH_XATTR] = "setxattr",
		[PATH_FILEATTR] = "file_setattr",
	};
	struct obj o;
	char reason[PATH_MAX + 64], hint[PATH_MAX + 64];

	if (obj_resolve(sv, req, pa->dirfd, pa->path, pa->follow, 0, &o) || !o.exists)
		return;
	judge_texts(&sv->plan->fs.ll, o.real, o.dir, LANDLOCK_ACCESS_FS_WRITE_FILE, reason,
		    sizeof(reason), hint, sizeof(hint));
	struct event ev = {
		.nr = (int)req->data.nr,
		.category = EVENT_FILE,
		.pid = (pid_t)req->pid,
		.verdict = SANDLOCK_VERDICT_DENY,
		.error = EACCES,
		.path = o.real,
		.access = texts[pa->call->family],
		.reason = reason,
		.hint = hint,
	};
	events_emit(sv, &ev);
}

void judge_answer(struct supervisor *sv, const struct seccomp_notif *req,
		  const struct seccomp_notif_resp *resp, struct judge_later *later)
{
	struct path_args pa;
	int continued = resp->flags & SECCOMP_USER_NOTIF_FLAG_CONTINUE;

	if (!sv->plan || !sv->plan->fs.ll.active || (!continued && resp->error != -EACCES) ||
	    !(events_flags(sv->events) & SANDLOCK_EVENTS_DENIALS))
		return;
	if (req->data.nr == SYS_bind) {
		if (continued)
			judge_bind(sv, req);
		return;
	}
	if (path_args_decode(&req->data, &pa) < 0 || pa.by_fd)
		return;
	enum path_family f = pa.call->family;
	if (continued)
		judge_continued(sv, req, &pa, later);
	else if (f == PATH_CHMOD || f == PATH_CHOWN || f == PATH_TIMES || f == PATH_FILEATTR ||
		 (f == PATH_XATTR &&
		  (pa.call->xattr == PATH_XATTR_SET || pa.call->xattr == PATH_XATTR_REMOVE)))
		judge_meta(sv, req, &pa);
	else if (sv->plan->fs.write_roots)
		judge_refused(sv, req, &pa);
}

/* ---- the blocked syscalls ------------------------------------------------------------------ */

int judge_blocked(struct supervisor *sv, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp)
{
	const struct plan *plan = sv->plan;
	int nr = (int)req->data.nr;

	if (!plan || !plan->blocked || nr < 0 || nr >= SECCOMP_BLOCK_NR || !plan->blocked[nr].kind)
		return NOTIF_NOT_MINE;
	const struct seccomp_block *b = &plan->blocked[nr];
	char reason[128] = "blocked syscall", hint[128];
	const char *h = NULL;
	if (b->kind == SECCOMP_BLOCK_GROUP) {
		snprintf(hint, sizeof(hint), "add --extra-allow-syscall %s",
			 seccomp_groups[b->index].name);
		h = hint;
	} else if (b->kind == SECCOMP_BLOCK_EXTRA && plan->blocked_extra) {
		const char *name = plan->blocked_extra[b->index];
		snprintf(reason, sizeof(reason), "extra_deny_syscalls blocks %s", name);
		snprintf(hint, sizeof(hint), "remove --extra-deny-syscall %s", name);
		h = hint;
	}
	/* The filter denies it whole: the answer is the errno its rule would have given. */
	notif_answer_errno(resp, -(int)b->err);
	struct event ev = {
		.nr = nr,
		.category = EVENT_PROCESS,
		.pid = (pid_t)req->pid,
		.verdict = SANDLOCK_VERDICT_DENY,
		.error = b->err,
		.reason = reason,
		.hint = h,
	};
	events_emit(sv, &ev);
	return NOTIF_ANSWERED;
}
