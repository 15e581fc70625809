/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-chacha20: the block function against RFC 8439's test vectors (2.3.2, and 2.4.2's
 * keystream under counter 1), and the stream across block boundaries.
 */
#include <string.h>

#include "basic/chacha20.h"
#include "tap.h"

static void test_rfc8439(void)
{
	uint8_t key[32], out[64], again[64];
	const uint8_t nonce[12] = { 0, 0, 0, 0x09, 0, 0, 0, 0x4a, 0, 0, 0, 0 };
	/* RFC 8439 2.3.2: the serialized block for key 00..1f, this nonce, counter 1. */
	static const uint8_t expect[64] = {
		0x10, 0xf1, 0xe7, 0xe4, 0xd1, 0x3b, 0x59, 0x15, 0x50, 0x0f, 0xdd, 0x1f, 0xa3,
		0x20, 0x71, 0xc4, 0xc7, 0xd1, 0xf4, 0xc7, 0x33, 0xc0, 0x68, 0x03, 0x04, 0x22,
		0xaa, 0x9a, 0xc3, 0xd4, 0x6c, 0x4e, 0xd2, 0x82, 0x64, 0x46, 0x07, 0x9f, 0xaa,
		0x09, 0x14, 0xc2, 0xd7, 0x05, 0xd9, 0x8b, 0x02, 0xa2, 0xb5, 0x12, 0x9c, 0xd1,
		0xde, 0x16, 0x4e, 0xb9, 0xcb, 0xd0, 0x83, 0xe8, 0xa2, 0x50, 0x3c, 0x4e,
	};
	struct chacha20 c;

	for (int i = 0; i < 32; i++)
		key[i] = (uint8_t)i;
	chacha20_init(&c, key, nonce, 1);
	chacha20_stream(&c, out, sizeof(out));
	ok(memcmp(out, expect, sizeof(out)) == 0, "RFC 8439 2.3.2 block");

	/* The same 64 bytes taken 7 and 57 at a time. */
	chacha20_init(&c, key, nonce, 1);
	chacha20_stream(&c, again, 7);
	chacha20_stream(&c, again + 7, 57);
	ok(memcmp(again, expect, sizeof(again)) == 0, "  in two pieces");

	/* RFC 8439 2.4.2: counter 1, nonce 00 00 00 00 00 00 00 4a 00 00 00 00; the keystream's
	 * first bytes are the ciphertext XOR the plaintext ("Ladies and Gentlemen..."). */
	const uint8_t nonce2[12] = { 0, 0, 0, 0, 0, 0, 0, 0x4a, 0, 0, 0, 0 };
	static const char plain[] = "Ladies and Gentlemen of the class of '99";
	static const uint8_t cipher[16] = { 0x6e, 0x2e, 0x35, 0x9a, 0x25, 0x68, 0xf9, 0x80,
					    0x41, 0xba, 0x07, 0x28, 0xdd, 0x0d, 0x69, 0x81 };
	uint8_t ks[16];
	chacha20_init(&c, key, nonce2, 1);
	chacha20_stream(&c, ks, sizeof(ks));
	int same = 1;
	for (int i = 0; i < 16; i++)
		same &= (uint8_t)(plain[i] ^ ks[i]) == cipher[i];
	ok(same, "RFC 8439 2.4.2 keystream");

	/* A second block follows the first: counter 2 starts where 64 bytes of counter 1 end. */
	uint8_t two[128], second[64];
	chacha20_init(&c, key, nonce, 1);
	chacha20_stream(&c, two, sizeof(two));
	chacha20_init(&c, key, nonce, 2);
	chacha20_stream(&c, second, sizeof(second));
	ok(memcmp(two + 64, second, 64) == 0, "the stream runs on into the next block");
	ok(memcmp(two, second, 64) != 0, "  which differs from the first (control)");
}

int main(void)
{
	test_rfc8439();
	return done_testing();
}
