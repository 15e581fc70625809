/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cow/anchor: what the workdir holds for the run (cow.h): empty directories standing for the
 * branch's where a process enters one, links to the branch's programs where one is executed.
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

/* ---- anchors ----------------------------------------------------------------------------- */

/* A descriptor of @rel's parent under @root, reached without following any symlink (-ENOENT,
 * -ENOTDIR, -ELOOP where it is gone or no longer a directory), and @rel's last component. */
int cow_parent_of(int root, const char *rel, const char **name)
{
	const char *slash = strrchr(rel, '/');
	char dir[PATH_MAX];

	*name = slash ? slash + 1 : rel;
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - rel) : 1, slash ? rel : ".");
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					   RESOLVE_NO_MAGICLINKS };
	int fd = (int)syscall(SYS_openat2, root, dir, &how, sizeof(how));
	return fd < 0 ? -errno : fd;
}

/* Whether branch file @rel (of mode @mode) would run with other rights than its runner's, or
 * could come to without a chmod: set-user-ID or set-group-ID (an ACL can give group execute
 * later), or file capabilities. A link to it in the workdir would hand them to every user who
 * can reach the workdir. */
static int set_id(const struct cow *c, const char *rel, mode_t mode)
{
	char path[2 * PATH_MAX];

	if (mode & (S_ISUID | S_ISGID))
		return 1;
	snprintf(path, sizeof(path), "%s/%s", c->upper, rel);
	if (lgetxattr(path, "security.capability", NULL, 0) >= 0)
		return 1;
	return errno != ENODATA && errno != EOPNOTSUPP; /* cannot tell: as if it had them */
}

