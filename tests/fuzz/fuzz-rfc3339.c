/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-rfc3339: rfc3339_parse() over arbitrary bytes, and rfc3339_format() over the input's
 * first 12 bytes read as seconds and nanoseconds. Invariants: the errno is a documented one and
 * the message one printable line; an accepted date-time lies in the years 0000-9999 with
 * nanoseconds below 10^9, formats, and reparses to the same instant, its text being a fixed
 * point; a formatted instant parses back to itself, and the formatter refuses only what is out
 * of range.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MIN_SEC (-62167219200LL)
#define MAX_SEC 253402300799LL

static void round_trip(int64_t sec, uint32_t nsec)
{
	char buf[RFC3339_BUF_SIZE], buf2[RFC3339_BUF_SIZE], err[256] = "";
	int64_t sec2;
	uint32_t nsec2;

	int k = rfc3339_format(sec, nsec, buf);
	if (k < 0) {
		if (k != -ERANGE || (sec >= MIN_SEC && sec <= MAX_SEC && nsec < 1000000000u))
			abort();
		return;
	}
	if (strlen(buf) != (nsec ? 30u : 20u))
		abort();
	if (rfc3339_parse(buf, &sec2, &nsec2, err, sizeof(err)) < 0 || sec2 != sec || nsec2 != nsec)
		abort();
	if (rfc3339_format(sec2, nsec2, buf2) < 0 || strcmp(buf, buf2) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), err[256] = "";
	int64_t sec = 0;
	uint32_t nsec = 0;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	int k = rfc3339_parse(s, &sec, &nsec, err, sizeof(err));
	if (k < 0) {
		if ((k != -EINVAL && k != -ERANGE) || !err[0] || strchr(err, '\n'))
			abort();
		if (sec != 0 || nsec != 0)
			abort();
	} else {
		if (sec < MIN_SEC || sec > MAX_SEC || nsec >= 1000000000u)
			abort();
		round_trip(sec, nsec);
	}
	if (size >= 12) {
		memcpy(&sec, data, 8);
		memcpy(&nsec, data + 8, 4);
		round_trip(sec, nsec);
		/* And near the supported range, where arithmetic slips would show. */
		round_trip(MIN_SEC + (int64_t)(nsec % 1000000), nsec % 1000000000u);
		round_trip(MAX_SEC - (int64_t)(nsec % 1000000), nsec % 1000000000u);
		round_trip((int64_t)(sec % (MAX_SEC - MIN_SEC + 1)), 0);
	}
	free(s);
	return 0;
}
