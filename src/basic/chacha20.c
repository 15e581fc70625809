/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "chacha20.h"

#define ROTL(v, n) (((v) << (n)) | ((v) >> (32 - (n))))
#define QR(a, b, c, d)                                                                             \
	do {                                                                                       \
		a += b;                                                                            \
		d ^= a;                                                                            \
		d = ROTL(d, 16);                                                                   \
		c += d;                                                                            \
		b ^= c;                                                                            \
		b = ROTL(b, 12);                                                                   \
		a += b;                                                                            \
		d ^= a;                                                                            \
		d = ROTL(d, 8);                                                                    \
		c += d;                                                                            \
		b ^= c;                                                                            \
		b = ROTL(b, 7);                                                                    \
	} while (0)

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void chacha20_init(struct chacha20 *c, const uint8_t key[32], const uint8_t nonce[12],
		   uint32_t counter)
{
	/* "expand 32-byte k" */
	c->state[0] = 0x61707865;
	c->state[1] = 0x3320646e;
	c->state[2] = 0x79622d32;
	c->state[3] = 0x6b206574;
	for (int i = 0; i < 8; i++)
		c->state[4 + i] = le32(key + 4 * i);
	c->state[12] = counter;
	for (int i = 0; i < 3; i++)
		c->state[13 + i] = le32(nonce + 4 * i);
	c->used = sizeof(c->block);
}

/* The block of the current counter, then the counter moved on. */
static void next_block(struct chacha20 *c)
{
	uint32_t x[16];

	memcpy(x, c->state, sizeof(x));
	for (int i = 0; i < 10; i++) {
		QR(x[0], x[4], x[8], x[12]);
		QR(x[1], x[5], x[9], x[13]);
		QR(x[2], x[6], x[10], x[14]);
		QR(x[3], x[7], x[11], x[15]);
		QR(x[0], x[5], x[10], x[15]);
		QR(x[1], x[6], x[11], x[12]);
		QR(x[2], x[7], x[8], x[13]);
		QR(x[3], x[4], x[9], x[14]);
	}
	for (int i = 0; i < 16; i++) {
		uint32_t v = x[i] + c->state[i];
		c->block[4 * i] = (uint8_t)v;
		c->block[4 * i + 1] = (uint8_t)(v >> 8);
		c->block[4 * i + 2] = (uint8_t)(v >> 16);
		c->block[4 * i + 3] = (uint8_t)(v >> 24);
	}
	c->state[12]++;
	c->used = 0;
}

void chacha20_stream(struct chacha20 *c, void *out, size_t len)
{
	uint8_t *o = out;

	while (len) {
		if (c->used == sizeof(c->block))
			next_block(c);
		size_t k = sizeof(c->block) - c->used;
		if (k > len)
			k = len;
		memcpy(o, c->block + c->used, k);
		c->used += k;
		o += k;
		len -= k;
	}
}
