/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/net-internal: what the network handlers share (net.c: connect, listen; net-send.c:
 * sendto, sendmsg, sendmmsg; net-unix.c: UNIX socket paths; netlink.c: the virtual route
 * socket; ports.c: bind, getsockname, getpeername, port_remap; proc-net.c: the TCP tables;
 * open.c: the files served from the supervisor).
 */
#pragma once

#include <linux/seccomp.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "supervisor/port-map.h"

struct supervisor;
struct plan_net;

/* The socket the child named in argument 0 (a copy, from the calling thread's table) and its
 * address family in *@domain. A descriptor that is no socket: -ENOTSOCK, as the kernel. */
int net_take_socket(struct supervisor *sv, const struct seccomp_notif *req, int *domain);

/* The NET_PROTO_* of IP socket @sock (TCP: stream; UDP, ICMP: the datagram sockets the seccomp
 * rules let exist), or -EPERM for anything else (fail closed), and its SO_TYPE in *@type. */
int net_sock_proto(int sock, uint32_t *proto, int *type);

/* Where the address @ss (@len bytes, copied from the child) sends a connect or a send of @sock
 * (family @domain, NET_PROTO_* @proto for an IP socket) under the rules, rewritten in place to
 * what the supervisor passes to the kernel:
 *  - IP: the destination matched against the rules of the socket's protocol (deny wins),
 *    unspecified addresses as the kernel reads them; refused: -ECONNREFUSED. @check 0 skips the
 *    match (a TCP send, whose address the kernel ignores);
 *  - a UNIX socket path: resolved as the child would (its root, its thread's cwd), the socket's
 *    real path under a write grant, else -EACCES; rewritten to /proc/self/fd/N of an O_PATH
 *    descriptor of it, returned in *@pin (the caller closes it after the call);
 *  - an abstract UNIX name, while Landlock's abstract socket scope is in force:
 *    NET_ROUTE_ABSTRACT. Callers refuse it (EPERM, what the scope answers for a socket outside
 *    the sandbox): made here, the connect or send would escape that scope (the supervisor is
 *    outside the sandbox's Landlock domain), and left to the kernel (CONTINUE), the address
 *    read again could name a path by then, which would escape the write-grant check. So
 *    abstract sockets are not reached, not even between the sandbox's own processes
 *    (docs/decisions.md). With the scope disabled or unavailable, any name is reached, as
 *    given;
 *  - anything else (netlink, AF_UNSPEC, an unnamed UNIX address): as given.
 * Returns 0, NET_ROUTE_ABSTRACT or a negative errno (NOTIF_GONE). */
#define NET_ROUTE_ABSTRACT 1
int net_route(struct supervisor *sv, const struct seccomp_notif *req, int sock, int domain,
	      uint32_t proto, int check, struct sockaddr_storage *ss, socklen_t *len, int *pin);

/* net-unix.c: the UNIX half of net_route for a named address. */
int net_unix_route(struct supervisor *sv, const struct seccomp_notif *req,
		   struct sockaddr_storage *ss, socklen_t *len, int *pin);

/* netlink.c: whether @sock is a virtual NETLINK_ROUTE socket, and its port id in *@portid. */
int netlink_fake_portid(struct supervisor *sv, int sock, uint32_t *portid);
/* netlink.c: bind(2) and getsockname(2) on a virtual netlink socket (@portid: its address). */
int netlink_bind(struct supervisor *sv, const struct seccomp_notif *req,
		 struct seccomp_notif_resp *resp);
int netlink_getsockname(struct supervisor *sv, const struct seccomp_notif *req,
			struct seccomp_notif_resp *resp, uint32_t portid);

/* ports.c: answer getsockname(2) or getpeername(2) with the address @addr (@klen bytes), as
 * the kernel does: at most the caller's buffer length, then the full length. */
int notif_answer_sockaddr(struct supervisor *sv, const struct seccomp_notif *req,
			  struct seccomp_notif_resp *resp, const void *addr, socklen_t klen);
/* ports.c: under port_remap, whether the TCP destination @ss (@len bytes) is a virtual port of
 * this host bound elsewhere: 1 and its pair in *@e, else 0. */
int ports_connect_remapped(struct supervisor *sv, const struct sockaddr_storage *ss, socklen_t len,
			   struct port_entry *e);
/* ports.c, on a worker: point @ss at the real port of pair @e if one of the pair's sockets
 * still listens there for that address. A pair whose sockets are gone is not followed: the
 * connect rules were checked on the virtual port, and the real one may be anybody's now. */
void ports_connect_rewrite(const struct port_entry *e, struct sockaddr_storage *ss);

/* proc-net.c: the sandbox's /proc/net/tcp (@v6: tcp6): the host's table with only the rows of
 * sockets its processes hold, and virtual ports. *@ret (malloc'd) and *@ret_len. -errno. */
int proc_net_table(struct supervisor *sv, int v6, char **ret, size_t *ret_len);
/* proc-net.c: whether one of the sockets of pair @e still listens on its real port (asked of
 * sock_diag, by inode), and, with @dest, takes a connect to that address (bound to it or to the
 * wildcard): 1, 0 or -errno. */
