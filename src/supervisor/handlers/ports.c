/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/ports: bind(2), getsockname(2), getpeername(2), and port_remap, a TCP port space of
 * the sandbox's own.
 *
 * With port_remap a TCP bind is made here, on the socket the child named (pidfd_getfd), with
 * the address copied once and checked as the kernel would. The port the child asks for, its
 * virtual port, is checked against the bind rules (plan.net.bind_ports: what Landlock's
 * BIND_TCP allows the child itself), then bound as it is when it is free on the host; when the
 * host (or another sandbox) holds it, a worker checks that no socket of the sandbox listens on
 * that virtual port (EADDRINUSE then), takes another real port (a bind to port 0) and remembers
 * the pair with the socket's inode (sv->ports). A later bind of the same virtual port tries the
 * same real port first. getsockname and getpeername report virtual ports, a connect to a
 * loopback address and a virtual port reaches the real one while the pair's listener is there
 * (net.c), and /proc/net/tcp and tcp6 show the sandbox's sockets with their virtual ports
 * (proc-net.c, open.c). What the bind may take is decided here, on the copy: the port rules,
 * checked on the virtual port, are the same ones Landlock applies to the child, and the real
 * port is one the kernel chose.
 *
 * With a policy_fn, an IP socket's bind the callback allowed is made here too, the same way
 * (copied once, held to the address the callback was shown, checked against the same rules), so
 * what the callback allowed is what is bound.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fd-util.h"
#include "fs-meta.h"
#include "fs-write.h"
#include "handlers.h"
#include "macro.h"
#include "net.h"
#include "netlink.h"
#include "plan/plan.h"
#include "ports.h"
#include "proc-net.h"
#include "supervisor/child.h"
#include "supervisor/events.h"
#include "supervisor/policy-fn.h"
#include "supervisor/supervisor.h"

/* The port of an IPv4 or IPv6 address, and where it lies in @ss; NULL for another family or a
 * length the kernel would refuse. */
static in_port_t *ip_port(struct sockaddr_storage *ss, socklen_t len)
{
	if (ss->ss_family == AF_INET && len >= sizeof(struct sockaddr_in))
		return &((struct sockaddr_in *)ss)->sin_port;
	if (ss->ss_family == AF_INET6 && len >= 24) /* SIN6_LEN_RFC2133 */
		return &((struct sockaddr_in6 *)ss)->sin6_port;
	return NULL;
}

/* Whether @ss is an address of this host as a connect reaches it: 127.0.0.0/8, ::1, their
 * IPv4-mapped forms, and the unspecified addresses (the kernel sends those to the host). */
static int local_address(const struct sockaddr_storage *ss)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	const uint8_t *a;

	if (ss->ss_family == AF_INET) {
		a = (const uint8_t *)&((const struct sockaddr_in *)ss)->sin_addr;
		return a[0] == 127 || (a[0] | a[1] | a[2] | a[3]) == 0;
	}
	const struct in6_addr *a6 = &((const struct sockaddr_in6 *)ss)->sin6_addr;
	a = a6->s6_addr;
	if (memcmp(a, mapped, 12) == 0)
		return a[12] == 127 || (a[12] | a[13] | a[14] | a[15]) == 0;
	return IN6_IS_ADDR_LOOPBACK(a6) || IN6_IS_ADDR_UNSPECIFIED(a6);
}

int ports_connect_remapped(struct supervisor *sv, const struct sockaddr_storage *ss, socklen_t len,
			   struct port_entry *e)
{
	in_port_t *port =
		sv->plan->net.port_remap ? ip_port((struct sockaddr_storage *)ss, len) : NULL;

	return port && local_address(ss) && port_map_entry(&sv->ports, ntohs(*port), e) &&
	       e->real != e->virt;
}

void ports_connect_rewrite(const struct port_entry *e, struct sockaddr_storage *ss)
{
	in_port_t *port = &((struct sockaddr_in *)ss)->sin_port; /* sin6_port: same place */

	if (proc_net_entry_alive(e, ss) > 0)
		*port = htons(e->real);
}

/* The local port of @sock, or -errno. */
static int local_port(int sock)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len = sizeof(ss);

	if (getsockname(sock, (struct sockaddr *)&ss, &len) < 0)
		return negative_errno();
	in_port_t *port = ip_port(&ss, len);
	return port ? ntohs(*port) : -EAFNOSUPPORT;
}

