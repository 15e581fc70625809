/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-plan: the child's environment, the PATH search candidates, the trap set, and the checks
 * plan_build makes before anything runs.
 */
#include <errno.h>
#include <linux/fs.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "macro.h"
#include "plan/landlock.h"
#include "plan/plan.h"
#include "policy/rules.h"
#include "strv.h"
#include "supervisor/dispatch.h"
#include "supervisor/handlers/handlers.h"
#include "syscall-util.h"
#include "tap.h"

#define V(...) ((char **)(const char *[]){ __VA_ARGS__, NULL })

static int strv_equal(char *const *v, const char *const *want)
{
	size_t i;

	if (!v)
		return 0;
	for (i = 0; want[i]; i++)
		if (!v[i] || strcmp(v[i], want[i]) != 0)
			return 0;
	return v[i] == NULL;
}

static void dump(char *const *v)
{
	if (!v)
		diag("  (NULL vector)");
	for (size_t i = 0; v && v[i]; i++)
		diag("  [%zu] '%s'", i, v[i]);
}

#define CHECK_STRV(v, name, ...)                                                                   \
	do {                                                                                       \
		static const char *const _want[] = { __VA_ARGS__, NULL };                          \
		if (!ok(strv_equal(v, _want), "%s", name))                                         \
			dump(v);                                                                   \
	} while (0)

#define CHECK_EMPTY_STRV(v, name)                                                                  \
	do {                                                                                       \
		if (!ok((v) != NULL && (v)[0] == NULL, "%s", name))                                \
			dump(v);                                                                   \
	} while (0)

static void test_env(void)
{
	char **host = V("FOO=1", "PATH=/usr/bin:/bin", "SECRET=x", "LANG=C.UTF-8", "HOME=/root",
			"TERMINFO=/t", "TERM=xterm", "LC_ALL=C");
	struct sandlock_policy p = { 0 };
	char **env;

	env = plan_build_env(&p, host);
	CHECK_STRV(env, "no clean_env, no overrides: a copy of environ, in order", "FOO=1",
		   "PATH=/usr/bin:/bin", "SECRET=x", "LANG=C.UTF-8", "HOME=/root", "TERMINFO=/t",
		   "TERM=xterm", "LC_ALL=C");
	ok(env && env != host && env[0] != host[0], "  a deep copy");
	strv_free(env);

	p.clean_env = 1;
	env = plan_build_env(&p, host);
	CHECK_STRV(env, "clean_env keeps PATH HOME TERM LANG present (USER absent), no others",
		   "PATH=/usr/bin:/bin", "HOME=/root", "TERM=xterm", "LANG=C.UTF-8");
	ok(env && !strv_env_get(env, "SECRET") && !strv_env_get(env, "TERMINFO") &&
		   !strv_env_get(env, "LC_ALL") && !strv_env_get(env, "USER"),
	   "  SECRET, TERMINFO (prefix of TERM), LC_ALL and the absent USER are not there");
	strv_free(env);

	env = plan_build_env(&p, V("USER=u", "X=1"));
	CHECK_STRV(env, "clean_env with only USER present keeps USER", "USER=u");
	strv_free(env);

	env = plan_build_env(&p, V("X=1"));
	CHECK_EMPTY_STRV(env, "clean_env with none of the five: an empty vector, not NULL");
	strv_free(env);

	env = plan_build_env(&p, NULL);
	CHECK_EMPTY_STRV(env, "clean_env with a NULL environ: an empty vector");
	strv_free(env);

	p.env = V("HOME=/sandbox", "NEW=v=w", "EMPTY=");
	env = plan_build_env(&p, host);
	CHECK_STRV(env, "clean_env + overrides: HOME replaced in place, new ones appended in order",
		   "PATH=/usr/bin:/bin", "HOME=/sandbox", "TERM=xterm", "LANG=C.UTF-8", "NEW=v=w",
		   "EMPTY=");
	strv_free(env);

	p.clean_env = 0;
	p.env = V("SECRET=hidden", "PATH=/opt/bin");
	env = plan_build_env(&p, host);
	CHECK_STRV(env, "no clean_env + overrides: replaced in place, order of environ kept",
		   "FOO=1", "PATH=/opt/bin", "SECRET=hidden", "LANG=C.UTF-8", "HOME=/root",
		   "TERMINFO=/t", "TERM=xterm", "LC_ALL=C");
	strv_free(env);

	p.env = V("A=1");
	env = plan_build_env(&p, NULL);
	CHECK_STRV(env, "overrides over a NULL environ", "A=1");
	strv_free(env);

	p.env = NULL;
	env = plan_build_env(&p, NULL);
	CHECK_EMPTY_STRV(env, "no clean_env, NULL environ, no overrides: an empty vector");
	strv_free(env);

	/* An env: credential's variable never reaches the child: not from environ, not from
	 * clean_env's five, not from the policy's env; file: and fd: sources strip nothing. */
	p.credentials = V("api=env:SECRET", "home=env:HOME", "f=file:/run/k", "d=fd:3");
	env = plan_build_env(&p, host);
	CHECK_STRV(env, "env: credentials: SECRET and HOME stripped from environ", "FOO=1",
		   "PATH=/usr/bin:/bin", "LANG=C.UTF-8", "TERMINFO=/t", "TERM=xterm", "LC_ALL=C");
	strv_free(env);
	p.env = V("SECRET=again", "B=2");
	p.clean_env = 1;
	env = plan_build_env(&p, V("SECRET=x", "HOME=/h", "SECRET=dup", "PATH=/p"));
	CHECK_STRV(env, "  stripped under clean_env, from the policy's env, and twice over",
		   "PATH=/p", "B=2");
	strv_free(env);
	p.clean_env = 0;
	p.env = NULL;
	p.credentials = V("f=file:/run/SECRET", "d=fd:3");
	env = plan_build_env(&p, V("SECRET=x", "fd=3"));
	CHECK_STRV(env, "  without an env: credential the variable is passed", "SECRET=x", "fd=3");
	strv_free(env);
	p.credentials = NULL;

	/* The host's environ is never changed. */
	CHECK_STRV(host, "the given environ is untouched", "FOO=1", "PATH=/usr/bin:/bin",
		   "SECRET=x", "LANG=C.UTF-8", "HOME=/root", "TERMINFO=/t", "TERM=xterm",
		   "LC_ALL=C");
}

