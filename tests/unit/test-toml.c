/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-toml: the TOML parser's API beyond what toml-test checks (tests/toml/run-toml-test):
 * the exact line:column of errors, the accessors and their NULL/wrong-type answers, entry
 * order and key positions, int64 limits, strings with NULs, inline-table immutability, the
 * out-parameter rules, and inputs placed against a guard page so that any read past @len
 * faults.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tap.h"
#include "toml/toml.h"

static int parse(const char *text, struct toml_value **ret, struct toml_error *err)
{
	return toml_parse(text, strlen(text), ret, err);
}

static void check_error(const char *text, unsigned line, unsigned column, const char *message)
{
	struct toml_error err = { 0 };
	struct toml_value *v = (struct toml_value *)&err; /* a sentinel: must stay untouched */
	int r = parse(text, &v, &err);

	is_int(r, -EINVAL, "rejects %s", message);
	ok(v == (struct toml_value *)&err, "  leaves *ret untouched");
	ok(err.line == line && err.column == column, "  at %u:%u (got %u:%u: %s)", line, column,
	   err.line, err.column, err.message);
	ok(strstr(err.message, message) != NULL, "  message has \"%s\" (got \"%s\")", message,
	   err.message);
	ok(strchr(err.message, '\n') == NULL, "  message is one line");
}

static void test_errors(void)
{
	check_error("a = 1\na = 2\n", 2, 1, "duplicate key 'a'");
	check_error("a = 1\nb = \"abc\n", 2, 9, "unterminated string");
	check_error("x = [1, 2\n", 2, 1, "expected ',' or ']'");
	check_error("[t]\nk = 1 2\n", 2, 7, "expected a line end");
	check_error("d = 2021-02-29\n", 1, 13, "day 29 out of range");
	check_error("t = 24:00:00\n", 1, 5, "hour 24 out of range");
	check_error("n = 9223372036854775808\n", 1, 5, "integer out of range");
	check_error("s = \"bad \\q escape\"\n", 1, 10, "invalid escape");
	check_error("\xc3\xa9t\xc3\xa9 = 1\n", 1, 1, "expected a key, found U+00E9");
	check_error("k = \"\xc3\xa9\xc3\xa9\" \xff\n", 1, 10, "invalid UTF-8");
	check_error("[a]\nb = 1\n[a]\n", 3, 2, "table 'a' is already defined");
	check_error("p = { x = 1 }\np.y = 2\n", 2, 1, "inline table");
	check_error("a = 1\r\nb = 2 # ok\r\nc = 0x\r\n", 3, 5, "invalid number '0x'");
	check_error("key = tru\n", 1, 7, "invalid value 'tru'");
	check_error("# comment \x01\n", 1, 11, "U+0001 is not allowed in a comment");
	check_error("a = { b = 1, }\n", 1, 14, "trailing comma");
	check_error("[[x]]\n[x]\n", 2, 2, "already defined as an array of tables");
	check_error("\xef\xbb\xbf"
		    "a = @\n",
		    1, 5, "expected a value, found '@'");
}