static unsigned long inode_of(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 ? (unsigned long)st.st_ino : 0;
}

/* Bind @sock to @virt's real port @real (0: one the kernel picks) and record the pair. The
 * socket stays bound if recording fails (-ENOMEM): a bind cannot be undone. */
static int bind_as(struct supervisor *sv, int sock, struct sockaddr_storage *ss, socklen_t len,
		   uint16_t virt, uint16_t real)
{
	((struct sockaddr_in *)ss)->sin_port = htons(real); /* sin6_port: same place */
	if (bind(sock, (struct sockaddr *)ss, len) < 0)
		return negative_errno();
	int got = local_port(sock);
	if (got < 0)
		return got;
	return port_map_set(&sv->ports, virt, (uint16_t)got, inode_of(sock));
}

struct bind_job {
	struct supervisor *sv;
	uint64_t id;
	struct sockaddr_storage ss;
	socklen_t len;
	uint16_t virt;
};

/* On a worker: the port was taken. By one of the sandbox's own sockets of that virtual port:
 * in its port space too, so EADDRINUSE as on a host of its own. Else by the host or another
 * sandbox (or, for a real port the sandbox had, by whoever took it after the sandbox let it
 * go): another real port. Reading the tables is the slow part, hence a worker. */
static void bind_worker(int listener, int sock, void *arg)
{
	struct bind_job *job = arg;
	struct seccomp_notif_resp resp = { .id = job->id };
	struct port_entry e;

	if (listener >= 0 && notif_id_valid(listener, job->id)) {
		int r = 0;
		if (port_map_entry(&job->sv->ports, job->virt, &e))
			r = proc_net_entry_alive(&e, NULL);
		if (r > 0)
			r = -EADDRINUSE;
		else if (r == 0)
			r = bind_as(job->sv, sock, &job->ss, job->len, job->virt, 0);
		notif_answer_errno(&resp, r);
		(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp); /* ENOENT: gone */
	}
	free(job);
}

int ports_bind_allowed(const struct supervisor *sv, uint16_t port)
{
	const uint8_t *allowed = sv->plan->net.bind_ports;

	return !allowed || ((allowed[port / 8] >> (port % 8)) & 1);
}

static void bind_event(struct supervisor *sv, const struct seccomp_notif *req,
		       const struct sockaddr_storage *ss, uint32_t verdict, int judged,
		       const char *protocol)
{
	char host[INET6_ADDRSTRLEN] = "", reason[64], hint[64];
	const uint8_t *addr =
		ss->ss_family == AF_INET6
			? ((const struct sockaddr_in6 *)ss)->sin6_addr.s6_addr
			: (const uint8_t *)&((const struct sockaddr_in *)ss)->sin_addr;
	uint16_t port = ntohs(*ip_port((struct sockaddr_storage *)ss, sizeof(*ss)));
	struct event ev = {
		.nr = (int)req->data.nr,
		.category = EVENT_NETWORK,
		.pid = (pid_t)req->pid,
		.verdict = verdict,
		.judged = judged,
		.host = host,
		.port = port,
		.protocol = protocol,
	};

	if (verdict == SANDLOCK_VERDICT_ALLOW && !events_wants(sv->events, verdict))
		return;
	ev.family = net_host_text(ss->ss_family == AF_INET6 ? AF_INET6 : AF_INET, addr, host,
				  sizeof(host));
	if (verdict != SANDLOCK_VERDICT_ALLOW) {
		snprintf(reason, sizeof(reason), "no bind grant covers port %u", (unsigned)port);
		snprintf(hint, sizeof(hint), "add --net-allow-bind %u", (unsigned)port);
		ev.error = EACCES; /* Landlock's answer, or the supervisor's in its place */
		ev.reason = reason;
		ev.hint = hint;
	}
	events_emit(sv, &ev);
}

void ports_bind_event(struct supervisor *sv, const struct seccomp_notif *req,
		      const struct sockaddr_storage *ss, uint32_t verdict, int judged)
{
	bind_event(sv, req, ss, verdict, judged, "tcp");
}

/* In logging mode (events), a TCP bind left to the kernel: its port judged against the rules
 * Landlock's BIND_TCP was given (plan.net.bind_ports), for the log only. The address is read
 * once, for the event; the kernel reads it again and decides, whatever it finds. */
