/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-http-parse: the HTTP/1.1 head parser and the chunked scanner of src/http/http-parse.h.
 * Every input is placed against a guard page (a read past its end faults), fed whole and then
 * prefix by prefix (a prefix of a good head is "need more", a prefix of a bad one "need more"
 * or the same refusal), and every refusal is checked for -EBADMSG and a one-line reason.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "http/http-parse.h"
#include "macro.h"
#include "tap.h"

static char err[256];
static char *arena;
static size_t arena_len;

/* A copy of @s[0..@n) that ends where an unreadable page starts. */
static const char *guarded(const char *s, size_t n)
{
	if (!arena) {
		size_t page = (size_t)sysconf(_SC_PAGESIZE);
		arena_len = (HTTP_HEAD_MAX * 2 + page - 1) / page * page;
		arena = mmap(NULL, arena_len + page, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (arena == MAP_FAILED || mprotect(arena + arena_len, page, PROT_NONE) < 0)
			abort();
	}
	if (n > arena_len)
		abort();
	memcpy(arena + arena_len - n, s, n);
	return arena + arena_len - n;
}

static int one_line(const char *s)
{
	if (!s[0])
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s < ' ' || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

static int parse(int response, const char *s, size_t n, const char *method, struct http_head *h)
{
	struct http_span m = { method, method ? strlen(method) : 0 };
	const char *g = guarded(s, n);

	err[0] = '\0';
	if (response)
		return http_response_parse(g, n, method ? &m : NULL, h, err, sizeof(err));
	return http_request_parse(g, n, h, err, sizeof(err));
}

/* Every strict prefix of @s: 0, or (@bad) -EBADMSG from some prefix on. */
static void check_prefixes(int response, const char *s, size_t n, const char *method, int bad)
{
	static struct http_head h;
	int failed = 0, wrong = 0;

	for (size_t i = 0; i < n; i++) {
		int k = parse(response, s, i, method, &h);
		if (k == -EBADMSG && bad && one_line(err))
			failed = 1;
		else if (k != 0 || failed)
			wrong++;
	}
	is_int(wrong, 0, "  every prefix is \"need more\"%s", bad ? " until it is refused" : "");
}

static const struct req_ok {
	const char *in;
	const char *method, *target;
	int minor;
	size_t n_fields;
	enum http_body body;
	uint64_t length;
	int keep_alive, websocket, expect;
} req_ok[] = {
	{ "GET / HTTP/1.1\r\nHost: a\r\n\r\n", "GET", "/", 1, 1, HTTP_BODY_NONE, 0, 1, 0, 0 },
	{ "GET /x?y HTTP/1.0\r\n\r\n", "GET", "/x?y", 0, 0, HTTP_BODY_NONE, 0, 0, 0, 0 },
	{ "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", "GET", "/", 0, 1, HTTP_BODY_NONE, 0,
	  1, 0, 0 },
	{ "GET / HTTP/1.0\r\nConnection: Keep-Alive, close\r\n\r\n", "GET", "/", 0, 1,
	  HTTP_BODY_NONE, 0, 0, 0, 0 },
	{ "GET / HTTP/1.1\r\nHost: a\r\nConnection: foo, CLOSE\r\n\r\n", "GET", "/", 1, 2,
	  HTTP_BODY_NONE, 0, 0, 0, 0 },
	{ "GET / HTTP/1.1\r\nHost: a\r\nConnection: closed\r\n\r\n", "GET", "/", 1, 2,
	  HTTP_BODY_NONE, 0, 1, 0, 0 },
	{ "POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello", "POST", "/p", 1, 2,
	  HTTP_BODY_LENGTH, 5, 1, 0, 0 },
	{ "POST /p HTTP/1.1\r\nHost: a\r\ncontent-length:0\r\n\r\n", "POST", "/p", 1, 2,
	  HTTP_BODY_LENGTH, 0, 1, 0, 0 },
	{ "POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 007\r\n\r\n", "POST", "/p", 1, 2,
	  HTTP_BODY_LENGTH, 7, 1, 0, 0 },
	{ "POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 4611686018427387904\r\n\r\n", "POST",
	  "/p", 1, 2, HTTP_BODY_LENGTH, UINT64_C(1) << 62, 1, 0, 0 },
	{ "POST /p HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "POST",
	  "/p", 1, 2, HTTP_BODY_CHUNKED, 0, 1, 0, 0 },
	{ "PUT /p HTTP/1.1\r\nHost: a\r\nTRANSFER-ENCODING:\tChunked \r\n\r\n", "PUT", "/p", 1, 2,
	  HTTP_BODY_CHUNKED, 0, 1, 0, 0 },
	{ "GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: WebSocket\r\nConnection: keep-alive, Upgrade"
	  "\r\n\r\n",
	  "GET", "/ws", 1, 3, HTTP_BODY_NONE, 0, 1, 1, 0 },
	{ "GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: h2c, websocket\r\nConnection: upgrade\r\n\r\n",
	  "GET", "/ws", 1, 3, HTTP_BODY_NONE, 0, 1, 1, 0 },
	{ "GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\n\r\n", "GET", "/ws", 1, 2,
	  HTTP_BODY_NONE, 0, 1, 0, 0 },
	{ "GET /ws HTTP/1.0\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n", "GET", "/ws", 0,
	  2, HTTP_BODY_NONE, 0, 0, 0, 0 },
	{ "PUT /u HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\n", "PUT",
	  "/u", 1, 3, HTTP_BODY_LENGTH, 1, 1, 0, 1 },
	{ "PUT /u HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n", "PUT", "/u", 0, 2,
	  HTTP_BODY_LENGTH, 1, 0, 0, 0 },
	{ "GET http://a.example/x HTTP/1.1\r\nHost: a.example\r\n\r\n", "GET", "http://a.example/x",
	  1, 1, HTTP_BODY_NONE, 0, 1, 0, 0 },
	{ "CONNECT a.example:443 HTTP/1.1\r\nHost: a.example:443\r\n\r\n", "CONNECT",
	  "a.example:443", 1, 1, HTTP_BODY_NONE, 0, 1, 0, 0 },
	{ "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", "OPTIONS", "*", 1, 1, HTTP_BODY_NONE, 0, 1, 0,
	  0 },
	{ "M-SEARCH~! /%7e HTTP/1.1\r\nHost: a\r\nX-Empty:\r\nX-Obs: caf\xc3\xa9\r\n\r\n",
	  "M-SEARCH~!", "/%7e", 1, 3, HTTP_BODY_NONE, 0, 1, 0, 0 },
};

static void test_requests(void)
{
	static struct http_head h;

	for (size_t i = 0; i < ELEMENTSOF(req_ok); i++) {
		const struct req_ok *t = &req_ok[i];
		size_t n = strlen(t->in);
		const char *end = strstr(t->in, "\r\n\r\n");
		int want = (int)(end - t->in + 4);
		int k = parse(0, t->in, n, NULL, &h);
		if (!ok(k == want, "request %zu parses to %d bytes", i, want)) {
			diag("got %d: %s", k, err);
			continue;
		}
		is_int(h.head_len, want, "  head_len");
		ok(h.method.n == strlen(t->method) && !memcmp(h.method.p, t->method, h.method.n),
		   "  method %s", t->method);
		ok(h.target.n == strlen(t->target) && !memcmp(h.target.p, t->target, h.target.n),
		   "  target %s", t->target);
		is_int(h.minor, t->minor, "  HTTP/1.%d", t->minor);
		is_int(h.n_fields, t->n_fields, "  %zu fields", t->n_fields);
		is_int(h.body, t->body, "  body kind %d", t->body);
		is_int(h.content_length, t->length, "  content length %llu",
		       (unsigned long long)t->length);
		is_int(h.keep_alive, t->keep_alive, "  keep-alive %d", t->keep_alive);
		is_int(h.upgrade_websocket, t->websocket, "  websocket %d", t->websocket);
		is_int(h.expect_continue, t->expect, "  expect 100-continue %d", t->expect);
		check_prefixes(0, t->in, (size_t)want, NULL, 0);
	}
}

static void test_fields(void)
{
	static struct http_head h;
	const char *s = "GET / HTTP/1.1\r\nHost:  a.example \t\r\nX-A: one two\r\nx-a:2\r\n"
			"Empty: \t \r\n\r\n";
	const struct http_field *f;

	is_int(parse(0, s, strlen(s), NULL, &h), (int)strlen(s), "a head with four fields");
	is_int(h.n_fields, 4, "  four fields");
	f = http_head_field(&h, "HOST");
	ok(f && f->value.n == 9 && !memcmp(f->value.p, "a.example", 9),
	   "  Host's value is trimmed of spaces and tabs");
	f = http_head_field(&h, "x-a");
	ok(f && f == &h.fields[1] && f->value.n == 7 && !memcmp(f->value.p, "one two", 7),
	   "  the first X-A, inner space kept");
	ok(h.fields[2].name.n == 3 && !memcmp(h.fields[2].name.p, "x-a", 3), "  names as sent");
	f = http_head_field(&h, "Empty");
	ok(f && f->value.n == 0, "  an all-blank value is empty");
	ok(http_head_field(&h, "Missing") == NULL, "  a missing field is NULL");
	ok(http_head_field(&h, "Hos") == NULL, "  a prefix of a name is not the name");
}

static const struct bad {
	const char *in, *why;
} req_bad[] = {
	{ "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
	  "more than one Content-Length" },
	{ "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
	  "more than one Content-Length" },
	{ "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\n", "is not a number" },
	{ "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\n", "is not a number" },
	{ "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x5\r\n\r\n", "is not a number" },
	{ "GET / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n", "empty Content-Length" },
	{ "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 4611686018427387905\r\n\r\n", "over 2^62" },
	{ "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n",
	  "over 2^62" },
	{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
	  "Content-Length beside Transfer-Encoding" },
	{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
	  "Content-Length beside Transfer-Encoding" },
	{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
	  "\"chunked\" alone" },
	{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
	  "\"chunked\" alone" },
	{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: "
	  "chunked\r\n\r\n",
	  "\"chunked\" alone" },
	{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity\r\n\r\n",
	  "\"chunked\" alone" },
	{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n\r\n",
	  "\"chunked\" alone" },
	{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked;q=1\r\n\r\n", "not a token" },
	{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \"chunked\"\r\n\r\n", "not a token" },
	{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked,\r\n\r\n", "empty" },
	{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\r\n\r\n", "empty" },
	{ "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", "in an HTTP/1.0 message" },
	{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\n\r\n",
	  "whitespace before a header's colon" },
	{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding\t: chunked\r\n\r\n",
	  "whitespace before a header's colon" },
	{ "POST / HTTP/1.1\r\nHost: a\r\nX: 1\r\n chunked\r\n\r\n", "obsolete line folding" },
	{ "POST / HTTP/1.1\r\nHost: a\r\nX: 1\r\n\tchunked\r\n\r\n", "obsolete line folding" },
	{ "GET / HTTP/1.1\r\n Host: a\r\n\r\n", "obsolete line folding" },
	{ "GET / HTTP/1.1\nHost: a\r\n\r\n", "bare LF" },
	{ "GET / HTTP/1.1\r\nHost: a\n\r\n", "bare LF" },
	{ "GET / HTTP/1.1\r\nHost: a\r\n\n", "bare LF" },
	{ "GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n", "bare CR" },
	{ "GET / HTTP/1.1\r\nHost: a\r\n\r\r\n", "bare CR" },
	{ "GET / HTTP/1.1\r\nHost: a\r\nX: a\x01z\r\n\r\n", "control byte" },
	{ "GET / HTTP/1.1\r\nHost: a\r\nX: a\x7fz\r\n\r\n", "control byte" },
	{ "GET / HTTP/1.1\r\nHost: a\r\nX: a\0z\r\n\r\n", "control byte" },
	{ "GET / HTTP/1.1\r\nHost: a\r\nX(y): 1\r\n\r\n", "not a token" },
	{ "GET / HTTP/1.1\r\nHost: a\r\n: 1\r\n\r\n", "not a token" },
	{ "GET / HTTP/1.1\r\nHost: a\r\nX-No-Colon\r\n\r\n", "not a token" },
	{ "G(T / HTTP/1.1\r\nHost: a\r\n\r\n", "the method is not a token" },
	{ " GET / HTTP/1.1\r\nHost: a\r\n\r\n", "the method is not a token" },
	{ "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", "empty request target" },
	{ "GET /\x01 HTTP/1.1\r\nHost: a\r\n\r\n", "not followed by one space" },
	{ "GET /\xc3\xa9 HTTP/1.1\r\nHost: a\r\n\r\n", "not followed by one space" },
	{ "GET / HTTP/1.1 \r\nHost: a\r\n\r\n", "unsupported HTTP version" },
	{ "GET /  HTTP/1.1\r\nHost: a\r\n\r\n", "unsupported HTTP version" },
	{ "GET / HTTP/1.2\r\nHost: a\r\n\r\n", "unsupported HTTP version" },
	{ "GET / HTTP/2.0\r\nHost: a\r\n\r\n", "unsupported HTTP version" },
	{ "GET / http/1.1\r\nHost: a\r\n\r\n", "unsupported HTTP version" },
	{ "GET /\r\n\r\n", "not followed by one space" },
	{ "\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", "an empty line before the start line" },
	{ "GET / HTTP/1.1\r\n\r\n", "without a Host header" },
	{ "GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", "more than one Host" },
	{ "GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n", "more than one Host" },
};

static void check_bad(int response, const struct bad *t, size_t n, const char *method)
{
	static struct http_head h;
	int k = parse(response, t->in, n, method, &h);

	is_int(k, -EBADMSG, "refused: %s", t->why);
	ok(strstr(err, t->why) && one_line(err), "  reason \"%s\" (got \"%s\")", t->why, err);
	check_prefixes(response, t->in, n, method, 1);
}

static void test_bad_requests(void)
{
	for (size_t i = 0; i < ELEMENTSOF(req_bad); i++) {
		const struct bad *t = &req_bad[i];
		/* The NUL case has a NUL inside: its length is up to the last CRLFCRLF. */
		size_t n = strlen(t->in);
		if (strstr(t->why, "control") && !strchr(t->in, 0x01) && !strchr(t->in, 0x7f))
			n = sizeof("GET / HTTP/1.1\r\nHost: a\r\nX: a\0z\r\n\r\n") - 1;
		check_bad(0, t, n, NULL);
	}
}

/* "GET /aaa... HTTP/1.1\r\n" of exactly @len bytes, CRLF included, into @buf. */
static size_t long_request_line(char *buf, size_t len)
{
	size_t fixed = strlen("GET / HTTP/1.1\r\n");
	memcpy(buf, "GET /", 5);
	memset(buf + 5, 'a', len - fixed);
	memcpy(buf + 5 + len - fixed, " HTTP/1.1\r\n", 11);
	return len;
}

static void test_line_limits(void)
{
	static char buf[HTTP_HEAD_MAX * 2];
	static struct http_head h;
	size_t n;

	n = long_request_line(buf, HTTP_LINE_MAX);
	memcpy(buf + n, "Host: a\r\n\r\n", 11);
	is_int(parse(0, buf, n + 11, NULL, &h), (int)(n + 11), "a request line of %d bytes",
	       HTTP_LINE_MAX);
	n = long_request_line(buf, HTTP_LINE_MAX + 1);
	memcpy(buf + n, "Host: a\r\n\r\n", 11);
	is_int(parse(0, buf, n + 11, NULL, &h), -EBADMSG, "a request line of %d bytes",
	       HTTP_LINE_MAX + 1);
	ok(strstr(err, "longer than 8192") != NULL, "  \"%s\"", err);
	/* Without its CRLF yet: refused as soon as the CRLF could no longer fit. */
	is_int(parse(0, buf, HTTP_LINE_MAX - 2, NULL, &h), 0, "%d bytes of a line: need more",
	       HTTP_LINE_MAX - 2);
	is_int(parse(0, buf, HTTP_LINE_MAX - 1, NULL, &h), -EBADMSG,
	       "%d bytes of a line without CR: refused", HTTP_LINE_MAX - 1);
	buf[HTTP_LINE_MAX - 2] = '\r';
	is_int(parse(0, buf, HTTP_LINE_MAX - 1, NULL, &h), 0, "%d bytes ending in CR: need more",
	       HTTP_LINE_MAX - 1);
	buf[HTTP_LINE_MAX - 1] = '\r';
	is_int(parse(0, buf, HTTP_LINE_MAX, NULL, &h), -EBADMSG, "%d bytes ending in CR: refused",
	       HTTP_LINE_MAX);
}

static void test_head_limits(void)
{
	static char buf[HTTP_HEAD_MAX * 2];
	static struct http_head h;
	size_t n;

	/* A head of exactly HTTP_HEAD_MAX: fields of 8000 bytes, then one to fill it up. */
	n = (size_t)sprintf(buf, "GET / HTTP/1.1\r\nHost: a\r\n");
	while (n + 8000 + 2 <= HTTP_HEAD_MAX - 64) {
		n += (size_t)sprintf(buf + n, "X: ");
		memset(buf + n, 'v', 8000 - 5);
		n += 8000 - 5;
		n += (size_t)sprintf(buf + n, "\r\n");
	}
	size_t fill = HTTP_HEAD_MAX - n - 2;
	n += (size_t)sprintf(buf + n, "Y: ");
	memset(buf + n, 'w', fill - 5);
	n += fill - 5;
	memcpy(buf + n, "\r\n\r\n", 4);
	n += 4;
	is_int(n, HTTP_HEAD_MAX, "  (the head is %d bytes)", HTTP_HEAD_MAX);
	is_int(parse(0, buf, n, NULL, &h), HTTP_HEAD_MAX, "a head of %d bytes", HTTP_HEAD_MAX);
	is_int(parse(0, buf, n - 2, NULL, &h), 0, "  without its blank line: need more");
	memmove(buf + n - 4 + 1, buf + n - 4, 4);
	buf[n - 4] = 'w';
	is_int(parse(0, buf, n + 1, NULL, &h), -EBADMSG, "a head of %d bytes", HTTP_HEAD_MAX + 1);
	ok(strstr(err, "head is longer than 65536") != NULL, "  \"%s\"", err);
	is_int(parse(0, buf, n - 1, NULL, &h), -EBADMSG,
	       "  refused once the blank line cannot fit any more");

	n = (size_t)sprintf(buf, "GET / HTTP/1.1\r\nHost: a\r\n");
	for (int i = 1; i < HTTP_HEADERS_MAX; i++)
		n += (size_t)sprintf(buf + n, "X-%d: %d\r\n", i, i);
	memcpy(buf + n, "\r\n", 2);
	is_int(parse(0, buf, n + 2, NULL, &h), (int)n + 2, "%d fields", HTTP_HEADERS_MAX);
	is_int(h.n_fields, HTTP_HEADERS_MAX, "  all of them");
	n += (size_t)sprintf(buf + n, "X-last: 1\r\n\r\n");
	is_int(parse(0, buf, n, NULL, &h), -EBADMSG, "%d fields", HTTP_HEADERS_MAX + 1);
	ok(strstr(err, "more than 128 header fields") != NULL, "  \"%s\"", err);
	is_int(http_request_parse("GET", 3, &h, NULL, 0), 0, "err may be NULL (need more)");
	is_int(http_request_parse("GET\n", 4, &h, NULL, 0), -EBADMSG, "err may be NULL (refused)");
}

static const struct resp_ok {
	const char *in, *method;
	int status;
	const char *reason;
	int minor;
	enum http_body body;
	uint64_t length;
	int keep_alive, websocket;
} resp_ok[] = {
	{ "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc", "GET", 200, "OK", 1, HTTP_BODY_LENGTH,
	  3, 1, 0 },
	{ "HTTP/1.1 200 OK\r\n\r\n", "GET", 200, "OK", 1, HTTP_BODY_UNTIL_CLOSE, 0, 0, 0 },
	{ "HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\n", "GET", 200, "OK", 0, HTTP_BODY_LENGTH, 3,
	  0, 0 },
	{ "HTTP/1.0 200 OK\r\nContent-Length: 3\r\nConnection: keep-alive\r\n\r\n", "GET", 200,
	  "OK", 0, HTTP_BODY_LENGTH, 3, 1, 0 },
	{ "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\n", "GET", 200, "OK", 1,
	  HTTP_BODY_LENGTH, 3, 0, 0 },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "POST", 200, "OK", 1,
	  HTTP_BODY_CHUNKED, 0, 1, 0 },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: Chunked\r\n\r\n", "GET",
	  200, "OK", 1, HTTP_BODY_CHUNKED, 0, 1, 0 },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", NULL, 200, "OK", 1,
	  HTTP_BODY_CHUNKED, 0, 1, 0 },
	{ "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", "HEAD", 200, "OK", 1, HTTP_BODY_NONE, 10,
	  1, 0 },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "HEAD", 200, "OK", 1,
	  HTTP_BODY_NONE, 0, 1, 0 },
	{ "HTTP/1.1 200 OK\r\n\r\n", "HEAD", 200, "OK", 1, HTTP_BODY_NONE, 0, 1, 0 },
	{ "HTTP/1.1 204 No Content\r\n\r\n", "DELETE", 204, "No Content", 1, HTTP_BODY_NONE, 0, 1,
	  0 },
	{ "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n", "GET", 204, "No Content", 1,
	  HTTP_BODY_NONE, 0, 1, 0 },
	{ "HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n", "GET", 304, "Not Modified", 1,
	  HTTP_BODY_NONE, 99, 1, 0 },
	{ "HTTP/1.1 100 Continue\r\n\r\n", "PUT", 100, "Continue", 1, HTTP_BODY_NONE, 0, 1, 0 },
	{ "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
	  "GET", 101, "Switching Protocols", 1, HTTP_BODY_NONE, 0, 0, 1 },
	{ "HTTP/1.1 200 Connection established\r\n\r\n", "CONNECT", 200, "Connection established",
	  1, HTTP_BODY_NONE, 0, 0, 0 },
	{ "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", "CONNECT", 200, "OK", 1, HTTP_BODY_NONE,
	  5, 0, 0 },
	{ "HTTP/1.1 407 Auth\r\nContent-Length: 2\r\n\r\n", "CONNECT", 407, "Auth", 1,
	  HTTP_BODY_LENGTH, 2, 1, 0 },
	{ "HTTP/1.1 404 \r\nContent-Length: 0\r\n\r\n", "GET", 404, "", 1, HTTP_BODY_LENGTH, 0, 1,
	  0 },
	{ "HTTP/1.1 599 caf\xc3\xa9\t!\r\nContent-Length: 0\r\n\r\n", "get", 599, "caf\xc3\xa9\t!",
	  1, HTTP_BODY_LENGTH, 0, 1, 0 },
};

static void test_responses(void)
{
	static struct http_head h;

	for (size_t i = 0; i < ELEMENTSOF(resp_ok); i++) {
		const struct resp_ok *t = &resp_ok[i];
		int want = (int)(strstr(t->in, "\r\n\r\n") - t->in + 4);
		int k = parse(1, t->in, strlen(t->in), t->method, &h);
		if (!ok(k == want, "response %zu to %s parses to %d bytes", i,
			t->method ? t->method : "(none)", want)) {
			diag("got %d: %s", k, err);
			continue;
		}
		is_int(h.status, t->status, "  status %d", t->status);
		ok(h.target.n == strlen(t->reason) && !memcmp(h.target.p, t->reason, h.target.n),
		   "  reason \"%s\"", t->reason);
		is_int(h.method.n, 0, "  no method");
		is_int(h.minor, t->minor, "  HTTP/1.%d", t->minor);
		is_int(h.body, t->body, "  body kind %d", t->body);
		is_int(h.content_length, t->length, "  content length %llu",
		       (unsigned long long)t->length);
		is_int(h.keep_alive, t->keep_alive, "  keep-alive %d", t->keep_alive);
		is_int(h.upgrade_websocket, t->websocket, "  websocket %d", t->websocket);
		check_prefixes(1, t->in, (size_t)want, t->method, 0);
	}
}

static const struct bad resp_bad[] = {
	{ "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n",
	  "more than one Content-Length" },
	{ "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
	  "Content-Length beside Transfer-Encoding" },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
	  "does not end with one \"chunked\"" },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
	  "does not end with one \"chunked\"" },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
	  "does not end with one \"chunked\"" },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip;level=1, chunked\r\n\r\n", "not a token" },
	{ "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "in an HTTP/1.0 message" },
	{ "HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n",
	  "Transfer-Encoding in a 204 response" },
	{ "HTTP/1.1 100 Continue\r\nTransfer-Encoding: chunked\r\n\r\n",
	  "Transfer-Encoding in a 100 response" },
	{ "HTTP/1.1 204 No Content\r\nContent-Length: 1\r\n\r\n", "other than 0 in a 204" },
	{ "HTTP/1.1 200 OK\r\nX : 1\r\n\r\n", "whitespace before a header's colon" },
	{ "HTTP/1.1 200 OK\r\nX: 1\r\n 2\r\n\r\n", "obsolete line folding" },
	{ "HTTP/1.1 200 OK\nX: 1\r\n\r\n", "bare LF" },
	{ "HTTP/1.1 200 OK\r\nX: 1\r\r\n\r\n", "bare CR" },
	{ "HTTP/1.1 200 O\x01K\r\n\r\n", "control byte in the reason" },
	{ "HTTP/1.1 200\r\n\r\n", "does not start with HTTP/1.0" },
	{ "HTTP/1.1 20 OK\r\n\r\n", "three digits and a space" },
	{ "HTTP/1.1 2000 OK\r\n\r\n", "three digits and a space" },
	{ "HTTP/1.1 099 Low\r\n\r\n", "outside 100..599" },
	{ "HTTP/1.1 600 High\r\n\r\n", "outside 100..599" },
	{ "HTTP/2 200 OK\r\n\r\n", "does not start with HTTP/1.0" },
	{ "HTTP/1.1  200 OK\r\n\r\n", "three digits and a space" },
	{ "ICY 200 OK\r\n\r\n", "does not start with HTTP/1.0" },
};

