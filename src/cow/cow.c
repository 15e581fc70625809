/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cow: the branch engine (cow.h). A lower entry is hidden by a whiteout mark on its path; an
 * upper directory at a whited-out path hides every lower entry beneath it (it replaced the
 * lower one: "opaque"). Each call is on the supervisor loop, one at a time, but cow_copy_run
 * (a worker's, on the files of one copy).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "cow.h"
#include "cow-internal.h"
#include "fd-util.h"
#include "macro.h"
#include "sha256.h"
#include "strv.h"

/* ---- marks ------------------------------------------------------------------------------- */

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

struct cow_mark *cow_mark_get(struct cow *c, const char *rel)
{
	if (!c->cap_marks)
		return NULL;
	for (size_t i = hash(rel) & (c->cap_marks - 1);; i = (i + 1) & (c->cap_marks - 1)) {
		if (!c->marks[i])
			return NULL;
		if (strcmp(c->marks[i]->path, rel) == 0)
			return c->marks[i];
	}
}

static void mark_insert(struct cow_mark **v, size_t cap, struct cow_mark *m)
{
	size_t i = hash(m->path) & (cap - 1);
	while (v[i])
		i = (i + 1) & (cap - 1);
	v[i] = m;
}

struct cow_mark *cow_mark_add(struct cow *c, const char *rel)
{
	struct cow_mark *m = cow_mark_get(c, rel);
	if (m)
		return m;
	if ((c->n_marks + 1) * 10 > c->cap_marks * 7) {
		size_t cap = c->cap_marks ? 2 * c->cap_marks : 256;
		struct cow_mark **v = calloc(cap, sizeof(*v));
		if (!v)
			return NULL;
		for (size_t i = 0; i < c->cap_marks; i++)
			if (c->marks[i])
				mark_insert(v, cap, c->marks[i]);
		free(c->marks);
		c->marks = v;
		c->cap_marks = cap;
	}
	if (!(m = calloc(1, sizeof(*m))) || !(m->path = strdup(rel))) {
		free(m);
		return NULL;
	}
	mark_insert(c->marks, c->cap_marks, m);
	c->n_marks++;
	return m;
}

static int whited_out(struct cow *c, const char *rel)
{
	struct cow_mark *m = cow_mark_get(c, rel);
	return m && m->whiteout;
}

/* Whether lower entry @rel is left out of listings: deleted, or an alias (cow_anchor_alias),
 * which a name the kernel resolves must still reach (a script's interpreter opens it). */
static int unlisted(struct cow *c, const char *rel)
{
	struct cow_mark *m = cow_mark_get(c, rel);
	return m && (m->whiteout || m->hidden);
}

/* ---- small helpers ----------------------------------------------------------------------- */

/* A path for the *at() calls: "" is the directory itself. */
static const char *at(const char *rel)
{
	return *rel ? rel : ".";
}

static void join(char *out, size_t size, const char *rel, const char *name)
{
	snprintf(out, size, "%s%s%s", rel, *rel ? "/" : "", name);
}

static enum cow_kind kind_of(mode_t m)
{
	return S_ISREG(m)   ? COW_KIND_FILE
	       : S_ISDIR(m) ? COW_KIND_DIR
	       : S_ISLNK(m) ? COW_KIND_SYMLINK
			    : COW_KIND_OTHER;
}

static void entry_clear(struct cow_entry *e)
{
	free(e->target);
	memset(e, 0, sizeof(*e));
}

/* The entry at @rel under @dirfd (absent: present 0). */
/* The entry at @rel under @dirfd; a file's digest only with @digest (its stat in *@ret_st). */
static int entry_read(int dirfd, const char *rel, struct cow_entry *e, int digest,
		      struct stat *ret_st)
{
	struct stat st;

	memset(e, 0, sizeof(*e));
	if (fstatat(dirfd, at(rel), &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	if (ret_st)
		*ret_st = st;
	e->present = 1;
	e->kind = kind_of(st.st_mode);
	e->mode = st.st_mode & 07777;
	if (e->kind == COW_KIND_FILE && !digest) {
		e->size = (uint64_t)st.st_size;
	} else if (e->kind == COW_KIND_FILE) {
		e->size = (uint64_t)st.st_size;
		_cleanup_close_ int fd = openat(dirfd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		int r = sha256_fd(fd, e->digest);
		if (r < 0)
			return r;
		e->has_digest = 1;
	} else if (e->kind == COW_KIND_SYMLINK) {
		char t[PATH_MAX];
		ssize_t k = readlinkat(dirfd, rel, t, sizeof(t) - 1);
		if (k < 0)
			return -errno;
		t[k] = '\0';
		if (!(e->target = strdup(t)))
			return -ENOMEM;
	}
	return 0;
}

/* Remove @name under @dirfd, a directory with everything beneath it. */
int cow_remove_tree(int dir, const char *name)
{
	if (unlinkat(dir, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	int r = 0;
	for (struct dirent *e; r == 0 && (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			r = cow_remove_tree(dirfd(d), e->d_name);
	closedir(d);
	if (r == 0 && unlinkat(dir, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		r = -errno;
	return r;
}

/* ---- open and close ---------------------------------------------------------------------- */

int cow_open(struct cow *c, const char *workdir, const char *storage, const char *name,
	     uint64_t max_disk, struct sandlock_error **reterr)
{
	struct stat st;

	memset(c, 0, sizeof(*c));
	c->lower_fd = c->upper_fd = c->lock_fd = c->journal_fd = -1;
	c->max_disk = max_disk;
	if (!(c->lower = realpath(workdir, NULL)))
		return error_set(reterr, -errno, "workdir: %s: %s", workdir, strerror(errno));
	c->lower_fd = open(c->lower, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (c->lower_fd < 0 || fstat(c->lower_fd, &st) < 0)
		return error_set(reterr, -errno, "workdir: %s: %s", workdir, strerror(errno));
	char root[64];
	if (!storage || !*storage) {
		int fd = cow_store_open(1);
		if (fd < 0 || cow_store_root(root, sizeof(root)) < 0)
			return error_set(reterr, fd < 0 ? fd : -ENAMETOOLONG,
					 "fs_storage: the store root %s/sandlock-%u: %s (set "
					 "fs_storage elsewhere)",
					 COW_STORE_PARENT, (unsigned)geteuid(),
					 fd == -EPERM ? "not a private directory of the user's"
						      : strerror(fd < 0 ? -fd : ENAMETOOLONG));
		close(fd);
		storage = root;
	}
	_cleanup_free_ char *real_storage = realpath(storage, NULL);
	if (!real_storage)
		return error_set(reterr, -errno, "fs_storage: %s: %s", storage, strerror(errno));
	if (path_is_beneath(real_storage, c->lower))
		return error_set(reterr, -EINVAL, "fs_storage: %s: inside the workdir %s", storage,
				 c->lower);
	/* What a killed run of this workdir left in it goes first. */
	cow_clean_stale(real_storage, c->lower_fd);
	if (asprintf(&c->dir, "%s/sandlock-%s-XXXXXX", real_storage,
		     name && *name ? name : "branch") < 0) {
		c->dir = NULL;
		return error_set(reterr, -ENOMEM, "out of memory");
	}
	if (!mkdtemp(c->dir))
		return error_set(reterr, -errno, "fs_storage: %s: %s", storage, strerror(errno));
	int lr = cow_lock_branch(c);
	if (lr < 0) {
		(void)cow_abort(c);
		return error_set(reterr, lr, "fs_storage: %s: %s", c->dir, strerror(-lr));
	}
	if (asprintf(&c->upper, "%s/upper", c->dir) < 0) {
		c->upper = NULL;
		return error_set(reterr, -ENOMEM, "out of memory");
	}
	if (mkdir(c->upper, 0700) < 0 || chmod(c->upper, st.st_mode & 07777) < 0 ||
	    (c->upper_fd = open(c->upper, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
		int r = -errno;
		(void)cow_abort(c);
		return error_set(reterr, r, "fs_storage: %s: %s", c->upper, strerror(-r));
	}
	cow_copy_dir_xattrs(c->lower_fd, "", c->upper_fd, ""); /* the workdir's default ACL */
	cow_note_copy(c, "", &st);
	cow_snapshot_dir(c, "");
	return 0;
}

void cow_done(struct cow *c)
{
	if (c->listing_free && c->listing.v)
		c->listing_free(c->listing.v, c->listing.n);
	free(c->listing.rel);
	memset(&c->listing, 0, sizeof(c->listing));
	if (c->lower_fd >= 0)
		cow_unanchor(c);
	for (size_t i = 0; i < c->cap_marks; i++)
		if (c->marks[i]) {
			free(c->marks[i]->path);
			strv_free(c->marks[i]->snap_names);
			free(c->marks[i]->snap_hash);
			entry_clear(&c->marks[i]->before);
			free(c->marks[i]);
		}
	free(c->marks);
	c->marks = NULL;
	c->n_marks = c->cap_marks = 0;
	free(c->charged);
	c->charged = NULL;
	c->n_charged = 0;
	cow_seal_free(c);
	c->lock_fd = safe_close(c->lock_fd);
	c->lower_fd = safe_close(c->lower_fd);
	c->upper_fd = safe_close(c->upper_fd);
	free(c->lower);
	free(c->dir);
	free(c->upper);
	c->lower = c->dir = c->upper = NULL;
}

/* ---- lookup ------------------------------------------------------------------------------ */

/* One step down: @rel (a path whose parent was looked up, its lower entries showing beneath it
 * with @lower_ok). */
static int step(struct cow *c, const char *rel, int lower_ok, struct cow_node *n)
{
	memset(n, 0, sizeof(*n));
	if (!*rel) { /* the workdir itself */
		if (fstat(c->lower_fd, &n->st) < 0)
			return -errno;
		n->layer = COW_LOWER;
		n->lower_beneath = 1;
		return 0;
	}
	int hidden = !lower_ok || whited_out(c, rel);
	if (fstatat(c->upper_fd, rel, &n->st, AT_SYMLINK_NOFOLLOW) == 0) {
		struct stat lst;
		n->layer = COW_UPPER;
		n->lower_beneath = S_ISDIR(n->st.st_mode) && !hidden &&
				   fstatat(c->lower_fd, rel, &lst, AT_SYMLINK_NOFOLLOW) == 0 &&
				   S_ISDIR(lst.st_mode);
		return 0;
	}
	if (errno != ENOENT && errno != ENOTDIR)
		return -errno;
	if (!hidden && fstatat(c->lower_fd, rel, &n->st, AT_SYMLINK_NOFOLLOW) == 0) {
		n->layer = COW_LOWER;
		n->lower_beneath = S_ISDIR(n->st.st_mode);
		return 0;
	}
	if (!hidden && errno != ENOENT && errno != ENOTDIR)
		return -errno;
	n->layer = COW_NONE;
	return 0;
}

int cow_lookup(struct cow *c, const char *rel, struct cow_node *n)
{
	char prefix[PATH_MAX];

	if (!*rel)
		return step(c, "", 1, n);
	/* Beneath the workdir, its own entry only needs to be a directory, which it is. */
	*n = (struct cow_node){ .layer = COW_LOWER, .st.st_mode = S_IFDIR, .lower_beneath = 1 };
	int r;
	if (strlen(rel) >= sizeof(prefix))
		return -ENAMETOOLONG;
	/* At each end of a component, @n is its parent's entry. */
	for (size_t j = 0;; j++) {
		if (rel[j] != '/' && rel[j] != '\0')
			continue;
		if (n->layer == COW_NONE)
			return -ENOENT;
		if (!S_ISDIR(n->st.st_mode))
			return -ENOTDIR;
		memcpy(prefix, rel, j);
		prefix[j] = '\0';
		r = step(c, prefix, n->lower_beneath, n);
		if (r < 0 || !rel[j])
			return r;
	}
}

/* ---- resolve ----------------------------------------------------------------------------- */

/* Drop the last component of @cur (an absolute canonical path). */
static void pop(char *cur)
{
	char *slash = strrchr(cur, '/');
	if (slash == cur)
		cur[1] = '\0';
	else if (slash)
		*slash = '\0';
}

int cow_resolve(struct cow *c, const char *abs, int follow, struct cow_res *res)
{
	char cur[PATH_MAX], rest[2 * PATH_MAX], next[2 * PATH_MAX];
	int links = 0, via_branch_link = 0;
	struct cow_node n = { 0 };
	int have = 0; /* @n is the entry of @cur (looked up one component at a time) */
	size_t alen = strlen(abs);

	memset(res, 0, sizeof(*res));
	if (alen >= sizeof(rest))
		return -ENAMETOOLONG;
	res->trailing = alen > 1 && abs[alen - 1] == '/';
	strcpy(rest, abs);
	strcpy(cur, "/");
	const char *p = rest;
	for (;;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *e = strchrnul(p, '/');
		size_t k = (size_t)(e - p);
		if (k > NAME_MAX)
			return -ENAMETOOLONG;
		if (k == 1 && p[0] == '.') {
			p = e;
			continue;
		}
		if (k == 2 && p[0] == '.' && p[1] == '.') {
			pop(cur);
			have = 0;
			p = e;
			continue;
		}
		if (strlen(cur) + 1 + k >= sizeof(cur))
			return -ENAMETOOLONG;
		if (strcmp(cur, "/"))
			strcat(cur, "/");
		strncat(cur, p, k);
		p = e;
		const char *rel = cow_rel_to(c->lower, cur);
		if (!rel) {
			have = 0;
			continue; /* outside the workdir: taken as it reads */
		}
		/* One step down from the entry of the parent when it is known, else from the
		 * workdir down (after a ".." or a symlink: which lower entries show depends on
		 * the whole way). */
		int r;
		if (have && *rel) {
			if (n.layer == COW_NONE)
				return -ENOENT;
			if (!S_ISDIR(n.st.st_mode))
				return -ENOTDIR;
			r = step(c, rel, n.lower_beneath, &n);
		} else
			r = cow_lookup(c, rel, &n);
		if (r < 0)
			return r;
		have = 1;
		while (*p == '/')
			p++;
		int last = !*p;
		if (n.layer == COW_NONE) {
			if (!last)
				return -ENOENT;
			break;
		}
		if (S_ISLNK(n.st.st_mode) && (!last || follow || res->trailing)) {
			char target[PATH_MAX];
			if (++links > 40)
				return -ELOOP;
			ssize_t t = readlinkat(n.layer == COW_UPPER ? c->upper_fd : c->lower_fd,
					       rel, target, sizeof(target) - 1);
			if (t < 0)
				return -errno;
			target[t] = '\0';
			via_branch_link |= n.layer == COW_UPPER;
			if (snprintf(next, sizeof(next), "%s/%s", target, p) >= (int)sizeof(next))
				return -ENAMETOOLONG;
			strcpy(rest, next);
			p = rest;
			if (target[0] == '/')
				strcpy(cur, "/");
			else
				pop(cur);
			have = 0;
			continue;
		}
		if (!last && !S_ISDIR(n.st.st_mode))
			return -ENOTDIR;
	}
	const char *rel = cow_rel_to(c->lower, cur);
	res->inside = rel != NULL;
	if (!res->inside)
		return via_branch_link ? -EXDEV : 0;
	snprintf(res->rel, sizeof(res->rel), "%s", rel);
	int r = 0;
	if (have)
		res->n = n;
	else
		r = cow_lookup(c, res->rel, &res->n);
	if (r < 0)
		return r;
	if (res->trailing && res->n.layer != COW_NONE && !S_ISDIR(res->n.st.st_mode))
		return -ENOTDIR;
	return 0;
}

/* ---- changes to the branch --------------------------------------------------------------- */

int cow_touch(struct cow *c, const char *rel)
{
	return cow_touch_node(c, rel, NULL);
}

int cow_touch_node(struct cow *c, const char *rel, const struct cow_node *known)
{
	struct cow_mark *m = cow_mark_add(c, rel);
	struct cow_node n;

	cow_changed(c);
	if (!m)
		return -ENOMEM;
	if (m->touched)
		return 0;
	int r = 0;
	if (known)
		n = *known;
	else
		r = cow_lookup(c, rel, &n);
	if (r == 0 && n.layer != COW_NONE) {
		m->lazy = n.layer == COW_LOWER && S_ISREG(n.st.st_mode);
		r = entry_read(n.layer == COW_UPPER ? c->upper_fd : c->lower_fd, rel, &m->before,
			       !m->lazy, &m->before_st);
	}
	if (r == -ENOENT || r == -ENOTDIR)
		r = 0;
	if (r == 0)
		m->touched = 1;
	return r;
}

void cow_note_copy(struct cow *c, const char *rel, const struct stat *from)
{
	struct cow_mark *m = cow_mark_add(c, rel);
	struct stat up;
	if (m && fstatat(c->upper_fd, *rel ? rel : ".", &up, AT_SYMLINK_NOFOLLOW) == 0)
		m->from_dev = from->st_dev, m->from_ino = from->st_ino, m->copy_ino = up.st_ino,
		m->gone_mode = 0;
}

void cow_uncopy(struct cow *c, const char *rel)
{
	struct stat st;

	if (!*rel || fstatat(c->upper_fd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	cow_changed(c);
	if (unlinkat(c->upper_fd, rel, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0)
		return;
	cow_uncharge_entry(c, &st);
	struct cow_mark *m = cow_mark_get(c, rel);
	if (m)
		m->from_dev = 0, m->from_ino = 0, m->snapped = 0, m->gone_mode = 0;
}

int cow_original(struct cow *c, const char *rel, struct stat *ret)
{
	struct cow_mark *m = cow_mark_get(c, rel);
	struct stat up;
	return m && m->from_ino && fstatat(c->upper_fd, rel, &up, AT_SYMLINK_NOFOLLOW) == 0 &&
	       up.st_ino == m->copy_ino &&
	       fstatat(c->lower_fd, rel, ret, AT_SYMLINK_NOFOLLOW) == 0 &&
	       ret->st_ino == m->from_ino && ret->st_dev == m->from_dev;
}

int cow_copy_of(struct cow *c, const char *rel, const struct stat *st)
{
	struct cow_mark *m = cow_mark_get(c, rel);
	struct stat up;
	return m && m->from_ino == st->st_ino && m->from_dev == st->st_dev &&
	       fstatat(c->upper_fd, rel, &up, AT_SYMLINK_NOFOLLOW) == 0 && up.st_ino == m->copy_ino;
}

int cow_parents_up(struct cow *c, const char *rel)
{
	cow_changed(c);
	char prefix[PATH_MAX];
	const char *slash = strrchr(rel, '/');
	size_t len = slash ? (size_t)(slash - rel) : 0;

	for (size_t i = 0; i < len;) {
		size_t j = i;
		while (j < len && rel[j] != '/')
			j++;
		memcpy(prefix, rel, j);
		prefix[j] = '\0';
		struct stat st;
		if (fstatat(c->upper_fd, prefix, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			if (!S_ISDIR(st.st_mode))
				return -ENOTDIR;
		} else {
			struct stat lst;
			if (fstatat(c->lower_fd, prefix, &lst, AT_SYMLINK_NOFOLLOW) < 0 ||
			    !S_ISDIR(lst.st_mode))
				return -ENOENT;
			int r = cow_charge(c, COW_DIR_COST);
			if (r < 0)
				return r;
			if (mkdirat(c->upper_fd, prefix, 0700) < 0) {
				r = -errno;
				(void)cow_charge(c, -COW_DIR_COST);
				if (r != -EEXIST)
					return r;
			}
			cow_note_copy(c, prefix, &lst);
			/* Its attributes too: a default ACL decides the modes of what is made in
			 * it. */
			cow_copy_dir_xattrs(c->lower_fd, prefix, c->upper_fd, prefix);
			(void)!fchmodat(c->upper_fd, prefix, lst.st_mode & 07777, 0);
			cow_snapshot_dir(c, prefix);
		}
		i = j + 1;
	}
	return 0;
}

int cow_mkdir(struct cow *c, const char *rel, mode_t mode)
{
	struct cow_node n;
	int r = cow_lookup(c, rel, &n);

	if (r < 0)
		return r;
	if (n.layer != COW_NONE)
		return -EEXIST;
	if ((r = cow_touch(c, rel)) < 0 || (r = cow_parents_up(c, rel)) < 0 ||
	    (r = cow_charge(c, COW_DIR_COST)) < 0)
		return r;
	if (mkdirat(c->upper_fd, rel, mode) < 0) {
		r = -errno;
		(void)cow_charge(c, -COW_DIR_COST);
		return r;
	}
	return cow_mode_exactly(c, -1, rel, mode);
}

struct count {
	size_t n;
};

static int count_cb(const char *name, unsigned char type, uint64_t ino, void *arg)
{
	((struct count *)arg)->n++;
	return 0;
}

/* Whether the lower entry at @rel shows through (the parents' lower entries do, no whiteout). */
static int lower_shows(struct cow *c, const char *rel)
{
	char parent[PATH_MAX];
	struct cow_node pn;
	struct stat st;
	const char *slash = strrchr(rel, '/');

	snprintf(parent, sizeof(parent), "%.*s", slash ? (int)(slash - rel) : 0, rel);
	return cow_lookup(c, parent, &pn) == 0 && pn.lower_beneath && !whited_out(c, rel) &&
	       fstatat(c->lower_fd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static int whiteout(struct cow *c, const char *rel)
{
	cow_changed(c);
	struct cow_mark *m = cow_mark_add(c, rel);
	if (!m)
		return -ENOMEM;
	m->whiteout = 1;
	/* Its directory as the run saw it (the branch's copy, the root's too) and as the
	 * workdir had it: whether the run could delete there (widen). */
	char parent[PATH_MAX];
	struct cow_node pn;
	struct stat ls;
	const char *slash = strrchr(rel, '/');
	snprintf(parent, sizeof(parent), "%.*s", slash ? (int)(slash - rel) : 0, rel);
	if (*parent ? cow_lookup(c, parent, &pn) == 0 : fstat(c->upper_fd, &pn.st) == 0)
		m->parent_seen = pn.st.st_mode & 07777;
	/* As the run found it: when it was copied into the branch (the host may have changed
	 * the workdir's since), else now. */
	struct cow_mark *pm = cow_mark_get(c, parent);
	if (pm && pm->snapped)
		m->parent_lower = pm->snap_mode, m->parent_dev = pm->from_dev,
		m->parent_ino = pm->from_ino;
	else if (fstatat(c->lower_fd, *parent ? parent : ".", &ls, AT_SYMLINK_NOFOLLOW) == 0)
		m->parent_lower = ls.st_mode & 07777, m->parent_dev = ls.st_dev,
		m->parent_ino = ls.st_ino;
	return 0;
}

/* The branch's entry at @m's path (@st, its lstat then) is gone: no longer a copy of anything.
 * A directory the run had given another mode keeps that mode for the commit (widen). */
static void copy_gone(struct cow_mark *m, const struct stat *st)
{
	if (m->snapped && S_ISDIR(st->st_mode) && (st->st_mode & 07777) != m->snap_mode)
		m->gone_mode = st->st_mode & 07777, m->gone_dev = m->from_dev,
		m->gone_ino = m->from_ino;
	m->from_dev = 0, m->from_ino = 0, m->snapped = 0;
}

int cow_remove(struct cow *c, const char *rel, int dir)
{
	struct cow_node n;
	int r = cow_lookup(c, rel, &n);

	if (r < 0)
		return r;
	if (n.layer == COW_NONE)
		return -ENOENT;
	if (!*rel)
		return -EBUSY;
	if (dir && !S_ISDIR(n.st.st_mode))
		return -ENOTDIR;
	if (!dir && S_ISDIR(n.st.st_mode))
		return -EISDIR;
	if (dir) {
		struct count k = { 0 };
		if ((r = cow_list(c, rel, count_cb, &k)) < 0)
			return r;
		if (k.n)
			return -ENOTEMPTY;
	}
	if ((r = cow_touch(c, rel)) < 0)
		return r;
	int shows = lower_shows(c, rel);
	if (n.layer == COW_UPPER) {
		if (unlinkat(c->upper_fd, rel, dir ? AT_REMOVEDIR : 0) < 0)
			return -errno;
		cow_uncharge_entry(c, &n.st);
		struct cow_mark *m = cow_mark_get(c, rel);
		if (m) /* no longer a copy of anything: a file made at the name next is not */
			copy_gone(m, &n.st);
	}
	return shows ? whiteout(c, rel) : 0;
}

/* Move @from (merged) to @to (absent, its parent in the upper layer): each entry touched first,
 * a directory made anew and filled, a file renamed within the upper layer or copied up. */
static int move_tree(struct cow *c, const char *from, const char *to);

struct move_ctx {
	struct cow *c;
	const char *from, *to;
	int r;
};

static int move_cb(const char *name, unsigned char type, uint64_t ino, void *arg)
{
	struct move_ctx *m = arg;
	char f[PATH_MAX], t[PATH_MAX];

	join(f, sizeof(f), m->from, name);
	join(t, sizeof(t), m->to, name);
	m->r = move_tree(m->c, f, t);
	return m->r;
}

static int move_tree(struct cow *c, const char *from, const char *to)
{
	struct cow_node n;
	int r = cow_lookup(c, from, &n);

	if (r == 0 && n.layer == COW_NONE)
		r = -ENOENT;
	if (r == 0)
		r = cow_touch(c, from);
	if (r == 0)
		r = cow_touch(c, to);
	if (r < 0)
		return r;
	int shows = lower_shows(c, from);
	if (S_ISDIR(n.st.st_mode)) {
		if ((r = cow_charge(c, COW_DIR_COST)) < 0)
			return r;
		if (mkdirat(c->upper_fd, to, 0700) < 0) {
			r = -errno;
			(void)cow_charge(c, -COW_DIR_COST);
			return r;
		}
		/* Its attributes go with it (a default ACL, user.*), from the layer holding it. */
		cow_copy_dir_xattrs(n.layer == COW_UPPER ? c->upper_fd : c->lower_fd, from,
				    c->upper_fd, to);
		struct move_ctx m = { c, from, to, 0 };
		/* Listed whole before the first move: the moves change the listing. */
		char **names = NULL;
		struct stat st = n.st;
		if ((r = cow_list(c, from, NULL, &names)) < 0)
			return r;
		for (size_t i = 0; names && names[i] && r == 0; i++)
			r = move_cb(names[i], 0, 0, &m);
		for (size_t i = 0; names && names[i]; i++)
			free(names[i]);
		free(names);
		if (r < 0)
			return r;
		(void)!fchmodat(c->upper_fd, to, st.st_mode & 07777, 0);
		if (n.layer == COW_UPPER) {
			if (unlinkat(c->upper_fd, from, AT_REMOVEDIR) < 0)
				return -errno;
			(void)cow_charge(c, -COW_DIR_COST);
		}
	} else if (n.layer == COW_UPPER) {
		if (renameat(c->upper_fd, from, c->upper_fd, to) < 0)
			return -errno;
	} else if ((r = cow_copy_entry(c, c->lower_fd, from, to, 0)) < 0)
		return r;
	struct cow_mark *fm = cow_mark_get(c, from);
	if (fm) /* what is at @from from now on is no copy of anything */
		copy_gone(fm, &n.st);
	return shows ? whiteout(c, from) : 0;
}

int cow_large_lower(struct cow *c, const char *rel, char *out, size_t size)
{
	struct cow_node n;
	int r = cow_lookup(c, rel, &n);

	if (r < 0 || n.layer == COW_NONE)
		return r == -ENOENT || r == -ENOTDIR ? 0 : r;
	if (n.layer == COW_LOWER && S_ISREG(n.st.st_mode) &&
	    (uint64_t)n.st.st_size > COW_COPY_INLINE_MAX)
		return snprintf(out, size, "%s", rel) < (int)size ? 1 : -ENAMETOOLONG;
	if (!S_ISDIR(n.st.st_mode))
		return 0;
	char **names = NULL;
	if ((r = cow_list(c, rel, NULL, &names)) < 0)
		return r;
	for (size_t i = 0; names && names[i] && r == 0; i++) {
		char sub[PATH_MAX];
		join(sub, sizeof(sub), rel, names[i]);
		r = cow_large_lower(c, sub, out, size);
	}
	for (size_t i = 0; names && names[i]; i++)
		free(names[i]);
	free(names);
	return r;
}

/* Whether the merged tree at @rel holds a kernel object (never moved: EXDEV). */
static int holds_special(struct cow *c, const char *rel);

struct special_ctx {
	struct cow *c;
	const char *rel;
	int found;
};

static int special_cb(const char *name, unsigned char type, uint64_t ino, void *arg)
{
	struct special_ctx *s = arg;
	char p[PATH_MAX];
	join(p, sizeof(p), s->rel, name);
	s->found = holds_special(s->c, p);
	return s->found ? 1 : 0;
}

static int holds_special(struct cow *c, const char *rel)
{
	struct cow_node n;
	if (cow_lookup(c, rel, &n) < 0 || n.layer == COW_NONE)
		return 0;
	if (S_ISDIR(n.st.st_mode)) {
		struct special_ctx s = { c, rel, 0 };
		(void)cow_list(c, rel, special_cb, &s);
		return s.found;
	}
	return !S_ISREG(n.st.st_mode) && !S_ISLNK(n.st.st_mode);
}

int cow_rename_check(struct cow *c, const char *from, const char *to, unsigned flags)
{
	struct cow_node nf, nt;
	int r = cow_lookup(c, from, &nf);

	if (r < 0)
		return r;
	if (nf.layer == COW_NONE)
		return -ENOENT;
	if ((r = cow_lookup(c, to, &nt)) < 0)
		return r;
	if (!*from || !*to)
		return -EBUSY;
	if (flags & ~1u /* RENAME_NOREPLACE */)
		return -EINVAL;
	if (strcmp(from, to) == 0)
		return 1;
	size_t fl = strlen(from);
	if (strncmp(to, from, fl) == 0 && to[fl] == '/')
		return -EINVAL;
	if (holds_special(c, from))
		return -EXDEV;
	if (nt.layer == COW_NONE)
		return 0;
	if (flags & 1u)
		return -EEXIST;
	int fdir = S_ISDIR(nf.st.st_mode), tdir = S_ISDIR(nt.st.st_mode);
	if (fdir && !tdir)
		return -ENOTDIR;
	if (!fdir && tdir)
		return -EISDIR;
	if (!S_ISREG(nt.st.st_mode) && !S_ISLNK(nt.st.st_mode) && !tdir)
		return -EXDEV;
	struct count k = { 0 };
	if (tdir && (r = cow_list(c, to, count_cb, &k)) < 0)
		return r;
	return k.n ? -ENOTEMPTY : 0;
}

int cow_rename(struct cow *c, const char *from, const char *to, unsigned flags)
{
	struct cow_node nt;
	int r = cow_rename_check(c, from, to, flags);

	if (r != 0)
		return r < 0 ? r : 0; /* 1: the same name, nothing to do */
	if ((r = cow_lookup(c, to, &nt)) < 0)
		return r;
	if (nt.layer != COW_NONE && (r = cow_remove(c, to, S_ISDIR(nt.st.st_mode))) < 0)
		return r;
	if ((r = cow_parents_up(c, to)) < 0)
		return r;
	return move_tree(c, from, to);
}

/* ---- listing ----------------------------------------------------------------------------- */

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in directory @rel under @dirfd (without "." and ".."), NULL-terminated. */
int cow_names_of(int dirfd, const char *rel, char ***ret, size_t *ret_n)
{
	int fd = openat(dirfd, at(rel), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char **v = NULL;
	size_t n = 0, cap = 0;

	*ret = NULL;
	*ret_n = 0;
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	int r = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (n + 2 > cap) {
			char **nv = realloc(v, (cap = cap ? 2 * cap : 32) * sizeof(*v));
			if (!nv) {
				r = -ENOMEM;
				break;
			}
			v = nv;
		}
		if (!(v[n] = strdup(e->d_name))) {
			r = -ENOMEM;
			break;
		}
		v[++n] = NULL;
	}
	closedir(d);
	if (r < 0) {
		for (size_t i = 0; i < n; i++)
			free(v[i]);
		free(v);
		return r;
	}
	if (n)
		qsort(v, n, sizeof(*v), name_cmp);
	*ret = v;
	*ret_n = n;
	return 0;
}

static unsigned char dtype(mode_t m)
{
	return S_ISREG(m)    ? DT_REG
	       : S_ISDIR(m)  ? DT_DIR
	       : S_ISLNK(m)  ? DT_LNK
	       : S_ISFIFO(m) ? DT_FIFO
	       : S_ISSOCK(m) ? DT_SOCK
	       : S_ISCHR(m)  ? DT_CHR
	       : S_ISBLK(m)  ? DT_BLK
			     : DT_UNKNOWN;
}

int cow_list(struct cow *c, const char *rel,
	     int (*cb)(const char *name, unsigned char type, uint64_t ino, void *arg), void *arg)
{
	struct cow_node n;
	char **up = NULL, **low = NULL;
	size_t n_up = 0, n_low = 0;
	int r = cow_lookup(c, rel, &n);

	if (r == 0 && n.layer == COW_NONE)
		r = -ENOENT;
	if (r == 0 && !S_ISDIR(n.st.st_mode))
		r = -ENOTDIR;
	/* The upper layer's names (its root always exists; a lower directory elsewhere has no
	 * upper one: names_of finds none). */
	if (r == 0)
		r = cow_names_of(c->upper_fd, rel, &up, &n_up);
	if (r == 0 && n.lower_beneath) {
		struct stat st;
		/* A lower directory shows beneath an upper one only where it is one too. */
		if (n.layer == COW_LOWER ||
		    (fstatat(c->lower_fd, at(rel), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		     S_ISDIR(st.st_mode)))
			r = cow_names_of(c->lower_fd, rel, &low, &n_low);
	}
	/* Merge the two sorted lists. */
	char **all = r == 0 ? calloc(n_up + n_low + 1, sizeof(*all)) : NULL;
	size_t k = 0;
	if (r == 0 && !all)
		r = -ENOMEM;
	for (size_t i = 0, j = 0; r == 0 && (i < n_up || j < n_low);) {
		int cmp = i == n_up ? 1 : j == n_low ? -1 : strcmp(up[i], low[j]);
		char p[PATH_MAX];
		if (cmp <= 0) {
			all[k++] = TAKE_PTR(up[i]);
			i++;
			if (cmp == 0)
				j++;
			continue;
		}
		join(p, sizeof(p), rel, low[j]);
		if (!unlisted(c, p))
			all[k++] = TAKE_PTR(low[j]);
		j++;
	}
	for (size_t i = 0; i < n_up; i++)
		free(up[i]);
	for (size_t i = 0; i < n_low; i++)
		free(low[i]);
	free(up);
	free(low);
	if (r < 0) {
		for (size_t i = 0; i < k; i++)
			free(all[i]);
		free(all);
		return r;
	}
	if (!cb) { /* the names themselves, for the caller to free */
		*(char ***)arg = all;
		return 0;
	}
	for (size_t i = 0; i < k; i++) {
		char p[PATH_MAX];
		struct cow_node cn;
		join(p, sizeof(p), rel, all[i]);
		if (r == 0 && cow_lookup(c, p, &cn) == 0 && cn.layer != COW_NONE &&
		    cb(all[i], dtype(cn.st.st_mode), (uint64_t)cn.st.st_ino, arg))
			r = 1; /* stop */
		free(all[i]);
	}
	free(all);
	return r < 0 ? r : 0;
}

/* ---- change set -------------------------------------------------------------------------- */

static int entry_same(const struct cow_entry *a, const struct cow_entry *b)
{
	if (a->present != b->present)
		return 0;
	if (!a->present)
		return 1;
	return a->kind == b->kind && a->mode == b->mode && a->size == b->size &&
	       a->has_digest == b->has_digest &&
	       (!a->has_digest || memcmp(a->digest, b->digest, 32) == 0) &&
	       !a->target == !b->target && (!a->target || strcmp(a->target, b->target) == 0);
}

static int entry_copy(struct cow_entry *to, const struct cow_entry *from)
{
	*to = *from;
	to->target = NULL;
	if (from->target && !(to->target = strdup(from->target)))
		return -ENOMEM;
	return 0;
}

static int change_cmp(const void *a, const void *b)
{
	return strcmp(((const struct cow_change *)a)->path, ((const struct cow_change *)b)->path);
}

void cow_changes_free(struct cow_change *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].path);
		entry_clear(&v[i].before);
		entry_clear(&v[i].after);
	}
	free(v);
}

/* Whether @a and @b are the same file with the same size, times and mode. */
static int same_version(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_dev == b->st_dev && a->st_size == b->st_size &&
	       a->st_mode == b->st_mode && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

int cow_changes(struct cow *c, struct cow_change **ret, size_t *ret_n)
{
	struct cow_change *v = calloc(c->n_marks + 1, sizeof(*v));
	size_t n = 0;
	int r = v ? 0 : -ENOMEM;

	for (size_t i = 0; r == 0 && i < c->cap_marks; i++) {
		struct cow_mark *m = c->marks[i];
		struct cow_node nd;
		struct cow_entry after = { 0 };
		if (!m || !m->touched)
			continue;
		int lr = cow_lookup(c, m->path, &nd);
		if (lr == 0 && m->lazy && nd.layer == COW_LOWER &&
		    same_version(&nd.st, &m->before_st))
			continue; /* still the workdir's own file, as first seen: unchanged */
		if (lr == 0 && nd.layer != COW_NONE)
			r = entry_read(nd.layer == COW_UPPER ? c->upper_fd : c->lower_fd, m->path,
				       &after, 1, NULL);
		if (r == 0 && m->lazy) {
			/* The workdir's file as the run first saw it (the same inode, size and
			 * times: else its bytes are no longer known, and before has no digest). */
			struct stat st;
			_cleanup_close_ int fd =
				openat(c->lower_fd, m->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0 && fstat(fd, &st) == 0 && same_version(&st, &m->before_st) &&
			    sha256_fd(fd, m->before.digest) == 0)
				m->before.has_digest = 1;
			m->lazy = 0;
		}
		if (r < 0)
			break;
		if (entry_same(&m->before, &after)) {
			entry_clear(&after);
			continue;
		}
		v[n].after = after;
		if (!(v[n].path = strdup(m->path)) || entry_copy(&v[n].before, &m->before) < 0) {
			n++;
			r = -ENOMEM;
			break;
		}
		n++;
	}
	if (r < 0) {
		cow_changes_free(v, n);
		return r;
	}
	qsort(v, n, sizeof(*v), change_cmp);
	*ret = v;
	*ret_n = n;
	return 0;
}
