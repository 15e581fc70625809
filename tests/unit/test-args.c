/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-args: the path calls' argument decoder (src/supervisor/args.c) against the kernel's
 * prototypes, written here again from the man pages (syscalls(2), and fs/xattr.c, fs/file_attr.c
 * for the calls of 6.13 and 6.17 that have none yet): every syscall of the families is known,
 * each role is the argument the prototype says and no other, the table holds no call this list
 * does not, the meaning of the flags (follow, empty name, directory removal, implied flags) is
 * the kernel's, and a syscall that is no path call is refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/syscall.h>

#include "supervisor/args.h"
#include "syscall-util.h"
#include "tap.h"

#ifndef SYS_file_getattr
#define SYS_file_getattr 468
#endif
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

/* A prototype: each argument's role, in order ("-" for one the decoder does not name). */
struct proto {
	int nr;
	const char *name;
	const char *args;
};

static const struct proto protos[] = {
#ifdef SYS_open
	{ SYS_open, "open", "path flags mode" },
#endif
#ifdef SYS_creat
	{ SYS_creat, "creat", "path mode" },
#endif
	{ SYS_openat, "openat", "dirfd path flags mode" },
	{ SYS_openat2, "openat2", "dirfd path mem memsize" },
#ifdef SYS_stat
	{ SYS_stat, "stat", "path buf" },
#endif
#ifdef SYS_lstat
	{ SYS_lstat, "lstat", "path buf" },
#endif
#ifdef SYS_newfstatat
	{ SYS_newfstatat, "newfstatat", "dirfd path buf flags" },
#endif
	{ SYS_statx, "statx", "dirfd path flags mask buf" },
#ifdef SYS_access
	{ SYS_access, "access", "path mode" },
#endif
	{ SYS_faccessat, "faccessat", "dirfd path mode" },
	{ SYS_faccessat2, "faccessat2", "dirfd path mode flags" },
#ifdef SYS_readlink
	{ SYS_readlink, "readlink", "path buf size" },
#endif
	{ SYS_readlinkat, "readlinkat", "dirfd path buf size" },
#ifdef SYS_mkdir
	{ SYS_mkdir, "mkdir", "path mode" },
#endif
	{ SYS_mkdirat, "mkdirat", "dirfd path mode" },
#ifdef SYS_mknod
	{ SYS_mknod, "mknod", "path mode dev" },
#endif
	{ SYS_mknodat, "mknodat", "dirfd path mode dev" },
#ifdef SYS_unlink
	{ SYS_unlink, "unlink", "path" },
#endif
	{ SYS_unlinkat, "unlinkat", "dirfd path flags" },
#ifdef SYS_rmdir
	{ SYS_rmdir, "rmdir", "path" },
#endif
#ifdef SYS_rename
	{ SYS_rename, "rename", "path path2" },
#endif
	{ SYS_renameat, "renameat", "dirfd path dirfd2 path2" },
	{ SYS_renameat2, "renameat2", "dirfd path dirfd2 path2 flags" },
#ifdef SYS_link
	{ SYS_link, "link", "path path2" },
#endif
	{ SYS_linkat, "linkat", "dirfd path dirfd2 path2 flags" },
#ifdef SYS_symlink
	{ SYS_symlink, "symlink", "target path" },
#endif
	{ SYS_symlinkat, "symlinkat", "target dirfd path" },
	{ SYS_truncate, "truncate", "path length" },
	{ SYS_ftruncate, "ftruncate", "fd length" },
	{ SYS_chdir, "chdir", "path" },
	{ SYS_execve, "execve", "path - -" },
	{ SYS_execveat, "execveat", "dirfd path - - flags" },
#ifdef SYS_chmod
	{ SYS_chmod, "chmod", "path mode" },
#endif
	{ SYS_fchmod, "fchmod", "fd mode" },
	{ SYS_fchmodat, "fchmodat", "dirfd path mode" },
	{ SYS_fchmodat2, "fchmodat2", "dirfd path mode flags" },
#ifdef SYS_chown
	{ SYS_chown, "chown", "path uid gid" },
#endif
#ifdef SYS_lchown
	{ SYS_lchown, "lchown", "path uid gid" },
#endif
	{ SYS_fchown, "fchown", "fd uid gid" },
	{ SYS_fchownat, "fchownat", "dirfd path uid gid flags" },
#ifdef SYS_utime
	{ SYS_utime, "utime", "path buf" },
#endif
#ifdef SYS_utimes
	{ SYS_utimes, "utimes", "path buf" },
#endif
#ifdef SYS_futimesat
	{ SYS_futimesat, "futimesat", "dirfd path buf" },
#endif
	{ SYS_utimensat, "utimensat", "dirfd path buf flags" },
	{ SYS_setxattr, "setxattr", "path name buf size xflags" },
	{ SYS_lsetxattr, "lsetxattr", "path name buf size xflags" },
	{ SYS_fsetxattr, "fsetxattr", "fd name buf size xflags" },
	{ SYS_getxattr, "getxattr", "path name buf size" },
	{ SYS_lgetxattr, "lgetxattr", "path name buf size" },
	{ SYS_fgetxattr, "fgetxattr", "fd name buf size" },
	{ SYS_listxattr, "listxattr", "path buf size" },
	{ SYS_llistxattr, "llistxattr", "path buf size" },
	{ SYS_flistxattr, "flistxattr", "fd buf size" },
	{ SYS_removexattr, "removexattr", "path name" },
	{ SYS_lremovexattr, "lremovexattr", "path name" },
	{ SYS_fremovexattr, "fremovexattr", "fd name" },
	{ SYS_setxattrat, "setxattrat", "dirfd path flags name mem memsize" },
	{ SYS_getxattrat, "getxattrat", "dirfd path flags name mem memsize" },
	{ SYS_listxattrat, "listxattrat", "dirfd path flags buf size" },
	{ SYS_removexattrat, "removexattrat", "dirfd path flags name" },
	{ SYS_file_getattr, "file_getattr", "dirfd path mem memsize flags" },
	{ SYS_file_setattr, "file_setattr", "dirfd path mem memsize flags" },
	{ SYS_inotify_add_watch, "inotify_add_watch", "- path mask" },
#if __SIZEOF_LONG__ == 8
	{ SYS_fanotify_mark, "fanotify_mark", "- flags mask dirfd path" },
#endif
};

