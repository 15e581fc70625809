/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-net-event: the reason and hint of a refused destination (handlers/net-event.c): no allow
 * rule for TCP, UDP and ICMP, IPv6 in brackets, an IPv4-mapped address shown as IPv4, a net_deny
 * rule named by its text, and the event of a supervisor without a stream (NULL) is nothing.
 */
#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

#include "plan/plan.h"
#include "supervisor/handlers/net.h"
#include "supervisor/supervisor.h"
#include "tap.h"

static void refusal(const struct plan_net *net, uint32_t proto, int family, const char *ip,
		    uint16_t port, long deny, const char *want_reason, const char *want_hint)
{
	uint8_t addr[16] = { 0 };
	char reason[256], hint[256];

	inet_pton(family, ip, addr);
	net_refusal_text(net, proto, family, addr, port, deny, reason, sizeof(reason), hint,
			 sizeof(hint));
	is_str(reason, want_reason, "%s port %u: the reason", ip, port);
	is_str(hint, want_hint, "%s port %u: the hint", ip, port);
}

int main(void)
{
	struct net_rule deny[2];
	char err[256];
	struct plan_net net = { .deny = deny, .n_deny = 2 };

	is_int(net_rule_parse("10.0.0.0/8", NET_RULE_DENY, &deny[0], err, sizeof(err)), 0,
	       "deny 10.0.0.0/8");
	is_int(net_rule_parse("[fd00::/8]:443", NET_RULE_DENY, &deny[1], err, sizeof(err)), 0,
	       "deny [fd00::/8]:443");
	refusal(&net, NET_PROTO_TCP, AF_INET, "127.0.0.1", 8080, NET_NO_RULE,
		"no net_allow rule covers 127.0.0.1:8080", "add --net-allow 127.0.0.1:8080");
	refusal(&net, NET_PROTO_UDP, AF_INET, "127.0.0.1", 53, NET_NO_RULE,
		"no net_allow rule covers udp 127.0.0.1:53", "add --net-allow udp://127.0.0.1:53");
	refusal(&net, NET_PROTO_ICMP, AF_INET, "127.0.0.2", 0, NET_NO_RULE,
		"no net_allow rule covers icmp 127.0.0.2", "add --net-allow icmp://127.0.0.2");
	refusal(&net, NET_PROTO_TCP, AF_INET6, "::1", 8080, NET_NO_RULE,
		"no net_allow rule covers [::1]:8080", "add --net-allow [::1]:8080");
	refusal(&net, NET_PROTO_TCP, AF_INET6, "::ffff:127.0.0.1", 80, NET_NO_RULE,
		"no net_allow rule covers 127.0.0.1:80", "add --net-allow 127.0.0.1:80");
	refusal(&net, NET_PROTO_TCP, AF_INET, "10.1.2.3", 80, 0, "net_deny covers 10.1.2.3",
		"remove --net-deny 10.0.0.0/8");
	refusal(&net, NET_PROTO_TCP, AF_INET6, "fd00::1", 443, 1, "net_deny covers fd00::1",
		"remove --net-deny [fd00::/8]:443");

	char host[64], at[80];
	uint8_t a6[16];
	inet_pton(AF_INET6, "2001:db8::1", a6);
	is_int(net_host_text(AF_INET6, a6, host, sizeof(host)), AF_INET6, "an IPv6 address");
	net_endpoint_text(AF_INET6, host, 443, at, sizeof(at));
	is_str(at, "[2001:db8::1]:443", "  in brackets with its port");

	/* Without a stream (a unit test's supervisor, one without a sandbox): nothing happens. */
	struct plan plan = { .net = net };
	struct supervisor sv = { .plan = &plan };
	struct seccomp_notif req = { .pid = 1 };
	struct net_dest d = { .family = AF_INET, .addr = a6, .port = 1, .proto = NET_PROTO_TCP };
	net_refused_event(&sv, &req, &d, NET_NO_RULE, ECONNREFUSED);
	ok(1, "an event without a stream is nothing");

	net_rule_done(&deny[0]);
	net_rule_done(&deny[1]);
	return done_testing();
}
