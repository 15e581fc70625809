/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dispatch: syscall number -> handler, and the policy-derived trap set.
 */
#include <fcntl.h>
#include <seccomp.h>
#include <linux/netlink.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <linux/fs.h>

#include "dispatch.h"
#include "syscall-util.h"
#include "handlers/handlers.h"
#include "macro.h"
#include "plan/landlock.h"
#include "plan/plan.h"

struct dispatch_entry {
	struct trap trap;
	notif_handler_t handler;
	/* Whether @p needs this syscall trapped; NULL: every sandbox does. */
	int (*needed)(const struct sandlock_policy *p);
};

#define EQ(a, v)                                                                                   \
	{                                                                                          \
		.arg = (a), .op = SCMP_CMP_EQ, .datum = (v)                                        \
	}

#define MASKED_EQ(a, m, v)                                                                         \
	{                                                                                          \
		.arg = (a), .op = SCMP_CMP_MASKED_EQ, .datum = (m), .datum_b = (v)                 \
	}

#define NOT_ZERO(a)                                                                                \
	{                                                                                          \
		.arg = (a), .op = SCMP_CMP_NE, .datum = 0                                          \
	}

static int port_remap(const struct sandlock_policy *p)
{
	return p->port_remap;
}

static int max_processes(const struct sandlock_policy *p)
{
	/* max_memory needs to know of new processes too (handlers/memory.c). */
	return p->max_processes.set || p->max_memory.set;
}

/* A clone that makes a process: no CLONE_THREAD, and none of the flags the filter refuses
 * (namespaces, CLONE_PARENT), so that this rule and those never match the same call. */
#define CLONE_PROCESS_MASK                                                                         \
	(CLONE_THREAD | CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC |              \
	 CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_PARENT)

static int max_memory(const struct sandlock_policy *p)
{
	return p->max_memory.set;
}

static int num_cpus(const struct sandlock_policy *p)
{
	return p->num_cpus.set;
}

static int serves_proc(const struct sandlock_policy *p)
{
	return !p->no_supervisor && landlock_grants_proc(p);
}

/* A writable grant holds a denied path (or the store root of the branches): what the carve leaves
 * out is done by the supervisor. */
static int mediates_write(const struct sandlock_policy *p)
{
	return !p->no_supervisor && p->fs_write && landlock_write_mediation(p, 0, NULL, NULL) > 0;
}

/* A workdir: its names are made in the copy-on-write branch (handlers/cow.c). */
static int cow(const struct sandlock_policy *p)
{
	return !p->no_supervisor && p->workdir;
}

/* max_disk with a workdir: what grows a file of the branch is charged first. */
static int cow_quota(const struct sandlock_policy *p)
{
	return cow(p) && p->max_disk.set;
}

static int mediates_write_or_cow(const struct sandlock_policy *p)
{
	return cow(p) || mediates_write(p);
}

static int serves_files(const struct sandlock_policy *p)
{
	return cow(p) || policy_net_hosts(p) || p->port_remap || p->num_cpus.set ||
	       p->max_memory.set || serves_proc(p) || mediates_write(p) ||
	       (!p->no_supervisor && (p->random_seed.set || p->name));
}

static int time_start(const struct sandlock_policy *p)
{
	return !p->no_supervisor && p->time_start;
}

static int random_seed(const struct sandlock_policy *p)
{
	return !p->no_supervisor && p->random_seed.set;
}

/* Listings made by the supervisor: /proc's while it is served, every one sorted under
 * deterministic_dirs. */
static int lists(const struct sandlock_policy *p)
{
	return cow(p) || serves_proc(p) || (!p->no_supervisor && p->deterministic_dirs);
}

static int serves_proc_or_write(const struct sandlock_policy *p)
{
	return serves_proc(p) || mediates_write(p);
}

/* Every sandbox traps:
 *  - uname: the virtual hostname is the sandbox's name (default sandbox-<pid>);
 *  - setsid, setpgid: the process groups the sandbox creates are recorded before they exist,
 *    so kill, timeouts and the lifeline reach descendants that leave the first group;
 *  - the calls that change another process's limits, priority or scheduling when they name
 *    another process (pid or who not 0): the kernel checks only the uid there, and Landlock
 *    does not scope them, so the supervisor limits them to the sandbox's own processes.
 *    Calls on the caller itself (0) are not trapped.
 * and listen, unless TCP bind is open to every port (below).
 * All are rare; a policy of filesystem grants only traps nothing else (but for a grant covering
 * /proc, which the supervisor then serves), and its other syscalls run at kernel speed. */