static void test_accessors(void)
{
	static const char doc[] = "title = \"sandlock\"\n"
				  "ratio = 0.5\n"
				  "on = true\n"
				  "when = 1979-05-27T07:32:00.25-07:30\n"
				  "[net]\n"
				  "ports = [80, 443]\n"
				  "[[rule]]\n"
				  "name = \"a\"\n"
				  "[[rule]]\n"
				  "name = \"b\"\n";
	struct toml_value *root = NULL;
	struct toml_datetime dt;
	const char *s = NULL;
	char buf[64];
	int64_t i = 0;
	double d = 0;
	int b = 0;

	is_int(parse(doc, &root, NULL), 0, "parses a document (NULL reterr)");
	is_int(toml_type(root), TOML_TABLE, "the root is a table");
	is_str(toml_type_name(toml_type(root)), "table", "type name");
	is_int(toml_get_string(toml_table_get(root, "title"), &s, NULL), 0, "get_string");
	is_str(s, "sandlock", "  value");
	is_int(toml_get_float(toml_table_get(root, "ratio"), &d), 0, "get_float");
	ok(d == 0.5, "  value 0.5");
	is_int(toml_get_bool(toml_table_get(root, "on"), &b), 0, "get_bool");
	is_int(b, 1, "  value true");
	is_int(toml_get_integer(toml_table_get(root, "title"), &i), -EINVAL,
	       "get_integer on a string is -EINVAL");

	const struct toml_value *when = toml_table_get(root, "when");
	is_int(toml_type(when), TOML_DATETIME, "offset datetime");
	is_int(toml_get_datetime(when, &dt), 0, "get_datetime");
	ok(dt.year == 1979 && dt.month == 5 && dt.day == 27 && dt.hour == 7 && dt.minute == 32 &&
		   dt.second == 0 && dt.nanosecond == 250000000 && dt.frac_digits == 2 &&
		   dt.offset_minutes == -450 && !dt.offset_z,
	   "  components");
	toml_datetime_format(when, buf, sizeof(buf));
	is_str(buf, "1979-05-27T07:32:00.25-07:30", "  prints back");
	is_int(toml_datetime_format(toml_table_get(root, "on"), buf, sizeof(buf)), -EINVAL,
	       "datetime_format on a bool is -EINVAL");

	const struct toml_value *ports = toml_table_get(toml_table_get(root, "net"), "ports");
	is_int(toml_array_size(ports), 2, "chained lookup finds an array of 2");
	is_int(toml_get_integer(toml_array_at(ports, 1), &i), 0, "array_at(1)");
	is_int(i, 443, "  value 443");
	ok(toml_array_at(ports, 2) == NULL, "array_at past the end is NULL");

	const struct toml_value *rules = toml_table_get(root, "rule");
	is_int(toml_array_size(rules), 2, "[[rule]] twice makes an array of 2 tables");
	toml_get_string(toml_table_get(toml_array_at(rules, 1), "name"), &s, NULL);
	is_str(s, "b", "  the second is b");

	ok(toml_table_get(root, "missing") == NULL, "a missing key is NULL");
	ok(toml_table_get(toml_table_get(root, "missing"), "x") == NULL, "chained misses are NULL");
	ok(toml_table_get(ports, "x") == NULL, "table_get on an array is NULL");
	is_int(toml_table_size(ports), 0, "table_size of an array is 0");
	is_int(toml_array_size(root), 0, "array_size of a table is 0");
	is_int(toml_type(NULL), TOML_NONE, "type(NULL) is TOML_NONE");
	is_int(toml_get_string(NULL, &s, NULL), -EINVAL, "get_string(NULL) is -EINVAL");
	is_int(toml_position(NULL, NULL, NULL), -EINVAL, "position(NULL) is -EINVAL");
	toml_free(root);
	toml_free(NULL);
	ok(1, "toml_free(NULL) returns");
}

static void test_order_and_positions(void)
{
	static const char doc[] = "zeta = 1\n"
				  "alpha = 2\n"
				  "  mid.dle = 3\n"
				  "[\"quoted key\"]\n"
				  "\xc3\xa9t\xc3\xa9 = 4\n"; /* not a bare key: must fail */
	static const char good[] = "zeta = 1\n"
				   "alpha = 2\n"
				   "  mid.dle = 3\n"
				   "[ 'quoted key' ]\n"
				   "x = 4\n";
	static const char *const want[] = { "zeta", "alpha", "mid", "quoted key" };
	static const unsigned pos[][2] = { { 1, 1 }, { 2, 1 }, { 3, 3 }, { 4, 3 } };
	struct toml_value *root = NULL;
	const struct toml_key *key;
	unsigned line = 0, column = 0;

	is_int(parse(doc, &root, NULL), -EINVAL, "a non-ASCII bare key is rejected");
	is_int(parse(good, &root, NULL), 0, "parses keys in a made-up order");
	is_int(toml_table_size(root), 4, "four entries");
	for (size_t i = 0; i < 4; i++) {
		const struct toml_value *v = toml_table_at(root, i, &key);
		ok(v && strcmp(key->name, want[i]) == 0, "entry %zu is '%s'", i, want[i]);
		ok(v && key->line == pos[i][0] && key->column == pos[i][1],
		   "  key written at %u:%u (got %u:%u)", pos[i][0], pos[i][1], v ? key->line : 0,
		   v ? key->column : 0);
	}
	ok(toml_table_at(root, 4, &key) == NULL, "table_at past the end is NULL");
	const struct toml_value *mid = toml_table_get(root, "mid");
	toml_table_at(mid, 0, &key);
	ok(key->line == 3 && key->column == 7, "dotted part 'dle' at 3:7 (got %u:%u)", key->line,
	   key->column);
	toml_position(toml_table_get(toml_table_get(root, "quoted key"), "x"), &line, &column);
	ok(line == 5 && column == 5, "value position 5:5 (got %u:%u)", line, column);
	toml_free(root);
}

