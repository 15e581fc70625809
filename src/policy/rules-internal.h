/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rules-internal: the helpers the rules-*.c parsers share (error messages, a growing output
 * buffer for the formatters, hostnames, IP literals, HTTP tokens). Pure, like rules.h; not for
 * use outside src/policy/rules*.c.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "macro.h"
#include "rules.h"

/* The length to give "%.*s" when a message quotes @n bytes of the input: at most 512, as the
 * caller's buffer truncates the rest anyway. */
#define Q(n) ((int)MIN((size_t)(n), (size_t)512))

/* Write the formatted message into @err (control and non-ASCII bytes become '?', so that the
 * message stays one printable line whatever the input held) and return @code. */
int rules_err(char *err, size_t errlen, int code, const char *fmt, ...) _printf_(4, 5);

/* A malloc'd string the formatters append to; the first failed allocation sticks, and
 * rules_buf_finish() reports it. */
struct rules_buf {
	char *s;
	size_t len, cap;
	int failed;
};

void rules_buf_printf(struct rules_buf *b, const char *fmt, ...) _printf_(2, 3);
/* Hand the string to *@ret ("" when nothing was appended) or free it and return -ENOMEM. */
int rules_buf_finish(struct rules_buf *b, char **ret);

/* An RFC 1123 hostname in @p[0..@n): labels of letters, digits and '-' (1..63, no '-' at
 * either end), at most 253 bytes, one trailing dot allowed and dropped, and a last label that
 * is not a number (getaddrinfo() would read "127.1" or "0x7f" as an address). Writes the
 * lower-cased name to @out. -EINVAL with *@reason set to a static phrase. */
int rules_hostname_parse(const char *p, size_t n, char out[NET_HOST_MAX + 1], const char **reason);

/* An IPv4 dotted quad or an IPv6 literal (no brackets, no zone) in @p[0..@n): *@family and
 * @addr (4 or 16 bytes used, the rest zeroed). -EINVAL. */
int rules_ip_parse(const char *p, size_t n, int *family, uint8_t addr[16]);
/* ::ffff:a.b.c.d/96+N is a.b.c.d/N: a connect() to a mapped address is an IPv4 connection.
 * Rewrites an IPv4-mapped IPv6 address (with *@prefix >= 96, or a plain address when @prefix
 * is NULL) to AF_INET in place; anything else is left alone. */
void rules_ip_unmap(int *family, uint8_t addr[16], unsigned *prefix);
/* Append the inet_ntop() text of the address. */
void rules_ip_format(struct rules_buf *b, int family, const uint8_t *addr);

/* Append "80,443,9000-9005" (no "*" handling: the caller decides what "all" prints as). */
void rules_ports_format(struct rules_buf *b, const struct port_set *set);
int rules_ports_equal(const struct port_set *a, const struct port_set *b);

/* RFC 9110 tchar: the characters of a method or a header name. */
int rules_is_tchar(int c);

/* HTTP host part parsing shared by http_rule_parse() and http_auth_parse(): @method and
 * @target are the first two fields. Fills *@ret on success. */
int rules_http_parse_fields(const char *method, size_t mlen, const char *target, size_t tlen,
			    struct http_rule *ret, char *err, size_t errlen);

static inline int rules_is_space(int c)
{
	return c == ' ' || c == '\t';
}

static inline int rules_is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static inline int rules_is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static inline char rules_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c + ('a' - 'A')) : c;
}

/* Split @s into fields separated by runs of spaces and tabs. Up to @max fields: @start[i] and
 * @len[i]. Returns the number of fields found, or @max + 1 when there are more. */
size_t rules_split_fields(const char *s, size_t max, const char **start, size_t *len);
