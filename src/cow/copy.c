/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cow/copy: copy-up, the bytes of a workdir file (or a symlink, a directory) made again in the
 * upper layer; a large file's copy begun on the loop, its bytes copied on a worker and landed
 * on the loop again (cow.h: cow_copy_up_start, cow_copy_run, cow_copy_land).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cow-internal.h"
#include "fd-util.h"
#include "macro.h"

int cow_copy_bytes(int from, int to, uint64_t size, uint64_t step, const atomic_int *cancel)
{
	uint64_t done = 0;
	_cleanup_free_ char *buf = NULL; /* not on the stack: workers have small ones */

	while (done < size) {
		if (cancel && atomic_load_explicit(cancel, memory_order_relaxed))
			return -ECANCELED;
		ssize_t n = copy_file_range(from, NULL, to, NULL, MIN(size - done, step), 0);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno != EXDEV && errno != ENOSYS && errno != EOPNOTSUPP &&
			    errno != EINVAL)
				return -errno;
			if (!buf && !(buf = malloc(65536)))
				return -ENOMEM;
			ssize_t k = pread(from, buf, 65536, (off_t)done);
			if (k <= 0)
				return k < 0 ? -errno : 0;
			if (write(to, buf, (size_t)k) != k)
				return errno ? -errno : -EIO;
			n = k;
		}
		done += (uint64_t)n;
	}
	return 0;
}

void cow_copy_xattrs(int from, int to)
{
	ssize_t n = flistxattr(from, NULL, 0);
	_cleanup_free_ char *names = n > 0 ? malloc((size_t)n) : NULL;

	if (!names || (n = flistxattr(from, names, (size_t)n)) <= 0)
		return;
	for (char *name = names; name < names + n; name += strlen(name) + 1) {
		ssize_t v = fgetxattr(from, name, NULL, 0);
		_cleanup_free_ char *value = v > 0 ? malloc((size_t)v) : NULL;
		if (v < 0 ||
		    (v > 0 && (!value || (v = fgetxattr(from, name, value, (size_t)v)) < 0)))
			continue;
		(void)fsetxattr(to, name, value ? value : "", (size_t)v, 0);
	}
}

/* Whether the supervisor copies attribute @name with a file (and so reads its absence in a
 * copy as removed). */
static int copied_space(const char *name)
{
	return strncmp(name, "user.", 5) == 0 || strncmp(name, "system.posix_acl_", 17) == 0;
}

void cow_copy_xattr(int from, int to, const char *name)
{
	ssize_t v = fgetxattr(from, name, NULL, 0);
	_cleanup_free_ char *value = v > 0 ? malloc((size_t)v) : NULL;
	if (v < 0 || (v > 0 && (!value || (v = fgetxattr(from, name, value, (size_t)v)) < 0)))
		return;
	(void)fsetxattr(to, name, value ? value : "", (size_t)v, 0);
}

void cow_sync_xattrs(int from, int to)
{
	cow_copy_xattrs(from, to);
	ssize_t n = flistxattr(to, NULL, 0);
	_cleanup_free_ char *names = n > 0 ? malloc((size_t)n) : NULL;
	if (!names || (n = flistxattr(to, names, (size_t)n)) <= 0)
		return;
	for (char *name = names; name < names + n; name += strlen(name) + 1)
		if (copied_space(name) && fgetxattr(from, name, NULL, 0) < 0 && errno == ENODATA)
			(void)fremovexattr(to, name);
}