int proc_net_entry_alive(const struct port_entry *e, const struct sockaddr_storage *dest);

/* procs.c: call @fn for each process of the sandbox (a member of one of its process groups),
 * zombies included (state 'Z'); stops at the first non-zero return, which it returns, or
 * -errno, also when a process's stat cannot be read (not gone: unreadable), so that no count
 * built on the scan comes out low. */
struct proc_info {
	pid_t pid, ppid, pgrp;
	char state;
};
/* procs.c: state, parent and process group of process (or thread) @pid, from its stat.
 * -ESRCH (gone), -EPERM (unreadable: cannot tell). */
int proc_info_of(pid_t pid, struct proc_info *ret);
/* procs.c: whether process (or thread) @pid is one of the sandbox's: a member of its groups. */
int sandbox_owns_pid(struct supervisor *sv, pid_t pid);
int sandbox_processes(struct supervisor *sv, int (*fn)(const struct proc_info *p, void *arg),
		      void *arg);
/* procs.c: a task through which process @p is alive: its pid, or for a leader that exited
 * while other threads run on (it reads as a zombie), one of those; 0 when the process is a
 * zombie indeed; -EPERM when its task list cannot be read (cannot tell). */
pid_t proc_live_task(const struct proc_info *p);

/* memory.c: /proc/meminfo as a sandbox under max_memory sees it: MemTotal the limit,
 * MemFree and MemAvailable what is left of it (malloc'd in *@ret). -errno. */
int memory_meminfo(struct supervisor *sv, char **ret, size_t *ret_len);

/* proc-views.c: /proc/loadavg (the sandbox's processes), /proc/uptime (since it started),
 * /proc/mounts or (@info) mountinfo (the mounts it reaches), /etc/hostname (its name). Text
 * malloc'd in *@ret. -errno. */
int view_loadavg(struct supervisor *sv, char **ret, size_t *ret_len);
int view_uptime(struct supervisor *sv, char **ret, size_t *ret_len);
int view_mounts(struct supervisor *sv, int info, char **ret, size_t *ret_len);
int view_hostname(struct supervisor *sv, char **ret, size_t *ret_len);

/* cpus.c: /proc/cpuinfo as a sandbox of @ncpus CPUs sees it (malloc'd in *@ret). -errno. */
int cpus_cpuinfo(unsigned ncpus, char **ret, size_t *ret_len);

/* open.c: an O_PATH descriptor of @path as the trapped thread would reach it (from its root,
 * its working directory, or its descriptor @dirfd; "/proc/self/fd/N/..." and "/dev/fd/N/..."
 * from its descriptor N), without following magic links; @resolve: more RESOLVE_* flags,
 * @nofollow: O_NOFOLLOW (a final symlink is opened itself). -errno (-ELOOP for a magic link),
 * NOTIF_GONE. */
int child_path_open(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		    const char *path, uint64_t resolve, int nofollow);

/* open.c: the path at @addr in the trapped task, NUL-terminated in @buf of @size bytes.
 * -ENAMETOOLONG, -EFAULT, NOTIF_GONE. */
int child_read_path(struct supervisor *sv, const struct seccomp_notif *req, uint64_t addr,
		    char *buf, size_t size);
/* open.c: the path the kernel gives descriptor @fd (its link in /proc/self/fd), in @buf. */
ssize_t fd_real_path(int fd, char *buf, size_t size);
/* open.c: whether thread @tid has the ids, capabilities and seccomp filters the sandbox
 * started with (proc_ids_snapshot): 1, 0, or NOTIF_GONE. What the supervisor does on a
 * thread's behalf with its own rights is done only for such a thread. */
int proc_same_ids(struct supervisor *sv, pid_t tid);
/* proc_same_ids for what a file's owner and capabilities decide (the ids, the groups, the
 * effective capabilities), not the seccomp filters or no_new_privs: 1, 0, or NOTIF_GONE. */
int proc_same_creds(struct supervisor *sv, pid_t tid);
/* fs-write.c: an open beneath a writable grant that holds a denied path (plan.fs.write_roots):
 * answered (0 with @resp set, NOTIF_DEFERRED, -errno), or FS_WRITE_NOT_MINE for the other
 * handlers of open.c to decide. */
#define FS_WRITE_NOT_MINE 1
/* hostname.c: an open of a sandbox given a name (supervisor.hostname_served), whose name at
 * @path_addr is read into @path (*@have_path set) when it may be /etc/hostname: answered with
 * the name (NOTIF_DEFERRED), refused (-EACCES: a write), NOTIF_GONE, or HOSTNAME_NOT_MINE for
 * any other file. */
#define HOSTNAME_NOT_MINE 1
int hostname_open(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		  uint64_t path_addr, char *path, size_t size, int *have_path, uint64_t flags,
		  uint64_t resolve);
int fs_write_open(struct supervisor *sv, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp, int dirfd, const char *path, uint64_t flags,
		  uint64_t mode, uint64_t resolve);
/* fs-write.c: bind(2) of AF_UNIX socket @sock (the child's, a copy) to a name beneath a writable
 * grant that holds a denied path: answered, or FS_WRITE_NOT_MINE. */
int fs_write_bind(struct supervisor *sv, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp, int sock);
