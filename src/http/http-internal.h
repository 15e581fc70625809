/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * http-internal: the character classes and the error helper that http-parse.c and
 * http-path.c share. ASCII only, whatever the locale: the grammar is bytes, not text.
 */
#pragma once

#include <stddef.h>
#include <string.h>

#include "macro.h"

/* RFC 9110 tchar: the bytes of a token (a method, a header name, a coding). */
static inline int http_is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return 1;
	return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static inline int http_is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* The value of a hex digit, or -1. */
static inline int http_hex(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static inline char http_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c + ('a' - 'A')) : c;
}

static inline int http_is_ows(unsigned char c)
{
	return c == ' ' || c == '\t';
}

/* Case-insensitive (ASCII) equality of @p[0..@n) and the NUL-terminated @s. */
int http_ascii_eq(const char *p, size_t n, const char *s);

/* Write the message into @err (may be NULL; bytes outside printable ASCII become '?', so that
 * it stays one line) and return -EBADMSG. */
int http_fail(char *err, size_t errlen, const char *fmt, ...) _printf_(3, 4);
