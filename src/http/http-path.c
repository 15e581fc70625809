/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * http-path: the request target of http-parse.h taken apart (RFC 9112 3.2, RFC 3986): the
 * split into scheme, authority, path and query, the authority's host and port, and the path's
 * normalisation, which is what the ACL matches and what goes upstream, so that the rule and
 * the origin see the same path whatever escapes or dot segments the client chose. Pure, like
 * http-parse.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "http-internal.h"
#include "http-parse.h"

static int is_alnum(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || http_is_digit(c);
}

static int is_unreserved(unsigned char c)
{
	return is_alnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

static int is_subdelim(unsigned char c)
{
	return c && strchr("!$&'()*+,;=", c) != NULL;
}

/* RFC 3986 pchar, with '%' standing for a whole escape (checked apart). */
static int is_pchar(unsigned char c)
{
	return is_unreserved(c) || is_subdelim(c) || c == ':' || c == '@' || c == '%';
}

/* Check the bytes of a path (@query: or a query, which may also hold '?') and its escapes. */
static int check_bytes(const char *p, size_t n, int query, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		if (c == '%' && (i + 2 >= n || http_hex((unsigned char)p[i + 1]) < 0 ||
				 http_hex((unsigned char)p[i + 2]) < 0))
			return http_fail(err, errlen, "a bad percent escape in the %s",
					 query ? "query" : "path");
		if (!is_pchar(c) && c != '/' && !(query && c == '?'))
			return http_fail(err, errlen, "byte 0x%02x is not allowed in a %s", c,
					 query ? "query" : "path");
	}
	return 0;
}

/* "scheme://authority", the start of an absolute-form target: the offset after the authority,
 * or -EBADMSG. */
static int split_absolute(const char *p, size_t n, struct http_target *t, char *err, size_t errlen)
{
	size_t s = 0, a, i;

	while (s < n &&
	       (is_alnum((unsigned char)p[s]) || p[s] == '+' || p[s] == '-' || p[s] == '.'))
		s++;
	if (s == 0 || n - s < 3 || memcmp(p + s, "://", 3) != 0)
		return http_fail(
			err, errlen,
			"the request target is neither \"/path\" nor \"http://host/path\"");
	if (!http_ascii_eq(p, s, "http") && !http_ascii_eq(p, s, "https"))
		return http_fail(err, errlen, "scheme \"%.*s\" is not http or https",
				 (int)MIN(s, (size_t)32), p);
	t->scheme = (struct http_span){ p, s };
	for (a = i = s + 3; i < n && p[i] != '/' && p[i] != '?' && p[i] != '#'; i++) {
		unsigned char c = (unsigned char)p[i];
		if (c == '@')
			return http_fail(err, errlen, "userinfo (user@host) in the request target");
		if (!is_unreserved(c) && !is_subdelim(c) && c != ':' && c != '[' && c != ']' &&
		    c != '%')
			return http_fail(err, errlen, "byte 0x%02x is not allowed in an authority",
					 c);
	}
	if (i == a)
		return http_fail(err, errlen, "an empty authority in the request target");
	t->authority = (struct http_span){ p + a, i - a };
	return (int)i;
}

int http_target_split(const struct http_span *target, struct http_target *ret, char *err,
		      size_t errlen)
{
	struct http_target t = { 0 };
	const char *p = target->p;
	size_t n = target->n, i = 0, s;

	if (n == 0)
		return http_fail(err, errlen, "an empty request target");
	if (p[0] != '/') {
		int k = split_absolute(p, n, &t, err, errlen);
		if (k < 0)
			return k;
		i = (size_t)k;
	}
	for (s = i; i < n && p[i] != '?' && p[i] != '#'; i++)
		;
	/* "http://host" and "http://host?q" have the path "/" (RFC 9112 3.2.1). */
	t.path = i > s ? (struct http_span){ p + s, i - s } : (struct http_span){ "/", 1 };
	if (i < n && p[i] == '?') {
		for (s = ++i; i < n && p[i] != '#'; i++)
			;
		t.query = (struct http_span){ p + s, i - s };
	}
	if (i < n)
		return http_fail(err, errlen, "a fragment (#) in the request target");
	int k = check_bytes(t.path.p, t.path.n, 0, err, errlen);
	if (k >= 0 && t.query.p)
		k = check_bytes(t.query.p, t.query.n, 1, err, errlen);
	if (k < 0)
		return k;
	*ret = t;
	return 0;
}

/* --- authority ---------------------------------------------------------------------------- */

