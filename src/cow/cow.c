/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cow: the branch engine (cow.h). A lower entry is hidden by a whiteout mark on its path; an
 * upper directory at a whited-out path hides every lower entry beneath it (it replaced the
 * lower one: "opaque"). Each call is on the supervisor loop, one at a time, but cow_copy_run
 * (a worker's, on the files of one copy).
 *
 * This file owns the marks (the table of what the branch knows per path), the branch's open
 * and close, the merged lookup and the name resolution. The tree changes (mkdir, remove,
 * rename, the copies' provenance) are tree.c's, the merged listing list.c's, the change set
 * (touch, cow_changes) changes.c's; what they share is cow-internal.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cow.h"
#include "cow-internal.h"
#include "fd-util.h"
#include "macro.h"
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

int cow_whited_out(struct cow *c, const char *rel)
{
	struct cow_mark *m = cow_mark_get(c, rel);
	return m && m->whiteout;
}

/* ---- small helpers ----------------------------------------------------------------------- */

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
			cow_entry_clear(&c->marks[i]->before);
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
	int hidden = !lower_ok || cow_whited_out(c, rel);
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