static void judge_bind(struct supervisor *sv, const struct seccomp_notif *req, int sock, int domain)
{
	struct sockaddr_storage ss = { 0 };
	uint64_t len = req->data.args[2] & 0xffffffffu; /* socklen_t */
	uint32_t proto = 0;
	int type = 0;

	/* plan.events built bind_ports; the stream's flags are the same run's. */
	if (!events_flags(sv->events) || !sv->plan->events ||
	    (domain != AF_INET && domain != AF_INET6) || net_sock_proto(sock, &proto, &type) < 0 ||
	    proto != NET_PROTO_TCP || len > sizeof(ss) ||
	    len < (domain == AF_INET ? sizeof(struct sockaddr_in) : 24) || /* as bind_address */
	    notif_mem_read(sv->listener, req, req->data.args[1], &ss, len) < 0)
		return;
	if (domain == AF_INET && ss.ss_family == AF_UNSPEC &&
	    ((struct sockaddr_in *)&ss)->sin_addr.s_addr == htonl(INADDR_ANY))
		ss.ss_family = AF_INET;
	if (ss.ss_family != domain)
		return; /* the kernel's EAFNOSUPPORT, no rule's */
	int ok = ports_bind_allowed(sv, ntohs(*ip_port(&ss, (socklen_t)len)));
	ports_bind_event(sv, req, &ss, ok ? SANDLOCK_VERDICT_ALLOW : SANDLOCK_VERDICT_DENY, !ok);
}

/* The address of @req's bind of an IP socket of family @domain, copied once and checked as the
 * kernel's move_addr_to_kernel, then inet_bind/inet6_bind, would, in @ss (*@ret_len bytes):
 * nothing is bound that was not checked. A bind a policy_fn allowed must name the address the
 * callback was shown (another thread may have changed it since): else -EPERM. */
static int bind_address(struct supervisor *sv, const struct seccomp_notif *req, int domain,
			struct sockaddr_storage *ss, socklen_t *ret_len)
{
	uint64_t len = req->data.args[2] & 0xffffffffu; /* socklen_t */

	if (len > sizeof(*ss))
		return -EINVAL;
	int r = len ? notif_mem_read(sv->listener, req, req->data.args[1], ss, len) : 0;
	if (r == 0)
		r = policy_fn_addr_check(sv, ss, len);
	if (r < 0)
		return r;
	if (len < (domain == AF_INET ? sizeof(struct sockaddr_in) : 24)) /* SIN6_LEN_RFC2133 */
		return -EINVAL;
	/* AF_UNSPEC with INADDR_ANY is an IPv4 bind for the kernel (a compatibility rule), and
	 * for Landlock's port check: for the one here too. */
	if (domain == AF_INET && ss->ss_family == AF_UNSPEC &&
	    ((struct sockaddr_in *)ss)->sin_addr.s_addr == htonl(INADDR_ANY))
		ss->ss_family = AF_INET;
	if (ss->ss_family != domain)
		return -EAFNOSUPPORT;
	*ret_len = (socklen_t)len;
	return 0;
}

/* The lowest port a bind may take without CAP_NET_BIND_SERVICE (this network namespace's, the
 * child's too: the sandbox makes no other); the kernel's default where it cannot be read. */
static unsigned unprivileged_port_start(void)
{
	char buf[16] = "";
	_cleanup_close_ int fd =
		open("/proc/sys/net/ipv4/ip_unprivileged_port_start", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || read(fd, buf, sizeof(buf) - 1) <= 0)
		return 1024;
	return (unsigned)strtoul(buf, NULL, 10);
}

/* What the kernel checks of a bind of @port (TCP or UDP, @proto) that a bind made here, with
 * the supervisor's rights, would not check for the caller: for TCP, Landlock's BIND_TCP port
 * rules (plan.net.bind_ports, EACCES as Landlock answers, with its event); below the
 * unprivileged ports, CAP_NET_BIND_SERVICE, which the supervisor's rights stand for only when
 * they are the caller's (fs_meta_creds; else EACCES, the kernel's answer without it). */
