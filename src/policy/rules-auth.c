/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rules-auth: credential sources (--credential NAME=env:VAR|file:PATH|fd:N) and the injection
 * rules that attach them to requests (--http-auth "METHOD HOST/PATH AUTH NAME [MODE]"). Text
 * only: no secret is read here, no fd is touched, and a credential NAME is not checked to exist.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rules-internal.h"

/* [A-Za-z0-9_.-]+ */
static int cred_name_valid(const char *p, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!rules_is_alpha(p[i]) && !rules_is_digit(p[i]) && !strchr("_.-", p[i]))
			return 0;
	return 1;
}

/* A portable environment variable name: [A-Za-z_][A-Za-z0-9_]* */
static int env_name_valid(const char *p)
{
	if (!rules_is_alpha(*p) && *p != '_')
		return 0;
	for (; *p; p++)
		if (!rules_is_alpha(*p) && !rules_is_digit(*p) && *p != '_')
			return 0;
	return 1;
}

static int parse_source(const char *s, const char *src, struct credential_spec *c, char *err,
			size_t errlen)
{
	uint64_t fd;

	c->fd = -1;
	if (strncmp(src, "env:", 4) == 0) {
		if (!env_name_valid(src + 4))
			return rules_err(err, errlen, -EINVAL,
					 "invalid variable name \"%s\" in credential \"%s\" "
					 "([A-Za-z_][A-Za-z0-9_]*)",
					 src + 4, s);
		c->source = CRED_SOURCE_ENV;
		c->ref = strdup(src + 4);
	} else if (strncmp(src, "file:", 5) == 0) {
		if (src[5] != '/')
			return rules_err(err, errlen, -EINVAL,
					 "credential file \"%s\" in \"%s\" is not an absolute path",
					 src + 5, s);
		c->source = CRED_SOURCE_FILE;
		c->ref = strdup(src + 5);
	} else if (strncmp(src, "fd:", 3) == 0) {
		int k = parse_uint64(src + 3, &fd);
		if (k == 0 && fd > INT_MAX)
			k = -ERANGE;
		if (k < 0)
			return rules_err(err, errlen, k,
					 "invalid fd \"%s\" in credential \"%s\" (0-%d)", src + 3,
					 s, INT_MAX);
		c->source = CRED_SOURCE_FD;
		c->fd = (int)fd;
		return 0;
	} else {
		return rules_err(
			err, errlen, -EINVAL,
			"unknown credential source \"%s\" in \"%s\" (env:VAR, file:PATH or "
			"fd:N)",
			src, s);
	}
	return c->ref ? 0 : rules_err(err, errlen, -ENOMEM, "out of memory");
}

int credential_spec_parse(const char *s, struct credential_spec *ret, char *err, size_t errlen)
{
	struct credential_spec c = { 0 };

	if (!s)
		return rules_err(err, errlen, -EINVAL, "missing credential");
	const char *eq = strchr(s, '=');
	if (!eq)
		return rules_err(err, errlen, -EINVAL, "credential \"%s\" is not NAME=SOURCE", s);
	if (!cred_name_valid(s, (size_t)(eq - s)))
		return rules_err(err, errlen, -EINVAL,
				 "invalid credential name \"%.*s\" in \"%s\" ([A-Za-z0-9_.-]+)",
				 Q(eq - s), s, s);
	int k = parse_source(s, eq + 1, &c, err, errlen);
	if (k >= 0) {
		c.name = strndup(s, (size_t)(eq - s));
		if (!c.name)
			k = rules_err(err, errlen, -ENOMEM, "out of memory");
	}
	if (k < 0) {
		credential_spec_done(&c);
		return k;
	}
	*ret = c;
	return 0;
}

void credential_spec_done(struct credential_spec *c)
{
	if (!c)
		return;
	free(c->name);
	free(c->ref);
	*c = (struct credential_spec){ 0 };
}

int credential_spec_format(const struct credential_spec *c, char **ret)
{
	struct rules_buf b = { 0 };

	if (!c->name || !cred_name_valid(c->name, strlen(c->name)))
		return -EINVAL;
	if (c->source == CRED_SOURCE_ENV && c->ref && env_name_valid(c->ref))
		rules_buf_printf(&b, "%s=env:%s", c->name, c->ref);
	else if (c->source == CRED_SOURCE_FILE && c->ref && c->ref[0] == '/')
		rules_buf_printf(&b, "%s=file:%s", c->name, c->ref);
	else if (c->source == CRED_SOURCE_FD && c->fd >= 0)
		rules_buf_printf(&b, "%s=fd:%d", c->name, c->fd);
	else
		return -EINVAL;
	return rules_buf_finish(&b, ret);
}

/* RFC 7617: the user-id may not hold ':' (the first one ends it), nor controls. */
static const char *basic_user_problem(const char *p, size_t n)
{
	if (memchr(p, ':', n))
		return "RFC 7617: a ':' in the user-id would move the user:password boundary and "
		       "leak part of the secret";
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
			return "the user-id holds a control character";
	return NULL;
}

static const char *header_problem(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!rules_is_tchar(p[i]))
			return "a header name is an HTTP token (letters, digits, !#$%&'*+-.^_`|~)";
	return NULL;
}

/* RFC 3986 unreserved characters, so the name needs no percent-encoding. */
static const char *query_problem(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!rules_is_alpha(p[i]) && !rules_is_digit(p[i]) && !strchr("-._~", p[i]))
			return "a query parameter name takes letters, digits and -._~";
	return NULL;
}

