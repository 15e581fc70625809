/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * toml lexing: error reports with their line:column, UTF-8 validation, whitespace, comments,
 * line ends, the four string kinds with their escapes, and keys. Every read goes through the
 * parser's bounds (pos < len); nothing here assumes a NUL terminator.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toml/toml-internal.h"

int toml_fail(struct toml_parser *p, size_t off, const char *fmt, ...)
{
	va_list ap;

	if (p->err) {
		toml_locate(p, off, &p->err->line, &p->err->column);
		va_start(ap, fmt);
		vsnprintf(p->err->message, sizeof(p->err->message), fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int toml_oom(struct toml_parser *p)
{
	if (p->err) {
		toml_locate(p, p->pos, &p->err->line, &p->err->column);
		snprintf(p->err->message, sizeof(p->err->message), "out of memory");
	}
	return -ENOMEM;
}

/* Columns count characters: a UTF-8 continuation byte does not start a new column. */
void toml_locate(struct toml_parser *p, size_t off, unsigned *ret_line, unsigned *ret_column)
{
	size_t i = p->loc_off;
	unsigned line = p->loc_line, column = p->loc_column;

	off = MAX(MIN(off, p->len), p->begin);
	if (off < i) {
		/* Only error reports may look back; start over rather than keep a line index. */
		i = p->begin;
		line = 1;
		column = 1;
	}
	for (; i < off; i++) {
		unsigned char c = p->buf[i];
		if (c == '\n') {
			line++;
			column = 1;
		} else if ((c & 0xc0) != 0x80)
			column++;
	}
	p->loc_off = off;
	p->loc_line = line;
	p->loc_column = column;
	*ret_line = line;
	*ret_column = column;
}

/* The length of the UTF-8 sequence at @s (at most @n bytes), or 0 when it is not valid: no
 * overlong forms, no surrogates, nothing above U+10FFFF. Stores the code point. */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *ret)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t len;
	uint32_t cp;

	if (c < 0x80) {
		*ret = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
		lo = c == 0xe0 ? 0xa0 : lo; /* overlong */
		hi = c == 0xed ? 0x9f : hi; /* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
		lo = c == 0xf0 ? 0x90 : lo; /* overlong */
		hi = c == 0xf4 ? 0x8f : hi; /* above U+10FFFF */
	} else
		return 0; /* a continuation byte, an overlong C0/C1 lead, or F5-FF */
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	*ret = cp;
	return len;
}

int toml_validate_utf8(struct toml_parser *p)
{
	const unsigned char *s = (const unsigned char *)p->buf;
	uint32_t cp;

	for (size_t i = 0; i < p->len;) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		size_t k = utf8_decode(s + i, p->len - i, &cp);
		if (k == 0)
			return toml_fail(p, i, "invalid UTF-8 (byte 0x%02x)", s[i]);
		i += k;
	}
	return 0;
}

const char *toml_describe(const struct toml_parser *p, size_t off, char buf[static 32])
{
	uint32_t cp;

	if (off >= p->len)
		return "end of input";
	unsigned char c = p->buf[off];
	if (c == '\n' || (c == '\r' && off + 1 < p->len && p->buf[off + 1] == '\n'))
		return "end of line";
	if (c == ' ')
		return "space";
	if (c == '\t')
		return "tab";
	if (c > 0x20 && c < 0x7f)
		snprintf(buf, 32, "'%c'", c);
	else if (utf8_decode((const unsigned char *)p->buf + off, p->len - off, &cp))
		snprintf(buf, 32, "U+%04X", (unsigned)cp);
	else
		snprintf(buf, 32, "byte 0x%02x", c);
	return buf;
}

/* Control characters TOML forbids in comments and strings: U+0000-U+001F but tab, and
 * U+007F. Line ends are handled by the callers before they ask. */
static bool is_control(int c)
{
	return (c >= 0 && c < 0x20 && c != '\t') || c == 0x7f;
}

static size_t newline_len(const struct toml_parser *p)
{
	int c = toml_peek(p);

	if (c == '\n')
		return 1;
	if (c == '\r' && toml_peek_at(p, 1) == '\n')
		return 2;
	return 0;
}

void toml_skip_ws(struct toml_parser *p)
{
	while (p->pos < p->len && (p->buf[p->pos] == ' ' || p->buf[p->pos] == '\t'))
		p->pos++;
}

/* At '#': up to (not including) the line end. */
static int skip_comment(struct toml_parser *p)
{
	char d[32];

	for (p->pos++; p->pos < p->len; p->pos++) {
		int c = toml_peek(p);
		if (newline_len(p))
			return 0;
		if (is_control(c))
			return toml_fail(p, p->pos, "%s is not allowed in a comment",
					 toml_describe(p, p->pos, d));
	}
	return 0;
}

int toml_skip_ws_comments_newlines(struct toml_parser *p)
{
	for (;;) {
		toml_skip_ws(p);
		size_t n = newline_len(p);
		if (n) {
			p->pos += n;
			continue;
		}
		if (toml_peek(p) != '#')
			return 0;
		int r = skip_comment(p);
		if (r < 0)
			return r;
	}
}

