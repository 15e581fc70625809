/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cow/commit: what becomes of a branch (cow.h): the commit, merged into the workdir under its
 * lock, and abort, keep and save.
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

/* ---- dispositions ------------------------------------------------------------------------ */

int cow_abort(struct cow *c)
{
	if (c->lower_fd >= 0)
		cow_unanchor(c);
	if (!c->dir)
		return 0;
	_cleanup_free_ char *parent = strdup(c->dir);
	if (!parent)
		return -ENOMEM;
	char *slash = strrchr(parent, '/');
	*slash = '\0';
	_cleanup_close_ int pfd = open(*parent ? parent : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	return cow_remove_tree(pfd, slash + 1);
}

int cow_save(struct cow *c)
{
	cow_unanchor(c);
	_cleanup_free_ char *path = NULL;
	/* Nothing of the run is left in the workdir: the lock (cow/stale.c) has nothing more to
	 * guard, and a branch left on disk holds only what it says. */
	if (asprintf(&path, "%s/lock", c->dir) < 0)
		return -ENOMEM;
	(void)unlink(path);
	free(path);
	if (asprintf(&path, "%s/whiteouts", c->dir) < 0)
		return -ENOMEM;
	FILE *f = fopen(path, "we");
	if (!f)
		return -errno;
	/* One path per line would break on a name holding a newline: NUL-terminated. */
	for (size_t i = 0; i < c->cap_marks; i++)
		if (c->marks[i] && c->marks[i]->whiteout)
			fwrite(c->marks[i]->path, 1, strlen(c->marks[i]->path) + 1, f);
	int r = fflush(f) == 0 && fsync(fileno(f)) == 0 ? 0 : -errno;
	fclose(f);
	return r;
}

/* Marks, longest path first: a directory's entries before it. */
static int by_length_down(const void *a, const void *b)
{
	size_t la = strlen((*(struct cow_mark *const *)a)->path);
	size_t lb = strlen((*(struct cow_mark *const *)b)->path);
	return la > lb ? -1 : la < lb;
}

#ifdef SANDLOCK_TEST_HOOKS
/* For the test suite: SANDLOCK_TEST_COMMIT_CRASH=N kills the process after N entries of a
 * commit are merged, as a crash would. Compiled into the build the tests run only (the
 * Makefile's test-hooks objects), never into what `make install` installs: an installed
 * sandlock reads no such variable. */
static void crash_point(size_t *done)
{
	static long at = -2;
	if (at == -2) {
		const char *e = getenv("SANDLOCK_TEST_COMMIT_CRASH");
		at = e && *e ? strtol(e, NULL, 10) : -1;
	}
	if (at >= 0 && (long)++*done > at)
		(void)kill(getpid(), SIGKILL);
}
#else
static void crash_point(size_t *done)
{
}
#endif

/* Merge upper entry @name of directory @udir (and beneath) into lower directory @ldir. Every
 * step is taken relative to a directory opened without following a symlink, so a symlink that
 * appeared in the workdir since the run is replaced, never followed. */
/* A merged directory's own metadata: all of it (@m NULL: made in the run), else what the run
 * changed of it since its copy into the branch (@m's snapshot, however the change was made: by
 * name or through a descriptor), not the rest: the host may have changed that meanwhile. */
static int merge_meta(int u, int l, const struct stat *st, const struct cow_mark *m)
{
	if (m && m->snap_failed)
		return -EIO;	 /* what the run changed of it is not known: the commit fails */
	if (!m || !m->snapped) { /* (no snapshot: the run's changes land, the host's go) */
		cow_sync_xattrs(u, l);
		return fchmod(l, st->st_mode & 07777) < 0 ? -errno : 0;
	}
	_cleanup_(strv_freep) char **now = NULL;
	int r = cow_xattr_names(u, &now);
	if (r < 0)
		return r; /* the commit fails (the branch is kept) rather than guess */
	for (size_t i = 0; now && now[i]; i++) {
		size_t j = 0;
		while (m->snap_names && m->snap_names[j] && strcmp(m->snap_names[j], now[i]) != 0)
			j++;
		if (!m->snap_names || !m->snap_names[j] ||
		    m->snap_hash[j] != cow_xattr_hash(u, now[i]))
			cow_copy_xattr(u, l, now[i]); /* set, or changed, by the run */
	}
	for (size_t j = 0; m->snap_names && m->snap_names[j]; j++)
		if (!strv_contains(now, m->snap_names[j]))
			(void)fremovexattr(l, m->snap_names[j]); /* removed by the run */
	if ((st->st_mode & 07777) != m->snap_mode && fchmod(l, st->st_mode & 07777) < 0)
		return -errno;
	return 0;
}

static int merge_at(struct cow *c, int udir, int ldir, char *rel, const char *name, int same_fs,
		    size_t *done);

/* Merge directory @udir (the upper layer's @rel, a PATH_MAX buffer) into @ldir. */
static int merge_dir(struct cow *c, int udir, int ldir, char *rel, int same_fs, size_t *done)
{
	char **names;
	size_t n;
	int r = cow_names_of(udir, "", &names, &n);

	for (size_t i = 0; r == 0 && i < n; i++)
		r = merge_at(c, udir, ldir, rel, names[i], same_fs, done);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return r;
}

static int merge_at(struct cow *c, int udir, int ldir, char *rel, const char *name, int same_fs,
		    size_t *done)
{
	struct stat st, lst;

	if (fstatat(udir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	int has_lower = fstatat(ldir, name, &lst, AT_SYMLINK_NOFOLLOW) == 0;
	if (S_ISDIR(st.st_mode)) {
		if (has_lower && !S_ISDIR(lst.st_mode)) {
			int r = cow_remove_tree(ldir, name);
			if (r < 0)
				return r;
		}
		if (mkdirat(ldir, name, 0700) < 0 && errno != EEXIST)
			return -errno;
		_cleanup_close_ int u =
			openat(udir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		_cleanup_close_ int l =
			openat(ldir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (u < 0 || l < 0)
			return -errno;
		size_t len = strlen(rel);
		if (len + strlen(name) + 2 > PATH_MAX)
			return -ENAMETOOLONG;
		/* The branch's copy is emptied as its entries move out: it must be writable
		 * (a directory the run made read-only; its mode, in @st, is what lands). */
		if ((st.st_mode & 0700) != 0700)
			(void)fchmod(u, (st.st_mode & 07777) | 0700);
		snprintf(rel + len, PATH_MAX - len, "%s%s", len ? "/" : "", name);
		int r = merge_dir(c, u, l, rel, same_fs, done);
		/* Its mode as the run left it again (the chmod above rewrote an access ACL's
		 * owner entry, which merge_meta would take for the run's change). */
		if ((st.st_mode & 0700) != 0700)
			(void)fchmod(u, st.st_mode & 07777);
		/* A directory the workdir had takes what the run changed of its own attributes
		 * and mode, not the branch's whole copy of them: the host may have changed the
		 * others meanwhile. One made in the run takes them all. */
		static const struct cow_mark none;
		const struct cow_mark *m = cow_mark_get(c, rel);
		if (has_lower && S_ISDIR(lst.st_mode) && !m)
			m = &none;
		else if (!has_lower || !S_ISDIR(lst.st_mode))
			m = NULL;
		rel[len] = '\0';
		return r < 0 ? r : merge_meta(u, l, &st, m);
	}
	if (has_lower && S_ISDIR(lst.st_mode)) {
		int r = cow_remove_tree(ldir, name);
		if (r < 0)
			return r;
	}
	crash_point(done);
	if (same_fs && renameat(udir, name, ldir, name) == 0)
		return 0;
	/* Another filesystem: a copy beside the target, renamed over it. */
	char tmp[NAME_MAX + 32];
	snprintf(tmp, sizeof(tmp), ".sandlock-merge-%.200s", name);
	(void)unlinkat(ldir, tmp, 0);
	if (S_ISLNK(st.st_mode)) {
		int r = cow_copy_symlink(udir, name, ldir, tmp);
		if (r < 0)
			return r;
	} else {
		_cleanup_close_ int in = openat(udir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		_cleanup_close_ int out =
			in < 0 ? -1
			       : openat(ldir, tmp,
					O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
					st.st_mode & 07777);
		if (in < 0 || out < 0)
			return -errno;
		int r = cow_copy_bytes(in, out, (uint64_t)st.st_size, UINT64_MAX, NULL);
		if (r == 0)
			cow_copy_xattrs(in, out);
		if (r == 0 && (fchmod(out, st.st_mode & 07777) < 0 || fsync(out) < 0))
			r = -errno;
		if (r < 0) {
			(void)unlinkat(ldir, tmp, 0);
			return r;
		}
	}
	if (renameat(ldir, tmp, ldir, name) < 0) {
		int r = -errno;
		(void)unlinkat(ldir, tmp, 0);
		return r;
	}
	return unlinkat(udir, name, 0) < 0 ? -errno : 0;
}

/* A workdir directory given owner bits for the commit (widen). */
struct widened {
	char *rel;
	mode_t was, now;
	dev_t dev; /* the directory lent to */
	ino_t ino;
	int gone; /* deleted by the commit (a directory made there since is another) */
};

/* Whether the user is in group @gid. */
static int in_group(gid_t gid)
{
	if (getegid() == gid)
		return 1;
	int n = getgroups(0, NULL);
	_cleanup_free_ gid_t *groups = n > 0 ? calloc((size_t)n, sizeof(*groups)) : NULL;
	if (groups)
		n = getgroups(n, groups);
	for (int i = 0; groups && i < n; i++)
		if (groups[i] == gid)
			return 1;
	return 0;
}

/* Give workdir directory @rel the owner bits @add the run had on it (widen()), if it is still
 * as @ref says the run found it (its mode; @ino, @dev where known) and the user's. */
static int widen_one(struct cow *c, const char *rel, mode_t add, mode_t ref, dev_t dev, ino_t ino,
		     struct widened **v, size_t *n)
{
	struct stat st;
	_cleanup_close_ int fd = openat(c->lower_fd, *rel ? rel : ".",
					O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || geteuid() == 0 || st.st_uid != geteuid() ||
	    (st.st_mode & 07777) != ref || (ino && (st.st_ino != ino || st.st_dev != dev)) ||
	    (st.st_mode & add) == add)
		return 0;
	/* A setgid directory of a group the user is not in would lose the bit to a chmod, for
	 * good: not lent (a deletion there then fails the commit). */
	if ((st.st_mode & S_ISGID) && !in_group(st.st_gid))
		return 0;
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*v)[i].rel, rel) == 0)
			return 0; /* (lent already; its bits are the run's owner bits) */
	struct widened *nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (!nv)
		return -ENOMEM;
	*v = nv;
	if (!(nv[*n].rel = strdup(rel)))
		return -ENOMEM;
	nv[*n].was = st.st_mode & 07777;
	nv[*n].now = (st.st_mode & 07777) | add;
	nv[*n].dev = st.st_dev, nv[*n].ino = st.st_ino, nv[*n].gone = 0;
	if (fchmod(fd, nv[*n].now) < 0) {
		free(nv[*n].rel);
		return -errno;
	}
	if (fstat(fd, &st) == 0) /* (what the kernel made of it) */
		nv[*n].now = st.st_mode & 07777;
	(*n)++;
	return 0;
}

/* Before any deletion or merge, the owner write and search bits the run had on a workdir
 * directory, given to it: a directory it made writable (kept, or removed since) or was
 * writable when it deleted in it (`chmod -R u+w d && rm -rf d`, as `go clean -modcache` does;
 * `chmod u+w d && rm d/f && chmod u-w d`). Only bits the run added, only on a directory still
 * as the run found it (one the host changed keeps its mode, and a deletion the run could not
 * make there fails the commit), never narrowed here: the final modes land with the merge, and
 * unwiden() puts back what no final mode replaced. */
static int widen(struct cow *c, struct widened **v, size_t *n)
{
	int r = 0;
	for (size_t i = 0; r == 0 && i < c->cap_marks; i++) {
		struct cow_mark *m = c->marks[i];
		struct stat up;
		if (!m)
			continue;
		if (m->snapped &&
		    fstatat(c->upper_fd, *m->path ? m->path : ".", &up, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(up.st_mode))
			r = widen_one(c, m->path, up.st_mode & ~m->snap_mode & 0700, m->snap_mode,
				      m->from_dev, m->from_ino, v, n);
		else if (m->gone_mode)
			r = widen_one(c, m->path, m->gone_mode & ~m->snap_mode & 0700, m->snap_mode,
				      m->gone_dev, m->gone_ino, v, n);
		if (r == 0 && m->whiteout &&
		    (m->parent_seen & (S_IWUSR | S_IXUSR)) == (S_IWUSR | S_IXUSR)) {
			char parent[PATH_MAX];
			const char *slash = strrchr(m->path, '/');
			snprintf(parent, sizeof(parent), "%.*s", slash ? (int)(slash - m->path) : 0,
				 m->path);
			r = widen_one(c, parent, S_IWUSR | S_IXUSR, m->parent_lower, m->parent_dev,
				      m->parent_ino, v, n);
		}
	}
	return r;
}

/* Put back the modes widen() changed where no final mode replaced them (@ok: the merge ran,
 * so a directory the run changed has its final mode; else every one, the commit failed). */
static void unwiden(struct cow *c, struct widened *v, size_t n, int ok)
{
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		struct cow_mark *m = cow_mark_get(c, v[i].rel);
		/* The merge gave it its final mode: a directory of the branch there that the run
		 * made (no snapshot) or whose mode it changed. */
		int final = ok &&
			    fstatat(c->upper_fd, *v[i].rel ? v[i].rel : ".", &st,
				    AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISDIR(st.st_mode) &&
			    (!m || !m->snapped || (st.st_mode & 07777) != m->snap_mode);
		_cleanup_close_ int fd = openat(c->lower_fd, *v[i].rel ? v[i].rel : ".",
						O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (!final && !v[i].gone && fd >= 0 && fstat(fd, &st) == 0 &&
		    (st.st_mode & 07777) == v[i].now && st.st_ino == v[i].ino &&
		    st.st_dev == v[i].dev) /* not one made since */
			(void)fchmod(fd, v[i].was);
		free(v[i].rel);
	}
	free(v);
}

int cow_commit(struct cow *c, int wait_ms, struct sandlock_error **reterr)
{
	struct stat ls, us;
	int r;

	/* Exactly what the run made, checked before anything of the workdir changes. */
	if ((r = cow_seal_check(c, reterr)) < 0)
		return r;
	_cleanup_close_ int lock = open(c->lower, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lock < 0)
		return error_set(reterr, -errno, "commit: %s: %s", c->lower, strerror(errno));
	for (int waited = 0; flock(lock, LOCK_EX | LOCK_NB) < 0; waited += 10) {
		if (errno != EWOULDBLOCK)
			return error_set(reterr, -errno, "commit: lock %s: %s", c->lower,
					 strerror(errno));
		if (waited >= wait_ms)
			return error_set(reterr, -EBUSY,
					 "commit: %s is being merged by another sandbox (waited "
					 "%d ms); the branch is kept in %s",
					 c->lower, wait_ms, c->dir);
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	cow_unanchor(c);
	/* The marker first: whatever happens from here, the branch stays until the end. */
	_cleanup_free_ char *marker = NULL;
	if (asprintf(&marker, "%s/COMMITTING", c->dir) < 0)
		return error_set(reterr, -ENOMEM, "out of memory");
	_cleanup_close_ int mfd = open(marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (mfd < 0 || (r = cow_save(c)) < 0 || fsync(mfd) < 0)
		return error_set(reterr,
				 mfd < 0 ? -errno
				 : r < 0 ? r
					 : -errno,
				 "commit: %s: cannot mark the branch", c->dir);

	struct widened *wv = NULL;
	size_t n_wv = 0;
	if ((r = widen(c, &wv, &n_wv)) < 0) {
		unwiden(c, wv, n_wv, 0);
		return error_set(reterr, r, "commit into %s failed: %s; the branch is kept in %s",
				 c->lower, strerror(-r), c->dir);
	}
	/* Deletions, children first, one entry each: what the run deleted (a directory it
	 * removed was empty in its view, every entry of it deleted too), never what the host put
	 * there since (a directory that is not empty now keeps it). */
	struct cow_mark **wh = calloc(c->n_marks + 1, sizeof(*wh));
	size_t n_wh = 0;
	if (!wh) {
		unwiden(c, wv, n_wv, 0);
		return error_set(reterr, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < c->cap_marks; i++)
		if (c->marks[i] && c->marks[i]->whiteout)
			wh[n_wh++] = c->marks[i];
	qsort(wh, n_wh, sizeof(*wh), by_length_down);
	r = 0;
	for (size_t i = 0; r == 0 && i < n_wh; i++) {
		struct stat st;
		const char *name;
		/* A parent gone or turned into something else since the run holds nothing of
		 * the workdir's to delete. */
		int pfd = cow_parent_of(c->lower_fd, wh[i]->path, &name);
		int del = pfd >= 0 && fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? 1 : 0;
		if (del && unlinkat(pfd, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0) {
			del = 0;
			if (errno != ENOTEMPTY && errno != EEXIST && errno != ENOENT)
				r = -errno;
		}
		for (size_t k = 0; del && k < n_wv; k++)
			wv[k].gone |= strcmp(wv[k].rel, wh[i]->path) == 0;
		if (pfd >= 0)
			close(pfd);
	}
	free(wh);
	size_t done = 0;
	int same_fs = fstat(c->lower_fd, &ls) == 0 && fstat(c->upper_fd, &us) == 0 &&
		      ls.st_dev == us.st_dev;
	_cleanup_close_ int uroot = openat(c->upper_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int lroot = openat(c->lower_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r == 0 && (uroot < 0 || lroot < 0))
		r = -errno;
	char rel[PATH_MAX] = "";
	struct stat rst;
	if (r == 0 && fstat(uroot, &rst) < 0)
		r = -errno;
	if (r == 0 && (rst.st_mode & 0700) != 0700) /* (as in merge_at) */
		(void)fchmod(uroot, (rst.st_mode & 07777) | 0700);
	if (r == 0) {
		r = merge_dir(c, uroot, lroot, rel, same_fs, &done);
		(void)fchmod(uroot, rst.st_mode & 07777); /* (its ACL as it was: merge_at) */
	}
	if (r == 0) { /* the workdir's own attributes and mode, as the run changed them */
		static const struct cow_mark none;
		const struct cow_mark *m = cow_mark_get(c, "");
		r = merge_meta(uroot, lroot, &rst, m ? m : &none);
	}
	unwiden(c, wv, n_wv, r == 0);
	if (r < 0)
		return error_set(reterr, r, "commit into %s failed: %s; the branch is kept in %s",
				 c->lower, strerror(-r), c->dir);
	r = cow_abort(c); /* the marker goes last, with the branch */
	if (r < 0)
		return error_set(reterr, r, "commit: removing the branch %s: %s", c->dir,
				 strerror(-r));
	return 0;
}
