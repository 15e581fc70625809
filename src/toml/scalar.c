/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * toml scalars: booleans, integers (decimal, 0x, 0o, 0b, underscores between digits, int64
 * range), floats (with inf and nan) and the four datetime kinds with their range checks. The
 * grammar is checked here byte by byte; conversions happen only on text that passed it.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "toml/toml-internal.h"

static bool is_digit_of(int c, unsigned radix)
{
	switch (radix) {
	case 2:
		return c == '0' || c == '1';
	case 8:
		return c >= '0' && c <= '7';
	case 16:
		return toml_is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
	default:
		return toml_is_digit(c);
	}
}

/* Digits of @radix from s[*i], with single underscores between digits. Returns the number of
 * digits (0: none at s[*i]) or -1 for a misplaced underscore; *i ends after the run. */
static int scan_digits(const char *s, size_t n, size_t *i, unsigned radix)
{
	int count = 0;

	if (*i >= n || !is_digit_of((unsigned char)s[*i], radix))
		return 0;
	while (*i < n) {
		if (is_digit_of((unsigned char)s[*i], radix)) {
			count++;
			(*i)++;
		} else if (s[*i] == '_') {
			if (*i + 1 >= n || !is_digit_of((unsigned char)s[*i + 1], radix))
				return -1;
			(*i)++;
		} else
			break;
	}
	return count;
}

/* The characters a number token may contain; the grammar check below decides what it is. */
static bool is_number_char(int c)
{
	return toml_is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       c == '+' || c == '-' || c == '.';
}

static int digit_value(int c)
{
	if (c >= 'a')
		return c - 'a' + 10;
	if (c >= 'A')
		return c - 'A' + 10;
	return c - '0';
}

/* Accumulates the (already checked) digits of @s as a magnitude no larger than @limit. */
static int integer_value(const char *s, size_t n, unsigned radix, uint64_t limit, uint64_t *ret)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '_')
			continue;
		unsigned d = (unsigned)digit_value((unsigned char)s[i]);
		if (v > (limit - d) / radix)
			return -ERANGE;
		v = v * radix + d;
	}
	*ret = v;
	return 0;
}

static int make_integer(struct toml_parser *p, size_t start, const char *s, size_t n,
			unsigned radix, bool negative, struct toml_value **ret)
{
	uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, v;

	if (integer_value(s, n, radix, limit, &v) < 0)
		return toml_fail(p, start, "integer out of range (64 bits, signed)");
	struct toml_value *val = toml_value_new(p, TOML_INTEGER, start);
	if (!val)
		return toml_oom(p);
	/* -(2^63) is not representable as a positive int64; negate in unsigned arithmetic. */
	val->integer = negative ? (int64_t)(0 - v) : (int64_t)v;
	*ret = val;
	return 0;
}

/* Converts a float that passed the grammar check. strtod_l() with the C locale: the caller's
 * LC_NUMERIC must not turn "3.14" into 3. Underscores are dropped first. */
static int make_float(struct toml_parser *p, size_t start, const char *s, size_t n,
		      struct toml_value **ret)
{
	_cleanup_free_ char *copy = malloc(n + 1);
	size_t k = 0;

	if (!copy)
		return toml_oom(p);
	for (size_t i = 0; i < n; i++)
		if (s[i] != '_')
			copy[k++] = s[i];
	copy[k] = '\0';
	if (!p->c_locale) {
		p->c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
		if (!p->c_locale)
			return toml_oom(p);
	}
	double d = strtod_l(copy, NULL, p->c_locale);
	if (isinf(d))
		return toml_fail(p, start, "float out of range (64-bit IEEE 754)");
	struct toml_value *val = toml_value_new(p, TOML_FLOAT, start);
	if (!val)
		return toml_oom(p);
	val->fp = d;
	*ret = val;
	return 0;
}

static int make_special_float(struct toml_parser *p, size_t start, bool inf, bool negative,
			      struct toml_value **ret)
{
	struct toml_value *val = toml_value_new(p, TOML_FLOAT, start);

	if (!val)
		return toml_oom(p);
	if (inf)
		val->fp = negative ? -INFINITY : INFINITY;
	else
		val->fp = negative ? -NAN : NAN;
	*ret = val;
	return 0;
}

/* The token p->buf[start, pos) is no number. A token that does not start like one is more
 * likely a word that lacks its quotes. */
static int bad_number(struct toml_parser *p, size_t start)
{
	size_t n = p->pos - start, sign = p->buf[start] == '+' || p->buf[start] == '-';
	bool numeric = n == sign || toml_is_digit((unsigned char)p->buf[start + sign]);

	return toml_fail(p, start, "invalid %s '%.*s%s'", numeric ? "number" : "value",
			 (int)MIN(n, 40u), p->buf + start, n > 40 ? "..." : "");
}

