/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proxy: the sandbox's HTTP ACL proxy. One per sandbox, in the supervisor's process, on threads
 * of its own (one accepting, one per client connection: the notification loop never waits
 * for them). It listens on loopback only (127.0.0.1 and, where the host has it, ::1, ephemeral
 * ports) and is reached only through the supervisor's connect on the child's behalf
 * (handlers/net.c), which connects the child's socket to it and tells it the connection's
 * original destination
 * (http_proxy_expect). It connects upstream to exactly that destination, never to what a
 * Host header names; it judges every request (http_acl), injects credentials after the
 * verdict, and answers 400, 403, 405, 502 or 504 itself. With a CA, a connection that starts
 * with a TLS handshake is terminated here (a leaf for its SNI name) and TLS is spoken
 * upstream.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "policy/rules.h"

struct tls_ca;
struct http_proxy;

/* A secret loaded for --credential: only ever in the supervisor's memory. */
struct http_secret {
	char *name;  /* owned */
	char *value; /* owned, wiped (explicit_bzero) when freed */
	size_t len;
};

/* The addresses a rule's host name was resolved to when the plan was built: the claimed
 * host of a request must be one of them, for a name listed here, or resolve to the original
 * destination (getaddrinfo on the proxy's thread) for any other name. */
struct http_host_addrs {
	char *name;	     /* owned; lower case */
	int *family;	     /* owned; AF_INET or AF_INET6, one per address */
	uint8_t (*addr)[16]; /* owned */
	size_t n;
};

struct http_proxy_config {
	const struct http_rule *allow, *deny; /* not owned; must outlive the proxy */
	size_t n_allow, n_deny;
	const struct http_auth *auth; /* not owned; in order: the first matching one applies */
	size_t n_auth;
	const struct http_secret *secrets; /* not owned: the values auth names */
	size_t n_secrets;
	const struct http_host_addrs *hosts; /* not owned */
	size_t n_hosts;
	struct tls_ca *ca;	 /* not owned; NULL: TLS passes uninspected (no interception) */
	int upstream_timeout_ms; /* connect and response head; 0: 30000 */
	int idle_timeout_ms;	 /* a kept-alive client connection; 0: 120000 */
};

/* Start the proxy: bind the listeners, start the thread. A failure is one line in @err.
 * *@ret owned by the caller (http_proxy_stop). */
int http_proxy_start(const struct http_proxy_config *cfg, struct http_proxy **ret, char *err,
		     size_t errlen);

/* Where a redirected connect of a socket of @family (AF_INET or AF_INET6) goes: the proxy's
 * listener of that family (::ffff:127.0.0.1 for AF_INET6 when the host has no ::1). */
int http_proxy_address(const struct http_proxy *p, int family, struct sockaddr_storage *ret,
		       socklen_t *len);

/* 1 when @ss (@len bytes) is one of the proxy's listeners: the sandbox never connects there by
 * itself (the supervisor answers ECONNREFUSED). */
int http_proxy_is_listener(const struct http_proxy *p, const struct sockaddr_storage *ss,
			   socklen_t len);

/* Record that the connection from @local (the child's socket's address, after its connect to
 * the proxy returned) was meant for @orig. Called by connect workers (any thread); wakes the
 * proxy's thread, which holds a connection it accepted until its entry arrives. -ENOMEM, or
 * -EEXIST when @local is taken. */
int http_proxy_expect(struct http_proxy *p, const struct sockaddr_storage *local,
		      socklen_t local_len, const struct sockaddr_storage *orig, socklen_t orig_len);

/* The original destination of the connection from @local, for getpeername (any thread).
 * -ENOENT when it is not one of the proxy's connections (anymore). */
int http_proxy_original(struct http_proxy *p, const struct sockaddr_storage *local,
			socklen_t local_len, struct sockaddr_storage *ret, socklen_t *len);

/* How many descriptors the proxy holds (listeners, client and upstream sockets, its epoll
 * and wake descriptors): for tests and sandlock inspect. */
unsigned http_proxy_fds(const struct http_proxy *p);

/* Stop the thread, close every connection and listener, free @p. NULL is fine. */
void http_proxy_stop(struct http_proxy *p);

/* The verdict on one request (pure; proxy-acl.c): deny rules first, then, when there are
 * allow rules, one must match. Returns 1 (allowed) or 0 (refused), with the reason for the 403
 * body in @why ("denied by rule \"GET example.com/admin*\"", "no allow rule matched").
 * @host is lower case without a port; @path normalised (http_path_normalize). */
int http_acl(const struct http_proxy_config *cfg, const char *method, const char *host,
	     uint16_t port, const char *path, char *why, size_t whylen);

/* The first auth rule of @cfg that matches the request, or NULL (pure). */
const struct http_auth *http_auth_for(const struct http_proxy_config *cfg, const char *method,
				      const char *host, uint16_t port, const char *path);
