/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-netrule: net_rule_parse() in both modes and bind_ports_parse() over arbitrary bytes (up
 * to the first NUL). Invariants: the errno is a documented one and the message one printable
 * line; an accepted rule has coherent fields, formats, reparses equal, and its canonical text is
 * a fixed point; deny accepts a subset of allow, giving the same rule; the matcher answers alike
 * for the rule and its reparse, never matches a hostname rule, and matches a literal rule's own
 * address.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "policy/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_errno(int r, const char *err)
{
	if (r != -EINVAL && r != -ERANGE && r != -ENOMEM)
		abort();
	if (!err[0] || strchr(err, '\n'))
		abort();
}

static void check_fields(const struct net_rule *r)
{
	if (r->protos != (NET_PROTO_TCP | NET_PROTO_UDP) && r->protos != NET_PROTO_TCP &&
	    r->protos != NET_PROTO_UDP && r->protos != NET_PROTO_ICMP)
		abort();
	if (r->ports.all == !!r->ports.n || (r->protos == NET_PROTO_ICMP && !r->ports.all))
		abort();
	for (size_t i = 0; i < r->ports.n; i++)
		if (r->ports.ranges[i].lo == 0 || r->ports.ranges[i].lo > r->ports.ranges[i].hi)
			abort();
	if (r->kind == NET_TARGET_HOST) {
		size_t n = strnlen(r->host, sizeof(r->host));
		if (n == 0 || n > NET_HOST_MAX || r->host[n - 1] == '.')
			abort();
		for (size_t i = 0; i < n; i++)
			if (r->host[i] >= 'A' && r->host[i] <= 'Z')
				abort();
	} else if (r->kind == NET_TARGET_IP) {
		if (r->family == AF_INET    ? r->prefix > 32
		    : r->family == AF_INET6 ? r->prefix > 128
					    : 1)
			abort();
	} else if (r->kind != NET_TARGET_ANY) {
		abort();
	}
}

static const struct {
	int family;
	uint8_t addr[16];
} queries[] = {
	{ AF_INET, { 10, 1, 2, 3 } },
	{ AF_INET, { 1, 1, 1, 1 } },
	{ AF_INET, { 0 } },
	{ AF_INET, { 255, 255, 255, 255 } },
	{ AF_INET6, { [15] = 1 } },
	{ AF_INET6, { [10] = 0xff, [11] = 0xff, 10, 1, 2, 3 } },
	{ AF_INET6, { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 } },
	{ AF_INET6, { 0xfe, 0x80, [15] = 1 } },
};

static void check_match(const struct net_rule *r, const struct net_rule *again)
{
	static const uint32_t protos[] = { NET_PROTO_TCP, NET_PROTO_UDP, NET_PROTO_ICMP };
	static const uint16_t ports[] = { 0, 1, 22, 53, 80, 443, 8080, 65535 };

	for (size_t q = 0; q < sizeof(queries) / sizeof(queries[0]); q++)
		for (size_t p = 0; p < 3; p++)
			for (size_t k = 0; k < sizeof(ports) / sizeof(ports[0]); k++) {
				int m = net_rule_match(r, protos[p], queries[q].family,
						       queries[q].addr, ports[k]);
				if (m != net_rule_match(again, protos[p], queries[q].family,
							queries[q].addr, ports[k]))
					abort();
				if (m && r->kind == NET_TARGET_HOST)
					abort();
				if (m && !(r->protos & protos[p]))
					abort();
			}
	if (r->kind == NET_TARGET_IP) {
		uint32_t proto = r->protos & NET_PROTO_TCP ? NET_PROTO_TCP : r->protos;
		uint16_t port = r->ports.all ? 1 : r->ports.ranges[0].lo;
		if (!net_rule_match(r, proto, r->family, r->addr, port))
			abort();
	}
}

static void one_mode(const char *s, int mode, struct net_rule *out)
{
	struct net_rule r, again;
	char err[256] = "", *text = NULL, *text2 = NULL;

	int k = net_rule_parse(s, mode, &r, err, sizeof(err));
	if (k < 0) {
		check_errno(k, err);
		return;
	}
	check_fields(&r);
	if (mode == NET_RULE_DENY && r.kind == NET_TARGET_HOST)
		abort();
	if (net_rule_format(&r, &text) < 0)
		abort();
	if (net_rule_parse(text, mode, &again, err, sizeof(err)) < 0)
		abort();
	if (!net_rule_equal(&r, &again))
		abort();
	if (net_rule_format(&again, &text2) < 0 || strcmp(text, text2) != 0)
		abort();
	check_match(&r, &again);
	free(text);
	free(text2);
	net_rule_done(&again);
	if (out)
		*out = r;
	else
		net_rule_done(&r);
}

static void check_bind(const char *s, int mode)
{
	struct port_set set = { 0 }, again = { 0 };
	char err[256] = "", *text = NULL, *text2 = NULL;

	int k = bind_ports_parse(s, mode, &set, err, sizeof(err));
	if (k < 0) {
		check_errno(k, err);
		if (set.n || set.all)
			abort();
		port_set_done(&set);
		return;
	}
	for (size_t i = 0; mode == NET_BIND_DENY && i < set.n; i++)
		if (set.ranges[i].lo == 0)
			abort();
	if (mode == NET_BIND_DENY && set.all)
		abort();
	if (bind_ports_format(&set, &text) < 0 ||
	    bind_ports_parse(text, mode, &again, err, sizeof(err)) < 0)
		abort();
	if (bind_ports_format(&again, &text2) < 0 || strcmp(text, text2) != 0)
		abort();
	if (set.all != again.all || set.n != again.n ||
	    (set.n && memcmp(set.ranges, again.ranges, set.n * sizeof(*set.ranges)) != 0))
		abort();
	free(text);
	free(text2);
	port_set_done(&set);
	port_set_done(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	struct net_rule allow = { 0 }, deny = { 0 };

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	one_mode(s, NET_RULE_ALLOW, &allow);
	one_mode(s, NET_RULE_DENY, &deny);
	/* Deny takes a subset of allow's grammar, and reads it the same way. */
	if (deny.protos && (!allow.protos || !net_rule_equal(&allow, &deny)))
		abort();
	net_rule_done(&allow);
	net_rule_done(&deny);
	check_bind(s, NET_BIND_ALLOW);
	check_bind(s, NET_BIND_DENY);
	free(s);
	return 0;
}
