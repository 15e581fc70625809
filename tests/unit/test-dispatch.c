/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-dispatch: the routing table (plan/routes.def, supervisor/dispatch.c). For representative
 * syscalls, the handlers a row names and whether its workdir call may run during a copy-up;
 * every row of one syscall routes it alike (lookup is by number, the kernel's filter decides
 * which calls arrive).
 */
#include <fcntl.h>
#include <sys/syscall.h>

#include "supervisor/dispatch.h"
#include "supervisor/handlers/handlers.h"
#include "syscall-util.h"
#include "tap.h"

static void routes_to(int nr, notif_handler_t workdir, notif_handler_t handler, const char *name)
{
	const struct route *rt = dispatch_lookup(nr);
	ok(rt && rt->workdir == workdir && rt->handler == handler, "%s: its handlers", name);
}

static int keeps(int nr, uint64_t a1, uint64_t a2)
{
	struct seccomp_notif req = { .data = { .nr = nr, .args = { 0, a1, a2 } } };
	return dispatch_keeps_tree(dispatch_lookup(nr), &req);
}

int main(void)
{
	routes_to(SYS_openat, cow_open_nr, handle_open, "openat");
	routes_to(SYS_openat2, cow_open_nr, handle_open, "openat2");
	routes_to(SYS_newfstatat, cow_stat, handle_outside_workdir, "newfstatat");
	routes_to(SYS_faccessat2, cow_access, handle_outside_workdir, "faccessat2");
	routes_to(SYS_getdents64, cow_getdents, handle_getdents, "getdents64");
	routes_to(SYS_mkdirat, cow_mkdir_call, handle_fs_create, "mkdirat");
	routes_to(SYS_unlinkat, cow_remove_call, handle_fs_remove, "unlinkat");
	routes_to(SYS_renameat2, cow_rename_call, handle_fs_rename, "renameat2");
	routes_to(SYS_truncate, cow_truncate_call, handle_fs_truncate, "truncate");
	routes_to(SYS_fchmodat, cow_meta, handle_fs_meta, "fchmodat");
	routes_to(SYS_setxattr, cow_xattr, handle_fs_meta, "setxattr");
	routes_to(SYS_getxattr, cow_xattr, handle_outside_workdir, "getxattr");
	routes_to(SYS_file_setattr, cow_attr, handle_fs_meta, "file_setattr");
	routes_to(SYS_ioctl, cow_attr, handle_fs_meta, "ioctl (the inode requests)");
	routes_to(SYS_execve, cow_exec_call, handle_outside_workdir, "execve");
	routes_to(SYS_write, cow_quota_call, handle_outside_workdir, "write");
	routes_to(SYS_io_setup, NULL, handle_cow_no_aio, "io_setup: no workdir handler");
	routes_to(SYS_umask, NULL, handle_umask, "umask: no workdir handler");
	routes_to(SYS_clock_gettime, NULL, handle_clock_gettime, "clock_gettime");
	routes_to(SYS_uname, NULL, handle_uname, "uname");
	ok(!dispatch_lookup(SYS_read), "read: no route (control)");

	/* During a copy-up: reads go on, changes wait. */
	ok(keeps(SYS_newfstatat, 0, 0), "newfstatat keeps the tree");
	ok(keeps(SYS_getdents64, 0, 0), "getdents64 keeps the tree");
	ok(keeps(SYS_getcwd, 0, 0), "getcwd keeps the tree");
	ok(keeps(SYS_write, 0, 0), "write (max_disk) keeps the tree");
	ok(keeps(SYS_getxattr, 0, 0), "getxattr keeps the tree");
	ok(!keeps(SYS_setxattr, 0, 0), "setxattr may change it");
	ok(!keeps(SYS_chdir, 0, 0), "chdir may change it (an anchor)");
	ok(!keeps(SYS_execve, 0, 0), "execve may change it (a link)");
	ok(!keeps(SYS_fchmodat, 0, 0), "fchmodat may change it");
	ok(!keeps(SYS_mkdirat, 0, 0), "mkdirat may change it");
	ok(keeps(SYS_openat, 0, O_RDONLY), "openat O_RDONLY keeps the tree");
	ok(!keeps(SYS_openat, 0, O_WRONLY), "openat O_WRONLY may change it");
	ok(!keeps(SYS_openat, 0, O_RDONLY | O_CREAT), "openat O_CREAT may change it");
	ok(!keeps(SYS_openat, 0, O_RDONLY | O_TRUNC), "openat O_TRUNC may change it");
	ok(!keeps(SYS_openat, O_RDONLY, O_WRONLY), "openat: its flags are the third argument");
	ok(!keeps(SYS_openat2, 0, 0), "openat2 may change it (its flags are in memory)");
#ifdef SYS_open
	ok(keeps(SYS_open, O_RDONLY, 0), "open O_RDONLY keeps the tree");
	ok(!keeps(SYS_open, O_RDWR, 0), "open O_RDWR may change it");
#endif
#ifdef SYS_creat
	routes_to(SYS_creat, cow_open_nr, handle_open, "creat");
	ok(!keeps(SYS_creat, 0, 0), "creat may change it");
#endif

	/* Every row of a syscall routes it as its first row does. */
	size_t n, bad = 0;
	const struct route *all = dispatch_routes(&n);
	for (size_t i = 0; i < n; i++) {
		const struct route *first = dispatch_lookup(all[i].nr);
		bad += first->workdir != all[i].workdir || first->handler != all[i].handler ||
		       first->flags != all[i].flags || !all[i].handler;
	}
	ok(n > 100 && n <= DISPATCH_MAX_TRAPS, "the table has its rows (%zu)", n);
	is_int(bad, 0, "rows of one syscall agree, and each has a plain handler");
	return done_testing();
}
