/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * args: the arguments of a path call (open, stat, mkdir, rename, chmod, the xattr calls...),
 * decoded from its notification by one table that says, for each syscall, which argument holds
 * the descriptor, the name, the flags, the mode, the second name, and so on, with what the call
 * means without saying it (lstat's AT_SYMLINK_NOFOLLOW, creat's O_CREAT, rmdir's AT_REMOVEDIR).
 * Handlers read their arguments here instead of each picking positions out of args[].
 *
 * Pure: it reads nothing of the child's memory (a name, openat2's struct open_how, the
 * struct xattr_args of the *xattrat calls are addresses in the child, read by the caller with
 * child_read_path or notif_mem_read) and keeps no state.
 */
#pragma once

#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>

/* The families: calls of one family take the same handler. */
enum path_family {
	PATH_OPEN,     /* open, openat, openat2, creat */
	PATH_STAT,     /* stat, lstat, newfstatat, statx */
	PATH_ACCESS,   /* access, faccessat, faccessat2 */
	PATH_READLINK, /* readlink, readlinkat */
	PATH_MKDIR,    /* mkdir, mkdirat */
	PATH_MKNOD,    /* mknod, mknodat */
	PATH_REMOVE,   /* unlink, unlinkat, rmdir */
	PATH_RENAME,   /* rename, renameat, renameat2 */
	PATH_LINK,     /* link, linkat */
	PATH_SYMLINK,  /* symlink, symlinkat */
	PATH_TRUNCATE, /* truncate, ftruncate */
	PATH_CHDIR,    /* chdir */
	PATH_EXEC,     /* execve, execveat */
	PATH_CHMOD,    /* chmod, fchmod, fchmodat, fchmodat2 */
	PATH_CHOWN,    /* chown, lchown, fchown, fchownat */
	PATH_TIMES,    /* utime, utimes, futimesat, utimensat */
	PATH_XATTR,    /* the extended attribute calls, by name, by descriptor, and the *at forms */
	PATH_FILEATTR, /* file_getattr, file_setattr */
	PATH_WATCH,    /* inotify_add_watch, fanotify_mark */
};

/* The roles an argument plays; a row gives each role's position in args[]. */
enum path_arg {
	PATH_ARG_FD,	   /* the descriptor a call acts on: fchmod, fsetxattr, ftruncate... */
	PATH_ARG_DIRFD,	   /* the name's directory (AT_FDCWD where the call has none) */
	PATH_ARG_PATH,	   /* the name looked up */
	PATH_ARG_FLAGS,	   /* O_*, AT_*, RENAME_* (renameat2), FAN_MARK_* (fanotify_mark) */
	PATH_ARG_MODE,	   /* open's, mkdir's, mknod's, chmod's */
	PATH_ARG_DIRFD2,   /* rename's and link's second name: its directory */
	PATH_ARG_PATH2,	   /* ... and the name */
	PATH_ARG_TARGET,   /* symlink: the text the link holds (never looked up) */
	PATH_ARG_BUF,	   /* stat's buffer, readlink's, an xattr's value or list, the times */
	PATH_ARG_SIZE,	   /* the size of the buffer */
	PATH_ARG_NAME,	   /* an extended attribute's name */
	PATH_ARG_XFLAGS,   /* setxattr's XATTR_CREATE, XATTR_REPLACE */
	PATH_ARG_UID,	   /* chown's */
	PATH_ARG_GID,	   /* chown's */
	PATH_ARG_MASK,	   /* statx's mask, inotify's and fanotify's event masks */
	PATH_ARG_LENGTH,   /* truncate's */
	PATH_ARG_DEV,	   /* mknod's */
	PATH_ARG_MEM,	   /* a struct in the child that holds more arguments (enum path_mem) */
	PATH_ARG_MEM_SIZE, /* ... its size as the caller gave it */
	PATH_ARG__COUNT,
};

/* What the struct at PATH_ARG_MEM holds. */
enum path_mem {
	PATH_MEM_NONE,
	PATH_MEM_OPEN_HOW,   /* openat2: flags, mode, resolve (the call's flags are there) */
	PATH_MEM_XATTR_ARGS, /* getxattrat, setxattrat: value, size, flags */
	PATH_MEM_FILE_ATTR,  /* file_getattr, file_setattr: the attributes */
};