static int bind_permitted(struct supervisor *sv, const struct seccomp_notif *req,
			  const struct sockaddr_storage *ss, uint32_t proto, uint16_t port)
{
	const char *name = proto == NET_PROTO_TCP ? "tcp" : "udp";

	if (proto == NET_PROTO_TCP && !ports_bind_allowed(sv, port)) {
		bind_event(sv, req, ss, SANDLOCK_VERDICT_DENY, 0, name);
		return -EACCES; /* what Landlock's BIND_TCP answers */
	}
	if (port != 0 && port < unprivileged_port_start()) {
		int r = fs_meta_creds(sv, req);
		if (r == NOTIF_GONE)
			return r;
		if (r != 1)
			return -EACCES;
	}
	bind_event(sv, req, ss, SANDLOCK_VERDICT_ALLOW, 0, name);
	return 0;
}

/* A bind of an IP socket (@proto NET_PROTO_*) in a sandbox with a policy_fn, made here on
 * @sock with the address the callback was shown (bind_address), so what it allowed is what is
 * bound. An ICMP (ping) socket's "port" is its echo identifier: nothing the kernel checks. */
static int behalf_bind(struct supervisor *sv, const struct seccomp_notif *req,
		       struct seccomp_notif_resp *resp, int sock, int domain, uint32_t proto)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len = 0;
	int r = bind_address(sv, req, domain, &ss, &len);

	if (r < 0)
		return r;
	if (proto != NET_PROTO_ICMP) {
		r = bind_permitted(sv, req, &ss, proto, ntohs(*ip_port(&ss, len)));
		if (r < 0)
			return r;
	}
	notif_answer_errno(resp,
			   bind(sock, (struct sockaddr *)&ss, len) < 0 ? negative_errno() : 0);
	return 0;
}

/* A TCP bind under port_remap, on @sock (the child's socket, family @domain). */
static int remap_bind(struct supervisor *sv, const struct seccomp_notif *req,
		      struct seccomp_notif_resp *resp, int sock, int domain)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len = 0;
	int r = bind_address(sv, req, domain, &ss, &len);

	if (r < 0)
		return r;
	uint16_t virt = ntohs(*ip_port(&ss, len));
	r = bind_permitted(sv, req, &ss, NET_PROTO_TCP, virt);
	if (r < 0)
		return r;
	if (virt == 0) {
		/* An ephemeral port: the kernel's choice, no pair. A pair whose real port it is
		 * had its sockets closed, or the kernel would not hand the port out. */
		if (bind(sock, (struct sockaddr *)&ss, len) < 0)
			return negative_errno();
		int got = local_port(sock);
		if (got > 0)
			port_map_forget_real(&sv->ports, (uint16_t)got);
		notif_answer_value(resp, 0);
		return 0;
	}
	int known = port_map_real(&sv->ports, virt);
	r = bind_as(sv, sock, &ss, len, virt, known > 0 ? (uint16_t)known : virt);
	if (r != -EADDRINUSE) {
		notif_answer_errno(resp, r);
		return 0;
	}
	struct bind_job *job = malloc(sizeof(*job));
	if (!job)
		return -ENOMEM;
	*job = (struct bind_job){ .sv = sv, .id = req->id, .ss = ss, .len = len, .virt = virt };
	r = supervisor_run_worker(sv, sock, bind_worker, job);
	if (r < 0) {
		free(job);
		return r;
	}
	return NOTIF_DEFERRED; /* the worker owns the socket now */
}

/* A bind the policy_fn allowed that is not an IP socket's (a UNIX socket name is resolved
 * against the binder's working directory and root, under the filesystem rules, with no address
 * the callback decided on): left to the kernel (CONTINUE) only when nothing can put an IP socket
 * under the number before the kernel reads it again: no other task holds the caller's
 * descriptor table (net_table_private), and the caller waits in this call. Else EPERM: the
 * kernel would bind a swapped-in IP socket with an address the callback never saw. */
static int held_other_bind(struct supervisor *sv, const struct seccomp_notif *req,
			   struct seccomp_notif_resp *resp)
{
	if (!net_table_private(sv, (pid_t)req->pid))
		return -EPERM;
	if (!notif_id_valid(sv->listener, req->id))
		return NOTIF_GONE;
	return notif_answer_continue(resp);
}

/* bind(2): a virtual netlink socket's (netlink.c); a UNIX socket name made in the directories
 * on the way to a denied path of a writable grant (fs-write.c); a TCP bind under port_remap, and
 * an IP socket's bind the policy_fn allowed, made here (above); a bind the policy_fn allowed of
 * another socket: held_other_bind; any other, CONTINUE. Safe although the kernel reads the
 * descriptor and address again: what such a bind may take is decided by the kernel whatever it
 * finds (Landlock's BIND_TCP for TCP ports, the filesystem rules for a UNIX socket path; UDP bind
 * is not gated), nothing here. A descriptor swapped for a TCP socket meanwhile is bound under
 * Landlock's port rules, only outside the virtual port space. */
