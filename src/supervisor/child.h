/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * child: the toolkit through which a handler reaches the trapped process: its memory (a path,
 * a buffer, an answer written back), its descriptors, its names as it resolves them, and the
 * checks of its ids and credentials. A handler touches the child through this header and the
 * engine APIs (cow/, the worker pool); a new way to reach the child (a /proc/<pid> file, a call
 * on its pid or its descriptors) belongs here, with its ID_VALID check, so that each handler
 * does not get the check right on its own.
 *
 * This header includes notif.h, whose primitives are part of the toolkit: the answers
 * (notif_answer_*), the checked memory access (notif_mem_read, notif_mem_write, notif_mem_peek),
 * taking the child's descriptor (notif_get_fd, notif_get_fd_kept), installing one in it
 * (notif_addfd_send, notif_addfd_answer) and the ID_VALID check (notif_id_valid). Handlers call
 * them directly; what is built on them for more than one handler lives here.
 *
 * The ID_VALID discipline (DESIGN.md): whatever names the trapped task by its pid (its memory,
 * its descriptor table, /proc/<pid>/...) may meanwhile name another process that took the pid.
 * So the object is taken first (the bytes copied, the descriptor or directory opened), then
 * notif_id_valid tells whether the task was still the one in the syscall, and only then is the
 * copy decided on: while the notification is pending its thread lives, so a check that finds
 * it pending after the copy proves the copy the thread's. The readers of memory and the openers
 * of names here check before they return (else NOTIF_GONE). The readers of /proc/<tid> files
 * (the proc_* functions here and notif.h's proc_read, proc_status_field, proc_umask) read
 * whatever task has the tid now and check nothing: each caller acts on such a look only
 * through a checked step after it (notif_id_valid, an object taken with the check, ADDFD, which
 * fails for a notification gone), or where every outcome of a wrong look is safe; each
 * function's comment below says which. A decision is never made on the child's memory with a
 * CONTINUE after it: the kernel would read that memory again.
 */
#pragma once

#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "notif.h"

struct supervisor;

/* "/proc/self/fd/N", "/proc/thread-self/fd/N" and "/dev/fd/N", alone or followed by "/...":
 * names of the caller's descriptor N, which resolving from here would take for the
 * supervisor's. Sets *@n and *@rest (what follows N) and returns 1; 0 for another name. */
int own_fd_name(const char *path, int *n, const char **rest);

/* An O_PATH descriptor of @path as the trapped thread would reach it (from its root, its
 * working directory, or its descriptor @dirfd; "/proc/self/fd/N/..." and "/dev/fd/N/..." from
 * its descriptor N), without following magic links; @resolve: more RESOLVE_* flags, @nofollow:
 * O_NOFOLLOW (a final symlink is opened itself). -errno (-ELOOP for a magic link), NOTIF_GONE. */
int child_path_open(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		    const char *path, uint64_t resolve, int nofollow);
/* child_path_open in two steps, for a name resolved once the call is answered (judge.c): the
 * descriptor the name starts from, taken while the notification is valid (its root, working
 * directory or descriptor; @path moved past "/proc/self/fd/N", set NULL where the name is that
 * descriptor itself; *@abs: from the root), then the name resolved from it. -errno, NOTIF_GONE. */
int child_path_base(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		    const char **path, int *abs);
int child_path_at(int base, const char *path, int abs, uint64_t resolve, int nofollow);

/* The path at @addr in the trapped task, NUL-terminated in @buf of @size bytes.
 * -ENAMETOOLONG, -EFAULT, NOTIF_GONE. */
int child_read_path(struct supervisor *sv, const struct seccomp_notif *req, uint64_t addr,
		    char *buf, size_t size);

/* The path the kernel gives descriptor @fd (its link in /proc/self/fd), in @buf. */
ssize_t fd_real_path(int fd, char *buf, size_t size);

/* Record what the sandbox's first process may do (its ids, capabilities, seccomp filters),
 * once it is confined, in sv->proc_ids (and sv->proc_no_caps: it holds no capability): what
 * the supervisor does on a thread's behalf with its own rights (/proc served, a metadata
 * change) is done only for a thread that has the same. @filters: the seccomp filters it has
 * once launched (it may lack its last one yet). */
void proc_ids_snapshot(struct supervisor *sv, pid_t pid, long filters);
/* Whether thread @tid has the ids, capabilities and seccomp filters the sandbox started with
 * (proc_ids_snapshot): 1, 0, or NOTIF_GONE. */
int proc_same_ids(struct supervisor *sv, pid_t tid);
/* proc_same_ids for what a file's owner and capabilities decide (the ids, the groups, the
 * effective capabilities), not the seccomp filters or no_new_privs: 1, 0, or NOTIF_GONE. */
int proc_same_creds(struct supervisor *sv, pid_t tid);

/* The socket the child named in argument 0 (a copy, from the calling thread's table) and its
 * address family in *@domain. A descriptor that is no socket: -ENOTSOCK, as the kernel. */
int net_take_socket(struct supervisor *sv, const struct seccomp_notif *req, int *domain);
/* The NET_PROTO_* of IP socket @sock (TCP: stream; UDP, ICMP: the datagram sockets the seccomp
 * rules let exist), or -EPERM for anything else (fail closed), and its SO_TYPE in *@type. */
int net_sock_proto(int sock, uint32_t *proto, int *type);

/* Answer getsockname(2) or getpeername(2) with the address @addr (@klen bytes), as the kernel
 * does: at most the caller's buffer length, then the full length. */
int notif_answer_sockaddr(struct supervisor *sv, const struct seccomp_notif *req,
			  struct seccomp_notif_resp *resp, const void *addr, socklen_t klen);

/* The syscall thread @tid is blocked in (/proc/<tid>/task/<tid>/syscall) in *@nr, -1 when it is
 * in none (running, or stopped outside one). -ESRCH (gone), -EPERM (unreadable). Unchecked:
 * fork.c settles a pending fork with it, and a tid another task took since names a thread past
 * its fork (the one that forked is gone), whatever the new one reads. */
int proc_syscall_nr(pid_t tid, long *nr);
/* The end of thread @tid's [heap] (/proc/<tid>/maps) in *@end: 0, -ENOENT (no heap), -ESRCH,
 * -EPERM. Unchecked: memory.c sizes a brk with it, and only kills through a pidfd taken before
 * ID_VALID; a CONTINUE answered to a notification gone is refused by the kernel (ENOENT). */
int proc_heap_end(pid_t tid, uint64_t *end);
/* Whether task @tid is in the supervisor's user namespace (its /proc/<tid>/ns/user is ours):
 * 1, 0, -EPERM (unreadable). Unchecked: pidfd.c and watch.c act on it only through a step
 * that checks ID_VALID after it (notif_get_fd), or with a CONTINUE, the kernel's own check. */
int proc_userns_is_ours(pid_t tid);
/* The value of entry @type (AT_*) of task @pid's auxiliary vector (/proc/<pid>/auxv) in *@val:
 * 0, -ENOENT (no such entry), -ESRCH, -EPERM. Unchecked: time.c only addresses checked reads
 * and writes of the child's memory with it (notif_mem_read, notif_mem_write). */
int proc_auxv(pid_t pid, uint64_t type, uint64_t *val);
/* The whole of /proc/<pid>/@name ("timers", "fdinfo/N"), up to 1 MiB, NUL-terminated, in *@ret
 * (freed by the caller) and its length in *@ret_len (may be NULL): 0, -ESRCH, -EPERM, -ENOMEM.
 * Unchecked: time.c reads a timer's clock with it, acted on through a checked step after it
 * (notif_get_fd, notif_mem_read, notif_mem_write) or with a CONTINUE. */
int proc_read_all(pid_t pid, const char *name, char **ret, size_t *ret_len);
/* The name @rest ("/status", "": the directory) in the trapped thread's /proc directory as its
 * own "/proc/self" names it ("/proc/<tgid>@rest"), or with @task as its "/proc/thread-self"
 * ("/proc/<tgid>/task/<tid>@rest"), in @buf (cut at @size): 0, NOTIF_GONE, -EPERM, -EINVAL.
 * Unchecked: open.c opens the name only after it (child_path_open, which checks ID_VALID once
 * its directory is open) or serves what it opens only through ADDFD, which fails for a
 * notification gone, so a tgid read of another task that took the tid reaches nobody. */
int child_proc_path(const struct seccomp_notif *req, int task, const char *rest, char *buf,
		    size_t size);
/* @path (of @size bytes) named "/proc/self..." or "/proc/thread-self..." outright rewritten as
 * the trapped thread's (child_proc_path): 1, 0 for another name (unchanged), NOTIF_GONE,
 * -errno. Resolved in the supervisor, those names would be its own. Unchecked, as
 * child_proc_path: what the name then reaches is opened with child_path_open. */
int child_proc_self_name(const struct seccomp_notif *req, char *path, size_t size);
