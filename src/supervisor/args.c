/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * args: the table of the path calls' arguments and its decoder (args.h). The positions are the
 * kernel's prototypes (syscalls(2) and each call's page); the legacy x86_64 forms (open, stat,
 * mkdir, rename, chmod, utime...) are rows only where the architecture has them. Pure: no
 * memory of the child is read here, and nothing is kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/syscall.h>

#include "macro.h"
#include "supervisor/args.h"
#include "syscall-util.h"

#ifndef SYS_file_getattr
#define SYS_file_getattr 468 /* 6.17 */
#endif

/* Role @role is argument @pos (0-based). */
#define A(role, pos) [PATH_ARG_##role] = (pos) + 1
#define ROW(n, fam, ...)                                                                           \
	{                                                                                          \
		.nr = SYS_##n, .name = #n, .family = PATH_##fam, __VA_ARGS__                       \
	}
#define AT(...) .at = { __VA_ARGS__ }

static const struct path_call calls[] = {
/* open */
#ifdef SYS_open
	ROW(open, OPEN, AT(A(PATH, 0), A(FLAGS, 1), A(MODE, 2)), .follow = PATH_FOLLOW_OPEN),
#endif
#ifdef SYS_creat
	ROW(creat, OPEN, AT(A(PATH, 0), A(MODE, 1)), .implied = O_CREAT | O_WRONLY | O_TRUNC,
	    .follow = PATH_FOLLOW_OPEN),
#endif
	ROW(openat, OPEN, AT(A(DIRFD, 0), A(PATH, 1), A(FLAGS, 2), A(MODE, 3)),
	    .follow = PATH_FOLLOW_OPEN),
	ROW(openat2, OPEN, AT(A(DIRFD, 0), A(PATH, 1), A(MEM, 2), A(MEM_SIZE, 3)),
	    .follow = PATH_FOLLOW_OPEN, .mem = PATH_MEM_OPEN_HOW),
/* stat */
#ifdef SYS_stat
	ROW(stat, STAT, AT(A(PATH, 0), A(BUF, 1)), .follow = PATH_FOLLOW_AT),
#endif
#ifdef SYS_lstat
	ROW(lstat, STAT, AT(A(PATH, 0), A(BUF, 1)), .implied = AT_SYMLINK_NOFOLLOW,
	    .follow = PATH_FOLLOW_AT),
#endif
#ifdef SYS_newfstatat
	ROW(newfstatat, STAT, AT(A(DIRFD, 0), A(PATH, 1), A(BUF, 2), A(FLAGS, 3)),
	    .follow = PATH_FOLLOW_AT, .empty = PATH_EMPTY_AT),
#endif
	ROW(statx, STAT, AT(A(DIRFD, 0), A(PATH, 1), A(FLAGS, 2), A(MASK, 3), A(BUF, 4)),
	    .follow = PATH_FOLLOW_AT, .empty = PATH_EMPTY_AT),
/* access: faccessat has no flags (the C library's flags are faccessat2's) */
#ifdef SYS_access
	ROW(access, ACCESS, AT(A(PATH, 0), A(MODE, 1)), .follow = PATH_FOLLOW_ALWAYS),
#endif
	ROW(faccessat, ACCESS, AT(A(DIRFD, 0), A(PATH, 1), A(MODE, 2)),
	    .follow = PATH_FOLLOW_ALWAYS),
	ROW(faccessat2, ACCESS, AT(A(DIRFD, 0), A(PATH, 1), A(MODE, 2), A(FLAGS, 3)),
	    .follow = PATH_FOLLOW_AT, .empty = PATH_EMPTY_AT),
/* readlink: an empty name is always the descriptor's (do_readlinkat's LOOKUP_EMPTY) */
#ifdef SYS_readlink
	ROW(readlink, READLINK, AT(A(PATH, 0), A(BUF, 1), A(SIZE, 2)), .empty = PATH_EMPTY_ALWAYS),
#endif
	ROW(readlinkat, READLINK, AT(A(DIRFD, 0), A(PATH, 1), A(BUF, 2), A(SIZE, 3)),
	    .empty = PATH_EMPTY_ALWAYS),
/* mkdir, mknod */
#ifdef SYS_mkdir
	ROW(mkdir, MKDIR, AT(A(PATH, 0), A(MODE, 1))),
#endif
	ROW(mkdirat, MKDIR, AT(A(DIRFD, 0), A(PATH, 1), A(MODE, 2))),
#ifdef SYS_mknod
	ROW(mknod, MKNOD, AT(A(PATH, 0), A(MODE, 1), A(DEV, 2))),
#endif
	ROW(mknodat, MKNOD, AT(A(DIRFD, 0), A(PATH, 1), A(MODE, 2), A(DEV, 3))),
/* unlink, rmdir */
#ifdef SYS_unlink
	ROW(unlink, REMOVE, AT(A(PATH, 0))),
#endif
	ROW(unlinkat, REMOVE, AT(A(DIRFD, 0), A(PATH, 1), A(FLAGS, 2))),
#ifdef SYS_rmdir
	ROW(rmdir, REMOVE, AT(A(PATH, 0)), .implied = AT_REMOVEDIR),
#endif
/* rename, link: the first name is the source, the second the name made */
#ifdef SYS_rename
	ROW(rename, RENAME, AT(A(PATH, 0), A(PATH2, 1))),
#endif
	ROW(renameat, RENAME, AT(A(DIRFD, 0), A(PATH, 1), A(DIRFD2, 2), A(PATH2, 3))),
	ROW(renameat2, RENAME, AT(A(DIRFD, 0), A(PATH, 1), A(DIRFD2, 2), A(PATH2, 3), A(FLAGS, 4))),
#ifdef SYS_link
	ROW(link, LINK, AT(A(PATH, 0), A(PATH2, 1))),
#endif
	ROW(linkat, LINK, AT(A(DIRFD, 0), A(PATH, 1), A(DIRFD2, 2), A(PATH2, 3), A(FLAGS, 4)),
	    .follow = PATH_FOLLOW_AT_FOLLOW, .empty = PATH_EMPTY_AT),
/* symlink: the name made is the path; the target is text */
#ifdef SYS_symlink
	ROW(symlink, SYMLINK, AT(A(TARGET, 0), A(PATH, 1))),
#endif
	ROW(symlinkat, SYMLINK, AT(A(TARGET, 0), A(DIRFD, 1), A(PATH, 2))),
	/* truncate, chdir, exec */
	ROW(truncate, TRUNCATE, AT(A(PATH, 0), A(LENGTH, 1)), .follow = PATH_FOLLOW_ALWAYS),
	ROW(ftruncate, TRUNCATE, AT(A(FD, 0), A(LENGTH, 1))),
	ROW(chdir, CHDIR, AT(A(PATH, 0)), .follow = PATH_FOLLOW_ALWAYS),
	ROW(execve, EXEC, AT(A(PATH, 0)), .follow = PATH_FOLLOW_ALWAYS),
	ROW(execveat, EXEC, AT(A(DIRFD, 0), A(PATH, 1), A(FLAGS, 4)), .follow = PATH_FOLLOW_AT,
	    .empty = PATH_EMPTY_AT),
/* chmod: fchmodat has no flags (fchmodat2 has) */
#ifdef SYS_chmod
	ROW(chmod, CHMOD, AT(A(PATH, 0), A(MODE, 1)), .follow = PATH_FOLLOW_ALWAYS),
#endif
	ROW(fchmod, CHMOD, AT(A(FD, 0), A(MODE, 1))),
	ROW(fchmodat, CHMOD, AT(A(DIRFD, 0), A(PATH, 1), A(MODE, 2)), .follow = PATH_FOLLOW_ALWAYS),
	ROW(fchmodat2, CHMOD, AT(A(DIRFD, 0), A(PATH, 1), A(MODE, 2), A(FLAGS, 3)),
	    .follow = PATH_FOLLOW_AT, .empty = PATH_EMPTY_AT),
/* chown: the legacy chown follows, lchown does not */
#ifdef SYS_chown
	ROW(chown, CHOWN, AT(A(PATH, 0), A(UID, 1), A(GID, 2)), .follow = PATH_FOLLOW_ALWAYS),
#endif
#ifdef SYS_lchown
	ROW(lchown, CHOWN, AT(A(PATH, 0), A(UID, 1), A(GID, 2)), .implied = AT_SYMLINK_NOFOLLOW,
	    .follow = PATH_FOLLOW_AT),
#endif
	ROW(fchown, CHOWN, AT(A(FD, 0), A(UID, 1), A(GID, 2))),
	ROW(fchownat, CHOWN, AT(A(DIRFD, 0), A(PATH, 1), A(UID, 2), A(GID, 3), A(FLAGS, 4)),
	    .follow = PATH_FOLLOW_AT, .empty = PATH_EMPTY_AT),
/* times: a NULL name of futimesat and utimensat is the descriptor's file (do_utimes) */
#ifdef SYS_utime
	ROW(utime, TIMES, AT(A(PATH, 0), A(BUF, 1)), .follow = PATH_FOLLOW_ALWAYS,
	    .times = PATH_TIMES_UTIMBUF),
#endif
#ifdef SYS_utimes
	ROW(utimes, TIMES, AT(A(PATH, 0), A(BUF, 1)), .follow = PATH_FOLLOW_ALWAYS,
	    .times = PATH_TIMES_TIMEVAL),
#endif
#ifdef SYS_futimesat
	ROW(futimesat, TIMES, AT(A(DIRFD, 0), A(PATH, 1), A(BUF, 2)), .follow = PATH_FOLLOW_ALWAYS,
	    .times = PATH_TIMES_TIMEVAL, .null_path_fd = 1),
#endif
	ROW(utimensat, TIMES, AT(A(DIRFD, 0), A(PATH, 1), A(BUF, 2), A(FLAGS, 3)),
	    .follow = PATH_FOLLOW_AT, .empty = PATH_EMPTY_AT, .times = PATH_TIMES_TIMESPEC,
	    .null_path_fd = 1),
	/* extended attributes: by name (l*: the link itself), by descriptor, and the *at forms
	 * (6.13), whose value, size and flags are a struct xattr_args */
	ROW(setxattr, XATTR, AT(A(PATH, 0), A(NAME, 1), A(BUF, 2), A(SIZE, 3), A(XFLAGS, 4)),
	    .follow = PATH_FOLLOW_ALWAYS, .xattr = PATH_XATTR_SET),
	ROW(lsetxattr, XATTR, AT(A(PATH, 0), A(NAME, 1), A(BUF, 2), A(SIZE, 3), A(XFLAGS, 4)),
	    .implied = AT_SYMLINK_NOFOLLOW, .follow = PATH_FOLLOW_AT, .xattr = PATH_XATTR_SET),
	ROW(fsetxattr, XATTR, AT(A(FD, 0), A(NAME, 1), A(BUF, 2), A(SIZE, 3), A(XFLAGS, 4)),
	    .xattr = PATH_XATTR_SET),
	ROW(getxattr, XATTR, AT(A(PATH, 0), A(NAME, 1), A(BUF, 2), A(SIZE, 3)),
	    .follow = PATH_FOLLOW_ALWAYS, .xattr = PATH_XATTR_GET),
	ROW(lgetxattr, XATTR, AT(A(PATH, 0), A(NAME, 1), A(BUF, 2), A(SIZE, 3)),
	    .implied = AT_SYMLINK_NOFOLLOW, .follow = PATH_FOLLOW_AT, .xattr = PATH_XATTR_GET),
	ROW(fgetxattr, XATTR, AT(A(FD, 0), A(NAME, 1), A(BUF, 2), A(SIZE, 3)),
	    .xattr = PATH_XATTR_GET),
	ROW(listxattr, XATTR, AT(A(PATH, 0), A(BUF, 1), A(SIZE, 2)), .follow = PATH_FOLLOW_ALWAYS,
	    .xattr = PATH_XATTR_LIST),
	ROW(llistxattr, XATTR, AT(A(PATH, 0), A(BUF, 1), A(SIZE, 2)),
	    .implied = AT_SYMLINK_NOFOLLOW, .follow = PATH_FOLLOW_AT, .xattr = PATH_XATTR_LIST),
	ROW(flistxattr, XATTR, AT(A(FD, 0), A(BUF, 1), A(SIZE, 2)), .xattr = PATH_XATTR_LIST),
	ROW(removexattr, XATTR, AT(A(PATH, 0), A(NAME, 1)), .follow = PATH_FOLLOW_ALWAYS,
	    .xattr = PATH_XATTR_REMOVE),
	ROW(lremovexattr, XATTR, AT(A(PATH, 0), A(NAME, 1)), .implied = AT_SYMLINK_NOFOLLOW,
	    .follow = PATH_FOLLOW_AT, .xattr = PATH_XATTR_REMOVE),
	ROW(fremovexattr, XATTR, AT(A(FD, 0), A(NAME, 1)), .xattr = PATH_XATTR_REMOVE),
	ROW(setxattrat, XATTR,
	    AT(A(DIRFD, 0), A(PATH, 1), A(FLAGS, 2), A(NAME, 3), A(MEM, 4), A(MEM_SIZE, 5)),
	    .follow = PATH_FOLLOW_AT, .empty = PATH_EMPTY_AT, .mem = PATH_MEM_XATTR_ARGS,
	    .xattr = PATH_XATTR_SET),
	ROW(getxattrat, XATTR,
	    AT(A(DIRFD, 0), A(PATH, 1), A(FLAGS, 2), A(NAME, 3), A(MEM, 4), A(MEM_SIZE, 5)),
	    .follow = PATH_FOLLOW_AT, .empty = PATH_EMPTY_AT, .mem = PATH_MEM_XATTR_ARGS,
	    .xattr = PATH_XATTR_GET),
	ROW(listxattrat, XATTR, AT(A(DIRFD, 0), A(PATH, 1), A(FLAGS, 2), A(BUF, 3), A(SIZE, 4)),
	    .follow = PATH_FOLLOW_AT, .empty = PATH_EMPTY_AT, .xattr = PATH_XATTR_LIST),
	ROW(removexattrat, XATTR, AT(A(DIRFD, 0), A(PATH, 1), A(FLAGS, 2), A(NAME, 3)),
	    .follow = PATH_FOLLOW_AT, .empty = PATH_EMPTY_AT, .xattr = PATH_XATTR_REMOVE),
	/* file_getattr, file_setattr (6.17): the struct file_attr and its size, then the flags */
	ROW(file_getattr, FILEATTR,
	    AT(A(DIRFD, 0), A(PATH, 1), A(MEM, 2), A(MEM_SIZE, 3), A(FLAGS, 4)),
	    .follow = PATH_FOLLOW_AT, .empty = PATH_EMPTY_AT, .mem = PATH_MEM_FILE_ATTR),
	ROW(file_setattr, FILEATTR,
	    AT(A(DIRFD, 0), A(PATH, 1), A(MEM, 2), A(MEM_SIZE, 3), A(FLAGS, 4)),
	    .follow = PATH_FOLLOW_AT, .empty = PATH_EMPTY_AT, .mem = PATH_MEM_FILE_ATTR),
	/* watches: the descriptor first is the inotify or fanotify instance, no file of the
	 * call's; fanotify_mark's 64-bit mask is one argument where a register holds 64 bits */
	ROW(inotify_add_watch, WATCH, AT(A(PATH, 1), A(MASK, 2)), .follow = PATH_FOLLOW_INOTIFY),
#if __SIZEOF_LONG__ == 8
	ROW(fanotify_mark, WATCH, AT(A(FLAGS, 1), A(MASK, 2), A(DIRFD, 3), A(PATH, 4)),
	    .follow = PATH_FOLLOW_FANOTIFY, .null_path_fd = 1),
#endif
};

