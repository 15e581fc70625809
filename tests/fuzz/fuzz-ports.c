/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-ports: parse_ports over arbitrary bytes, in one or two calls on the same set (the input
 * is split at its first newline) so that accumulation is fuzzed too. Invariants: every range has
 * lo <= hi; "*" never coexists with ranges; a failed call leaves the set exactly as it was; the
 * errno is one of the documented ones. The set is freed after.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_set(const struct port_set *set)
{
	if (set->all && set->n)
		abort();
	if (set->n && !set->ranges)
		abort();
	for (size_t i = 0; i < set->n; i++)
		if (set->ranges[i].lo > set->ranges[i].hi)
			abort();
}

static void one_call(const char *s, struct port_set *set)
{
	struct port_set before = *set;
	struct port_range *copy = NULL;

	if (before.n) {
		copy = malloc(before.n * sizeof(*copy));
		if (!copy)
			return;
		memcpy(copy, set->ranges, before.n * sizeof(*copy));
	}
	int r = parse_ports(s, set);
	if (r != 0 && r != -EINVAL && r != -ERANGE && r != -ENOMEM)
		abort();
	if (r < 0) {
		if (set->n != before.n || set->all != before.all)
			abort();
		if (before.n && memcmp(copy, set->ranges, before.n * sizeof(*copy)) != 0)
			abort();
	} else {
		/* Success never drops what was there, and only a "*" call adds no range. */
		if (set->n < before.n)
			abort();
		if (before.n && memcmp(copy, set->ranges, before.n * sizeof(*copy)) != 0)
			abort();
		if (set->n == before.n && !set->all)
			abort();
	}
	check_set(set);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';

	struct port_set set = { 0 };
	char *nl = strchr(s, '\n');
	if (nl)
		*nl = '\0';
	one_call(s, &set);
	if (nl)
		one_call(nl + 1, &set);
	port_set_done(&set);
	if (set.n || set.ranges || set.all)
		abort();
	free(s);
	return 0;
}
