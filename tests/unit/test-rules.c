/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-rules: the rule grammars of src/policy/rules.h. For each parser a table of accepted
 * inputs with the exact fields and the canonical text (and a round trip through the formatter),
 * and a table of rejected neighbours with the exact errno, a piece of the message, and the
 * out-parameter left untouched. Then the matchers, each with negative controls.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "basic/macro.h"
#include "policy/canon.h"
#include "policy/rules.h"
#include "tap.h"

#define ANY NET_TARGET_ANY
#define HOST NET_TARGET_HOST
#define IP NET_TARGET_IP
#define TCPUDP (NET_PROTO_TCP | NET_PROTO_UDP)
#define ALLOW NET_RULE_ALLOW
#define DENY NET_RULE_DENY

static char err[512];

/* ok() for a parse that should succeed; shows the errno and the message when it did not. */
#define parse_ok(call, ...)                                                                        \
	({                                                                                         \
		int _r = (call);                                                                   \
		if (!ok(_r == 0, __VA_ARGS__))                                                     \
			diag("  got %d: %s", _r, err);                                             \
		_r == 0;                                                                           \
	})

/* The message of a failed parse holds @want and is one line. */
static void check_message(const char *in, const char *want)
{
	if (!ok(strstr(err, want) != NULL && !strchr(err, '\n'), "  message of \"%s\" says \"%s\"",
		in, want))
		diag("  message: %s", err);
}

static void addr_of(int family, const char *text, uint8_t out[16])
{
	memset(out, 0, 16);
	if (inet_pton(family, text, out) != 1)
		abort();
}

static char *ports_text(const struct port_set *set)
{
	char *s = NULL;
	if (bind_ports_format(set, &s) < 0)
		abort();
	return s;
}

/* --- network rules -------------------------------------------------------------------- */

static const struct net_ok {
	const char *in;
	int mode;
	uint32_t protos;
	int kind;
	const char *target; /* host name, or the address as inet_pton text */
	int prefix;
	const char *ports; /* "*" for all */
	const char *canon;
} net_ok[] = {
	{ "api.example.com:443", ALLOW, TCPUDP, HOST, "api.example.com", 0, "443",
	  "api.example.com:443" },
	{ "udp://1.1.1.1:53", ALLOW, NET_PROTO_UDP, IP, "1.1.1.1", 32, "53", "udp://1.1.1.1:53" },
	{ "tcp://10.0.0.0/8:80,443,8000-8005", ALLOW, NET_PROTO_TCP, IP, "10.0.0.0", 8,
	  "80,443,8000-8005", "tcp://10.0.0.0/8:80,443,8000-8005" },
	{ "icmp://*", ALLOW, NET_PROTO_ICMP, ANY, NULL, 0, "*", "icmp://*" },
	{ "udp://*:*", ALLOW, NET_PROTO_UDP, ANY, NULL, 0, "*", "udp://*" },
	{ "*", ALLOW, TCPUDP, ANY, NULL, 0, "*", "*" },
	{ ":443", ALLOW, TCPUDP, ANY, NULL, 0, "443", "*:443" },
	{ "*:1-65535", ALLOW, TCPUDP, ANY, NULL, 0, "1-65535", "*:1-65535" },
	{ "Example.COM.", ALLOW, TCPUDP, HOST, "example.com", 0, "*", "example.com" },
	{ "TCP://host-1.example:80-80", ALLOW, NET_PROTO_TCP, HOST, "host-1.example", 0, "80",
	  "tcp://host-1.example:80" },
	{ "localhost:8080", ALLOW, TCPUDP, HOST, "localhost", 0, "8080", "localhost:8080" },
	{ "a.b-c.d0:65535", ALLOW, TCPUDP, HOST, "a.b-c.d0", 0, "65535", "a.b-c.d0:65535" },
	{ "[::1]:22", ALLOW, TCPUDP, IP, "::1", 128, "22", "[::1]:22" },
	{ "[::1]", ALLOW, TCPUDP, IP, "::1", 128, "*", "::1" },
	{ "::1", ALLOW, TCPUDP, IP, "::1", 128, "*", "::1" },
	{ "2001:DB8::/32", ALLOW, TCPUDP, IP, "2001:db8::", 32, "*", "2001:db8::/32" },
	{ "[2001:db8::1/64]:443", ALLOW, TCPUDP, IP, "2001:db8::1", 64, "443",
	  "[2001:db8::1/64]:443" },
	{ "10.1.2.3/8", ALLOW, TCPUDP, IP, "10.1.2.3", 8, "*", "10.1.2.3/8" },
	{ "192.168.1.1/32", ALLOW, TCPUDP, IP, "192.168.1.1", 32, "*", "192.168.1.1" },
	{ "0.0.0.0/0", ALLOW, TCPUDP, IP, "0.0.0.0", 0, "*", "0.0.0.0/0" },
	{ "::ffff:10.0.0.0/104", ALLOW, TCPUDP, IP, "::ffff:10.0.0.0", 104, "*",
	  "::ffff:10.0.0.0/104" },
	{ "icmp://8.8.8.8", ALLOW, NET_PROTO_ICMP, IP, "8.8.8.8", 32, "*", "icmp://8.8.8.8" },
	{ "10.0.0.0/8", DENY, TCPUDP, IP, "10.0.0.0", 8, "*", "10.0.0.0/8" },
	{ "*:25", DENY, TCPUDP, ANY, NULL, 0, "25", "*:25" },
	{ "udp://[fe80::1]:53", DENY, NET_PROTO_UDP, IP, "fe80::1", 128, "53",
	  "udp://[fe80::1]:53" },
};

static const struct bad {
	const char *in;
	int mode;
	int r;
	const char *msg;
} net_bad[] = {
	{ "", ALLOW, -EINVAL, "missing target" },
	{ "tcp://", ALLOW, -EINVAL, "missing target" },
	{ "http://x.com", ALLOW, -EINVAL, "unknown scheme \"http://\"" },
	{ "icmp://host:80", ALLOW, -EINVAL, "icmp:// takes no port" },
	{ "icmp://*:*", ALLOW, -EINVAL, "icmp:// takes no port" },
	{ "host:0", ALLOW, -ERANGE, "port 0" },
	{ "host:0-10", ALLOW, -ERANGE, "port 0" },
	{ "host:65536", ALLOW, -ERANGE, "out of range" },
	{ "host:", ALLOW, -EINVAL, "invalid port list \"\"" },
	{ "host:80,*", ALLOW, -EINVAL, "invalid port list \"80,*\"" },
	{ "host:10-5", ALLOW, -EINVAL, "invalid port list" },
	{ "host:http", ALLOW, -EINVAL, "invalid port list \"http\"" },
	{ "host:80:90", ALLOW, -EINVAL, "not an IPv6 address" },
	{ "host :80", ALLOW, -EINVAL, "space" },
	{ "10.0.0.0/33", ALLOW, -ERANGE, "prefix length \"33\"" },
	{ "[::1/129]:80", ALLOW, -ERANGE, "prefix length \"129\"" },
	{ "::1/", ALLOW, -EINVAL, "empty prefix length" },
	{ "10.0.0.0/x", ALLOW, -EINVAL, "invalid prefix length \"x\"" },
	{ "10.0.0.0/-1", ALLOW, -EINVAL, "invalid prefix length" },
	{ "example.com/24", ALLOW, -EINVAL, "\"example.com\" in \"example.com/24\" is not an IP" },
	{ "example.com", DENY, -EINVAL, "a deny rule takes literal IPs or CIDRs, not hostnames" },
	{ "tcp://example.com:443", DENY, -EINVAL, "not hostnames: \"example.com\"" },
	{ "-bad.com", ALLOW, -EINVAL, "a label starts with '-'" },
	{ "bad-.com", ALLOW, -EINVAL, "a label ends with '-'" },
	{ "a..b", ALLOW, -EINVAL, "empty label" },
	{ ".", ALLOW, -EINVAL, "empty name" },
	{ "under_score.com", ALLOW, -EINVAL, "only letters, digits" },
	{ "*.example.com", ALLOW, -EINVAL, "only letters, digits" },
	{ "1.2.3", ALLOW, -EINVAL, "ends in a number" },
	{ "256.1.1.1", ALLOW, -EINVAL, "ends in a number" },
	{ "0x7f", ALLOW, -EINVAL, "ends in a number" },
	{ "[1.2.3.4]:80", ALLOW, -EINVAL, "brackets hold an IPv6 address" },
	{ "[example.com]:80", ALLOW, -EINVAL, "is not an IPv6 address" },
	{ "[]:80", ALLOW, -EINVAL, "is not an IPv6 address" },
	{ "[::1", ALLOW, -EINVAL, "unclosed '['" },
	{ "[::1]80", ALLOW, -EINVAL, "unexpected \"80\" after ']'" },
	{ "fe80::1%eth0", ALLOW, -EINVAL, "not an IPv6 address" },
	{ "1::2::3", ALLOW, -EINVAL, "not an IPv6 address" },
};