static void test_bad_responses(void)
{
	for (size_t i = 0; i < ELEMENTSOF(resp_bad); i++)
		check_bad(1, &resp_bad[i], strlen(resp_bad[i].in), "GET");
}

/* --- chunked bodies --------------------------------------------------------------------- */

static const struct chunk_case {
	const char *in;
	long body; /* bytes of @in that are the body, or -EBADMSG */
	const char *why;
} chunks[] = {
	{ "0\r\n\r\n", 5, NULL },
	{ "0\r\n\r\nGET / HTTP/1.1\r\n", 5, NULL },
	{ "5\r\nhello\r\n0\r\n\r\n", 15, NULL },
	{ "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\nnext", 26, NULL },
	{ "A\r\n0123456789\r\n0\r\n\r\n", 20, NULL },
	{ "a\r\n0123456789\r\n000\r\n\r\n", 22, NULL },
	{ "1;ext\r\nx\r\n0\r\n\r\n", 15, NULL },
	{ "1;a=b;c=\"q \\\" ;\"\r\nx\r\n0;last\r\n\r\n", 31, NULL },
	{ "1 ; a = b\t;c\r\nx\r\n0\r\n\r\n", 22, NULL },
	{ "1\r\nx\r\n0\r\nTrailer: v\r\nX-T:\r\n\r\n", 29, NULL },
	{ "3\r\n\r\n\r\r\n0\r\n\r\n", 13, NULL },
	{ "", 0, NULL },
	{ "5\r\nhel", 6, NULL },
	{ "\r\n", -EBADMSG, "without a hex size" },
	{ "x\r\n", -EBADMSG, "without a hex size" },
	{ "-1\r\n", -EBADMSG, "without a hex size" },
	{ " 5\r\nhello\r\n0\r\n\r\n", -EBADMSG, "without a hex size" },
	{ "5 \r\nhello\r\n0\r\n\r\n", -EBADMSG, "malformed chunk extension" },
	{ "5;\r\nhello\r\n0\r\n\r\n", -EBADMSG, "malformed chunk extension" },
	{ "5;a=\r\nhello\r\n0\r\n\r\n", -EBADMSG, "malformed chunk extension" },
	{ "5;a b\r\nhello\r\n0\r\n\r\n", -EBADMSG, "malformed chunk extension" },
	{ "5;a=\"x\r\n", -EBADMSG, "malformed chunk extension" },
	{ "5;a=\"x\"y\r\n", -EBADMSG, "malformed chunk extension" },
	{ "5;a=b \r\n", -EBADMSG, "malformed chunk extension" },
	{ "5x\r\nhello\r\n0\r\n\r\n", -EBADMSG, "not ';' or CR" },
	{ "0x5\r\nhello\r\n0\r\n\r\n", -EBADMSG, "not ';' or CR" },
	{ "5\nhello\r\n0\r\n\r\n", -EBADMSG, "bare LF" },
	{ "5\rhello\r\n0\r\n\r\n", -EBADMSG, "bare CR" },
	{ "5\r\nhelloX\r\n0\r\n\r\n", -EBADMSG, "not followed by CRLF" },
	{ "5\r\nhello\n0\r\n\r\n", -EBADMSG, "bare LF" },
	{ "5\r\nhello\r0\r\n\r\n", -EBADMSG, "bare CR" },
	{ "0\r\n\n", -EBADMSG, "bare LF" },
	{ "0\r\n\r0", -EBADMSG, "bare CR" },
	{ "0\r\n X: 1\r\n\r\n", -EBADMSG, "obsolete line folding" },
	{ "0\r\nX : 1\r\n\r\n", -EBADMSG, "whitespace before a trailer's colon" },
	{ "0\r\nX\r\n\r\n", -EBADMSG, "not a token followed by ':'" },
	{ "0\r\n(X): 1\r\n\r\n", -EBADMSG, "not a token" },
	{ "0\r\nX: a\x01\r\n\r\n", -EBADMSG, "control byte in a trailer" },
	{ "0\r\nX: a\nY: b\r\n\r\n", -EBADMSG, "bare LF" },
	{ "4000000000000001\r\n", -EBADMSG, "over 2^62" },
	{ "10000000000000000\r\n", -EBADMSG, "over 2^62" },
};

