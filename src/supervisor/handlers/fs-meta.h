/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fs-meta: what the handlers of the metadata calls share (fs-meta.c: modes, owners, times;
 * fs-meta-attr.c: extended attributes, inode flags; cow-meta.c and cow-xattr.c for a workdir), and
 * what they keep between calls, held by the supervisor as sv->meta.
 */
#pragma once

#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "supervisor/notif.h"

struct supervisor;

struct fs_meta_state {
	int creds;	/* how the supervisor's rights stand for the sandbox's; 0: not known */
	int userns;	/* the sandbox has a user namespace of its own (uid/gid) */
	int changed;	/* a task changed its credentials: each caller looked at */
	int verified;	/* the sandbox's credentials, unchanged since, are the supervisor's */
	char ids[1024]; /* its own ids, groups and effective capabilities */
	struct notif_pidfd pidfd; /* the last caller's, for its descriptors */
	int fd_dir_plus1;	  /* /proc/self/fd, opened once (0: not yet) */
	int kept_plus1;		  /* an O_PATH descriptor of the last file allowed */
	dev_t kept_dev;
	ino_t kept_ino;
};

/* fs-meta-take.c: the file taken, the rights, the id maps. */

/* The file a metadata call acts on, taken once: the caller's descriptor @fd (@by_fd), else the
 * name at @addr opened as the caller reaches it (a final symlink itself with @nofollow; an empty
 * or NULL name with @empty_ok: @dirfd's file, the working directory for AT_FDCWD, *@of_dirfd
 * then set), and allowed only where the change would be the sandbox's to make: beneath a
 * writable grant and not a denied path, or a file of a workdir's branch (else -EACCES); not a
 * workdir file (-EPERM: the name or descriptor read before said otherwise, so the caller changed
 * it meanwhile). Its fstat in @st. A descriptor of the supervisor's, or -errno (NOTIF_GONE). */
int fs_meta_take(struct supervisor *sv, const struct seccomp_notif *req, int by_fd, int fd,
		 int dirfd, uint64_t addr, int empty_ok, int nofollow, struct stat *st,
		 int *of_dirfd);
/* Whether the supervisor's own rights stand for the trapped task's in a change it makes for
 * it: 1; -EPERM where they may not (they may exceed the task's: fail closed); NOTIF_GONE. */
int fs_meta_creds(struct supervisor *sv, const struct seccomp_notif *req);

/* An id of the caller's (in its user namespace: @map "uid_map" or "gid_map"; (uint32_t)-1
 * stays) as the supervisor's namespace reads it, in *@ret. -EINVAL for an id the namespace does
 * not map (the kernel's answer). */
int fs_meta_map_id(const struct seccomp_notif *req, const char *map, uint32_t id, uint32_t *ret);

/* fs-meta-attr.c: a call of the extended attribute family, decoded. */
struct xcall {
	enum { X_SET, X_REMOVE, X_GET, X_LIST } op;
	int fd;		/* by descriptor: the caller's, else -1 */
	int by_fd;	/* fsetxattr, fremovexattr (fd whatever its number) */
	int dirfd;	/* by name: relative to */
	uint64_t path;	/* by name: the caller's address of it */
	int follow;	/* a final symlink followed */
	int empty_ok;	/* AT_EMPTY_PATH */
	uint64_t name;	/* the attribute's name (not for X_LIST) */
	uint64_t value; /* X_SET: the bytes; X_GET, X_LIST: the caller's buffer */
	uint64_t size;	/* of value */
	int flags;	/* X_SET: XATTR_CREATE, XATTR_REPLACE */
};
/* 0, NOTIF_NOT_MINE (not a call of the family), -errno (the kernel's answer to bad flags, an
 * unreadable struct xattr_args). */
int xattr_decode(struct supervisor *sv, const struct seccomp_notif *req, struct xcall *x);
/* A change's attribute name and (X_SET) value, from the caller; *@value malloc'd (NULL for
 * none). The kernel's checks of both (ERANGE, E2BIG). */
int xattr_read_change(struct supervisor *sv, const struct seccomp_notif *req, const struct xcall *x,
		      char *name, size_t name_size, char **value);
/* The attribute's name at @addr, from the caller (@size: XATTR_NAME_MAX + 1). */
int xattr_read_name(struct supervisor *sv, const struct seccomp_notif *req, uint64_t addr,
		    char *name, size_t size);
/* fs-meta-attr.c: the changes of the family (X_SET, X_REMOVE), file_setattr and the ioctls of
 * COW_INODE_IOCTLS, made on the file fs_meta_take gives. */
int fs_meta_xattr(struct supervisor *sv, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp);
int fs_meta_inode(struct supervisor *sv, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp);