static const char *const role_names[PATH_ARG__COUNT] = {
	[PATH_ARG_FD] = "fd",
	[PATH_ARG_DIRFD] = "dirfd",
	[PATH_ARG_PATH] = "path",
	[PATH_ARG_FLAGS] = "flags",
	[PATH_ARG_MODE] = "mode",
	[PATH_ARG_DIRFD2] = "dirfd2",
	[PATH_ARG_PATH2] = "path2",
	[PATH_ARG_TARGET] = "target",
	[PATH_ARG_BUF] = "buf",
	[PATH_ARG_SIZE] = "size",
	[PATH_ARG_NAME] = "name",
	[PATH_ARG_XFLAGS] = "xflags",
	[PATH_ARG_UID] = "uid",
	[PATH_ARG_GID] = "gid",
	[PATH_ARG_MASK] = "mask",
	[PATH_ARG_LENGTH] = "length",
	[PATH_ARG_DEV] = "dev",
	[PATH_ARG_MEM] = "mem",
	[PATH_ARG_MEM_SIZE] = "memsize",
};

/* The position of @role in @p's prototype, or -1. */
static int expected_pos(const struct proto *p, int role)
{
	char buf[128], *save = NULL;
	int i = 0;

	snprintf(buf, sizeof(buf), "%s", p->args);
	for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save), i++)
		if (strcmp(t, role_names[role]) == 0)
			return i;
	return -1;
}

/* A notification of @nr whose argument i is 0x1000 + i, with @at (if >= 0) set to @v. */
static struct seccomp_data data_of(int nr, int at, uint64_t v)
{
	struct seccomp_data d = { .nr = nr };
	for (int i = 0; i < 6; i++)
		d.args[i] = 0x1000 + (uint64_t)i;
	if (at >= 0)
		d.args[at] = v;
	return d;
}

static uint64_t want(const struct proto *p, int role, uint64_t none)
{
	int k = expected_pos(p, role);
	return k < 0 ? none : 0x1000 + (uint64_t)k;
}

