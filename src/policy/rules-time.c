/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rules-time: RFC 3339 date-times for [determinism].time_start, to and from Unix seconds plus
 * nanoseconds. Proleptic Gregorian arithmetic only: no time zone database, no locale, no clock.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rules-internal.h"

/* 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z in Unix seconds: the years RFC 3339 writes. */
#define RFC3339_MIN_SEC (-62167219200LL)
#define RFC3339_MAX_SEC 253402300799LL

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static unsigned days_in_month(unsigned y, unsigned m)
{
	static const unsigned char days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return days[m - 1] + (m == 2 && leap);
}

/* Exactly @n digits at *@p, then the byte @sep (none when '\0'). */
static int take(const char **p, unsigned n, char sep, unsigned *ret)
{
	unsigned v = 0;

	for (unsigned i = 0; i < n; i++) {
		if (!rules_is_digit((*p)[i]))
			return -EINVAL;
		v = v * 10 + (unsigned)((*p)[i] - '0');
	}
	if (sep && (*p)[n] != sep)
		return -EINVAL;
	*p += n + (sep ? 1 : 0);
	*ret = v;
	return 0;
}

struct rfc3339_fields {
	unsigned year, month, day, hour, min, sec, nsec;
	int off_sign; /* +1 or -1 */
	unsigned off_hour, off_min;
};

/* "hh:mm:ss[.f...]" then the offset; at *@p after the date and its separator. */
static int parse_time_part(const char *s, const char *p, struct rfc3339_fields *f, char *err,
			   size_t errlen)
{
	static const char shape[] = "\"%s\" is not an RFC 3339 date-time (YYYY-MM-DDTHH:MM:SS, "
				    "then Z or +hh:mm)";

	if (take(&p, 2, ':', &f->hour) < 0 || take(&p, 2, ':', &f->min) < 0 ||
	    take(&p, 2, '\0', &f->sec) < 0)
		return rules_err(err, errlen, -EINVAL, shape, s);
	if (*p == '.') {
		unsigned n = 0;
		for (p++; rules_is_digit(*p); p++, n++) {
			if (n == 9)
				return rules_err(err, errlen, -EINVAL,
						 "more than 9 fractional digits in \"%s\"", s);
			f->nsec = f->nsec * 10 + (unsigned)(*p - '0');
		}
		if (n == 0)
			return rules_err(err, errlen, -EINVAL, "no digit after '.' in \"%s\"", s);
		for (; n < 9; n++)
			f->nsec *= 10;
	}
	if (*p == '\0')
		return rules_err(err, errlen, -EINVAL, "needs an offset (Z or +hh:mm): \"%s\"", s);
	f->off_sign = 1;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		f->off_sign = *p++ == '-' ? -1 : 1;
		if (take(&p, 2, ':', &f->off_hour) < 0 || take(&p, 2, '\0', &f->off_min) < 0)
			return rules_err(err, errlen, -EINVAL,
					 "invalid offset in \"%s\" (Z, +hh:mm or -hh:mm)", s);
	} else {
		return rules_err(err, errlen, -EINVAL,
				 "needs an offset (Z or +hh:mm), not \"%s\", in \"%s\"", p, s);
	}
	if (*p)
		return rules_err(err, errlen, -EINVAL,
				 "unexpected \"%s\" after the offset in \"%s\"", p, s);
	return 0;
}

static int check_ranges(const char *s, const struct rfc3339_fields *f, char *err, size_t errlen)
{
	const struct {
		const char *name;
		unsigned v, lo, hi;
	} checks[] = {
		{ "month", f->month, 1, 12 },
		{ "day", f->day, 1,
		  f->month >= 1 && f->month <= 12 ? days_in_month(f->year, f->month) : 31 },
		{ "hour", f->hour, 0, 23 },
		{ "minute", f->min, 0, 59 },
		{ "second", f->sec, 0, 60 },
		{ "offset hour", f->off_hour, 0, 23 },
		{ "offset minute", f->off_min, 0, 59 },
	};

	for (size_t i = 0; i < ELEMENTSOF(checks); i++)
		if (checks[i].v < checks[i].lo || checks[i].v > checks[i].hi)
			return rules_err(
				err, errlen, -ERANGE, "%s %02u out of range (%02u-%02u) in \"%s\"",
				checks[i].name, checks[i].v, checks[i].lo, checks[i].hi, s);
	return 0;
}

int rfc3339_parse(const char *s, int64_t *ret_sec, uint32_t *ret_nsec, char *err, size_t errlen)
{
	struct rfc3339_fields f = { 0 };
	const char *p = s;

	if (!s)
		return rules_err(err, errlen, -EINVAL, "missing date-time");
	if (take(&p, 4, '-', &f.year) < 0 || take(&p, 2, '-', &f.month) < 0 ||
	    take(&p, 2, '\0', &f.day) < 0 || (*p != 'T' && *p != 't' && *p != ' '))
		return rules_err(err, errlen, -EINVAL,
				 "\"%s\" is not an RFC 3339 date-time (YYYY-MM-DDTHH:MM:SS, then Z "
				 "or +hh:mm)",
				 s);
	int k = parse_time_part(s, p + 1, &f, err, errlen);
	if (k >= 0)
		k = check_ranges(s, &f, err, errlen);
	if (k < 0)
		return k;
	/* A leap second (:60) is the next minute's :00: POSIX time does not count them. */
	int64_t sec = days_from_civil(f.year, f.month, f.day) * 86400 + f.hour * 3600 + f.min * 60 +
		      f.sec;
	sec -= f.off_sign * (int64_t)(f.off_hour * 3600 + f.off_min * 60);
	if (sec < RFC3339_MIN_SEC || sec > RFC3339_MAX_SEC)
		return rules_err(err, errlen, -ERANGE,
				 "\"%s\" is outside the years 0000-9999 once converted to UTC", s);
	*ret_sec = sec;
	*ret_nsec = f.nsec;
	return 0;
}

int rfc3339_format(int64_t sec, uint32_t nsec, char buf[static RFC3339_BUF_SIZE])
{
	int64_t y;
	unsigned m, d;

	if (sec < RFC3339_MIN_SEC || sec > RFC3339_MAX_SEC || nsec >= 1000000000u)
		return -ERANGE;
	/* Floor division, so that instants before 1970 land on the right day. */
	int64_t days = sec / 86400 - (sec % 86400 < 0);
	unsigned rem = (unsigned)(sec - days * 86400);
	civil_from_days(days, &y, &m, &d);
	int n = snprintf(buf, RFC3339_BUF_SIZE, "%04u-%02u-%02uT%02u:%02u:%02u",
			 (unsigned)y % 10000, m % 100, d % 100, rem / 3600 % 100, rem / 60 % 60,
			 rem % 60);
	if (nsec)
		n += snprintf(buf + n, RFC3339_BUF_SIZE - (size_t)n, ".%09u", nsec % 1000000000u);
	snprintf(buf + n, RFC3339_BUF_SIZE - (size_t)n, "Z");
	return 0;
}
