/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-cpulist: parse_cpu_list over arbitrary bytes. The first byte picks the CPU limit (1..256)
 * so the range checks are fuzzed at several bounds; the rest is the list. Invariants: add is
 * only called with CPUs below the limit; the errno is a documented one (or add's own).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct acc {
	uint32_t max;
	size_t calls;
};

static int add(uint32_t cpu, void *userdata)
{
	struct acc *a = userdata;

	if (cpu >= a->max)
		abort();
	/* A long list may name the same CPUs many times; stop it like a real caller would. */
	if (++a->calls > 100000)
		return -E2BIG;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	struct acc a = { .max = (uint32_t)data[0] + 1 };
	char *s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';

	int r = parse_cpu_list(s, a.max, add, &a);
	if (r != 0 && r != -EINVAL && r != -ERANGE && r != -E2BIG)
		abort();
	if (r == 0 && a.calls == 0) /* a successful list names at least one CPU */
		abort();
	free(s);
	return 0;
}
