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
