/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * http-parse: the request and response heads of http-parse.h and their body framing (RFC 9112
 * sections 2-7), and the streaming chunked-body scanner. Strict by design: the proxy sits
 * between a client and a server that may each read an ambiguous message differently, and any
 * disagreement about where a message ends is request smuggling, so every shape the grammar
 * does not allow is refused rather than repaired. Pure: no allocation, no syscalls; the
 * results point into the caller's buffer. The target, authority and path helpers are in
 * http-path.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "http-internal.h"
#include "http-parse.h"

/* A Content-Length or chunk size above this is refused: no body is that large, and the
 * arithmetic on it (remaining + CRLF, offsets) stays far from overflowing. */
#define HTTP_SIZE_MAX (UINT64_C(1) << 62)

int http_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return -EBADMSG;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	for (char *p = err; *p; p++)
		if ((unsigned char)*p < ' ' || (unsigned char)*p >= 0x7f)
			*p = '?';
	return -EBADMSG;
}

int http_ascii_eq(const char *p, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!s[i] || http_lower(p[i]) != http_lower(s[i]))
			return 0;
	return s[i] == '\0';
}

/* --- lines -------------------------------------------------------------------------------- */

/* The line that starts at @off: 1 with *@line (without its CRLF) and *@next (the offset after
 * the CRLF); 0 when it is not complete yet, with *@min the least length (CRLF included) it can
 * still have; or -EBADMSG for a bare CR or LF or a line over HTTP_LINE_MAX. */
static int next_line(const char *buf, size_t len, size_t off, struct http_span *line, size_t *next,
		     size_t *min, char *err, size_t errlen)
{
	const char *s = buf + off;
	size_t avail = len - off, max = MIN(avail, (size_t)HTTP_LINE_MAX);

	for (size_t i = 0; i < max; i++) {
		if (s[i] == '\n')
			return http_fail(err, errlen, "bare LF (a line must end with CRLF)");
		if (s[i] != '\r')
			continue;
		if (i + 2 > HTTP_LINE_MAX)
			break;
		if (i + 1 == avail) {
			*min = i + 2;
			return 0;
		}
		if (s[i + 1] != '\n')
			return http_fail(err, errlen, "bare CR (not followed by LF)");
		*line = (struct http_span){ s, i };
		*next = off + i + 2;
		return 1;
	}
	if (avail + 2 > HTTP_LINE_MAX)
		return http_fail(err, errlen, "a line is longer than %d bytes", HTTP_LINE_MAX);
	*min = avail + 2;
	return 0;
}

/* VCHAR, SP, HTAB and obs-text: what a field value or a reason phrase may hold. */
static int is_text(unsigned char c)
{
	return c == '\t' || (c >= ' ' && c != 0x7f);
}

static int parse_version(const char *p, size_t n, int *minor)
{
	if (n != 8 || memcmp(p, "HTTP/1.", 7) != 0 || (p[7] != '0' && p[7] != '1'))
		return -1;
	*minor = p[7] - '0';
	return 0;
}

static int parse_request_line(struct http_span l, struct http_head *h, char *err, size_t errlen)
{
	size_t i = 0, t;

	while (i < l.n && http_is_tchar((unsigned char)l.p[i]))
		i++;
	if (i == 0 || i == l.n || l.p[i] != ' ')
		return http_fail(err, errlen, "the method is not a token followed by one space");
	h->method = (struct http_span){ l.p, i };
	t = ++i;
	while (i < l.n && (unsigned char)l.p[i] > ' ' && (unsigned char)l.p[i] < 0x7f)
		i++;
	if (i == t)
		return http_fail(err, errlen, "empty request target");
	if (i == l.n || l.p[i] != ' ')
		return http_fail(err, errlen,
				 "the request target is not followed by one space and the version");
	h->target = (struct http_span){ l.p + t, i - t };
	i++;
	if (parse_version(l.p + i, l.n - i, &h->minor) < 0)
		return http_fail(err, errlen, "unsupported HTTP version (HTTP/1.0 or HTTP/1.1)");
	return 0;
}

