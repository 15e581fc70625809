/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * notif: the primitives handlers build on: answers, the ID_VALID check, and access to the
 * trapped task's memory that is safe against the task dying and its pid being reused.
 *
 * TOCTOU rules (DESIGN.md): read user memory once into supervisor memory, then check
 * ID_VALID, then decide on the copy; emulate the syscall instead of letting the kernel re-read
 * the memory, unless an independent kernel mechanism enforces the same property (say which at
 * the CONTINUE).
 */
#pragma once

#include <errno.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct supervisor;

/* What a handler did with a notification, returned instead of an errno (notif_handler_t:
 * -errno or one of these). Every value but NOTIF_ANSWERED lies below any errno, so the
 * `if (r < 0) return r;` of a handler's steps carries it up to supervisor_answer unchanged. */
enum notif_verdict {
	NOTIF_GONE = INT32_MIN, /* the task died or was interrupted: nobody to answer */
	NOTIF_DEFERRED,	 /* answered elsewhere (a worker, ADDFD_FLAG_SEND): nothing to send */
	NOTIF_NOT_MINE,	 /* not this handler's: the row's next decides (after the last: ENOSYS) */
	NOTIF_HOLD,	 /* may change the workdir's tree: waits for the copy-up on its way */
	NOTIF_CONTINUED, /* @resp holds SECCOMP_USER_NOTIF_FLAG_CONTINUE: the kernel's call */
	NOTIF_ANSWERED = 0, /* @resp holds the call's result (notif_answer_value, _libc) */
};

/* Whether the notification @id is still pending (its task is alive and still in the syscall). */
int notif_id_valid(int listener, uint64_t id);

static inline void notif_answer_value(struct seccomp_notif_resp *resp, int64_t val)
{
	resp->val = val;
	resp->error = 0;
	resp->flags = 0;
}

/* The answer to a call the supervisor made with a libc function returning 0 or -1 with errno:
 * 0 answered as the call's own success, -1 returned as -errno for the handler to answer. */
static inline int notif_answer_libc(struct seccomp_notif_resp *resp, long r)
{
	if (r < 0)
		return -errno;
	notif_answer_value(resp, 0);
	return 0;
}

/* Fail the syscall with @err, a negative errno (a positive value is taken as its negation). */
static inline void notif_answer_errno(struct seccomp_notif_resp *resp, int err)
{
	resp->val = 0;
	resp->error = err < 0 ? err : -err;
	resp->flags = 0;
}

/* Let the kernel run the syscall as the task asked. Every call site carries a comment naming
 * the kernel mechanism that makes that safe. Returns NOTIF_CONTINUED, the handler's verdict. */
static inline int notif_answer_continue(struct seccomp_notif_resp *resp)
{
	resp->val = 0;
	resp->error = 0;
	resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	return NOTIF_CONTINUED;
}

/* Copy @len bytes at @addr of the trapped task into @buf: process_vm_readv, then ID_VALID, so a
 * copy taken from a recycled pid is discarded. Where process_vm_readv is filtered (sandlock
 * nested in a sandbox whose blocklist has it), /proc/<tid>/mem is read instead, with the same
 * check. -EFAULT, -EPERM, -EACCES, NOTIF_GONE. */
int notif_mem_read(int listener, const struct seccomp_notif *req, uint64_t addr, void *buf,
		   size_t len);
/* A look at @len bytes at @addr of the trapped task, with no ID_VALID check: the copy may come
 * from another process that took the pid meanwhile. Only for a look whose every outcome is the
 * kernel's call as asked (CONTINUE) or a checked read (notif_mem_read): never a decision. 0 or
 * -EFAULT (also where process_vm_readv is refused: then read with notif_mem_read). */
int notif_mem_peek(const struct seccomp_notif *req, uint64_t addr, void *buf, size_t len);
/* Write @len bytes to @addr in the trapped task: open /proc/<tid>/mem, check ID_VALID (the
 * descriptor then pins the right address space whatever happens to the pid), pwrite.
 * -EFAULT, -EPERM (the task made itself non-dumpable), -EACCES (sandlock is itself confined
 * without write access to /proc), NOTIF_GONE. */
int notif_mem_write(int listener, const struct seccomp_notif *req, uint64_t addr, const void *buf,
		    size_t len);

/* A copy of descriptor @fd of the trapped task (pidfd_getfd, O_CLOEXEC), checked with ID_VALID
 * afterwards so that it is known to come from that task. -EBADF (no such descriptor), -EPERM,
 * NOTIF_GONE. */
int notif_get_fd(int listener, const struct seccomp_notif *req, int fd);
/* notif_get_fd through a pidfd kept in @kept between calls (one task's: a call of another
 * replaces it), where the kernel gives pidfds of threads (6.9+): such a pidfd names its thread
 * until that thread is gone, and then gives ESRCH, so a tid taken by another task since is
 * never looked at through it, and a copy through a kept one needs no ID_VALID. Elsewhere as
 * notif_get_fd. notif_pidfd_drop closes it. */
struct notif_pidfd {
	pid_t tid;
	int fd_plus1; /* 0: none */
};
int notif_get_fd_kept(int listener, const struct seccomp_notif *req, int fd,
		      struct notif_pidfd *kept);
void notif_pidfd_drop(struct notif_pidfd *kept);

/* Install @fd in the trapped task and make the new number the syscall's result, in one step
 * (SECCOMP_ADDFD_FLAG_SEND); @cloexec: with O_CLOEXEC. Returns NOTIF_DEFERRED (answered),
 * NOTIF_GONE, or -errno. */
int notif_addfd_send(int listener, const struct seccomp_notif *req, int fd, int cloexec);
/* The same in two steps, closing *@fd (set to -1) between them: the task resumes holding the
 * only descriptor of the file (F_SETLEASE, ETXTBSY and the like see no supervisor's copy). */
int notif_addfd_answer(int listener, const struct seccomp_notif *req, int *fd, int cloexec);

/* Read /proc/<pid>/@name (pid 0: /proc/self) into @buf (NUL-terminated). -ESRCH (no such process),
 * -EPERM (/proc unreadable here: the caller cannot tell, and fails closed). */
int proc_read(pid_t pid, const char *name, char *buf, size_t size);
/* A numeric field ("Seccomp_filters") of /proc/<pid>/status (pid 0: ourselves). -ESRCH, -EPERM,
 * -EINVAL (no such field). */
int proc_status_number(pid_t pid, const char *field, long *ret);
/* The path the kernel gives task @pid's descriptor @fd (AT_FDCWD: its working directory), in
 * @buf, NUL-terminated: its length, or -errno (-ENAMETOOLONG where it does not fit). Only a name:
 * no decision may rest on it alone (the descriptor may change meanwhile). */
ssize_t proc_fd_path(pid_t pid, int fd, char *buf, size_t size);
/* The umask of task @pid (its /proc status), what files made on its behalf are created with.
 * -EIO where it cannot be read. */
int proc_umask(pid_t pid, mode_t *ret, long *ret_threads);
/* A pid field ("Tgid", "PPid") of /proc/<pid>/status: > 0. -ESRCH, -EPERM, -EINVAL. */
int proc_status_field(pid_t pid, const char *field, pid_t *ret);
