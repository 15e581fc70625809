/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rules-http: the HTTP ACL rules ("METHOD host[:port]/path") of rules.h, their formatter, and
 * the matcher the proxy asks about each request, with its '*' glob. Parses and compares only;
 * the proxy owns the request parsing and the normalisation of what it passes in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "rules-internal.h"

static int parse_method(const char *m, size_t n, char out[HTTP_METHOD_MAX + 1], char *err,
			size_t errlen)
{
	if (n == 1 && m[0] == '*') {
		strcpy(out, "*");
		return 0;
	}
	if (n > HTTP_METHOD_MAX)
		return rules_err(err, errlen, -EINVAL,
				 "HTTP method \"%.*s\" is longer than %d letters", Q(n), m,
				 HTTP_METHOD_MAX);
	for (size_t i = 0; i < n; i++) {
		if (!rules_is_alpha(m[i]))
			return rules_err(err, errlen, -EINVAL,
					 "invalid HTTP method \"%.*s\" (letters, or * for any)",
					 Q(n), m);
		out[i] = rules_lower(m[i]) - ('a' - 'A');
	}
	out[n] = '\0';
	return 0;
}

static int parse_port(const char *p, size_t n, uint16_t *ret, char *err, size_t errlen)
{
	unsigned v = 0;

	if (n == 0)
		return rules_err(err, errlen, -EINVAL, "empty port after ':'");
	for (size_t i = 0; i < n; i++) {
		if (!rules_is_digit(p[i]))
			return rules_err(err, errlen, -EINVAL, "invalid port \"%.*s\"", Q(n), p);
		v = v * 10 + (unsigned)(p[i] - '0');
		if (v > 65535)
			return rules_err(err, errlen, -ERANGE,
					 "port \"%.*s\" is out of range (1-65535)", Q(n), p);
	}
	if (v == 0)
		return rules_err(err, errlen, -ERANGE, "port \"%.*s\" is out of range (1-65535)",
				 Q(n), p);
	*ret = (uint16_t)v;
	return 0;
}

struct host_split {
	const char *name;
	size_t nlen;
	int bracketed;
	const char *port; /* NULL: none */
	size_t plen;
};

/* Split "host", "host:port", "[v6]", "[v6]:port" or an unbracketed "v6" (no port). */
static int split_host(const char *h, size_t n, struct host_split *sp, char *err, size_t errlen)
{
	*sp = (struct host_split){ .name = h, .nlen = n };
	if (h[0] == '[') {
		const char *close = memchr(h, ']', n);
		if (!close)
			return rules_err(err, errlen, -EINVAL, "unclosed '[' in host \"%.*s\"",
					 Q(n), h);
		size_t rest = n - (size_t)(close + 1 - h);
		if (rest > 0 && close[1] != ':')
			return rules_err(err, errlen, -EINVAL,
					 "unexpected \"%.*s\" after ']' in host \"%.*s\"", Q(rest),
					 close + 1, Q(n), h);
		sp->name = h + 1;
		sp->nlen = (size_t)(close - h - 1);
		sp->bracketed = 1;
		if (rest > 0) {
			sp->port = close + 2;
			sp->plen = rest - 1;
		}
		return 0;
	}
	const char *colon = memchr(h, ':', n);
	/* Two colons or more: an unbracketed IPv6 literal, which takes no port. */
	if (colon && !memchr(colon + 1, ':', n - (size_t)(colon + 1 - h))) {
		sp->nlen = (size_t)(colon - h);
		sp->port = colon + 1;
		sp->plen = n - sp->nlen - 1;
	}
	return 0;
}

