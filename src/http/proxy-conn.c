/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proxy-conn: one client connection, on its own thread: wait for its origin entry, terminate
 * TLS when it starts with a handshake (and a CA is active), then answer its requests strictly
 * in order. For each request: one authority (the target's and Host agree), the claimed host
 * is the original destination or resolves to it, the path normalised, the verdict
 * (http_acl), then the credential, the head upstream to the original destination (the
 * connection kept for the next request), the bodies both ways and the response. What the
 * proxy refuses itself is answered with a one-line body and the connection is closed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "basic/macro.h"
#include "http/proxy-internal.h"

/* A refusal decided for a request: its status and the one-line reason. */
struct verdict {
	int status; /* 0: go on */
	char why[512];
};

static int refuse(struct verdict *v, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int refuse(struct verdict *v, int status, const char *fmt, ...)
{
	va_list ap;

	v->status = status;
	va_start(ap, fmt);
	vsnprintf(v->why, sizeof(v->why), fmt, ap);
	va_end(ap);
	return -1;
}

static const char *status_text(int status)
{
	switch (status) {
	case 400:
		return "Bad Request";
	case 403:
		return "Forbidden";
	case 405:
		return "Method Not Allowed";
	case 502:
		return "Bad Gateway";
	case 504:
		return "Gateway Timeout";
	default:
		return "Error";
	}
}

void proxy_reply(struct proxy_conn *c, int status, const char *fmt, ...)
{
	char body[600], msg[1024];
	va_list ap;

	/* "sandlock: " says who refused: the client may take it for the server's answer. */
	memcpy(body, "sandlock: ", 10);
	va_start(ap, fmt);
	int k = vsnprintf(body + 10, sizeof(body) - 11, fmt, ap);
	va_end(ap);
	if (k < 0)
		return;
	k = (int)strlen(body);
	body[k++] = '\n';
	body[k] = '\0';
	int n = snprintf(msg, sizeof(msg),
			 "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
			 "Connection: close\r\n\r\n%s",
			 status, status_text(status), k, body);
	if (n <= 0 || (size_t)n >= sizeof(msg) || stream_write_all(&c->cli, msg, (size_t)n) < 0)
		return;
	/* Closing with the rest of the request unread would send a reset, which may destroy
	 * the reply before the client reads it: end the write side, then take what comes for
	 * a moment (stop cuts that short: it shuts the socket down). */
	stream_shutdown_write(&c->cli);
	c->cli.timeout_ms = 1000;
	for (int i = 0; i < 64 && stream_read(&c->cli, msg, sizeof(msg)) > 0; i++)
		;
}

static int span_eq(const struct http_span *s, const char *str)
{
	return s->n == strlen(str) && memcmp(s->p, str, s->n) == 0;
}

/* 1 when @host (an IP literal) is the destination; -1 when it is not a literal. */
static int literal_is_dest(const struct proxy_conn *c, const char *host)
{
	struct sockaddr_storage ss = { 0 };
	struct proxy_addr a;

	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)&ss)->sin_addr) == 1)
		ss.ss_family = AF_INET;
	else if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1)
		ss.ss_family = AF_INET6;
	else
		return -1;
	proxy_addr_of(&ss, &a);
	return a.family == c->dest.family &&
	       memcmp(a.addr, c->dest.addr, a.family == AF_INET ? 4 : 16) == 0;
}

static int addr_is_dest(const struct proxy_conn *c, int family, const uint8_t *addr)
{
	struct sockaddr_storage ss = { .ss_family = family };

	if (family == AF_INET)
		memcpy(&((struct sockaddr_in *)&ss)->sin_addr, addr, 4);
	else if (family == AF_INET6)
		memcpy(&((struct sockaddr_in6 *)&ss)->sin6_addr, addr, 16);
	else
		return 0;
	struct proxy_addr a;
	proxy_addr_of(&ss, &a);
	return a.family == c->dest.family &&
	       memcmp(a.addr, c->dest.addr, a.family == AF_INET ? 4 : 16) == 0;
}

