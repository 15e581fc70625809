/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dispatch: where a trapped syscall goes. The rows are plan/routes.def's (the trap, the policy
 * test that enables it, and the handlers, in one line per syscall); this half keeps the
 * syscall and its handlers, plan/traps.c the trap and its test.
 */
#pragma once

#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>

#include "plan/traps.h"

struct supervisor;

/* Fill in @resp (notif_answer_*) and say what was done: an enum notif_verdict (notif.h), or a
 * negative errno, answered instead. */
typedef int (*notif_handler_t)(struct supervisor *sv, const struct seccomp_notif *req,
			       struct seccomp_notif_resp *resp);

/* A row's flags. */
enum {
	/* The workdir handler leaves the tree as it is (it reads, or writes through a descriptor
	 * it holds): the call goes on while a large copy-up is on its way (handlers/cow-copy.c). */
	ROUTE_KEEPS_TREE = 1 << 0,
	/* The same for an open whose flags argument asks a read only (no O_CREAT, no O_TRUNC). */
	ROUTE_KEEPS_TREE_IF_RDONLY = 1 << 1,
};

struct route {
	int nr;
	/* With a workdir, asked first; NOTIF_NOT_MINE passes the call to @handler. NULL: none. */
	notif_handler_t workdir;
	/* The plain handler (after the workdir's, where it passed). */
	notif_handler_t handler;
	unsigned flags;
};

/* The route of syscall @nr, or NULL. Rows of one nr with other argument filters share it. */
const struct route *dispatch_lookup(int nr);
/* Whether workdir call @req, routed by @rt, leaves the workdir's tree as it is. */
int dispatch_keeps_tree(const struct route *rt, const struct seccomp_notif *req);
/* Every row, in routes.def's order (its length in *@n): for tests. */
const struct route *dispatch_routes(size_t *n);