static int parse_host(const char *h, size_t n, struct http_rule *r, char *err, size_t errlen)
{
	struct host_split sp;
	const char *why;

	if (n == 0)
		return rules_err(err, errlen, -EINVAL, "missing host before the path");
	int k = split_host(h, n, &sp, err, errlen);
	if (k >= 0 && sp.port)
		k = parse_port(sp.port, sp.plen, &r->port, err, errlen);
	if (k < 0)
		return k;
	if (!sp.bracketed && sp.nlen == 1 && sp.name[0] == '*') {
		r->host_kind = HTTP_HOST_ANY;
		return 0;
	}
	if (rules_ip_parse(sp.name, sp.nlen, &r->family, r->addr) == 0) {
		if (sp.bracketed && r->family != AF_INET6)
			return rules_err(err, errlen, -EINVAL,
					 "brackets hold an IPv6 address, not \"%.*s\"", Q(sp.nlen),
					 sp.name);
		r->host_kind = HTTP_HOST_IP;
		return 0;
	}
	if (sp.bracketed || memchr(sp.name, ':', sp.nlen))
		return rules_err(err, errlen, -EINVAL,
				 "\"%.*s\" is not an IPv6 address (with a port: [ADDR]:PORT)",
				 Q(sp.nlen), sp.name);
	/* "*.example.com": the name after the "*." names the subdomains. */
	int suffix = sp.nlen > 2 && sp.name[0] == '*' && sp.name[1] == '.';
	const char *name = suffix ? sp.name + 2 : sp.name;
	size_t nlen = suffix ? sp.nlen - 2 : sp.nlen;
	if (rules_hostname_parse(name, nlen, r->host, &why) < 0)
		return rules_err(err, errlen, -EINVAL,
				 "invalid host \"%.*s\": %s (a name, *.name for its subdomains, an "
				 "address, or *)",
				 Q(sp.nlen), sp.name, why);
	r->host_kind = suffix ? HTTP_HOST_SUFFIX : HTTP_HOST_NAME;
	return 0;
}

static int parse_path(const char *p, size_t n, char **ret, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)p[i] <= ' ' || (unsigned char)p[i] >= 0x7f)
			return rules_err(err, errlen, -EINVAL,
					 "path \"%.*s\" holds a byte that is not printable ASCII",
					 Q(n), p);
	*ret = n ? strndup(p, n) : strdup("/*"); /* no path: the whole host */
	if (!*ret)
		return rules_err(err, errlen, -ENOMEM, "out of memory");
	return 0;
}

int rules_http_parse_fields(const char *method, size_t mlen, const char *target, size_t tlen,
			    struct http_rule *ret, char *err, size_t errlen)
{
	struct http_rule r = { 0 };
	const char *slash = memchr(target, '/', tlen);
	size_t hlen = slash ? (size_t)(slash - target) : tlen;

	int k = parse_method(method, mlen, r.method, err, errlen);
	if (k >= 0)
		k = parse_host(target, hlen, &r, err, errlen);
	if (k >= 0)
		k = parse_path(target + hlen, tlen - hlen, &r.path, err, errlen);
	if (k < 0)
		return k;
	*ret = r;
	return 0;
}

int http_rule_parse(const char *s, struct http_rule *ret, char *err, size_t errlen)
{
	const char *f[3];
	size_t len[3];

	if (!s)
		return rules_err(err, errlen, -EINVAL, "missing HTTP rule");
	size_t n = rules_split_fields(s, 3, f, len);
	if (n < 2)
		return rules_err(err, errlen, -EINVAL,
				 "HTTP rule \"%s\" is not \"METHOD host/path\" (e.g. \"GET "
				 "example.com/*\")",
				 s);
	if (n > 2)
		return rules_err(err, errlen, -EINVAL,
				 "unexpected \"%s\" after METHOD host/path in HTTP rule \"%s\"",
				 f[2], s);
	int k = rules_http_parse_fields(f[0], len[0], f[1], len[1], ret, err, errlen);
	if (k < 0 && err && errlen > 0) {
		/* Name the whole rule after the part the field parser quoted. */
		size_t used = strlen(err);
		if (used + 1 < errlen)
			rules_err(err + used, errlen - used, k, ", in HTTP rule \"%s\"", s);
	}
	return k;
}

void http_rule_done(struct http_rule *r)
{
	if (!r)
		return;
	free(r->path);
	*r = (struct http_rule){ 0 };
}