static void test_exec_paths(void)
{
	char **v;

	v = plan_exec_paths("ls", "/a:/b");
	CHECK_STRV(v, "ls with PATH /a:/b", "/a/ls", "/b/ls");
	strv_free(v);

	v = plan_exec_paths("ls", ":/b");
	CHECK_STRV(v, "a leading empty element is the cwd: plain ls", "ls", "/b/ls");
	strv_free(v);

	v = plan_exec_paths("ls", "/a::/b");
	CHECK_STRV(v, "an empty middle element", "/a/ls", "ls", "/b/ls");
	strv_free(v);

	v = plan_exec_paths("ls", "/a:");
	CHECK_STRV(v, "a trailing empty element", "/a/ls", "ls");
	strv_free(v);

	v = plan_exec_paths("ls", "");
	CHECK_STRV(v, "PATH empty: the cwd only", "ls");
	strv_free(v);

	v = plan_exec_paths("ls", "/a/");
	CHECK_STRV(v, "a trailing slash is kept as given", "/a//ls");
	strv_free(v);

	v = plan_exec_paths("./ls", "/a:/b");
	CHECK_STRV(v, "a name with '/' is itself, no search", "./ls");
	strv_free(v);

	v = plan_exec_paths("/bin/true", NULL);
	CHECK_STRV(v, "an absolute path is itself", "/bin/true");
	strv_free(v);

	v = plan_exec_paths("sub/cmd", NULL);
	CHECK_STRV(v, "a relative path with '/' is itself", "sub/cmd");
	strv_free(v);

	v = plan_exec_paths("ls", NULL);
	CHECK_STRV(v, "PATH NULL: the default search path", "/usr/local/bin/ls", "/usr/bin/ls",
		   "/bin/ls");
	strv_free(v);
}

/* How many of @p's traps are of the syscalls @nrs (in *@total, how many traps in all). */
static int count_traps(const struct sandlock_policy *p, const int *nrs, size_t n_nrs, size_t *total)
{
	struct trap traps[DISPATCH_MAX_TRAPS];
	int found = 0;

	*total = dispatch_trap_set(p, traps, DISPATCH_MAX_TRAPS);
	for (size_t i = 0; i < *total; i++)
		for (size_t j = 0; j < n_nrs; j++)
			found += traps[i].nr == nrs[j];
	return found;
}

/* The metadata calls every supervised sandbox traps (handlers/fs-meta.c): chmod, chown, lchown,
 * utime, utimes, futimesat where the ABI has them, fchmod, fchmodat, fchmodat2, fchown, fchownat,
 * utimensat, the 8 extended attribute changes, file_setattr, the 8 inode ioctls. */
#ifdef SYS_chmod
#define N_META (6 + 6 + 8 + 1 + 8)
#else
#define N_META (6 + 8 + 1 + 8)
#endif
/* The calls that change a task's credentials (setuid, setgid, setreuid, setregid, setresuid,
 * setresgid, setfsuid, setfsgid, setgroups, capset, prctl PR_CAPBSET_DROP and PR_CAP_AMBIENT). */
#define N_CREDS 12
/* What a policy of filesystem grants only traps. */
/* The calls that name another process by a pidfd, and the watches (handlers/pidfd.c, watch.c). */
#define N_PIDFD_WATCH 4
#define N_BASE (18 + N_PIDFD_WATCH + N_META + N_CREDS)

