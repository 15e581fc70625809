/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers: the notification handlers, one file per syscall family. Each decides on copies of
 * the task's memory and arguments and answers through notif_answer_*(); see dispatch.h.
 */
#pragma once

#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "plan/traps.h" /* COW_INODE_IOCTLS */

struct supervisor;

/* uname.c */
int handle_uname(struct supervisor *sv, const struct seccomp_notif *req,
		 struct seccomp_notif_resp *resp);
/* pgroup.c */
int handle_setsid(struct supervisor *sv, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp);
int handle_setpgid(struct supervisor *sv, const struct seccomp_notif *req,
		   struct seccomp_notif_resp *resp);
/* other-process.c: prlimit64, setpriority, ioprio_set, sched_set{affinity,scheduler,param,attr}
 * naming another process. */
int handle_other_process(struct supervisor *sv, const struct seccomp_notif *req,
			 struct seccomp_notif_resp *resp);
/* pidfd.c: process_madvise, process_mrelease, on a process of the sandbox only. */
int handle_process_madvise(struct supervisor *sv, const struct seccomp_notif *req,
			   struct seccomp_notif_resp *resp);
int handle_process_mrelease(struct supervisor *sv, const struct seccomp_notif *req,
			    struct seccomp_notif_resp *resp);
/* watch.c: inotify_add_watch, fanotify_mark, on a file the sandbox may read only, added here
 * through the supervisor's descriptor of it. */
int handle_inotify_add_watch(struct supervisor *sv, const struct seccomp_notif *req,
			     struct seccomp_notif_resp *resp);
int handle_fanotify_mark(struct supervisor *sv, const struct seccomp_notif *req,
			 struct seccomp_notif_resp *resp);
/* net.c: connect, on the child's behalf where the rules or a UNIX socket path need it. */
int handle_connect(struct supervisor *sv, const struct seccomp_notif *req,
		   struct seccomp_notif_resp *resp);
/* net-send.c: sendto with an address, and sendmsg, on the child's behalf. */
int handle_sendmsg(struct supervisor *sv, const struct seccomp_notif *req,
		   struct seccomp_notif_resp *resp);
/* net-send.c: sendmmsg on the child's behalf. */
int handle_sendmmsg(struct supervisor *sv, const struct seccomp_notif *req,
		    struct seccomp_notif_resp *resp);
/* netlink.c: a virtual NETLINK_ROUTE socket. */
int handle_netlink_socket(struct supervisor *sv, const struct seccomp_notif *req,
			  struct seccomp_notif_resp *resp);
/* ports.c: bind, getsockname, getpeername: on a virtual netlink socket, and under port_remap. */
int handle_bind(struct supervisor *sv, const struct seccomp_notif *req,
		struct seccomp_notif_resp *resp);
int handle_getsockname(struct supervisor *sv, const struct seccomp_notif *req,
		       struct seccomp_notif_resp *resp);
int handle_getpeername(struct supervisor *sv, const struct seccomp_notif *req,
		       struct seccomp_notif_resp *resp);
/* net.c: listen, where an autobind would escape the bind rules. */
int handle_listen(struct supervisor *sv, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp);
/* open.c: open/openat/openat2 of /etc/hosts (the names resolved at start), under port_remap
 * of /proc/net/tcp and tcp6 (the sandbox's sockets), under num_cpus of /proc/cpuinfo and the
 * sysfs CPU lists. */
int handle_open(struct supervisor *sv, const struct seccomp_notif *req,
		struct seccomp_notif_resp *resp);
/* getdents.c: a listing made here, served through the child's open directory @fd: the
 * entries from the index its offset holds, as many as getdents' count takes, then its offset
 * moved past them. Returns the bytes written or -errno. */
struct dent {
	uint64_t ino;
	unsigned char type;
	char *name;
};
int64_t getdents_answer(int listener, const struct seccomp_notif *req, int fd, size_t count,
			int legacy, const struct dent *v, size_t n);
