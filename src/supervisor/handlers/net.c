/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/net: connect(2) on the child's behalf, trapped in every supervised sandbox. For an IP
 * socket under rules Landlock cannot express (policy_net_onbehalf) the supervisor copies the
 * address (longer than a sockaddr_storage: EINVAL), takes the child's socket with pidfd_getfd,
 * learns its protocol (TCP, UDP, ICMP) and matches the destination (IPv4-mapped IPv6 as IPv4)
 * against that protocol's allow rules, then the deny rules, which win; a refused destination
 * gets ECONNREFUSED. An allowed one is connected here, on the socket the child named, with the
 * address that was checked: the child's memory is never read again. A TCP connect is made by a
 * worker thread, which answers when it ends, so the loop never waits; one to a port the HTTP
 * proxy intercepts is made to the proxy instead (net-http.c). A named UNIX socket needs a write
 * grant (net-unix.c) and is connected the same way.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fd-util.h"
#include "handlers.h"
#include "net.h"
#include "netlink.h"
#include "plan/plan.h"
#include "ports.h"
#include "procs.h"
#include "supervisor/child.h"
#include "supervisor/events.h"
#include "supervisor/policy-fn.h"
#include "supervisor/supervisor.h"

/* The destination of @ss as the rules see it. Returns 0, or -EINVAL/-EAFNOSUPPORT as the
 * kernel's connect would for a short or foreign address. */
static int destination(const struct sockaddr_storage *ss, socklen_t len, int *family,
		       uint8_t addr[16], uint16_t *port)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
		if (len < sizeof(*in))
			return -EINVAL;
		*family = AF_INET;
		memcpy(addr, &in->sin_addr, 4);
		*port = ntohs(in->sin_port);
		return 0;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
		if (len < 24) /* SIN6_LEN_RFC2133: the kernel's minimum */
			return -EINVAL;
		*family = AF_INET6;
		memcpy(addr, &in6->sin6_addr, 16);
		*port = ntohs(in6->sin6_port);
		return 0;
	}
	return -EAFNOSUPPORT;
}

/* The kernel sends a connect to the unspecified address (0.0.0.0, ::, ::ffff:0.0.0.0) to the
 * host itself: IPv4 to the socket's bound address, else 127.0.0.1; IPv6 to ::1 (::ffff:127.0.0.1
 * for a socket bound to a mapped address). Do the same in @ss, the copy the worker connects
 * with, and in @addr, what the rules see, so "deny 127.0.0.0/8" also covers 0.0.0.0 and the
 * decision is about the address actually connected. */
static int unspecified_to_local(int sock, struct sockaddr_storage *ss, int *family,
				uint8_t addr[16])
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const uint8_t zero[16] = { 0 };
	const uint8_t loop4[4] = { 127, 0, 0, 1 };
	struct sockaddr_storage bound = { 0 };
	socklen_t blen = sizeof(bound);

	int v4 = *family == AF_INET
			 ? memcmp(addr, zero, 4) == 0
			 : memcmp(addr, mapped, 12) == 0 && memcmp(addr + 12, zero, 4) == 0;
	int v6 = *family == AF_INET6 && memcmp(addr, zero, 16) == 0;
	if (!v4 && !v6)
		return 0;
	if (getsockname(sock, (struct sockaddr *)&bound, &blen) < 0)
		return negative_errno();
	const uint8_t *b4 = NULL; /* the bound IPv4 address, if any */
	if (bound.ss_family == AF_INET)
		b4 = (const uint8_t *)&((struct sockaddr_in *)&bound)->sin_addr;
	const uint8_t *b6 = bound.ss_family == AF_INET6
				    ? (const uint8_t *)&((struct sockaddr_in6 *)&bound)->sin6_addr
				    : NULL;
	if (b6 && memcmp(b6, mapped, 12) == 0)
		b4 = b6 + 12;
	if (v4) {
		const uint8_t *to = b4 && memcmp(b4, zero, 4) != 0 ? b4 : loop4;
		if (*family == AF_INET) {
			memcpy(&((struct sockaddr_in *)ss)->sin_addr, to, 4);
			memcpy(addr, to, 4);
		} else {
			memcpy(((struct sockaddr_in6 *)ss)->sin6_addr.s6_addr + 12, to, 4);
			memcpy(addr + 12, to, 4);
		}
		return 0;
	}
	struct in6_addr to = IN6ADDR_LOOPBACK_INIT;
	if (b6 && memcmp(b6, mapped, 12) == 0) {
		memcpy(to.s6_addr, mapped, 12);
		memcpy(to.s6_addr + 12, loop4, 4);
	}
	((struct sockaddr_in6 *)ss)->sin6_addr = to;
	memcpy(addr, to.s6_addr, 16);
	return 0;
}

