/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/net-http: the redirect to the sandbox's HTTP proxy (src/http/proxy.h). A TCP connect
 * the rules allowed, to an intercepted port (plan.http.ports), is made by the connect worker
 * (net.c) to the proxy's listener instead of the destination; once it returns (or is under way:
 * EINPROGRESS), the proxy is told which destination the connection from the socket's local
 * address was meant for, and connects there itself. The proxy's listeners are never a
 * destination of the sandbox's own: a connect there is refused before the rules are asked, so
 * the proxy is reached only with an original destination recorded. getpeername on a redirected
 * socket reports that destination (ports.c), so the program sees the peer it asked for.
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "fd-util.h"
#include "http/proxy.h"
#include "net.h"
#include "plan/plan.h"
#include "supervisor/supervisor.h"

/* 1 when @ss is one of @proxy's listeners, an IPv4-mapped IPv6 address as its IPv4 one. */
static int is_listener(const struct http_proxy *proxy, const struct sockaddr_storage *ss,
		       socklen_t len)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (http_proxy_is_listener(proxy, ss, len))
		return 1;
	if (ss->ss_family != AF_INET6 || len < sizeof(struct sockaddr_in6))
		return 0;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
	if (memcmp(in6->sin6_addr.s6_addr, mapped, sizeof(mapped)) != 0)
		return 0;
	struct sockaddr_storage v4 = { 0 };
	struct sockaddr_in *in = (struct sockaddr_in *)&v4;
	in->sin_family = AF_INET;
	in->sin_port = in6->sin6_port;
	memcpy(&in->sin_addr, in6->sin6_addr.s6_addr + 12, 4);
	return http_proxy_is_listener(proxy, &v4, sizeof(*in));
}

int net_http_refused(const struct supervisor *sv, const struct sockaddr_storage *ss, socklen_t len)
{
	return sv->proxy && is_listener(sv->proxy, ss, len);
}

int net_http_intercepted(const struct supervisor *sv, int domain, const struct sockaddr_storage *ss)
{
	const struct plan_http *h = &sv->plan->http;
	uint16_t port;

	if (!sv->proxy || ss->ss_family != domain)
		return 0;
	if (ss->ss_family == AF_INET)
		port = ntohs(((const struct sockaddr_in *)ss)->sin_port);
	else if (ss->ss_family == AF_INET6)
		port = ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	else
		return 0;
	for (size_t i = 0; i < h->n_ports; i++)
		if (h->ports[i] == port)
			return 1;
	return 0;
}

int net_http_connect(struct http_proxy *proxy, int sock, int domain,
		     const struct sockaddr_storage *orig, socklen_t orig_len)
{
	struct sockaddr_storage to = { 0 }, local = { 0 };
	socklen_t to_len = sizeof(to), local_len = sizeof(local);
	int in_progress = 0;

	/* As tcp_v6_connect: an IPv6-only socket reaches no IPv4-mapped address. */
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	int v6only = 0;
	socklen_t optlen = sizeof(v6only);
	if (domain == AF_INET6 &&
	    memcmp(((const struct sockaddr_in6 *)orig)->sin6_addr.s6_addr, mapped, 12) == 0 &&
	    getsockopt(sock, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, &optlen) == 0 && v6only)
		return -ENETUNREACH;
	int r = http_proxy_address(proxy, domain, &to, &to_len);
	if (r < 0)
		return -ENETUNREACH;
	if (connect(sock, (struct sockaddr *)&to, to_len) < 0) {
		if (errno != EINPROGRESS)
			return negative_errno(); /* EISCONN, EALREADY, ...: nothing new to record */
		in_progress = 1;
	}
	/* The local address exists once the connect is under way (the SYN is sent). */
	if (getsockname(sock, (struct sockaddr *)&local, &local_len) < 0)
		r = negative_errno();
	else
		r = http_proxy_expect(proxy, &local, local_len, orig, orig_len);
	/* -EEXIST: a second connect on a socket whose first one completed meanwhile (the kernel
	 * answers 0 then); a live connection's local address to the proxy is its own, so the
	 * entry is this socket's. */
	if (r < 0 && r != -EEXIST) {
		/* The proxy would hold the connection for an entry that never comes. */
		(void)shutdown(sock, SHUT_RDWR);
		return r == -ENOMEM ? -ENOBUFS : -ECONNREFUSED;
	}
	return in_progress ? -EINPROGRESS : 0;
}

int net_http_peer(struct supervisor *sv, int sock, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_storage local = { 0 }, orig = { 0 };
	socklen_t local_len = sizeof(local), orig_len = sizeof(orig);

	if (!sv->proxy || !is_listener(sv->proxy, ss, *len))
		return 0;
	if (getsockname(sock, (struct sockaddr *)&local, &local_len) < 0)
		return negative_errno();
	if (http_proxy_original(sv->proxy, &local, local_len, &orig, &orig_len) < 0)
		return 0; /* not (or no longer) one of its connections: the kernel's answer */
	*ss = orig;
	*len = orig_len;
	return 1;
}
