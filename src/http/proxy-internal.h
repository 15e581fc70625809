/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proxy-internal: what the proxy's files share. proxy.c owns the listeners, the accept thread,
 * the origin table and the list of connections; proxy-conn.c runs one client connection on its
 * own thread (the request loop), proxy-relay.c moves bodies and tunnels between the two
 * streams, proxy-head.c writes the head sent upstream (hop-by-hop fields removed, credentials
 * injected: proxy-auth.c), proxy-acl.c is the verdict. Only proxy.c touches the table and the
 * list, under p->lock.
 */
#pragma once

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>

#include "http/http-parse.h"
#include "http/proxy.h"
#include "http/stream.h"

#define PROXY_MAX_CONNS 512	  /* beyond: an accepted connection is closed at once */
#define PROXY_EXPECT_WAIT_MS 5000 /* how long an accepted connection waits for its entry */
#define PROXY_BUF_CAP (HTTP_HEAD_MAX + 16384)
/* The pipe's size asked for (F_SETPIPE_SZ; the default 64 KiB where the limits refuse it):
 * one splice moves up to this much. */
#define PROXY_PIPE_SIZE (1 << 20)

/* An address as the table compares it: IPv4-mapped IPv6 is IPv4. */
struct proxy_addr {
	int family; /* AF_INET or AF_INET6 */
	uint8_t addr[16];
	uint16_t port; /* host order */
};

/* Bytes read from one side and not consumed yet: data[off .. off + len). */
struct proxy_buf {
	char *data; /* PROXY_BUF_CAP bytes, owned */
	size_t off, len;
};

struct proxy_conn {
	struct http_proxy *p;
	struct proxy_conn *next, *prev; /* p->conns, under p->lock */
	struct proxy_addr peer;		/* the child's socket's address */
	struct sockaddr_storage orig;	/* where the child meant to connect */
	socklen_t orig_len;
	struct proxy_addr dest; /* orig, compared as the table does */
	char dest_ip[INET6_ADDRSTRLEN];
	struct stream cli, up; /* fds changed under p->lock only (proxy_conn_set_fd) */
	struct proxy_buf cin, uin;
	struct stream_pipe pipe; /* for splice between plain sockets (proxy-relay.c) */
	size_t pipe_cap;	 /* its capacity */
	int pipe_state;		 /* 0: not made yet, 1: open, -1: splice unavailable, copy */
	int tls;		 /* the client spoke TLS (terminated here) */
	char tls_name[NET_HOST_MAX + 1]; /* the leaf's name: the SNI, or the IP literal */
	int tls_sni;			 /* tls_name came from the SNI */
	char host_ok[NET_HOST_MAX + 1];	 /* the last name found to resolve to dest */
};

struct http_proxy {
	struct http_proxy_config cfg;
	int lfd4, lfd6; /* -1: none */
	struct sockaddr_storage addr4, addr6;
	socklen_t addr4_len, addr6_len;
	int stop_fd; /* an eventfd: the accept thread's wake-up for stop */
	pthread_t accept_thread;
	int thread_started;
	SSL_CTX *tls_server, *tls_client; /* cfg.ca: built at start */
	atomic_uint n_fds;
	atomic_int warned_plain; /* the warning about a credential over plain HTTP was written */

	pthread_mutex_t lock;
	pthread_cond_t changed; /* an entry arrived, a connection ended, stop began */
	int stopping;
	struct proxy_entry *entries; /* the origin table */
	struct proxy_conn *conns;
	unsigned n_conns;
};

/* proxy.c */
void proxy_addr_of(const struct sockaddr_storage *ss, struct proxy_addr *ret);
/* Wait until the entry for c->peer exists (at most PROXY_EXPECT_WAIT_MS) and fill c->orig and
 * c->dest. -ENOENT when none came, -ECANCELED when the proxy stops. */
int proxy_conn_claim(struct proxy_conn *c);
/* Set the descriptor of @s (c->cli or c->up) to @fd under the lock, counting it; closing
 * (@fd -1) frees the SSL too. -ECANCELED (and @fd closed) once the proxy stops. */