/* Remember anchor @rel ('d' a directory, 'f' a file's link). */
static int anchor_push(struct cow *c, char type, const char *rel)
{
	char **v = realloc(c->anchors, (c->n_anchors + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	c->anchors = v;
	if (asprintf(&v[c->n_anchors], "%c%s", type, rel) < 0)
		return -ENOMEM;
	ino_t *iv = realloc(c->anchor_ino, (c->n_anchors + 1) * sizeof(*iv));
	if (!iv) {
		free(v[c->n_anchors]);
		return -ENOMEM;
	}
	c->anchor_ino = iv;
	iv[c->n_anchors] = 0;
	c->n_anchors++;
	return 0;
}

int cow_anchor_file(struct cow *c, const char *rel)
{
	cow_changed(c);
	char parent[PATH_MAX];
	struct stat st;
	const char *slash = strrchr(rel, '/');
	int r;

	if (fstatat(c->lower_fd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
		return -EACCES; /* the workdir holds another entry there: never replaced */
	if (fstatat(c->upper_fd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (set_id(c, rel, st.st_mode))
		return -EACCES;
	snprintf(parent, sizeof(parent), "%.*s", slash ? (int)(slash - rel) : 0, rel);
	if ((r = cow_anchor(c, parent)) < 0)
		return r;
	const char *name;
	_cleanup_close_ int pfd = cow_parent_of(c->lower_fd, rel, &name);
	if (pfd < 0)
		return -EACCES; /* a symlink on the way: the link would be made elsewhere */
	if ((r = anchor_push(c, 'f', rel)) < 0)
		return r;
	if (linkat(c->upper_fd, rel, pfd, name, 0) < 0) {
		free(c->anchors[--c->n_anchors]);
		return errno == EXDEV ? -EACCES : -errno; /* another filesystem: no link */
	}
	c->anchor_ino[c->n_anchors - 1] = st.st_ino;
	return cow_anchor_record(c, 'f', rel, &st, rel);
}

int cow_anchor_alias(struct cow *c, const char *rel, char *alias, size_t size)
{
	const char *slash = strrchr(rel, '/');
	const char *base = slash ? slash + 1 : rel;
	size_t dirlen = (size_t)(base - rel), len = strlen(base);
	struct stat st, up;

	if (fstatat(c->upper_fd, rel, &up, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(up.st_mode) ||
	    set_id(c, rel, up.st_mode))
		return -EACCES;
	if (dirlen + len + 1 > size)
		return -ENAMETOOLONG;
	/* The directory the alias is made in, reached without a symlink (one in the workdir
	 * would lead the link out of it). */
	const char *pname;
	_cleanup_close_ int pfd = cow_parent_of(c->lower_fd, rel, &pname);
	if (pfd < 0)
		return -EACCES;
	/* One made before for this very file is taken again. */
	for (size_t i = 0; i < c->n_anchors; i++) {
		const char *a = c->anchors[i] + 1;
		if (c->anchors[i][0] == 'a' && c->anchor_ino[i] == up.st_ino &&
		    strlen(a) == dirlen + len && strncmp(a, rel, dirlen) == 0 &&
		    fstatat(pfd, a + dirlen, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    st.st_ino == up.st_ino) {
			memcpy(alias, a, dirlen + len + 1);
			return 0;
		}
	}
	static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	uint64_t seed = (uint64_t)up.st_ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)c->n_anchors;
	memcpy(alias, rel, dirlen);
	for (int attempt = 0; attempt < 64; attempt++) {
		char *name = alias + dirlen;
		for (size_t i = 0; i < len; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			name[i] = chars[(seed >> 33) % (sizeof(chars) - 1)];
		}
		if (len >= 2)
			name[0] = '.'; /* hidden from a listing of the workdir on the host */
		name[len] = '\0';
		if (strcmp(name, base) == 0 || cow_mark_get(c, alias) ||
		    fstatat(c->upper_fd, alias, &st, AT_SYMLINK_NOFOLLOW) == 0 ||
		    fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
			continue;
		struct cow_mark *m = cow_mark_add(c, alias);
		int r = m ? anchor_push(c, 'a', alias) : -ENOMEM;
		if (r < 0)
			return r;
		/* The file it stands for, after the alias's own NUL (cow_alias_refresh). */
		char *e = NULL;
		if (asprintf(&e, "a%s%c%s", alias, '\0', rel) < 0) {
			free(c->anchors[--c->n_anchors]);
			return -ENOMEM;
		}
		free(c->anchors[c->n_anchors - 1]);
		c->anchors[c->n_anchors - 1] = e;
		if (linkat(c->upper_fd, rel, pfd, name, 0) < 0) {
			r = errno == EXDEV ? -EACCES : -errno; /* another filesystem: no link */
			free(c->anchors[--c->n_anchors]);
			return r;
		}
		cow_changed(c);
		m->hidden = 1;
		c->anchor_ino[c->n_anchors - 1] = up.st_ino;
		return cow_anchor_record(c, 'a', alias, &up, rel);
	}
	return -EACCES;
}

int cow_alias_refresh(struct cow *c, const char *rel)
{
	struct cow_mark *m = cow_mark_get(c, rel);
	struct stat up, st;

	if (!m || !m->hidden)
		return 0;
	for (size_t i = 0; i < c->n_anchors; i++) {
		const char *a = c->anchors[i] + 1;
		if (c->anchors[i][0] != 'a' || strcmp(a, rel) != 0)
			continue;
		const char *target = a + strlen(a) + 1, *name;
		if (fstatat(c->upper_fd, target, &up, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(up.st_mode))
			return -ENOENT; /* what it stood for is gone from the branch */
		_cleanup_close_ int pfd = cow_parent_of(c->lower_fd, rel, &name);
		if (pfd < 0 || fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    st.st_ino != c->anchor_ino[i])
			return -EACCES; /* not the link made: someone else's file now */
		if (set_id(c, target, up.st_mode))
			return -EACCES; /* (cow_anchor_file) */
		if (st.st_ino == up.st_ino)
			return 0;
		/* Replaced since (a rebuild): the link made again to the file there now, in one
		 * step: a new link beside it under a short free name, exchanged with it (an exec
		 * meanwhile finds one or the other), the old one then removed if it still is the
		 * link made, else put back. */
		char tmp[32];
		int r = -EEXIST;
		for (unsigned k = 0; r == -EEXIST && k < 16; k++) {
			snprintf(tmp, sizeof(tmp), ".sl%08x",
				 (unsigned)(up.st_ino * 2654435761u + k));
			r = linkat(c->upper_fd, target, pfd, tmp, 0) < 0 ? -errno : 0;
		}
		if (r < 0)
			return r;
		if (renameat2(pfd, tmp, pfd, name, RENAME_EXCHANGE) < 0) {
			r = -errno;
			(void)unlinkat(pfd, tmp, 0);
			return r;
		}
		if (fstatat(pfd, tmp, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    st.st_ino != c->anchor_ino[i]) {
			/* Someone else's file was there: given back, and our link removed only
			 * if the exchange back left it at @tmp. */
			(void)renameat2(pfd, tmp, pfd, name, RENAME_EXCHANGE);
			if (fstatat(pfd, tmp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    st.st_ino == up.st_ino)
				(void)unlinkat(pfd, tmp, 0);
			return -EACCES;
		}
		(void)unlinkat(pfd, tmp, 0);
		c->anchor_ino[i] = up.st_ino;
		cow_changed(c);
		return cow_anchor_record(c, 'a', rel, &up, target);
	}
	return 0;
}

int cow_anchor(struct cow *c, const char *rel)
{
	cow_changed(c);
	char prefix[PATH_MAX];
	size_t len = strlen(rel);

	if (len >= sizeof(prefix))
		return -ENAMETOOLONG;
	for (size_t j = 1; j <= len; j++) { /* "" is the workdir itself */
		if (rel[j] != '/' && rel[j] != '\0')
			continue;
		memcpy(prefix, rel, j);
		prefix[j] = '\0';
		struct stat st;
		if (fstatat(c->lower_fd, prefix, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			if (!S_ISDIR(st.st_mode))
				return -EACCES; /* a file of the workdir there: cannot anchor */
			continue;
		}
		if (errno != ENOENT)
			return -errno;
		/* Owner-only, whatever mode the branch's directory has: nobody else makes
		 * anything in it or reaches what is linked beneath it (the child, the same
		 * user, is given the branch's modes by the merged view). */
		const char *name;
		_cleanup_close_ int pfd = cow_parent_of(c->lower_fd, prefix, &name);
		if (pfd < 0)
			return -EACCES;
		int r = anchor_push(c, 'd', prefix);
		if (r < 0)
			return r;
		if (mkdirat(pfd, name, 0700) < 0) {
			free(c->anchors[--c->n_anchors]);
			return -errno;
		}
		if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    (r = cow_anchor_record(c, 'd', prefix, &st, NULL)) < 0)
			return r < 0 ? r : -errno; /* (taken away by cow_unanchor) */
	}
	return 0;
}

void cow_unanchor_ino(struct cow *c, ino_t ino)
{
	for (size_t i = 0; i < c->n_anchors; i++) {
		char type = c->anchors[i][0];
		const char *name;
		struct stat st;
		if ((type != 'f' && type != 'a') || c->anchor_ino[i] != ino)
			continue;
		_cleanup_close_ int pfd = cow_parent_of(c->lower_fd, c->anchors[i] + 1, &name);
		if (pfd >= 0 && fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    st.st_ino == ino)
			(void)unlinkat(pfd, name, 0);
		/* No longer the link made: never removed, refreshed or reused. */
		c->anchor_ino[i] = 0;
	}
}

void cow_unanchor(struct cow *c)
{
	while (c->n_anchors) {
		size_t i = --c->n_anchors;
		char *p = c->anchors[i];
		struct stat st;
		/* A directory: only if still empty (ENOTEMPTY: someone else's now). A link: only
		 * if it is still the branch's file (the inode linked). */
		const char *name;
		int pfd = cow_parent_of(c->lower_fd, p + 1, &name);
		if (pfd < 0)
			; /* no longer reached without a symlink: left where it is */
		else if (p[0] == 'd')
			(void)unlinkat(pfd, name, AT_REMOVEDIR);
		else if (c->anchor_ino && fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			 st.st_ino == c->anchor_ino[i])
			(void)unlinkat(pfd, name, 0);
		safe_close(pfd);
		free(p);
	}
	free(c->anchor_ino);
	c->anchor_ino = NULL;
	free(c->anchors);
	c->anchors = NULL;
	/* Nothing of the run left in the workdir: its record goes (a record that could not
	 * be written may name what was taken away already: cow_clean_stale checks each). */
	if (c->journal_fd >= 0 && c->dir) {
		_cleanup_free_ char *path = NULL;
		if (asprintf(&path, "%s/anchors", c->dir) >= 0)
			(void)unlink(path);
	}
	c->journal_fd = safe_close(c->journal_fd);
}
