/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cow/ops: the changes of one entry the handlers make in the branch on the child's behalf
 * (cow.h): files, symlinks and links made, and the metadata and size of an entry already in
 * the upper layer changed. Each is made relative to the upper layer's descriptor, never
 * following the entry's final symlink, and touched first where it makes a name (its entry as
 * it was is the change set's "before").
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cow-internal.h"
#include "fd-util.h"
#include "macro.h"

/* Give @rel, just made in the branch (@fd: open, or -1), @mode, the child's mode and umask:
 * the kernel applied the supervisor's umask, which may take more. Not where the kernel decided
 * as it would for the child: the setgid bit of a directory made in a setgid one, and every bit
 * beneath a default ACL (which replaces the umask; copied with the directories). */
int cow_mode_exactly(struct cow *c, int fd, const char *rel, mode_t mode)
{
	struct stat st;

	if (fd >= 0 ? fstat(fd, &st) : fstatat(c->upper_fd, rel, &st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	mode_t have = st.st_mode & 07777;
	if (S_ISDIR(st.st_mode))
		mode = (mode & ~(mode_t)S_ISGID) | (have & S_ISGID);
	if (have == mode || cow_parent_has_default_acl(c, rel))
		return 0;
	return (fd >= 0 ? fchmod(fd, mode) : fchmodat(c->upper_fd, rel, mode, 0)) < 0 ? -errno : 0;
}

int cow_create(struct cow *c, const char *rel, const struct cow_node *known, int flags, mode_t mode)
{
	int r;

	if ((r = cow_touch_node(c, rel, known)) < 0 || (r = cow_parents_up(c, rel)) < 0)
		return r;
	_cleanup_close_ int fd =
		openat(c->upper_fd, rel,
		       (flags & ~O_CLOEXEC) | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	if ((r = cow_mode_exactly(c, fd, rel, mode)) < 0)
		return r;
	return TAKE_FD(fd);
}

int cow_mknod(struct cow *c, const char *rel, const struct cow_node *known, mode_t mode)
{
	int r;

	if ((r = cow_touch_node(c, rel, known)) < 0 || (r = cow_parents_up(c, rel)) < 0)
		return r;
	if (mknodat(c->upper_fd, rel, S_IFREG | mode, 0) < 0)
		return -errno;
	return cow_mode_exactly(c, -1, rel, mode);
}

int cow_symlink(struct cow *c, const char *target, const char *rel, const struct cow_node *known)
{
	/* max_disk: a symlink holds its target (a long one takes a block of its own). */
	int64_t cost = (int64_t)strlen(target);
	int r;

	if ((r = cow_touch_node(c, rel, known)) < 0 || (r = cow_parents_up(c, rel)) < 0 ||
	    (r = cow_charge(c, cost)) < 0)
		return r;
	if (symlinkat(target, c->upper_fd, rel) < 0) {
		r = -errno;
		(void)cow_charge(c, -cost);
		return r;
	}
	return 0;
}

int cow_link(struct cow *c, const char *from, const char *to)
{
	int r;

	if ((r = cow_touch(c, to)) < 0 || (r = cow_parents_up(c, to)) < 0)
		return r;
	return linkat(c->upper_fd, from, c->upper_fd, to, 0) < 0 ? -errno : 0;
}

int cow_chmod(struct cow *c, const char *rel, mode_t mode)
{
	struct stat st;

	/* A set-user-ID or set-group-ID bit is never given to a file linked into the workdir
	 * for an exec: those links go first. */
	if ((mode & (S_ISUID | S_ISGID)) &&
	    fstatat(c->upper_fd, cow_at(rel), &st, AT_SYMLINK_NOFOLLOW) == 0)
		cow_unanchor_ino(c, st.st_ino);
	return fchmodat(c->upper_fd, cow_at(rel), mode, 0) < 0 ? -errno : 0;
}

int cow_chown(struct cow *c, const char *rel, uid_t uid, gid_t gid)
{
	return fchownat(c->upper_fd, cow_at(rel), uid, gid, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

int cow_utimens(struct cow *c, const char *rel, const struct timespec ts[2])
{
	return utimensat(c->upper_fd, cow_at(rel), ts, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

int cow_truncate(struct cow *c, const char *rel, int64_t len)
{
	struct stat st;
	int r = cow_touch(c, rel);

	if (r < 0)
		return r;
	_cleanup_close_ int fd = openat(c->upper_fd, rel, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	/* Growth is charged first; a shrink is not refunded (the quota errs on the side of
	 * refusing). */
	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	if ((r = cow_charge_file(c, st.st_dev, st.st_ino, MAX(len, (int64_t)st.st_size))) < 0)
		return r;
	return ftruncate(fd, len) < 0 ? -errno : 0;
}