/* A decimal integer or a float: [sign] int [. digits] [e [sign] digits], no leading zeros in
 * the integer part. The token is p->buf[start, pos); @sign is its length of sign (0 or 1). */
static int parse_decimal(struct toml_parser *p, size_t start, size_t sign, struct toml_value **ret)
{
	const char *s = p->buf + start + sign;
	size_t n = p->pos - start - sign, i = 0;
	bool is_float = false;
	int k = scan_digits(s, n, &i, 10);

	if (k <= 0)
		return bad_number(p, start);
	if (s[0] == '0' && k > 1)
		return toml_fail(p, start, "leading zeros are not allowed in a number");
	if (i < n && s[i] == '.') {
		i++;
		if (scan_digits(s, n, &i, 10) <= 0)
			return bad_number(p, start);
		is_float = true;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if (scan_digits(s, n, &i, 10) <= 0)
			return bad_number(p, start);
		is_float = true;
	}
	if (i != n)
		return bad_number(p, start);
	if (is_float)
		return make_float(p, start, p->buf + start, n + sign, ret);
	return make_integer(p, start, s, n, 10, sign && p->buf[start] == '-', ret);
}

/* A number token at pos: a run of the characters numbers are made of, then checked against
 * the grammar as a whole, so "1__2", "0x_1" or "1e" fail with the token's position. */
static int parse_number(struct toml_parser *p, struct toml_value **ret)
{
	static const struct {
		char prefix;
		unsigned radix;
	} radixes[] = { { 'x', 16 }, { 'o', 8 }, { 'b', 2 } };
	size_t start = p->pos, end = p->pos;
	char d[32];

	while (end < p->len && is_number_char((unsigned char)p->buf[end]))
		end++;
	const char *s = p->buf + start;
	size_t n = end - start;
	bool has_sign = n > 0 && (s[0] == '+' || s[0] == '-'), negative = has_sign && s[0] == '-';
	if (n == 0)
		return toml_fail(p, start, "expected a value, found %s",
				 toml_describe(p, start, d));
	p->pos = end;

	if (n - has_sign == 3 &&
	    (memcmp(s + has_sign, "inf", 3) == 0 || memcmp(s + has_sign, "nan", 3) == 0))
		return make_special_float(p, start, s[has_sign] == 'i', negative, ret);
	if (!has_sign && n > 2 && s[0] == '0')
		for (size_t r = 0; r < ELEMENTSOF(radixes); r++) {
			if (s[1] != radixes[r].prefix)
				continue;
			size_t i = 2;
			if (scan_digits(s, n, &i, radixes[r].radix) <= 0 || i != n)
				break;
			return make_integer(p, start, s + 2, n - 2, radixes[r].radix, false, ret);
		}
	return parse_decimal(p, start, has_sign, ret);
}

/* The @n decimal digits at p->buf[off] as a number, or -1 (also when the input ends first). */
static int fixed_digits(const struct toml_parser *p, size_t off, size_t n)
{
	int v = 0;

	for (size_t i = 0; i < n; i++) {
		if (off + i >= p->len || !toml_is_digit((unsigned char)p->buf[off + i]))
			return -1;
		v = v * 10 + (p->buf[off + i] - '0');
	}
	return v;
}

static int days_in_month(int year, int month)
{
	static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

	return month == 2 && leap ? 29 : days[month - 1];
}

/* YYYY-MM-DD at pos. */
static int parse_date(struct toml_parser *p, struct toml_datetime *dt)
{
	size_t s = p->pos;

	dt->year = fixed_digits(p, s, 4);
	dt->month = fixed_digits(p, s + 5, 2);
	dt->day = fixed_digits(p, s + 8, 2);
	if (dt->year < 0 || dt->month < 0 || dt->day < 0 || p->buf[s + 4] != '-' ||
	    p->buf[s + 7] != '-')
		return toml_fail(p, s, "invalid date (expected YYYY-MM-DD)");
	if (dt->month < 1 || dt->month > 12)
		return toml_fail(p, s + 5, "month %02d out of range", dt->month);
	if (dt->day < 1 || dt->day > days_in_month(dt->year, dt->month))
		return toml_fail(p, s + 8, "day %02d out of range for %04d-%02d", dt->day, dt->year,
				 dt->month);
	p->pos += 10;
	return 0;
}

