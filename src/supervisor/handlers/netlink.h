/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/netlink: the virtual NETLINK_ROUTE socket (netlink.c), which bind, getsockname
 * (ports.c), connect (net.c) and the sends (net-send.c) recognise by its inode.
 */
#pragma once

#include <linux/seccomp.h>
#include <stdint.h>

struct supervisor;

/* Whether @sock is a virtual NETLINK_ROUTE socket, and its port id in *@portid. */
int netlink_fake_portid(struct supervisor *sv, int sock, uint32_t *portid);
/* bind(2) and getsockname(2) on a virtual netlink socket (@portid: its address). */
int netlink_bind(struct supervisor *sv, const struct seccomp_notif *req,
		 struct seccomp_notif_resp *resp);
int netlink_getsockname(struct supervisor *sv, const struct seccomp_notif *req,
			struct seccomp_notif_resp *resp, uint32_t portid);