/* Scan @in whole (@split 0) or in two calls split at @split, or a byte at a time (@split -1).
 * Returns the body length or the error. */
static long scan(const char *in, size_t n, long split, int *done)
{
	struct http_chunked st = { 0 };
	const char *g = guarded(in, n);
	size_t off = 0;

	err[0] = '\0';
	while (off < n || off == 0) {
		size_t step = split < 0 ? 1 : split > 0 && off == 0 ? (size_t)split : n - off;
		step = MIN(step, n - off);
		long k = http_chunked_scan(&st, g + off, step, err, sizeof(err));
		if (k < 0)
			return k;
		off += (size_t)k;
		if (st.done || (size_t)k < step || n == 0)
			break;
	}
	*done = st.done;
	return (long)off;
}

static void test_chunked(void)
{
	for (size_t i = 0; i < ELEMENTSOF(chunks); i++) {
		const struct chunk_case *t = &chunks[i];
		size_t n = strlen(t->in);
		/* Every complete body here ends with its last chunk's CRLF and the final one. */
		int done = 0,
		    want_done = t->body >= 5 && !memcmp(t->in + t->body - 4, "\r\n\r\n", 4);
		long k = scan(t->in, n, 0, &done);
		is_int(k, t->body, "chunked body %zu scans to %ld", i, t->body);
		if (t->body >= 0)
			is_int(done, want_done, "  done %d", want_done);
		else
			ok(strstr(err, t->why) && one_line(err), "  reason \"%s\" (got \"%s\")",
			   t->why, err);
		int same = 1;
		for (long split = -1; split <= (long)n; split++) {
			int d = 0;
			if (split == 0)
				continue;
			if (scan(t->in, n, split, &d) != t->body || (t->body >= 0 && d != done))
				same = 0;
		}
		ok(same, "  the same fed a byte at a time and split at every offset");
	}

	struct http_chunked st = { 0 };
	is_int(http_chunked_scan(&st, "0\r\n\r\n", 5, NULL, 0), 5, "err may be NULL");
	is_int(http_chunked_scan(&st, "x", 1, err, sizeof(err)), 0, "after the end: nothing more");
	st = (struct http_chunked){ 0 };
	is_int(http_chunked_scan(&st, "g", 1, err, sizeof(err)), -EBADMSG, "a failed scan...");
	is_int(http_chunked_scan(&st, "0\r\n\r\n", 5, err, sizeof(err)), -EBADMSG,
	       "  stays failed");
}

