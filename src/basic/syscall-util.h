/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * syscall-util: raw wrappers for the syscalls glibc 2.36 does not wrap (Landlock, pidfd,
 * seccomp, clone with CLONE_PIDFD). They return what the kernel returns, with errno set, like
 * libc. Safe to call between fork and exec: no allocation, no locks.
 */
#pragma once

#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "landlock-compat.h"

#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_send_signal
#define __NR_pidfd_send_signal 424
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif
#ifndef __NR_close_range
#define __NR_close_range 436
#endif
/* Newer than the kernel headers of the oldest build host (Debian 12: 6.1); one number on every
 * architecture since 5.1. A syscall the headers lack must still be trapped where it changes
 * what a policy protects (a workdir's modes and attributes). */
#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452 /* 6.6 */
#endif
#ifndef SYS_setxattrat
#define SYS_setxattrat 463 /* 6.13 */
#endif
#ifndef SYS_getxattrat
#define SYS_getxattrat 464 /* 6.13 */
#endif
#ifndef SYS_listxattrat
#define SYS_listxattrat 465 /* 6.13 */
#endif
#ifndef SYS_removexattrat
#define SYS_removexattrat 466 /* 6.13 */
#endif
#ifndef SYS_file_setattr
#define SYS_file_setattr 469 /* 6.17 */
#endif
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef PIDFD_SIGNAL_PROCESS_GROUP
#define PIDFD_SIGNAL_PROCESS_GROUP (1UL << 2) /* Linux 6.9 */
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5) /* Linux 5.19 */
#endif
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, uint64_t) /* Linux 6.6 */
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif
#ifndef PR_SET_THP_DISABLE
#define PR_SET_THP_DISABLE 41
#endif

static inline int sys_landlock_create_ruleset(const void *attr, size_t size, uint32_t flags)
{
	return (int)syscall(__NR_landlock_create_ruleset, attr, size, flags);
}

static inline int sys_landlock_add_rule(int ruleset_fd, int rule_type, const void *attr,
					uint32_t flags)
{
	return (int)syscall(__NR_landlock_add_rule, ruleset_fd, rule_type, attr, flags);
}

static inline int sys_landlock_restrict_self(int ruleset_fd, uint32_t flags)
{
	return (int)syscall(__NR_landlock_restrict_self, ruleset_fd, flags);
}

static inline int sys_pidfd_open(pid_t pid, unsigned flags)
{
	return (int)syscall(__NR_pidfd_open, pid, flags);
}

static inline int sys_pidfd_getfd(int pidfd, int targetfd, unsigned flags)
{
	return (int)syscall(__NR_pidfd_getfd, pidfd, targetfd, flags);
}

static inline int sys_pidfd_send_signal(int pidfd, int sig, siginfo_t *info, unsigned flags)
{
	return (int)syscall(__NR_pidfd_send_signal, pidfd, sig, info, flags);
}

static inline int sys_seccomp(unsigned op, unsigned flags, void *args)
{
	return (int)syscall(__NR_seccomp, op, flags, args);
}

static inline int sys_close_range(unsigned first, unsigned last, unsigned flags)
{
	return (int)syscall(__NR_close_range, first, last, flags);
}

/* fork() without glibc's atfork machinery, returning a pidfd for the child in *@pidfd. The
 * parent_tid slot is the third argument on every architecture sandlock builds for (x86_64,
 * aarch64), which is where CLONE_PIDFD stores the descriptor. */
static inline pid_t sys_clone_pidfd(int *pidfd)
{
#if defined(__x86_64__) || defined(__aarch64__)
	return (pid_t)syscall(__NR_clone, CLONE_PIDFD | SIGCHLD, 0, pidfd, 0, 0);
#else
#error "sys_clone_pidfd: unsupported architecture"
#endif
}
