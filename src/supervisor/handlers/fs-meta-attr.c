/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/fs-meta-attr: the attribute changes of fs-meta.c's kind: extended attributes (set,
 * remove; by name, by descriptor, the *at forms), file_setattr and the ioctls that change an
 * inode (COW_INODE_IOCTLS). Each is made here on the file fs_meta_take gives, with its argument
 * copied from the caller first, never left to the kernel (which would read the name, the
 * descriptor and the argument again). The decoding of the extended attribute calls is shared
 * with the workdir's handler (cow-xattr.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cow/cow.h"
#include "fd-util.h"
#include "fs-meta.h"
#include "handlers.h"
#include "macro.h"
#include "supervisor/child.h"
#include "supervisor/args.h"
#include "supervisor/supervisor.h"
#include "syscall-util.h"

#ifndef XATTR_SIZE_MAX
#define XATTR_SIZE_MAX 65536
#endif

/* The *at forms' arguments (6.13). */
struct xattr_args_ {
	uint64_t value;
	uint32_t size;
	uint32_t flags;
};

int xattr_decode(struct supervisor *sv, const struct seccomp_notif *req, struct xcall *x)
{
	static const int ops[] = {
		[PATH_XATTR_SET] = X_SET,
		[PATH_XATTR_GET] = X_GET,
		[PATH_XATTR_LIST] = X_LIST,
		[PATH_XATTR_REMOVE] = X_REMOVE,
	};
	struct path_args pa;
	int r;

	if (path_args_decode(&req->data, &pa) < 0 || pa.call->xattr == PATH_XATTR_NONE)
		return NOTIF_NOT_MINE;
	/* Descriptor reads (fgetxattr, flistxattr): the kernel's, on the descriptor's file. */
	if (pa.by_fd && (pa.call->xattr == PATH_XATTR_GET || pa.call->xattr == PATH_XATTR_LIST))
		return NOTIF_NOT_MINE;
	*x = (struct xcall){
		.op = ops[pa.call->xattr],
		.fd = pa.fd,
		.by_fd = pa.by_fd,
		.dirfd = pa.dirfd,
		.path = pa.path,
		.follow = pa.follow,
		.empty_ok = pa.empty_ok,
		.name = pa.name,
		.value = pa.buf,
		.size = pa.size,
		.flags = (int)pa.xflags,
	};
	/* The *at forms' flags: what the kernel refuses, refused. */
	if ((int)pa.flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	if (pa.call->mem == PATH_MEM_XATTR_ARGS) { /* getxattrat, setxattrat */
		struct xattr_args_ xa;
		if (pa.mem_size < sizeof(xa))
			return -EINVAL; /* what the kernel says of a short struct */
		r = notif_mem_read(sv->listener, req, pa.mem, &xa, sizeof(xa));
		if (r < 0)
			return r;
		x->value = xa.value, x->size = xa.size, x->flags = (int)xa.flags;
	}
	return 0;
}

int xattr_read_name(struct supervisor *sv, const struct seccomp_notif *req, uint64_t addr,
		    char *name, size_t size)
{
	int r = child_read_path(sv, req, addr, name, size);
	if (r == -ENAMETOOLONG)
		return -ERANGE; /* the kernel's answer to a name too long */
	return r < 0 ? r : !name[0] ? -ERANGE : 0;
}

int xattr_read_change(struct supervisor *sv, const struct seccomp_notif *req, const struct xcall *x,
		      char *name, size_t name_size, char **value)
{
	int r;

	*value = NULL;
	if (x->op == X_SET && x->size > XATTR_SIZE_MAX)
		return -E2BIG;
	if ((r = xattr_read_name(sv, req, x->name, name, name_size)) < 0)
		return r;
	if (x->op == X_SET && x->size) {
		if (!(*value = malloc(x->size)))
			return -ENOMEM;
		if ((r = notif_mem_read(sv->listener, req, x->value, *value, x->size)) < 0)
			return r;
	}
	return 0;
}

/* A POSIX ACL's value (@v, @size bytes: a 4-byte version, then 8-byte entries of tag, perm, id)
 * from a caller in a user namespace of the sandbox's: the ids of its named users and groups
 * are that namespace's, read as the supervisor's (what the kernel does for the caller). */
static int acl_ids_mapped(const struct seccomp_notif *req, const char *name, char *v, size_t size)
{
	if (strcmp(name, "system.posix_acl_access") && strcmp(name, "system.posix_acl_default"))
		return 0;
	for (size_t off = 4; v && off + 8 <= size; off += 8) {
		uint16_t tag;
		uint32_t id;
		int r;
		memcpy(&tag, v + off, sizeof(tag));
		memcpy(&id, v + off + 4, sizeof(id));
		if (tag != 0x02 /* ACL_USER */ && tag != 0x08 /* ACL_GROUP */)
			continue;
		if ((r = fs_meta_map_id(req, tag == 0x02 ? "uid_map" : "gid_map", id, &id)) < 0)
			return r;
		memcpy(v + off + 4, &id, sizeof(id));
	}
	return 0;
}

/* A change of an extended attribute, made on the file the call names. A file of the branch's
 * filesystem takes no trusted.* or security.* attribute (file capabilities: a program linked
 * into the workdir for an exec would run with them for anyone, cow/anchor.c): which files there
 * are the branch's, a path cannot tell (another mount of it). */
int fs_meta_xattr(struct supervisor *sv, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp)
{
	char name[XATTR_NAME_MAX + 1], self[64];
	_cleanup_free_ char *value = NULL;
	struct stat st, up;
	struct xcall x;
	int r, of_dirfd;

	if ((r = xattr_decode(sv, req, &x)) != 0)
		return r == NOTIF_NOT_MINE ? -ENOSYS : r;
	if (x.op != X_SET && x.op != X_REMOVE)
		return -ENOSYS; /* reads are trapped for a workdir only, and answered there */
	if ((r = xattr_read_change(sv, req, &x, name, sizeof(name), &value)) < 0)
		return r; /* the kernel's checks of the name and value come first */
	if (x.op == X_SET && (x.flags & ~(XATTR_CREATE | XATTR_REPLACE)))
		return -EINVAL;
	if ((r = fs_meta_creds(sv, req)) != 1)
		return r;
	if (sv->meta.userns && (r = acl_ids_mapped(req, name, value, x.size)) < 0)
		return r;
	_cleanup_close_ int own = fs_meta_take(sv, req, x.by_fd, x.fd, x.dirfd, x.path, x.empty_ok,
					       !x.follow, &st, &of_dirfd);
	if (own < 0)
		return own;
	if (sv->cow && (!strncmp(name, "trusted.", 8) || !strncmp(name, "security.", 9)) &&
	    (cow_layer_stat(sv->cow, COW_UPPER, "", &up) < 0 || up.st_dev == st.st_dev))
		return -EPERM;
	int fl = fcntl(own, F_GETFL);
	if (of_dirfd && (fl < 0 || (fl & O_PATH)))
		return -EBADF; /* AT_EMPTY_PATH on an O_PATH descriptor: the kernel's answer */
	if (x.by_fd)	       /* by descriptor: an O_PATH one is the kernel's EBADF */
		r = x.op == X_SET ? fsetxattr(own, name, value ? value : "", x.size, x.flags)
				  : fremovexattr(own, name);
	else if (S_ISLNK(st.st_mode))
		return -EPERM; /* a symlink's attributes are not changed here (user.*: EPERM) */
	else {
		snprintf(self, sizeof(self), "/proc/self/fd/%d", own);
		r = x.op == X_SET ? setxattr(self, name, value ? value : "", x.size, x.flags)
				  : removexattr(self, name);
	}
	if (r < 0)
		return negative_errno();
	notif_answer_value(resp, 0);
	return 0;
}

/* The size of the argument inode ioctl @req reads (the kernel's copy_from_user), from the
 * caller's memory at @arg where it depends on a version byte there; 0: not made here. */
static size_t ioctl_arg_size(struct supervisor *sv, const struct seccomp_notif *sq, uint32_t req,
			     uint64_t arg)
{
	uint8_t version;

	switch (req) {
	case FS_IOC_SETFLAGS:
	case FS_IOC_SETVERSION:
	case EXT4_IOC_SETVERSION_:
		return sizeof(int); /* read as an int whatever the request's size says */
	case FS_IOC_FSSETXATTR:
		return sizeof(struct fsxattr);
	case BTRFS_IOC_SUBVOL_SETFLAGS:
		return sizeof(uint64_t);
	case FS_IOC_SETFSLABEL:
		return FSLABEL_MAX;
	case FS_IOC_SET_ENCRYPTION_POLICY:
		if (notif_mem_read(sv->listener, sq, arg, &version, 1) < 0)
			return 0;
		return version == FSCRYPT_POLICY_V1   ? sizeof(struct fscrypt_policy_v1)
		       : version == FSCRYPT_POLICY_V2 ? sizeof(struct fscrypt_policy_v2)
						      : 0;
	default: /* FS_IOC_ENABLE_VERITY: its argument points at more memory of the caller's */
		return 0;
	}
}

/* An inode ioctl (COW_INODE_IOCTLS) on the caller's descriptor, made on the supervisor's copy
 * of it, with its argument copied. */
static int inode_ioctl(struct supervisor *sv, const struct seccomp_notif *req,
		       struct seccomp_notif_resp *resp)
{
	const __u64 *a = req->data.args;
	uint32_t nr = (uint32_t)a[1];
	unsigned char arg[FSLABEL_MAX] __attribute__((aligned(8))) = { 0 };
	struct stat st;
	int r;

	size_t size = ioctl_arg_size(sv, req, nr, a[2]);
	if (!size)
		return -EOPNOTSUPP; /* not made here (what a filesystem without it says) */
	if ((r = notif_mem_read(sv->listener, req, a[2], arg, size)) < 0)
		return r;
	if ((r = fs_meta_creds(sv, req)) != 1)
		return r;
	_cleanup_close_ int own = fs_meta_take(sv, req, 1, (int)a[0], AT_FDCWD, 0, 0, 0, &st, NULL);
	if (own < 0)
		return own;
	/* Only a file's or a directory's: a device could read the request number otherwise. */
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return -ENOTTY;
	long v = ioctl(own, (unsigned long)nr, arg);
	if (v < 0)
		return negative_errno();
	notif_answer_value(resp, v);
	return 0;
}

/* file_setattr(dirfd, path, attr, size, at_flags) (6.17): the struct copied, made on the file
 * taken. */
static int file_setattr_call(struct supervisor *sv, const struct seccomp_notif *req,
			     struct seccomp_notif_resp *resp)
{
	unsigned char attr[512] __attribute__((aligned(8)));
	char self[64];
	struct stat st;
	struct path_args pa;
	int r = path_args_decode(&req->data, &pa), of_dirfd;

	if (r < 0)
		return r;
	int fl = (int)pa.flags;
	size_t size = (size_t)pa.mem_size;
	if (fl & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	if (pa.mem_size > sizeof(attr))
		return -E2BIG; /* what the supervisor copies (the kernel takes a page) */
	if (size && (r = notif_mem_read(sv->listener, req, pa.mem, attr, size)) < 0)
		return r;
	if ((r = fs_meta_creds(sv, req)) != 1)
		return r;
	_cleanup_close_ int own =
		fs_meta_take(sv, req, 0, -1, pa.dirfd, pa.path, (fl & AT_EMPTY_PATH) != 0,
			     (fl & AT_SYMLINK_NOFOLLOW) != 0, &st, &of_dirfd);
	if (own < 0)
		return own;
	/* The caller's descriptor as the kernel takes it (an O_PATH one: EBADF), else the file
	 * taken, through its magic link (a symlink opened itself is not followed further). */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", own);
	long v = of_dirfd ? syscall(SYS_file_setattr, own, "", size ? attr : NULL, size,
				    AT_EMPTY_PATH)
			  : syscall(SYS_file_setattr, AT_FDCWD, self, size ? attr : NULL, size, 0);
	if (v < 0)
		return negative_errno();
	notif_answer_value(resp, v);
	return 0;
}

int fs_meta_inode(struct supervisor *sv, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp)
{
	if (req->data.nr == SYS_file_setattr)
		return file_setattr_call(sv, req, resp);
	return inode_ioctl(sv, req, resp);
}
