/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cow/tree: the changes of the branch's tree (cow.h): the copies' provenance (cow_note_copy,
 * cow_copy_of), the parents of a new entry made in the upper layer (cow_parents_up), mkdir,
 * remove (a whiteout where the workdir's entry would show) and rename (a directory's tree
 * moved entry by entry, each touched first; cow_large_lower: the large workdir file a move
 * would copy). On the supervisor loop, like the rest of the engine (cow.c).
 */
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

/* ---- changes to the branch --------------------------------------------------------------- */

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
	return cow_lookup(c, parent, &pn) == 0 && pn.lower_beneath && !cow_whited_out(c, rel) &&
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

	cow_join(f, sizeof(f), m->from, name);
	cow_join(t, sizeof(t), m->to, name);
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
		cow_join(sub, sizeof(sub), rel, names[i]);
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
	cow_join(p, sizeof(p), s->rel, name);
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