static int parse_status_line(struct http_span l, struct http_head *h, char *err, size_t errlen)
{
	const char *p = l.p;

	if (l.n < 13 || parse_version(p, 8, &h->minor) < 0 || p[8] != ' ')
		return http_fail(err, errlen,
				 "the status line does not start with HTTP/1.0 or HTTP/1.1 and a "
				 "space");
	if (!http_is_digit(p[9]) || !http_is_digit(p[10]) || !http_is_digit(p[11]) || p[12] != ' ')
		return http_fail(err, errlen, "the status is not three digits and a space");
	h->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
	if (h->status < 100 || h->status > 599)
		return http_fail(err, errlen, "status %d is outside 100..599", h->status);
	for (size_t i = 13; i < l.n; i++)
		if (!is_text((unsigned char)p[i]))
			return http_fail(err, errlen, "a control byte in the reason phrase");
	/* The reason phrase takes the place of the request's target; method stays empty. */
	h->target = (struct http_span){ p + 13, l.n - 13 };
	return 0;
}

static int parse_field(struct http_span l, struct http_head *h, char *err, size_t errlen)
{
	size_t i = 0, end;

	if (http_is_ows((unsigned char)l.p[0]))
		return http_fail(err, errlen, "obsolete line folding (a line starts with a space)");
	while (i < l.n && http_is_tchar((unsigned char)l.p[i]))
		i++;
	if (i < l.n && http_is_ows((unsigned char)l.p[i]))
		return http_fail(err, errlen, "whitespace before a header's colon");
	if (i == 0 || i == l.n || l.p[i] != ':')
		return http_fail(err, errlen, "a header name is not a token followed by ':'");
	if (h->n_fields == HTTP_HEADERS_MAX)
		return http_fail(err, errlen, "more than %d header fields", HTTP_HEADERS_MAX);
	struct http_field *f = &h->fields[h->n_fields++];
	f->name = (struct http_span){ l.p, i };
	for (size_t j = i + 1; j < l.n; j++)
		if (!is_text((unsigned char)l.p[j]))
			return http_fail(err, errlen, "a control byte in the value of %.*s",
					 (int)MIN(i, (size_t)64), l.p);
	for (i++; i < l.n && http_is_ows((unsigned char)l.p[i]); i++)
		;
	for (end = l.n; end > i && http_is_ows((unsigned char)l.p[end - 1]); end--)
		;
	f->value = (struct http_span){ l.p + i, end - i };
	return 0;
}

/* The lines of a head: the start line through @start, the fields into @h. Returns the head's
 * length, 0 for more, or -EBADMSG. */
static int parse_lines(const char *buf, size_t len, struct http_head *h,
		       int (*start)(struct http_span, struct http_head *, char *, size_t),
		       char *err, size_t errlen)
{
	size_t off = 0, next = 0, min = 0;
	struct http_span l;

	h->n_fields = 0;
	for (int first = 1;; first = 0) {
		int k = next_line(buf, len, off, &l, &next, &min, err, errlen);
		if (k < 0)
			return k;
		if (k == 0) {
			/* The blank line may still follow this one: the least the head can be. */
			int blank =
				!first && (len - off == 0 || (len - off == 1 && buf[off] == '\r'));
			if (off + min + (blank ? 0 : 2) > HTTP_HEAD_MAX)
				break;
			return 0;
		}
		if (next > HTTP_HEAD_MAX)
			break;
		if (first && l.n == 0)
			return http_fail(err, errlen, "an empty line before the start line");
		if (!first && l.n == 0) {
			h->head_len = next;
			return (int)next;
		}
		k = first ? start(l, h, err, errlen) : parse_field(l, h, err, errlen);
		if (k < 0)
			return k;
		off = next;
	}
	return http_fail(err, errlen, "the head is longer than %d bytes", HTTP_HEAD_MAX);
}

/* --- framing ------------------------------------------------------------------------------ */

/* One element of a comma-separated list (RFC 9110 5.6.1): @i walks the value; 1 with *@el
 * (trimmed, may be empty) while elements remain. */
