/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cow/layer: reads of one entry in the layer that holds it (cow.h), for the handlers that
 * answer a read as the merged view has it: the layers' descriptors stay in the engine. Each
 * call names the layer (cow_node's) and the entry relative to it, and never follows the
 * entry's own final symlink: the caller resolved the name (cow_resolve).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cow-internal.h"
#include "fd-util.h"

/* The directory of @layer (O_PATH), or -1 for COW_NONE (every call there fails EBADF). */
static int layer_fd(const struct cow *c, enum cow_layer layer)
{
	return layer == COW_UPPER ? c->upper_fd : layer == COW_LOWER ? c->lower_fd : -1;
}

int cow_layer_open(struct cow *c, enum cow_layer layer, const char *rel, int flags)
{
	int fd = openat(layer_fd(c, layer), cow_at(rel), flags | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int cow_layer_stat(struct cow *c, enum cow_layer layer, const char *rel, struct stat *st)
{
	return fstatat(layer_fd(c, layer), cow_at(rel), st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

int cow_layer_statx(struct cow *c, enum cow_layer layer, const char *rel, int flags, unsigned mask,
		    struct statx *stx)
{
	return statx(layer_fd(c, layer), cow_at(rel), AT_SYMLINK_NOFOLLOW | flags, mask, stx) < 0
		       ? -errno
		       : 0;
}

int cow_layer_access(struct cow *c, enum cow_layer layer, const char *rel, int mode, int flags)
{
	/* A write goes to the branch: an entry is writable as its mode says, whichever
	 * filesystem holds the layer. */
	if (faccessat(layer_fd(c, layer), cow_at(rel), mode, AT_SYMLINK_NOFOLLOW | flags) < 0 &&
	    errno != EROFS)
		return -errno;
	return 0;
}

ssize_t cow_layer_readlink(struct cow *c, enum cow_layer layer, const char *rel, char *buf,
			   size_t size)
{
	ssize_t k = readlinkat(layer_fd(c, layer), rel, buf, size);
	return k < 0 ? -errno : k;
}

int cow_lower_object(struct cow *c, const char *rel, const struct stat *want)
{
	const char *name;
	struct stat st;
	_cleanup_close_ int pfd = cow_parent_of(c->lower_fd, rel, &name);
	_cleanup_close_ int obj = pfd < 0 ? -1 : openat(pfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	if (obj < 0 || fstat(obj, &st) < 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) ||
	    S_ISLNK(st.st_mode) || st.st_dev != want->st_dev || st.st_ino != want->st_ino)
		return -EPERM;
	return TAKE_FD(obj);
}
