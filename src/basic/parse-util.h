/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * parse-util: strict parsers for the small grammars of the policy (unsigned integers, sizes,
 * port lists, CPU lists). Pure functions over a string: no syscalls, no globals, fuzzed.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* A decimal unsigned integer, no sign, no spaces, no leading "0x". -EINVAL or -ERANGE. */
int parse_uint64(const char *s, uint64_t *ret);
int parse_uint32(const char *s, uint32_t *ret);

/* A size: decimal bytes, or a number with one of the binary suffixes K, M, G, T (either case):
 * "512M", "1G", "4096". -EINVAL or -ERANGE. */
int parse_size(const char *s, uint64_t *ret);
/* @v as a user writes a size: the largest binary suffix that divides it exactly ("50M", "1G"),
 * else plain bytes ("1000"); what parse_size reads back as @v. */
void format_size(uint64_t v, char *buf, size_t size);

struct port_range {
	uint16_t lo, hi;
};

struct port_set {
	int all; /* "*" */
	size_t n;
	struct port_range *ranges;
};

/* "8080", "9000-9005", "80,443,8000-8005" (spaces around entries allowed), or "*" alone.
 * Ranges are appended to @set (so several strings accumulate); "*" mixed with ports, in this
 * string or across calls, is -EINVAL. -EINVAL, -ERANGE, -ENOMEM. */
int parse_ports(const char *s, struct port_set *set);
void port_set_done(struct port_set *set);

/* "0,1", "0-3,8": CPU numbers below @max. Calls @add for each, in order; on a syntax error
 * @add may already have been called for the entries before it, so callers collect into scratch
 * state. -EINVAL or -ERANGE. */
int parse_cpu_list(const char *s, uint32_t max, int (*add)(uint32_t cpu, void *userdata),
		   void *userdata);
