/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-parse-util: the strict parsers of the policy grammars (integers, sizes, port lists, CPU
 * lists). Every accepted form is paired with a rejected neighbour, with the exact errno, and
 * the out-parameter is checked to stay untouched on failure.
 */
#include <errno.h>
#include <stdint.h>

#include "basic/parse-util.h"
#include "tap.h"

#define SENTINEL64 0xdeadbeefcafef00dULL
#define SENTINEL32 0xdeadbeefU

static void check_u64(const char *s, int want_r, uint64_t want_v)
{
	uint64_t v = SENTINEL64;
	int r = parse_uint64(s, &v);

	is_int(r, want_r, "parse_uint64(\"%s\") returns %d", s, want_r);
	if (want_r == 0)
		ok(v == want_v, "parse_uint64(\"%s\") = %llu", s, (unsigned long long)want_v);
	else
		ok(v == SENTINEL64, "parse_uint64(\"%s\") leaves *ret untouched on failure", s);
}

static void check_u32(const char *s, int want_r, uint32_t want_v)
{
	uint32_t v = SENTINEL32;
	int r = parse_uint32(s, &v);

	is_int(r, want_r, "parse_uint32(\"%s\") returns %d", s, want_r);
	if (want_r == 0)
		is_int(v, want_v, "parse_uint32(\"%s\") = %u", s, want_v);
	else
		ok(v == SENTINEL32, "parse_uint32(\"%s\") leaves *ret untouched on failure", s);
}

static void test_uint(void)
{
	check_u64("0", 0, 0);
	check_u64("42", 0, 42);
	check_u64("007", 0, 7);
	check_u64("18446744073709551615", 0, UINT64_MAX);
	check_u64("18446744073709551616", -ERANGE, 0);
	check_u64("99999999999999999999999", -ERANGE, 0);
	check_u64("", -EINVAL, 0);
	check_u64("+1", -EINVAL, 0);
	check_u64("-1", -EINVAL, 0);
	check_u64("-0", -EINVAL, 0);
	check_u64(" 1", -EINVAL, 0);
	check_u64("1 ", -EINVAL, 0);
	check_u64("0x10", -EINVAL, 0);
	check_u64("1a", -EINVAL, 0);
	check_u64("1.0", -EINVAL, 0);

	uint64_t v = SENTINEL64;
	is_int(parse_uint64(NULL, &v), -EINVAL, "parse_uint64(NULL) is -EINVAL");

	check_u32("0", 0, 0);
	check_u32("4294967295", 0, UINT32_MAX);
	check_u32("4294967296", -ERANGE, 0);
	check_u32("18446744073709551616", -ERANGE, 0);
	check_u32("+7", -EINVAL, 0);
	check_u32("-7", -EINVAL, 0);
	check_u32(" 7", -EINVAL, 0);
	check_u32("0x7", -EINVAL, 0);
	check_u32("", -EINVAL, 0);
}

static void check_size(const char *s, int want_r, uint64_t want_v)
{
	uint64_t v = SENTINEL64;
	int r = parse_size(s, &v);

	is_int(r, want_r, "parse_size(\"%s\") returns %d", s, want_r);
	if (want_r == 0)
		ok(v == want_v, "parse_size(\"%s\") = %llu (got %llu)", s,
		   (unsigned long long)want_v, (unsigned long long)v);
	else
		ok(v == SENTINEL64, "parse_size(\"%s\") leaves *ret untouched on failure", s);
}

static void test_size(void)
{
	check_size("4096", 0, 4096);
	check_size("0", 0, 0);
	check_size("512M", 0, 512ULL << 20);
	check_size("512m", 0, 512ULL << 20);
	check_size("1G", 0, 1ULL << 30);
	check_size("1g", 0, 1ULL << 30);
	check_size("1k", 0, 1024);
	check_size("1K", 0, 1024);
	check_size("2T", 0, 2ULL << 40);
	check_size("16777215T", 0, 16777215ULL << 40); /* the largest T that fits */
	check_size("16777216T", -ERANGE, 0);
	check_size("99999999999T", -ERANGE, 0);
	check_size("18446744073709551615", 0, UINT64_MAX);
	check_size("18446744073709551616", -ERANGE, 0);
	check_size("1KB", -EINVAL, 0);
	check_size("1KiB", -EINVAL, 0);
	check_size("1B", -EINVAL, 0);
	check_size("1P", -EINVAL, 0);
	check_size("1 M", -EINVAL, 0);
	check_size(" 1M", -EINVAL, 0);
	check_size("M", -EINVAL, 0);
	check_size("", -EINVAL, 0);
	check_size("-1M", -EINVAL, 0);
	check_size("+1M", -EINVAL, 0);
	check_size("1.5G", -EINVAL, 0);
	check_size("0x10", -EINVAL, 0);

	uint64_t v = SENTINEL64;
	is_int(parse_size(NULL, &v), -EINVAL, "parse_size(NULL) is -EINVAL");
}