static int list_next(const struct http_span *v, size_t *i, struct http_span *el)
{
	size_t b, e;

	if (*i > v->n)
		return 0;
	for (b = *i; b < v->n && http_is_ows((unsigned char)v->p[b]); b++)
		;
	for (e = b; e < v->n && v->p[e] != ','; e++)
		;
	*i = e + 1;
	while (e > b && http_is_ows((unsigned char)v->p[e - 1]))
		e--;
	*el = (struct http_span){ v->p + b, e - b };
	return 1;
}

/* 1 when some field @name of @h lists @token (both case-insensitive). */
static int lists_token(const struct http_head *h, const char *name, const char *token)
{
	for (size_t f = 0; f < h->n_fields; f++) {
		struct http_span el;
		size_t i = 0;
		if (!http_ascii_eq(h->fields[f].name.p, h->fields[f].name.n, name))
			continue;
		while (list_next(&h->fields[f].value, &i, &el))
			if (http_ascii_eq(el.p, el.n, token))
				return 1;
	}
	return 0;
}

static size_t count_fields(const struct http_head *h, const char *name)
{
	size_t n = 0;

	for (size_t f = 0; f < h->n_fields; f++)
		n += http_ascii_eq(h->fields[f].name.p, h->fields[f].name.n, name);
	return n;
}

static int parse_length(const struct http_head *h, uint64_t *ret, char *err, size_t errlen)
{
	const struct http_field *f = http_head_field(h, "Content-Length");
	uint64_t v = 0;

	if (f->value.n == 0)
		return http_fail(err, errlen, "empty Content-Length");
	for (size_t i = 0; i < f->value.n; i++) {
		if (!http_is_digit((unsigned char)f->value.p[i]))
			return http_fail(err, errlen, "Content-Length \"%.*s\" is not a number",
					 (int)MIN(f->value.n, (size_t)64), f->value.p);
		v = v * 10 + (uint64_t)(f->value.p[i] - '0');
		if (v > HTTP_SIZE_MAX)
			return http_fail(err, errlen, "Content-Length is over 2^62");
	}
	*ret = v;
	return 0;
}

/* Transfer-Encoding, all its fields as one list: a request may only say "chunked"; a response
 * may list codings (tokens, no parameters) of which "chunked" is the last and only the last.
 * Returns 1 when the body is chunked, 0 when there is no Transfer-Encoding. */
static int parse_coding(const struct http_head *h, int request, char *err, size_t errlen)
{
	size_t n = 0, chunked_at = 0;
	int chunked = 0;

	for (size_t f = 0; f < h->n_fields; f++) {
		struct http_span el;
		size_t i = 0;
		if (!http_ascii_eq(h->fields[f].name.p, h->fields[f].name.n, "Transfer-Encoding"))
			continue;
		while (list_next(&h->fields[f].value, &i, &el)) {
			n++;
			if (http_ascii_eq(el.p, el.n, "chunked")) {
				chunked++;
				chunked_at = n;
				continue;
			}
			for (size_t j = 0; j < el.n; j++)
				if (!http_is_tchar((unsigned char)el.p[j]))
					return http_fail(err, errlen,
							 "Transfer-Encoding lists a coding that "
							 "is not a token");
			if (el.n == 0)
				return http_fail(err, errlen, "an empty Transfer-Encoding element");
		}
	}
	if (n == 0)
		return 0;
	if (h->minor == 0)
		return http_fail(err, errlen, "Transfer-Encoding in an HTTP/1.0 message");
	if (request && (n != 1 || chunked != 1))
		return http_fail(err, errlen,
				 "a request's Transfer-Encoding must be \"chunked\" alone");
	if (chunked != 1 || chunked_at != n)
		return http_fail(err, errlen,
				 "Transfer-Encoding does not end with one \"chunked\"");
	return 1;
}

/* The framing fields both kinds of message share: at most one Content-Length, never beside a
 * Transfer-Encoding. Sets h->body to CHUNKED or LENGTH, or leaves it. */
static int parse_framing(struct http_head *h, int request, char *err, size_t errlen)
{
	size_t cl = count_fields(h, "Content-Length");

	if (cl > 1)
		return http_fail(err, errlen, "more than one Content-Length");
	int chunked = parse_coding(h, request, err, errlen);
	if (chunked < 0)
		return chunked;
	if (chunked && cl)
		return http_fail(err, errlen, "Content-Length beside Transfer-Encoding");
	if (chunked)
		h->body = HTTP_BODY_CHUNKED;
	if (cl) {
		int k = parse_length(h, &h->content_length, err, errlen);
		if (k < 0)
			return k;
		h->body = HTTP_BODY_LENGTH;
	}
	return 0;
}