/* HH:MM:SS[.fraction] at pos. TOML 1.0 requires the seconds. */
static int parse_time(struct toml_parser *p, struct toml_datetime *dt)
{
	size_t s = p->pos;

	dt->hour = fixed_digits(p, s, 2);
	dt->minute = fixed_digits(p, s + 3, 2);
	dt->second = fixed_digits(p, s + 6, 2);
	if (dt->hour < 0 || dt->minute < 0 || dt->second < 0 || p->buf[s + 2] != ':' ||
	    p->buf[s + 5] != ':')
		return toml_fail(p, s, "invalid time (expected HH:MM:SS)");
	if (dt->hour > 23)
		return toml_fail(p, s, "hour %02d out of range", dt->hour);
	if (dt->minute > 59)
		return toml_fail(p, s + 3, "minute %02d out of range", dt->minute);
	if (dt->second > 60)
		return toml_fail(p, s + 6, "second %02d out of range", dt->second);
	p->pos += 8;
	if (toml_peek(p) != '.')
		return 0;
	p->pos++;
	if (!toml_is_digit(toml_peek(p)))
		return toml_fail(p, p->pos,
				 "expected digits after the decimal point of the seconds");
	/* Keep nine digits (nanoseconds) and ignore the rest: the spec lets implementations
	 * truncate precision they cannot hold. */
	while (toml_is_digit(toml_peek(p))) {
		if (dt->frac_digits < 9) {
			dt->nanosecond = dt->nanosecond * 10 + (uint32_t)(p->buf[p->pos] - '0');
			dt->frac_digits++;
		}
		p->pos++;
	}
	for (unsigned i = dt->frac_digits; i < 9; i++)
		dt->nanosecond *= 10;
	return 0;
}

/* Z or +HH:MM / -HH:MM at pos; returns 1 when there was one. */
static int parse_offset(struct toml_parser *p, struct toml_datetime *dt)
{
	size_t s = p->pos;
	int c = toml_peek(p);

	if (c == 'Z' || c == 'z') {
		dt->offset_z = 1;
		p->pos++;
		return 1;
	}
	if (c != '+' && c != '-')
		return 0;
	int h = fixed_digits(p, s + 1, 2), m = fixed_digits(p, s + 4, 2);
	if (h < 0 || m < 0 || p->buf[s + 3] != ':')
		return toml_fail(p, s, "invalid offset (expected Z, +HH:MM or -HH:MM)");
	if (h > 23 || m > 59)
		return toml_fail(p, s, "offset %c%02d:%02d out of range", c, h, m);
	dt->offset_minutes = (c == '-' ? -1 : 1) * (h * 60 + m);
	p->pos += 6;
	return 1;
}

/* A date, date-time (T, t or a space between) or a time at pos. */
static int parse_datetime(struct toml_parser *p, bool has_date, struct toml_value **ret)
{
	struct toml_datetime dt = { 0 };
	size_t start = p->pos;
	uint8_t type = TOML_TIME_LOCAL;
	int r;

	if (has_date) {
		r = parse_date(p, &dt);
		if (r < 0)
			return r;
		type = TOML_DATE_LOCAL;
		int c = toml_peek(p);
		/* A space separates a time only when one follows; "d = 2000-01-01 # x" is a date.
		 */
		if (c == 'T' || c == 't' || (c == ' ' && toml_is_digit(toml_peek_at(p, 1)))) {
			p->pos++;
			type = TOML_DATETIME_LOCAL;
		}
	}
	if (type != TOML_DATE_LOCAL) {
		r = parse_time(p, &dt);
		if (r < 0)
			return r;
	}
	if (type == TOML_DATETIME_LOCAL) {
		r = parse_offset(p, &dt);
		if (r < 0)
			return r;
		if (r > 0)
			type = TOML_DATETIME;
	}
	struct toml_value *v = toml_value_new(p, type, start);
	if (!v)
		return toml_oom(p);
	v->dt = dt;
	*ret = v;
	return 0;
}

static bool digits_then(const struct toml_parser *p, size_t n, char sep)
{
	for (size_t i = 0; i < n; i++)
		if (!toml_is_digit(toml_peek_at(p, i)))
			return false;
	return toml_peek_at(p, n) == (unsigned char)sep;
}

int toml_parse_scalar(struct toml_parser *p, struct toml_value **ret)
{
	static const struct {
		const char *word;
		size_t len;
		int value;
	} bools[] = { { "true", 4, 1 }, { "false", 5, 0 } };

	for (size_t i = 0; i < ELEMENTSOF(bools); i++)
		if (p->len - p->pos >= bools[i].len &&
		    memcmp(p->buf + p->pos, bools[i].word, bools[i].len) == 0) {
			struct toml_value *v = toml_value_new(p, TOML_BOOL, p->pos);
			if (!v)
				return toml_oom(p);
			v->boolean = bools[i].value;
			p->pos += bools[i].len;
			*ret = v;
			return 0;
		}
	if (digits_then(p, 4, '-'))
		return parse_datetime(p, true, ret);
	if (digits_then(p, 2, ':'))
		return parse_datetime(p, false, ret);
	return parse_number(p, ret);
}