static void test_trap_set(void)
{
	struct sandlock_policy p = { 0 };
	struct trap traps[DISPATCH_MAX_TRAPS];
	size_t n = dispatch_trap_set(&p, traps, DISPATCH_MAX_TRAPS);
	int always = 0, conditional = 0, listen = 0, unix_paths = 0, netlink = 0, others = 0;
	int meta = 0, creds = 0, pidfd_watch = 0;

	for (size_t i = 0; i < n; i++) {
		int nr = traps[i].nr;
		if (dispatch_lookup(nr)->handler == handle_fs_meta)
			meta += traps[i].deny_unsupervised != 0;
		else if (dispatch_lookup(nr)->handler == handle_creds_change)
			creds += !traps[i].deny_unsupervised;
		else if (nr == SYS_process_madvise || nr == SYS_process_mrelease ||
			 nr == SYS_inotify_add_watch || nr == SYS_fanotify_mark)
			pidfd_watch += traps[i].n_conds == 0 && traps[i].deny_unsupervised;
		else if (nr == SYS_listen)
			listen += traps[i].n_conds == 0 && traps[i].deny_unsupervised;
		else if (nr == SYS_connect)
			unix_paths += traps[i].n_conds == 0 && !traps[i].deny_unsupervised;
		else if (nr == SYS_socket)
			netlink += traps[i].n_conds == 2 && traps[i].cond[0].datum == AF_NETLINK &&
				   traps[i].cond[1].datum == NETLINK_ROUTE;
		else if (nr == SYS_bind || nr == SYS_getsockname)
			netlink += traps[i].n_conds == 0 && !traps[i].deny_unsupervised;
		else if (nr == SYS_sendto)
			unix_paths += traps[i].n_conds == 1 && traps[i].cond[0].arg == 4 &&
				      !traps[i].deny_unsupervised;
		else if (nr == SYS_sendmsg || nr == SYS_sendmmsg)
			unix_paths += !traps[i].deny_unsupervised;
		else if (nr == SYS_uname || nr == SYS_setsid || nr == SYS_setpgid)
			always += traps[i].n_conds == 0 && !traps[i].deny_unsupervised;
		else if (nr == SYS_prlimit64 || nr == SYS_setpriority || nr == SYS_ioprio_set ||
			 nr == SYS_sched_setaffinity || nr == SYS_sched_setscheduler ||
			 nr == SYS_sched_setparam || nr == SYS_sched_setattr)
			conditional += traps[i].n_conds > 0 && traps[i].deny_unsupervised;
		else
			others++;
		ok(dispatch_lookup(nr) != NULL, "trap %d has a handler", nr);
	}
	is_int(always, 3,
	       "uname, setsid, setpgid are trapped unconditionally, allowed unsupervised");
	is_int(conditional, 7,
	       "the 7 calls on another process are trapped only when naming one, denied "
	       "unsupervised");
	is_int(listen, 1, "listen, since TCP bind is restricted, denied unsupervised");
	is_int(unix_paths, 4,
	       "connect, sendto with an address, sendmsg, sendmmsg: a named UNIX socket needs a "
	       "write grant (allowed unsupervised)");
	is_int(pidfd_watch, N_PIDFD_WATCH,
	       "process_madvise, process_mrelease, inotify_add_watch, fanotify_mark: denied "
	       "unsupervised");
	is_int(netlink, 3,
	       "socket(AF_NETLINK, NETLINK_ROUTE), bind, getsockname: the virtual route socket");
	is_int(meta, N_META,
	       "the metadata calls, in every supervised sandbox, denied unsupervised");
	is_int(creds, N_CREDS, "the calls that change credentials, allowed unsupervised");
	is_int(others, 0, "and nothing else (a filesystem-only policy traps nothing more)");
	is_int(n, N_BASE, "the base traps and the metadata calls");

	/* Network rules add their traps; bind open to every port drops listen's. */
	char star[] = "*", cidr[] = "tcp://10.0.0.0/8:443";
	char *any[] = { star, NULL }, *ip[] = { cidr, NULL };
	struct sandlock_policy open_bind = { .net_allow_bind = any };
	struct sandlock_policy onbehalf = { .net_allow = ip };
	size_t n_open = dispatch_trap_set(&open_bind, traps, DISPATCH_MAX_TRAPS);
	int has_listen = 0, has_sendmsg = 0;
	for (size_t i = 0; i < n_open; i++)
		has_listen |= traps[i].nr == SYS_listen;
	is_int(has_listen, 0, "net_allow_bind [\"*\"]: listen is not trapped");
	size_t n_ob = dispatch_trap_set(&onbehalf, traps, DISPATCH_MAX_TRAPS);
	is_int(n_ob, N_BASE, "a TCP rule to a CIDR: nothing more (connect is trapped anyway)");
	char udp[] = "udp://10.0.0.1:53";
	char *udps[] = { udp, NULL };
	struct sandlock_policy checked = { .net_allow = udps };
	size_t n_udp = dispatch_trap_set(&checked, traps, DISPATCH_MAX_TRAPS);
	for (size_t i = 0; i < n_udp; i++)
		has_sendmsg += traps[i].nr == SYS_sendmsg || traps[i].nr == SYS_sendmmsg;
	ok(has_sendmsg == 2 && n_udp == N_BASE,
	   "a checked UDP rule: sendmsg and sendmmsg, as always");
	ok(!dispatch_lookup(SYS_read), "dispatch_lookup(read) is NULL (control)");
	/* port_remap: getpeername (virtual ports) and the opens (/proc/net/tcp, tcp6). */
	struct sandlock_policy remap = { .port_remap = 1 };
	size_t n_remap = dispatch_trap_set(&remap, traps, DISPATCH_MAX_TRAPS);
	int remap_extra = 0;
	for (size_t i = 0; i < n_remap; i++)
		remap_extra += traps[i].nr == SYS_getpeername || traps[i].nr == SYS_openat ||
			       traps[i].nr == SYS_openat2 || traps[i].nr == SYS_open;
	is_int(remap_extra, 4, "port_remap traps getpeername, open, openat, openat2");
	is_int(n_remap, N_BASE + 4, "  and nothing else more");
	/* max_processes: fork, vfork, and clone making a process (one masked condition). */
	struct sandlock_policy procs = { .max_processes = { .set = 1, .v = 4 } };
	size_t n_procs = dispatch_trap_set(&procs, traps, DISPATCH_MAX_TRAPS);
	int forks = 0;
	for (size_t i = 0; i < n_procs; i++)
		forks += (traps[i].nr == SYS_clone && traps[i].n_conds == 1 &&
			  traps[i].cond[0].op == SCMP_CMP_MASKED_EQ &&
			  (traps[i].cond[0].datum & CLONE_THREAD) &&
			  traps[i].cond[0].datum_b == 0) ||
			 traps[i].nr == SYS_fork || traps[i].nr == SYS_vfork;
	is_int(forks, 3, "max_processes traps fork, vfork, and clone without CLONE_THREAD");
	is_int(n_procs, N_BASE + 3, "  and nothing else more");
}

