/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-http-path: the request-target helpers of src/http/http-parse.h: the split into scheme,
 * authority, path and query, the authority's host and port, and the path normalisation the ACL
 * matches (the path tricks a client may use to reach a denied path are all here).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "http/http-parse.h"
#include "macro.h"
#include "tap.h"

static char err[256];

static int one_line(const char *s)
{
	if (!s[0])
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s < ' ' || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

static int span_is(const struct http_span *s, const char *want)
{
	if (!want)
		return s->p == NULL && s->n == 0;
	return s->p && s->n == strlen(want) && memcmp(s->p, want, s->n) == 0;
}

static const struct split_ok {
	const char *in, *scheme, *authority, *path, *query;
} split_ok[] = {
	{ "/", NULL, NULL, "/", NULL },
	{ "/a/b?x=1&y", NULL, NULL, "/a/b", "x=1&y" },
	{ "/a?", NULL, NULL, "/a", "" },
	{ "/a?b?c/d", NULL, NULL, "/a", "b?c/d" },
	{ "//a/../b", NULL, NULL, "//a/../b", NULL },
	{ "/a%2Fb;p=1:@!$&'()*+,=-._~", NULL, NULL, "/a%2Fb;p=1:@!$&'()*+,=-._~", NULL },
	{ "http://a.example/x?q", "http", "a.example", "/x", "q" },
	{ "HTTPS://A.example:8443", "HTTPS", "A.example:8443", "/", NULL },
	{ "http://a.example?q=1", "http", "a.example", "/", "q=1" },
	{ "http://[::1]:8080/x", "http", "[::1]:8080", "/x", NULL },
};

static const struct bad {
	const char *in, *why;
} split_bad[] = {
	{ "", "an empty request target" },
	{ "http://user@a.example/x", "userinfo" },
	{ "http://user:pw@a.example/x", "userinfo" },
	{ "ftp://a.example/x", "scheme \"ftp\" is not http or https" },
	{ "http:///x", "an empty authority" },
	{ "http://", "an empty authority" },
	{ "http:/a/x", "neither \"/path\" nor" },
	{ "a.example:443", "neither \"/path\" nor" },
	{ "*", "neither \"/path\" nor" },
	{ "/a#frag", "a fragment" },
	{ "http://a.example#f", "a fragment" },
	{ "/a b", "byte 0x20 is not allowed in a path" },
	{ "/a\"b", "byte 0x22 is not allowed in a path" },
	{ "/a\\b", "byte 0x5c is not allowed in a path" },
	{ "/a{b}", "byte 0x7b is not allowed in a path" },
	{ "/\xc3\xa9", "byte 0xc3 is not allowed in a path" },
	{ "/a?b c", "byte 0x20 is not allowed in a query" },
	{ "/a%zz", "a bad percent escape in the path" },
	{ "/a%4", "a bad percent escape in the path" },
	{ "/a?x=%", "a bad percent escape in the query" },
	{ "http://a<b/", "byte 0x3c is not allowed in an authority" },
};

static void test_split(void)
{
	for (size_t i = 0; i < ELEMENTSOF(split_ok); i++) {
		const struct split_ok *t = &split_ok[i];
		struct http_span in = { t->in, strlen(t->in) };
		struct http_target r;
		if (!ok(http_target_split(&in, &r, err, sizeof(err)) == 0, "split \"%s\"", t->in)) {
			diag("%s", err);
			continue;
		}
		ok(span_is(&r.scheme, t->scheme), "  scheme %s", t->scheme ? t->scheme : "none");
		ok(t->authority ? span_is(&r.authority, t->authority) : r.authority.n == 0,
		   "  authority %s", t->authority ? t->authority : "none");
		ok(span_is(&r.path, t->path), "  path %s", t->path);
		ok(span_is(&r.query, t->query), "  query %s", t->query ? t->query : "none");
	}
	for (size_t i = 0; i < ELEMENTSOF(split_bad); i++) {
		struct http_span in = { split_bad[i].in, strlen(split_bad[i].in) };
		struct http_target r;
		err[0] = '\0';
		is_int(http_target_split(&in, &r, err, sizeof(err)), -EBADMSG, "split refuses %s",
		       split_bad[i].why);
		ok(strstr(err, split_bad[i].why) && one_line(err), "  \"%s\"", err);
	}
}

static const struct auth_ok {
	const char *in, *host;
	uint16_t port;
} auth_ok[] = {
	{ "Example.COM", "example.com", 0 },
	{ "example.com:8080", "example.com", 8080 },
	{ "example.com.", "example.com", 0 },
	{ "example.com.:80", "example.com", 80 },
	{ "x:080", "x", 80 },
	{ "a:65535", "a", 65535 },
	{ "localhost", "localhost", 0 },
	{ "a_b-c.example", "a_b-c.example", 0 },
	{ "10.0.0.1:80", "10.0.0.1", 80 },
	{ "127.0.0.2", "127.0.0.2", 0 },
	{ "1a.2b", "1a.2b", 0 },
	{ "[::1]", "::1", 0 },
	{ "[::1]:443", "::1", 443 },
	{ "[2001:DB8::1]:8443", "2001:db8::1", 8443 },
	{ "[::ffff:10.0.0.1]", "::ffff:10.0.0.1", 0 },
};

static const struct bad auth_bad[] = {
	{ "", "an empty host" },
	{ ":80", "an empty host" },
	{ ".", "an empty host" },
	{ "user@a.example", "userinfo" },
	{ "user:pw@a.example:80", "userinfo" },
	{ "a:", "a bad port" },
	{ "a:123456", "a bad port" },
	{ "a:8x", "a bad port" },
	{ "a:-1", "a bad port" },
	{ "a:0", "port 0 is outside" },
	{ "a:65536", "port 65536 is outside" },
	{ "::1", "needs brackets" },
	{ "a:1:2", "needs brackets" },
	{ "[::1", "an unclosed '['" },
	{ "[::1]x", "bytes after the IPv6" },
	{ "[::1]:", "a bad port" },
	{ "[1.2.3.4]", "brackets hold an IPv6 address" },
	{ "[fe80::1%25eth0]", "brackets hold an IPv6 address" },
	{ "[v1.x]", "brackets hold an IPv6 address" },
	{ "[]", "brackets hold an IPv6 address" },
	{ "[1::2::3]", "brackets hold an IPv6 address" },
	{ "a..b", "an empty label" },
	{ ".a", "an empty label" },
	{ "a.example..", "an empty label" },
	{ "a b", "byte 0x20 is not allowed in a host" },
	{ "a%2eb", "byte 0x25 is not allowed in a host" },
	{ "a\xc3\xa9", "byte 0xc3 is not allowed in a host" },
	{ "127.1", "ends in a number but is not an IPv4" },
	{ "2130706433", "ends in a number but is not an IPv4" },
	{ "0x7f.0.0.1", "ends in a number but is not an IPv4" },
	{ "127.0.0.01", "ends in a number but is not an IPv4" },
	{ "1.2.3.4.5", "ends in a number but is not an IPv4" },
	{ "a.256", "ends in a number but is not an IPv4" },
	{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.b",
	  "a host label longer than 63" },
};

static void test_authority(void)
{
	char host[256];
	uint16_t port;

	for (size_t i = 0; i < ELEMENTSOF(auth_ok); i++) {
		struct http_span in = { auth_ok[i].in, strlen(auth_ok[i].in) };
		port = 7;
		if (!ok(http_authority_parse(&in, host, sizeof(host), &port, err, sizeof(err)) == 0,
			"authority \"%s\"", auth_ok[i].in)) {
			diag("%s", err);
			continue;
		}
		is_str(host, auth_ok[i].host, "  host");
		is_int(port, auth_ok[i].port, "  port %u", auth_ok[i].port);
	}
	for (size_t i = 0; i < ELEMENTSOF(auth_bad); i++) {
		struct http_span in = { auth_bad[i].in, strlen(auth_bad[i].in) };
		err[0] = '\0';
		port = 7;
		strcpy(host, "sentinel");
		is_int(http_authority_parse(&in, host, sizeof(host), &port, err, sizeof(err)),
		       -EBADMSG, "authority refused: %s", auth_bad[i].why);
		ok(strstr(err, auth_bad[i].why) && one_line(err), "  \"%s\"", err);
		ok(port == 7 && strcmp(host, "sentinel") == 0, "  outputs untouched");
	}
	struct http_span in = { "abcdefgh:1", 10 };
	is_int(http_authority_parse(&in, host, 9, &port, err, sizeof(err)), 0,
	       "an 8-byte host fits 9 bytes");
	is_int(http_authority_parse(&in, host, 8, &port, err, sizeof(err)), -EBADMSG,
	       "  but not 8");
	ok(strstr(err, "longer than 7 bytes") != NULL, "  \"%s\"", err);
}

static const struct norm {
	const char *in, *out;
} norms[] = {
	{ "/a/../secret", "/secret" },
	{ "/%2e%2e/secret", "/secret" },
	{ "/%2E%2e/secret", "/secret" },
	{ "/.%2e/secret", "/secret" },
	{ "/%2e/secret", "/secret" },
	{ "//secret", "/secret" },
	{ "///a//b", "/a/b" },
	{ "/a/%2fsecret", "/a/secret" },
	{ "/a%2Fb", "/a/b" },
	{ "/a%5Cb", "/a/b" },
	{ "/a%5c..%5csecret", "/secret" },
	{ "/a/b%2f..%2f..%2fsecret", "/secret" },
	{ "/%7Euser", "/~user" },
	{ "/%7euser", "/~user" },
	{ "/%41%62%2D%5f%2E", "/Ab-_." },
	{ "/a%2Bb", "/a%2Bb" },
	{ "/a%2bb", "/a%2Bb" },
	{ "/a%20b%3f%23", "/a%20b%3F%23" },
	{ "/a%252e%252e/", "/a%252e%252e/" },
	{ "/%25", "/%25" },
	{ "/..", "/" },
	{ "/../..", "/" },
	{ "/../../secret", "/secret" },
	{ "/a/b/..", "/a/" },
	{ "/a/b/../", "/a/" },
	{ "/a/b/../c", "/a/c" },
	{ "/a/./b", "/a/b" },
	{ "/a/.", "/a/" },
	{ "/.", "/" },
	{ "/", "/" },
	{ "/a/", "/a/" },
	{ "/a//", "/a/" },
	{ "/a/b/", "/a/b/" },
	{ "/...", "/..." },
	{ "/.a", "/.a" },
	{ "/a/..b", "/a/..b" },
	{ "/a/%2e%2e%2e", "/a/..." },
	{ "/a;p=1/:@!$&'()*+,=", "/a;p=1/:@!$&'()*+,=" },
	{ "/a/...;x/b", "/a/...;x/b" },
	{ "/a/..%3B/b", "/a/..%3B/b" },
	{ "/a/;/..", "/a/" },
};

static const struct bad norm_bad[] = {
	{ "/a%00b", "a NUL escape (%00)" },	     { "/a%g1", "a bad percent escape" },
	{ "/a%4", "a bad percent escape" },	     { "/a%", "a bad percent escape" },
	{ "a", "does not start with '/'" },	     { "", "does not start with '/'" },
	{ "/a b", "byte 0x20 is not allowed" },	     { "/a?b", "byte 0x3f is not allowed" },
	{ "/a#b", "byte 0x23 is not allowed" },	     { "/a\\b", "byte 0x5c is not allowed" },
	{ "/\xc3\xa9", "byte 0xc3 is not allowed" },
	{ "/allowed/..;/admin", "a dot segment with parameters" },
	{ "/a/.;x/b", "a dot segment with parameters" },
	{ "/a/%2e%2e;/b", "a dot segment with parameters" },
	{ "/a/..;", "a dot segment with parameters" },
};

static void test_normalize(void)
{
	char out[256];

	for (size_t i = 0; i < ELEMENTSOF(norms); i++) {
		struct http_span in = { norms[i].in, strlen(norms[i].in) };
		memset(out, 'x', sizeof(out));
		long k = http_path_normalize(&in, out, strlen(norms[i].in) + 1, err, sizeof(err));
		is_int(k, (long)strlen(norms[i].out), "normalise \"%s\"", norms[i].in);
		is_str(k >= 0 ? out : err, norms[i].out, "  to \"%s\"", norms[i].out);
	}
	for (size_t i = 0; i < ELEMENTSOF(norm_bad); i++) {
		struct http_span in = { norm_bad[i].in, strlen(norm_bad[i].in) };
		err[0] = '\0';
		is_int(http_path_normalize(&in, out, sizeof(out), err, sizeof(err)), -EBADMSG,
		       "normalise refuses %s", norm_bad[i].why);
		ok(strstr(err, norm_bad[i].why) && one_line(err), "  \"%s\"", err);
	}
	struct http_span in = { "/abc/def", 8 };
	is_int(http_path_normalize(&in, out, 9, err, sizeof(err)), 8, "8 bytes fit 9");
	is_int(http_path_normalize(&in, out, 8, err, sizeof(err)), -EBADMSG, "  but not 8");
	ok(strstr(err, "longer than 7 bytes") != NULL, "  \"%s\"", err);
	in = (struct http_span){ "/a%41", 5 };
	is_int(http_path_normalize(&in, out, 4, err, sizeof(err)), 3,
	       "a decoded path needs room for its result only");
	is_int(http_path_normalize(&in, out, 0, NULL, 0), -EBADMSG, "no room at all; err NULL");
}

int main(void)
{
	test_split();
	test_authority();
	test_normalize();
	return done_testing();
}