static int parse_port(const char *p, size_t n, uint16_t *ret, char *err, size_t errlen)
{
	unsigned v = 0;

	if (n == 0 || n > 5)
		return http_fail(err, errlen, "a bad port (1 to 5 digits)");
	for (size_t i = 0; i < n; i++) {
		if (!http_is_digit((unsigned char)p[i]))
			return http_fail(err, errlen, "a bad port (digits only)");
		v = v * 10 + (unsigned)(p[i] - '0');
	}
	if (v == 0 || v > 65535)
		return http_fail(err, errlen, "port %u is outside 1..65535", v);
	*ret = (uint16_t)v;
	return 0;
}

static int check_v6(const char *p, size_t n, char *err, size_t errlen)
{
	char text[INET6_ADDRSTRLEN];
	struct in6_addr a;

	for (size_t i = 0; i < n; i++)
		if (http_hex((unsigned char)p[i]) < 0 && p[i] != ':' && p[i] != '.')
			return http_fail(err, errlen,
					 "brackets hold an IPv6 address (no zone, no IPvFuture)");
	if (n >= sizeof(text))
		return http_fail(err, errlen, "brackets hold an IPv6 address");
	memcpy(text, p, n);
	text[n] = '\0';
	if (inet_pton(AF_INET6, text, &a) != 1)
		return http_fail(err, errlen, "brackets hold an IPv6 address");
	return 0;
}

/* A name: labels of letters, digits, '-' and '_', one trailing dot dropped by the caller; a
 * last label that is a number means a dotted-quad IPv4 address, nothing else (a resolver would
 * read "127.1", "2130706433" or "0x7f.1" as addresses, which no rule can name). */
static int check_name(const char *p, size_t n, char *err, size_t errlen)
{
	size_t label = 0, last = 0;

	if (n == 0)
		return http_fail(err, errlen, "an empty host");
	if (n > 253)
		return http_fail(err, errlen, "a host longer than 253 bytes");
	for (size_t i = 0; i <= n; i++) {
		unsigned char c = i < n ? (unsigned char)p[i] : '.';
		if (c == '.') {
			if (label == 0)
				return http_fail(err, errlen, "an empty label in the host");
			label = 0;
			if (i < n)
				last = i + 1;
			continue;
		}
		if (!is_alnum(c) && c != '-' && c != '_')
			return http_fail(err, errlen, "byte 0x%02x is not allowed in a host", c);
		if (++label > 63)
			return http_fail(err, errlen, "a host label longer than 63 bytes");
	}
	for (size_t i = last; i < n; i++)
		if (!http_is_digit((unsigned char)p[i]))
			return 0;
	char text[INET_ADDRSTRLEN];
	struct in_addr a;
	if (n < sizeof(text)) {
		memcpy(text, p, n);
		text[n] = '\0';
		if (inet_pton(AF_INET, text, &a) == 1)
			return 0;
	}
	return http_fail(err, errlen, "a host that ends in a number but is not an IPv4 address");
}

int http_authority_parse(const struct http_span *authority, char *host, size_t hostlen,
			 uint16_t *port, char *err, size_t errlen)
{
	const char *p = authority->p, *h = p, *colon;
	size_t n = authority->n, hn = n;
	uint16_t v = 0;
	int k;

	if (n == 0)
		return http_fail(err, errlen, "an empty host");
	if (memchr(p, '@', n))
		return http_fail(err, errlen, "userinfo (user@host) in the authority");
	if (p[0] == '[') {
		const char *close = memchr(p, ']', n);
		if (!close)
			return http_fail(err, errlen, "an unclosed '[' in the host");
		h = p + 1;
		hn = (size_t)(close - h);
		colon = close + 1 < p + n ? close + 1 : NULL;
		if (colon && *colon != ':')
			return http_fail(err, errlen, "bytes after the IPv6 address's ']'");
		k = check_v6(h, hn, err, errlen);
	} else {
		colon = memchr(p, ':', n);
		if (colon && memchr(colon + 1, ':', n - (size_t)(colon + 1 - p)))
			return http_fail(err, errlen, "an IPv6 address in a host needs brackets");
		if (colon)
			hn = (size_t)(colon - p);
		if (hn > 0 && h[hn - 1] == '.')
			hn--; /* the root label: "example.com." is "example.com" */
		k = check_name(h, hn, err, errlen);
	}
	if (k >= 0 && colon)
		k = parse_port(colon + 1, (size_t)(p + n - colon - 1), &v, err, errlen);
	if (k < 0)
		return k;
	if (hn + 1 > hostlen)
		return http_fail(err, errlen, "a host longer than %zu bytes",
				 hostlen ? hostlen - 1 : 0);
	for (size_t i = 0; i < hn; i++)
		host[i] = http_lower(h[i]);
	host[hn] = '\0';
	*port = v;
	return 0;
}