int proxy_conn_set_fd(struct proxy_conn *c, struct stream *s, int fd);
/* The end of a connection's thread: its entry and descriptors go, the list forgets it. */
void proxy_conn_finish(struct proxy_conn *c);

/* proxy-conn.c: the thread's body; @arg is the connection. */
void *proxy_conn_main(void *arg);
/* A one-line error reply (Connection: close) to the client: @status with @fmt as the body. */
void proxy_reply(struct proxy_conn *c, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The server context's choose callback (tls_server_ctx): the SNI name, or with none the
 * original destination's IP literal when an allow rule names that IP, else -EPERM. */
int proxy_tls_choose(SSL *ssl, const char *sni, char *name, size_t namelen);

/* proxy-relay.c */
/* TCP_NODELAY on @fd (best effort). */
void proxy_nodelay(int fd);
/* Read into @b (compacting it first) from @s: > 0 bytes added, 0 at EOF, -errno. */
ssize_t proxy_buf_fill(struct stream *s, struct proxy_buf *b);
/* Read a head from @s into @b until @parse accepts it (> 0: its length), or -errno:
 * -EBADMSG with @err, -ENODATA at EOF before any byte, -EPIPE at EOF inside a head,
 * -ETIMEDOUT. @is_request picks the parser; @method is the request's (responses). */
int proxy_read_head(struct stream *s, struct proxy_buf *b, int is_request,
		    const struct http_span *method, struct http_head *h, char *err, size_t errlen);
/* Forward a body framed as @body (@length bytes for HTTP_BODY_LENGTH) from @from (bytes in
 * @b first) to @to, both streams of @c: spliced through c->pipe where both are plain sockets,
 * else copied. 0, -EBADMSG (a bad chunk), or -errno of either side. */
int proxy_relay_body(struct proxy_conn *c, struct stream *from, struct proxy_buf *b,
		     struct stream *to, enum http_body body, uint64_t length, char *err,
		     size_t errlen);
/* Close c->pipe if it is open (the end of the connection). */
void proxy_pipe_close(struct proxy_conn *c);
/* Splice both ways until either side ends (websocket, CONNECT); the buffers go first. */
void proxy_tunnel(struct proxy_conn *c);
/* Connect c->up to c->orig (non-blocking connect bounded by the upstream timeout), with TLS
 * when the client spoke TLS. 0; -ETIMEDOUT; -EPROTO (TLS, reason in @why); -errno. */
int proxy_upstream_open(struct proxy_conn *c, char *why, size_t whylen);

/* proxy-head.c */
struct proxy_strbuf {
	char *p;
	size_t n, cap;
};
int proxy_strbuf_add(struct proxy_strbuf *sb, const char *s, size_t n);
int proxy_strbuf_printf(struct proxy_strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void proxy_strbuf_free(struct proxy_strbuf *sb);

/* What the request loop decided about one request, for writing its upstream head. */
struct proxy_request {
	const struct http_head *h;
	const char *method;
	const char *host; /* lower case, no port */
	uint16_t port;
	const char *path; /* normalised */
	struct http_span query;
	int websocket;
	const struct http_auth *auth; /* NULL: no injection */
	const struct http_secret *secret;
};
/* The origin-form head for @r into @sb: hop-by-hop fields dropped, Expect dropped (the proxy
 * answers 100 itself), the credential injected. 0 or -ENOMEM. */
int proxy_head_build(const struct proxy_request *r, struct proxy_strbuf *sb);

/* proxy-auth.c */
/* The secret named @name, or NULL. */
const struct http_secret *proxy_secret_find(const struct http_proxy_config *cfg, const char *name);
/* 1 when the field @f carries a credential of @a's shape (Authorization for bearer and
 * basic, the named header for header:). */
int proxy_auth_field_is(const struct http_auth *a, const struct http_field *f);
/* The field line "Name: value\r\n" injecting @s for @a (not query) into @sb. */
int proxy_auth_header(const struct http_auth *a, const struct http_secret *s,
		      struct proxy_strbuf *sb);
/* "?query" with @a's parameter (query:) added or replaced by @s, into @sb ("" when both the
 * query and the injection are empty). */
int proxy_auth_query(const struct http_auth *a, const struct http_secret *s,
		     const struct http_span *query, struct proxy_strbuf *sb);