/* Whether the name's last component is followed when it is a symlink. */
enum path_follow {
	PATH_FOLLOW_NEVER,
	PATH_FOLLOW_ALWAYS,
	PATH_FOLLOW_AT,	       /* unless AT_SYMLINK_NOFOLLOW is in the flags */
	PATH_FOLLOW_AT_FOLLOW, /* only with AT_SYMLINK_FOLLOW (linkat) */
	PATH_FOLLOW_OPEN,      /* unless O_NOFOLLOW, or O_CREAT with O_EXCL */
	PATH_FOLLOW_INOTIFY,   /* unless IN_DONT_FOLLOW is in the mask */
	PATH_FOLLOW_FANOTIFY,  /* unless FAN_MARK_DONT_FOLLOW is in the flags */
};

/* Whether an empty name stands for the descriptor dirfd. */
enum path_empty {
	PATH_EMPTY_NEVER,
	PATH_EMPTY_ALWAYS, /* readlink, readlinkat: the kernel always looks it up so */
	PATH_EMPTY_AT,	   /* with AT_EMPTY_PATH in the flags */
};

/* How the times at PATH_ARG_BUF are laid out (NULL: now). */
enum path_times {
	PATH_TIMES_NONE,
	PATH_TIMES_UTIMBUF,  /* utime */
	PATH_TIMES_TIMEVAL,  /* utimes, futimesat: two struct timeval */
	PATH_TIMES_TIMESPEC, /* utimensat: two struct timespec */
};

/* What an extended attribute call does. */
enum path_xattr {
	PATH_XATTR_NONE,
	PATH_XATTR_SET,
	PATH_XATTR_GET,
	PATH_XATTR_LIST,
	PATH_XATTR_REMOVE,
};

/* One syscall's row. */
struct path_call {
	int nr;
	const char *name;
	enum path_family family;
	uint8_t at[PATH_ARG__COUNT]; /* position + 1 of each role in args[]; 0: none */
	uint64_t implied;	     /* flags the call means without a flags argument */
	enum path_follow follow;
	enum path_empty empty;
	enum path_mem mem;
	enum path_times times;
	enum path_xattr xattr;
	unsigned null_path_fd : 1; /* a NULL name stands for the descriptor dirfd (utimensat...) */
};

/* A path call, decoded. Addresses are the child's; values are the arguments as given, whole
 * (a handler that must see an int, as the kernel does, narrows them itself). */
struct path_args {
	const struct path_call *call;
	int by_fd;	/* the call acts on descriptor fd (fchmod, fsetxattr...), not on a name */
	int fd;		/* PATH_ARG_FD, else -1 */
	int dirfd;	/* AT_FDCWD where the call has none */
	uint64_t path;	/* 0 where the call has none */
	uint64_t flags; /* the flags argument with the row's implied ones; openat2: set by
			 * path_args_set_how once the caller read the struct (flags_in_mem) */
	uint64_t mode;
	int dirfd2;
	uint64_t path2;
	uint64_t target, buf, size, name, xflags, mask, length, dev;
	uint32_t uid, gid;
	uint64_t mem, mem_size; /* the struct call->mem says, in the child (unread) */
	uint64_t resolve;	/* openat2's RESOLVE_*, from path_args_set_how */
	int flags_in_mem;	/* the flags are in the struct at mem: not known until it is read */
	int follow;		/* whether a final symlink of path is followed (openat2: as
				 * path_args_set_how says) */
	int empty_ok;		/* whether an empty path stands for dirfd */
	int dir;		/* rmdir, unlinkat with AT_REMOVEDIR: a directory is removed */
};

/* The row of syscall @nr, or NULL when it is no path call. */
const struct path_call *path_call_of(int nr);
/* The table, for tests: row @i, or NULL past the end. */
const struct path_call *path_call_at(size_t i);

/* Decode the call in @data into @ret: 0, or -ENOSYS (@ret untouched) for a syscall that is no
 * path call. */
int path_args_decode(const struct seccomp_data *data, struct path_args *ret);
/* openat2: the flags, mode and resolve of the struct open_how the caller read from the child
 * at @pa->mem, and what they mean for following a symlink. */
void path_args_set_how(struct path_args *pa, uint64_t flags, uint64_t mode, uint64_t resolve);