/* The traps of the features that add many: fs_denied in a writable grant, deterministic_dirs,
 * random_seed, time_start, workdir. */
static void test_trap_set_features(void)
{
	struct sandlock_policy p = { 0 };

	/* A denied path inside a writable grant: the calls that create, remove, rename, link,
	 * truncate and open there, and landlock_restrict_self. */
	char dir[] = "/tmp/test-plan-XXXXXX", secret[64], other[64];
	ok(mkdtemp(dir) != NULL, "a writable directory");
	snprintf(secret, sizeof(secret), "%s/secret", dir);
	snprintf(other, sizeof(other), "/tmp/not-%s", dir + 5);
	char *wr[] = { dir, NULL }, *inside[] = { secret, NULL }, *outside[] = { other, NULL };
	struct trap big[DISPATCH_MAX_TRAPS];
	struct sandlock_policy w = { .fs_write = wr, .fs_deny = inside };
	size_t n_w = dispatch_trap_set(&w, big, DISPATCH_MAX_TRAPS);
	static const int fs_calls[] = {
		SYS_creat,    SYS_mkdir,     SYS_mknod,	    SYS_symlink,
		SYS_unlink,   SYS_rmdir,     SYS_rename,    SYS_link,
		SYS_mkdirat,  SYS_mknodat,   SYS_symlinkat, SYS_unlinkat,
		SYS_renameat, SYS_renameat2, SYS_linkat,    SYS_truncate,
		SYS_open,     SYS_openat,    SYS_openat2,   SYS_landlock_restrict_self,
		SYS_umask
	};
	size_t found = 0;
	for (size_t i = 0; i < n_w; i++)
		for (size_t j = 0; j < ELEMENTSOF(fs_calls); j++)
			found += big[i].nr == fs_calls[j] && big[i].n_conds == 0;
	is_int(found, ELEMENTSOF(fs_calls),
	       "fs_denied in a writable grant traps the 16 path calls, the opens, "
	       "landlock_restrict_self and umask (the creates' masks)");
	is_int(n_w, N_BASE + ELEMENTSOF(fs_calls), "  and nothing else more");
	struct sandlock_policy w_out = { .fs_write = wr, .fs_deny = outside };
	is_int(dispatch_trap_set(&w_out, big, DISPATCH_MAX_TRAPS), N_BASE,
	       "fs_denied outside the writable grant: nothing more (control)");
	struct sandlock_policy w_unsup = { .fs_write = wr, .fs_deny = inside, .no_supervisor = 1 };
	static const int mkdirat_openat[] = { SYS_mkdirat, SYS_openat };
	size_t total;
	is_int(count_traps(&w_unsup, mkdirat_openat, ELEMENTSOF(mkdirat_openat), &total), 0,
	       "no_supervisor: none of them (the policy is refused)");
	rmdir(dir);

	/* deterministic_dirs: the listings, sorted by the supervisor. */
	struct sandlock_policy dd = { .deterministic_dirs = 1 };
	static const int dents[] = { SYS_getdents64, SYS_getdents };
	is_int(count_traps(&dd, dents, ELEMENTSOF(dents), &total), 2,
	       "deterministic_dirs traps getdents64 and getdents");
	is_int(total, N_BASE + 2, "  and nothing else more");
	dd.no_supervisor = 1;
	is_int(count_traps(&dd, dents, ELEMENTSOF(dents), &total), 0,
	       "  not without a supervisor (refused then)");

	/* random_seed: getrandom, and the opens (the random devices). */
	struct sandlock_policy seeded = { .random_seed = { .set = 1, .v = 3 } };
	static const int rnd[] = { SYS_getrandom, SYS_openat };
	is_int(count_traps(&seeded, rnd, ELEMENTSOF(rnd), &total), 2,
	       "random_seed traps getrandom and the opens");
	is_int(total, N_BASE + 4, "  and nothing else more (open, openat2 too)");

	/* time_start: the wall clocks (four clock_gettime entries, one per clock), the calls at a
	 * program's start, the absolute deadlines; nothing without it (control: p above). */
	char start[] = "2000-01-01T00:00:00Z";
	struct sandlock_policy timed = { .time_start = start };
	static const int clocks[] = { SYS_clock_gettime, SYS_gettimeofday, SYS_time,
				      SYS_set_tid_address, SYS_arch_prctl };
	is_int(count_traps(&timed, clocks, ELEMENTSOF(clocks), &total), 8,
	       "time_start traps clock_gettime of 4 clocks, gettimeofday, time, set_tid_address, "
	       "arch_prctl(ARCH_SET_FS)");
	is_int(total, N_BASE + 8 + 8, "  and the 8 calls with absolute deadlines");
	is_int(count_traps(&p, clocks, ELEMENTSOF(clocks), &total), 0, "  none of them without it");

	/* workdir: the calls that take a name (fstat excepted), chdir, getcwd, exec; the writes
	 * only with max_disk. */
	char wdir[] = "/tmp";
	struct sandlock_policy cw = { .workdir = wdir };
	static const int names[] = { SYS_stat,	   SYS_newfstatat, SYS_statx,	   SYS_access,
				     SYS_readlink, SYS_chdir,	   SYS_getcwd,	   SYS_execve,
				     SYS_fchmod,   SYS_utimensat,  SYS_getdents64, SYS_umask };
	static const int writes[] = { SYS_write, SYS_pwrite64, SYS_ftruncate, SYS_io_setup };
	is_int(count_traps(&cw, names, ELEMENTSOF(names), &total), ELEMENTSOF(names),
	       "workdir traps the name calls, chdir, getcwd, exec, the metadata calls, getdents, "
	       "umask");
	/* Attribute changes: the newer syscalls (by number where the headers lack them) and the
	 * flag ioctls, each on the low 32 bits of the request only. */
	static const int attrs[] = { SYS_fchmodat2,    SYS_setxattr,   SYS_fsetxattr,
				     SYS_lremovexattr, SYS_setxattrat, SYS_removexattrat,
				     SYS_file_setattr, SYS_getxattr,   SYS_llistxattr,
				     SYS_getxattrat };
	is_int(count_traps(&cw, attrs, ELEMENTSOF(attrs), &total), ELEMENTSOF(attrs),
	       "  fchmodat2, the xattr calls (the at forms too; not fgetxattr), file_setattr");
	struct trap all[DISPATCH_MAX_TRAPS];
	size_t n_all = dispatch_trap_set(&cw, all, DISPATCH_MAX_TRAPS);
	int ioctls = 0;
	for (size_t i = 0; i < n_all; i++)
		ioctls += all[i].nr == SYS_ioctl && all[i].n_conds == 1 &&
			  all[i].cond[0].op == SCMP_CMP_MASKED_EQ &&
			  all[i].cond[0].datum == 0xffffffff &&
			  (all[i].cond[0].datum_b == FS_IOC_SETFLAGS ||
			   all[i].cond[0].datum_b == FS_IOC_FSSETXATTR);
	is_int(ioctls, 2, "  ioctl FS_IOC_SETFLAGS and FS_IOC_FSSETXATTR, on the low 32 bits");
	static const int fd_reads[] = { SYS_fgetxattr, SYS_flistxattr };
	is_int(count_traps(&cw, fd_reads, ELEMENTSOF(fd_reads), &total), 0,
	       "  not fgetxattr, flistxattr (the descriptor's file is its layer's)");
	is_int(count_traps(&p, attrs, ELEMENTSOF(attrs), &total), 7,
	       "  without it the 7 changes (every sandbox's), not the reads");
	is_int(count_traps(&cw, writes, ELEMENTSOF(writes), &total), 0,
	       "  not the writes without max_disk");
	is_int(count_traps(&p, names, ELEMENTSOF(names), &total), 2,
	       "  none of them without it but fchmod and utimensat (every sandbox's)");
	cw.max_disk = (struct opt_u64){ .set = 1, .v = 1024 };
	is_int(count_traps(&cw, writes, ELEMENTSOF(writes), &total), ELEMENTSOF(writes),
	       "  with max_disk, the writes (and io_setup, refused)");
	cw.no_supervisor = 1;
	is_int(count_traps(&cw, names, ELEMENTSOF(names), &total), 2,
	       "  not without a supervisor (refused then), but fchmod and utimensat (denied)");

	struct trap small[2];
	is_int(dispatch_trap_set(&p, small, 2), 2, "a short array: at most max written");
	is_int(dispatch_trap_set(&p, small, 0), 0, "max 0: nothing written");
}