static void test_int64(void)
{
	static const struct {
		const char *text;
		int r;
		int64_t value;
	} cases[] = {
		{ "v = 9223372036854775807", 0, INT64_MAX },
		{ "v = -9223372036854775808", 0, INT64_MIN },
		{ "v = 9_223_372_036_854_775_807", 0, INT64_MAX },
		{ "v = 0x7fffffffffffffff", 0, INT64_MAX },
		{ "v = 0o777777777777777777777", 0, INT64_MAX },
		{ "v = 9223372036854775808", -EINVAL, 0 },
		{ "v = -9223372036854775809", -EINVAL, 0 },
		{ "v = 0x8000000000000000", -EINVAL, 0 },
		{ "v = 99999999999999999999999", -EINVAL, 0 },
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		struct toml_value *root = NULL;
		int64_t v = 0;
		int r = parse(cases[i].text, &root, NULL);
		is_int(r, cases[i].r, "\"%s\" returns %d", cases[i].text, cases[i].r);
		if (r == 0) {
			toml_get_integer(toml_table_get(root, "v"), &v);
			ok(v == cases[i].value, "  value %lld", (long long)cases[i].value);
		}
		toml_free(root);
	}
}

static void test_nul(void)
{
	static const char doc[] = "\"k\\u0000ey\" = \"a\\u0000b\"\n";
	struct toml_value *root = NULL;
	const struct toml_key *key;
	const char *s;
	size_t len = 0;

	is_int(parse(doc, &root, NULL), 0, "escaped NULs in a key and a value");
	const struct toml_value *v = toml_table_at(root, 0, &key);
	ok(key->len == 4 && memcmp(key->name, "k\0ey", 4) == 0, "  key is 4 bytes with a NUL");
	ok(toml_table_get(root, "k") == NULL, "  table_get(\"k\") does not match it");
	ok(toml_table_getn(root, "k\0ey", 4) == v, "  table_getn finds it");
	is_int(toml_get_string(v, &s, &len), 0, "  get_string");
	ok(len == 3 && memcmp(s, "a\0b", 4) == 0, "  value is \"a\\0b\" (3 bytes, NUL-terminated)");
	toml_free(root);

	is_int(toml_parse("a = 1\0b = 2", 11, &root, NULL), -EINVAL,
	       "a raw NUL byte inside @len is an error, not the end");
	is_int(toml_parse("a = 1\0b = 2", 5, &root, NULL), 0, "the same input cut at @len parses");
	is_int(toml_table_size(root), 1, "  one key");
	toml_free(root);
}

static void test_inline_immutable(void)
{
	static const char *const bad[] = {
		"t = { a = 1 }\nt.b = 2\n",   "t = { a = 1 }\n[t]\n",
		"t = { a = 1 }\n[t.sub]\n",   "t = { a = { x = 1 } }\nt.a.y = 2\n",
		"t = { a.x = 1 }\n[t.a.z]\n", "t = { a = 1 }\n[[t.list]]\n",
		"t = { a = {}, a.b = 1 }\n",
	};
	struct toml_value *root = NULL;

	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		struct toml_error err = { 0 };
		is_int(parse(bad[i], &root, &err), -EINVAL, "inline table extended (case %zu): %s",
		       i, err.message);
	}
	is_int(parse("t = { a.x = 1, a.y = 2, b = { c = [1] } }\n", &root, NULL), 0,
	       "dotted keys inside one inline table build it");
	is_int(toml_table_size(toml_table_get(toml_table_get(root, "t"), "a")), 2, "  t.a has 2");
	toml_free(root);
}

static void test_definition_rules(void)
{
	static const struct {
		const char *text;
		int r;
	} cases[] = {
		{ "[a.b.c]\n[a]\nx = 1\n", 0 },	      { "[a]\nb.c = 1\n[a.b.d]\n", 0 },
		{ "[a.b.c]\n[a]\nb.d = 1\n", 0 },     { "[a.b.c]\n[a]\nb.d = 1\n[a.b]\n", -EINVAL },
		{ "[a]\nb.c = 1\n[a.b]\n", -EINVAL }, { "[[a]]\n[a.b]\n[[a]]\n[a.b]\n", 0 },
		{ "[[a]]\n[a.b]\n[a.b]\n", -EINVAL }, { "a = [1]\n[[a]]\n", -EINVAL },
	};
	struct toml_value *root = NULL;

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		is_int(parse(cases[i].text, &root, NULL), cases[i].r, "definition rules case %zu",
		       i);
		if (cases[i].r == 0)
			toml_free(root);
	}
}