int http_rule_format(const struct http_rule *r, char **ret)
{
	struct rules_buf b = { 0 };

	if (!r->path || r->path[0] != '/' || !r->method[0] ||
	    !memchr(r->method, '\0', sizeof(r->method)) || !memchr(r->host, '\0', sizeof(r->host)))
		return -EINVAL;
	rules_buf_printf(&b, "%s ", r->method);
	switch (r->host_kind) {
	case HTTP_HOST_ANY:
		rules_buf_printf(&b, "*");
		break;
	case HTTP_HOST_NAME:
	case HTTP_HOST_SUFFIX:
		if (!r->host[0]) {
			free(b.s);
			return -EINVAL;
		}
		rules_buf_printf(&b, "%s%s", r->host_kind == HTTP_HOST_SUFFIX ? "*." : "", r->host);
		break;
	case HTTP_HOST_IP:
		if (r->family != AF_INET && r->family != AF_INET6) {
			free(b.s);
			return -EINVAL;
		}
		rules_buf_printf(&b, "%s", r->family == AF_INET6 ? "[" : "");
		rules_ip_format(&b, r->family, r->addr);
		rules_buf_printf(&b, "%s", r->family == AF_INET6 ? "]" : "");
		break;
	default:
		free(b.s);
		return -EINVAL;
	}
	if (r->port)
		rules_buf_printf(&b, ":%u", r->port);
	rules_buf_printf(&b, "%s", r->path);
	return rules_buf_finish(&b, ret);
}

int http_rule_equal(const struct http_rule *a, const struct http_rule *b)
{
	if (strcmp(a->method, b->method) != 0 || a->host_kind != b->host_kind ||
	    a->port != b->port || !a->path || !b->path || strcmp(a->path, b->path) != 0)
		return 0;
	if (a->host_kind == HTTP_HOST_NAME || a->host_kind == HTTP_HOST_SUFFIX)
		return strcmp(a->host, b->host) == 0;
	if (a->host_kind == HTTP_HOST_IP)
		return a->family == b->family && memcmp(a->addr, b->addr, sizeof(a->addr)) == 0;
	return 1;
}

int http_glob_match(const char *pattern, const char *str)
{
	const char *p = pattern, *s = str, *star = NULL, *resume = NULL;

	/* With '*' the only wildcard, backtracking to the latest star is enough: an earlier
	 * star could only absorb what the latest one can absorb too. */
	while (*s) {
		if (*p == '*') {
			star = p++;
			resume = s;
		} else if (*p == *s) {
			p++;
			s++;
		} else if (star) {
			p = star + 1;
			s = ++resume;
		} else {
			return 0;
		}
	}
	while (*p == '*')
		p++;
	return *p == '\0';
}

static int host_matches(const struct http_rule *r, const char *host)
{
	size_t n = strlen(host);
	int family;
	uint8_t addr[16];

	if (r->host_kind == HTTP_HOST_ANY)
		return 1;
	if (r->host_kind == HTTP_HOST_NAME) {
		if (n > 0 && host[n - 1] == '.')
			n--;
		return n == strlen(r->host) && strncasecmp(host, r->host, n) == 0;
	}
	if (r->host_kind == HTTP_HOST_SUFFIX) {
		size_t sn = strlen(r->host);
		if (n > 0 && host[n - 1] == '.')
			n--;
		/* At least "x." before the suffix, and no empty label right before it. */
		if (n < sn + 2 || host[n - sn - 1] != '.' || host[n - sn - 2] == '.')
			return 0;
		return strncasecmp(host + n - sn, r->host, sn) == 0;
	}
	if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
		host++;
		n -= 2;
	}
	if (rules_ip_parse(host, n, &family, addr) < 0)
		return 0;
	uint8_t ra[16];
	int rf = r->family;
	memcpy(ra, r->addr, sizeof(ra));
	rules_ip_unmap(&rf, ra, NULL);
	rules_ip_unmap(&family, addr, NULL);
	return rf == family && memcmp(ra, addr, family == AF_INET ? 4 : 16) == 0;
}

int http_rule_match(const struct http_rule *r, const char *method, const char *host, uint16_t port,
		    const char *path)
{
	if (!method || !host || !path || !r->path)
		return 0;
	if (strcmp(r->method, "*") != 0 && strcasecmp(r->method, method) != 0)
		return 0;
	if (r->port && r->port != port)
		return 0;
	return host_matches(r, host) && http_glob_match(r->path, path);
}
