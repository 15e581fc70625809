/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plan/landlock-ports: the TCP port rules (Landlock ABI 4): the ports bind may take, from
 * net_allow_bind less net_deny_bind, and the ports of the direct connect rules.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "landlock-internal.h"
#include "policy/rules.h"
#include "syscall-util.h"

static void ports_mark(struct tcp_ports *t, uint8_t *bits, const struct port_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		for (uint32_t port = set->ranges[i].lo; port <= set->ranges[i].hi; port++) {
			bits[port / 8] |= (uint8_t)(1u << (port % 8));
			t->n++;
		}
}

/* Whether a port of @deny lies in the kernel's ephemeral range (ip_local_port_range); 1 when
 * the range cannot be read (fail closed). */
static int ephemeral_range_hits(const uint8_t *deny)
{
	char buf[64] = "";
	unsigned lo, hi;

	int fd = open("/proc/sys/net/ipv4/ip_local_port_range", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0 || sscanf(buf, "%u %u", &lo, &hi) != 2 || lo > hi || hi > 65535)
		return 1;
	for (unsigned port = lo; port <= hi; port++)
		if ((deny[port / 8] >> (port % 8)) & 1)
			return 1;
	return 0;
}

int tcp_ports_collect(const struct sandlock_policy *p, struct tcp_ports *t,
		      struct sandlock_error **reterr)
{
	char err[256];
	int r = 0;

	/* The bind lists as parsed when they were set (policy-net.c). */
	t->bind_all |= p->bind.allow.all;
	ports_mark(t, t->bind, &p->bind.allow);
	/* net_deny_bind: the allowed set minus the denied ports, so the kernel enforces both and
	 * nothing is trapped. Alone it is a default-allow list: every port (0 included, an
	 * ephemeral bind) but the denied ones. Costs one rule per allowed port (~1 us each). */
	uint8_t deny[65536 / 8] = { 0 };
	size_t before = t->n;
	ports_mark(t, deny, &p->bind.deny);
	t->n = before;
	int any_deny = p->bind.deny.n > 0;
	if (any_deny) {
		int zero_listed = t->bind[0] & 1;
		if (t->bind_all || !p->net_allow_bind)
			memset(t->bind, 0xff, sizeof(t->bind));
		/* bind(0), and listen() on an unbound socket, take a port of the ephemeral range
		 * (IP_LOCAL_PORT_RANGE narrows it per socket): a denied port in that range could
		 * be had by retrying, so port 0 stays allowed only when none is (or when listed).
		 */
		if (!zero_listed && ephemeral_range_hits(deny))
			t->bind[0] &= (uint8_t)~1u;
		t->bind_all = 0;
		t->n = 0;
		for (size_t i = 0; i < sizeof(t->bind); i++) {
			t->bind[i] &= (uint8_t)~deny[i];
			t->n += (size_t)__builtin_popcount(t->bind[i]);
		}
	}
	/* The direct rules (TCP to any host) are port rules here. A supervised sandbox has
	 * every connect made by the supervisor, which applies them too (handlers/net.c); these
	 * rules bind what it does not make (no supervisor). When some rule needs the
	 * supervisor's matching (net_needs.onbehalf), or the HTTP proxy runs (a connect to an
	 * intercepted port is redirected to it), Landlock allows no TCP connect at all. */
	int onbehalf = p->net.needs.onbehalf || policy_http_active(p);
	for (size_t i = 0; r == 0 && !onbehalf && i < p->net.n_allow; i++) {
		const struct net_rule *rule = &p->net.allow[i];
		/* Not on behalf: the TCP rules are to any host, and a UDP or ICMP rule opens
		 * every destination of its protocol (net_rules_needs_of), nothing for Landlock. */
		if ((rule->protos & NET_PROTO_TCP) && rule->kind != NET_TARGET_ANY)
			r = -EINVAL, snprintf(err, sizeof(err),
					      "net_allow: a rule to a host "
					      "needs the supervisor");
		if (r == 0 && (rule->protos & NET_PROTO_TCP)) {
			t->connect_all |= rule->ports.all;
			ports_mark(t, t->connect, &rule->ports);
		}
	}
	return r < 0 ? error_set(reterr, r, "%s", err) : 0;
}

/* One Landlock rule per allowed port (bind and connect rights together). */
int add_port_rules(int ruleset_fd, const struct tcp_ports *t, uint64_t handled,
		   struct sandlock_error **reterr)
{
	for (uint32_t port = 0; port < 65536; port++) {
		uint64_t access = 0;
		if ((handled & SL_LANDLOCK_ACCESS_NET_BIND_TCP) &&
		    (t->bind[port / 8] >> (port % 8)) & 1)
			access |= SL_LANDLOCK_ACCESS_NET_BIND_TCP;
		if ((handled & SL_LANDLOCK_ACCESS_NET_CONNECT_TCP) &&
		    (t->connect[port / 8] >> (port % 8)) & 1)
			access |= SL_LANDLOCK_ACCESS_NET_CONNECT_TCP;
		if (!access)
			continue;
		struct sl_landlock_net_port_attr attr = { .allowed_access = access, .port = port };
		if (sys_landlock_add_rule(ruleset_fd, SL_LANDLOCK_RULE_NET_PORT, &attr, 0) < 0)
			return error_set(reterr, negative_errno(),
					 "TCP port %u: landlock_add_rule: %s", port,
					 strerror(errno));
	}
	return 0;
}