static const struct dispatch_entry table[] = {
	{ { .nr = SYS_uname }, handle_uname, NULL },
	{ { .nr = SYS_setsid }, handle_setsid, NULL },
	{ { .nr = SYS_setpgid }, handle_setpgid, NULL },
	{ { SYS_prlimit64, 2, { NOT_ZERO(0), NOT_ZERO(2) }, 1 }, handle_other_process, NULL },
	{ { SYS_setpriority, 1, { NOT_ZERO(1) }, 1 }, handle_other_process, NULL },
	{ { SYS_ioprio_set, 1, { NOT_ZERO(1) }, 1 }, handle_other_process, NULL },
	{ { SYS_sched_setaffinity, 1, { NOT_ZERO(0) }, 1 }, handle_other_process, NULL },
	{ { SYS_sched_setscheduler, 1, { NOT_ZERO(0) }, 1 }, handle_other_process, NULL },
	{ { SYS_sched_setparam, 1, { NOT_ZERO(0) }, 1 }, handle_other_process, NULL },
	{ { SYS_sched_setattr, 1, { NOT_ZERO(0) }, 1 }, handle_other_process, NULL },
	/* The calls that name another process by a pidfd (handlers/pidfd.c), and the watches
	 * on a file, which report the names made in a directory (handlers/watch.c): in every
	 * supervised sandbox (all rare), refused (EPERM) without a supervisor to check them. */
	{ { .nr = SYS_process_madvise, .deny_unsupervised = 1 }, handle_process_madvise, NULL },
	{ { .nr = SYS_process_mrelease, .deny_unsupervised = 1 }, handle_process_mrelease, NULL },
	{ { .nr = SYS_inotify_add_watch, .deny_unsupervised = 1 }, handle_inotify_add_watch, NULL },
	{ { .nr = SYS_fanotify_mark, .deny_unsupervised = 1 }, handle_fanotify_mark, NULL },
	/* connect, and sendto with an address: a named UNIX socket needs a write grant, and
	 * the network rules Landlock cannot express (policy_net_onbehalf) are checked here.
	 * Without a supervisor the kernel decides (Landlock's TCP port rules; such rules are
	 * refused then, policy_check_supervision). */
	{ { .nr = SYS_connect }, handle_connect, NULL },
	{ { SYS_sendto, 1, { NOT_ZERO(4) }, 0 }, handle_sendmsg, NULL },
	/* socket(AF_NETLINK, *, NETLINK_ROUTE), bind, getsockname: a virtual route socket that
	 * shows only lo. Without a supervisor the kernel's (the host's interfaces). */
	{ { SYS_socket, 2, { EQ(0, AF_NETLINK), EQ(2, NETLINK_ROUTE) }, 0 },
	  handle_netlink_socket,
	  NULL },
	{ { .nr = SYS_bind }, handle_bind, NULL },
	{ { .nr = SYS_getsockname }, handle_getsockname, NULL },
	/* port_remap: binds are made here, and addresses report the virtual ports. */
	{ { .nr = SYS_getpeername }, handle_getpeername, port_remap },
	/* sendmsg, sendmmsg: the address is in memory the filter cannot read, and a UNIX
	 * datagram socket honours it even when connected, so every call comes here (a named
	 * socket needs a write grant; UDP and ICMP rules are checked). The launch's own sendmsg
	 * goes with LAUNCH_SENDMSG_FLAG, which a second filter refuses once it is sent. */
	{ { SYS_sendmsg, 1, { MASKED_EQ(2, LAUNCH_SENDMSG_FLAG, 0) }, 0 }, handle_sendmsg, NULL },
	{ { .nr = SYS_sendmmsg }, handle_sendmmsg, NULL },
	/* listen, wherever TCP bind is restricted: an unbound socket's listen picks a port past
	 * Landlock's bind check. Without a supervisor listen is refused (EPERM). */
	{ { .nr = SYS_listen, .deny_unsupervised = 1 }, handle_listen, policy_bind_restricted },
/* open, openat, openat2, when a rule names a host (/etc/hosts is the names resolved at start),
 * under port_remap (/proc/net/tcp and tcp6 show the sandbox's sockets), num_cpus
 * (/proc/cpuinfo and the sysfs CPU lists show N CPUs), max_memory (/proc/meminfo), with a
 * name given (/etc/hostname is it), or with a grant covering /proc (served by the supervisor);
 * sched_getaffinity under num_cpus. Without a
 * supervisor such a policy is refused (or /proc is Landlock's), so nothing is denied here. */
#ifdef SYS_open
	{ { .nr = SYS_open }, handle_open, serves_files },
#endif
	{ { .nr = SYS_openat }, handle_open, serves_files },
	{ { .nr = SYS_openat2 }, handle_open, serves_files },
	{ { .nr = SYS_sched_getaffinity }, handle_sched_getaffinity, num_cpus },
	/* time_start (handlers/time.c): the wall clocks (an int for the kernel: compared on the
	 * low 32 bits), set_tid_address and arch_prctl(ARCH_SET_FS) (each program's vDSO clock
	 * functions made syscalls at its start: glibc and musl make both, Go's runtime the
	 * second), and absolute sleeps and timers on a wall clock. */
	{ { .nr = SYS_set_tid_address }, handle_set_tid_address, time_start },
	{ { SYS_arch_prctl, 1, { MASKED_EQ(0, 0xffffffff, 0x1002 /* ARCH_SET_FS */) }, 0 },
	  handle_set_tid_address,
	  time_start },
	{ { SYS_clock_gettime, 1, { MASKED_EQ(0, 0xffffffff, CLOCK_REALTIME) }, 0 },
	  handle_clock_gettime,
	  time_start },
	{ { SYS_clock_gettime, 1, { MASKED_EQ(0, 0xffffffff, CLOCK_REALTIME_COARSE) }, 0 },
	  handle_clock_gettime,
	  time_start },
	{ { SYS_clock_gettime, 1, { MASKED_EQ(0, 0xffffffff, CLOCK_REALTIME_ALARM) }, 0 },
	  handle_clock_gettime,
	  time_start },
	{ { SYS_clock_gettime, 1, { MASKED_EQ(0, 0xffffffff, CLOCK_TAI) }, 0 },
	  handle_clock_gettime,
	  time_start },
	{ { .nr = SYS_gettimeofday }, handle_gettimeofday, time_start },
#ifdef SYS_time
	{ { .nr = SYS_time }, handle_time, time_start },
#endif
	{ { SYS_clock_nanosleep,
	    2,
	    { MASKED_EQ(0, 0xffffffff, CLOCK_REALTIME),
	      MASKED_EQ(1, TIMER_ABSTIME, TIMER_ABSTIME) },
	    0 },
	  handle_clock_nanosleep,
	  time_start },
	{ { SYS_clock_nanosleep,
	    2,
	    { MASKED_EQ(0, 0xffffffff, CLOCK_TAI), MASKED_EQ(1, TIMER_ABSTIME, TIMER_ABSTIME) },
	    0 },
	  handle_clock_nanosleep,
	  time_start },
	{ { SYS_timerfd_settime, 1, { MASKED_EQ(1, TFD_TIMER_ABSTIME, TFD_TIMER_ABSTIME) }, 0 },
	  handle_timerfd_settime,
	  time_start },
	{ { SYS_timer_settime, 1, { MASKED_EQ(1, TIMER_ABSTIME, TIMER_ABSTIME) }, 0 },
	  handle_timer_settime,
	  time_start },
	/* futex waits with a wall-clock deadline (FUTEX_CLOCK_REALTIME; FUTEX_LOCK_PI always),
	 * and the POSIX message queues' timed calls (absolute on CLOCK_REALTIME). */
	{ { SYS_futex, 1, { MASKED_EQ(1, 256 /* FUTEX_CLOCK_REALTIME */, 256) }, 0 },
	  handle_futex,
	  time_start },
	{ { SYS_futex, 1, { MASKED_EQ(1, 0x7f, 6 /* FUTEX_LOCK_PI */) }, 0 },
	  handle_futex,
	  time_start },
	{ { SYS_mq_timedsend, 1, { NOT_ZERO(4) }, 0 }, handle_mq_timed, time_start },
	{ { SYS_mq_timedreceive, 1, { NOT_ZERO(4) }, 0 }, handle_mq_timed, time_start },
	/* getrandom under random_seed: the seed's stream (handlers/random.c). */
	{ { .nr = SYS_getrandom }, handle_getrandom, random_seed },
	/* getdents64 while /proc is served (its listing shows the sandbox's processes), and
	 * under deterministic_dirs (every listing sorted by name). */
	{ { .nr = SYS_getdents64 }, handle_getdents, lists },
#ifdef SYS_getdents
	{ { .nr = SYS_getdents }, handle_getdents, lists },
#endif
	/* landlock_restrict_self while /proc is served or a writable grant holds a denied path:
	 * a sandbox nested in this one is served nothing with the supervisor's rights. */
	{ { .nr = SYS_landlock_restrict_self }, handle_landlock_restrict, serves_proc_or_write },
/* A writable grant holding a denied path: what is created, removed, renamed, linked and
 * truncated in the directories on the way to it (handlers/fs-write.c); and with a workdir, the
 * same under it (handlers/cow.c, asked first). */
#ifdef SYS_creat
	{ { .nr = SYS_creat }, handle_open, mediates_write_or_cow },
#endif
#ifdef SYS_mkdir
	{ { .nr = SYS_mkdir }, handle_fs_create, mediates_write_or_cow },
	{ { .nr = SYS_mknod }, handle_fs_create, mediates_write_or_cow },
	{ { .nr = SYS_symlink }, handle_fs_create, mediates_write_or_cow },
	{ { .nr = SYS_unlink }, handle_fs_remove, mediates_write_or_cow },
	{ { .nr = SYS_rmdir }, handle_fs_remove, mediates_write_or_cow },
	{ { .nr = SYS_rename }, handle_fs_rename, mediates_write_or_cow },
	{ { .nr = SYS_link }, handle_fs_rename, mediates_write_or_cow },
#endif
	{ { .nr = SYS_mkdirat }, handle_fs_create, mediates_write_or_cow },
	{ { .nr = SYS_mknodat }, handle_fs_create, mediates_write_or_cow },
	{ { .nr = SYS_symlinkat }, handle_fs_create, mediates_write_or_cow },
	{ { .nr = SYS_unlinkat }, handle_fs_remove, mediates_write_or_cow },
	{ { .nr = SYS_renameat }, handle_fs_rename, mediates_write_or_cow },
	{ { .nr = SYS_renameat2 }, handle_fs_rename, mediates_write_or_cow },
	{ { .nr = SYS_linkat }, handle_fs_rename, mediates_write_or_cow },
	{ { .nr = SYS_truncate }, handle_fs_truncate, mediates_write_or_cow },
	/* The masks of those creates, known between umask() calls (handlers/umask.c). */
	{ { .nr = SYS_umask }, handle_umask, mediates_write_or_cow },
/* A workdir (handlers/cow.c, asked first; elsewhere CONTINUE): the calls that read a
 * name under it (stat, access, readlink, the extended attributes), enter it (chdir, exec)
 * or report it (getcwd); under max_disk what grows a branch file. */
#ifdef SYS_stat
	{ { .nr = SYS_stat }, handle_cow_rest, cow },
	{ { .nr = SYS_lstat }, handle_cow_rest, cow },
	{ { .nr = SYS_access }, handle_cow_rest, cow },
	{ { .nr = SYS_readlink }, handle_cow_rest, cow },
#endif
	/* Not fstat (AT_EMPTY_PATH: glibc's and Rust's fstat): a descriptor's own file is the
	 * kernel's, and a name given with AT_EMPTY_PATH is only looked at, never changed. */
	{ { SYS_newfstatat, 1, { MASKED_EQ(3, AT_EMPTY_PATH, 0) }, 0 }, handle_cow_rest, cow },
	{ { SYS_statx, 1, { MASKED_EQ(2, AT_EMPTY_PATH, 0) }, 0 }, handle_cow_rest, cow },
	{ { .nr = SYS_faccessat }, handle_cow_rest, cow },
	{ { .nr = SYS_faccessat2 }, handle_cow_rest, cow },
	{ { .nr = SYS_readlinkat }, handle_cow_rest, cow },
	{ { .nr = SYS_getxattr }, handle_cow_rest, cow },
	{ { .nr = SYS_lgetxattr }, handle_cow_rest, cow },
	{ { .nr = SYS_listxattr }, handle_cow_rest, cow },
	{ { .nr = SYS_llistxattr }, handle_cow_rest, cow },
	{ { .nr = SYS_getxattrat }, handle_cow_rest, cow },
	{ { .nr = SYS_listxattrat }, handle_cow_rest, cow },
/* Every supervised sandbox: the calls that change a file's metadata (its mode, owner, times,
 * extended attributes, flags), which Landlock does not confine: made by the supervisor on the
 * file named, beneath a writable grant only (handlers/fs-meta.c; with a workdir, its names
 * are cow.c's, asked first). Without a supervisor nothing can check the file: refused (EPERM). */
#define META(n)                                                                                    \
	{                                                                                          \
		{ .nr = (n), .deny_unsupervised = 1 }, handle_fs_meta, NULL                        \
	}
#ifdef SYS_chmod
	META(SYS_chmod),
	META(SYS_chown),
	META(SYS_lchown),
	META(SYS_utime),
	META(SYS_utimes),
	META(SYS_futimesat),
#endif
	META(SYS_fchmod),
	META(SYS_fchmodat),
	META(SYS_fchmodat2),
	META(SYS_fchown),
	META(SYS_fchownat),
	META(SYS_utimensat),
	META(SYS_setxattr),
	META(SYS_lsetxattr),
	META(SYS_fsetxattr),
	META(SYS_removexattr),
	META(SYS_lremovexattr),
	META(SYS_fremovexattr),
	META(SYS_setxattrat),
	META(SYS_removexattrat),
	META(SYS_file_setattr),
#undef META
/* ioctl's request is an unsigned int: the high half is not the kernel's. The requests
 * that change an inode (COW_INODE_IOCTLS). */
#define INODE_IOCTL(req)                                                                           \
	{                                                                                          \
		{ SYS_ioctl, 1, { MASKED_EQ(1, 0xffffffff, (req)) }, 1 }, handle_fs_meta, NULL     \
	}
	INODE_IOCTL(FS_IOC_SETFLAGS),
	INODE_IOCTL(FS_IOC_FSSETXATTR),
	INODE_IOCTL(FS_IOC_SETVERSION),
	INODE_IOCTL(EXT4_IOC_SETVERSION_),
	INODE_IOCTL(FS_IOC_ENABLE_VERITY),
	INODE_IOCTL(FS_IOC_SET_ENCRYPTION_POLICY),
	INODE_IOCTL(BTRFS_IOC_SUBVOL_SETFLAGS),
	INODE_IOCTL(FS_IOC_SETFSLABEL),
#undef INODE_IOCTL
	/* The calls that change a task's credentials: the supervisor's rights then stand for a
	 * caller's only once compared with them (handlers/fs-meta.c). Allowed without a
	 * supervisor (NULL, not !no_supervisor: an unsupervised trap set is then the supervised
	 * one, and the precompiled unsupervised program applies). */
	{ { .nr = SYS_setuid }, handle_creds_change, NULL },
	{ { .nr = SYS_setgid }, handle_creds_change, NULL },
	{ { .nr = SYS_setreuid }, handle_creds_change, NULL },
	{ { .nr = SYS_setregid }, handle_creds_change, NULL },
	{ { .nr = SYS_setresuid }, handle_creds_change, NULL },
	{ { .nr = SYS_setresgid }, handle_creds_change, NULL },
	{ { .nr = SYS_setfsuid }, handle_creds_change, NULL },
	{ { .nr = SYS_setfsgid }, handle_creds_change, NULL },
	{ { .nr = SYS_setgroups }, handle_creds_change, NULL },
	{ { .nr = SYS_capset }, handle_creds_change, NULL },
	{ { SYS_prctl, 1, { MASKED_EQ(0, 0xffffffff, PR_CAPBSET_DROP) }, 0 },
	  handle_creds_change,
	  NULL },
	{ { SYS_prctl, 1, { MASKED_EQ(0, 0xffffffff, PR_CAP_AMBIENT) }, 0 },
	  handle_creds_change,
	  NULL },
	{ { .nr = SYS_chdir }, handle_cow_rest, cow },
	{ { .nr = SYS_getcwd }, handle_cow_rest, cow },
	{ { .nr = SYS_execve }, handle_cow_rest, cow },
	{ { .nr = SYS_execveat }, handle_cow_rest, cow },
	{ { .nr = SYS_write }, handle_cow_rest, cow_quota },
	{ { .nr = SYS_pwrite64 }, handle_cow_rest, cow_quota },
	{ { .nr = SYS_writev }, handle_cow_rest, cow_quota },
	{ { .nr = SYS_pwritev }, handle_cow_rest, cow_quota },
	{ { .nr = SYS_pwritev2 }, handle_cow_rest, cow_quota },
	{ { .nr = SYS_ftruncate }, handle_cow_rest, cow_quota },
	{ { .nr = SYS_fallocate }, handle_cow_rest, cow_quota },
	{ { .nr = SYS_copy_file_range }, handle_cow_rest, cow_quota },
	{ { .nr = SYS_sendfile }, handle_cow_rest, cow_quota },
	{ { .nr = SYS_splice }, handle_cow_rest, cow_quota },
	{ { .nr = SYS_io_setup }, handle_cow_no_aio, cow_quota },
	/* fork, vfork, and clone making a process, under max_processes: the supervisor counts
	 * the sandbox's processes. Without a supervisor such a policy is refused. */
	{ { SYS_clone, 1, { MASKED_EQ(0, CLONE_PROCESS_MASK, 0) }, 1 },
	  handle_fork,
	  max_processes },
#ifdef SYS_fork
	{ { .nr = SYS_fork, .deny_unsupervised = 1 }, handle_fork, max_processes },
#endif
#ifdef SYS_vfork
	{ { .nr = SYS_vfork, .deny_unsupervised = 1 }, handle_fork, max_processes },
#endif
	/* The calls that grow an address space, under max_memory: a writable anonymous mmap,
	 * brk, mremap, a writable mprotect. */
	{ { SYS_mmap,
	    2,
	    { MASKED_EQ(2, PROT_WRITE, PROT_WRITE), MASKED_EQ(3, MAP_ANONYMOUS, MAP_ANONYMOUS) },
	    1 },
	  handle_memory,
	  max_memory },
	{ { .nr = SYS_brk, .deny_unsupervised = 1 }, handle_memory, max_memory },
	/* mprotect making memory writable: what a reservation (PROT_NONE) commits. */
	{ { SYS_mprotect, 1, { MASKED_EQ(2, PROT_WRITE, PROT_WRITE) }, 1 },
	  handle_memory,
	  max_memory },
	{ { .nr = SYS_mremap, .deny_unsupervised = 1 }, handle_memory, max_memory },
	/* memfd pages are counted by no process until mapped: refused (handlers/memory.c). */
	{ { .nr = SYS_memfd_create, .deny_unsupervised = 1 }, handle_memfd, max_memory },
#ifdef SYS_memfd_secret
	{ { .nr = SYS_memfd_secret, .deny_unsupervised = 1 }, handle_memfd, max_memory },
#endif
};

