/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/proc-net: the sandbox's TCP tables (proc-net.c), which open.c serves and ports.c
 * asks whether a pair's socket still listens.
 */
#pragma once

#include <stddef.h>
#include <sys/socket.h>

#include "supervisor/port-map.h"

struct supervisor;

/* The sandbox's /proc/net/tcp (@v6: tcp6): the host's table with only the rows of sockets its
 * processes hold, and virtual ports. *@ret (malloc'd) and *@ret_len. -errno. */
int proc_net_table(struct supervisor *sv, int v6, char **ret, size_t *ret_len);
/* Whether one of the sockets of pair @e still listens on its real port (asked of sock_diag, by
 * inode), and, with @dest, takes a connect to that address (bound to it or to the wildcard): 1,
 * 0 or -errno. */
int proc_net_entry_alive(const struct port_entry *e, const struct sockaddr_storage *dest);
