/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proxy-auth: the shapes a credential is injected in (http_auth): an Authorization field
 * (bearer, basic), a named field (header:, apikey:) or a query parameter (query:). It only
 * writes text for the head proxy-head.c builds; which rule applies is http_auth_for's, after
 * the verdict. A secret's bytes go into that head and nowhere else.
 */
#include <errno.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "basic/macro.h"
#include "http/proxy-internal.h"

const struct http_secret *proxy_secret_find(const struct http_proxy_config *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->n_secrets; i++)
		if (name && cfg->secrets[i].name && strcmp(cfg->secrets[i].name, name) == 0)
			return &cfg->secrets[i];
	return NULL;
}

static int span_is(const struct http_span *s, const char *name)
{
	return s->n == strlen(name) && strncasecmp(s->p, name, s->n) == 0;
}

int proxy_auth_field_is(const struct http_auth *a, const struct http_field *f)
{
	switch (a->kind) {
	case HTTP_AUTH_BEARER:
	case HTTP_AUTH_BASIC:
		return span_is(&f->name, "Authorization");
	case HTTP_AUTH_HEADER:
		return a->param && span_is(&f->name, a->param);
	default:
		return 0;
	}
}

static int add_base64(struct proxy_strbuf *sb, const unsigned char *in, size_t n)
{
	_cleanup_free_ unsigned char *out = malloc(4 * ((n + 2) / 3) + 1);

	if (!out)
		return -ENOMEM;
	int k = EVP_EncodeBlock(out, in, (int)n);
	int r = proxy_strbuf_add(sb, (const char *)out, (size_t)k);
	explicit_bzero(out, (size_t)k);
	return r;
}

static int basic_value(const struct http_auth *a, const struct http_secret *s,
		       struct proxy_strbuf *sb)
{
	size_t ul = strlen(a->param ? a->param : "");
	size_t n = ul + 1 + s->len;
	_cleanup_free_ char *plain = malloc(n);

	if (!plain)
		return -ENOMEM;
	memcpy(plain, a->param ? a->param : "", ul);
	plain[ul] = ':';
	memcpy(plain + ul + 1, s->value, s->len);
	int r = proxy_strbuf_add(sb, "Basic ", 6);
	if (r >= 0)
		r = add_base64(sb, (const unsigned char *)plain, n);
	explicit_bzero(plain, n);
	return r;
}

int proxy_auth_header(const struct http_auth *a, const struct http_secret *s,
		      struct proxy_strbuf *sb)
{
	int r;

	switch (a->kind) {
	case HTTP_AUTH_BEARER:
		r = proxy_strbuf_add(sb, "Authorization: Bearer ", 22);
		if (r >= 0)
			r = proxy_strbuf_add(sb, s->value, s->len);
		break;
	case HTTP_AUTH_BASIC:
		r = proxy_strbuf_add(sb, "Authorization: ", 15);
		if (r >= 0)
			r = basic_value(a, s, sb);
		break;
	case HTTP_AUTH_HEADER:
		r = proxy_strbuf_printf(sb, "%s: ", a->param);
		if (r >= 0)
			r = proxy_strbuf_add(sb, s->value, s->len);
		break;
	default:
		return -EINVAL;
	}
	return r < 0 ? r : proxy_strbuf_add(sb, "\r\n", 2);
}

static int unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~';
}

static int add_pct(struct proxy_strbuf *sb, const char *v, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)v[i];
		char e[3] = { '%', hex[c >> 4], hex[c & 15] };
		int r = unreserved(c) ? proxy_strbuf_add(sb, v + i, 1) : proxy_strbuf_add(sb, e, 3);
		if (r < 0)
			return r;
	}
	return 0;
}

/* 1 when the query pair @pair (@n bytes, "name" or "name=value") is named @name. */
static int pair_named(const char *pair, size_t n, const char *name)
{
	const char *eq = memchr(pair, '=', n);
	size_t k = eq ? (size_t)(eq - pair) : n;
	return k == strlen(name) && memcmp(pair, name, k) == 0;
}

int proxy_auth_query(const struct http_auth *a, const struct http_secret *s,
		     const struct http_span *query, struct proxy_strbuf *sb)
{
	const char *q = query->p, *end = query->p + query->n;
	int first = 1, present = 0, r;

	while (q && q < end) {
		const char *amp = memchr(q, '&', (size_t)(end - q));
		size_t n = amp ? (size_t)(amp - q) : (size_t)(end - q);
		int named = pair_named(q, n, a->param);
		present |= named;
		/* replace drops what the child sent under that name; add-only keeps it. */
		if (n > 0 && !(named && !a->add_only)) {
			r = proxy_strbuf_add(sb, first ? "?" : "&", 1);
			if (r >= 0)
				r = proxy_strbuf_add(sb, q, n);
			if (r < 0)
				return r;
			first = 0;
		}
		q += n + (amp ? 1 : 0);
	}
	if (present && a->add_only)
		return 0;
	r = proxy_strbuf_add(sb, first ? "?" : "&", 1);
	if (r >= 0)
		r = proxy_strbuf_printf(sb, "%s=", a->param);
	return r < 0 ? r : add_pct(sb, s->value, s->len);
}
