/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cow/seal: the branch as the run left it (cow.h). Once nothing of the sandbox runs, the
 * supervisor records every entry of the upper layer (cow_seal): its identity and its lstat,
 * whose content the change set's digests are read from next. An entry the supervisor did not
 * make (no mark of a change the run made through it, no copy it made) is someone else's: the
 * branch is then refused by every commit. A commit checks the upper layer against the record
 * first (cow_seal_check): the same entries, each the same inode unchanged since (size, mode,
 * times, and the change time, which no process can set back), so what it merges is what the
 * change set showed, nothing else.
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
#include "fd-util.h"
#include "macro.h"
#include "strv.h"

/* The names said in a refusal at most (the rest counted). */
#define SEAL_NAMES_SAID 8

struct cow_sealed {
	char *path;
	struct stat st;
	int seen; /* (cow_seal_check: found again) */
};

void cow_seal_free(struct cow *c)
{
	for (size_t i = 0; i < c->n_sealed; i++)
		free(c->sealed[i].path);
	free(c->sealed);
	c->sealed = NULL;
	c->n_sealed = 0;
	c->foreign = strv_free(c->foreign);
	c->n_foreign = 0;
	c->is_sealed = 0;
}

/* Whether upper entry @rel (@st) is one the supervisor made: the run changed the path through
 * it (touched), or it is the supervisor's copy of a workdir directory (a parent copied up). */
static int made_here(struct cow *c, const char *rel, const struct stat *st)
{
	const struct cow_mark *m = cow_mark_get(c, rel);

	if (!*rel)
		return 1; /* the upper layer itself, made by cow_open */
	return m && !m->hidden && (m->touched || (m->from_ino && m->copy_ino == st->st_ino));
}

/* Each entry beneath upper directory @dir (the upper layer's @rel, a PATH_MAX buffer), depth
 * first, given to @cb with its lstat; a directory @cb answers 1 for is not entered. */
