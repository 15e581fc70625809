/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cow/xattr: the extended attributes of the branch's entries (cow.h, cow-internal.h): those a
 * handler reads in the layer that holds an entry or changes on its upper entry, the default
 * ACL that decides the modes of what is made in a directory, and the snapshot of a workdir
 * directory's attributes as copied up, which the commit compares with the copy's then. There
 * is no *xattrat() call before Linux 6.13 and an O_PATH descriptor takes none: a layer's entry
 * is named by its path, beneath the layer's directory, which only the supervisor writes (the
 * upper), or the workdir, which Landlock gives the sandbox no write to.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cow-internal.h"
#include "fd-util.h"
#include "macro.h"
#include "sha256.h"
#include "strv.h"

/* The path of @rel in @layer (the upper directory, else the workdir). */
static void layer_path(const struct cow *c, enum cow_layer layer, const char *rel, char *buf,
		       size_t size)
{
	snprintf(buf, size, "%s%s%s", layer == COW_UPPER ? c->upper : c->lower, *rel ? "/" : "",
		 rel);
}

int cow_parent_has_default_acl(const struct cow *c, const char *rel)
{
	char parent[PATH_MAX];
	const char *slash = strrchr(rel, '/');
	int len = slash ? (int)(slash - rel) : 0;

	snprintf(parent, sizeof(parent), "%s/%.*s", c->upper, len, rel);
	if (lgetxattr(parent, "system.posix_acl_default", NULL, 0) >= 0)
		return 1;
	if (errno != ENOENT)
		return 0;
	snprintf(parent, sizeof(parent), "%s/%.*s", c->lower, len, rel);
	return lgetxattr(parent, "system.posix_acl_default", NULL, 0) >= 0;
}

ssize_t cow_layer_getxattr(struct cow *c, enum cow_layer layer, const char *rel, const char *name,
			   void *buf, size_t size)
{
	char path[2 * PATH_MAX];

	layer_path(c, layer, rel, path, sizeof(path));
	ssize_t n = lgetxattr(path, name, buf, size);
	return n < 0 ? -errno : n;
}

ssize_t cow_layer_listxattr(struct cow *c, enum cow_layer layer, const char *rel, char *buf,
			    size_t size)
{
	char path[2 * PATH_MAX];

	layer_path(c, layer, rel, path, sizeof(path));
	ssize_t n = llistxattr(path, buf, size);
	return n < 0 ? -errno : n;
}

int cow_xattr_may_change(struct cow *c, enum cow_layer layer, const char *rel)
{
	char path[2 * PATH_MAX];

	layer_path(c, layer, rel, path, sizeof(path));
	return faccessat(AT_FDCWD, path, W_OK, AT_EACCESS | AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

int cow_setxattr(struct cow *c, const char *rel, const char *name, const void *value, size_t size,
		 int flags)
{
	char path[2 * PATH_MAX];
	/* max_disk: an attribute set holds its name and value (charged at each set, a value
	 * replaced included, and never refunded: never less than the branch holds). */
	int64_t cost = (int64_t)(strlen(name) + size);
	int r;

	layer_path(c, COW_UPPER, rel, path, sizeof(path));
	cow_changed(c);
	if ((r = cow_charge(c, cost)) < 0)
		return r;
	if (lsetxattr(path, name, value ? value : "", size, flags) < 0) {
		r = -errno;
		(void)cow_charge(c, -cost);
		return r;
	}
	return 0;
}

int cow_removexattr(struct cow *c, const char *rel, const char *name)
{
	char path[2 * PATH_MAX];

	layer_path(c, COW_UPPER, rel, path, sizeof(path));
	cow_changed(c);
	return lremovexattr(path, name) < 0 ? -errno : 0;
}

/* The extended attribute @name of directory @fd as a hash of its value (0: absent). */
uint64_t cow_xattr_hash(int fd, const char *name)
{
	ssize_t v = fgetxattr(fd, name, NULL, 0);
	_cleanup_free_ char *value = v > 0 ? malloc((size_t)v) : NULL;
	if (v < 0 || (v > 0 && (!value || (v = fgetxattr(fd, name, value, (size_t)v)) < 0)))
		return 0;
	/* A value the run chose cannot be made to match another's (SHA-256, 64 bits kept). */
	struct sha256 s;
	uint8_t d[32];
	uint64_t h;
	sha256_init(&s);
	sha256_update(&s, value ? value : "", (size_t)v);
	sha256_final(&s, d);
	memcpy(&h, d, sizeof(h));
	return h | 1;
}

/* The names of directory @fd's extended attributes into *@ret (NULL-terminated; NULL for
 * none): 0, or -errno (nothing known). */
int cow_xattr_names(int fd, char ***ret)
{
	ssize_t n = flistxattr(fd, NULL, 0);
	_cleanup_free_ char *list = n > 0 ? malloc((size_t)n) : NULL;
	char **v = NULL;

	*ret = NULL;
	if (n < 0)
		return errno == ENOTSUP ? 0 : -errno;
	if (n == 0)
		return 0;
	if (!list)
		return -ENOMEM;
	if ((n = flistxattr(fd, list, (size_t)n)) < 0)
		return -errno;
	for (char *name = list; name < list + n; name += strlen(name) + 1)
		if (strv_extend(&v, name) < 0) {
			strv_free(v);
			return -ENOMEM;
		}
	*ret = v;
	return 0;
}

void cow_snapshot_dir(struct cow *c, const char *rel)
{
	struct cow_mark *m = cow_mark_add(c, rel);
	struct stat st;
	_cleanup_close_ int fd = openat(c->upper_fd, *rel ? rel : ".",
					O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (!m || fd < 0 || fstat(fd, &st) < 0)
		return;
	/* Taken afresh at each copy: an earlier one's copy may have been taken back since. */
	m->snap_names = strv_free(m->snap_names);
	free(m->snap_hash);
	m->snap_hash = NULL;
	m->snapped = 0;
	m->snap_failed = 0;
	if (cow_xattr_names(fd, &m->snap_names) < 0) {
		m->snap_failed = 1;
		return;
	}
	size_t n = strv_length(m->snap_names);
	m->snap_hash = calloc(n + 1, sizeof(*m->snap_hash));
	for (size_t i = 0; m->snap_hash && i < n; i++)
		m->snap_hash[i] = cow_xattr_hash(fd, m->snap_names[i]);
	m->snap_mode = st.st_mode & 07777;
	m->snapped = m->snap_hash != NULL;
	m->snap_failed = !m->snapped;
}