/* getdents.c: getdents64 of /proc while it is served: the sandbox's processes only. */
int handle_getdents(struct supervisor *sv, const struct seccomp_notif *req,
		    struct seccomp_notif_resp *resp);
/* open.c: landlock_restrict_self while /proc is served. */
int handle_landlock_restrict(struct supervisor *sv, const struct seccomp_notif *req,
			     struct seccomp_notif_resp *resp);
/* fs-write.c: beneath a writable grant holding a denied path, mkdir, mkdirat, mknod, mknodat,
 * symlink, symlinkat (handle_fs_create), unlink, unlinkat, rmdir (handle_fs_remove), rename,
 * renameat, renameat2, link, linkat (handle_fs_rename), truncate (handle_fs_truncate). */
int handle_fs_create(struct supervisor *sv, const struct seccomp_notif *req,
		     struct seccomp_notif_resp *resp);
int handle_fs_remove(struct supervisor *sv, const struct seccomp_notif *req,
		     struct seccomp_notif_resp *resp);
int handle_fs_rename(struct supervisor *sv, const struct seccomp_notif *req,
		     struct seccomp_notif_resp *resp);
int handle_fs_truncate(struct supervisor *sv, const struct seccomp_notif *req,
		       struct seccomp_notif_resp *resp);
/* random.c: random_seed: the streams start from the seed (random_init); getrandom is answered
 * from stream 0; an open of /dev/urandom or /dev/random gets a stream of its own
 * (random_serve_open, from open.c: NOTIF_DEFERRED or -errno). */
void random_init(struct supervisor *sv, uint64_t seed);
int handle_getrandom(struct supervisor *sv, const struct seccomp_notif *req,
		     struct seccomp_notif_resp *resp);
int random_serve_open(struct supervisor *sv, const struct seccomp_notif *req, uint64_t flags);
/* time.c: time_start: the wall clock's offset (vtime_init: 0 or -errno); set_tid_address (the
 * program's vDSO clock functions made syscalls); clock_gettime of a wall clock, gettimeofday,
 * time; clock_nanosleep, timerfd_settime and timer_settime with an absolute wall-clock
 * deadline. */
int vtime_init(struct supervisor *sv, int64_t sec, uint32_t nsec);
int handle_set_tid_address(struct supervisor *sv, const struct seccomp_notif *req,
			   struct seccomp_notif_resp *resp);
int handle_clock_gettime(struct supervisor *sv, const struct seccomp_notif *req,
			 struct seccomp_notif_resp *resp);
int handle_gettimeofday(struct supervisor *sv, const struct seccomp_notif *req,
			struct seccomp_notif_resp *resp);
int handle_time(struct supervisor *sv, const struct seccomp_notif *req,
		struct seccomp_notif_resp *resp);
int handle_clock_nanosleep(struct supervisor *sv, const struct seccomp_notif *req,
			   struct seccomp_notif_resp *resp);
int handle_timerfd_settime(struct supervisor *sv, const struct seccomp_notif *req,
			   struct seccomp_notif_resp *resp);
int handle_timer_settime(struct supervisor *sv, const struct seccomp_notif *req,
			 struct seccomp_notif_resp *resp);
int handle_futex(struct supervisor *sv, const struct seccomp_notif *req,
		 struct seccomp_notif_resp *resp);
int handle_mq_timed(struct supervisor *sv, const struct seccomp_notif *req,
		    struct seccomp_notif_resp *resp);
/* fork.c: fork, vfork, clone making a process, under max_processes. */
int handle_fork(struct supervisor *sv, const struct seccomp_notif *req,
		struct seccomp_notif_resp *resp);
/* fork.c: drop the pending forks whose thread is past them (and @caller's, which forks
 * again; 0: none); returns how many remain. */
size_t forks_settle(struct supervisor *sv, pid_t caller);
/* memory.c: mmap (writable, anonymous), brk, mremap under max_memory. */
int handle_memory(struct supervisor *sv, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp);
/* memory.c: memfd_create, memfd_secret under max_memory: refused (ENOSYS). */
int handle_memfd(struct supervisor *sv, const struct seccomp_notif *req,
		 struct seccomp_notif_resp *resp);
