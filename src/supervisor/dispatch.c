/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dispatch: syscall number -> handler, and the policy-derived trap set.
 */
#include <sys/syscall.h>

#include "dispatch.h"
#include "handlers/handlers.h"
#include "macro.h"

struct dispatch_entry {
	int nr;
	notif_handler_t handler;
	/* Whether @p needs this syscall trapped; NULL: every supervised sandbox does. */
	int (*needed)(const struct sandlock_policy *p);
};

/* Supervised sandboxes always trap:
 *  - uname: the virtual hostname is the sandbox's name (default sandbox-<pid>);
 *  - setsid, setpgid: the process groups the sandbox creates are recorded before they exist,
 *    so kill, timeouts and the lifeline reach descendants that leave the first group.
 * All three are rare; a policy of filesystem grants only traps nothing else, and its other
 * syscalls run at kernel speed. */
static const struct dispatch_entry table[] = {
	{ SYS_uname, handle_uname, NULL },
	{ SYS_setsid, handle_setsid, NULL },
	{ SYS_setpgid, handle_setpgid, NULL },
};

size_t dispatch_trap_set(const struct sandlock_policy *p, int *nrs, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < ELEMENTSOF(table) && n < max; i++)
		if (!table[i].needed || table[i].needed(p))
			nrs[n++] = table[i].nr;
	return n;
}

notif_handler_t dispatch_lookup(int nr)
{
	for (size_t i = 0; i < ELEMENTSOF(table); i++)
		if (table[i].nr == nr)
			return table[i].handler;
	return NULL;
}