static void test_plan_build(void)
{
	if (landlock_abi() < 0) {
		diag("Landlock unavailable: plan_build checks skipped");
		return;
	}
	struct sandlock_policy p = { 0 };
	struct plan plan;
	struct sandlock_error *e = NULL;
	for (uint32_t i = 0; i < SANDLOCK_PROTECTION_COUNT; i++)
		p.protection[i] = SANDLOCK_PROTECTION_DEGRADED;

	is_int(plan_build(&p, (const char *const[]){ NULL }, 0, &plan, &e), -EINVAL,
	       "plan_build with an empty argv is -EINVAL");
	is_str(e ? e->message : NULL, "no command to run", "  message");
	error_free(e);
	e = NULL;
	is_int(plan_build(&p, (const char *const[]){ "", NULL }, 0, &plan, &e), -ENOENT,
	       "plan_build with an empty command name is -ENOENT");
	error_free(e);
	e = NULL;

	p.no_supervisor = 1;
	p.name = (char *)"box";
	is_int(plan_build(&p, (const char *const[]){ "true", NULL }, 0, &plan, &e), -EINVAL,
	       "no_supervisor with a name is -EINVAL");
	ok(e && strstr(e->message, "no_supervisor") && strstr(e->message, "name"),
	   "  the message names no_supervisor and name");
	error_free(e);
	e = NULL;

	p.name = NULL;
	int r = plan_build(&p, (const char *const[]){ "true", "x", NULL }, 0, &plan, &e);
	if (ok(r == 0, "control: no_supervisor without a name builds")) {
		ok(plan.ruleset_fd >= 0, "  a ruleset fd");
		ok(plan.prog.len > 0 && plan.prog.filter, "  a BPF program");
		is_int(plan.supervised, 0, "  unsupervised");
		CHECK_STRV(plan.argv, "  argv copied", "true", "x");
		ok(plan.exec_paths && plan.exec_paths[0] && strchr(plan.exec_paths[0], '/'),
		   "  exec candidates from PATH");
		ok(plan.sh_argv && strcmp(plan.sh_argv[0], "/bin/sh") == 0 &&
			   plan.sh_argv[1] == NULL && plan.sh_argv[2] == plan.argv[1],
		   "  sh_argv is /bin/sh, <path slot>, argv[1..]");
		plan_done(&plan);
		ok(plan.ruleset_fd == -1 && plan.argv == NULL && plan.prog.filter == NULL,
		   "  plan_done releases everything");
	} else
		diag("  %d %s", r, e ? e->message : "");
	error_free(e);
	e = NULL;

	/* sendmsg is trapped in every supervised sandbox, and the launch's own carries a flag
	 * the filter leaves untrapped: the listener goes by number only where that flag is
	 * refused already (a sandlock nested in a sandbox), whatever else traps sendmsg. */
	char udp[] = "udp://127.0.0.1:7999";
	char *udps[] = { udp, NULL };
	const int sendmsg_nr[] = { SYS_sendmsg };
	size_t total;
	p.no_supervisor = 0;
	for (int k = 0; k < 2; k++) {
		p.net_allow = k ? udps : NULL;
		int traps_it = count_traps(&p, sendmsg_nr, 1, &total) > 0;
		r = plan_build(&p, (const char *const[]){ "true", NULL }, 0, &plan, &e);
		if (ok(r == 0, "a supervised plan %s builds",
		       k ? "with a UDP rule" : "(control)")) {
			ok(traps_it, "  sendmsg is trapped");
			is_int(plan.launch_flag_refused, 0, "  the launch's flag works here");
			is_int(plan.listener_by_number, 0,
			       "  the listener goes by SCM_RIGHTS (not by number)");
			plan_done(&plan);
		} else
			diag("  %d %s", r, e ? e->message : "");
		error_free(e);
		e = NULL;
		if (k)
			ok(traps_it, "  a UDP rule traps sendmsg");
	}
}