static void check_row(const struct proto *p)
{
	const struct path_call *c = path_call_of(p->nr);

	if (!ok(c != NULL, "%s: known", p->name))
		return;
	is_str(c->name, p->name, "%s: its row", p->name);
	int bad = 0;
	for (int role = 0; role < PATH_ARG__COUNT; role++) {
		int got = (int)c->at[role] - 1, exp = expected_pos(p, role);
		if (got != exp) {
			diag("%s: %s at %d, expected %d", p->name, role_names[role], got, exp);
			bad++;
		}
	}
	ok(!bad, "%s: argument positions as the prototype's", p->name);

	struct seccomp_data d = data_of(p->nr, -1, 0);
	struct path_args pa;
	if (!ok(path_args_decode(&d, &pa) == 0, "%s: decoded", p->name))
		return;
	ok(pa.call == c && pa.by_fd == (expected_pos(p, PATH_ARG_FD) >= 0) &&
		   pa.fd == (int)want(p, PATH_ARG_FD, (uint64_t)-1) &&
		   pa.dirfd == (int)want(p, PATH_ARG_DIRFD, (uint64_t)AT_FDCWD) &&
		   pa.path == want(p, PATH_ARG_PATH, 0) &&
		   pa.flags == (want(p, PATH_ARG_FLAGS, 0) | c->implied) &&
		   pa.mode == want(p, PATH_ARG_MODE, 0) &&
		   pa.dirfd2 == (int)want(p, PATH_ARG_DIRFD2, (uint64_t)AT_FDCWD) &&
		   pa.path2 == want(p, PATH_ARG_PATH2, 0) &&
		   pa.target == want(p, PATH_ARG_TARGET, 0) && pa.buf == want(p, PATH_ARG_BUF, 0) &&
		   pa.size == want(p, PATH_ARG_SIZE, 0) && pa.name == want(p, PATH_ARG_NAME, 0) &&
		   pa.xflags == want(p, PATH_ARG_XFLAGS, 0) &&
		   pa.uid == (uint32_t)want(p, PATH_ARG_UID, 0) &&
		   pa.gid == (uint32_t)want(p, PATH_ARG_GID, 0) &&
		   pa.mask == want(p, PATH_ARG_MASK, 0) &&
		   pa.length == want(p, PATH_ARG_LENGTH, 0) && pa.dev == want(p, PATH_ARG_DEV, 0) &&
		   pa.mem == want(p, PATH_ARG_MEM, 0) &&
		   pa.mem_size == want(p, PATH_ARG_MEM_SIZE, 0),
	   "%s: every field its argument", p->name);
}

/* Decode @nr with argument @at set to @v. */
static struct path_args dec(int nr, int at, uint64_t v)
{
	struct seccomp_data d = data_of(nr, at, v);
	struct path_args pa = { 0 };
	if (path_args_decode(&d, &pa) < 0)
		pa.call = NULL;
	return pa;
}

static void check_follow(void)
{
	struct path_args pa;

	/* stat and lstat; the *at forms by flag */
#ifdef SYS_lstat
	pa = dec(SYS_lstat, -1, 0);
	ok(!pa.follow && pa.flags == AT_SYMLINK_NOFOLLOW && !pa.empty_ok, "lstat: not followed");
	ok(dec(SYS_stat, -1, 0).follow, "stat: followed");
#endif
	pa = dec(SYS_statx, 2, AT_SYMLINK_NOFOLLOW);
	ok(!pa.follow && !pa.empty_ok, "statx AT_SYMLINK_NOFOLLOW: not followed");
	pa = dec(SYS_statx, 2, AT_EMPTY_PATH);
	ok(pa.follow && pa.empty_ok, "statx AT_EMPTY_PATH: the descriptor's");
	/* faccessat has no flags argument; faccessat2 has */
	pa = dec(SYS_faccessat, 3, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH);
	ok(pa.follow && !pa.empty_ok && pa.flags == 0, "faccessat: a[3] is no flags");
	pa = dec(SYS_faccessat2, 3, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH);
	ok(!pa.follow && pa.empty_ok, "faccessat2: its flags");
	/* fchmodat has no flags argument; fchmodat2 has */
	pa = dec(SYS_fchmodat, 3, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH);
	ok(pa.follow && !pa.empty_ok && pa.flags == 0, "fchmodat: a[3] is no flags");
	pa = dec(SYS_fchmodat2, 3, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH);
	ok(!pa.follow && pa.empty_ok && pa.flags == (AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH),
	   "fchmodat2: its flags");
	/* chown follows, lchown does not */
#ifdef SYS_chown
	ok(dec(SYS_chown, -1, 0).follow, "chown: followed");
	pa = dec(SYS_lchown, -1, 0);
	ok(!pa.follow && pa.flags == AT_SYMLINK_NOFOLLOW, "lchown: not followed");
#endif
	pa = dec(SYS_fchownat, 4, AT_SYMLINK_NOFOLLOW);
	ok(!pa.follow && !pa.empty_ok, "fchownat AT_SYMLINK_NOFOLLOW");
	/* readlink: never followed, an empty name always the descriptor's */
	pa = dec(SYS_readlinkat, -1, 0);
	ok(!pa.follow && pa.empty_ok, "readlinkat: the link itself, empty name allowed");
	/* linkat follows only with AT_SYMLINK_FOLLOW; link never */
	pa = dec(SYS_linkat, 4, 0);
	ok(!pa.follow && !pa.empty_ok, "linkat: not followed");
	pa = dec(SYS_linkat, 4, AT_SYMLINK_FOLLOW);
	ok(pa.follow && !pa.empty_ok, "linkat AT_SYMLINK_FOLLOW: followed");
	pa = dec(SYS_linkat, 4, AT_EMPTY_PATH);
	ok(!pa.follow && pa.empty_ok, "linkat AT_EMPTY_PATH");
#ifdef SYS_link
	pa = dec(SYS_link, 4, AT_SYMLINK_FOLLOW | AT_EMPTY_PATH);
	ok(!pa.follow && !pa.empty_ok && pa.flags == 0, "link: a[4] is no flags");
#endif
	/* execve follows; execveat by flag */
	ok(dec(SYS_execve, -1, 0).follow, "execve: followed");
	pa = dec(SYS_execveat, 4, AT_SYMLINK_NOFOLLOW);
	ok(!pa.follow && !pa.empty_ok, "execveat AT_SYMLINK_NOFOLLOW");
	pa = dec(SYS_execveat, 4, AT_EMPTY_PATH);
	ok(pa.follow && pa.empty_ok, "execveat AT_EMPTY_PATH: the descriptor's");
	/* the watches */
	ok(!dec(SYS_inotify_add_watch, 2, IN_DONT_FOLLOW).follow &&
		   dec(SYS_inotify_add_watch, 2, IN_MODIFY).follow,
	   "inotify_add_watch: IN_DONT_FOLLOW");
#if __SIZEOF_LONG__ == 8
	ok(!dec(SYS_fanotify_mark, 1, FAN_MARK_ADD | FAN_MARK_DONT_FOLLOW).follow &&
		   dec(SYS_fanotify_mark, 1, FAN_MARK_ADD).follow,
	   "fanotify_mark: FAN_MARK_DONT_FOLLOW");
#endif
	/* mkdir, symlink, unlink never follow */
	ok(!dec(SYS_mkdirat, -1, 0).follow && !dec(SYS_symlinkat, -1, 0).follow &&
		   !dec(SYS_unlinkat, 2, 0).follow && !dec(SYS_renameat2, 4, 0).follow,
	   "mkdirat, symlinkat, unlinkat, renameat2: never followed");
	ok(dec(SYS_truncate, -1, 0).follow && dec(SYS_chdir, -1, 0).follow, "truncate, chdir");
}

