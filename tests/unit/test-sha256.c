/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-sha256: FIPS 180-4 / NIST example vectors ("", "abc", the 448-bit message, a million
 * 'a's fed in uneven pieces), and sha256_fd against the same bytes.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "basic/sha256.h"
#include "tap.h"

static void hex(const uint8_t d[32], char out[65])
{
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static int digest_is(const void *msg, size_t len, const char *want)
{
	struct sha256 s;
	uint8_t d[32];
	char h[65];

	sha256_init(&s);
	sha256_update(&s, msg, len);
	sha256_final(&s, d);
	hex(d, h);
	return strcmp(h, want) == 0;
}

int main(void)
{
	ok(digest_is("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
	   "empty message");
	ok(digest_is("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
	   "abc");
	const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	ok(digest_is(m448, strlen(m448),
		     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
	   "448-bit message (padding into a second block)");
	ok(!digest_is("abd", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
	   "  another message differs (control)");

	/* A million 'a's, in pieces of 1, 63, 64, 65 ... bytes. */
	static char a[1000000];
	memset(a, 'a', sizeof(a));
	struct sha256 s;
	uint8_t d[32];
	char h[65];
	size_t off = 0, piece = 1;
	sha256_init(&s);
	while (off < sizeof(a)) {
		size_t k = piece < sizeof(a) - off ? piece : sizeof(a) - off;
		sha256_update(&s, a + off, k);
		off += k;
		piece = piece * 7 % 997 + 1;
	}
	sha256_final(&s, d);
	hex(d, h);
	ok(strcmp(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0,
	   "a million 'a's in uneven pieces");

	/* sha256_fd reads from the start whatever the offset. */
	char path[] = "/tmp/test-sha256-XXXXXX";
	int fd = mkstemp(path);
	ok(fd >= 0 && write(fd, "abc", 3) == 3, "temporary file written");
	ok(fd >= 0 && sha256_fd(fd, d) == 0, "sha256_fd");
	hex(d, h);
	ok(strcmp(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0,
	   "  the file's digest is abc's");
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	return done_testing();
}
