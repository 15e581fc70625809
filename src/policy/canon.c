/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * canon: parse with rules.c, format back: the canonical text of each rule-like policy entry.
 * Pure: no syscalls.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canon.h"
#include "parse-util.h"
#include "rules.h"

/* Copy a formatted string into @out (owned by the caller); frees @s. */
static int emit(int r, char *s, char *out, size_t size, char *err, size_t errlen)
{
	if (r < 0) {
		free(s);
		if (r == -ENOMEM)
			snprintf(err, errlen, "out of memory");
		return r;
	}
	if (strlen(s) >= size) {
		free(s);
		snprintf(err, errlen, "too long");
		return -ERANGE;
	}
	strcpy(out, s);
	free(s);
	return 0;
}

int net_rule_canon(const char *in, int deny, char *out, size_t size, struct net_rule *ret_rule,
		   char *err, size_t errlen)
{
	struct net_rule rule;
	char *s = NULL;

	int r = net_rule_parse(in, deny ? NET_RULE_DENY : NET_RULE_ALLOW, &rule, err, errlen);
	if (r < 0)
		return r;
	if (deny && rule.kind != NET_TARGET_IP) {
		/* The reference: "targets are literal IP/CIDR values" (0.0.0.0/0 and ::/0 say
		 * everything). */
		net_rule_done(&rule);
		snprintf(err, errlen, "a deny rule takes literal IPs or CIDRs, not \"%s\"", in);
		return -EINVAL;
	}
	r = net_rule_format(&rule, &s);
	r = emit(r, s, out, size, err, errlen);
	if (r == 0 && ret_rule)
		*ret_rule = rule;
	else
		net_rule_done(&rule);
	return r;
}

int http_rule_canon(const char *in, char *out, size_t size, char *err, size_t errlen)
{
	struct http_rule rule;
	char *s = NULL;

	int r = http_rule_parse(in, &rule, err, errlen);
	if (r < 0)
		return r;
	r = http_rule_format(&rule, &s);
	http_rule_done(&rule);
	return emit(r, s, out, size, err, errlen);
}

/* Collapse repeated slashes and "." components of absolute path @p in place, and drop a
 * trailing slash ("/" stays). ".." is kept: without the filesystem it cannot be resolved. */
static void path_simplify(char *p)
{
	char *w = p;

	for (const char *r = p; *r;) {
		if (*r == '/') {
			while (*r == '/')
				r++;
			if (r[0] == '.' && (r[1] == '/' || r[1] == '\0')) {
				r++;
				continue;
			}
			*w++ = '/';
			continue;
		}
		*w++ = *r++;
	}
	if (w > p + 1 && w[-1] == '/')
		w--;
	if (w == p)
		*w++ = '/';
	*w = '\0';
}

int mount_entry_canon(const char *in, char *out, size_t size, char *err, size_t errlen)
{
	struct mount_entry m;
	char *s = NULL;

	int r = mount_entry_parse(in, &m, err, errlen);
	if (r < 0)
		return r;
	/* "/a/", "//a" and "/./a" are the virtual path "/a": one spelling, so that a path mapped
	 * twice is seen as such. */
	path_simplify(m.virt);
	r = mount_entry_format(&m, &s);
	mount_entry_done(&m);
	return emit(r, s, out, size, err, errlen);
}

int credential_canon(const char *in, char *out, size_t size, char *err, size_t errlen)
{
	struct credential_spec c;
	char *s = NULL;

	int r = credential_spec_parse(in, &c, err, errlen);
	if (r < 0)
		return r;
	r = credential_spec_format(&c, &s);
	credential_spec_done(&c);
	return emit(r, s, out, size, err, errlen);
}

int http_auth_canon(const char *in, char *out, size_t size, char *err, size_t errlen)
{
	struct http_auth a;
	char *s = NULL;

	int r = http_auth_parse(in, &a, err, errlen);
	if (r < 0)
		return r;
	r = http_auth_format(&a, &s);
	http_auth_done(&a);
	return emit(r, s, out, size, err, errlen);
}

int bind_ports_canon(const char *in, int allow, char *out, size_t size, struct port_set *ret_set,
		     char *err, size_t errlen)
{
	struct port_set set = { 0 };
	char *s = NULL;

	int r = bind_ports_parse(in, allow ? NET_BIND_ALLOW : NET_BIND_DENY, &set, err, errlen);
	if (r < 0) {
		port_set_done(&set); /* a failure may leave ranges allocated */
		return r;
	}
	r = bind_ports_format(&set, &s);
	r = emit(r, s, out, size, err, errlen);
	if (r == 0 && ret_set)
		*ret_set = set;
	else
		port_set_done(&set);
	return r;
}

/* @s as Unix seconds ("1767225600", "-1.5", "961027200.000000001"): 0, or -EINVAL for
 * anything else (an RFC 3339 date-time, say). */
static int unix_time_parse(const char *s, int64_t *ret_sec, uint32_t *ret_nsec)
{
	const char *p = s + (*s == '-');
	int64_t sec = 0;
	uint32_t nsec = 0;
	int digits = 0;

	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		if (sec > (INT64_MAX - 9) / 10 / 1000000000LL)
			return -ERANGE; /* far beyond any date-time */
		sec = sec * 10 + (*p - '0');
	}
	if (!digits)
		return -EINVAL;
	if (*p == '.') {
		int frac = 0;
		for (p++; *p >= '0' && *p <= '9' && frac < 9; p++, frac++)
			nsec = nsec * 10 + (uint32_t)(*p - '0');
		if (!frac)
			return -EINVAL;
		for (int k = frac; k < 9; k++)
			nsec *= 10;
	}
	if (*p)
		return -EINVAL;
	if (*s == '-') {
		sec = -sec;
		if (nsec) {
			sec--;
			nsec = 1000000000u - nsec;
		}
	}
	*ret_sec = sec;
	*ret_nsec = nsec;
	return 0;
}

int time_canon(const char *in, char *out, size_t size, char *err, size_t errlen)
{
	char buf[RFC3339_BUF_SIZE];
	int64_t sec;
	uint32_t nsec = 0;

	/* RFC 3339 with an offset (an SDK turns its aware datetime into that), or Unix seconds:
	 * digits, optionally a '-' before and up to 9 digits of fraction after a '.'. */
	int r = unix_time_parse(in, &sec, &nsec);
	if (r == -ERANGE)
		return snprintf(err, errlen, "\"%s\" is out of range (0000-01-01 to 9999-12-31)",
				in),
		       -EINVAL;
	if (r < 0)
		r = rfc3339_parse(in, &sec, &nsec, err, errlen);
	if (r < 0)
		return r;
	r = rfc3339_format(sec, nsec, buf);
	if (r < 0)
		return snprintf(err, errlen, "\"%s\" is out of range (0000-01-01 to 9999-12-31)",
				in),
		       -EINVAL;
	if (strlen(buf) >= size)
		return snprintf(err, errlen, "too long"), -ERANGE;
	strcpy(out, buf);
	return 0;
}