/* --- path normalisation ------------------------------------------------------------------- */

/* The length of the separator at @i ("/", "%2F" or "%5C"), or 0. */
static size_t sep_len(const char *p, size_t n, size_t i)
{
	if (p[i] == '/')
		return 1;
	if (p[i] == '%' && i + 2 < n && p[i + 1] == '2' && (p[i + 2] == 'f' || p[i + 2] == 'F'))
		return 3;
	if (p[i] == '%' && i + 2 < n && p[i + 1] == '5' && (p[i + 2] == 'c' || p[i + 2] == 'C'))
		return 3;
	return 0;
}

/* The byte the escape at @p stands for. */
static unsigned char unescape(const char *p)
{
	return (unsigned char)(http_hex((unsigned char)p[1]) * 16 + http_hex((unsigned char)p[2]));
}

/* How many dots the segment @p[0..@n) is once decoded: 1 for ".", 2 for "..", else 0; -1
 * for "." or ".." with path parameters (".;x", "..;x"), which some origins (Tomcat, Jetty)
 * resolve as a dot segment after the rules would have matched it as a name. */
static int dots(const char *p, size_t n)
{
	int d = 0;

	for (size_t i = 0; i < n; i += p[i] == '%' ? 3 : 1) {
		if (p[i] == ';' && d > 0)
			return d <= 2 ? -1 : 0;
		if ((p[i] == '%' ? unescape(p + i) : (unsigned char)p[i]) != '.' || ++d > 2)
			return 0;
	}
	return d;
}

/* Append the segment @p[0..@n), its unreserved escapes decoded and the others in upper case. */
static int put_segment(const char *p, size_t n, char *out, size_t *o, size_t outlen, char *err,
		       size_t errlen)
{
	static const char hex[] = "0123456789ABCDEF";

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		int keep = c == '%' && !is_unreserved(unescape(p + i));
		if (*o + (keep ? 3 : 1) >= outlen)
			return http_fail(err, errlen,
					 "the normalised path is longer than %zu bytes",
					 outlen - 1);
		if (c == '%' && !keep) {
			out[(*o)++] = (char)unescape(p + i);
			i += 2;
		} else if (keep) {
			c = unescape(p + i);
			out[(*o)++] = '%';
			out[(*o)++] = hex[c >> 4];
			out[(*o)++] = hex[c & 15];
			i += 2;
		} else {
			out[(*o)++] = (char)c;
		}
	}
	return 0;
}

long http_path_normalize(const struct http_span *path, char *out, size_t outlen, char *err,
			 size_t errlen)
{
	const char *p = path->p;
	size_t n = path->n, i = 0, o = 0;

	if (n == 0 || p[0] != '/')
		return http_fail(err, errlen, "the path does not start with '/'");
	int k = check_bytes(p, n, 0, err, errlen);
	if (k < 0)
		return k;
	for (size_t j = 0; j + 2 < n; j++)
		if (p[j] == '%' && unescape(p + j) == 0)
			return http_fail(err, errlen, "a NUL escape (%%00) in the path");
	if (outlen < 2)
		return http_fail(err, errlen, "no room for the normalised path");
	out[o++] = '/';
	/* The output always ends with '/' between segments: runs of separators are one, "."
	 * adds nothing, ".." removes the segment before it (none at the root). */
	while (i < n) {
		size_t s, sep;
		while (i < n && (sep = sep_len(p, n, i)) > 0)
			i += sep;
		if (i == n)
			break;
		for (s = i; i < n && sep_len(p, n, i) == 0; i += p[i] == '%' ? 3 : 1)
			;
		int d = dots(p + s, i - s);
		if (d < 0)
			return http_fail(err, errlen, "a dot segment with parameters (\"..;\")");
		if (d == 2 && o > 1) {
			for (o--; out[o - 1] != '/'; o--)
				;
		}
		if (d > 0)
			continue;
		k = put_segment(p + s, i - s, out, &o, outlen, err, errlen);
		if (k >= 0 && i < n) {
			if (o + 1 >= outlen)
				k = http_fail(err, errlen,
					      "the normalised path is longer than %zu bytes",
					      outlen - 1);
			else
				out[o++] = '/';
		}
		if (k < 0)
			return k;
	}
	out[o] = '\0';
	return (long)o;
}
