/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-net-event: the reason and hint of a refused destination (handlers/net-event.c): no allow
 * rule for TCP, UDP and ICMP, IPv6 in brackets, an IPv4-mapped address shown as IPv4, a net_deny
 * rule named by its text, the event of a supervisor without a stream (NULL) is nothing; and
 * through a stream, the lines of a connect without a rule, an abstract UNIX name and a bind
 * Landlock refuses (judged).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "plan/plan.h"
#include "supervisor/events.h"
#include "supervisor/handlers/net.h"
#include "supervisor/handlers/ports.h"
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

/* The @i-th denial of @evs as its line (sandlock_event_format); "PID" in @want is this
 * process's pid (the events' caller). */
static void is_line(struct events *evs, size_t i, const char *want, const char *name)
{
	sandlock_event_t ev;
	char *line = NULL, expected[512];
	const char *at = strstr(want, "PID");

	if (!ok(events_denial(evs, i, &ev, NULL) == 0, "%s: recorded", name))
		return;
	snprintf(expected, sizeof(expected), "%.*s%d%s", (int)(at - want), want, (int)getpid(),
		 at + 3);
	sandlock_event_format(&ev, &line);
	is_str(line ? line : "", expected, "%s: the line", name);
	free(line);
}

static void stream_events(struct plan *plan)
{
	struct events *evs = NULL;
	struct supervisor sv = { .plan = plan };
	struct seccomp_notif req = { .pid = (uint32_t)getpid(), .data.nr = SYS_connect };
	uint8_t lo[4] = { 127, 0, 0, 1 };

	if (!ok(events_new(&evs, SANDLOCK_EVENTS_DENIALS, NULL, NULL) == 0, "a stream"))
		return;
	sv.events = evs;
	struct net_dest tcp = {
		.family = AF_INET, .addr = lo, .port = 8080, .proto = NET_PROTO_TCP
	};
	net_refused_event(&sv, &req, &tcp, NET_NO_RULE, ECONNREFUSED);
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_un *sun = (struct sockaddr_un *)&ss;
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path, "\0name\n", 6);
	net_abstract_event(&sv, &req, &ss, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 6));
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	memset(&ss, 0, sizeof(ss));
	in->sin_family = AF_INET;
	in->sin_port = htons(9000);
	memcpy(&in->sin_addr, lo, 4);
	req.data.nr = SYS_bind;
	ports_bind_event(&sv, &req, &ss, SANDLOCK_VERDICT_DENY, 1);
	ports_bind_event(&sv, &req, &ss, SANDLOCK_VERDICT_ALLOW, 0); /* not wanted: nothing */
	is_int(events_denial_count(evs), 3, "three denials");
	is_line(evs, 0,
		"denied connect(127.0.0.1:8080) by pid PID (test-net-event): no net_allow rule "
		"covers 127.0.0.1:8080; add --net-allow 127.0.0.1:8080",
		"a TCP connect without a rule");
	is_line(evs, 1,
		"denied connect(\"@name?\") by pid PID (test-net-event): abstract UNIX sockets "
		"are scoped to the sandbox",
		"an abstract name, its bytes made printable");
	is_line(evs, 2,
		"denied bind(127.0.0.1:9000) by pid PID (test-net-event): no bind grant covers "
		"port 9000; add --net-allow-bind 9000",
		"a bind Landlock refuses, judged");
	sandlock_event_t ev;
	if (events_denial(evs, 2, &ev, NULL) == 0)
		ok(ev.judged == 1 && ev.error == EACCES && strcmp(ev.protocol, "tcp") == 0,
		   "  judged, EACCES, tcp");
	events_stop(evs);
	events_free(evs);
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
	struct seccomp_notif req = { .pid = (uint32_t)getpid(), .data.nr = SYS_connect };
	struct net_dest d = { .family = AF_INET, .addr = a6, .port = 1, .proto = NET_PROTO_TCP };
	net_refused_event(&sv, &req, &d, NET_NO_RULE, ECONNREFUSED);
	ok(1, "an event without a stream is nothing");

	stream_events(&plan);

	net_rule_done(&deny[0]);
	net_rule_done(&deny[1]);
	return done_testing();
}