void cow_copy_dir_xattrs(int fromdir, const char *from, int todir, const char *to)
{
	_cleanup_close_ int f = openat(fromdir, *from ? from : ".",
				       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int t = f < 0 ? -1
				      : openat(todir, *to ? to : ".",
					       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (t >= 0)
		cow_copy_xattrs(f, t);
}

int cow_copy_symlink(int fromdir, const char *from, int todir, const char *to)
{
	char t[PATH_MAX];
	ssize_t k = readlinkat(fromdir, from, t, sizeof(t) - 1);

	if (k < 0)
		return -errno;
	t[k] = '\0';
	return symlinkat(t, todir, to) < 0 ? -errno : 0;
}

/* The copy of regular file @from (under @fromfd, its lstat in @cp->st) begun as @to under
 * @todir: its size charged (unless @cp->truncate), both files open in @cp. */
static int copy_begin(struct cow *c, int fromfd, const char *from, int todir, const char *to,
		      struct cow_copy *cp)
{
	int r = cp->truncate ? 0 : cow_charge(c, cp->st.st_size);

	cp->in = cp->out = -1;
	if (r < 0)
		return r;
	cp->in = openat(fromfd, from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (cp->in >= 0)
		cp->out = openat(todir, to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (cp->in >= 0 && cp->out >= 0)
		return 0;
	r = -errno;
	cp->in = safe_close(cp->in);
	if (!cp->truncate)
		(void)cow_charge(c, -(int64_t)cp->st.st_size);
	return r;
}

/* The copy begun by copy_begin, whose bytes were copied with result @r: given the lower
 * file's mode and times and counted once (cow_charge_file), or (@r < 0) taken back: uncharged
 * and @to removed. Closes both files. */
static int copy_end(struct cow *c, struct cow_copy *cp, int r, int todir, const char *to)
{
	const struct stat *st = &cp->st;

	if (r == 0 && fchmod(cp->out, st->st_mode & 07777) < 0)
		r = -errno;
	if (r == 0)
		cow_copy_xattrs(cp->in, cp->out);
	if (r == 0 && !cp->truncate) {
		struct timespec ts[2] = { st->st_atim, st->st_mtim };
		struct stat ost;
		(void)futimens(cp->out, ts);
		/* Charged by copy_begin: the copy's size counts once (cow_charge_file). */
		if (fstat(cp->out, &ost) == 0)
			(void)cow_charge_file(c, ost.st_dev, ost.st_ino, 0);
		for (size_t i = 0; i < c->n_charged; i++)
			if (c->charged[i].dev == ost.st_dev && c->charged[i].ino == ost.st_ino)
				c->charged[i].size = st->st_size;
	}
	if (r < 0) {
		if (!cp->truncate)
			(void)cow_charge(c, -(int64_t)st->st_size);
		(void)unlinkat(todir, to, 0);
	}
	cp->in = safe_close(cp->in);
	cp->out = safe_close(cp->out);
	return r;
}

int cow_copy_entry(struct cow *c, int fromfd, const char *from, const char *to, int truncate)
{
	struct cow_copy cp = { .truncate = truncate };

	if (fstatat(fromfd, from, &cp.st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	int r = cow_charge(c, cow_entry_cost(&cp.st));
	if (r < 0)
		return r;
	if (S_ISLNK(cp.st.st_mode)) {
		if ((r = cow_copy_symlink(fromfd, from, c->upper_fd, to)) < 0)
			(void)cow_charge(c, -cow_entry_cost(&cp.st));
		return r;
	}
	if (S_ISDIR(cp.st.st_mode)) {
		if (mkdirat(c->upper_fd, to, 0700) < 0) {
			r = -errno;
			(void)cow_charge(c, -COW_DIR_COST);
			return r;
		}
		if (fromfd == c->lower_fd)
			cow_note_copy(c, to, &cp.st);
		cow_copy_dir_xattrs(fromfd, from, c->upper_fd, to); /* a default ACL too */
		if (fchmodat(c->upper_fd, to, cp.st.st_mode & 07777, 0) < 0)
			return -errno;
		if (fromfd == c->lower_fd && strcmp(from, to) == 0)
			cow_snapshot_dir(c, to); /* the workdir's directory, copied in place */
		return 0;
	}
	if (!S_ISREG(cp.st.st_mode))
		return -EXDEV; /* a kernel object: never copied */
	r = copy_begin(c, fromfd, from, c->upper_fd, to, &cp);
	if (r < 0)
		return r;
	if (!truncate)
		r = cow_copy_bytes(cp.in, cp.out, (uint64_t)cp.st.st_size, UINT64_MAX, NULL);
	if ((r = copy_end(c, &cp, r, c->upper_fd, to)) == 0 && fromfd == c->lower_fd)
		cow_note_copy(c, to, &cp.st);
	return r;
}

int cow_copy_up(struct cow *c, const char *rel, int truncate)
{
	return cow_copy_up_start(c, rel, truncate, NULL);
}

/* The name of a copy on its way (cow_copy_up_start), beside "upper" in the branch: one at a
 * time. */
#define COPY_TEMP "copy-up"

int cow_copy_up_start(struct cow *c, const char *rel, int truncate, struct cow_copy *cp)
{
	struct cow_node n;
	if (!*rel) /* the workdir itself: the upper directory is its copy (cow_open) */
		return cow_touch(c, rel);
	int r = cow_lookup(c, rel, &n);

	if (r == 0)
		r = cow_touch_node(c, rel, &n);
	if (r < 0)
		return r;
	if (n.layer == COW_UPPER)
		return 0;
	if (n.layer == COW_NONE)
		return -ENOENT;
	if ((r = cow_parents_up(c, rel)) < 0)
		return r;
	if (!cp || truncate || !S_ISREG(n.st.st_mode) ||
	    (uint64_t)n.st.st_size <= COW_COPY_INLINE_MAX)
		return cow_copy_entry(c, c->lower_fd, rel, rel, truncate);
	*cp = (struct cow_copy){ .in = -1, .out = -1, .st = n.st };
	if (snprintf(cp->rel, sizeof(cp->rel), "%s", rel) >= (int)sizeof(cp->rel))
		return -ENAMETOOLONG;
	cp->dir = openat(c->upper_fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cp->dir < 0)
		return -errno;
	(void)unlinkat(cp->dir, COPY_TEMP, 0); /* one a crash left behind */
	if ((r = copy_begin(c, c->lower_fd, rel, cp->dir, COPY_TEMP, cp)) < 0) {
		cp->dir = safe_close(cp->dir);
		return r;
	}
	return 1;
}

int cow_copy_run(struct cow_copy *cp, const atomic_int *cancel)
{
	/* 16 MiB a step: a sandbox that ends stops the copy within one. */
	return cow_copy_bytes(cp->in, cp->out, (uint64_t)cp->st.st_size, 16 << 20, cancel);
}

int cow_copy_land(struct cow *c, struct cow_copy *cp, int result)
{
	cow_changed(c);
	int r = copy_end(c, cp, result, cp->dir, COPY_TEMP);
	/* Nothing else changed the branch meanwhile (the calls that would wait: handlers/
	 * cow-copy.c), so the name is free; NOREPLACE all the same. */
	if (r == 0 && renameat2(cp->dir, COPY_TEMP, c->upper_fd, cp->rel, RENAME_NOREPLACE) < 0) {
		r = -errno;
		struct stat st;
		if (fstatat(cp->dir, COPY_TEMP, &st, AT_SYMLINK_NOFOLLOW) == 0)
			cow_uncharge_file(c, &st); /* counted by copy_end: taken back whole */
		else
			(void)cow_charge(c, -(int64_t)cp->st.st_size);
		(void)unlinkat(cp->dir, COPY_TEMP, 0);
	}
	if (r == 0)
		cow_note_copy(c, cp->rel, &cp->st);
	cp->dir = safe_close(cp->dir);
	return r;
}
