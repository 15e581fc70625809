/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/net: where a connect or a send goes under the rules (net.c: connect, listen, the
 * route of an address; net-unix.c: its UNIX half; net-send.c: sendto, sendmsg, sendmmsg).
 */
#pragma once

#include <linux/seccomp.h>
#include <stdint.h>
#include <sys/socket.h>

struct supervisor;
struct plan_net;

/* Whether no task but @tid holds @tid's descriptor table (net.c; a kcmp scan of the sandbox's
 * threads): 1, or 0 (shared, or it cannot tell). While @tid waits in a trapped call, no
 * descriptor of it can change under it then. */
int net_table_private(struct supervisor *sv, pid_t tid);
/* Where the address @ss (@len bytes, copied from the child) sends a connect or a send of @sock
 * (family @domain, NET_PROTO_* @proto for an IP socket) under the rules, rewritten in place to
 * what the supervisor passes to the kernel:
 *  - IP: the destination matched against the rules of the socket's protocol (deny wins),
 *    unspecified addresses as the kernel reads them; refused: -ECONNREFUSED. @check 0 skips the
 *    match (a TCP send, whose address the kernel ignores);
 *  - a UNIX socket path: resolved as the child would (its root, its thread's cwd), the socket's
 *    real path under a write grant, else -EACCES; rewritten to /proc/self/fd/N of an O_PATH
 *    descriptor of it, returned in *@pin (the caller closes it after the call);
 *  - an abstract UNIX name, while Landlock's abstract socket scope is in force: -EPERM
 *    (what the scope answers for a socket outside the sandbox): made here, the connect or
 *    send would escape that scope (the supervisor is outside the sandbox's Landlock domain),
 *    and left to the kernel (CONTINUE), the address read again could name a path by then,
 *    which would escape the write-grant check. So
 *    abstract sockets are not reached, not even between the sandbox's own processes
 *    (docs/decisions.md). With the scope disabled or unavailable, any name is reached, as
 *    given;
 *  - anything else (netlink, AF_UNSPEC, an unnamed UNIX address): as given.
 * Returns 0 or a negative errno (NOTIF_GONE). */
int net_route(struct supervisor *sv, const struct seccomp_notif *req, int sock, int domain,
	      uint32_t proto, int check, struct sockaddr_storage *ss, socklen_t *len, int *pin);

/* net-http.c: the redirect to the HTTP proxy (sv->proxy, NULL: none). Whether @ss is one of
 * the proxy's listeners, which the sandbox never connects to by itself (ECONNREFUSED). */
int net_http_refused(const struct supervisor *sv, const struct sockaddr_storage *ss, socklen_t len);
/* Whether a TCP connect of a socket of family @domain to @ss goes to the proxy: its port is
 * intercepted (plan.http.ports). */
int net_http_intercepted(const struct supervisor *sv, int domain,
			 const struct sockaddr_storage *ss);
struct http_proxy;
/* On a connect worker: connect @sock (family @domain) to @proxy, and record that the
 * connection was meant for @orig. 0, -EINPROGRESS (recorded too) or -errno. */
int net_http_connect(struct http_proxy *proxy, int sock, int domain,
		     const struct sockaddr_storage *orig, socklen_t orig_len);
/* getpeername: when @ss (*@len bytes, the kernel's answer for @sock) is the proxy, the
 * original destination of the connection instead. 1 replaced, 0 left, -errno. */
int net_http_peer(struct supervisor *sv, int sock, struct sockaddr_storage *ss, socklen_t *len);

/* net-unix.c: the UNIX half of net_route for a named address. */
int net_unix_route(struct supervisor *sv, const struct seccomp_notif *req,
		   struct sockaddr_storage *ss, socklen_t *len, int *pin);

/* net-event.c: the network decisions as events (supervisor/events.h). A destination: an IP one
 * (@family AF_INET or AF_INET6, @addr 4 or 16 bytes, @port, @proto NET_PROTO_*) or a named UNIX
 * socket (@family AF_UNIX, @path its real path). */
struct net_dest {
	int family;
	const uint8_t *addr;
	uint16_t port;
	uint32_t proto;
	const char *path;
};

/* What the rules decided of a destination (net.c: net_decide): allowed, no allow rule covers
 * it, or (>= 0) the index of the deny rule that refuses it. */
#define NET_ALLOWED (-1L)
#define NET_NO_RULE (-2L)

/* The text of @addr (@family) in @buf, an IPv4-mapped address as IPv4 (what the rules match);
 * returns the family shown. */
int net_host_text(int family, const uint8_t *addr, char *buf, size_t size);
/* "HOST:PORT", "[HOST]:PORT" for @family AF_INET6. */
void net_endpoint_text(int family, const char *host, uint16_t port, char *buf, size_t size);
/* The reason and hint of a destination refused by the rules of @net (@deny: net_decide's
 * answer): "no net_allow rule covers 127.0.0.1:80" / "add --net-allow 127.0.0.1:80" (udp:// and
 * icmp:// for those protocols), "net_deny covers 10.0.0.1" / "remove --net-deny 10.0.0.0/8"
 * (the rule's text; no hint when it cannot be made). Always terminated. */
void net_refusal_text(const struct plan_net *net, uint32_t proto, int family, const uint8_t *addr,
		      uint16_t port, long deny, char *reason, size_t rsize, char *hint,
		      size_t hsize);
/* Emit the event of @req's decision on @d: @verdict SANDLOCK_VERDICT_*, @err the errno the
 * call gets (0 when allowed), @reason and @hint (NULL or "" for none) as events.h wants. */
void net_event(struct supervisor *sv, const struct seccomp_notif *req, const struct net_dest *d,
	       uint32_t verdict, int err, const char *reason, const char *hint);
/* The denial of @d by the rules (@deny: net_decide's answer), answered @err. */
void net_refused_event(struct supervisor *sv, const struct seccomp_notif *req,
		       const struct net_dest *d, long deny, int err);
/* For `sandlock learn`: the allowed event of an IP destination @ss (@len bytes, as copied) of
 * @req on a socket of @proto, when such events are wanted. */
void net_allowed_event(struct supervisor *sv, const struct seccomp_notif *req, uint32_t proto,
		       const struct sockaddr_storage *ss, socklen_t len);
/* The denial of the abstract UNIX name in @ss (@len bytes) while the scope holds (EPERM). */
void net_abstract_event(struct supervisor *sv, const struct seccomp_notif *req,
			const struct sockaddr_storage *ss, socklen_t len);
