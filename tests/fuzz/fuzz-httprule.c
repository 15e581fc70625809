/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-httprule: http_rule_parse() and http_glob_match() over arbitrary bytes. The input is
 * "RULE\nPATH" (PATH optional). Invariants: the errno is a documented one and the message one
 * printable line; an accepted rule formats, reparses equal, and its canonical text is a fixed
 * point; the rule and its reparse match the same fixed requests and the fuzzed path; and the
 * iterative glob agrees with a dynamic-programming reference on (RULE, PATH) and (rule path,
 * PATH). libFuzzer's timeout catches a glob that backtracks exponentially.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The reference: row-by-row DP over pattern x string, O(n*m) time, O(m) space. */
static int glob_reference(const char *p, const char *s)
{
	size_t m = strlen(s);
	unsigned char *row = calloc(m + 1, 1), *next = calloc(m + 1, 1);

	if (!row || !next)
		abort();
	row[0] = 1;
	for (; *p; p++) {
		memset(next, 0, m + 1);
		if (*p == '*') {
			next[0] = row[0];
			for (size_t j = 1; j <= m; j++)
				next[j] = row[j] || next[j - 1];
		} else {
			for (size_t j = 1; j <= m; j++)
				next[j] = row[j - 1] && s[j - 1] == *p;
		}
		memcpy(row, next, m + 1);
	}
	int r = row[m];
	free(row);
	free(next);
	return r;
}

static void check_glob(const char *pattern, const char *str)
{
	int got = http_glob_match(pattern, str);
	if (got != 0 && got != 1)
		abort();
	/* Keep the quadratic reference cheap enough for the fuzzer's throughput. */
	if ((strlen(pattern) + 1) * (strlen(str) + 1) <= 1u << 20 &&
	    got != glob_reference(pattern, str))
		abort();
}

static void check_fields(const struct http_rule *r)
{
	if (!r->path || r->path[0] != '/' || !r->method[0])
		abort();
	for (const char *p = r->path; *p; p++)
		if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f)
			abort();
	for (const char *p = r->method; *p; p++)
		if (!(*p >= 'A' && *p <= 'Z') && strcmp(r->method, "*") != 0)
			abort();
	if (r->host_kind != HTTP_HOST_ANY && r->host_kind != HTTP_HOST_NAME &&
	    r->host_kind != HTTP_HOST_IP && r->host_kind != HTTP_HOST_SUFFIX)
		abort();
	if ((r->host_kind == HTTP_HOST_NAME || r->host_kind == HTTP_HOST_SUFFIX) && !r->host[0])
		abort();
}

static const struct {
	const char *method, *host;
	uint16_t port;
	const char *path;
} requests[] = {
	{ "GET", "example.com", 80, "/" },
	{ "get", "EXAMPLE.COM.", 443, "/v1/chat" },
	{ "POST", "api.openai.com", 443, "/v1/chat/completions" },
	{ "DELETE", "10.0.0.1", 8080, "/admin/users" },
	{ "PUT", "[::1]", 8443, "/a/b/c" },
	{ "PATCH", "::ffff:10.0.0.1", 80, "/x?y=z" },
	{ "OPTIONS", "", 0, "" },
	{ "GET", "a.example.com", 80, "/" },
	{ "GET", "A.B.Example.Com.", 8080, "/v1/x" },
	{ "GET", ".example.com", 80, "/" },
};

static void check_match(const struct http_rule *r, const struct http_rule *again, const char *path)
{
	for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++) {
		int m = http_rule_match(r, requests[i].method, requests[i].host, requests[i].port,
					requests[i].path);
		if (m != http_rule_match(again, requests[i].method, requests[i].host,
					 requests[i].port, requests[i].path))
			abort();
	}
	if (path && http_rule_match(r, "GET", "example.com", 80, path) !=
			    http_rule_match(again, "GET", "example.com", 80, path))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), *path, *text = NULL, *text2 = NULL, err[256] = "";
	struct http_rule r, again;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	path = strchr(s, '\n');
	if (path)
		*path++ = '\0';
	check_glob(s, path ? path : s);

	int k = http_rule_parse(s, &r, err, sizeof(err));
	if (k < 0) {
		if ((k != -EINVAL && k != -ERANGE && k != -ENOMEM) || !err[0] || strchr(err, '\n'))
			abort();
		free(s);
		return 0;
	}
	check_fields(&r);
	if (http_rule_format(&r, &text) < 0 || http_rule_parse(text, &again, err, sizeof(err)) < 0)
		abort();
	if (!http_rule_equal(&r, &again))
		abort();
	if (http_rule_format(&again, &text2) < 0 || strcmp(text, text2) != 0)
		abort();
	check_match(&r, &again, path);
	if (path)
		check_glob(r.path, path);
	free(text);
	free(text2);
	http_rule_done(&r);
	http_rule_done(&again);
	free(s);
	return 0;
}
