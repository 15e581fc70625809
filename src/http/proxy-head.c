/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proxy-head: the request head the proxy sends upstream, written from the parsed head of the
 * client's request: origin-form with the normalised path, the client's fields in order but
 * the hop-by-hop ones (RFC 9110 7.6.1: Connection and the fields it names, Keep-Alive,
 * Proxy-Connection, TE, Upgrade unless the request is a websocket upgrade) and Expect (the
 * proxy answers 100 itself), then the proxy's own Connection field and the credential. The
 * framing fields (Content-Length, Transfer-Encoding) and Host are kept even when Connection
 * names them: the body the proxy relays is framed by them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/proxy-internal.h"

static int strbuf_grow(struct proxy_strbuf *sb, size_t need)
{
	if (sb->n + need + 1 <= sb->cap)
		return 0;
	size_t cap = sb->cap ? sb->cap : 1024;
	while (cap < sb->n + need + 1)
		cap *= 2;
	/* Not realloc: the old block may hold a secret, wiped before it is freed. */
	char *p = malloc(cap);
	if (!p)
		return -ENOMEM;
	if (sb->p) {
		memcpy(p, sb->p, sb->n);
		explicit_bzero(sb->p, sb->cap);
		free(sb->p);
	}
	sb->p = p;
	sb->cap = cap;
	return 0;
}

int proxy_strbuf_add(struct proxy_strbuf *sb, const char *s, size_t n)
{
	if (strbuf_grow(sb, n) < 0)
		return -ENOMEM;
	memcpy(sb->p + sb->n, s, n);
	sb->n += n;
	sb->p[sb->n] = '\0';
	return 0;
}

int proxy_strbuf_printf(struct proxy_strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	char small[512];

	va_start(ap, fmt);
	int k = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (k < 0)
		return -EINVAL;
	if ((size_t)k < sizeof(small))
		return proxy_strbuf_add(sb, small, (size_t)k);
	if (strbuf_grow(sb, (size_t)k) < 0)
		return -ENOMEM;
	va_start(ap, fmt);
	vsnprintf(sb->p + sb->n, (size_t)k + 1, fmt, ap);
	va_end(ap);
	sb->n += (size_t)k;
	return 0;
}

void proxy_strbuf_free(struct proxy_strbuf *sb)
{
	if (sb->p)
		explicit_bzero(sb->p, sb->cap);
	free(sb->p);
	*sb = (struct proxy_strbuf){ 0 };
}

static int span_is(const struct http_span *s, const char *name)
{
	return s->n == strlen(name) && strncasecmp(s->p, name, s->n) == 0;
}

/* 1 when a Connection field of @h lists @name among its comma-separated options. */
static int connection_lists(const struct http_head *h, const struct http_span *name)
{
	for (size_t i = 0; i < h->n_fields; i++) {
		const struct http_field *f = &h->fields[i];
		if (!span_is(&f->name, "Connection"))
			continue;
		const char *v = f->value.p, *end = v + f->value.n;
		while (v < end) {
			const char *comma = memchr(v, ',', (size_t)(end - v));
			const char *e = comma ? comma : end;
			const char *s = v;
			while (s < e && (*s == ' ' || *s == '\t'))
				s++;
			const char *t = e;
			while (t > s && (t[-1] == ' ' || t[-1] == '\t'))
				t--;
			if ((size_t)(t - s) == name->n && strncasecmp(s, name->p, name->n) == 0)
				return 1;
			v = comma ? comma + 1 : end;
		}
	}
	return 0;
}

/* 1 when the field is not forwarded: hop-by-hop, or the proxy answers it itself. */
static int field_dropped(const struct proxy_request *r, const struct http_field *f)
{
	static const char *const hop[] = { "Connection", "Keep-Alive", "Proxy-Connection", "TE",
					   "Expect" };

	for (size_t i = 0; i < sizeof(hop) / sizeof(hop[0]); i++)
		if (span_is(&f->name, hop[i]))
			return 1;
	if (span_is(&f->name, "Upgrade"))
		return !r->websocket;
	if (span_is(&f->name, "Host") || span_is(&f->name, "Content-Length") ||
	    span_is(&f->name, "Transfer-Encoding"))
		return 0;
	return connection_lists(r->h, &f->name);
}

static int head_fields(const struct proxy_request *r, struct proxy_strbuf *sb, int *present)
{
	const struct http_head *h = r->h;
	int k = 0;

	for (size_t i = 0; i < h->n_fields && k >= 0; i++) {
		const struct http_field *f = &h->fields[i];
		if (field_dropped(r, f))
			continue;
		if (r->auth && proxy_auth_field_is(r->auth, f)) {
			*present = 1;
			if (!r->auth->add_only)
				continue;
		}
		k = proxy_strbuf_add(sb, f->name.p, f->name.n);
		if (k >= 0)
			k = proxy_strbuf_add(sb, ": ", 2);
		if (k >= 0)
			k = proxy_strbuf_add(sb, f->value.p, f->value.n);
		if (k >= 0)
			k = proxy_strbuf_add(sb, "\r\n", 2);
	}
	return k;
}

int proxy_head_build(const struct proxy_request *r, struct proxy_strbuf *sb)
{
	const struct http_head *h = r->h;
	int present = 0, k;

	k = proxy_strbuf_printf(sb, "%s %s", r->method, r->path);
	if (k >= 0 && r->auth && r->auth->kind == HTTP_AUTH_QUERY)
		k = proxy_auth_query(r->auth, r->secret, &r->query, sb);
	else if (k >= 0 && r->query.p) {
		k = proxy_strbuf_add(sb, "?", 1);
		if (k >= 0)
			k = proxy_strbuf_add(sb, r->query.p, r->query.n);
	}
	if (k >= 0)
		k = proxy_strbuf_printf(sb, " HTTP/1.%d\r\n", h->minor);
	if (k >= 0)
		k = head_fields(r, sb, &present);
	if (k >= 0 && r->websocket)
		k = proxy_strbuf_printf(sb, "Connection: Upgrade\r\n");
	else if (k >= 0 && !h->keep_alive)
		k = proxy_strbuf_printf(sb, "Connection: close\r\n");
	else if (k >= 0 && h->minor == 0)
		k = proxy_strbuf_printf(sb, "Connection: keep-alive\r\n");
	if (k >= 0 && r->auth && r->auth->kind != HTTP_AUTH_QUERY &&
	    !(present && r->auth->add_only))
		k = proxy_auth_header(r->auth, r->secret, sb);
	if (k >= 0)
		k = proxy_strbuf_add(sb, "\r\n", 2);
	return k;
}
