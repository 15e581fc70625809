/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cow/changes: the change set (cow.h): each path the run changes is touched first, its entry
 * as it was kept in its mark ("before": a workdir file's digest taken only when the set is
 * read), and cow_changes compares each with what the merged view holds then ("after").
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cow.h"
#include "cow-internal.h"
#include "fd-util.h"
#include "sha256.h"

/* ---- change set -------------------------------------------------------------------------- */

static enum cow_kind kind_of(mode_t m)
{
	return S_ISREG(m)   ? COW_KIND_FILE
	       : S_ISDIR(m) ? COW_KIND_DIR
	       : S_ISLNK(m) ? COW_KIND_SYMLINK
			    : COW_KIND_OTHER;
}

void cow_entry_clear(struct cow_entry *e)
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
	if (fstatat(dirfd, cow_at(rel), &st, AT_SYMLINK_NOFOLLOW) < 0)
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
		cow_entry_clear(&v[i].before);
		cow_entry_clear(&v[i].after);
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
			cow_entry_clear(&after);
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