static void check_open(void)
{
	struct path_args pa;

	pa = dec(SYS_openat, 2, O_RDONLY);
	ok(pa.follow && !pa.flags_in_mem && pa.flags == O_RDONLY, "openat: followed");
	ok(!dec(SYS_openat, 2, O_NOFOLLOW).follow, "openat O_NOFOLLOW");
	ok(!dec(SYS_openat, 2, O_CREAT | O_EXCL).follow && dec(SYS_openat, 2, O_CREAT).follow,
	   "openat O_CREAT | O_EXCL: never followed, O_CREAT alone followed");
#ifdef SYS_creat
	pa = dec(SYS_creat, -1, 0);
	ok(pa.flags == (O_CREAT | O_WRONLY | O_TRUNC) && pa.follow && pa.mode == 0x1001,
	   "creat: O_CREAT | O_WRONLY | O_TRUNC, its mode");
#endif
	pa = dec(SYS_openat2, -1, 0);
	ok(pa.flags_in_mem && pa.call->mem == PATH_MEM_OPEN_HOW && pa.mem == 0x1002 &&
		   pa.mem_size == 0x1003 && pa.flags == 0,
	   "openat2: the flags in the child's struct open_how, unread");
	path_args_set_how(&pa, O_RDWR | O_NOFOLLOW, 0640, RESOLVE_NO_SYMLINKS);
	ok(pa.flags == (O_RDWR | O_NOFOLLOW) && pa.mode == 0640 &&
		   pa.resolve == RESOLVE_NO_SYMLINKS && !pa.follow,
	   "openat2: the struct's flags, once read");
	ok(dec(SYS_openat, -1, 0).call->mem == PATH_MEM_NONE, "openat: no struct");
}