/* A policy with the network rules @allow and @deny (NULL: none) set as a user would. */
static struct sandlock_policy *net_policy(char *const *allow, char *const *deny)
{
	struct sandlock_policy *p = policy_new();

	for (size_t i = 0; p && allow && allow[i]; i++)
		if (sandlock_policy_set(p, "net_allow", allow[i], NULL) < 0)
			p = (policy_free(p), NULL);
	for (size_t i = 0; p && deny && deny[i]; i++)
		if (sandlock_policy_set(p, "net_deny", deny[i], NULL) < 0)
			p = (policy_free(p), NULL);
	return p;
}

/* Which network rules need what: the classes, and the policy predicates built on them. */
static void test_net_classes(void)
{
	char a[] = "tcp://*:443", b[] = "tcp://:80,8080", c[] = "tcp://10.0.0.0/8:443",
	     d[] = "tcp://api.example.com:443", e[] = ":443", f[] = "udp://1.1.1.1:53",
	     g[] = "icmp://*", star[] = "*", port[] = "8080";
	char *direct[] = { a, b, NULL }, *ip[] = { a, c, NULL }, *host[] = { d, NULL },
	     *bare[] = { a, e, NULL }, *udp[] = { f, NULL }, *icmp[] = { g, NULL };

	char h[] = "udp://*:*", i[] = "tcp://127.0.0.1", bare_ip[] = "127.0.0.1:53";
	char *udp_open[] = { a, h, NULL }, *mixed[] = { h, i, NULL },
	     *bare_one[] = { bare_ip, NULL }, *deny[] = { i, NULL };
	struct net_needs n;

	ok(net_rules_needs(NULL, NULL, &n) == 0 && !n.onbehalf && !n.sockets, "no rules: nothing");
	ok(net_rules_needs(direct, NULL, &n) == 0 && !n.onbehalf && !n.sockets,
	   "tcp:// to any host: Landlock alone");
	ok(net_rules_needs(ip, NULL, &n) == 0 && n.onbehalf && !n.dgram_checked,
	   "a CIDR among them: connects on behalf, no datagram sockets");
	ok(net_rules_needs(host, NULL, &n) == 0 && n.onbehalf, "a hostname: on behalf");
	ok(net_rules_needs(bare, NULL, &n) == 0 && n.sockets == NET_PROTO_UDP && n.onbehalf &&
		   n.dgram_checked,
	   "a bare :443 rule: UDP sockets, checked (port 443 only)");
	ok(net_rules_needs(udp, NULL, &n) == 0 && n.sockets == NET_PROTO_UDP && n.dgram_checked,
	   "udp://1.1.1.1:53: UDP sockets, checked");
	ok(net_rules_needs(icmp, NULL, &n) == 0 && n.sockets == NET_PROTO_ICMP && !n.onbehalf,
	   "icmp://*: ping sockets, open: nothing trapped");
	ok(net_rules_needs(udp_open, NULL, &n) == 0 && n.sockets == NET_PROTO_UDP && !n.onbehalf,
	   "tcp://*:443 and udp://*:*: Landlock and open UDP, nothing on behalf");
	ok(net_rules_needs(mixed, NULL, &n) == 0 && n.onbehalf && !n.dgram_checked,
	   "udp://*:* with a TCP rule to an IP: connects on behalf, sends not checked");
	ok(net_rules_needs(bare_one, NULL, &n) == 0 && n.sockets == NET_PROTO_UDP &&
		   n.dgram_checked,
	   "a bare IP rule: UDP too");
	ok(net_rules_needs(NULL, deny, &n) == 0 && n.sockets == NET_PROTO_UDP && n.onbehalf &&
		   n.dgram_checked,
	   "a deny list alone: TCP and UDP allowed but the denied, all checked");
	ok(net_rules_needs(udp_open, deny, &n) == 0 && n.dgram_checked,
	   "a deny rule closes the open UDP rule");

	/* The policy holds its rules parsed when set: these go through the setters. */
	struct sandlock_policy *q = net_policy(direct, NULL);
	ok(q && !policy_net_onbehalf(q), "direct rules: no connect trap");
	policy_free(q);
	q = net_policy(ip, NULL);
	ok(q && policy_net_onbehalf(q), "a CIDR rule: connect trapped");
	policy_free(q);
	char deny_ip[] = "10.0.0.1", *deny_ips[] = { deny_ip, NULL };
	q = net_policy(direct, deny_ips);
	ok(q && policy_net_onbehalf(q), "a deny rule: connect trapped");
	policy_free(q);
	q = net_policy(host, NULL);
	ok(q && policy_net_hosts(q), "a hostname: /etc/hosts served");
	policy_free(q);
	q = net_policy(ip, NULL);
	ok(q && !policy_net_hosts(q), "no hostname: opens not trapped (control)");
	policy_free(q);

	char *any[] = { star, NULL }, *one[] = { port, NULL };
	struct sandlock_policy p = { 0 };
	ok(policy_bind_restricted(&p), "no bind rule: bind restricted (listen trapped)");
	p.net_allow_bind = any;
	ok(!policy_bind_restricted(&p), "allow_bind *: open");
	p.net_deny_bind = one;
	ok(policy_bind_restricted(&p), "* with a deny list: restricted");
	p = (struct sandlock_policy){ .net_allow_bind = one };
	ok(policy_bind_restricted(&p), "a port list: restricted");

	struct net_rule r = { 0 }, pin = { 0 };
	char err[128];
	const uint8_t v4[4] = { 192, 0, 2, 7 }, other[4] = { 192, 0, 2, 8 };
	ok(net_rule_parse("tcp://api.example.com:443,8443", NET_RULE_ALLOW, &r, err, sizeof(err)) ==
			   0 &&
		   net_rule_pinned(&r, AF_INET, v4, &pin) == 0,
	   "a host rule pinned to one address");
	ok(net_rule_match(&pin, NET_PROTO_TCP, AF_INET, v4, 8443) &&
		   !net_rule_match(&pin, NET_PROTO_TCP, AF_INET, other, 443) &&
		   !net_rule_match(&pin, NET_PROTO_TCP, AF_INET, v4, 80) &&
		   !net_rule_match(&r, NET_PROTO_TCP, AF_INET, v4, 443),
	   "  matches that address on its ports only (the host rule itself matches nothing)");
	net_rule_done(&r);
	net_rule_done(&pin);
}

