/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/ports: port_remap as a connect sees it (ports.c; the table itself is
 * supervisor/port-map.c).
 */
#pragma once

#include <linux/seccomp.h>
#include <stdint.h>
#include <sys/socket.h>

#include "supervisor/port-map.h"

struct supervisor;

/* Under port_remap, whether the TCP destination @ss (@len bytes) is a virtual port of this host
 * bound elsewhere: 1 and its pair in *@e, else 0. */
int ports_connect_remapped(struct supervisor *sv, const struct sockaddr_storage *ss, socklen_t len,
			   struct port_entry *e);
/* On a worker: point @ss at the real port of pair @e if one of the pair's sockets still listens
 * there for that address. A pair whose sockets are gone is not followed: the connect rules were
 * checked on the virtual port, and the real one may be anybody's now. */
void ports_connect_rewrite(const struct port_entry *e, struct sockaddr_storage *ss);

/* Whether TCP bind may take @port: what Landlock's BIND_TCP rules allow (plan.net.bind_ports,
 * built under port_remap, in logging mode and with a policy_fn; NULL: every port). */
int ports_bind_allowed(const struct supervisor *sv, uint16_t port);
/* The event of @req's TCP bind (or listen, its autobind) of @ss, an IPv4 or IPv6 address:
 * allowed (when such events are wanted), or refused with EACCES, "no bind grant covers port
 * PORT", "add --net-allow-bind PORT"; @judged: the kernel's refusal (Landlock), judged for the
 * log. */
void ports_bind_event(struct supervisor *sv, const struct seccomp_notif *req,
		      const struct sockaddr_storage *ss, uint32_t verdict, int judged);
