/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * http-parse: HTTP/1.1 message framing for the proxy, strictly (RFC 9112, no lenient
 * recovery). Pure: bytes in, results out; no allocation, no syscalls. A head is parsed in
 * place: every string in the results points into the caller's buffer, which must outlive
 * them. Anything the grammar does not allow is -EBADMSG with a reason (the proxy answers 400
 * and closes): obsolete line folding, a bare CR or LF, a control byte, whitespace before a
 * header's colon, a non-token method or header name, two Content-Length headers (even equal),
 * Content-Length beside Transfer-Encoding, a Transfer-Encoding other than a final "chunked",
 * a line over HTTP_LINE_MAX, a head over HTTP_HEAD_MAX.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define HTTP_LINE_MAX 8192   /* one request, status or header line, CRLF included */
#define HTTP_HEAD_MAX 65536  /* the whole head, the blank line included */
#define HTTP_HEADERS_MAX 128 /* header fields in one head */

struct http_span {
	const char *p; /* into the caller's buffer; not NUL-terminated */
	size_t n;
};

struct http_field {
	struct http_span name;	/* a token, as sent (compare case-insensitively) */
	struct http_span value; /* leading and trailing spaces and tabs trimmed */
};

/* How the body after a head ends. */
enum http_body {
	HTTP_BODY_NONE,	       /* no body (a request without CL/TE; 1xx, 204, 304, HEAD) */
	HTTP_BODY_LENGTH,      /* content_length bytes */
	HTTP_BODY_CHUNKED,     /* chunked coding: http_chunked_scan() finds its end */
	HTTP_BODY_UNTIL_CLOSE, /* a response without CL/TE: the body ends with the connection */
};

struct http_head {
	size_t head_len; /* bytes of the head, the blank line included */
	/* Request: method and target; response: status, and the reason phrase in target (method
	 * empty). */
	struct http_span method; /* a token */
	struct http_span target; /* as sent: origin-form, absolute-form, authority-form or "*" */
	int status;		 /* response: 100..599 */
	int minor;		 /* HTTP/1.<minor>: 0 or 1 */
	struct http_field fields[HTTP_HEADERS_MAX];
	size_t n_fields;
	enum http_body body;
	uint64_t content_length; /* HTTP_BODY_LENGTH */
	int keep_alive;		 /* the connection persists after this message (HTTP/1.1 without
				  * "Connection: close", HTTP/1.0 with "keep-alive") */
	int upgrade_websocket;	 /* "Upgrade: websocket" with "Connection: upgrade" in an HTTP/1.1
				  * request, or in a 101 response */
	int expect_continue;	 /* HTTP/1.1 request: "Expect: 100-continue" */
};

/* Parse the request head at the start of @buf (@len bytes). Returns the head's length (> 0,
 * also in ret->head_len) when it is complete, 0 when more bytes are needed (none of the limits
 * is reached yet), or -EBADMSG with a one-line reason in @err. *@ret is meaningful only after
 * a positive return. */
int http_request_parse(const char *buf, size_t len, struct http_head *ret, char *err,
		       size_t errlen);

/* The same for a response head; @request_method is the method of the request it answers
 * (HEAD and CONNECT change the body's framing). */
int http_response_parse(const char *buf, size_t len, const struct http_span *request_method,
			struct http_head *ret, char *err, size_t errlen);

/* The first field named @name (case-insensitive) of @h, or NULL. */
const struct http_field *http_head_field(const struct http_head *h, const char *name);

/* A chunked body, scanned as it streams past (the bytes themselves are forwarded as they
 * are). Zero-initialise, then feed every byte of the body in order. */
struct http_chunked {
	int state;	    /* internal */
	uint64_t remaining; /* internal: data bytes left in the current chunk */
	size_t line;	    /* internal: bytes of the current size or trailer line */
	int done;	    /* the last chunk and the trailer section have been seen */
};

/* Scan @len bytes of a chunked body. Returns how many of them belong to the body (all of
 * them, or fewer when it ends inside @buf: st->done is set then), or -EBADMSG with @err
 * filled (a bad size line or extension, a missing CRLF, a size over 2^62, a trailer line
 * over HTTP_LINE_MAX or trailers over HTTP_HEAD_MAX). */
long http_chunked_scan(struct http_chunked *st, const char *buf, size_t len, char *err,
		       size_t errlen);

/* The parts of a request target (origin-form "/path?query", or absolute-form
 * "http://authority/path?query"), split without decoding. authority.n is 0 for origin-form. */
struct http_target {
	struct http_span scheme;    /* absolute-form: "http" or "https" (lower case checked) */
	struct http_span authority; /* absolute-form: host[:port], never with userinfo */
	struct http_span path;	    /* from the first '/', without the query; never empty */
	struct http_span query;	    /* after '?', without it; n = 0 and p = NULL when none */
};

/* Split @target. -EBADMSG (with @err) for userinfo ("user@host"), a scheme other than http
 * or https, an empty authority, a fragment, a byte outside RFC 3986's set, or a target that is
 * neither form (authority-form and "*" belong to CONNECT and OPTIONS: the caller checks). */
int http_target_split(const struct http_span *target, struct http_target *ret, char *err,
		      size_t errlen);

/* A host[:port] authority (from a target or a Host header) split into the host, lower-cased
 * into @host without a trailing dot (IPv6 without its brackets), and the port (0: none given).
 * -EBADMSG for an empty host, a bad port, userinfo, or bytes a host cannot hold. */
int http_authority_parse(const struct http_span *authority, char *host, size_t hostlen,
			 uint16_t *port, char *err, size_t errlen);

/* Normalise @path (the path part of a target, starting with '/') into @out, what the rules
 * match and what is sent upstream: percent-encoded unreserved characters are decoded, so are
 * %2F and %5C (as '/' ), every other escape is kept with upper-case hex; "." and ".."
 * segments are resolved ("/.." at the root stays at the root); runs of '/' are collapsed to
 * one. A NUL escape (%00), a bad escape ("%g1", "%4") or a result longer than @outlen - 1 is
 * -EBADMSG with @err. Returns the length written (NUL-terminated). */
long http_path_normalize(const struct http_span *path, char *out, size_t outlen, char *err,
			 size_t errlen);