/* The typed rules follow the text through set, copy and clear; "*" is net_rule_everything. */
static void test_policy_net(void)
{
	char a[] = "tcp://10.0.0.0/8:443", b[] = "tcp://api.example.com:443",
	     dup[] = "TCP://10.0.0.0/8:443";
	char *allow[] = { a, b, dup, NULL };
	struct sandlock_policy *p = net_policy(allow, NULL), *c = p ? policy_copy(p) : NULL;
	struct net_rule star = { 0 }, every;
	char err[128];

	if (!ok(p && c, "a policy with two rules (and a second spelling of one) and its copy"))
		goto out;
	is_int((int)p->net.n_allow, 2, "  two typed rules, one per entry of the text list");
	ok(p->net.allow[0].kind == NET_TARGET_IP && p->net.allow[0].prefix == 8 &&
		   p->net.allow[1].kind == NET_TARGET_HOST &&
		   strcmp(p->net.allow[1].host, "api.example.com") == 0,
	   "  in the order set, as parsed");
	ok(p->net.needs.onbehalf && p->net.hosts && !p->net.needs.sockets,
	   "  the summary: on behalf, a host, TCP only");
	ok(c->net.n_allow == 2 && c->net.allow != p->net.allow &&
		   net_rule_equal(&c->net.allow[1], &p->net.allow[1]) && c->net.hosts,
	   "  the copy holds rules of its own, equal");
	sandlock_policy_clear(c, "net_allow");
	ok(!c->net.n_allow && !c->net.allow && !c->net.needs.onbehalf && !c->net.hosts &&
		   !c->net_allow,
	   "  cleared: no rule, no text, nothing needed");
	is_int(sandlock_policy_set(c, "net_deny", "10.1.0.0/16", NULL), 0, "a deny rule alone");
	ok(c->net.n_deny == 1 && c->net.needs.onbehalf && c->net.needs.dgram_checked &&
		   c->net.needs.sockets == NET_PROTO_UDP,
	   "  allows the rest (TCP and UDP), every connect and send checked");
	ok(sandlock_policy_set(c, "net_allow", "bad rule", NULL) < 0 && !c->net.n_allow &&
		   !c->net_allow,
	   "a rule refused: neither text nor typed rule");
out:
	ok(net_rule_parse("*", NET_RULE_ALLOW, &star, err, sizeof(err)) == 0, "\"*\" parses");
	net_rule_everything(&every);
	ok(net_rule_equal(&star, &every), "net_rule_everything is the rule \"*\" parses to");
	net_rule_done(&star);
	policy_free(p);
	policy_free(c);
}

int main(void)
{
	test_net_classes();
	test_policy_net();
	test_env();
	test_exec_paths();
	test_trap_set();
	test_trap_set_features();
	test_plan_build();
	return done_testing();
}