/* 1 when @name resolves (now, on this thread) to the destination. */
static int resolves_to_dest(const struct proxy_conn *c, const char *name)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;
	int found = 0;

	if (getaddrinfo(name, NULL, &hints, &res) != 0)
		return 0;
	for (struct addrinfo *ai = res; ai && !found; ai = ai->ai_next) {
		struct proxy_addr a;
		proxy_addr_of((const struct sockaddr_storage *)ai->ai_addr, &a);
		found = addr_is_dest(c, a.family, a.addr);
	}
	freeaddrinfo(res);
	return found;
}

/* The claimed host must be the connection's destination: a literal, a name the plan
 * resolved to it, or another name that resolves to it. */
static int host_is_dest(struct proxy_conn *c, const char *host)
{
	int lit = literal_is_dest(c, host);

	if (lit >= 0)
		return lit;
	if (strcmp(host, c->host_ok) == 0)
		return 1;
	const struct http_proxy_config *cfg = &c->p->cfg;
	int found = -1;
	for (size_t i = 0; i < cfg->n_hosts && found < 0; i++) {
		const struct http_host_addrs *ha = &cfg->hosts[i];
		if (strcmp(ha->name, host) != 0)
			continue;
		found = 0;
		for (size_t j = 0; j < ha->n && !found; j++)
			found = addr_is_dest(c, ha->family[j], ha->addr[j]);
	}
	if (found < 0)
		found = resolves_to_dest(c, host);
	if (found)
		snprintf(c->host_ok, sizeof(c->host_ok), "%s", host);
	return found;
}

static int check_host(struct proxy_conn *c, const char *host, uint16_t port, struct verdict *v)
{
	if (port && port != c->dest.port)
		return refuse(v, 400, "port %u is not the connection's destination port %u", port,
			      c->dest.port);
	if (c->tls_sni && strcmp(host, c->tls_name) != 0)
		return refuse(v, 403, "host %s is not the connection's TLS name %s", host,
			      c->tls_name);
	if (!host_is_dest(c, host))
		return refuse(v, 403, "host %s is not the connection's destination %s", host,
			      c->dest_ip);
	return 0;
}

/* The request's one authority into @host: the target's and Host's, which must agree. */
static int request_host(struct proxy_conn *c, const struct http_head *h,
			const struct http_target *t, char *host, size_t hostlen, struct verdict *v)
{
	char hh[NET_HOST_MAX + 1], err[256];
	uint16_t port = 0, hport = 0;
	const struct http_field *hf = NULL;
	size_t n_host = 0;

	for (size_t i = 0; i < h->n_fields; i++) {
		if (h->fields[i].name.n == 4 && strncasecmp(h->fields[i].name.p, "Host", 4) == 0) {
			hf = &h->fields[i];
			n_host++;
		}
	}
	if (n_host > 1)
		return refuse(v, 400, "more than one Host field");
	if (!hf && h->minor == 1)
		return refuse(v, 400, "no Host field");
	if (hf && http_authority_parse(&hf->value, hh, sizeof(hh), &hport, err, sizeof(err)) < 0)
		return refuse(v, 400, "Host: %s", err);
	if (t->authority.n) {
		if (http_authority_parse(&t->authority, host, hostlen, &port, err, sizeof(err)) < 0)
			return refuse(v, 400, "request target: %s", err);
		if (hf && (strcmp(host, hh) != 0 ||
			   (port ? port : c->dest.port) != (hport ? hport : c->dest.port)))
			return refuse(v, 400, "the request target's authority and Host differ");
	} else if (hf) {
		snprintf(host, hostlen, "%s", hh);
		port = hport;
	} else {
		/* HTTP/1.0 without a Host: the request is for the destination itself. */
		snprintf(host, hostlen, "%s", c->dest_ip);
	}
	return check_host(c, host, port, v);
}