/* NET_ALLOWED, NET_NO_RULE, or the index of the deny rule that refuses the destination: an
 * allow rule of its protocol must cover it, and no deny rule may. */
static long net_decide(const struct plan_net *net, uint32_t proto, int family, const uint8_t *addr,
		       uint16_t port)
{
	int ok = 0;

	for (size_t i = 0; i < net->n_allow && !ok; i++)
		ok = net_rule_match(&net->allow[i], proto, family, addr, port);
	if (!ok)
		return NET_NO_RULE;
	for (size_t i = 0; i < net->n_deny; i++)
		if (net_rule_match(&net->deny[i], proto, family, addr, port))
			return (long)i;
	return NET_ALLOWED;
}

void net_allowed_event(struct supervisor *sv, const struct seccomp_notif *req, uint32_t proto,
		       const struct sockaddr_storage *ss, socklen_t len)
{
	struct net_dest d = { .proto = proto };
	uint8_t addr[16];

	if (!events_wants(sv->events, SANDLOCK_VERDICT_ALLOW) ||
	    destination(ss, len, &d.family, addr, &d.port) < 0)
		return;
	d.addr = addr;
	net_event(sv, req, &d, SANDLOCK_VERDICT_ALLOW, 0, NULL, NULL);
}

/* The connects one sandbox may have made on its behalf at once, running or waiting for a
 * worker: each holds the socket and, for a UNIX address, the pin of its path, descriptors of
 * the host process. Beyond: EAGAIN, what a UNIX connect whose listener's backlog is full says. */
#define NET_MAX_CONNECTS 128

struct connect_job {
	atomic_int *held; /* the supervisor's count of connects held */
	uint64_t id;
	int pin; /* the O_PATH descriptor a UNIX address names, or -1 */
	socklen_t len;
	struct sockaddr_storage ss;
	int remapped; /* port_remap: ss is a virtual port of this host, bound elsewhere */
	struct port_entry remap;
	struct http_proxy *proxy; /* an intercepted port: connected to the proxy (net-http.c) */
	int domain;
};

/* On a worker: the blocking connect, then the answer. Run with listener -1 when the sandbox
 * ended first: only releases. */
static void connect_worker(int listener, int sock, void *arg)
{
	struct connect_job *job = arg;
	struct seccomp_notif_resp resp = { .id = job->id };

	/* A job may have waited in the queue: the caller may have given up (interrupted), and
	 * its socket must not be connected behind its back. */
	if (listener >= 0 && notif_id_valid(listener, job->id)) {
		/* Checked on the port asked for; made to the real one while it is the pair's. */
		if (job->remapped)
			ports_connect_rewrite(&job->remap, &job->ss);
		int r = job->proxy ? net_http_connect(job->proxy, sock, job->domain, &job->ss,
						      job->len)
			: connect(sock, (struct sockaddr *)&job->ss, job->len) < 0
				? negative_errno()
				: 0;
		notif_answer_errno(&resp, r);
		if (r == 0)
			notif_answer_value(&resp, 0);
		(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp); /* ENOENT: gone */
	}
	safe_close(job->pin);
	atomic_fetch_sub(job->held, 1);
	free(job);
}

