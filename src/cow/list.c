/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cow/list: the merged listing of a directory (cow_list): the upper layer's names and the
 * workdir's that show beneath it, sorted, without the deleted and the aliases (cow.c's
 * marks); and a layer's own names (cow_names_of).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cow.h"
#include "cow-internal.h"
#include "macro.h"

/* ---- listing ----------------------------------------------------------------------------- */

/* Whether lower entry @rel is left out of listings: deleted, or an alias (cow_anchor_alias),
 * which a name the kernel resolves must still reach (a script's interpreter opens it). */
static int unlisted(struct cow *c, const char *rel)
{
	struct cow_mark *m = cow_mark_get(c, rel);
	return m && (m->whiteout || m->hidden);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in directory @rel under @dirfd (without "." and ".."), NULL-terminated. */
int cow_names_of(int dirfd, const char *rel, char ***ret, size_t *ret_n)
{
	int fd = openat(dirfd, cow_at(rel), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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
		    (fstatat(c->lower_fd, cow_at(rel), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
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
		cow_join(p, sizeof(p), rel, low[j]);
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
		cow_join(p, sizeof(p), rel, all[i]);
		if (r == 0 && cow_lookup(c, p, &cn) == 0 && cn.layer != COW_NONE &&
		    cb(all[i], dtype(cn.st.st_mode), (uint64_t)cn.st.st_ino, arg))
			r = 1; /* stop */
		free(all[i]);
	}
	free(all);
	return r < 0 ? r : 0;
}