_Static_assert(ELEMENTSOF(table) <= DISPATCH_MAX_TRAPS, "a trap set may not fit its array");

/* Whether @p needs entry @e, each predicate asked once per trap set (@asked, @n_asked): several
 * resolve the grants' paths (realpath), and many entries share one (the twenty of a writable
 * grant holding a denied path). */
struct asked {
	int (*fn)(const struct sandlock_policy *p);
	int yes;
};

static int needed(const struct dispatch_entry *e, const struct sandlock_policy *p,
		  struct asked *asked, size_t *n_asked)
{
	size_t k = 0;

	if (!e->needed)
		return 1;
	while (k < *n_asked && asked[k].fn != e->needed)
		k++;
	if (k == *n_asked)
		asked[(*n_asked)++] = (struct asked){ e->needed, e->needed(p) };
	return asked[k].yes;
}

size_t dispatch_trap_set(const struct sandlock_policy *p, struct trap *traps, size_t max)
{
	struct asked asked[ELEMENTSOF(table)];
	size_t n = 0, n_asked = 0;

	for (size_t i = 0; i < ELEMENTSOF(table) && n < max; i++)
		if (needed(&table[i], p, asked, &n_asked)) {
			memset(&traps[n], 0, sizeof(traps[n]));
			traps[n++] = table[i].trap;
		}
	return n;
}

notif_handler_t dispatch_lookup(int nr)
{
	for (size_t i = 0; i < ELEMENTSOF(table); i++)
		if (table[i].trap.nr == nr)
			return table[i].handler;
	return NULL;
}