static void warn_plain(struct proxy_conn *c, const struct http_auth *a, const char *host)
{
	if (c->tls || atomic_exchange(&c->p->warned_plain, 1))
		return;
	fprintf(stderr, "sandlock: warning: credential %s sent over plain HTTP to %s\n",
		a->credential, host);
}

/* One request, from its verdict to its response. Its head's spans point into c->cin until
 * the head is consumed; what the exchange needs after that is copied here. */
struct req {
	char method[HTTP_METHOD_MAX + 1];
	char host[NET_HOST_MAX + 1];
	char path[HTTP_LINE_MAX];
	struct http_target t;
	struct proxy_request r;
	enum http_body body;
	uint64_t length;
	int keep_alive, expect_continue;
};

static int decide_auth(struct proxy_conn *c, struct req *q, struct verdict *v)
{
	const struct http_proxy_config *cfg = &c->p->cfg;
	const struct http_auth *a = http_auth_for(cfg, q->method, q->host, c->dest.port, q->path);

	if (!a)
		return 0;
	const struct http_secret *s = proxy_secret_find(cfg, a->credential);
	if (!s)
		return refuse(v, 502, "credential %s is not loaded", a->credential);
	q->r.auth = a;
	q->r.secret = s;
	warn_plain(c, a, q->host);
	return 0;
}

static int decide(struct proxy_conn *c, const struct http_head *h, struct req *q, struct verdict *v)
{
	char err[256];

	if (http_target_split(&h->target, &q->t, err, sizeof(err)) < 0)
		return refuse(v, 400, "request target: %s", err);
	if (request_host(c, h, &q->t, q->host, sizeof(q->host), v) < 0)
		return -1;
	if (http_path_normalize(&q->t.path, q->path, sizeof(q->path), err, sizeof(err)) < 0)
		return refuse(v, 400, "path: %s", err);
	if (!http_acl(&c->p->cfg, q->method, q->host, c->dest.port, q->path, v->why,
		      sizeof(v->why))) {
		v->status = 403;
		return -1;
	}
	if (decide_auth(c, q, v) < 0)
		return -1;
	q->r = (struct proxy_request){ .h = h,
				       .method = q->method,
				       .host = q->host,
				       .port = c->dest.port,
				       .path = q->path,
				       .query = q->t.query,
				       .websocket = h->upgrade_websocket,
				       .auth = q->r.auth,
				       .secret = q->r.secret };
	return 0;
}

/* The upstream connection for the next request: the kept one unless it has ended (or sent
 * something unasked) since, else a new one. 0, or -1 with the refusal in @v. */
static int upstream_ready(struct proxy_conn *c, struct verdict *v)
{
	char why[256] = "";

	if (c->up.fd >= 0 && stream_wait_readable(&c->up, 0) == 0)
		return 0;
	proxy_conn_set_fd(c, &c->up, -1);
	int r = proxy_upstream_open(c, why, sizeof(why));
	if (r == 0)
		return 0;
	proxy_conn_set_fd(c, &c->up, -1);
	if (r == -ETIMEDOUT)
		return refuse(v, 504, "upstream %s did not answer within %d ms", c->dest_ip,
			      c->p->cfg.upstream_timeout_ms);
	if (r == -EPROTO)
		return refuse(v, 502, "TLS to upstream %s: %s", c->tls_name, why);
	return refuse(v, 502, "cannot connect to upstream %s: %s", c->dest_ip, strerror(-r));
}