const struct path_call *path_call_of(int nr)
{
	for (size_t i = 0; i < ELEMENTSOF(calls); i++)
		if (calls[i].nr == nr)
			return &calls[i];
	return NULL;
}

const struct path_call *path_call_at(size_t i)
{
	return i < ELEMENTSOF(calls) ? &calls[i] : NULL;
}

static int follows(const struct path_call *c, uint64_t flags, uint64_t mask)
{
	switch (c->follow) {
	case PATH_FOLLOW_ALWAYS:
		return 1;
	case PATH_FOLLOW_AT:
		return !(flags & AT_SYMLINK_NOFOLLOW);
	case PATH_FOLLOW_AT_FOLLOW:
		return (flags & AT_SYMLINK_FOLLOW) != 0;
	case PATH_FOLLOW_OPEN:
		/* O_CREAT | O_EXCL never follows: a symlink there is EEXIST */
		return !(flags & O_NOFOLLOW) && (flags & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL);
	case PATH_FOLLOW_INOTIFY:
		return !(mask & IN_DONT_FOLLOW);
	case PATH_FOLLOW_FANOTIFY:
		return !(flags & FAN_MARK_DONT_FOLLOW);
	case PATH_FOLLOW_NEVER:
	default:
		return 0;
	}
}

/* The argument of role @role, 0 where the call has none. */
static uint64_t arg_of(const struct path_call *c, const struct seccomp_data *data,
		       enum path_arg role)
{
	return c->at[role] ? data->args[c->at[role] - 1] : 0;
}