int handle_bind(struct supervisor *sv, const struct seccomp_notif *req,
		struct seccomp_notif_resp *resp)
{
	int domain = 0, type = 0, r;
	uint32_t proto = 0;

	_cleanup_close_ int sock = net_take_socket(sv, req, &domain);
	int held = policy_fn_deciding(sv);
	if (sock == NOTIF_GONE || (sock < 0 && held))
		return sock; /* EBADF, ENOTSOCK: the kernel's answer, given here */
	if (sock >= 0 && domain == AF_UNIX && netlink_fake_portid(sv, sock, NULL))
		return netlink_bind(sv, req, resp);
	if (sock >= 0 && domain == AF_UNIX && sv->plan->fs.write_roots) {
		r = fs_write_bind(sv, req, resp, sock);
		if (r != NOTIF_NOT_MINE)
			return r;
	}
	int ip = sock >= 0 && (domain == AF_INET || domain == AF_INET6);
	if (ip && (held || sv->plan->net.port_remap)) {
		r = net_sock_proto(sock, &proto, &type);
		if (r < 0 && held)
			return r;
		if (r == 0 && sv->plan->net.port_remap && proto == NET_PROTO_TCP) {
			r = remap_bind(sv, req, resp, sock, domain);
			if (r == NOTIF_DEFERRED)
				TAKE_FD(sock);
			return r;
		}
		if (held)
			return behalf_bind(sv, req, resp, sock, domain, proto);
	}
	if (held)
		return held_other_bind(sv, req, resp);
	if (sock >= 0)
		judge_bind(sv, req, sock, domain);
	return notif_answer_continue(resp);
}

/* getsockname(2), getpeername(2): a virtual netlink socket's address (netlink.c); under
 * port_remap, an IP socket's address with the virtual port (for a peer, one on this host);
 * with the HTTP proxy, a redirected socket's peer is its original destination (net-http.c);
 * for any other socket, CONTINUE, which is safe whatever the kernel reads again: the call
 * reports the caller's own socket and decides nothing. */
static int sockname(struct supervisor *sv, const struct seccomp_notif *req,
		    struct seccomp_notif_resp *resp, int peer)
{
	int domain = 0;
	uint32_t portid = 0;

	_cleanup_close_ int sock = net_take_socket(sv, req, &domain);
	if (sock == NOTIF_GONE)
		return sock;
	if (sock >= 0 && domain == AF_UNIX && netlink_fake_portid(sv, sock, &portid))
		return peer ? -ENOTCONN : netlink_getsockname(sv, req, resp, portid);
	int redirects = peer && sv->proxy;
	if (sock < 0 || (!sv->plan->net.port_remap && !redirects) ||
	    (domain != AF_INET && domain != AF_INET6)) {
		return notif_answer_continue(resp);
	}
	struct sockaddr_storage ss = { 0 };
	socklen_t len = sizeof(ss);
	if ((peer ? getpeername(sock, (struct sockaddr *)&ss, &len)
		  : getsockname(sock, (struct sockaddr *)&ss, &len)) < 0)
		return negative_errno();
	/* A connection redirected to the HTTP proxy: the peer the program connected to. */
	int r = redirects ? net_http_peer(sv, sock, &ss, &len) : 0;
	if (r < 0)
		return r;
	in_port_t *port = sv->plan->net.port_remap ? ip_port(&ss, len) : NULL;
	if (port && (!peer || local_address(&ss))) {
		int virt = port_map_virtual(&sv->ports, ntohs(*port));
		if (virt >= 0)
			*port = htons((uint16_t)virt);
	}
	return notif_answer_sockaddr(sv, req, resp, &ss, len);
}

int handle_getsockname(struct supervisor *sv, const struct seccomp_notif *req,
		       struct seccomp_notif_resp *resp)
{
	return sockname(sv, req, resp, 0);
}

int handle_getpeername(struct supervisor *sv, const struct seccomp_notif *req,
		       struct seccomp_notif_resp *resp)
{
	return sockname(sv, req, resp, 1);
}
