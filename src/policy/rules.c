/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rules: the helpers shared by the rule grammars of rules.h (messages, the formatters' output
 * buffer, hostnames, IP literals, port lists, HTTP tokens). The grammars themselves live in
 * rules-net.c, rules-http.c, rules-auth.c, rules-mount.c and rules-time.c. Pure: inet_pton() and
 * inet_ntop() are the only libc calls beyond memory and strings, and they touch no state.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules-internal.h"

int rules_err(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return code;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	/* The quoted input may hold anything; a message is one printable line. */
	for (char *p = err; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			*p = '?';
	return code;
}

void rules_buf_printf(struct rules_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->failed)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->failed = 1;
		return;
	}
	if (b->len + (size_t)n + 1 > b->cap) {
		size_t cap = MAX(b->cap * 2, b->len + (size_t)n + 1);
		char *s = realloc(b->s, cap);
		if (!s) {
			b->failed = 1;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

int rules_buf_finish(struct rules_buf *b, char **ret)
{
	if (!b->failed && !b->s)
		b->s = strdup("");
	if (b->failed || !b->s) {
		free(b->s);
		*b = (struct rules_buf){ 0 };
		return -ENOMEM;
	}
	*ret = b->s;
	*b = (struct rules_buf){ 0 };
	return 0;
}

/* The last label is a number to getaddrinfo() (inet_aton() reads "127.1", "0x7f", "017"):
 * all digits, or "0x" and hex digits. */
static int label_is_number(const char *p, size_t n)
{
	size_t i = 0;

	if (n >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		for (i = 2; i < n; i++)
			if (!rules_is_digit(p[i]) &&
			    !(rules_lower(p[i]) >= 'a' && rules_lower(p[i]) <= 'f'))
				return 0;
		return 1;
	}
	for (; i < n; i++)
		if (!rules_is_digit(p[i]))
			return 0;
	return 1;
}

/* What is wrong with the name @p[0..@n) (trailing dot already dropped), or NULL. */
static const char *hostname_problem(const char *p, size_t n)
{
	size_t label = 0, last = 0;

	if (n == 0)
		return "empty name";
	if (n > NET_HOST_MAX)
		return "longer than 253 characters";
	for (size_t i = 0; i <= n; i++) {
		char c = i < n ? p[i] : '.';
		if (c == '.') {
			if (label == 0)
				return "empty label";
			if (p[i - 1] == '-')
				return "a label ends with '-'";
			label = 0;
			continue;
		}
		if (!rules_is_alpha(c) && !rules_is_digit(c) && c != '-')
			return "only letters, digits, '-' and '.' are allowed";
		if (c == '-' && label == 0)
			return "a label starts with '-'";
		if (++label > 63)
			return "a label is longer than 63 characters";
	}
	for (size_t i = 0; i < n; i++)
		if (p[i] == '.')
			last = i + 1;
	if (label_is_number(p + last, n - last))
		return "ends in a number, but is not an IPv4 address";
	return NULL;
}

int rules_hostname_parse(const char *p, size_t n, char out[NET_HOST_MAX + 1], const char **reason)
{
	if (n > 0 && p[n - 1] == '.')
		n--; /* the root label: "example.com." is "example.com" */
	*reason = hostname_problem(p, n);
	if (*reason)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		out[i] = rules_lower(p[i]);
	out[n] = '\0';
	return 0;
}

int rules_ip_parse(const char *p, size_t n, int *family, uint8_t addr[16])
{
	char buf[INET6_ADDRSTRLEN];
	uint8_t a[16] = { 0 };

	if (n == 0 || n >= sizeof(buf) || memchr(p, '\0', n))
		return -EINVAL;
	memcpy(buf, p, n);
	buf[n] = '\0';
	if (inet_pton(AF_INET, buf, a) == 1) {
		*family = AF_INET;
	} else if (inet_pton(AF_INET6, buf, a) == 1) {
		*family = AF_INET6;
	} else {
		return -EINVAL;
	}
	memcpy(addr, a, 16);
	return 0;
}

void rules_ip_unmap(int *family, uint8_t addr[16], unsigned *prefix)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (*family != AF_INET6 || (prefix && *prefix < 96) ||
	    memcmp(addr, mapped, sizeof(mapped)) != 0)
		return;
	memmove(addr, addr + 12, 4);
	memset(addr + 4, 0, 12);
	*family = AF_INET;
	if (prefix)
		*prefix -= 96;
}

void rules_ip_format(struct rules_buf *b, int family, const uint8_t *addr)
{
	char buf[INET6_ADDRSTRLEN];

	if (!inet_ntop(family, addr, buf, sizeof(buf))) {
		b->failed = 1;
		return;
	}
	rules_buf_printf(b, "%s", buf);
}

void rules_ports_format(struct rules_buf *b, const struct port_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		const struct port_range *r = &set->ranges[i];
		if (r->lo == r->hi)
			rules_buf_printf(b, "%s%u", i ? "," : "", r->lo);
		else
			rules_buf_printf(b, "%s%u-%u", i ? "," : "", r->lo, r->hi);
	}
}

int rules_ports_equal(const struct port_set *a, const struct port_set *b)
{
	if (!!a->all != !!b->all || a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (a->ranges[i].lo != b->ranges[i].lo || a->ranges[i].hi != b->ranges[i].hi)
			return 0;
	return 1;
}

int rules_is_tchar(int c)
{
	return c > 0 && c < 0x7f &&
	       (rules_is_alpha(c) || rules_is_digit(c) || strchr("!#$%&'*+-.^_`|~", c));
}

size_t rules_split_fields(const char *s, size_t max, const char **start, size_t *len)
{
	size_t n = 0;
	const char *p = s;

	for (;;) {
		while (rules_is_space(*p))
			p++;
		if (!*p)
			return n;
		if (n == max)
			return max + 1;
		start[n] = p;
		while (*p && !rules_is_space(*p))
			p++;
		len[n] = (size_t)(p - start[n]);
		n++;
	}
}