static void test_net_label_limits(void)
{
	char name[300];
	struct net_rule r;

	memset(name, 'a', 63);
	strcpy(name + 63, ".com");
	is_int(net_rule_parse(name, ALLOW, &r, err, sizeof(err)), 0, "a 63-character label");
	net_rule_done(&r);
	memset(name, 'a', 64);
	strcpy(name + 64, ".com");
	is_int(net_rule_parse(name, ALLOW, &r, err, sizeof(err)), -EINVAL, "a 64-character label");
	check_message("64-character label", "longer than 63");
	/* 4 x (62 + '.') + 1 = 253 characters, then 255. */
	for (int i = 0; i < 4; i++) {
		memset(name + i * 63, 'b', 62);
		name[i * 63 + 62] = '.';
	}
	strcpy(name + 252, "c");
	is_int(net_rule_parse(name, ALLOW, &r, err, sizeof(err)), 0, "a 253-character name");
	net_rule_done(&r);
	strcpy(name + 252, "c.");
	is_int(net_rule_parse(name, ALLOW, &r, err, sizeof(err)), 0,
	       "a 253-character name and the root dot");
	net_rule_done(&r);
	strcpy(name + 252, "cd");
	is_int(net_rule_parse(name, ALLOW, &r, err, sizeof(err)), -EINVAL, "a 254-character name");
	check_message("254-character name", "longer than 253");
}

static void test_net_parse(void)
{
	for (size_t i = 0; i < ELEMENTSOF(net_ok); i++) {
		const struct net_ok *t = &net_ok[i];
		struct net_rule r, again;
		char *text = NULL, *text2 = NULL;
		uint8_t addr[16] = { 0 };

		if (!parse_ok(net_rule_parse(t->in, t->mode, &r, err, sizeof(err)),
			      "net_rule_parse(\"%s\")", t->in))
			continue;
		if (t->kind == IP)
			addr_of(strchr(t->target, ':') ? AF_INET6 : AF_INET, t->target, addr);
		char *ports = ports_text(&r.ports);
		ok(r.protos == t->protos && r.kind == t->kind, "  protos %#x, kind %d", t->protos,
		   t->kind);
		if (t->kind == HOST)
			is_str(r.host, t->target, "  host");
		if (t->kind == IP)
			ok(r.family == (strchr(t->target, ':') ? AF_INET6 : AF_INET) &&
				   memcmp(r.addr, addr, 16) == 0 && r.prefix == t->prefix,
			   "  address %s/%d", t->target, t->prefix);
		is_str(ports, t->ports, "  ports");
		is_int(net_rule_format(&r, &text), 0, "  formats");
		is_str(text, t->canon, "  canonical text");
		is_int(net_rule_parse(text, t->mode, &again, err, sizeof(err)), 0, "  reparses");
		ok(net_rule_equal(&r, &again), "  round trip gives the same rule");
		is_int(net_rule_format(&again, &text2), 0, "  formats again");
		is_str(text2, text, "  the canonical text is a fixed point");
		free(ports);
		free(text);
		free(text2);
		net_rule_done(&r);
		net_rule_done(&again);
	}
	for (size_t i = 0; i < ELEMENTSOF(net_bad); i++) {
		struct net_rule r, sentinel;
		memset(&r, 0xa5, sizeof(r));
		memset(&sentinel, 0xa5, sizeof(sentinel));
		err[0] = '\0';
		is_int(net_rule_parse(net_bad[i].in, net_bad[i].mode, &r, err, sizeof(err)),
		       net_bad[i].r, "net_rule_parse(\"%s\"%s) fails with %d", net_bad[i].in,
		       net_bad[i].mode == DENY ? ", deny" : "", net_bad[i].r);
		check_message(net_bad[i].in, net_bad[i].msg);
		ok(memcmp(&r, &sentinel, sizeof(r)) == 0, "  and leaves *ret untouched");
	}
	char tiny[8];
	struct net_rule r;
	ok(net_rule_parse("http://x", ALLOW, &r, tiny, sizeof(tiny)) == -EINVAL &&
		   strlen(tiny) == sizeof(tiny) - 1,
	   "a short message buffer truncates the message");
	is_int(net_rule_parse("http://x", ALLOW, &r, NULL, 0), -EINVAL, "err may be NULL");
	is_int(net_rule_parse("bad\n.com", ALLOW, &r, err, sizeof(err)), -EINVAL,
	       "a newline in a rule");
	ok(!strchr(err, '\n'), "  is not copied into the message");
	test_net_label_limits();
}

static const struct net_match {
	const char *rule;
	uint32_t proto;
	const char *addr;
	uint16_t port;
	int want;
} net_matches[] = {
	{ "10.0.0.0/8", NET_PROTO_TCP, "10.1.2.3", 80, 1 },
	{ "10.0.0.0/8", NET_PROTO_TCP, "11.0.0.1", 80, 0 },
	{ "10.0.0.0/8", NET_PROTO_TCP, "9.255.255.255", 80, 0 },
	{ "10.1.2.3/8", NET_PROTO_UDP, "10.200.0.1", 53, 1 },
	{ "192.168.1.128/25", NET_PROTO_TCP, "192.168.1.200", 1, 1 },
	{ "192.168.1.128/25", NET_PROTO_TCP, "192.168.1.127", 1, 0 },
	{ "10.0.0.0/8", NET_PROTO_TCP, "::ffff:10.1.2.3", 80, 1 },
	{ "10.0.0.0/8", NET_PROTO_TCP, "::ffff:11.1.2.3", 80, 0 },
	{ "10.0.0.0/8", NET_PROTO_TCP, "::10.1.2.3", 80, 0 },
	{ "::ffff:10.0.0.0/104", NET_PROTO_TCP, "10.9.9.9", 80, 1 },
	{ "::ffff:10.0.0.0/104", NET_PROTO_TCP, "11.0.0.1", 80, 0 },
	{ "::ffff:1.2.3.4", NET_PROTO_TCP, "1.2.3.4", 80, 1 },
	{ "::/0", NET_PROTO_TCP, "2001:db8::1", 80, 1 },
	{ "::/0", NET_PROTO_TCP, "1.2.3.4", 80, 0 },
	{ "::/0", NET_PROTO_TCP, "::ffff:1.2.3.4", 80, 0 },
	{ "0.0.0.0/0", NET_PROTO_TCP, "1.2.3.4", 80, 1 },
	{ "0.0.0.0/0", NET_PROTO_TCP, "2001:db8::1", 80, 0 },
	{ "2001:db8::/32", NET_PROTO_TCP, "2001:db8:ffff::1", 80, 1 },
	{ "2001:db8::/32", NET_PROTO_TCP, "2001:db9::", 80, 0 },
	{ "[::1]:22", NET_PROTO_TCP, "::1", 22, 1 },
	{ "[::1]:22", NET_PROTO_TCP, "::1", 23, 0 },
	{ "tcp://1.2.3.4:443", NET_PROTO_TCP, "1.2.3.4", 443, 1 },
	{ "tcp://1.2.3.4:443", NET_PROTO_UDP, "1.2.3.4", 443, 0 },
	{ "tcp://1.2.3.4:443", NET_PROTO_TCP, "1.2.3.4", 80, 0 },
	{ "1.2.3.4:80,8000-8005", NET_PROTO_TCP, "1.2.3.4", 8003, 1 },
	{ "1.2.3.4:80,8000-8005", NET_PROTO_TCP, "1.2.3.4", 8006, 0 },
	{ "1.2.3.4:80,8000-8005", NET_PROTO_UDP, "1.2.3.4", 80, 1 },
	{ "1.2.3.4:80,8000-8005", NET_PROTO_ICMP, "1.2.3.4", 0, 0 },
	{ "icmp://1.2.3.4", NET_PROTO_ICMP, "1.2.3.4", 0, 1 },
	{ "icmp://1.2.3.4", NET_PROTO_TCP, "1.2.3.4", 80, 0 },
	{ "icmp://*", NET_PROTO_ICMP, "2001:db8::1", 0, 1 },
	{ "udp://*:53", NET_PROTO_UDP, "8.8.8.8", 53, 1 },
	{ "udp://*:53", NET_PROTO_TCP, "8.8.8.8", 53, 0 },
	{ "udp://*:53", NET_PROTO_UDP, "8.8.8.8", 54, 0 },
	{ "*", NET_PROTO_TCP, "::1", 1, 1 },
	{ "example.com", NET_PROTO_TCP, "93.184.216.34", 80, 0 },
	{ "localhost", NET_PROTO_TCP, "127.0.0.1", 80, 0 },
};

