/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * parse-util: strict parsers for integers, sizes, ports and CPU lists. Pure: no syscalls.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "parse-util.h"

/* Parse leading decimal digits of @s into @ret; *@end points past them. */
static int parse_digits(const char *s, const char **end, uint64_t *ret)
{
	uint64_t v = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*end = p;
	*ret = v;
	return 0;
}

int parse_uint64(const char *s, uint64_t *ret)
{
	const char *end;
	uint64_t v;

	if (!s)
		return -EINVAL;
	int r = parse_digits(s, &end, &v);
	if (r < 0)
		return r;
	if (*end)
		return -EINVAL;
	*ret = v;
	return 0;
}

int parse_uint32(const char *s, uint32_t *ret)
{
	uint64_t v;
	int r = parse_uint64(s, &v);
	if (r < 0)
		return r;
	if (v > UINT32_MAX)
		return -ERANGE;
	*ret = (uint32_t)v;
	return 0;
}

void format_size(uint64_t v, char *buf, size_t size)
{
	static const char units[] = "KMGT";

	for (int u = 3; u >= 0; u--) {
		unsigned shift = 10 * (unsigned)(u + 1);
		if (v && v % (1ULL << shift) == 0) {
			snprintf(buf, size, "%llu%c", (unsigned long long)(v >> shift), units[u]);
			return;
		}
	}
	snprintf(buf, size, "%llu", (unsigned long long)v);
}

int parse_size(const char *s, uint64_t *ret)
{
	static const struct {
		char suffix;
		unsigned shift;
	} units[] = {
		{ 'K', 10 },
		{ 'M', 20 },
		{ 'G', 30 },
		{ 'T', 40 },
	};
	const char *end;
	uint64_t v;

	if (!s)
		return -EINVAL;
	int r = parse_digits(s, &end, &v);
	if (r < 0)
		return r;
	if (!*end) {
		*ret = v;
		return 0;
	}
	if (end[1])
		return -EINVAL;
	for (size_t i = 0; i < ELEMENTSOF(units); i++) {
		if (*end != units[i].suffix && *end != units[i].suffix + ('a' - 'A'))
			continue;
		if (v > (UINT64_MAX >> units[i].shift))
			return -ERANGE;
		*ret = v << units[i].shift;
		return 0;
	}
	return -EINVAL;
}

static const char *skip_spaces(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static int parse_port(const char **p, uint16_t *ret)
{
	uint64_t v;
	int r = parse_digits(*p, p, &v);
	if (r < 0)
		return r;
	if (v > 65535)
		return -ERANGE;
	*ret = (uint16_t)v;
	return 0;
}

static int port_set_add(struct port_set *set, uint16_t lo, uint16_t hi)
{
	struct port_range *n = realloc(set->ranges, (set->n + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	n[set->n++] = (struct port_range){ lo, hi };
	set->ranges = n;
	return 0;
}

int parse_ports(const char *s, struct port_set *set)
{
	if (!s)
		return -EINVAL;
	const char *p = skip_spaces(s);
	if (*p == '*') {
		if (*skip_spaces(p + 1) || set->n > 0)
			return -EINVAL;
		set->all = 1;
		return 0;
	}
	if (set->all || !*p)
		return -EINVAL;

	size_t before = set->n;
	for (;;) {
		uint16_t lo, hi;
		int r = parse_port(&p, &lo);
		if (r == 0) {
			hi = lo;
			if (*p == '-') {
				p++;
				r = parse_port(&p, &hi);
				if (r == 0 && hi < lo)
					r = -EINVAL;
			}
		}
		if (r == 0)
			r = port_set_add(set, lo, hi);
		if (r < 0) {
			set->n = before;
			return r;
		}
		p = skip_spaces(p);
		if (!*p)
			return 0;
		if (*p != ',') {
			set->n = before;
			return -EINVAL;
		}
		p = skip_spaces(p + 1);
	}
}

void port_set_done(struct port_set *set)
{
	free(set->ranges);
	*set = (struct port_set){ 0 };
}

int parse_cpu_list(const char *s, uint32_t max, int (*add)(uint32_t cpu, void *userdata),
		   void *userdata)
{
	if (!s || !*s)
		return -EINVAL;
	const char *p = s;
	for (;;) {
		uint64_t lo, hi;
		int r = parse_digits(p, &p, &lo);
		if (r < 0)
			return r;
		hi = lo;
		if (*p == '-') {
			r = parse_digits(p + 1, &p, &hi);
			if (r < 0)
				return r;
			if (hi < lo)
				return -EINVAL;
		}
		if (hi >= max)
			return -ERANGE;
		for (uint64_t c = lo; c <= hi; c++) {
			r = add((uint32_t)c, userdata);
			if (r < 0)
				return r;
		}
		if (!*p)
			return 0;
		if (*p != ',')
			return -EINVAL;
		p++;
	}
}
