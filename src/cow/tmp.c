/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cow/tmp: private_tmp, a temporary directory of one sandbox's own (cow.h), in the per-user
 * store root, which every sandbox's grants leave out (plan/landlock.c): the sandbox it is made
 * for is granted it by a rule of its own, no other sandbox reaches it. Removed when the sandbox
 * ends; one a killed sandlock left (its lock free) by the next sandbox given one, as the
 * branches' stand-ins are (cow/stale.c). Everything is reached through descriptors, never
 * through a symlink the sandbox made.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

#define TMP_PREFIX "tmp-"
#define TMP_MAX_DEPTH 256

/* The directories beneath @dir made searchable and writable again (the sandbox may have taken
 * those rights away: a mode of its own stops no removal). A directory that cannot be opened
 * for reading is made 0700 through an O_PATH descriptor of it (chmod of its /proc/self/fd
 * name acts on that inode, never on a symlink's target). */
static void make_removable(int dir, int depth)
{
	if (depth > TMP_MAX_DEPTH || fchmod(dir, 0700) < 0)
		return;
	int dup = fcntl(dir, F_DUPFD_CLOEXEC, 3);
	DIR *d = dup >= 0 ? fdopendir(dup) : NULL;
	if (!d) {
		safe_close(dup);
		return;
	}
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
			continue;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
		_cleanup_close_ int fd = openat(dirfd(d), e->d_name, flags);
		if (fd < 0 && errno == EACCES) {
			char self[64];
			_cleanup_close_ int p = openat(
				dirfd(d), e->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			snprintf(self, sizeof(self), "/proc/self/fd/%d", p);
			if (p >= 0 && chmod(self, 0700) == 0)
				fd = openat(dirfd(d), e->d_name, flags);
		}
		if (fd >= 0)
			make_removable(fd, depth + 1);
	}
	closedir(d);
}

/* Remove entry @name of the store root @root, a directory of ours. */
static int remove_entry(int root, const char *name)
{
	_cleanup_close_ int fd =
		openat(root, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		make_removable(fd, 0);
	return cow_remove_tree(root, name);
}

/* Those whose sandlock is gone: a lock anyone can take. One still being made has no lock yet
 * and is left alone. */
static void clean_stale(int root)
{
	int dup = fcntl(root, F_DUPFD_CLOEXEC, 3);
	DIR *d = dup >= 0 ? fdopendir(dup) : NULL;

	if (!d) {
		safe_close(dup);
		return;
	}
	for (struct dirent *e; (e = readdir(d));) {
		struct stat st;
		if (strncmp(e->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) != 0)
			continue;
		_cleanup_close_ int fd = openat(dirfd(d), e->d_name,
						O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != geteuid())
			continue;
		_cleanup_close_ int lock = openat(fd, "lock", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) == 0)
			(void)remove_entry(dirfd(d), e->d_name);
	}
	closedir(d);
}

static int make_in(struct cow_tmp *t, int root, const char *root_path, const char *name)
{
	if (asprintf(&t->dir, "%s/" TMP_PREFIX "%s-XXXXXX", root_path, name) < 0) {
		t->dir = NULL;
		return -ENOMEM;
	}
	if (!mkdtemp(t->dir)) {
		free(t->dir);
		t->dir = NULL;
		return -errno;
	}
	_cleanup_close_ int dfd = openat(root, strrchr(t->dir, '/') + 1,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	/* The lock is taken before its name appears (an unnamed file, linked once locked), so
	 * another run's clean_stale never finds it free in a directory being made. */
	char self[64];
	t->lock_fd = openat(dfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (t->lock_fd < 0 || flock(t->lock_fd, LOCK_EX | LOCK_NB) < 0)
		return -errno;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", t->lock_fd);
	if (linkat(AT_FDCWD, self, dfd, "lock", AT_SYMLINK_FOLLOW) < 0)
		return -errno;
	if (mkdirat(dfd, "t", 0700) < 0)
		return -errno;
	/* 0700 whatever the umask. */
	_cleanup_close_ int tfd = openat(dfd, "t", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (tfd < 0 || fchmod(tfd, 0700) < 0)
		return -errno;
	if (asprintf(&t->path, "%s/t", t->dir) < 0) {
		t->path = NULL;
		return -ENOMEM;
	}
	return 0;
}

int cow_tmp_make(struct cow_tmp *t, const char *name, struct sandlock_error **reterr)
{
	char root_path[64];

	*t = (struct cow_tmp){ .lock_fd = -1 };
	_cleanup_close_ int root = cow_store_open(1);
	if (root < 0 || cow_store_root(root_path, sizeof(root_path)) < 0)
		return error_set(reterr, root < 0 ? root : -ENAMETOOLONG,
				 "private_tmp: the store root %s/sandlock-%u: %s", COW_STORE_PARENT,
				 (unsigned)geteuid(),
				 root == -EPERM ? "not a private directory of the user's"
						: strerror(root < 0 ? -root : ENAMETOOLONG));
	clean_stale(root);
	int r = make_in(t, root, root_path, name && *name ? name : "sandbox");
	if (r < 0) {
		int e = -r;
		cow_tmp_remove(t);
		return error_set(reterr, r, "private_tmp: making a directory in %s: %s", root_path,
				 strerror(e));
	}
	return 0;
}

void cow_tmp_remove(struct cow_tmp *t)
{
	if (!t)
		return;
	if (t->dir) {
		_cleanup_close_ int root = cow_store_open(0);
		if (root >= 0)
			(void)remove_entry(root, strrchr(t->dir, '/') + 1);
	}
	t->lock_fd = safe_close(t->lock_fd); /* after: nobody cleans it meanwhile */
	free(t->dir);
	free(t->path);
	t->dir = t->path = NULL;
}