static void test_net_match(void)
{
	for (size_t i = 0; i < ELEMENTSOF(net_matches); i++) {
		const struct net_match *t = &net_matches[i];
		struct net_rule r;
		uint8_t addr[16];
		int family = strchr(t->addr, ':') ? AF_INET6 : AF_INET;

		addr_of(family, t->addr, addr);
		if (net_rule_parse(t->rule, ALLOW, &r, err, sizeof(err)) < 0)
			abort();
		is_int(net_rule_match(&r, t->proto, family, addr, t->port), t->want,
		       "\"%s\" %s %s port %u: %s", t->rule,
		       t->proto == NET_PROTO_TCP   ? "tcp"
		       : t->proto == NET_PROTO_UDP ? "udp"
						   : "icmp",
		       t->addr, t->port, t->want ? "match" : "no match");
		net_rule_done(&r);
	}
	struct net_rule r;
	uint8_t a[16] = { 1, 2, 3, 4 };
	if (net_rule_parse("*", ALLOW, &r, err, sizeof(err)) < 0)
		abort();
	is_int(net_rule_match(&r, NET_PROTO_TCP | NET_PROTO_UDP, AF_INET, a, 1), 0,
	       "a query names one protocol");
	is_int(net_rule_match(&r, NET_PROTO_TCP, AF_UNIX, a, 1), 0,
	       "a query's family is INET/INET6");
	net_rule_done(&r);
}

/* --- bind ports ----------------------------------------------------------------------- */

static void check_bind(const char *in, int mode, int want_r, const char *want, const char *msg)
{
	struct port_set set = { 0 };
	char *text = NULL;

	err[0] = '\0';
	is_int(bind_ports_parse(in, mode, &set, err, sizeof(err)), want_r,
	       "bind_ports_parse(\"%s\", %s)", in, mode == NET_BIND_DENY ? "deny" : "allow");
	if (want_r == 0) {
		is_int(bind_ports_format(&set, &text), 0, "  formats");
		is_str(text, want, "  as \"%s\"", want);
	} else {
		check_message(in, msg);
		ok(set.n == 0 && !set.all, "  and leaves the set empty");
	}
	free(text);
	port_set_done(&set);
}

static void test_bind(void)
{
	check_bind("8080", NET_BIND_ALLOW, 0, "8080", NULL);
	check_bind("9000-9005", NET_BIND_DENY, 0, "9000-9005", NULL);
	check_bind("80, 443,8000-8000", NET_BIND_ALLOW, 0, "80,443,8000", NULL);
	check_bind("*", NET_BIND_ALLOW, 0, "*", NULL);
	check_bind("0", NET_BIND_ALLOW, 0, "0", NULL);
	check_bind("0-10", NET_BIND_ALLOW, 0, "0-10", NULL);
	check_bind("0", NET_BIND_DENY, -ERANGE, NULL, "port 0");
	check_bind("80,0-10", NET_BIND_DENY, -ERANGE, NULL, "net_deny_bind takes ports 1-65535");
	check_bind("*", NET_BIND_DENY, -EINVAL, NULL, "a deny list takes ports, not \"*\"");
	check_bind("*,80", NET_BIND_ALLOW, -EINVAL, NULL, "cannot be mixed");
	check_bind("65536", NET_BIND_ALLOW, -ERANGE, NULL, "out of range (0-65535)");
	check_bind("", NET_BIND_ALLOW, -EINVAL, NULL, "invalid port list \"\"");
	check_bind("http", NET_BIND_DENY, -EINVAL, NULL, "invalid port list \"http\"");

	struct port_set set = { 0 };
	char *text = NULL;
	is_int(bind_ports_parse("80", NET_BIND_ALLOW, &set, err, sizeof(err)), 0,
	       "entries accumulate");
	is_int(bind_ports_parse("*", NET_BIND_ALLOW, &set, err, sizeof(err)), -EINVAL,
	       "  \"*\" after a port");
	check_message("* after 80", "cannot be mixed");
	is_int(bind_ports_parse("90-91", NET_BIND_ALLOW, &set, err, sizeof(err)), 0,
	       "  then 90-91");
	is_int(bind_ports_format(&set, &text), 0, "  formats");
	is_str(text, "80,90-91", "  both entries kept");
	free(text);
	port_set_done(&set);
	is_int(bind_ports_parse("80", NET_BIND_DENY, &set, err, sizeof(err)), 0, "deny 80");
	is_int(bind_ports_parse("100,0", NET_BIND_DENY, &set, err, sizeof(err)), -ERANGE,
	       "  then 100,0 fails");
	ok(set.n == 1 && set.ranges[0].lo == 80, "  and the set holds 80 only");
	port_set_done(&set);
	is_int(bind_ports_format(&set, &text), 0, "an empty set formats");
	is_str(text, "", "  as \"\"");
	free(text);
}

/* --- HTTP rules ----------------------------------------------------------------------- */