/* memory.c: the sandbox's memory (the sum of its processes' RssAnon + RssShmem), in bytes. */
int memory_usage(struct supervisor *sv, uint64_t *ret_total);
/* memory.c: the periodic check (sandbox.c's loop): while the sandbox is over max_memory, its
 * largest process is killed. */
void memory_check(struct supervisor *sv);
/* cpus.c: sched_getaffinity under num_cpus. */
int handle_sched_getaffinity(struct supervisor *sv, const struct seccomp_notif *req,
			     struct seccomp_notif_resp *resp);

/* umask.c: umask() where the supervisor makes files for the child (CONTINUE; the masks known
 * are forgotten). umask_seen: every notification of @tid (its umask(), if any, returned).
 * sandbox_umask: the umask of @req's task, kept between calls while umask() is trapped.
 * umask_cache_done: forget everything (closes the pidfds). */
int handle_umask(struct supervisor *sv, const struct seccomp_notif *req,
		 struct seccomp_notif_resp *resp);
void umask_seen(struct supervisor *sv, pid_t tid);
int sandbox_umask(struct supervisor *sv, const struct seccomp_notif *req, mode_t *ret);
void umask_cache_done(struct supervisor *sv);
/* cow-copy.c: the copy-up of a large file, off the loop. cow_wait_init: set up (with a
 * workdir), returns the descriptor the event loop watches (readable: call cow_wait_on_done),
 * or -errno. cow_copy_up_off_loop: cow_copy_up of @rel for @req, or, for a large file, begun
 * on a worker and @req asked again once it landed (NOTIF_DEFERRED). cow_wait_hold: @req
 * waits for the copy on its way (NOTIF_DEFERRED; 0: none). cow_wait_stop: after the workers
 * stopped, a copy on its way is taken back. */
int cow_wait_init(struct supervisor *sv);
int cow_copy_up_off_loop(struct supervisor *sv, const struct seccomp_notif *req, const char *rel,
			 int truncate);
int cow_wait_hold(struct supervisor *sv, const struct seccomp_notif *req);
/* cow-copy.c: cow_wait_arm: the call supervisor_answer hands a workdir handler may change the
 * tree (@on), or is done (0). cow_held: whether a name it found under the workdir makes it wait
 * (the handler then answers NOTIF_HOLD, before changing anything, and supervisor_answer calls
 * cow_wait_hold). */
void cow_wait_arm(struct supervisor *sv, int on);
/* cow-copy.c: whether the last large copy-up that landed was made for @req, at @rel (a call
 * asked again after it finds its entry in the branch, copied for it). */
int cow_copy_landed_for(struct supervisor *sv, const struct seccomp_notif *req, const char *rel);
int cow_held(struct supervisor *sv);
void cow_wait_on_done(struct supervisor *sv);
void cow_wait_stop(struct supervisor *sv);
/* fs-meta.c: in every supervised sandbox, the calls that change a file's metadata (chmod,
 * chown, the times, extended attributes, inode flags, file_setattr; every form): made by the
 * supervisor on the file named, for a file beneath a writable grant and not denied only. */
int handle_fs_meta(struct supervisor *sv, const struct seccomp_notif *req,
		   struct seccomp_notif_resp *resp);
/* fs-meta.c: what the metadata calls keep between calls, closed (supervisor_done). */
void fs_meta_done(struct supervisor *sv);
/* fs-meta.c: the calls that change a task's credentials (setuid and the like, capset, the
 * capability prctls): from then on each metadata call's caller is compared with the supervisor
 * (CONTINUE). */
int handle_creds_change(struct supervisor *sv, const struct seccomp_notif *req,
			struct seccomp_notif_resp *resp);
