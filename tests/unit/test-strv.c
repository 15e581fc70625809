/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-strv: NULL-terminated string vectors and the environment helpers built on them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "basic/strv.h"
#include "tap.h"

static int strv_equal(char *const *v, const char *const *want)
{
	size_t i;

	for (i = 0; want[i]; i++)
		if (!v || !v[i] || strcmp(v[i], want[i]) != 0)
			return 0;
	return v ? v[i] == NULL : i == 0;
}

static void dump(char *const *v)
{
	for (size_t i = 0; v && v[i]; i++)
		diag("  [%zu] '%s'", i, v[i]);
}

#define CHECK_STRV(v, name, ...)                                                                   \
	do {                                                                                       \
		static const char *const _want[] = { __VA_ARGS__, NULL };                          \
		if (!ok(strv_equal(v, _want), "%s", name))                                         \
			dump(v);                                                                   \
	} while (0)

static void test_basic(void)
{
	char **v = NULL;

	is_int(strv_length(NULL), 0, "strv_length(NULL) is 0");
	ok(!strv_contains(NULL, "a"), "strv_contains(NULL, ...) is 0");

	char buf[] = "alpha";
	is_int(strv_extend(&v, buf), 0, "strv_extend on NULL creates a vector");
	buf[0] = 'X'; /* extend copied the string */
	CHECK_STRV(v, "  holds a copy of \"alpha\"", "alpha");
	ok(v[0] != buf, "  the element is not the caller's pointer");
	is_int(strv_length(v), 1, "  length 1");

	char *owned = strdup("beta");
	is_int(strv_push(&v, owned), 0, "strv_push appends");
	ok(v[1] == owned, "  push takes the pointer itself (ownership)");
	ok(v[2] == NULL, "  the vector stays NULL-terminated");
	is_int(strv_extend(&v, ""), 0, "strv_extend of the empty string");
	CHECK_STRV(v, "  order alpha, beta, \"\"", "alpha", "beta", "");
	is_int(strv_length(v), 3, "  length 3");

	ok(strv_contains(v, "beta") == 1, "strv_contains finds beta");
	ok(strv_contains(v, "") == 1, "strv_contains finds the empty string");
	ok(strv_contains(v, "gamma") == 0, "strv_contains does not find gamma");
	ok(strv_contains(v, "alph") == 0, "strv_contains does not match a prefix");
	ok(strv_contains(v, "alphaX") == 0, "strv_contains does not match a longer string");

	char **c = strv_copy(v);
	ok(c != NULL && c != v, "strv_copy returns a new vector");
	CHECK_STRV(c, "  with the same strings", "alpha", "beta", "");
	ok(c && c[0] != v[0] && c[1] != v[1], "  deep copy: distinct string pointers");
	c[0][0] = 'A';
	is_str(v[0], "alpha", "  changing the copy leaves the original");
	strv_free(c);

	char **e = strv_copy(NULL);
	ok(e != NULL && e[0] == NULL, "strv_copy(NULL) is an empty vector, not NULL");
	strv_free(e);

	ok(strv_free(v) == NULL, "strv_free returns NULL");
	ok(strv_free(NULL) == NULL, "strv_free(NULL) is fine");

	_cleanup_strv_free_ char **cl = NULL;
	is_int(strv_extend(&cl, "x"), 0, "a _cleanup_strv_free_ vector (freed at scope end)");
}

static void test_env(void)
{
	char **env = NULL;

	ok(strv_env_get(NULL, "A") == NULL, "strv_env_get on NULL is NULL");
	is_int(strv_env_set(&env, "A", "1"), 0, "strv_env_set A=1 on an empty env");
	is_int(strv_env_set(&env, "B", "2"), 0, "strv_env_set B=2");
	is_int(strv_env_set(&env, "AB", "3"), 0, "strv_env_set AB=3");
	is_int(strv_env_set(&env, "C", ""), 0, "strv_env_set C= (empty value)");
	CHECK_STRV(env, "  order of first set", "A=1", "B=2", "AB=3", "C=");

	is_int(strv_env_set(&env, "B", "two=2"), 0, "strv_env_set B again");
	CHECK_STRV(env, "  B replaced in place, order kept, '=' in the value kept", "A=1",
		   "B=two=2", "AB=3", "C=");
	is_int(strv_env_set(&env, "A", "one"), 0, "strv_env_set A again");
	CHECK_STRV(env, "  A replaced in place; AB (same prefix) untouched", "A=one", "B=two=2",
		   "AB=3", "C=");
	is_int(strv_length(env), 4, "  no duplicate entries");

	is_str(strv_env_get(env, "A"), "one", "strv_env_get A");
	is_str(strv_env_get(env, "AB"), "3", "strv_env_get AB (not confused with A)");
	is_str(strv_env_get(env, "B"), "two=2",
	       "strv_env_get B keeps everything after the first '='");
	is_str(strv_env_get(env, "C"), "", "strv_env_get C is the empty string, not NULL");
	ok(strv_env_get(env, "D") == NULL, "strv_env_get of a missing name is NULL");
	ok(strv_env_get(env, "ABC") == NULL, "strv_env_get of a longer name is NULL");

	char *const raw[] = { (char *)"NOEQ", (char *)"X=1", NULL };
	ok(strv_env_get(raw, "NOEQ") == NULL, "an entry without '=' is not a variable");
	is_str(strv_env_get(raw, "X"), "1", "  and the search goes on past it");
	strv_free(env);
}

int main(void)
{
	test_basic();
	test_env();
	return done_testing();
}
