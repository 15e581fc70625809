/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-size: parse_size over arbitrary bytes. Besides memory safety, checks the contract: the
 * result is written only on success, a success is digits plus at most one K/M/G/T suffix, and
 * the value is the digits shifted by the suffix (so it never wrapped).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned suffix_shift(char c)
{
	switch (c) {
	case 'k':
	case 'K':
		return 10;
	case 'm':
	case 'M':
		return 20;
	case 'g':
	case 'G':
		return 30;
	case 't':
	case 'T':
		return 40;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';

	const uint64_t sentinel = 0xa5a5a5a5a5a5a5a5ULL;
	uint64_t v = sentinel;
	int r = parse_size(s, &v);

	if (r != 0 && r != -EINVAL && r != -ERANGE)
		abort();
	if (r < 0) {
		if (v != sentinel) /* ret_* written on failure */
			abort();
		free(s);
		return 0;
	}

	/* Success: digits, then at most one suffix, then the end of the string. */
	size_t n = strspn(s, "0123456789");
	if (n == 0)
		abort();
	unsigned shift = 0;
	if (s[n]) {
		shift = suffix_shift(s[n]);
		if (!shift || s[n + 1])
			abort();
	}
	/* Recompute without overflow: the digits must fit in 64 - shift bits. */
	uint64_t d = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t digit = (uint64_t)(s[i] - '0');
		if (d > (UINT64_MAX - digit) / 10) /* overflowed, yet accepted */
			abort();
		d = d * 10 + digit;
	}
	if (shift && d > (UINT64_MAX >> shift))
		abort();
	if (v != d << shift)
		abort();
	free(s);
	return 0;
}