static int persistent(const struct http_head *h)
{
	if (lists_token(h, "Connection", "close"))
		return 0;
	return h->minor == 1 || lists_token(h, "Connection", "keep-alive");
}

static int wants_websocket(const struct http_head *h)
{
	return h->minor == 1 && lists_token(h, "Upgrade", "websocket") &&
	       lists_token(h, "Connection", "upgrade");
}

static void head_reset(struct http_head *h)
{
	h->head_len = 0;
	h->method = h->target = (struct http_span){ NULL, 0 };
	h->status = h->minor = 0;
	h->n_fields = 0;
	h->body = HTTP_BODY_NONE;
	h->content_length = 0;
	h->keep_alive = h->upgrade_websocket = h->expect_continue = 0;
}

int http_request_parse(const char *buf, size_t len, struct http_head *ret, char *err, size_t errlen)
{
	head_reset(ret);
	int n = parse_lines(buf, len, ret, parse_request_line, err, errlen);
	if (n <= 0)
		return n;
	size_t hosts = count_fields(ret, "Host");
	if (hosts > 1)
		return http_fail(err, errlen, "more than one Host header");
	if (hosts == 0 && ret->minor == 1)
		return http_fail(err, errlen, "an HTTP/1.1 request without a Host header");
	int k = parse_framing(ret, 1, err, errlen);
	if (k < 0)
		return k;
	ret->keep_alive = persistent(ret);
	ret->upgrade_websocket = wants_websocket(ret);
	/* RFC 9110 10.1.1: an HTTP/1.0 request's expectation is ignored. */
	const struct http_field *e = http_head_field(ret, "Expect");
	ret->expect_continue =
		ret->minor == 1 && e && http_ascii_eq(e->value.p, e->value.n, "100-continue");
	return n;
}

static int is_method(const struct http_span *m, const char *name)
{
	return m && m->p && m->n == strlen(name) && memcmp(m->p, name, m->n) == 0;
}

int http_response_parse(const char *buf, size_t len, const struct http_span *request_method,
			struct http_head *ret, char *err, size_t errlen)
{
	head_reset(ret);
	int n = parse_lines(buf, len, ret, parse_status_line, err, errlen);
	if (n <= 0)
		return n;
	int k = parse_framing(ret, 0, err, errlen);
	if (k < 0)
		return k;
	int s = ret->status, no_body = s < 200 || s == 204;
	if (no_body && ret->body == HTTP_BODY_CHUNKED)
		return http_fail(err, errlen, "Transfer-Encoding in a %d response", s);
	if (no_body && ret->body == HTTP_BODY_LENGTH && ret->content_length != 0)
		return http_fail(err, errlen, "a Content-Length other than 0 in a %d response", s);
	ret->keep_alive = persistent(ret);
	ret->upgrade_websocket = s == 101 && wants_websocket(ret);
	/* RFC 9112 6.3, in its order: these have no body whatever the fields say; a 2xx to
	 * CONNECT and a 101 turn the connection into something else than HTTP. */
	if (is_method(request_method, "HEAD") || no_body || s == 304) {
		ret->body = HTTP_BODY_NONE;
		if (s == 101)
			ret->keep_alive = 0;
	} else if (is_method(request_method, "CONNECT") && s < 300) {
		ret->body = HTTP_BODY_NONE;
		ret->keep_alive = 0;
	} else if (ret->body == HTTP_BODY_NONE) {
		ret->body = HTTP_BODY_UNTIL_CLOSE;
		ret->keep_alive = 0;
	}
	return n;
}

const struct http_field *http_head_field(const struct http_head *h, const char *name)
{
	for (size_t f = 0; f < h->n_fields; f++)
		if (http_ascii_eq(h->fields[f].name.p, h->fields[f].name.n, name))
			return &h->fields[f];
	return NULL;
}

/* --- chunked bodies ----------------------------------------------------------------------- */