static const struct http_ok {
	const char *in;
	const char *method;
	int kind;
	const char *host; /* name, or address text */
	uint16_t port;
	const char *path;
	const char *canon;
} http_ok[] = {
	{ "GET docs.python.org/*", "GET", HTTP_HOST_NAME, "docs.python.org", 0, "/*",
	  "GET docs.python.org/*" },
	{ "POST api.openai.com/v1/*", "POST", HTTP_HOST_NAME, "api.openai.com", 0, "/v1/*",
	  "POST api.openai.com/v1/*" },
	{ "* */admin/*", "*", HTTP_HOST_ANY, NULL, 0, "/admin/*", "* */admin/*" },
	{ "get Example.COM.", "GET", HTTP_HOST_NAME, "example.com", 0, "/*", "GET example.com/*" },
	{ "GET example.com:8080/x", "GET", HTTP_HOST_NAME, "example.com", 8080, "/x",
	  "GET example.com:8080/x" },
	{ "DELETE [::1]:8443/a", "DELETE", HTTP_HOST_IP, "::1", 8443, "/a", "DELETE [::1]:8443/a" },
	{ "GET ::1/a", "GET", HTTP_HOST_IP, "::1", 0, "/a", "GET [::1]/a" },
	{ "GET [2001:DB8::1]", "GET", HTTP_HOST_IP, "2001:db8::1", 0, "/*", "GET [2001:db8::1]/*" },
	{ "GET 10.0.0.1/", "GET", HTTP_HOST_IP, "10.0.0.1", 0, "/", "GET 10.0.0.1/" },
	{ "GET 10.0.0.1:080", "GET", HTTP_HOST_IP, "10.0.0.1", 80, "/*", "GET 10.0.0.1:80/*" },
	{ "  GET\thost.example/x  ", "GET", HTTP_HOST_NAME, "host.example", 0, "/x",
	  "GET host.example/x" },
	{ "PATCH *:8080/api", "PATCH", HTTP_HOST_ANY, NULL, 8080, "/api", "PATCH *:8080/api" },
	{ "GET example.com/a?b=c&d=%20#f", "GET", HTTP_HOST_NAME, "example.com", 0,
	  "/a?b=c&d=%20#f", "GET example.com/a?b=c&d=%20#f" },
	{ "GET example.com//x/../y", "GET", HTTP_HOST_NAME, "example.com", 0, "//x/../y",
	  "GET example.com//x/../y" },
	{ "GET *.example.com/*", "GET", HTTP_HOST_SUFFIX, "example.com", 0, "/*",
	  "GET *.example.com/*" },
	{ "post *.Example.COM.:8443", "POST", HTTP_HOST_SUFFIX, "example.com", 8443, "/*",
	  "POST *.example.com:8443/*" },
	{ "* *.com/x", "*", HTTP_HOST_SUFFIX, "com", 0, "/x", "* *.com/x" },
	{ "GET *.a-b.c.example/", "GET", HTTP_HOST_SUFFIX, "a-b.c.example", 0, "/",
	  "GET *.a-b.c.example/" },
};

static const struct bad http_bad[] = {
	{ "", 0, -EINVAL, "is not \"METHOD host/path\"" },
	{ "GET", 0, -EINVAL, "is not \"METHOD host/path\"" },
	{ "GET a.com/x extra", 0, -EINVAL, "unexpected \"extra\"" },
	{ "G3T a.com/", 0, -EINVAL, "invalid HTTP method \"G3T\"" },
	{ "M-SEARCH a.com/", 0, -EINVAL, "invalid HTTP method" },
	{ "ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFG a.com/", 0, -EINVAL, "longer than 32" },
	{ "GET /path", 0, -EINVAL, "missing host" },
	{ "GET a_b.com/", 0, -EINVAL, "invalid host \"a_b.com\"" },
	{ "GET a_b.com/", 0, -EINVAL, "in HTTP rule \"GET a_b.com/\"" },
	{ "GET *example.com/", 0, -EINVAL, "invalid host \"*example.com\"" },
	{ "GET *./", 0, -EINVAL, "invalid host \"*.\"" },
	{ "GET *.*/", 0, -EINVAL, "invalid host \"*.*\"" },
	{ "GET *.*.example.com/", 0, -EINVAL, "invalid host \"*.*.example.com\"" },
	{ "GET a.*.example.com/", 0, -EINVAL, "invalid host \"a.*.example.com\"" },
	{ "GET **.example.com/", 0, -EINVAL, "invalid host" },
	{ "GET *..example.com/", 0, -EINVAL, "empty label" },
	{ "GET *.10.0.0.1/", 0, -EINVAL, "ends in a number" },
	{ "GET [*.example.com]/", 0, -EINVAL, "not an IPv6 address" },
	{ "GET *.a_b.com/", 0, -EINVAL, "for its subdomains" },
	{ "GET 1.2.3/", 0, -EINVAL, "ends in a number" },
	{ "GET a.com:0/", 0, -ERANGE, "port \"0\" is out of range" },
	{ "GET a.com:99999/", 0, -ERANGE, "out of range (1-65535)" },
	{ "GET a.com:/", 0, -EINVAL, "empty port" },
	{ "GET a.com:8x/", 0, -EINVAL, "invalid port \"8x\"" },
	{ "GET [1.2.3.4]/", 0, -EINVAL, "brackets hold an IPv6 address" },
	{ "GET [::1/x", 0, -EINVAL, "unclosed '['" },
	{ "GET [::1]x/", 0, -EINVAL, "unexpected \"x\" after ']'" },
	{ "GET 2001:db8::1:8080:/x", 0, -EINVAL, "not an IPv6 address" },
	{ "GET a.com/\x01", 0, -EINVAL, "not printable ASCII" },
	{ "GET a.com/\xc3\xa9", 0, -EINVAL, "not printable ASCII" },
};

static void test_http_parse(void)
{
	for (size_t i = 0; i < ELEMENTSOF(http_ok); i++) {
		const struct http_ok *t = &http_ok[i];
		struct http_rule r, again;
		char *text = NULL, *text2 = NULL;

		if (!parse_ok(http_rule_parse(t->in, &r, err, sizeof(err)),
			      "http_rule_parse(\"%s\")", t->in))
			continue;
		is_str(r.method, t->method, "  method");
		is_int(r.host_kind, t->kind, "  host kind");
		if (t->kind == HTTP_HOST_NAME || t->kind == HTTP_HOST_SUFFIX)
			is_str(r.host, t->host, "  host");
		if (t->kind == HTTP_HOST_IP) {
			uint8_t addr[16];
			int family = strchr(t->host, ':') ? AF_INET6 : AF_INET;
			addr_of(family, t->host, addr);
			ok(r.family == family && memcmp(r.addr, addr, 16) == 0, "  address %s",
			   t->host);
		}
		is_int(r.port, t->port, "  port");
		is_str(r.path, t->path, "  path");
		is_int(http_rule_format(&r, &text), 0, "  formats");
		is_str(text, t->canon, "  canonical text");
		is_int(http_rule_parse(text, &again, err, sizeof(err)), 0, "  reparses");
		ok(http_rule_equal(&r, &again), "  round trip gives the same rule");
		is_int(http_rule_format(&again, &text2), 0, "  formats again");
		is_str(text2, text, "  the canonical text is a fixed point");
		free(text);
		free(text2);
		http_rule_done(&r);
		http_rule_done(&again);
	}
	for (size_t i = 0; i < ELEMENTSOF(http_bad); i++) {
		struct http_rule r, sentinel;
		memset(&r, 0xa5, sizeof(r));
		memset(&sentinel, 0xa5, sizeof(sentinel));
		err[0] = '\0';
		is_int(http_rule_parse(http_bad[i].in, &r, err, sizeof(err)), http_bad[i].r,
		       "http_rule_parse(\"%s\") fails with %d", http_bad[i].in, http_bad[i].r);
		check_message(http_bad[i].in, http_bad[i].msg);
		ok(memcmp(&r, &sentinel, sizeof(r)) == 0, "  and leaves *ret untouched");
	}
}