/* The response (1xx heads first) back to the client. 1: the connection goes on. */
static int response(struct proxy_conn *c, struct req *q)
{
	struct http_span m = { q->method, strlen(q->method) };
	struct http_head rh;
	char err[256];

	for (;;) {
		int r = proxy_read_head(&c->up, &c->uin, 0, &m, &rh, err, sizeof(err));
		if (r == -ETIMEDOUT)
			proxy_reply(c, 504, "upstream %s sent no response within %d ms", c->dest_ip,
				    c->p->cfg.upstream_timeout_ms);
		else if (r == -EBADMSG)
			proxy_reply(c, 502, "upstream %s sent a bad response: %s", c->dest_ip, err);
		else if (r < 0)
			proxy_reply(c, 502, "upstream %s closed the connection", c->dest_ip);
		if (r < 0)
			return 0;
		if (rh.status == 101 && !q->r.websocket) {
			proxy_reply(c, 502, "upstream %s switched protocols unasked", c->dest_ip);
			return 0;
		}
		if (stream_write_all(&c->cli, c->uin.data, rh.head_len) < 0)
			return 0;
		c->uin.off += rh.head_len;
		c->uin.len -= rh.head_len;
		if (rh.status == 101) {
			proxy_tunnel(c);
			return 0;
		}
		if (rh.status >= 200)
			break;
	}
	if (proxy_relay_body(c, &c->up, &c->uin, &c->cli, rh.body, rh.content_length, err,
			     sizeof(err)) < 0)
		return 0;
	if (!rh.keep_alive || rh.body == HTTP_BODY_UNTIL_CLOSE)
		proxy_conn_set_fd(c, &c->up, -1);
	return q->keep_alive && rh.keep_alive && rh.body != HTTP_BODY_UNTIL_CLOSE;
}

/* The head upstream, the request's body, then the response. 1: the connection goes on. */
static int exchange(struct proxy_conn *c, struct req *q, const struct proxy_strbuf *head)
{
	static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
	char err[256];
	struct verdict v = { 0 };

	if (upstream_ready(c, &v) < 0) {
		proxy_reply(c, v.status, "%s", v.why);
		return 0;
	}
	if (stream_write_all(&c->up, head->p, head->n) < 0) {
		proxy_reply(c, 502, "upstream %s closed the connection", c->dest_ip);
		return 0;
	}
	if (q->expect_continue && q->body != HTTP_BODY_NONE &&
	    stream_write_all(&c->cli, cont, sizeof(cont) - 1) < 0)
		return 0;
	int r = proxy_relay_body(c, &c->cli, &c->cin, &c->up, q->body, q->length, err, sizeof(err));
	if (r == -EBADMSG)
		proxy_reply(c, 400, "request body: %s", err);
	if (r < 0)
		return 0;
	return response(c, q);
}

/* CONNECT: only where an allow rule names the method CONNECT, and only to the destination. */
static int connect_decide(struct proxy_conn *c, const struct http_head *h, struct req *q,
			  struct verdict *v)
{
	const struct http_proxy_config *cfg = &c->p->cfg;
	char err[256];
	uint16_t port = 0;
	int allowed = 0;

	if (http_authority_parse(&h->target, q->host, sizeof(q->host), &port, err, sizeof(err)) < 0)
		return refuse(v, 400, "CONNECT target: %s", err);
	if (check_host(c, q->host, port, v) < 0)
		return -1;
	snprintf(q->path, sizeof(q->path), "/");
	for (size_t i = 0; i < cfg->n_allow && !allowed; i++)
		allowed = strcmp(cfg->allow[i].method, "CONNECT") == 0 &&
			  http_rule_match(&cfg->allow[i], "CONNECT", q->host, c->dest.port, "/");
	if (!allowed)
		return refuse(v, 405, "CONNECT to %s is not allowed by any rule", q->host);
	if (!http_acl(cfg, "CONNECT", q->host, c->dest.port, "/", v->why, sizeof(v->why))) {
		v->status = 403;
		return -1;
	}
	return 0;
}

static int tunnel_connect(struct proxy_conn *c)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	struct verdict v = { 0 };

	if (upstream_ready(c, &v) < 0) {
		proxy_reply(c, v.status, "%s", v.why);
		return 0;
	}
	if (stream_write_all(&c->cli, ok, sizeof(ok) - 1) == 0)
		proxy_tunnel(c);
	return 0;
}