int toml_expect_eol(struct toml_parser *p)
{
	char d[32];

	toml_skip_ws(p);
	if (toml_peek(p) == '#') {
		int r = skip_comment(p);
		if (r < 0)
			return r;
	}
	if (p->pos == p->len)
		return 0;
	size_t n = newline_len(p);
	if (!n)
		return toml_fail(p, p->pos, "expected a line end, found %s",
				 toml_describe(p, p->pos, d));
	p->pos += n;
	return 0;
}

void toml_buf_done(struct toml_buf *b)
{
	free(b->s);
	*b = (struct toml_buf){ 0 };
}

static int buf_append(struct toml_parser *p, struct toml_buf *b, const char *s, size_t n)
{
	if (b->cap - b->len <= n) {
		size_t cap = b->cap ? b->cap : 16;
		while (cap - b->len <= n) {
			if (cap > SIZE_MAX / 2)
				return toml_oom(p);
			cap *= 2;
		}
		char *t = realloc(b->s, cap);
		if (!t)
			return toml_oom(p);
		b->s = t;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
	return 0;
}

static int hex_value(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* \uXXXX or \UXXXXXXXX at pos (the backslash): a Unicode scalar value, appended as UTF-8. */
static int parse_unicode_escape(struct toml_parser *p, struct toml_buf *b)
{
	size_t start = p->pos, n = toml_peek_at(p, 1) == 'u' ? 4 : 8;
	uint32_t cp = 0;
	char out[4];
	size_t len;

	for (size_t i = 0; i < n; i++) {
		int h = hex_value(toml_peek_at(p, 2 + i));
		if (h < 0)
			return toml_fail(p, start, "\\%c needs %zu hex digits", n == 4 ? 'u' : 'U',
					 n);
		cp = cp << 4 | (uint32_t)h;
	}
	if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return toml_fail(p, start, "escape U+%04X is not a Unicode scalar value",
				 (unsigned)cp);
	if (cp < 0x80) {
		out[0] = (char)cp;
		len = 1;
	} else if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		len = 2;
	} else if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		len = 3;
	} else {
		out[0] = (char)(0xf0 | cp >> 18);
		out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[3] = (char)(0x80 | (cp & 0x3f));
		len = 4;
	}
	p->pos += 2 + n;
	return buf_append(p, b, out, len);
}

/* An escape at pos (the backslash) of a basic string. TOML 1.0 has no \e and no \xHH. */
static int parse_escape(struct toml_parser *p, struct toml_buf *b)
{
	static const char simple[][2] = {
		{ 'b', '\b' }, { 't', '\t' }, { 'n', '\n' },  { 'f', '\f' },
		{ 'r', '\r' }, { '"', '"' },  { '\\', '\\' },
	};
	int c = toml_peek_at(p, 1);
	char d[32];

	if (c == 'u' || c == 'U')
		return parse_unicode_escape(p, b);
	for (size_t i = 0; i < ELEMENTSOF(simple); i++)
		if (c == simple[i][0]) {
			p->pos += 2;
			return buf_append(p, b, &simple[i][1], 1);
		}
	return toml_fail(p, p->pos, "invalid escape: backslash before %s",
			 toml_describe(p, p->pos + 1, d));
}

/* The characters a string may hold literally, up to the next quote, backslash, line end or
 * control character; appended in one piece. */
static int append_run(struct toml_parser *p, struct toml_buf *b, char quote, bool escapes)
{
	size_t start = p->pos;

	while (p->pos < p->len) {
		unsigned char c = p->buf[p->pos];
		if (c == (unsigned char)quote || (escapes && c == '\\') || is_control(c))
			break;
		p->pos++;
	}
	return buf_append(p, b, p->buf + start, p->pos - start);
}

/* "..." or '...' at pos; the quote says which. */
static int parse_single_line(struct toml_parser *p, struct toml_buf *b)
{
	char quote = p->buf[p->pos], d[32];
	bool escapes = quote == '"';
	int r;

	p->pos++;
	r = buf_append(p, b, "", 0);
	while (r >= 0) {
		r = append_run(p, b, quote, escapes);
		if (r < 0)
			return r;
		int c = toml_peek(p);
		if (c == quote) {
			p->pos++;
			return 0;
		}
		if (c == '\\')
			r = parse_escape(p, b);
		else if (c < 0 || newline_len(p))
			return toml_fail(p, p->pos, "unterminated string: %s before the closing %c",
					 toml_describe(p, p->pos, d), quote);
		else
			return toml_fail(p, p->pos, "%s is not allowed in a string",
					 toml_describe(p, p->pos, d));
	}
	return r;
}

/* A backslash at the end of a line in a """ string: it swallows the line end and all
 * whitespace and line ends after it. Only whitespace may sit between it and the line end. */