/* RFC 9112 7.1: chunk = chunk-size [ chunk-ext ] CRLF chunk-data CRLF, with chunk-ext =
 * *( BWS ";" BWS name [ BWS "=" BWS ( token / quoted-string ) ] ); then last-chunk, the
 * trailer field lines and a CRLF. One state per position in that grammar. */
enum {
	CH_SIZE0,      /* the first hex digit of a size */
	CH_SIZE,       /* more digits, an extension, or CR */
	CH_EXT_WS,     /* BWS before a ';' */
	CH_EXT_NAME0,  /* after ';': BWS, then the name's first byte */
	CH_EXT_NAME,   /* the name */
	CH_EXT_NAMEWS, /* BWS after the name: '=' or ';' */
	CH_EXT_VAL0,   /* after '=': BWS, then a token or a quoted string */
	CH_EXT_VAL,    /* a token value */
	CH_EXT_QUOTED, /* inside a quoted string */
	CH_EXT_QESC,   /* after a backslash in it */
	CH_EXT_END,    /* after the closing quote */
	CH_SIZE_LF,    /* the LF of the size line */
	CH_DATA,       /* remaining data bytes */
	CH_DATA_CR,    /* the CRLF after the data */
	CH_DATA_LF,
	CH_TR0,	     /* the start of a trailer line, or the final CRLF */
	CH_TR_NAME,  /* a trailer field's name */
	CH_TR_VALUE, /* its value */
	CH_TR_LF,    /* the LF of a trailer line */
	CH_END_LF,   /* the final LF */
	CH_FAILED,   /* a previous call failed: so does every later one */
};

static int ext_byte(struct http_chunked *st, unsigned char c)
{
	int ws = http_is_ows(c), tchar = http_is_tchar(c);

	switch (st->state) {
	case CH_EXT_WS:
		return ws ? CH_EXT_WS : c == ';' ? CH_EXT_NAME0 : -1;
	case CH_EXT_NAME0:
		return ws ? CH_EXT_NAME0 : tchar ? CH_EXT_NAME : -1;
	case CH_EXT_NAME:
	case CH_EXT_NAMEWS:
		if (tchar && st->state == CH_EXT_NAME)
			return CH_EXT_NAME;
		if (c == '\r' && st->state == CH_EXT_NAME)
			return CH_SIZE_LF;
		return ws ? CH_EXT_NAMEWS : c == '=' ? CH_EXT_VAL0 : c == ';' ? CH_EXT_NAME0 : -1;
	case CH_EXT_VAL0:
		return ws ? CH_EXT_VAL0 : c == '"' ? CH_EXT_QUOTED : tchar ? CH_EXT_VAL : -1;
	case CH_EXT_QUOTED:
		if (c == '"')
			return CH_EXT_END;
		if (c == '\\')
			return CH_EXT_QESC;
		return c == '\t' || (c >= ' ' && c != 0x7f) ? CH_EXT_QUOTED : -1;
	case CH_EXT_QESC:
		return c == '\t' || (c >= ' ' && c != 0x7f) ? CH_EXT_QUOTED : -1;
	case CH_EXT_VAL:
	case CH_EXT_END:
		if (tchar && st->state == CH_EXT_VAL)
			return CH_EXT_VAL;
		return ws ? CH_EXT_WS : c == ';' ? CH_EXT_NAME0 : c == '\r' ? CH_SIZE_LF : -1;
	default:
		return -1;
	}
}

/* The size line, up to its CR. */
static int size_byte(struct http_chunked *st, unsigned char c, char *err, size_t errlen)
{
	int d = http_hex(c);

	if (st->state == CH_SIZE0 || st->state == CH_SIZE) {
		if (d >= 0) {
			if (st->remaining > (HTTP_SIZE_MAX - (uint64_t)d) / 16)
				return http_fail(err, errlen, "a chunk size over 2^62");
			st->remaining = st->remaining * 16 + (uint64_t)d;
			st->state = CH_SIZE;
			return 0;
		}
		if (st->state == CH_SIZE0)
			return http_fail(err, errlen, "a chunk size line without a hex size");
		if (c == '\r')
			st->state = CH_SIZE_LF;
		else if (c == ';')
			st->state = CH_EXT_NAME0;
		else if (http_is_ows(c))
			st->state = CH_EXT_WS;
		else
			return http_fail(err, errlen,
					 "a chunk size is followed by a byte that is "
					 "not ';' or CR");
		return 0;
	}
	int next = ext_byte(st, c);
	if (next < 0)
		return http_fail(err, errlen, "a malformed chunk extension");
	st->state = next;
	return 0;
}

