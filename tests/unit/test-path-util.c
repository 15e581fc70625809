/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-path-util: the path comparisons the supervisor's decisions rest on, and the mounts
 * files' escapes.
 */
#include <string.h>

#include "basic/path-util.h"
#include "tap.h"

static void test_beneath(void)
{
	ok(path_is_beneath("/a", "/a"), "a path is beneath itself");
	ok(path_is_beneath("/a/b/c", "/a"), "/a/b/c is beneath /a");
	ok(!path_is_beneath("/ab", "/a"), "/ab is not beneath /a");
	ok(!path_is_beneath("/a", "/a/b"), "/a is not beneath /a/b");
	ok(path_is_beneath("/anything", "/"), "/ holds everything");
	ok(path_is_beneath("/proc/self", "/proc"), "/proc/self is beneath /proc");
	ok(!path_is_beneath("/procx/self", "/proc"), "/procx/self is not");
}

static void test_beneath_any(void)
{
	char a[] = "/a", bc[] = "/b/c";
	char *roots[] = { a, bc, NULL };

	ok(path_is_beneath_any("/b/c/d", roots), "/b/c/d is beneath one of /a, /b/c");
	ok(path_is_beneath_any("/a", roots), "  and /a itself");
	ok(!path_is_beneath_any("/b", roots), "/b is beneath neither");
	ok(!path_is_beneath_any("/a", NULL), "no list holds nothing");
}

static void test_last_is(void)
{
	ok(path_last_is("/proc/net/tcp", "tcp"), "the last component of /proc/net/tcp is tcp");
	ok(path_last_is("/proc/net/tcp/", "tcp"), "  trailing slashes aside");
	ok(path_last_is("tcp", "tcp"), "a bare name is its own last component");
	ok(!path_last_is("/proc/net/tcp6", "tcp"), "tcp6 is not tcp");
	ok(!path_last_is("/proc/net/xtcp", "tcp"), "xtcp is not tcp");
	ok(!path_last_is("/proc/tcp/x", "tcp"), "a middle component does not count");
}

static void test_unescape(void)
{
	char out[64];
	const char *in = "/mnt/a\\040b\\011c\\134d";

	path_unescape_mount(in, strlen(in), out, sizeof(out));
	is_str(out, "/mnt/a b\tc\\d", "octal escapes back to bytes");
	in = "/x\\04";
	path_unescape_mount(in, strlen(in), out, sizeof(out));
	is_str(out, "/x\\04", "a cut escape is left as it is");
	in = "/x\\089y";
	path_unescape_mount(in, strlen(in), out, sizeof(out));
	is_str(out, "/x\\089y", "a non-octal escape is left as it is");
	in = "/a\\040b rest";
	path_unescape_mount(in, 7, out, sizeof(out));
	is_str(out, "/a b", "only @len bytes are read");
	strcpy(out, "/in\\040place");
	path_unescape_mount(out, strlen(out), out, sizeof(out));
	is_str(out, "/in place", "in place");
	path_unescape_mount("/abcdef", 7, out, 4);
	is_str(out, "/ab", "truncated to fit, NUL-terminated");
}

int main(void)
{
	test_beneath();
	test_beneath_any();
	test_last_is();
	test_unescape();
	return done_testing();
}