static int skip_line_ending_backslash(struct toml_parser *p)
{
	size_t start = p->pos;

	p->pos++;
	toml_skip_ws(p);
	if (!newline_len(p))
		return toml_fail(p, start,
				 "a line-ending backslash must be followed by a line end");
	for (;;) {
		size_t n = newline_len(p);
		if (n)
			p->pos += n;
		else if (toml_peek(p) == ' ' || toml_peek(p) == '\t')
			p->pos++;
		else
			return 0;
	}
}

/* At a run of quotes inside a multi-line string. Three or more close the string: up to two
 * quotes before the closing three belong to the content. Returns 1 when closed. */
static int multi_line_quotes(struct toml_parser *p, struct toml_buf *b, char quote)
{
	const char *quotes = quote == '"' ? "\"\"" : "''";
	size_t n = 0;

	while (n < 5 && toml_peek_at(p, n) == (unsigned char)quote)
		n++;
	if (n < 3) {
		p->pos += n;
		return buf_append(p, b, quotes, n) < 0 ? -ENOMEM : 0;
	}
	p->pos += n;
	if (buf_append(p, b, quotes, n - 3) < 0)
		return -ENOMEM;
	return 1;
}

/* """...""" or '''...''' at pos. A line end right after the opening quotes is dropped, CRLF
 * is stored as LF (the spec lets parsers normalise; profiles written on Windows then mean the
 * same), a bare CR is an error. */
static int parse_multi_line(struct toml_parser *p, struct toml_buf *b)
{
	char quote = p->buf[p->pos], d[32];
	bool escapes = quote == '"';
	size_t start = p->pos;
	int r;

	p->pos += 3;
	p->pos += newline_len(p);
	r = buf_append(p, b, "", 0);
	while (r >= 0) {
		r = append_run(p, b, quote, escapes);
		if (r < 0)
			return r;
		int c = toml_peek(p);
		size_t n = newline_len(p);
		if (c == quote) {
			r = multi_line_quotes(p, b, quote);
			if (r > 0)
				return 0;
		} else if (c == '\\') {
			int next = toml_peek_at(p, 1);
			if (next == ' ' || next == '\t' || next == '\n' || next == '\r')
				r = skip_line_ending_backslash(p);
			else
				r = parse_escape(p, b);
		} else if (n) {
			p->pos += n;
			r = buf_append(p, b, "\n", 1);
		} else if (c < 0)
			return toml_fail(p, start, "unterminated multi-line string");
		else
			return toml_fail(p, p->pos, "%s is not allowed in a string",
					 toml_describe(p, p->pos, d));
	}
	return r;
}

int toml_parse_string(struct toml_parser *p, struct toml_buf *b)
{
	int c = toml_peek(p);

	if (toml_peek_at(p, 1) == c && toml_peek_at(p, 2) == c)
		return parse_multi_line(p, b);
	return parse_single_line(p, b);
}

static bool is_bare_key_char(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || toml_is_digit(c) || c == '_' ||
	       c == '-';
}

static int parse_simple_key(struct toml_parser *p, struct toml_part *part)
{
	_cleanup_(toml_buf_done) struct toml_buf b = { 0 };
	int c = toml_peek(p), r;
	char d[32];

	toml_locate(p, p->pos, &part->line, &part->column);
	if (c == '"' || c == '\'') {
		if (toml_peek_at(p, 1) == c && toml_peek_at(p, 2) == c)
			return toml_fail(p, p->pos, "a key cannot be a multi-line string");
		r = parse_single_line(p, &b);
		if (r < 0)
			return r;
	} else {
		size_t start = p->pos;
		while (p->pos < p->len && is_bare_key_char((unsigned char)p->buf[p->pos]))
			p->pos++;
		if (p->pos == start)
			return toml_fail(p, p->pos, "expected a key, found %s",
					 toml_describe(p, p->pos, d));
		r = buf_append(p, &b, p->buf + start, p->pos - start);
		if (r < 0)
			return r;
	}
	part->s = TAKE_PTR(b.s);
	part->len = b.len;
	return 0;
}

void toml_path_done(struct toml_path *path)
{
	for (size_t i = 0; i < path->n; i++)
		free(path->parts[i].s);
	free(path->parts);
	*path = (struct toml_path){ 0 };
}

int toml_parse_key(struct toml_parser *p, struct toml_path *path)
{
	for (;;) {
		if (path->n == path->cap) {
			size_t cap = path->cap ? path->cap * 2 : 4;
			struct toml_part *parts = reallocarray(path->parts, cap, sizeof(*parts));
			if (!parts)
				return toml_oom(p);
			path->parts = parts;
			path->cap = cap;
		}
		struct toml_part *part = &path->parts[path->n];
		*part = (struct toml_part){ 0 };
		int r = parse_simple_key(p, part);
		if (r < 0)
			return r;
		path->n++;
		toml_skip_ws(p);
		if (toml_peek(p) != '.')
			return 0;
		p->pos++;
		toml_skip_ws(p);
	}
}