/* A trailer field line: name ':' value CRLF, as in a head (no folding, no controls). */
static int trailer_byte(struct http_chunked *st, unsigned char c, char *err, size_t errlen)
{
	switch (st->state) {
	case CH_TR0:
		if (c == '\r')
			st->state = CH_END_LF;
		else if (http_is_ows(c))
			return http_fail(err, errlen, "obsolete line folding in the trailers");
		else if (http_is_tchar(c))
			st->state = CH_TR_NAME;
		else
			return http_fail(err, errlen, "a trailer name is not a token");
		return 0;
	case CH_TR_NAME:
		if (c == ':')
			st->state = CH_TR_VALUE;
		else if (http_is_ows(c))
			return http_fail(err, errlen, "whitespace before a trailer's colon");
		else if (!http_is_tchar(c))
			return http_fail(err, errlen,
					 "a trailer name is not a token followed by ':'");
		return 0;
	case CH_TR_VALUE:
		if (c == '\r')
			st->state = CH_TR_LF;
		else if (!is_text(c))
			return http_fail(err, errlen, "a control byte in a trailer value");
		return 0;
	default:
		return http_fail(err, errlen, "internal chunk state");
	}
}

/* Every byte but the chunk data. */
static int chunk_byte(struct http_chunked *st, unsigned char c, char *err, size_t errlen)
{
	int in_trailers = st->state >= CH_TR0;

	if (st->state <= CH_SIZE_LF || in_trailers) {
		if (++st->line > HTTP_LINE_MAX)
			return http_fail(err, errlen, "a chunk %s line is longer than %d bytes",
					 in_trailers ? "trailer" : "size", HTTP_LINE_MAX);
		if (in_trailers && ++st->remaining > HTTP_HEAD_MAX)
			return http_fail(err, errlen, "the trailers are longer than %d bytes",
					 HTTP_HEAD_MAX);
	}
	if (c == '\n' && st->state != CH_SIZE_LF && st->state != CH_DATA_LF &&
	    st->state != CH_TR_LF && st->state != CH_END_LF)
		return http_fail(err, errlen, "bare LF in a chunked body");
	switch (st->state) {
	case CH_SIZE_LF:
	case CH_DATA_LF:
	case CH_TR_LF:
	case CH_END_LF:
		if (c != '\n')
			return http_fail(err, errlen, "bare CR in a chunked body");
		st->line = 0;
		if (st->state == CH_END_LF)
			st->done = 1;
		else if (st->state == CH_SIZE_LF)
			st->state = st->remaining ? CH_DATA : CH_TR0;
		else
			st->state = st->state == CH_DATA_LF ? CH_SIZE0 : CH_TR0;
		return 0;
	case CH_DATA_CR:
		if (c != '\r')
			return http_fail(err, errlen, "chunk data is not followed by CRLF");
		st->state = CH_DATA_LF;
		return 0;
	default:
		if (st->state >= CH_TR0)
			return trailer_byte(st, c, err, errlen);
		return size_byte(st, c, err, errlen);
	}
}

long http_chunked_scan(struct http_chunked *st, const char *buf, size_t len, char *err,
		       size_t errlen)
{
	size_t i = 0;

	if (st->state == CH_FAILED)
		return http_fail(err, errlen, "the chunked body already failed to parse");
	while (i < len && !st->done) {
		if (st->state == CH_DATA) {
			uint64_t k = MIN(st->remaining, (uint64_t)(len - i));
			i += (size_t)k;
			st->remaining -= k;
			if (st->remaining == 0)
				st->state = CH_DATA_CR;
			continue;
		}
		int r = chunk_byte(st, (unsigned char)buf[i], err, errlen);
		if (r < 0) {
			st->state = CH_FAILED;
			return r;
		}
		i++;
	}
	return (long)i;
}