static const struct {
	const char *name;
	int kind;
	const char *param;				 /* what the parameter is, in messages */
	const char *(*problem)(const char *p, size_t n); /* NULL: takes no parameter */
} auth_kinds[] = {
	{ "bearer", HTTP_AUTH_BEARER, NULL, NULL },
	{ "basic", HTTP_AUTH_BASIC, "user-id", basic_user_problem },
	{ "header", HTTP_AUTH_HEADER, "header name", header_problem },
	{ "apikey", HTTP_AUTH_HEADER, "header name", header_problem },
	{ "query", HTTP_AUTH_QUERY, "query parameter", query_problem },
};

static int parse_auth(const char *s, const char *f, size_t n, struct http_auth *a, char *err,
		      size_t errlen)
{
	const char *colon = memchr(f, ':', n);
	size_t klen = colon ? (size_t)(colon - f) : n;

	for (size_t i = 0; i < ELEMENTSOF(auth_kinds); i++) {
		if (strlen(auth_kinds[i].name) != klen || strncasecmp(f, auth_kinds[i].name, klen))
			continue;
		if (!auth_kinds[i].problem != !colon)
			return rules_err(err, errlen, -EINVAL, "%s %s%s in \"%s\"",
					 auth_kinds[i].name,
					 colon ? "takes no parameter" : "needs a ",
					 colon ? "" : auth_kinds[i].param, s);
		a->kind = auth_kinds[i].kind;
		if (!colon)
			return 0;
		size_t plen = n - klen - 1;
		const char *why = plen ? auth_kinds[i].problem(colon + 1, plen) : "it is empty";
		if (why)
			return rules_err(err, errlen, -EINVAL,
					 "invalid %s %s \"%.*s\" (%s) in \"%s\"",
					 auth_kinds[i].name, auth_kinds[i].param, Q(plen),
					 colon + 1, why, s);
		a->param = strndup(colon + 1, plen);
		return a->param ? 0 : rules_err(err, errlen, -ENOMEM, "out of memory");
	}
	return rules_err(err, errlen, -EINVAL,
			 "unknown AUTH \"%.*s\" in \"%s\" (bearer, basic:USER, header:NAME, "
			 "apikey:NAME or query:PARAM)",
			 Q(n), f, s);
}

static int parse_auth_tail(const char *s, const char **f, const size_t *len, size_t n,
			   struct http_auth *a, char *err, size_t errlen)
{
	int k = parse_auth(s, f[2], len[2], a, err, errlen);
	if (k < 0)
		return k;
	if (!cred_name_valid(f[3], len[3]))
		return rules_err(err, errlen, -EINVAL,
				 "invalid credential name \"%.*s\" in \"%s\" ([A-Za-z0-9_.-]+)",
				 Q(len[3]), f[3], s);
	if (n == 5 && len[4] == 8 && strncmp(f[4], "add-only", 8) == 0)
		a->add_only = 1;
	else if (n == 5 && !(len[4] == 7 && strncmp(f[4], "replace", 7) == 0))
		return rules_err(err, errlen, -EINVAL,
				 "unknown mode \"%.*s\" in \"%s\" (replace or add-only)", Q(len[4]),
				 f[4], s);
	a->credential = strndup(f[3], len[3]);
	return a->credential ? 0 : rules_err(err, errlen, -ENOMEM, "out of memory");
}

int http_auth_parse(const char *s, struct http_auth *ret, char *err, size_t errlen)
{
	struct http_auth a = { 0 };
	const char *f[5];
	size_t len[5];

	if (!s)
		return rules_err(err, errlen, -EINVAL, "missing --http-auth rule");
	size_t n = rules_split_fields(s, 5, f, len);
	if (n < 4 || n > 5)
		return rules_err(err, errlen, -EINVAL,
				 "\"%s\" is not \"METHOD HOST/PATH AUTH NAME [replace|add-only]\"",
				 s);
	int k = rules_http_parse_fields(f[0], len[0], f[1], len[1], &a.rule, err, errlen);
	if (k < 0 && err && errlen > 0 && strlen(err) + 1 < errlen)
		rules_err(err + strlen(err), errlen - strlen(err), k, ", in \"%s\"", s);
	if (k >= 0)
		k = parse_auth_tail(s, f, len, n, &a, err, errlen);
	if (k < 0) {
		http_auth_done(&a);
		return k;
	}
	*ret = a;
	return 0;
}

void http_auth_done(struct http_auth *a)
{
	if (!a)
		return;
	http_rule_done(&a->rule);
	free(a->param);
	free(a->credential);
	*a = (struct http_auth){ 0 };
}

static const char *auth_kind_name(int kind)
{
	for (size_t i = 0; i < ELEMENTSOF(auth_kinds); i++)
		if (auth_kinds[i].kind == kind)
			return auth_kinds[i].name; /* the first: "header", not its alias */
	return NULL;
}

int http_auth_format(const struct http_auth *a, char **ret)
{
	_cleanup_free_ char *rule = NULL;
	struct rules_buf b = { 0 };
	const char *kind = auth_kind_name(a->kind);

	if (!kind || !a->credential || !cred_name_valid(a->credential, strlen(a->credential)) ||
	    (a->kind == HTTP_AUTH_BEARER) != !a->param ||
	    (a->param && (!a->param[0] || strpbrk(a->param, " \t"))))
		return -EINVAL;
	int k = http_rule_format(&a->rule, &rule);
	if (k < 0)
		return k;
	rules_buf_printf(&b, "%s %s%s%s %s%s", rule, kind, a->param ? ":" : "",
			 a->param ? a->param : "", a->credential, a->add_only ? " add-only" : "");
	return rules_buf_finish(&b, ret);
}