static void test_nesting_limit(void)
{
	char text[1024];
	struct toml_value *root = NULL;
	struct toml_error err;
	size_t n = 0;

	n += (size_t)snprintf(text, sizeof(text), "a = ");
	for (int i = 0; i < 200; i++)
		text[n++] = '[';
	is_int(toml_parse(text, n, &root, &err), -EINVAL, "200 nested arrays are refused");
	ok(strstr(err.message, "nested deeper") != NULL, "  as too deep (%s)", err.message);
}

/* The input ends exactly at a PROT_NONE page: a read of byte @len faults. */
static void parse_at_guard(char *page, size_t pagesize, const char *text, size_t len, int *ret_r)
{
	struct toml_value *root = NULL;
	char *at = page + pagesize - len;

	memcpy(at, text, len);
	*ret_r = toml_parse(at, len, &root, NULL);
	toml_free(root);
}

static void test_guard_page(void)
{
	static const char doc[] = "# every token kind, cut at every length\n"
				  "a = \"b\\u00e9\\n\"\n"
				  "ml = \"\"\"x\\\n  y\"\"\"\n"
				  "lit = 'c'\n"
				  "mll = '''\nz'''\n"
				  "i = -0x_1\n"
				  "h = 0xdead_beef\n"
				  "f = 6.02e+23\n"
				  "s = -inf\n"
				  "t = true\n"
				  "d = 1979-05-27T07:32:00.999999-07:00\n"
				  "ld = 1979-05-27\n"
				  "lt = 07:32:00\n"
				  "arr = [ 1, [2], { x = 3 } ]\n"
				  "[tab.'q'.\"r\"]\n"
				  "[[aot]]\n"
				  "k = \"\\U0001F600\"\r\n";
	long ps = sysconf(_SC_PAGESIZE);
	size_t pagesize = ps > 0 ? (size_t)ps : 4096;
	int parsed = 0, r;

	char *map = mmap(NULL, 2 * pagesize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	if (map == MAP_FAILED || mprotect(map + pagesize, pagesize, PROT_NONE) < 0) {
		ok(0, "guard page mapping");
		return;
	}
	/* Every prefix ends mid-token somewhere: a parser that peeks one byte too far faults. */
	for (size_t len = 0; len <= sizeof(doc) - 1; len++) {
		parse_at_guard(map, pagesize, doc, len, &r);
		parsed += r == 0;
	}
	ok(1, "all %zu prefixes of a document parsed against a guard page", sizeof(doc));
	parse_at_guard(map, pagesize, doc, sizeof(doc) - 1, &r);
	is_int(r, -EINVAL, "the whole document fails (i = -0x_1 is invalid)");
	ok(parsed > 0, "  some prefixes parse (%d)", parsed);

	static const char *const tails[] = {
		"a = 1",	 "a = tru",
		"a = \"abc",	 "a = \"\\u00",
		"a = 1979-05-2", "a = 12:3",
		"a = '''x''",	 "[a",
		"[[a]",		 "a = 0x",
		"a = 1e",	 "#",
		"a = \"\"\"x\\", "a = {b=1",
		"a = [1,",	 "a.",
		"\"k",		 "a = 2000-01-01T00:00:00+01:",
	};
	for (size_t i = 0; i < ELEMENTSOF(tails); i++) {
		parse_at_guard(map, pagesize, tails[i], strlen(tails[i]), &r);
		ok(r == 0 || r == -EINVAL, "\"%s\" at the guard page: %d", tails[i], r);
	}
	munmap(map, 2 * pagesize);
}

static void test_reterr_untouched(void)
{
	struct toml_error err;
	struct toml_value *root = NULL;

	memset(&err, 0x5a, sizeof(err));
	is_int(parse("a = 1\n", &root, &err), 0, "a valid document");
	ok(err.line == 0x5a5a5a5a && err.message[0] == 0x5a, "  leaves *reterr untouched");
	toml_free(root);
	is_int(toml_parse(NULL, 0, &root, &err), 0, "NULL with length 0 is an empty document");
	is_int(toml_table_size(root), 0, "  empty root");
	toml_free(root);
	is_int(toml_parse(NULL, 1, &root, &err), -EINVAL, "NULL with a length is -EINVAL");
	is_int(toml_parse("", 0, NULL, &err), -EINVAL, "NULL ret is -EINVAL");
}

int main(void)
{
	test_errors();
	test_accessors();
	test_order_and_positions();
	test_int64();
	test_nul();
	test_inline_immutable();
	test_definition_rules();
	test_nesting_limit();
	test_guard_page();
	test_reterr_untouched();
	return done_testing();
}
