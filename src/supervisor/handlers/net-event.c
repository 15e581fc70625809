/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/net-event: the network decisions of the supervisor as events (supervisor/events.h):
 * a destination refused by the rules (what rule, and the flag that would allow it), a named
 * UNIX socket without a write grant, and, for `sandlock learn`, the destinations and binds let
 * through. Everything is built from what the handler copied and decided on: the child's memory
 * is not read again for an event.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "macro.h"
#include "net.h"
#include "plan/plan.h"
#include "supervisor/events.h"
#include "supervisor/supervisor.h"

static const char *proto_name(uint32_t proto)
{
	return proto == NET_PROTO_TCP	 ? "tcp"
	       : proto == NET_PROTO_UDP	 ? "udp"
	       : proto == NET_PROTO_ICMP ? "icmp"
					 : NULL;
}

int net_host_text(int family, const uint8_t *addr, char *buf, size_t size)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	/* An IPv4-mapped address is the IPv4 address for the rules (net_rule_match): shown so,
	 * the hint's rule then covers it. */
	if (family == AF_INET6 && memcmp(addr, mapped, 12) == 0) {
		family = AF_INET;
		addr += 12;
	}
	if (!inet_ntop(family, addr, buf, (socklen_t)size))
		snprintf(buf, size, "?");
	return family;
}

void net_endpoint_text(int family, const char *host, uint16_t port, char *buf, size_t size)
{
	snprintf(buf, size, family == AF_INET6 ? "[%s]:%u" : "%s:%u", host, (unsigned)port);
}

void net_refusal_text(const struct plan_net *net, uint32_t proto, int family, const uint8_t *addr,
		      uint16_t port, long deny, char *reason, size_t rsize, char *hint,
		      size_t hsize)
{
	char host[INET6_ADDRSTRLEN], at[INET6_ADDRSTRLEN + 8];

	family = net_host_text(family, addr, host, sizeof(host));
	net_endpoint_text(family, host, port, at, sizeof(at));
	if (deny >= 0 && (size_t)deny < net->n_deny) {
		_cleanup_free_ char *rule = NULL;
		snprintf(reason, rsize, "net_deny covers %s", host);
		if (net_rule_format(&net->deny[deny], &rule) == 0)
			snprintf(hint, hsize, "remove --net-deny %s", rule);
		else
			hint[0] = '\0';
		return;
	}
	if (proto == NET_PROTO_ICMP) {
		snprintf(reason, rsize, "no net_allow rule covers icmp %s", host);
		snprintf(hint, hsize, "add --net-allow icmp://%s", host);
	} else if (proto == NET_PROTO_UDP) {
		snprintf(reason, rsize, "no net_allow rule covers udp %s", at);
		snprintf(hint, hsize, "add --net-allow udp://%s", at);
	} else {
		snprintf(reason, rsize, "no net_allow rule covers %s", at);
		snprintf(hint, hsize, "add --net-allow %s", at);
	}
}

void net_event(struct supervisor *sv, const struct seccomp_notif *req, const struct net_dest *d,
	       uint32_t verdict, int err, const char *reason, const char *hint)
{
	char host[INET6_ADDRSTRLEN];
	struct event ev = {
		.nr = (int)req->data.nr,
		.category = EVENT_NETWORK,
		.pid = (pid_t)req->pid,
		.verdict = verdict,
		.error = err,
		.path = d->path,
		.port = d->port,
		.family = d->family,
		.protocol = d->family == AF_UNIX ? "unix" : proto_name(d->proto),
		.reason = reason,
		.hint = hint && *hint ? hint : NULL,
	};

	if (d->family == AF_INET || d->family == AF_INET6) {
		ev.family = net_host_text(d->family, d->addr, host, sizeof(host));
		ev.host = host;
	}
	events_emit(sv, &ev);
}

void net_refused_event(struct supervisor *sv, const struct seccomp_notif *req,
		       const struct net_dest *d, long deny, int err)
{
	char reason[INET6_ADDRSTRLEN + 64], hint[INET6_ADDRSTRLEN + 512];

	net_refusal_text(&sv->plan->net, d->proto, d->family, d->addr, d->port, deny, reason,
			 sizeof(reason), hint, sizeof(hint));
	net_event(sv, req, d, SANDLOCK_VERDICT_DENY, err, reason, hint);
}

void net_abstract_event(struct supervisor *sv, const struct seccomp_notif *req,
			const struct sockaddr_storage *ss, socklen_t len)
{
	const struct sockaddr_un *sun = (const struct sockaddr_un *)ss;
	size_t n = MIN((size_t)len - offsetof(struct sockaddr_un, sun_path), sizeof(sun->sun_path));
	char name[sizeof(sun->sun_path) + 1];

	/* "@name", as ss(8) shows it; its bytes are the child's: what is not printable is '?'. */
	name[0] = '@';
	for (size_t i = 1; i < n; i++) {
		unsigned char c = (unsigned char)sun->sun_path[i];
		name[i] = c < 0x20 || c >= 0x7f || c == '"' ? '?' : (char)c;
	}
	name[n ? n : 1] = '\0';
	struct net_dest d = { .family = AF_UNIX, .path = name };
	net_event(sv, req, &d, SANDLOCK_VERDICT_DENY, EPERM,
		  "abstract UNIX sockets are scoped to the sandbox", NULL);
}
