/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/netlink: the virtual NETLINK_ROUTE socket (netlink.c), which bind, getsockname
 * (ports.c), connect (net.c) and the sends (net-send.c) recognise by its inode. The table of
 * those sockets is the supervisor's sv->netlink (under sv->netlink_lock: the loop adds, workers
 * remove).
 */
#pragma once

#include <linux/seccomp.h>
#include <stdint.h>
#include <sys/types.h>

struct supervisor;

/* A virtual NETLINK_ROUTE socket: the child's end, by inode. */
#define SUPERVISOR_MAX_NETLINK 16
struct netlink_fake {
	int used;
	dev_t dev;
	ino_t ino;
	uint32_t portid;
};

/* Whether @sock is a virtual NETLINK_ROUTE socket, and its port id in *@portid. */
int netlink_fake_portid(struct supervisor *sv, int sock, uint32_t *portid);
/* bind(2) and getsockname(2) on a virtual netlink socket (@portid: its address). */
int netlink_bind(struct supervisor *sv, const struct seccomp_notif *req,
		 struct seccomp_notif_resp *resp);
int netlink_getsockname(struct supervisor *sv, const struct seccomp_notif *req,
			struct seccomp_notif_resp *resp, uint32_t portid);