static const struct glob {
	const char *pattern, *str;
	int want;
} globs[] = {
	{ "/*", "/anything/at/all", 1 },
	{ "/*", "", 0 },
	{ "/v1/*", "/v1/", 1 },
	{ "/v1/*", "/v1", 0 },
	{ "*", "", 1 },
	{ "", "", 1 },
	{ "", "a", 0 },
	{ "/a*b", "/ab", 1 },
	{ "/a*b", "/axxb", 1 },
	{ "/a*b", "/axxbc", 0 },
	{ "/a*b*c", "/abbbc", 1 },
	{ "*/admin/*", "/x/admin/y", 1 },
	{ "*/admin/*", "/admin", 0 },
	{ "/**", "/", 1 },
	{ "a*a*a", "aa", 0 },
	{ "a*a*a", "aaa", 1 },
	{ "*.json", "/x.json", 1 },
	{ "*.json", "/x.json/", 0 },
	{ "/exact", "/exact", 1 },
	{ "/exact", "/exact2", 0 },
	{ "/exact", "/Exact", 0 },
	{ "*ab*ab", "xabyabab", 1 },
	{ "*abc", "ababc", 1 },
	{ "/?q=*", "/?q=1", 1 },
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_glob(void)
{
	for (size_t i = 0; i < ELEMENTSOF(globs); i++)
		is_int(http_glob_match(globs[i].pattern, globs[i].str), globs[i].want,
		       "glob \"%s\" %s \"%s\"", globs[i].pattern,
		       globs[i].want ? "matches" : "does not match", globs[i].str);

	size_t n = 200000;
	char *s = malloc(n + 2);
	if (!s)
		abort();
	memset(s, 'a', n);
	s[n] = '\0';
	double t0 = now();
	int m1 = http_glob_match("*a*a*a*a*a*a*a*a*b", s);
	s[n] = 'b';
	s[n + 1] = '\0';
	int m2 = http_glob_match("*a*a*a*a*b", s);
	double dt = now() - t0;
	is_int(m1, 0, "\"*a*a*a*a*a*a*a*a*b\" does not match 200000 a's");
	is_int(m2, 1, "\"*a*a*a*a*b\" matches 200000 a's and a b");
	ok(dt < 2.0, "  both within 2 s (took %.3f s)", dt);
	free(s);
}

static const struct http_match {
	const char *rule, *method, *host;
	uint16_t port;
	const char *path;
	int want;
} http_matches[] = {
	{ "GET example.com/*", "GET", "example.com", 80, "/x", 1 },
	{ "GET example.com/*", "get", "EXAMPLE.com.", 443, "/x", 1 },
	{ "GET example.com/*", "POST", "example.com", 80, "/x", 0 },
	{ "GET example.com/*", "GET", "example.org", 80, "/x", 0 },
	{ "GET example.com/*", "GET", "sub.example.com", 80, "/x", 0 },
	{ "GET example.com/*", "GET", "example.com..", 80, "/x", 0 },
	{ "GET example.com/*", "GET", "10.0.0.1", 80, "/x", 0 },
	{ "* *:8080/api/*", "PUT", "anything", 8080, "/api/v1", 1 },
	{ "* *:8080/api/*", "PUT", "anything", 80, "/api/v1", 0 },
	{ "* *:8080/api/*", "PUT", "anything", 8080, "/apiv1", 0 },
	{ "GET [::1]/x", "GET", "[::1]", 80, "/x", 1 },
	{ "GET [::1]/x", "GET", "::1", 80, "/x", 1 },
	{ "GET [::1]/x", "GET", "0:0::1", 80, "/x", 1 },
	{ "GET [::1]/x", "GET", "::2", 80, "/x", 0 },
	{ "GET 10.0.0.1/x", "GET", "10.0.0.1", 80, "/x", 1 },
	{ "GET 10.0.0.1/x", "GET", "::ffff:10.0.0.1", 80, "/x", 1 },
	{ "GET 10.0.0.1/x", "GET", "10.0.0.2", 80, "/x", 0 },
	{ "GET 10.0.0.1/x", "GET", "example.com", 80, "/x", 0 },
	{ "* */admin/*", "GET", "h", 80, "/admin/users", 1 },
	{ "* */admin/*", "GET", "h", 80, "/v1/admin/users", 0 },
	{ "* *", "DELETE", "h", 1, "/", 1 },
	{ "GET *.example.com/*", "GET", "a.example.com", 80, "/x", 1 },
	{ "GET *.example.com/*", "GET", "A.b.Example.COM.", 80, "/x", 1 },
	{ "GET *.example.com/*", "GET", "example.com", 80, "/x", 0 },
	{ "GET *.example.com/*", "GET", "example.com.", 80, "/x", 0 },
	{ "GET *.example.com/*", "GET", ".example.com", 80, "/x", 0 },
	{ "GET *.example.com/*", "GET", "a..example.com", 80, "/x", 0 },
	{ "GET *.example.com/*", "GET", "aexample.com", 80, "/x", 0 },
	{ "GET *.example.com/*", "GET", "a.example.com.evil", 80, "/x", 0 },
	{ "GET *.example.com/*", "GET", "a.example.org", 80, "/x", 0 },
	{ "GET *.example.com/*", "POST", "a.example.com", 80, "/x", 0 },
	{ "GET *.example.com:8443/*", "GET", "a.example.com", 8443, "/x", 1 },
	{ "GET *.example.com:8443/*", "GET", "a.example.com", 443, "/x", 0 },
	{ "GET *.com/*", "GET", "x.com", 80, "/", 1 },
	{ "GET *.com/*", "GET", "com", 80, "/", 0 },
	{ "GET example.com/*", "GET", "a.example.com", 80, "/x", 0 },
};

static void test_http_match(void)
{
	for (size_t i = 0; i < ELEMENTSOF(http_matches); i++) {
		const struct http_match *t = &http_matches[i];
		struct http_rule r;
		if (http_rule_parse(t->rule, &r, err, sizeof(err)) < 0)
			abort();
		is_int(http_rule_match(&r, t->method, t->host, t->port, t->path), t->want,
		       "\"%s\" vs %s %s:%u%s: %s", t->rule, t->method, t->host, t->port, t->path,
		       t->want ? "match" : "no match");
		http_rule_done(&r);
	}
}

/* --- RFC 3339 ------------------------------------------------------------------------- */

static const struct time_ok {
	const char *in;
	int64_t sec;
	uint32_t nsec;
	const char *canon;
} time_ok[] = {
	{ "1970-01-01T00:00:00Z", 0, 0, "1970-01-01T00:00:00Z" },
	{ "2026-01-01T00:00:00Z", 1767225600, 0, "2026-01-01T00:00:00Z" },
	{ "2026-01-01t00:00:00z", 1767225600, 0, "2026-01-01T00:00:00Z" },
	{ "2026-01-01 00:00:00Z", 1767225600, 0, "2026-01-01T00:00:00Z" },
	{ "2026-01-01T01:00:00+01:00", 1767225600, 0, "2026-01-01T00:00:00Z" },
	{ "2025-12-31T19:00:00-05:00", 1767225600, 0, "2026-01-01T00:00:00Z" },
	{ "2026-01-01T00:00:00-00:00", 1767225600, 0, "2026-01-01T00:00:00Z" },
	{ "2026-01-01T05:30:00+05:30", 1767225600, 0, "2026-01-01T00:00:00Z" },
	{ "2024-02-29T12:00:00Z", 1709208000, 0, "2024-02-29T12:00:00Z" },
	{ "2000-02-29T00:00:00Z", 951782400, 0, "2000-02-29T00:00:00Z" },
	{ "1985-04-12T23:20:50.52Z", 482196050, 520000000, "1985-04-12T23:20:50.520000000Z" },
	{ "1996-12-19T16:39:57-08:00", 851042397, 0, "1996-12-20T00:39:57Z" },
	{ "1969-12-31T23:59:59.5Z", -1, 500000000, "1969-12-31T23:59:59.500000000Z" },
	{ "2016-12-31T23:59:60Z", 1483228800, 0, "2017-01-01T00:00:00Z" },
	{ "2026-01-01T00:00:00.123456789+00:00", 1767225600, 123456789,
	  "2026-01-01T00:00:00.123456789Z" },
	{ "2026-01-01T00:00:00.000000001Z", 1767225600, 1, "2026-01-01T00:00:00.000000001Z" },
	{ "0000-01-01T00:00:00Z", -62167219200LL, 0, "0000-01-01T00:00:00Z" },
	{ "0000-01-01T00:30:00+00:30", -62167219200LL, 0, "0000-01-01T00:00:00Z" },
	{ "9999-12-31T23:59:59.999999999Z", 253402300799LL, 999999999,
	  "9999-12-31T23:59:59.999999999Z" },
};

static const struct bad time_bad[] = {
	{ "2026-01-01T00:00:00", 0, -EINVAL, "needs an offset (Z or +hh:mm)" },
	{ "2026-01-01T00:00:00.5", 0, -EINVAL, "needs an offset" },
	{ "2026-01-01T00:00:00 UTC", 0, -EINVAL, "needs an offset" },
	{ "2026-01-01T00:00:00EST", 0, -EINVAL, "needs an offset" },
	{ "2026-01-01", 0, -EINVAL, "is not an RFC 3339 date-time" },
	{ "", 0, -EINVAL, "is not an RFC 3339 date-time" },
	{ "2023-02-29T00:00:00Z", 0, -ERANGE, "day 29 out of range (01-28)" },
	{ "1900-02-29T00:00:00Z", 0, -ERANGE, "day 29" },
	{ "2026-04-31T00:00:00Z", 0, -ERANGE, "day 31 out of range (01-30)" },
	{ "2026-01-00T00:00:00Z", 0, -ERANGE, "day 00" },
	{ "2026-13-01T00:00:00Z", 0, -ERANGE, "month 13 out of range (01-12)" },
	{ "2026-00-01T00:00:00Z", 0, -ERANGE, "month 00" },
	{ "2026-01-01T24:00:00Z", 0, -ERANGE, "hour 24" },
	{ "2026-01-01T00:60:00Z", 0, -ERANGE, "minute 60" },
	{ "2026-01-01T00:00:61Z", 0, -ERANGE, "second 61" },
	{ "2026-01-01T00:00:00+24:00", 0, -ERANGE, "offset hour 24" },
	{ "2026-01-01T00:00:00+05:60", 0, -ERANGE, "offset minute 60" },
	{ "2026-01-01T00:00:00.1234567890Z", 0, -EINVAL, "more than 9 fractional digits" },
	{ "2026-01-01T00:00:00.Z", 0, -EINVAL, "no digit after '.'" },
	{ "2026-01-01T00:00:00+0100", 0, -EINVAL, "invalid offset" },
	{ "2026-01-01T00:00:00+1:00", 0, -EINVAL, "invalid offset" },
	{ "2026-01-01T00:00:00Zx", 0, -EINVAL, "unexpected \"x\" after the offset" },
	{ "2026-01-01T00:00:00+01:00:00", 0, -EINVAL, "unexpected \":00\"" },
	{ "26-01-01T00:00:00Z", 0, -EINVAL, "not an RFC 3339" },
	{ "+2026-01-01T00:00:00Z", 0, -EINVAL, "not an RFC 3339" },
	{ "2026-1-01T00:00:00Z", 0, -EINVAL, "not an RFC 3339" },
	{ "2026-01-01X00:00:00Z", 0, -EINVAL, "not an RFC 3339" },
	{ "2026-01-01T0:00:00Z", 0, -EINVAL, "not an RFC 3339" },
	{ "2026-01-01T00:00Z", 0, -EINVAL, "not an RFC 3339" },
	{ "9999-12-31T23:59:59-00:01", 0, -ERANGE, "outside the years 0000-9999" },
	{ "9999-12-31T23:59:60Z", 0, -ERANGE, "outside the years" },
	{ "0000-01-01T00:00:00+00:01", 0, -ERANGE, "outside the years" },
};

static void test_rfc3339(void)
{
	char buf[RFC3339_BUF_SIZE];

	for (size_t i = 0; i < ELEMENTSOF(time_ok); i++) {
		const struct time_ok *t = &time_ok[i];
		int64_t sec = 0, sec2 = 0;
		uint32_t nsec = 0, nsec2 = 0;

		if (!parse_ok(rfc3339_parse(t->in, &sec, &nsec, err, sizeof(err)),
			      "rfc3339_parse(\"%s\")", t->in))
			continue;
		ok(sec == t->sec && nsec == t->nsec, "  = %lld s %u ns (got %lld s %u ns)",
		   (long long)t->sec, t->nsec, (long long)sec, nsec);
		is_int(rfc3339_format(sec, nsec, buf), 0, "  formats");
		is_str(buf, t->canon, "  canonical text");
		is_int(rfc3339_parse(buf, &sec2, &nsec2, err, sizeof(err)), 0, "  reparses");
		ok(sec2 == sec && nsec2 == nsec, "  to the same instant");
	}
	for (size_t i = 0; i < ELEMENTSOF(time_bad); i++) {
		int64_t sec = 42;
		uint32_t nsec = 42;
		err[0] = '\0';
		is_int(rfc3339_parse(time_bad[i].in, &sec, &nsec, err, sizeof(err)), time_bad[i].r,
		       "rfc3339_parse(\"%s\") fails with %d", time_bad[i].in, time_bad[i].r);
		check_message(time_bad[i].in, time_bad[i].msg);
		ok(sec == 42 && nsec == 42, "  and leaves the results untouched");
	}

	static const struct {
		int64_t sec;
		uint32_t nsec;
		int r;
		const char *text;
	} fmt[] = {
		{ -1, 0, 0, "1969-12-31T23:59:59Z" },
		{ -86400, 0, 0, "1969-12-31T00:00:00Z" },
		{ -86401, 0, 0, "1969-12-30T23:59:59Z" },
		{ 951782400, 1, 0, "2000-02-29T00:00:00.000000001Z" },
		{ -62167219200LL, 0, 0, "0000-01-01T00:00:00Z" },
		{ 253402300799LL, 999999999, 0, "9999-12-31T23:59:59.999999999Z" },
		{ 253402300800LL, 0, -ERANGE, NULL },
		{ -62167219201LL, 0, -ERANGE, NULL },
		{ INT64_MIN, 0, -ERANGE, NULL },
		{ 0, 1000000000, -ERANGE, NULL },
	};
	for (size_t i = 0; i < ELEMENTSOF(fmt); i++) {
		is_int(rfc3339_format(fmt[i].sec, fmt[i].nsec, buf), fmt[i].r,
		       "rfc3339_format(%lld, %u) returns %d", (long long)fmt[i].sec, fmt[i].nsec,
		       fmt[i].r);
		if (fmt[i].r == 0)
			is_str(buf, fmt[i].text, "  canonical text");
	}
}

/* --- mount entries, credentials, --http-auth ------------------------------------------- */

static const struct mount_ok {
	const char *in, *virt, *host;
	int ro;
	const char *canon;
} mount_ok[] = {
	{ "/work:/host/sandbox/work", "/work", "/host/sandbox/work", 0,
	  "/work:/host/sandbox/work" },
	{ "/a:/b:ro", "/a", "/b", 1, "/a:/b:ro" },
	{ "/a:/b:rw", "/a", "/b", 0, "/a:/b" },
	{ "/a b:/c d/", "/a b", "/c d/", 0, "/a b:/c d/" },
	{ "/:/", "/", "/", 0, "/:/" },
};

static const struct bad mount_bad[] = {
	{ "", 0, -EINVAL, "is not VIRTUAL:HOST[:ro|:rw]" },
	{ "/a", 0, -EINVAL, "is not VIRTUAL:HOST" },
	{ ":/b", 0, -EINVAL, "empty virtual path" },
	{ "/a:", 0, -EINVAL, "empty host path" },
	{ "/a::ro", 0, -EINVAL, "empty host path" },
	{ "a:/b", 0, -EINVAL, "virtual path \"a\"" },
	{ "/a:b", 0, -EINVAL, "host path \"b\" in mount entry \"/a:b\" is not absolute" },
	{ "/a:/b:", 0, -EINVAL, "ends in \"\", not :ro or :rw" },
	{ "/a:/b:RO", 0, -EINVAL, "ends in \"RO\"" },
	{ "/a:/b:/c", 0, -EINVAL, "paths cannot hold ':'" },
	{ "/a:/b:ro:x", 0, -EINVAL, "ends in \"ro:x\"" },
};

static void test_mount(void)
{
	for (size_t i = 0; i < ELEMENTSOF(mount_ok); i++) {
		const struct mount_ok *t = &mount_ok[i];
		struct mount_entry m, again;
		char *text = NULL;

		if (!parse_ok(mount_entry_parse(t->in, &m, err, sizeof(err)),
			      "mount_entry_parse(\"%s\")", t->in))
			continue;
		is_str(m.virt, t->virt, "  virtual path");
		is_str(m.host, t->host, "  host path");
		is_int(m.ro, t->ro, "  ro");
		is_int(mount_entry_format(&m, &text), 0, "  formats");
		is_str(text, t->canon, "  canonical text");
		is_int(mount_entry_parse(text, &again, err, sizeof(err)), 0, "  reparses");
		ok(strcmp(m.virt, again.virt) == 0 && strcmp(m.host, again.host) == 0 &&
			   m.ro == again.ro,
		   "  round trip gives the same entry");
		free(text);
		mount_entry_done(&m);
		mount_entry_done(&again);
	}
	for (size_t i = 0; i < ELEMENTSOF(mount_bad); i++) {
		struct mount_entry m = { (char *)"x", (char *)"y", 7 };
		err[0] = '\0';
		is_int(mount_entry_parse(mount_bad[i].in, &m, err, sizeof(err)), mount_bad[i].r,
		       "mount_entry_parse(\"%s\") fails with %d", mount_bad[i].in, mount_bad[i].r);
		check_message(mount_bad[i].in, mount_bad[i].msg);
		ok(strcmp(m.virt, "x") == 0 && m.ro == 7, "  and leaves *ret untouched");
	}
	char *text = NULL;
	struct mount_entry m = { (char *)"/a:b", (char *)"/c", 0 };
	is_int(mount_entry_format(&m, &text), -EINVAL, "a path with ':' cannot be formatted");
	m.virt = (char *)"rel";
	is_int(mount_entry_format(&m, &text), -EINVAL, "nor a relative one");
}

static const struct cred_ok {
	const char *in, *name;
	int source;
	const char *ref;
	int fd;
	const char *canon;
} cred_ok[] = {
	{ "openai=env:OPENAI_API_KEY", "openai", CRED_SOURCE_ENV, "OPENAI_API_KEY", -1,
	  "openai=env:OPENAI_API_KEY" },
	{ "anthropic=file:/run/secrets/anthropic-key", "anthropic", CRED_SOURCE_FILE,
	  "/run/secrets/anthropic-key", -1, "anthropic=file:/run/secrets/anthropic-key" },
	{ "api=fd:3", "api", CRED_SOURCE_FD, NULL, 3, "api=fd:3" },
	{ "x=fd:007", "x", CRED_SOURCE_FD, NULL, 7, "x=fd:7" },
	{ "a.b-c_D9=fd:2147483647", "a.b-c_D9", CRED_SOURCE_FD, NULL, 2147483647,
	  "a.b-c_D9=fd:2147483647" },
	{ "n=file:/p=x:y", "n", CRED_SOURCE_FILE, "/p=x:y", -1, "n=file:/p=x:y" },
	{ "_=env:_x1", "_", CRED_SOURCE_ENV, "_x1", -1, "_=env:_x1" },
};

static const struct bad cred_bad[] = {
	{ "openai", 0, -EINVAL, "is not NAME=SOURCE" },
	{ "=env:X", 0, -EINVAL, "invalid credential name \"\"" },
	{ "a b=env:X", 0, -EINVAL, "invalid credential name \"a b\"" },
	{ "a/b=env:X", 0, -EINVAL, "[A-Za-z0-9_.-]+" },
	{ "x=env:1X", 0, -EINVAL, "invalid variable name \"1X\"" },
	{ "x=env:", 0, -EINVAL, "invalid variable name \"\"" },
	{ "x=env:A-B", 0, -EINVAL, "invalid variable name" },
	{ "x=file:rel/path", 0, -EINVAL, "\"rel/path\" in \"x=file:rel/path\" is not an absolute" },
	{ "x=file:", 0, -EINVAL, "not an absolute path" },
	{ "x=fd:-1", 0, -EINVAL, "invalid fd \"-1\"" },
	{ "x=fd:2147483648", 0, -ERANGE, "invalid fd \"2147483648\"" },
	{ "x=fd:99999999999999999999999", 0, -ERANGE, "invalid fd" },
	{ "x=fd:", 0, -EINVAL, "invalid fd" },
	{ "x=fd: 3", 0, -EINVAL, "invalid fd" },
	{ "x=vault:a", 0, -EINVAL, "unknown credential source \"vault:a\"" },
	{ "x=ENV:X", 0, -EINVAL, "unknown credential source" },
};

static void test_credential(void)
{
	for (size_t i = 0; i < ELEMENTSOF(cred_ok); i++) {
		const struct cred_ok *t = &cred_ok[i];
		struct credential_spec c, again;
		char *text = NULL;

		if (!parse_ok(credential_spec_parse(t->in, &c, err, sizeof(err)),
			      "credential_spec_parse(\"%s\")", t->in))
			continue;
		is_str(c.name, t->name, "  name");
		ok(c.source == t->source && c.fd == t->fd, "  source %d, fd %d", t->source, t->fd);
		ok(t->ref ? c.ref && strcmp(c.ref, t->ref) == 0 : !c.ref, "  reference %s",
		   t->ref ? t->ref : "(none)");
		is_int(credential_spec_format(&c, &text), 0, "  formats");
		is_str(text, t->canon, "  canonical text");
		is_int(credential_spec_parse(text, &again, err, sizeof(err)), 0, "  reparses");
		ok(strcmp(again.name, c.name) == 0 && again.source == c.source &&
			   again.fd == c.fd && (!c.ref || strcmp(again.ref, c.ref) == 0),
		   "  round trip gives the same credential");
		free(text);
		credential_spec_done(&c);
		credential_spec_done(&again);
	}
	for (size_t i = 0; i < ELEMENTSOF(cred_bad); i++) {
		struct credential_spec c = { NULL, 77, NULL, 77 };
		err[0] = '\0';
		is_int(credential_spec_parse(cred_bad[i].in, &c, err, sizeof(err)), cred_bad[i].r,
		       "credential_spec_parse(\"%s\") fails with %d", cred_bad[i].in,
		       cred_bad[i].r);
		check_message(cred_bad[i].in, cred_bad[i].msg);
		ok(c.source == 77 && c.fd == 77 && !c.name, "  and leaves *ret untouched");
	}
}

static const struct auth_ok {
	const char *in;
	const char *rule; /* the canonical HTTP rule */
	int kind;
	const char *param, *cred;
	int add_only;
	const char *canon;
} auth_ok[] = {
	{ "POST api.openai.com/v1/* bearer openai", "POST api.openai.com/v1/*", HTTP_AUTH_BEARER,
	  NULL, "openai", 0, "POST api.openai.com/v1/* bearer openai" },
	{ "* api.anthropic.com/* header:x-api-key anthropic", "* api.anthropic.com/*",
	  HTTP_AUTH_HEADER, "x-api-key", "anthropic", 0,
	  "* api.anthropic.com/* header:x-api-key anthropic" },
	{ "* registry.internal/* basic:deploy registry", "* registry.internal/*", HTTP_AUTH_BASIC,
	  "deploy", "registry", 0, "* registry.internal/* basic:deploy registry" },
	{ "GET maps.example.com/* query:key maps", "GET maps.example.com/*", HTTP_AUTH_QUERY, "key",
	  "maps", 0, "GET maps.example.com/* query:key maps" },
	{ "* b.example.com/* header:x-token shared add-only", "* b.example.com/*", HTTP_AUTH_HEADER,
	  "x-token", "shared", 1, "* b.example.com/* header:x-token shared add-only" },
	{ "* a.example.com/* apikey:X-Key shared replace", "* a.example.com/*", HTTP_AUTH_HEADER,
	  "X-Key", "shared", 0, "* a.example.com/* header:X-Key shared" },
	{ " get  A.com\tBearer tok ", "GET a.com/*", HTTP_AUTH_BEARER, NULL, "tok", 0,
	  "GET a.com/* bearer tok" },
	{ "* [::1]:8080/x query:api_key-1.~ k", "* [::1]:8080/x", HTTP_AUTH_QUERY, "api_key-1.~",
	  "k", 0, "* [::1]:8080/x query:api_key-1.~ k" },
};

static const struct bad auth_bad[] = {
	{ "POST api.openai.com/v1/* bearer", 0, -EINVAL, "is not \"METHOD HOST/PATH AUTH NAME" },
	{ "* a.com/* bearer n add-only x", 0, -EINVAL, "is not \"METHOD HOST/PATH" },
	{ "* a.com/* basic:de:ploy x", 0, -EINVAL, "RFC 7617: a ':' in the user-id" },
	{ "* a.com/* basic: x", 0, -EINVAL, "invalid basic user-id \"\"" },
	{ "* a.com/* basic x", 0, -EINVAL, "basic needs a user-id" },
	{ "* a.com/* bearer:x y", 0, -EINVAL, "bearer takes no parameter" },
	{ "* a.com/* header:x(y) z", 0, -EINVAL, "HTTP token" },
	{ "* a.com/* apikey:a/b z", 0, -EINVAL, "invalid apikey header name \"a/b\"" },
	{ "* a.com/* query:a&b z", 0, -EINVAL, "a query parameter name takes" },
	{ "* a.com/* digest z", 0, -EINVAL, "unknown AUTH \"digest\"" },
	{ "* a.com/* bearer n!", 0, -EINVAL, "invalid credential name \"n!\"" },
	{ "* a.com/* bearer n sometimes", 0, -EINVAL, "unknown mode \"sometimes\"" },
	{ "* a_b.com/* bearer n", 0, -EINVAL, "invalid host \"a_b.com\"" },
	{ "G3T a.com/* bearer n", 0, -EINVAL, "invalid HTTP method" },
};

static void test_http_auth(void)
{
	for (size_t i = 0; i < ELEMENTSOF(auth_ok); i++) {
		const struct auth_ok *t = &auth_ok[i];
		struct http_auth a, again;
		char *rule = NULL, *text = NULL, *text2 = NULL;

		if (!parse_ok(http_auth_parse(t->in, &a, err, sizeof(err)),
			      "http_auth_parse(\"%s\")", t->in))
			continue;
		is_int(http_rule_format(&a.rule, &rule), 0, "  the rule formats");
		is_str(rule, t->rule, "  rule");
		ok(a.kind == t->kind && a.add_only == t->add_only, "  kind %d, add-only %d",
		   t->kind, t->add_only);
		ok(t->param ? a.param && strcmp(a.param, t->param) == 0 : !a.param,
		   "  parameter %s", t->param ? t->param : "(none)");
		is_str(a.credential, t->cred, "  credential");
		is_int(http_auth_format(&a, &text), 0, "  formats");
		is_str(text, t->canon, "  canonical text");
		is_int(http_auth_parse(text, &again, err, sizeof(err)), 0, "  reparses");
		is_int(http_auth_format(&again, &text2), 0, "  formats again");
		ok(http_rule_equal(&a.rule, &again.rule) && again.kind == a.kind &&
			   again.add_only == a.add_only && strcmp(text, text2) == 0,
		   "  round trip gives the same rule");
		free(rule);
		free(text);
		free(text2);
		http_auth_done(&a);
		http_auth_done(&again);
	}
	for (size_t i = 0; i < ELEMENTSOF(auth_bad); i++) {
		struct http_auth a, sentinel;
		memset(&a, 0xa5, sizeof(a));
		memset(&sentinel, 0xa5, sizeof(sentinel));
		err[0] = '\0';
		is_int(http_auth_parse(auth_bad[i].in, &a, err, sizeof(err)), auth_bad[i].r,
		       "http_auth_parse(\"%s\") fails with %d", auth_bad[i].in, auth_bad[i].r);
		check_message(auth_bad[i].in, auth_bad[i].msg);
		ok(memcmp(&a, &sentinel, sizeof(a)) == 0, "  and leaves *ret untouched");
	}
}

static void test_null(void)
{
	struct net_rule n;
	struct port_set set = { 0 };
	struct http_rule h;
	int64_t sec;
	uint32_t nsec;
	struct mount_entry m;
	struct credential_spec c;
	struct http_auth a;

	is_int(net_rule_parse(NULL, ALLOW, &n, err, sizeof(err)), -EINVAL, "NULL network rule");
	is_int(bind_ports_parse(NULL, NET_BIND_ALLOW, &set, err, sizeof(err)), -EINVAL,
	       "NULL bind list");
	is_int(http_rule_parse(NULL, &h, err, sizeof(err)), -EINVAL, "NULL HTTP rule");
	is_int(rfc3339_parse(NULL, &sec, &nsec, err, sizeof(err)), -EINVAL, "NULL date-time");
	is_int(mount_entry_parse(NULL, &m, err, sizeof(err)), -EINVAL, "NULL mount entry");
	is_int(credential_spec_parse(NULL, &c, err, sizeof(err)), -EINVAL, "NULL credential");
	is_int(http_auth_parse(NULL, &a, err, sizeof(err)), -EINVAL, "NULL --http-auth");
	net_rule_done(NULL);
	http_rule_done(NULL);
	mount_entry_done(NULL);
	credential_spec_done(NULL);
	http_auth_done(NULL);
	ok(1, "every *_done() accepts NULL");
}

static void test_time_canon(void)
{
	static const struct {
		const char *in, *out;
	} good[] = {
		{ "961027200", "2000-06-15T00:00:00Z" },
		{ "961027200.5", "2000-06-15T00:00:00.500000000Z" },
		{ "0", "1970-01-01T00:00:00Z" },
		{ "-1.5", "1969-12-31T23:59:58.500000000Z" },
		{ "2000-06-15T02:00:00+02:00", "2000-06-15T00:00:00Z" },
	};
	static const char *const bad[] = { "",
					   "-",
					   "1.",
					   ".5",
					   "1e9",
					   "12a",
					   "1.0000000001",
					   "300000000000",
					   "99999999999999999999" };
	char out[64], why[128];

	for (size_t i = 0; i < ELEMENTSOF(good); i++) {
		int r = time_canon(good[i].in, out, sizeof(out), why, sizeof(why));
		ok(r == 0 && strcmp(out, good[i].out) == 0, "time_canon: %s", good[i].out);
	}
	for (size_t i = 0; i < ELEMENTSOF(bad); i++)
		is_int(time_canon(bad[i], out, sizeof(out), why, sizeof(why)), -EINVAL,
		       "time_canon(%s) is refused", bad[i]);
}

int main(void)
{
	test_time_canon();
	test_null();
	test_net_parse();
	test_net_match();
	test_bind();
	test_http_parse();
	test_glob();
	test_http_match();
	test_rfc3339();
	test_mount();
	test_credential();
	test_http_auth();
	return done_testing();
}