static int walk(struct cow *c, int dir, char *rel,
		int (*cb)(struct cow *c, const char *rel, const struct stat *st, void *arg),
		void *arg)
{
	char **names;
	size_t n, len = strlen(rel);
	int r = cow_names_of(dir, "", &names, &n);

	for (size_t i = 0; r == 0 && i < n; i++) {
		struct stat st;
		if (len + strlen(names[i]) + 2 > PATH_MAX) {
			r = -ENAMETOOLONG;
			break;
		}
		snprintf(rel + len, PATH_MAX - len, "%s%s", len ? "/" : "", names[i]);
		if (fstatat(dir, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = -errno;
			break;
		}
		int skip = (r = cb(c, rel, &st, arg)) == 1;
		if (r < 0)
			break;
		r = 0;
		if (S_ISDIR(st.st_mode) && !skip) {
			_cleanup_close_ int sub = openat(
				dir, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			r = sub < 0 ? -errno : walk(c, sub, rel, cb, arg);
		}
		rel[len] = '\0';
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return r;
}

static int seal_cb(struct cow *c, const char *rel, const struct stat *st, void *arg)
{
	size_t *cap = arg;

	if (!made_here(c, rel, st)) {
		if (strv_extend(&c->foreign, rel) < 0)
			return -ENOMEM;
		c->n_foreign++;
		return 1; /* not entered: all of it is someone else's */
	}
	if (c->n_sealed == *cap) {
		size_t ncap = *cap ? 2 * *cap : 64;
		struct cow_sealed *v = realloc(c->sealed, ncap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		c->sealed = v;
		*cap = ncap;
	}
	struct cow_sealed *e = &c->sealed[c->n_sealed];
	if (!(e->path = strdup(rel)))
		return -ENOMEM;
	e->st = *st;
	e->seen = 0;
	c->n_sealed++;
	return 0;
}

static int sealed_cmp(const void *a, const void *b)
{
	return strcmp(((const struct cow_sealed *)a)->path, ((const struct cow_sealed *)b)->path);
}

int cow_seal(struct cow *c)
{
	size_t cap = 0;
	char rel[PATH_MAX] = "";
	struct stat st;

	cow_seal_free(c);
	/* The workdir's links to branch files go first: each is a name of an upper inode, whose
	 * change time its removal would move. */
	cow_unanchor(c);
	_cleanup_close_ int root = openat(c->upper_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0 || fstat(root, &st) < 0)
		return -errno;
	int r = seal_cb(c, "", &st, &cap);
	if (r == 0)
		r = walk(c, root, rel, seal_cb, &cap);
	if (r < 0) {
		cow_seal_free(c);
		return r;
	}
	qsort(c->sealed, c->n_sealed, sizeof(*c->sealed), sealed_cmp);
	c->is_sealed = 1;
	return 0;
}

/* Whether @a is @b as sealed: the same inode, not changed since. */
static int unchanged(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_mode == b->st_mode &&
	       a->st_size == b->st_size && a->st_nlink == b->st_nlink &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

struct check {
	char **bad; /* the paths said */
	size_t n_bad;
	char **dirs; /* directories changed since (said only when nothing beneath explains it) */
};

static int note_bad(struct check *k, const char *rel)
{
	if (k->n_bad++ < SEAL_NAMES_SAID && strv_extend(&k->bad, *rel ? rel : ".") < 0)
		return -ENOMEM;
	return 0;
}

static int check_cb(struct cow *c, const char *rel, const struct stat *st, void *arg)
{
	struct cow_sealed key = { .path = (char *)rel };
	struct cow_sealed *e =
		bsearch(&key, c->sealed, c->n_sealed, sizeof(*c->sealed), sealed_cmp);

	if (e && unchanged(&e->st, st)) {
		e->seen = 1;
		return 0;
	}
	/* A directory whose entries changed changes too: entered, the entries named. */
	if (e && S_ISDIR(st->st_mode) && e->st.st_dev == st->st_dev && e->st.st_ino == st->st_ino &&
	    e->st.st_mode == st->st_mode) {
		e->seen = 1;
		return strv_extend(&((struct check *)arg)->dirs, *rel ? rel : ".") < 0 ? -ENOMEM
										       : 0;
	}
	int r = note_bad(arg, rel);
	return r < 0 ? r : 1;
}

/* @v's names, ", " between them (NULL: out of memory). */
static char *join_names(char *const *v)
{
	size_t len = 1;
	for (size_t i = 0; v && v[i]; i++)
		len += strlen(v[i]) + 2;
	char *s = malloc(len), *p = s;
	for (size_t i = 0; s && v && v[i]; i++)
		p += sprintf(p, "%s%s", i ? ", " : "", v[i]);
	if (s)
		*p = '\0';
	return s;
}

int cow_seal_check(struct cow *c, struct sandlock_error **reterr)
{
	struct check k = { 0 };
	char rel[PATH_MAX] = "";
	struct stat st;
	int r = c->is_sealed ? 0 : cow_seal(c);

	if (r < 0)
		return error_set(reterr, r, "commit: reading the branch %s: %s", c->dir,
				 strerror(-r));
	for (size_t i = 0; r == 0 && i < c->n_foreign; i++)
		r = note_bad(&k, c->foreign[i]);
	for (size_t i = 0; i < c->n_sealed; i++)
		c->sealed[i].seen = 0;
	_cleanup_close_ int root = openat(c->upper_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r == 0 && (root < 0 || fstat(root, &st) < 0))
		r = -errno;
	if (r == 0 && (r = check_cb(c, "", &st, &k)) == 0)
		r = walk(c, root, rel, check_cb, &k);
	for (size_t i = 0; r >= 0 && i < c->n_sealed; i++)
		if (!c->sealed[i].seen)
			r = note_bad(&k, c->sealed[i].path); /* gone since */
	for (size_t i = 0; r >= 0 && !k.n_bad && k.dirs && k.dirs[i]; i++)
		r = note_bad(&k, k.dirs[i]); /* (its attributes, say) */
	strv_free(k.dirs);
	if (r < 0) {
		strv_free(k.bad);
		return error_set(reterr, r, "commit: reading the branch %s: %s", c->dir,
				 strerror(-r));
	}
	if (!k.n_bad)
		return 0;
	_cleanup_free_ char *list = join_names(k.bad);
	strv_free(k.bad);
	char more[64] = "";
	if (k.n_bad > SEAL_NAMES_SAID)
		snprintf(more, sizeof(more), " and %zu more", k.n_bad - SEAL_NAMES_SAID);
	return error_set(reterr, -EPERM,
			 "commit into %s refused: the branch holds entries the run did not make, "
			 "or changed since it ended: %s%s; the workdir is untouched, the branch is "
			 "kept in %s",
			 c->lower, list ? list : "(out of memory)", more, c->dir);
}
