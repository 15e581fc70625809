/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dispatch: the table from syscall number to handler, and the trap set a policy needs. One
 * entry per trapped syscall, each saying which policy feature needs it, so the BPF program
 * routes to the supervisor exactly what the table can answer.
 */
#pragma once

#include <linux/seccomp.h>
#include <stddef.h>

#include "policy/policy.h"

struct supervisor;

/* Fill in @resp (notif_answer_*). A negative return answers that errno instead. */
typedef int (*notif_handler_t)(struct supervisor *sv, const struct seccomp_notif *req,
			       struct seccomp_notif_resp *resp);

/* The syscalls a supervised sandbox under @p traps. Returns how many were written (at most
 * @max). */
size_t dispatch_trap_set(const struct sandlock_policy *p, int *nrs, size_t max);
/* The handler of syscall @nr, or NULL. */
notif_handler_t dispatch_lookup(int nr);
