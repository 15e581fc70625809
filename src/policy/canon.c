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

int net_rule_canon(const char *in, int deny, char *out, size_t size, char *err, size_t errlen)
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
	net_rule_done(&rule);
	return emit(r, s, out, size, err, errlen);
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

int bind_ports_canon(const char *in, int allow, char *out, size_t size, char *err, size_t errlen)
{
	struct port_set set = { 0 };
	char *s = NULL;

	int r = bind_ports_parse(in, allow ? NET_BIND_ALLOW : NET_BIND_DENY, &set, err, errlen);
	if (r < 0) {
		port_set_done(&set); /* a failure may leave ranges allocated */
		return r;
	}
	r = bind_ports_format(&set, &s);
	port_set_done(&set);
	return emit(r, s, out, size, err, errlen);
}

int time_canon(const char *in, char *out, size_t size, char *err, size_t errlen)
{
	char buf[RFC3339_BUF_SIZE];
	int64_t sec;
	uint32_t nsec = 0;

	/* RFC 3339 with an offset only, as the reference says (an SDK turns its aware datetime
	 * into that): a bare number is refused by the parser. */
	int r = rfc3339_parse(in, &sec, &nsec, err, errlen);
	if (r < 0)
		return r;
	r = rfc3339_format(sec, nsec, buf);
	if (r < 0)
		return snprintf(err, errlen, "cannot format the time"), r;
	if (strlen(buf) >= size)
		return snprintf(err, errlen, "too long"), -ERANGE;
	strcpy(out, buf);
	return 0;
}
