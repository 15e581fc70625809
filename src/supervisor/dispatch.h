/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dispatch: the table from syscall number to handler, and the trap set a policy needs. One
 * entry per trapped syscall, each saying which policy feature needs it, so the BPF program
 * routes to the supervisor exactly what the table can answer.
 */
#pragma once

#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

struct supervisor;

/* Fill in @resp (notif_answer_*). A negative return answers that errno instead. */
typedef int (*notif_handler_t)(struct supervisor *sv, const struct seccomp_notif *req,
			       struct seccomp_notif_resp *resp);

/* A syscall the supervisor answers, optionally only when its arguments match every condition
 * (libseccomp comparisons: op is an enum scmp_compare, compared on the full 64-bit value). */
struct trap_cond {
	uint32_t arg;
	uint32_t op;
	uint64_t datum;
	uint64_t datum_b; /* SCMP_CMP_MASKED_EQ: datum is the mask, datum_b the value */
};

struct trap {
	int nr;
	uint32_t n_conds;
	struct trap_cond cond[2];
	/* Without a supervisor (no_supervisor): 1 = the matching calls are denied (EPERM),
	 * because nobody could check them; 0 = they are allowed. */
	uint32_t deny_unsupervised;
};

/* The most traps a sandbox can need: every entry of the table (checked when it is built). */
#define DISPATCH_MAX_TRAPS 160

/* The traps a sandbox under @p needs (the BPF program routes them to the supervisor, or denies
 * the deny_unsupervised ones without one). Returns how many were written (at most @max); unused
 * bytes of each entry are zero, so entries compare with memcmp. */
size_t dispatch_trap_set(const struct sandlock_policy *p, struct trap *traps, size_t max);
/* The handler of syscall @nr, or NULL. */
notif_handler_t dispatch_lookup(int nr);