/* One request from the client. 1: the connection goes on to the next one. */
static int serve_one(struct proxy_conn *c, struct req *q)
{
	struct http_head h;
	struct verdict v = { 0 };
	struct proxy_strbuf head = { 0 };
	char err[256];

	c->cli.timeout_ms = c->p->cfg.idle_timeout_ms;
	int r = proxy_read_head(&c->cli, &c->cin, 1, NULL, &h, err, sizeof(err));
	if (r == -EBADMSG)
		proxy_reply(c, 400, "%s", err);
	if (r < 0)
		return 0;
	*q = (struct req){ 0 };
	if (h.method.n > HTTP_METHOD_MAX)
		refuse(&v, 405, "method %.*s is not allowed", HTTP_METHOD_MAX, h.method.p);
	else
		memcpy(q->method, h.method.p, h.method.n);
	if (!v.status && span_eq(&h.method, "CONNECT")) {
		if (connect_decide(c, &h, q, &v) == 0) {
			c->cin.off += h.head_len;
			c->cin.len -= h.head_len;
			return tunnel_connect(c);
		}
	} else if (!v.status && decide(c, &h, q, &v) == 0 && proxy_head_build(&q->r, &head) < 0) {
		refuse(&v, 502, "out of memory");
	}
	if (v.status) {
		proxy_reply(c, v.status, "%s", v.why);
		proxy_strbuf_free(&head);
		return 0;
	}
	q->body = h.body;
	q->length = h.content_length;
	q->keep_alive = h.keep_alive;
	q->expect_continue = h.expect_continue;
	c->cin.off += h.head_len;
	c->cin.len -= h.head_len;
	r = exchange(c, q, &head);
	proxy_strbuf_free(&head);
	return r;
}

int proxy_tls_choose(SSL *ssl, const char *sni, char *name, size_t namelen)
{
	struct proxy_conn *c = SSL_get_app_data(ssl);
	const struct http_proxy_config *cfg = &c->p->cfg;

	if (sni) {
		if (strlen(sni) >= sizeof(c->tls_name) || strlen(sni) >= namelen)
			return -EPERM;
		snprintf(c->tls_name, sizeof(c->tls_name), "%s", sni);
		snprintf(name, namelen, "%s", sni);
		c->tls_sni = 1;
		return 0;
	}
	/* No SNI: the leaf is for the destination's address, which a rule must name. */
	for (size_t i = 0; i < cfg->n_allow; i++) {
		const struct http_rule *r = &cfg->allow[i];
		if (r->host_kind == HTTP_HOST_IP && addr_is_dest(c, r->family, r->addr)) {
			snprintf(c->tls_name, sizeof(c->tls_name), "%s", c->dest_ip);
			snprintf(name, namelen, "%s", c->dest_ip);
			return 0;
		}
	}
	return -EPERM;
}

/* The first byte tells TLS (a handshake record, 0x16) from plain HTTP. */
static int start_tls(struct proxy_conn *c)
{
	unsigned char b;
	char why[256];

	if (stream_wait_readable(&c->cli, c->p->cfg.idle_timeout_ms) <= 0)
		return -ETIMEDOUT;
	ssize_t n = recv(c->cli.fd, &b, 1, MSG_PEEK);
	if (n <= 0)
		return n == 0 ? -ENODATA : negative_errno();
	if (b != 0x16)
		return 0;
	/* No CA, nothing can read what this connection carries: it is not let through. */
	if (!c->p->tls_server)
		return -EPROTO;
	int r = stream_tls_accept(&c->cli, c->p->tls_server, c, why, sizeof(why));
	if (r < 0)
		return r;
	c->tls = 1;
	return 0;
}

void *proxy_conn_main(void *arg)
{
	struct proxy_conn *c = arg;
	struct req *q = NULL;

	if (proxy_conn_claim(c) == 0) {
		proxy_addr_of(&c->orig, &c->dest);
		inet_ntop(c->dest.family, c->dest.addr, c->dest_ip, sizeof(c->dest_ip));
		q = malloc(sizeof(*q));
		if (q && start_tls(c) == 0)
			while (serve_one(c, q) > 0)
				;
	}
	free(q);
	proxy_pipe_close(c);
	proxy_conn_finish(c);
	return NULL;
}