int net_route(struct supervisor *sv, const struct seccomp_notif *req, int sock, int domain,
	      uint32_t proto, int check, struct sockaddr_storage *ss, socklen_t *len, int *pin)
{
	int family;
	uint8_t addr[16];
	uint16_t port;

	*pin = -1;
	if (domain == AF_UNIX && *len > sizeof(struct sockaddr_un))
		return -EINVAL; /* as the kernel's unix_validate_addr */
	if (domain == AF_UNIX && ss->ss_family == AF_UNIX &&
	    *len > offsetof(struct sockaddr_un, sun_path)) {
		if (((struct sockaddr_un *)ss)->sun_path[0] != '\0')
			return net_unix_route(sv, req, ss, len, pin);
		if (sv->plan->net.abstract_open)
			return 0;
		net_abstract_event(sv, req, ss, *len);
		return -EPERM; /* net.h */
	}
	if ((domain != AF_INET && domain != AF_INET6) || ss->ss_family == AF_UNSPEC)
		return 0; /* reaches nobody new: AF_UNSPEC dissolves an association */
	/* A policy_fn that restricted the network has every destination checked here. */
	int limited = policy_fn_net_limited(sv);
	if (!check && !limited) {
		/* The kernel's to decide (Landlock's port rules), or a TCP send, which goes where
		 * its connect went: only a connect is shown as let through. */
		if (proto != NET_PROTO_TCP || req->data.nr == SYS_connect)
			net_allowed_event(sv, req, proto, ss, *len);
		return 0;
	}
	int r = destination(ss, *len, &family, addr, &port);
	if (r == 0)
		r = unspecified_to_local(sock, ss, &family, addr);
	if (r < 0)
		return r;
	struct net_dest d = { .family = family, .addr = addr, .port = port, .proto = proto };
	long decided = check ? net_decide(&sv->plan->net, proto, family, addr, port) : NET_ALLOWED;
	/* After the static allow rules (the ceiling) and with their deny rules winning: the
	 * policy_fn's per-pid set, else its live set. */
	if (decided == NET_ALLOWED && limited &&
	    !policy_fn_net_allows(sv, (pid_t)req->pid, family, addr))
		decided = NET_NO_RULE;
	if (decided != NET_ALLOWED) {
		/* The answer the call gets: handle_connect turns a refusal into Landlock's EACCES
		 * where the connect rules are Landlock's (no net.onbehalf). */
		net_refused_event(sv, req, &d, decided,
				  sv->plan->net.onbehalf ? ECONNREFUSED : EACCES);
		return -ECONNREFUSED;
	}
	if (events_wants(sv->events, SANDLOCK_VERDICT_ALLOW))
		net_event(sv, req, &d, SANDLOCK_VERDICT_ALLOW, 0, NULL, NULL);
	return 0;
}

/* A connect to the HTTP proxy's own listener, answered @err. */
static void http_refused_event(struct supervisor *sv, const struct seccomp_notif *req,
			       const struct sockaddr_storage *ss, socklen_t len, int err)
{
	struct net_dest d = { .proto = NET_PROTO_TCP };
	uint8_t addr[16];

	if (destination(ss, len, &d.family, addr, &d.port) < 0)
		return;
	d.addr = addr;
	net_event(sv, req, &d, SANDLOCK_VERDICT_DENY, err,
		  "the HTTP proxy is reached only through its redirect", NULL);
}

/* Where @req's connect of @sock (family @domain, protocol @proto) to @ss may go (net_route,
 * rewritten in place; *@pin: the path a UNIX address names), and the answer of a refusal. */
static int connect_decide(struct supervisor *sv, const struct seccomp_notif *req, int sock,
			  int domain, uint32_t proto, struct sockaddr_storage *ss, socklen_t *len,
			  int *pin)
{
	/* Even where Landlock's port rules would decide (TCP rules to any host, datagram sockets
	 * open to every destination), the connect is made here and not left to the kernel
	 * (CONTINUE): reading the descriptor and address again, it could find a UNIX socket and a
	 * path swapped in by another thread, past the write-grant check. So the supervisor applies
	 * those port rules itself, with Landlock's answer (EACCES); with the NetTcp protection
	 * not in force there are none. Datagram sockets exist then only when open. */
	int direct = !sv->plan->net.onbehalf;
	int check = !direct || (proto == NET_PROTO_TCP && !sv->plan->net.tcp_open);
	int r = net_route(sv, req, sock, domain, proto, check, ss, len, pin);
	/* The HTTP proxy is reached only through the redirect below, never by its address. */
	if (r == 0 && proto == NET_PROTO_TCP && net_http_refused(sv, ss, *len)) {
		r = -ECONNREFUSED;
		http_refused_event(sv, req, ss, *len, direct ? EACCES : ECONNREFUSED);
	}
	return r == -ECONNREFUSED && direct ? -EACCES : r;
}

