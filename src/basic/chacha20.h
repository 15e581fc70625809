/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * chacha20: the ChaCha20 block function of RFC 8439 (20 rounds, 32-byte key, 96-bit nonce,
 * 32-bit block counter), as a keystream generator: what random_seed's streams are made of.
 * Not used to encrypt anything.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct chacha20 {
	uint32_t state[16];
	uint8_t block[64];
	size_t used; /* bytes of @block already given out (64: none left) */
};

/* Start the keystream of @key and @nonce at block @counter. */
void chacha20_init(struct chacha20 *c, const uint8_t key[32], const uint8_t nonce[12],
		   uint32_t counter);
/* The next @len bytes of the keystream, in @out. */
void chacha20_stream(struct chacha20 *c, void *out, size_t len);