int path_args_decode(const struct seccomp_data *data, struct path_args *ret)
{
	const struct path_call *c = path_call_of(data->nr);

	if (!c)
		return -ENOSYS;
	struct path_args pa = {
		.call = c,
		.by_fd = c->at[PATH_ARG_FD] != 0,
		.fd = c->at[PATH_ARG_FD] ? (int)arg_of(c, data, PATH_ARG_FD) : -1,
		.dirfd = c->at[PATH_ARG_DIRFD] ? (int)arg_of(c, data, PATH_ARG_DIRFD) : AT_FDCWD,
		.path = arg_of(c, data, PATH_ARG_PATH),
		.flags = arg_of(c, data, PATH_ARG_FLAGS) | c->implied,
		.mode = arg_of(c, data, PATH_ARG_MODE),
		.dirfd2 = c->at[PATH_ARG_DIRFD2] ? (int)arg_of(c, data, PATH_ARG_DIRFD2) : AT_FDCWD,
		.path2 = arg_of(c, data, PATH_ARG_PATH2),
		.target = arg_of(c, data, PATH_ARG_TARGET),
		.buf = arg_of(c, data, PATH_ARG_BUF),
		.size = arg_of(c, data, PATH_ARG_SIZE),
		.name = arg_of(c, data, PATH_ARG_NAME),
		.xflags = arg_of(c, data, PATH_ARG_XFLAGS),
		.mask = arg_of(c, data, PATH_ARG_MASK),
		.length = arg_of(c, data, PATH_ARG_LENGTH),
		.dev = arg_of(c, data, PATH_ARG_DEV),
		.uid = (uint32_t)arg_of(c, data, PATH_ARG_UID),
		.gid = (uint32_t)arg_of(c, data, PATH_ARG_GID),
		.mem = arg_of(c, data, PATH_ARG_MEM),
		.mem_size = arg_of(c, data, PATH_ARG_MEM_SIZE),
		.flags_in_mem = c->mem == PATH_MEM_OPEN_HOW,
	};
	pa.follow = follows(c, pa.flags, pa.mask);
	pa.empty_ok = c->empty == PATH_EMPTY_ALWAYS ||
		      (c->empty == PATH_EMPTY_AT && (pa.flags & AT_EMPTY_PATH));
	pa.dir = c->family == PATH_REMOVE && (pa.flags & AT_REMOVEDIR);
	*ret = pa;
	return 0;
}

void path_args_set_how(struct path_args *pa, uint64_t flags, uint64_t mode, uint64_t resolve)
{
	pa->flags = flags;
	pa->mode = mode;
	pa->resolve = resolve;
	pa->follow = follows(pa->call, flags, pa->mask);
}