/* A TCP or UNIX stream connect, which may wait: always on a worker, even for a socket in
 * non-blocking mode: the file status flags are shared with the child, which could clear
 * O_NONBLOCK between a check here and the call, and the loop (which also runs the timeout) must
 * never wait. NOTIF_DEFERRED (the job owns @sock and @pin then), or -errno. */
static int connect_queue(struct supervisor *sv, const struct seccomp_notif *req, int sock,
			 int domain, uint32_t proto, const struct sockaddr_storage *ss,
			 socklen_t len, int pin)
{
	struct connect_job *job = malloc(sizeof(*job));
	int r;

	if (!job)
		return -ENOMEM;
	*job = (struct connect_job){
		.held = &sv->net_connects, .id = req->id, .pin = pin, .len = len, .ss = *ss
	};
	if (proto == NET_PROTO_TCP)
		job->remapped = ports_connect_remapped(sv, ss, len, &job->remap);
	if (proto == NET_PROTO_TCP && net_http_intercepted(sv, domain, ss)) {
		job->proxy = sv->proxy;
		job->domain = domain;
	}
	if (atomic_fetch_add(job->held, 1) >= NET_MAX_CONNECTS)
		r = -EAGAIN;
	else
		r = supervisor_run_worker(sv, sock, connect_worker, job);
	if (r < 0) {
		atomic_fetch_sub(job->held, 1);
		free(job);
		return r; /* -EAGAIN: too many connects held or waiting already */
	}
	return NOTIF_DEFERRED;
}

int handle_connect(struct supervisor *sv, const struct seccomp_notif *req,
		   struct seccomp_notif_resp *resp)
{
	struct sockaddr_storage ss = { 0 };
	uint64_t len = req->data.args[2] & 0xffffffffu; /* socklen_t */
	socklen_t slen;
	int domain = 0, type = 0, pin = -1;
	uint32_t proto = 0;
	int r;

	/* In the kernel's order: the descriptor (EBADF, ENOTSOCK), then the address. */
	_cleanup_close_ int sock = net_take_socket(sv, req, &domain);
	if (sock < 0)
		return sock;
	if (domain == AF_INET || domain == AF_INET6) {
		r = net_sock_proto(sock, &proto, &type);
		if (r < 0)
			return r;
	}
	if (len > sizeof(ss) || len < sizeof(ss.ss_family))
		return -EINVAL;
	if (domain == AF_UNIX && netlink_fake_portid(sv, sock, NULL)) {
		notif_answer_value(resp, 0); /* a virtual netlink socket: to the kernel, as given */
		return 0;
	}
	r = notif_mem_read(sv->listener, req, req->data.args[1], &ss, len);
	if (r == 0) /* a held connect: the address its policy_fn approved, or EPERM */
		r = policy_fn_addr_check(sv, &ss, len);
	if (r < 0)
		return r;
	slen = (socklen_t)len;
	r = connect_decide(sv, req, sock, domain, proto, &ss, &slen, &pin);
	if (r < 0)
		return r;
	_cleanup_close_ int pinned = pin;
	if (proto != NET_PROTO_TCP && domain != AF_UNIX) {
		/* A datagram or netlink connect sets an address; it never waits. */
		r = connect(sock, (struct sockaddr *)&ss, slen);
		notif_answer_errno(resp, r < 0 ? negative_errno() : 0);
		return 0;
	}
	r = connect_queue(sv, req, sock, domain, proto, &ss, slen, pin);
	if (r == NOTIF_DEFERRED) {
		TAKE_FD(pinned); /* the job's now */
		TAKE_FD(sock);
	}
	return r;
}

