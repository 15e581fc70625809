/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-http: the HTTP/1.1 framing of src/http/http-parse.h over arbitrary bytes: the input is
 * parsed as a request head, as a response head (to the method its last byte picks), as a
 * chunked body, and as a target, an authority and a path. Invariants: every result is one of
 * the documented ones, with a one-line reason on refusal; every span lies in the input; a
 * prefix of the input (cut at an offset its first bytes pick) is "need more" before a
 * complete head, the same head after it, and never refused unless the whole is; a chunked body
 * reads the same whole, split at that offset, and a byte at a time; a normalised path is a
 * fixed point, holds no empty, "." or ".." segment nor an escape that should have been
 * decoded, and fits a buffer one byte longer than the path.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/http-parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *base;
static size_t base_len;

static void check_err(int k, const char *err)
{
	if (k != -EBADMSG || !err[0])
		abort();
	for (const char *p = err; *p; p++)
		if ((unsigned char)*p < ' ' || (unsigned char)*p >= 0x7f)
			abort();
}

static void check_span(const struct http_span *s)
{
	if (s->n && (s->p < base || s->p + s->n > base + base_len))
		abort();
}

static void check_head(const struct http_head *h, int k, size_t len)
{
	if ((size_t)k > len || h->head_len != (size_t)k || h->n_fields > HTTP_HEADERS_MAX ||
	    k > HTTP_HEAD_MAX || (h->minor != 0 && h->minor != 1))
		abort();
	if (h->body == HTTP_BODY_LENGTH && h->content_length > (UINT64_C(1) << 62))
		abort();
	check_span(&h->method);
	check_span(&h->target);
	for (size_t i = 0; i < h->n_fields; i++) {
		check_span(&h->fields[i].name);
		check_span(&h->fields[i].value);
		if (!h->fields[i].name.n || http_head_field(h, "") != NULL)
			abort();
	}
}

static int parse(int response, const char *buf, size_t len, const struct http_span *m,
		 struct http_head *h, char *err, size_t errlen)
{
	if (response)
		return http_response_parse(buf, len, m, h, err, errlen);
	return http_request_parse(buf, len, h, err, errlen);
}

/* The whole input, then its prefix of @cut bytes, which must agree. */
static int check_parse(int response, const char *buf, size_t len, size_t cut,
		       const struct http_span *m, struct http_head *h)
{
	static struct http_head again;
	char err[256] = "";
	int k = parse(response, buf, len, m, h, err, sizeof(err));

	if (k < 0)
		check_err(k, err);
	else if (k > 0)
		check_head(h, k, len);
	err[0] = '\0';
	int p = parse(response, buf, cut, m, &again, err, sizeof(err));
	if (p < 0)
		check_err(p, err);
	/* Refused on a prefix: refused whole. Complete in a prefix: the same head whole. Not
	 * complete in a prefix: the whole is complete only past it. */
	if ((p < 0 && k >= 0) || (p > 0 && k != p) || (p == 0 && k > 0 && (size_t)k <= cut))
		abort();
	if (p > 0 &&
	    (again.body != h->body || again.n_fields != h->n_fields ||
	     again.keep_alive != h->keep_alive || again.content_length != h->content_length))
		abort();
	return k;
}

static long scan_in(const char *buf, size_t len, size_t step, int *done, size_t *remaining)
{
	struct http_chunked st = { 0 };
	char err[256] = "";
	size_t off = 0;

	while (off < len) {
		size_t n = step ? (step < len - off ? step : len - off) : len - off;
		long k = http_chunked_scan(&st, buf + off, n, err, sizeof(err));
		if (k < 0) {
			check_err((int)k, err);
			return k;
		}
		if ((size_t)k > n || (st.done == 0 && (size_t)k != n))
			abort();
		off += (size_t)k;
		if (st.done)
			break;
	}
	*done = st.done;
	*remaining = (size_t)st.remaining;
	return (long)off;
}

static void check_chunked(const char *buf, size_t len, size_t cut)
{
	int d1, d2, d3;
	size_t r1, r2, r3;
	long whole = scan_in(buf, len, 0, &d1, &r1);
	long split = scan_in(buf, len, cut ? cut : 1, &d2, &r2);
	long bytes = scan_in(buf, len, 1, &d3, &r3);

	if (whole != split || whole != bytes)
		abort();
	if (whole >= 0 && (d1 != d2 || d1 != d3 || r1 != r2 || r1 != r3))
		abort();
}

