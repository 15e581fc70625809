/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sha256: SHA-256 (FIPS 180-4), for the digests of a copy-on-write change set. In-house, like
 * chacha20: linking libcrypto would cost every sandbox's start its load time.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t len; /* bytes hashed so far */
	uint8_t buf[64];
	size_t used;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
void sha256_final(struct sha256 *s, uint8_t out[32]);
/* The digest of what @fd reads from its start (pread: its offset does not move). -errno. */
int sha256_fd(int fd, uint8_t out[32]);