static void check_kinds(void)
{
	struct path_args pa;

	/* unlinkat removes a directory with AT_REMOVEDIR; rmdir always; unlink never */
	ok(dec(SYS_unlinkat, 2, AT_REMOVEDIR).dir && !dec(SYS_unlinkat, 2, 0).dir,
	   "unlinkat: AT_REMOVEDIR");
#ifdef SYS_rmdir
	pa = dec(SYS_rmdir, -1, 0);
	ok(pa.dir && pa.flags == AT_REMOVEDIR, "rmdir: a directory");
	ok(!dec(SYS_unlink, -1, 0).dir, "unlink: no directory");
#endif
	/* renameat2's flags; renameat has none */
	ok(dec(SYS_renameat2, 4, RENAME_NOREPLACE).flags == RENAME_NOREPLACE &&
		   dec(SYS_renameat, 4, RENAME_NOREPLACE).flags == 0,
	   "renameat2: its flags; renameat: none");
	/* the times: their layout, and which NULL name is the descriptor */
	pa = dec(SYS_utimensat, -1, 0);
	ok(pa.call->times == PATH_TIMES_TIMESPEC && pa.call->null_path_fd, "utimensat");
#ifdef SYS_utimes
	pa = dec(SYS_utimes, -1, 0);
	ok(pa.call->times == PATH_TIMES_TIMEVAL && !pa.call->null_path_fd && pa.buf == 0x1001,
	   "utimes");
	pa = dec(SYS_futimesat, -1, 0);
	ok(pa.call->times == PATH_TIMES_TIMEVAL && pa.call->null_path_fd && pa.buf == 0x1002,
	   "futimesat");
	pa = dec(SYS_utime, -1, 0);
	ok(pa.call->times == PATH_TIMES_UTIMBUF && !pa.call->null_path_fd, "utime");
#endif
	pa = dec(SYS_utimensat, 3, AT_SYMLINK_NOFOLLOW);
	ok(!pa.follow && !pa.empty_ok, "utimensat AT_SYMLINK_NOFOLLOW");
	/* truncate by name, ftruncate by descriptor */
	pa = dec(SYS_truncate, -1, 0);
	ok(pa.path == 0x1000 && pa.fd == -1 && pa.length == 0x1001, "truncate: by name");
	pa = dec(SYS_ftruncate, -1, 0);
	ok(pa.path == 0 && pa.fd == 0x1000 && pa.length == 0x1001, "ftruncate: by descriptor");
	/* the xattr calls: what each does; l* do not follow, the *at forms by flag */
	ok(dec(SYS_setxattr, -1, 0).call->xattr == PATH_XATTR_SET &&
		   dec(SYS_fgetxattr, -1, 0).call->xattr == PATH_XATTR_GET &&
		   dec(SYS_listxattrat, -1, 0).call->xattr == PATH_XATTR_LIST &&
		   dec(SYS_lremovexattr, -1, 0).call->xattr == PATH_XATTR_REMOVE,
	   "xattr: set, get, list, remove");
	ok(!dec(SYS_lsetxattr, -1, 0).follow && dec(SYS_setxattr, -1, 0).follow &&
		   !dec(SYS_getxattrat, 2, AT_SYMLINK_NOFOLLOW).follow &&
		   dec(SYS_getxattrat, 2, AT_EMPTY_PATH).empty_ok,
	   "xattr: following");
	ok(dec(SYS_getxattrat, -1, 0).call->mem == PATH_MEM_XATTR_ARGS &&
		   dec(SYS_file_setattr, -1, 0).call->mem == PATH_MEM_FILE_ATTR,
	   "getxattrat, file_setattr: their structs");
	/* the descriptors are ints, as the kernel reads them */
	pa = dec(SYS_openat, 0, (uint32_t)AT_FDCWD);
	ok(pa.dirfd == AT_FDCWD, "openat: a 32-bit AT_FDCWD");
}

int main(void)
{
	for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		check_row(&protos[i]);
	/* The table holds nothing the prototypes above do not. */
	size_t n = 0;
	for (const struct path_call *c; (c = path_call_at(n)); n++) {
		size_t j = 0;
		while (j < sizeof(protos) / sizeof(protos[0]) && protos[j].nr != c->nr)
			j++;
		ok(j < sizeof(protos) / sizeof(protos[0]), "%s: a prototype above", c->name);
		ok(path_call_of(c->nr) == c, "%s: its only row", c->name);
	}
	is_int(n, sizeof(protos) / sizeof(protos[0]), "one row per prototype");
	check_follow();
	check_open();
	check_kinds();

	/* A syscall that is no path call is refused, and leaves the result alone. */
	const int others[] = { SYS_getpid, SYS_read, SYS_ioctl, SYS_fchdir, -1, 99999 };
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		struct seccomp_data d = data_of(others[i], -1, 0);
		struct path_args pa = { .dirfd = 77 };
		is_int(path_args_decode(&d, &pa), -ENOSYS, "nr %d: no path call", others[i]);
		ok(pa.dirfd == 77 && !pa.call && !path_call_of(others[i]), "nr %d: untouched",
		   others[i]);
	}
	return done_testing();
}