static int is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F');
}

/* What a normalised path may not hold, and that normalising it again changes nothing. */
static void check_normal(const char *out, long n)
{
	char again[HTTP_LINE_MAX + 8], err[256] = "";
	struct http_span s = { out, (size_t)n };

	if (n <= 0 || out[0] != '/' || (size_t)n != strlen(out) || strstr(out, "//") ||
	    strstr(out, "/./") || strstr(out, "/../"))
		abort();
	if ((n >= 2 && !strcmp(out + n - 2, "/.")) || (n >= 3 && !strcmp(out + n - 3, "/..")))
		abort();
	for (long i = 0; i < n; i++) {
		if (out[i] != '%')
			continue;
		if (i + 2 >= n || !is_hex(out[i + 1]) || !is_hex(out[i + 2]))
			abort();
		int v = (out[i + 1] <= '9' ? out[i + 1] - '0' : out[i + 1] - 'A' + 10) * 16 +
			(out[i + 2] <= '9' ? out[i + 2] - '0' : out[i + 2] - 'A' + 10);
		if (v == '/' || v == '\\' || v == 0 || v == '-' || v == '.' || v == '_' ||
		    v == '~' || (v >= 'a' && v <= 'z') || (v >= 'A' && v <= 'Z') ||
		    (v >= '0' && v <= '9'))
			abort();
	}
	if ((size_t)n + 1 > sizeof(again))
		return;
	long k = http_path_normalize(&s, again, (size_t)n + 1, err, sizeof(err));
	if (k != n || strcmp(again, out) != 0)
		abort();
}

static void check_path(const struct http_span *path)
{
	static char out[HTTP_HEAD_MAX + 8];
	char err[256] = "";

	if (path->n + 1 > sizeof(out))
		return;
	long k = http_path_normalize(path, out, path->n + 1, err, sizeof(err));
	if (k < 0) {
		check_err((int)k, err);
		if (strstr(err, "longer than")) /* a buffer one longer than the path suffices */
			abort();
		return;
	}
	if ((size_t)k > path->n)
		abort();
	check_normal(out, k);
}

static void check_authority(const struct http_span *a)
{
	char host[256], err[256] = "";
	uint16_t port = 0;

	int k = http_authority_parse(a, host, sizeof(host), &port, err, sizeof(err));
	if (k < 0) {
		check_err(k, err);
		return;
	}
	if (k != 0 || !host[0] || strlen(host) > a->n || host[strlen(host) - 1] == '.')
		abort();
	for (const char *p = host; *p; p++)
		if ((*p >= 'A' && *p <= 'Z') || (unsigned char)*p <= ' ' || *p == '@')
			abort();
}

static void check_target(const struct http_span *t)
{
	struct http_target r;
	char err[256] = "";

	int k = http_target_split(t, &r, err, sizeof(err));
	if (k < 0) {
		check_err(k, err);
		return;
	}
	if (k != 0 || !r.path.n || r.path.p[0] != '/' || (r.scheme.n && !r.authority.n))
		abort();
	if (r.authority.n)
		check_authority(&r.authority);
	check_path(&r.path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct http_head h;
	static const char *const methods[] = { "GET", "HEAD", "CONNECT", "POST" };
	const char *buf = (const char *)data;
	size_t cut = size ? (data[0] | (size > 1 ? (size_t)data[1] << 8 : 0)) % (size + 1) : 0;
	struct http_span m = { methods[size ? data[size - 1] % 4 : 0], 0 };
	struct http_span whole = { buf, size };

	base = buf;
	base_len = size;
	m.n = strlen(m.p);
	if (check_parse(0, buf, size, cut, NULL, &h) > 0) {
		check_target(&h.target);
		const struct http_field *host = http_head_field(&h, "host");
		if (host)
			check_authority(&host->value);
	}
	check_parse(1, buf, size, cut, size && data[size - 1] % 5 == 4 ? NULL : &m, &h);
	check_chunked(buf, size, cut);
	check_target(&whole);
	check_authority(&whole);
	check_path(&whole);
	return 0;
}