/* cow*.c, with a workdir: the calls whose name (or descriptor) is under it, made in the branch
 * (NOTIF_ANSWERED, NOTIF_CONTINUED, NOTIF_DEFERRED, NOTIF_HOLD, -errno); NOTIF_NOT_MINE for any
 * other, which the row's plain handler then answers (plan/routes.def). */
/* cow-open.c: open, openat, openat2, creat */
int cow_open_nr(struct supervisor *sv, const struct seccomp_notif *req,
		struct seccomp_notif_resp *resp);
/* cow-look.c: stat, lstat, newfstatat, statx */
int cow_stat(struct supervisor *sv, const struct seccomp_notif *req,
	     struct seccomp_notif_resp *resp);
/* cow-look.c: access, faccessat, faccessat2 */
int cow_access(struct supervisor *sv, const struct seccomp_notif *req,
	       struct seccomp_notif_resp *resp);
/* cow-look.c: readlink, readlinkat */
int cow_readlink(struct supervisor *sv, const struct seccomp_notif *req,
		 struct seccomp_notif_resp *resp);
/* cow-look.c: getdents, getdents64 */
int cow_getdents(struct supervisor *sv, const struct seccomp_notif *req,
		 struct seccomp_notif_resp *resp);
/* cow-tree.c: mkdir, mkdirat */
int cow_mkdir_call(struct supervisor *sv, const struct seccomp_notif *req,
		   struct seccomp_notif_resp *resp);
/* cow-tree.c: mknod, mknodat */
int cow_mknod_call(struct supervisor *sv, const struct seccomp_notif *req,
		   struct seccomp_notif_resp *resp);
/* cow-tree.c: unlink, unlinkat, rmdir */
int cow_remove_call(struct supervisor *sv, const struct seccomp_notif *req,
		    struct seccomp_notif_resp *resp);
/* cow-tree.c: rename, renameat, renameat2, link, linkat */
int cow_rename_call(struct supervisor *sv, const struct seccomp_notif *req,
		    struct seccomp_notif_resp *resp);
/* cow-tree.c: symlink, symlinkat */
int cow_symlink_call(struct supervisor *sv, const struct seccomp_notif *req,
		     struct seccomp_notif_resp *resp);
/* cow-tree.c: truncate */
int cow_truncate_call(struct supervisor *sv, const struct seccomp_notif *req,
		      struct seccomp_notif_resp *resp);
/* cow-meta.c: chmod, chown, the times: every form */
int cow_meta(struct supervisor *sv, const struct seccomp_notif *req,
	     struct seccomp_notif_resp *resp);
/* cow-meta.c: file_setattr, the ioctls of COW_INODE_IOCTLS */
int cow_attr(struct supervisor *sv, const struct seccomp_notif *req,
	     struct seccomp_notif_resp *resp);
/* cow-xattr.c: the extended attributes */
int cow_xattr(struct supervisor *sv, const struct seccomp_notif *req,
	      struct seccomp_notif_resp *resp);
/* cow-exec.c: chdir */
int cow_chdir_call(struct supervisor *sv, const struct seccomp_notif *req,
		   struct seccomp_notif_resp *resp);
/* cow-exec.c: getcwd */
int cow_getcwd_call(struct supervisor *sv, const struct seccomp_notif *req,
		    struct seccomp_notif_resp *resp);
/* cow-exec.c: execve, execveat */
int cow_exec_call(struct supervisor *sv, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp);
/* cow-quota.c under max_disk: writes, size changes */
int cow_quota_call(struct supervisor *sv, const struct seccomp_notif *req,
		   struct seccomp_notif_resp *resp);
/* cow.c: the plain handler of the calls trapped for the workdir only, of a name or descriptor
 * elsewhere: CONTINUE. */
int handle_outside_workdir(struct supervisor *sv, const struct seccomp_notif *req,
			   struct seccomp_notif_resp *resp);
/* cow.c: io_setup under max_disk: ENOSYS (AIO writes would not be counted). */
int handle_cow_no_aio(struct supervisor *sv, const struct seccomp_notif *req,
		      struct seccomp_notif_resp *resp);