/* Compare @set against @n ranges given as lo,hi pairs. */
static int set_is(const struct port_set *set, int all, size_t n, const uint16_t *pairs)
{
	if (set->all != all || set->n != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (set->ranges[i].lo != pairs[2 * i] || set->ranges[i].hi != pairs[2 * i + 1])
			return 0;
	return 1;
}

static void dump_set(const struct port_set *set)
{
	diag("  set: all=%d n=%zu", set->all, set->n);
	for (size_t i = 0; i < set->n; i++)
		diag("    [%zu] %u-%u", i, set->ranges[i].lo, set->ranges[i].hi);
}

#define CHECK_SET(set, all, name, ...)                                                             \
	do {                                                                                       \
		static const uint16_t _p[] = { __VA_ARGS__ };                                      \
		if (!ok(set_is(&(set), all, sizeof(_p) / sizeof(_p[0]) / 2, _p), "%s", name))      \
			dump_set(&(set));                                                          \
	} while (0)

#define CHECK_EMPTY(set, name)                                                                     \
	do {                                                                                       \
		if (!ok((set).all == 0 && (set).n == 0, "%s", name))                               \
			dump_set(&(set));                                                          \
	} while (0)

static void check_ports_fail(const char *s, int want_r)
{
	struct port_set set = { 0 };

	is_int(parse_ports(s, &set), want_r, "parse_ports(\"%s\") returns %d", s, want_r);
	CHECK_EMPTY(set, "  and leaves an empty set empty");
	port_set_done(&set);
}

static void test_ports(void)
{
	struct port_set set = { 0 };

	is_int(parse_ports("8080", &set), 0, "parse_ports(\"8080\")");
	CHECK_SET(set, 0, "  one range 8080-8080", 8080, 8080);
	port_set_done(&set);
	ok(set.n == 0 && set.ranges == NULL && set.all == 0, "port_set_done resets the set");

	is_int(parse_ports("9000-9005", &set), 0, "parse_ports(\"9000-9005\")");
	CHECK_SET(set, 0, "  one range 9000-9005", 9000, 9005);
	port_set_done(&set);

	is_int(parse_ports("80, 443,8000-8005", &set), 0, "parse_ports(\"80, 443,8000-8005\")");
	CHECK_SET(set, 0, "  three ranges in order", 80, 80, 443, 443, 8000, 8005);
	port_set_done(&set);

	is_int(parse_ports(" 22 ,\t23 ", &set), 0, "spaces and tabs around entries are allowed");
	CHECK_SET(set, 0, "  22 and 23", 22, 22, 23, 23);
	port_set_done(&set);

	is_int(parse_ports("0,65535,5-5", &set), 0, "0, 65535 and a one-port range");
	CHECK_SET(set, 0, "  boundaries kept", 0, 0, 65535, 65535, 5, 5);
	port_set_done(&set);

	is_int(parse_ports("*", &set), 0, "parse_ports(\"*\")");
	ok(set.all == 1 && set.n == 0, "  all set, no ranges");
	port_set_done(&set);
	is_int(parse_ports(" * ", &set), 0, "parse_ports(\" * \")");
	ok(set.all == 1 && set.n == 0, "  all set");
	port_set_done(&set);

	check_ports_fail("*,80", -EINVAL);
	check_ports_fail("80,*", -EINVAL);
	check_ports_fail("**", -EINVAL);
	check_ports_fail("65536", -ERANGE);
	check_ports_fail("80-65536", -ERANGE);
	check_ports_fail("99999999999999999999999", -ERANGE);
	check_ports_fail("10-5", -EINVAL);
	check_ports_fail("80,", -EINVAL);
	check_ports_fail("80, ", -EINVAL);
	check_ports_fail(",80", -EINVAL);
	check_ports_fail("80,,81", -EINVAL);
	check_ports_fail("", -EINVAL);
	check_ports_fail("   ", -EINVAL);
	check_ports_fail("80-", -EINVAL);
	check_ports_fail("-80", -EINVAL);
	check_ports_fail("80 81", -EINVAL);
	check_ports_fail("80-81-82", -EINVAL);
	check_ports_fail("+80", -EINVAL);
	check_ports_fail("0x50", -EINVAL);
	check_ports_fail("http", -EINVAL);
	check_ports_fail("80 - 81", -EINVAL);
	is_int(parse_ports(NULL, &set), -EINVAL, "parse_ports(NULL) is -EINVAL");

	/* Accumulation across calls, and a failed call leaves what was there. */
	is_int(parse_ports("80", &set), 0, "accumulate: first call \"80\"");
	is_int(parse_ports("443,1000-1002", &set), 0, "accumulate: second call \"443,1000-1002\"");
	CHECK_SET(set, 0, "  both calls' ranges, in order", 80, 80, 443, 443, 1000, 1002);
	is_int(parse_ports("5,6,x", &set), -EINVAL, "a failing third call (\"5,6,x\") is -EINVAL");
	CHECK_SET(set, 0, "  set unchanged after the failed call (no 5, no 6)", 80, 80, 443, 443,
		  1000, 1002);
	is_int(parse_ports("7,70000", &set), -ERANGE, "a failing call (\"7,70000\") is -ERANGE");
	CHECK_SET(set, 0, "  set unchanged after -ERANGE", 80, 80, 443, 443, 1000, 1002);
	is_int(parse_ports("*", &set), -EINVAL, "\"*\" after ports in an earlier call is -EINVAL");
	CHECK_SET(set, 0, "  set unchanged, all not set", 80, 80, 443, 443, 1000, 1002);
	is_int(parse_ports("9", &set), 0, "the set still accepts ports after failures");
	CHECK_SET(set, 0, "  9 appended", 80, 80, 443, 443, 1000, 1002, 9, 9);
	port_set_done(&set);

	is_int(parse_ports("*", &set), 0, "accumulate: \"*\" first");
	is_int(parse_ports("80", &set), -EINVAL,
	       "ports after \"*\" in an earlier call are -EINVAL");
	ok(set.all == 1 && set.n == 0, "  still all, no ranges");
	is_int(parse_ports("*", &set), 0, "\"*\" twice across calls is accepted (idempotent)");
	ok(set.all == 1 && set.n == 0, "  still all, no ranges");
	port_set_done(&set);
}

struct cpu_acc {
	uint32_t cpus[64];
	size_t n;
	int fail_at; /* return -E2BIG when asked to add this CPU; -1: never */
};

static int cpu_add(uint32_t cpu, void *userdata)
{
	struct cpu_acc *a = userdata;

	if ((int)cpu == a->fail_at)
		return -E2BIG;
	if (a->n >= 64)
		return -ENOSPC;
	a->cpus[a->n++] = cpu;
	return 0;
}

static int cpus_are(const struct cpu_acc *a, size_t n, const uint32_t *want)
{
	if (a->n != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (a->cpus[i] != want[i])
			return 0;
	return 1;
}

#define CHECK_CPUS(s, max, name, ...)                                                              \
	do {                                                                                       \
		static const uint32_t _want[] = { __VA_ARGS__ };                                   \
		struct cpu_acc _a = { .fail_at = -1 };                                             \
		is_int(parse_cpu_list(s, max, cpu_add, &_a), 0, "parse_cpu_list(\"%s\", %u)", s,   \
		       (unsigned)(max));                                                           \
		if (!ok(cpus_are(&_a, sizeof(_want) / sizeof(_want[0]), _want), "  %s", name))     \
			for (size_t _i = 0; _i < _a.n; _i++)                                       \
				diag("  got cpu %u", _a.cpus[_i]);                                 \
	} while (0)

static void check_cpus_fail(const char *s, uint32_t max, int want_r)
{
	struct cpu_acc a = { .fail_at = -1 };

	is_int(parse_cpu_list(s, max, cpu_add, &a), want_r, "parse_cpu_list(\"%s\", %u) is %d",
	       s ? s : "(null)", max, want_r);
}

static void test_cpu_list(void)
{
	CHECK_CPUS("0", 8, "cpu 0", 0);
	CHECK_CPUS("0,1", 8, "cpus 0 and 1", 0, 1);
	CHECK_CPUS("0-3,8", 16, "cpus 0..3 and 8", 0, 1, 2, 3, 8);
	CHECK_CPUS("7", 8, "max-1 is accepted", 7);
	CHECK_CPUS("2-2", 8, "a one-cpu range", 2);
	CHECK_CPUS("5,1", 8, "order kept as written", 5, 1);

	check_cpus_fail("8", 8, -ERANGE);
	check_cpus_fail("0-8", 8, -ERANGE);
	check_cpus_fail("99999999999999999999999", 8, -ERANGE);
	check_cpus_fail("3-1", 8, -EINVAL);
	check_cpus_fail("", 8, -EINVAL);
	check_cpus_fail(NULL, 8, -EINVAL);
	check_cpus_fail("0,", 8, -EINVAL);
	check_cpus_fail(",0", 8, -EINVAL);
	check_cpus_fail("0-", 8, -EINVAL);
	check_cpus_fail("-1", 8, -EINVAL);
	check_cpus_fail("0 ,1", 8, -EINVAL);
	check_cpus_fail("a", 8, -EINVAL);
	check_cpus_fail("+1", 8, -EINVAL);
	check_cpus_fail("0x1", 8, -EINVAL);
	check_cpus_fail("1-2-3", 8, -EINVAL);

	/* An error from @add stops the walk and is returned as is. */
	struct cpu_acc a = { .fail_at = 2 };
	is_int(parse_cpu_list("0-3", 8, cpu_add, &a), -E2BIG, "an error from add is returned");
	is_int(a.n, 2, "  and add is not called again after it failed");
}

int main(void)
{
	test_uint();
	test_size();
	test_ports();
	test_cpu_list();
	return done_testing();
}
