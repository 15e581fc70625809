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

int mount_entry_canon(const char *in, char *out, size_t size, char *err, size_t errlen)
{
	struct mount_entry m;
	char *s = NULL;

	int r = mount_entry_parse(in, &m, err, errlen);
	if (r < 0)
		return r;
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
	uint64_t unix_sec;
	int64_t sec;
	uint32_t nsec = 0;

	/* A bare number is Unix time in seconds (the SDK also takes a timestamp). */
	if (parse_uint64(in, &unix_sec) == 0) {
		if (unix_sec > 253402300799ULL) /* 9999-12-31T23:59:59Z */
			return snprintf(err, errlen, "a Unix time after the year 9999"), -ERANGE;
		sec = (int64_t)unix_sec;
	} else {
		int r = rfc3339_parse(in, &sec, &nsec, err, errlen);
		if (r < 0)
			return r;
	}
	int r = rfc3339_format(sec, nsec, buf);
	if (r < 0)
		return snprintf(err, errlen, "cannot format the time"), r;
	if (strlen(buf) >= size)
		return snprintf(err, errlen, "too long"), -ERANGE;
	strcpy(out, buf);
	return 0;
}
