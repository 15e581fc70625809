/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plan-traps: the plan's seccomp section: the policy's trap set, the syscalls of the extension
 * handlers added to it whole, and the BPF program built with them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "plan.h"
#include "plan-internal.h"
#include "seccomp.h"
#include "strv.h"
#include "traps.h"

/* What the trap set needs, from the answers the sections above resolved (plan.proc.served,
 * plan.fs.write_roots), then the trap set and the BPF program built with it. */
/* Extension handlers: their syscalls trapped whole after the policy's (libseccomp keeps the
 * condition-less rule, the superset), the policy's own kept for the supervisor. */
static int plan_user_traps(struct plan *plan, const int *user_nrs, size_t n_user,
			   struct trap *traps, size_t n, size_t max, size_t *ret_n)
{
	*ret_n = n;
	if (n_user == 0)
		return 0;
	if (n_user > max - n)
		return -E2BIG;
	plan->builtin_traps = calloc(n ? n : 1, sizeof(*traps));
	if (!plan->builtin_traps)
		return -ENOMEM;
	memcpy(plan->builtin_traps, traps, n * sizeof(*traps));
	plan->n_builtin_traps = n;
	for (size_t i = 0; i < n_user; i++)
		traps[n + i] = (struct trap){ .nr = user_nrs[i] };
	*ret_n = n + n_user;
	return 0;
}

int plan_seccomp(const struct sandlock_policy *p, struct plan *plan, const int *user_nrs,
		 size_t n_user, struct sandlock_error **reterr)
{
	struct trap traps[DISPATCH_MAX_TRAPS + PLAN_USER_TRAPS_MAX];

	plan_needs_fill(p, plan->proc.served, plan->fs.write_roots != NULL, &plan->needs);
	plan->needs.events = plan->supervised ? plan->events : 0;
	size_t n = trap_set_of(&plan->needs, traps, DISPATCH_MAX_TRAPS);
	/* (a handler's trap on umask is not the built-in one: its masks are not kept) */
	for (size_t i = 0; plan->supervised && i < n; i++)
		plan->umask_traced |= traps[i].nr == SYS_umask;
	int r = plan_user_traps(plan, user_nrs, n_user, traps, n, ELEMENTSOF(traps), &n);
	if (r < 0)
		return error_set(reterr, r, "handlers: %s", strerror(-r));
	int log = !!(plan->needs.events & SANDLOCK_EVENTS_DENIALS);
	if (log) { /* what the filter hands the supervisor to refuse (supervisor/judge.c) */
		plan->blocked = calloc(SECCOMP_BLOCK_NR, sizeof(*plan->blocked));
		plan->blocked_extra = p->extra_deny ? strv_copy(p->extra_deny) : NULL;
		if (!plan->blocked || (p->extra_deny && !plan->blocked_extra))
			return error_set(reterr, -ENOMEM, "out of memory");
		seccomp_blocked_table(p, plan->blocked);
	}
	return seccomp_program_build_log(p, plan->supervised, log, traps, n, &plan->arg_denied,
					 &plan->prog, reterr);
}
