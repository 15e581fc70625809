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
 * of names here check before they return (else NOTIF_GONE); proc_same_ids and proc_same_creds
 * read /proc/<tid>/status unchecked, a look their caller acts on only through a checked step
 * after it (an object taken with the check, ADDFD, which fails for a notification gone). A
 * decision is never made on the child's memory with a CONTINUE after it: the kernel would read
 * that memory again.
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
