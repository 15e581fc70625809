/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dispatch: syscall number -> its handlers (plan/routes.def).
 */
#include <fcntl.h>
#include <sys/syscall.h>

#include "args.h"
#include "dispatch.h"
#include "handlers/handlers.h"
#include "macro.h"
#include "syscall-util.h"

static const struct route routes[] = {
#define ROUTE(nr_, needed_, deny_, workdir_, handler_, flags_, ...)                                \
	{ (nr_), (workdir_), (handler_), (flags_) },
#include "plan/routes.def"
#undef ROUTE
};

const struct route *dispatch_lookup(int nr)
{
	for (size_t i = 0; i < ELEMENTSOF(routes); i++)
		if (routes[i].nr == nr)
			return &routes[i];
	return NULL;
}

int dispatch_keeps_tree(const struct route *rt, const struct seccomp_notif *req)
{
	struct path_args pa;

	if (rt->flags & ROUTE_KEEPS_TREE)
		return 1;
	/* Not openat2's (its flags are in the child's memory) nor creat's: no such flag. */
	if (!(rt->flags & ROUTE_KEEPS_TREE_IF_RDONLY))
		return 0;
	if (path_args_decode(&req->data, &pa) < 0 || pa.call->family != PATH_OPEN ||
	    pa.flags_in_mem)
		return 0;
	/* (O_TMPFILE with O_RDONLY is the kernel's EINVAL: nothing made) */
	return (pa.flags & O_ACCMODE) == O_RDONLY && !(pa.flags & (O_CREAT | O_TRUNC));
}

const struct route *dispatch_routes(size_t *n)
{
	*n = ELEMENTSOF(routes);
	return routes;
}
