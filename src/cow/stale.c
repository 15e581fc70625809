/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cow/stale: what a sandlock killed mid-run (SIGKILL: no clean-up) leaves in its workdir, the
 * anchors and exec links of cow/anchor.c, taken back by the next run of that workdir (or by
 * `sandlock ps`). Each branch holds a lock file, locked for as long as its sandlock uses it, and
 * a record of the anchors it made: the directory or the inode linked, by identity, and the
 * workdir they were made in. A branch whose lock is free belongs to nobody any more; what its
 * record names is removed only where it still is that very directory (empty) or a link to that
 * very file of the branch, never by a name alone.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cow.h"
#include "cow-internal.h"
#include "fd-util.h"
#include "macro.h"

#define RECORD "anchors"
#define RECORD_MAX (16u << 20) /* a record beyond this is not ours: left alone */

int cow_lock_branch(struct cow *c)
{
	_cleanup_free_ char *path = NULL;

	if (asprintf(&path, "%s/lock", c->dir) < 0)
		return -ENOMEM;
	c->lock_fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (c->lock_fd < 0 || flock(c->lock_fd, LOCK_EX | LOCK_NB) < 0)
		return -errno;
	return 0;
}

/* One record: type, identity, path, NUL, the branch file it links ("" for a directory), NUL:
 * written in one append. */
static int record(int fd, char type, const char *path, const struct stat *st, const char *target)
{
	_cleanup_free_ char *s = NULL;
	int n = asprintf(&s, "%c %ju %ju %s%c%s%c", type, (uintmax_t)st->st_dev,
			 (uintmax_t)st->st_ino, path, '\0', target, '\0');
	if (n < 0)
		return -ENOMEM;
	ssize_t k = write(fd, s, (size_t)n);
	return k == n ? 0 : k < 0 ? -errno : -EIO;
}

int cow_anchor_record(struct cow *c, char type, const char *rel, const struct stat *st,
		      const char *target)
{
	if (c->journal_fd < 0) {
		_cleanup_free_ char *path = NULL;
		struct stat ls;
		if (asprintf(&path, "%s/" RECORD, c->dir) < 0)
			return -ENOMEM;
		_cleanup_close_ int fd =
			open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 || fstat(c->lower_fd, &ls) < 0)
			return -errno;
		int r = record(fd, 'w', c->lower, &ls, "");
		if (r < 0)
			return r;
		c->journal_fd = TAKE_FD(fd);
	}
	return record(c->journal_fd, type, rel, st, target ? target : "");
}

struct rec {
	char type;
	dev_t dev;
	ino_t ino;
	const char *path, *target;
};

/* The records of @buf (@n bytes) into *@ret: their number, or -EINVAL for one malformed. */
static ssize_t parse(char *buf, size_t n, struct rec **ret)
{
	size_t cap = 0, k = 0;
	struct rec *v = NULL;

	for (char *p = buf, *end = buf + n; p < end;) {
		char *nul = memchr(p, '\0', (size_t)(end - p));
		char *tnul = nul ? memchr(nul + 1, '\0', (size_t)(end - nul - 1)) : NULL;
		uintmax_t dev, ino;
		int off = 0;
		/* (the one space before the path read exactly: a name may begin with spaces) */
		if (!tnul || sscanf(p, "%c %ju %ju%n", &(char){ 0 }, &dev, &ino, &off) != 3 ||
		    !off || p[off] != ' ' || !strchr("wdfa", p[0])) {
			free(v);
			return -EINVAL;
		}
		if (k == cap) {
			struct rec *nv = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof(*v));
			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
		}
		v[k++] = (struct rec){ p[0], (dev_t)dev, (ino_t)ino, p + off + 1, nul + 1 };
		p = tnul + 1;
	}
	*ret = v;
	return (ssize_t)k;
}

/* Take back anchor @e of branch @bfd from workdir @wfd, if it still is what was made. */
static void take_back(int bfd, int wfd, const struct rec *e)
{
	const char *name;
	struct stat st, up;
	_cleanup_close_ int pfd = cow_parent_of(wfd, e->path, &name);

	if (pfd < 0 || fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_dev != e->dev ||
	    st.st_ino != e->ino)
		return; /* gone, or another entry now */
	if (e->type == 'd') {
		if (S_ISDIR(st.st_mode))
			(void)unlinkat(pfd, name, AT_REMOVEDIR); /* (not if something is in it) */
		return;
	}
	/* A link: the branch's file it was made to still holds that inode. */
	char upper[PATH_MAX + 8];
	snprintf(upper, sizeof(upper), "upper/%s", e->target);
	if (S_ISREG(st.st_mode) && *e->target &&
	    fstatat(bfd, upper, &up, AT_SYMLINK_NOFOLLOW) == 0 && up.st_dev == st.st_dev &&
	    up.st_ino == st.st_ino)
		(void)unlinkat(pfd, name, 0);
}

/* The stand-ins branch @bfd's record names (those in the workdir of @lower_fd when >= 0). */
static void clean_branch(int bfd, int lower_fd)
{
	struct stat st;
	_cleanup_close_ int fd = openat(bfd, RECORD, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > RECORD_MAX)
		return;
	_cleanup_free_ char *buf = malloc((size_t)st.st_size);
	_cleanup_free_ struct rec *v = NULL;
	if (!buf || read(fd, buf, (size_t)st.st_size) != st.st_size)
		return;
	ssize_t n = parse(buf, (size_t)st.st_size, &v);
	if (n < 1 || v[0].type != 'w')
		return;
	/* The workdir recorded, by identity. */
	_cleanup_close_ int own =
		lower_fd < 0 ? open(v[0].path, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
	int wfd = lower_fd >= 0 ? lower_fd : own;
	if (wfd < 0 || fstat(wfd, &st) < 0 || st.st_dev != v[0].dev || st.st_ino != v[0].ino)
		return;
	for (ssize_t i = n - 1; i >= 1; i--) /* deepest (latest) first */
		take_back(bfd, wfd, &v[i]);
	(void)unlinkat(bfd, RECORD, 0);
}

void cow_clean_stale(const char *storage, int lower_fd)
{
	int sfd = open(storage, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = sfd >= 0 ? fdopendir(sfd) : NULL;

	if (!d) {
		safe_close(sfd);
		return;
	}
	for (struct dirent *e; (e = readdir(d));) {
		struct stat st;
		if (e->d_name[0] == '.' || (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN))
			continue;
		_cleanup_close_ int bfd = openat(dirfd(d), e->d_name,
						 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (bfd < 0 || fstat(bfd, &st) < 0 || st.st_uid != geteuid())
			continue;
		/* Held while its sandlock runs (and while another clean-up reads it). */
		_cleanup_close_ int lock = openat(bfd, "lock", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) < 0)
			continue;
		clean_branch(bfd, lower_fd);
	}
	closedir(d);
}