static void test_chunked_limits(void)
{
	static char buf[HTTP_HEAD_MAX * 2];
	struct http_chunked st = { 0 };
	size_t n;

	/* A size line of exactly HTTP_LINE_MAX bytes: leading zeros. */
	memset(buf, '0', HTTP_LINE_MAX - 3);
	memcpy(buf + HTTP_LINE_MAX - 3, "1\r\nx\r\n0\r\n\r\n", 11);
	is_int(http_chunked_scan(&st, buf, HTTP_LINE_MAX + 8, err, sizeof(err)), HTTP_LINE_MAX + 8,
	       "a size line of %d bytes", HTTP_LINE_MAX);
	st = (struct http_chunked){ 0 };
	memset(buf, '0', HTTP_LINE_MAX - 2);
	memcpy(buf + HTTP_LINE_MAX - 2, "1\r\n", 3);
	is_int(http_chunked_scan(&st, buf, HTTP_LINE_MAX + 1, err, sizeof(err)), -EBADMSG,
	       "a size line of %d bytes", HTTP_LINE_MAX + 1);
	ok(strstr(err, "size line is longer than 8192") != NULL, "  \"%s\"", err);

	/* Trailers: lines of 8000 bytes up to HTTP_HEAD_MAX, then one byte more. */
	n = (size_t)sprintf(buf, "0\r\n");
	size_t start = n;
	while (n - start + 8000 + 2 <= HTTP_HEAD_MAX) {
		memcpy(buf + n, "T: ", 3);
		memset(buf + n + 3, 't', 8000 - 5);
		memcpy(buf + n + 8000 - 2, "\r\n", 2);
		n += 8000;
	}
	size_t fill = HTTP_HEAD_MAX - (n - start) - 2;
	memcpy(buf + n, "U: ", 3);
	memset(buf + n + 3, 'u', fill - 5);
	memcpy(buf + n + fill - 2, "\r\n\r\n", 4);
	n += fill + 2;
	st = (struct http_chunked){ 0 };
	is_int(http_chunked_scan(&st, buf, n, err, sizeof(err)), (long)n,
	       "trailers of %d bytes, the final CRLF included", HTTP_HEAD_MAX);
	memmove(buf + n - 3, buf + n - 4, 4);
	buf[n - 4] = 'u';
	st = (struct http_chunked){ 0 };
	is_int(http_chunked_scan(&st, buf, n + 1, err, sizeof(err)), -EBADMSG,
	       "trailers of %d bytes", HTTP_HEAD_MAX + 1);
	ok(strstr(err, "trailers are longer than 65536") != NULL, "  \"%s\"", err);

	/* The largest size the scanner takes, and its data counted down without overflow. */
	st = (struct http_chunked){ 0 };
	is_int(http_chunked_scan(&st, "4000000000000000\r\n", 18, err, sizeof(err)), 18,
	       "a chunk of 2^62 bytes is accepted");
	is_int(st.remaining, UINT64_C(1) << 62, "  and counted");
	is_int(http_chunked_scan(&st, buf, sizeof(buf), err, sizeof(err)), (long)sizeof(buf),
	       "  its data is all body");
	is_int(st.done, 0, "  not done");
}

int main(void)
{
	test_requests();
	test_fields();
	test_bad_requests();
	test_line_limits();
	test_head_limits();
	test_responses();
	test_bad_responses();
	test_chunked();
	test_chunked_limits();
	return done_testing();
}