/* Whether no task but @tid holds @tid's descriptor table: every thread of the sandbox's
 * processes compared with kcmp(KCMP_FILES). A task that shares the table can only be made by
 * one that does (clone with CLONE_FILES), so while @tid waits in its trapped call, a scan that
 * finds none proves there are none. The scan goes up the pids as the kernel allocates them;
 * one made meanwhile has a higher pid and is reached, unless the pids wrapped around
 * (ns_last_pid went down: then it cannot tell). 1 or 0 (shared, or cannot tell). */
struct table_scan {
	pid_t tid;
	int shared;
};

static int process_shares_table(const struct proc_info *p, void *arg)
{
	struct table_scan *s = arg;
	char dir[64];

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)p->pid);
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : (s->shared = 1);
	for (struct dirent *e; !s->shared && (e = readdir(d));) {
		char *end;
		long tid = strtol(e->d_name, &end, 10);
		if (*end || tid <= 0 || tid == s->tid)
			continue;
		long r = syscall(SYS_kcmp, s->tid, (pid_t)tid, KCMP_FILES, 0, 0);
		s->shared = r == 0 || (r < 0 && errno != ESRCH); /* EPERM: cannot tell */
	}
	closedir(d);
	return s->shared;
}

static long last_pid(void)
{
	char buf[32] = "";
	_cleanup_close_ int fd = open("/proc/sys/kernel/ns_last_pid", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, buf, sizeof(buf) - 1) <= 0)
		return -1;
	return strtol(buf, NULL, 10);
}

int net_table_private(struct supervisor *sv, pid_t tid)
{
	struct table_scan s = { .tid = tid };
	long before = last_pid();

	if (before < 0 || sandbox_processes(sv, process_shares_table, &s) < 0)
		return 0;
	long after = last_pid();
	return !s.shared && after >= before;
}

/* listen(2), trapped wherever TCP bind is restricted: on an IP socket that is not bound yet,
 * listen binds an ephemeral port by itself, past Landlock's BIND_TCP check (a bind hook only),
 * and IP_LOCAL_PORT_RANGE lets the caller choose that port. So an unbound IP socket may listen
 * only when bind(0) is allowed. The decision is on the socket the supervisor took from the
 * child (pidfd_getfd), and the listen is made on that same socket, here: another thread that
 * puts an unbound socket under the number meanwhile changes nothing. Once bound, a socket
 * stays bound, so the check cannot go stale. */
int handle_listen(struct supervisor *sv, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp)
{
	int domain = 0;
	int backlog = (int)(uint32_t)req->data.args[1];

	_cleanup_close_ int sock = net_take_socket(sv, req, &domain);
	if (sock < 0)
		return sock;
	if (domain != AF_INET && domain != AF_INET6) {
		/* A UNIX (or netlink) socket's listener credentials, which its clients read with
		 * SO_PEERCRED, are those of the task calling listen: the caller's own are kept by
		 * letting the kernel make the call (CONTINUE) when nothing can put another socket
		 * under the number before the kernel reads it again: no other task holds the
		 * caller's descriptor table (net_table_private), and the caller waits in this call.
		 * Otherwise (a multithreaded process) the listen is made here, on the socket
		 * checked, and the listener's credentials are the supervisor's (docs/decisions.md).
		 */
		if (net_table_private(sv, (pid_t)req->pid) &&
		    notif_id_valid(sv->listener, req->id)) {
			return notif_answer_continue(resp);
		}
		int r = listen(sock, backlog);
		notif_answer_errno(resp, r < 0 ? negative_errno() : 0);
		return 0;
	}
	if (!sv->plan->net.bind_zero) {
		struct sockaddr_storage ss = { 0 };
		socklen_t len = sizeof(ss);
		if (getsockname(sock, (struct sockaddr *)&ss, &len) < 0)
			return negative_errno();
		uint16_t port = ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
							: ((struct sockaddr_in6 *)&ss)->sin6_port;
		if (port == 0) {
			ports_bind_event(sv, req, &ss, SANDLOCK_VERDICT_DENY, 0);
			return -EACCES; /* what Landlock answers bind(0) with */
		}
	}
	int r = listen(sock, backlog);
	notif_answer_errno(resp, r < 0 ? negative_errno() : 0);
	return 0;
}
