/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plan/seccomp: the seccomp half of the plan. Compiles the policy's blocklist, argument filters
 * and trap set with libseccomp and exports the BPF program to memory in the parent; the child
 * loads it with seccomp(2) and the listener flags it wants.
 */
#pragma once

#include <linux/filter.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "policy/policy.h"
#include "plan/traps.h"

/* The default blocklist (names) and the syscall groups, exposed for tests and `sandlock check`. */
extern const char *const seccomp_default_blocklist[];

struct syscall_group {
	const char *name;
	const char *const *members;
};
extern const struct syscall_group seccomp_groups[];
const struct syscall_group *seccomp_group_find(const char *name);

/* Check extra_deny_syscalls and extra_allow_syscalls: unknown names, a group both allowed and
 * denied, a denied member of an allowed group. */
int seccomp_check_names(const struct sandlock_policy *p, struct sandlock_error **reterr);

/* Whether syscall @nr ends up denied (EPERM) under @p. */
int seccomp_is_denied(const struct sandlock_policy *p, int nr);
/* Whether the program decides some calls of @nr by their arguments, or denies it whole, in
 * every sandbox (add_arg_filters): a whole-syscall trap on it would replace those rules. */
int seccomp_arg_filtered(int nr);

/* What blocks a syscall the filter denies whole, for the supervisor that answers it in logging
 * mode (plan.blocked, supervisor/judge.c). */
enum seccomp_block_kind {
	SECCOMP_BLOCK_NONE,
	SECCOMP_BLOCK_DEFAULT, /* the default blocklist */
	SECCOMP_BLOCK_GROUP,   /* a member of seccomp_groups[index], which extra_allow re-allows */
	SECCOMP_BLOCK_EXTRA,   /* extra_deny_syscalls[index] names it (or its group) */
};
#define SECCOMP_BLOCK_NR 1024 /* the syscall numbers a table covers */
struct seccomp_block {
	uint8_t kind; /* enum seccomp_block_kind */
	uint8_t err;  /* the errno the call gets: EPERM (clone3: ENOSYS) */
	uint16_t index;
};

/* Fill @tbl (SECCOMP_BLOCK_NR entries, zeroed by the caller) with what blocks each syscall
 * under @p (an explicit extra_deny_syscalls entry wins over a group's membership, the default
 * blocklist over both: removing the entry would not allow it). */
void seccomp_blocked_table(const struct sandlock_policy *p, struct seccomp_block *tbl);

/* A rule of the argument filters that denies some calls of syscall @nr by their arguments: its
 * comparisons (as libseccomp's, on whole registers), its errno, and what it refuses, for the
 * log ("TIOCSTI", "CLONE_NEWUSER"; NULL: told from the arguments, socket's). Kept in logging
 * mode, where the rule hands those calls to the supervisor (plan.arg_denied, seccomp-args.c). */
struct seccomp_arg_rule {
	int nr;
	int err;
	const char *what; /* static */
	unsigned n;
	struct scmp_arg_cmp cmp[3];
};
struct seccomp_arg_rules {
	size_t n, cap;
	struct seccomp_arg_rule *v;
	/* The trap set the program was built with: a call it traps too is the supervisor's
	 * route's, as in the program without the log, where the trap wins over an overlapping
	 * denial (setpriority(PRIO_USER, 5) goes to handle_other_process, for one). */
	struct trap *traps;
	size_t n_traps;
};
/* Append a rule (@what is not copied: a static string). 0, -ENOMEM, -E2BIG (over 3 comparisons). */
int seccomp_arg_rules_add(struct seccomp_arg_rules *rules, const char *what, int nr, int err,
			  unsigned n, const struct scmp_arg_cmp *cmp);
/* Keep a copy of the program's trap set in @rules (-ENOMEM). */
int seccomp_arg_rules_traps(struct seccomp_arg_rules *rules, const struct trap *traps, size_t n);
/* The first rule of @rules (NULL: none) that denies the call @d, unless the trap set takes it;
 * NULL when none does. Where rules of different errnos match one call, the one the filter
 * applies is added first (seccomp.c; tests/unit/test-seccomp-log.c checks every rule). */
const struct seccomp_arg_rule *seccomp_arg_rule_match(const struct seccomp_arg_rules *rules,
						      const struct seccomp_data *d);
void seccomp_arg_rules_done(struct seccomp_arg_rules *rules);

/* Build the program. @traps (dispatch_trap_set) are routed to the supervisor when @supervised,
 * and otherwise denied where they say so; a syscall both trapped and denied stays denied. On
 * success *@ret owns a malloc'ed filter, released with seccomp_program_done(). */
int seccomp_program_build(const struct sandlock_policy *p, int supervised, const struct trap *traps,
			  size_t n_traps, struct sock_fprog *ret, struct sandlock_error **reterr);
/* seccomp_program_build in logging mode when @log_denials: the whole-syscall denials go to the
 * supervisor (SCMP_ACT_NOTIFY; @supervised must be set), which answers them with their errno,
 * and no precompiled program is used. With @arg_denied, the argument filters' denials go to the
 * supervisor too, each rule appended to @arg_denied (struct seccomp_arg_rule). */
int seccomp_program_build_log(const struct sandlock_policy *p, int supervised, int log_denials,
			      const struct trap *traps, size_t n_traps,
			      struct seccomp_arg_rules *arg_denied, struct sock_fprog *ret,
			      struct sandlock_error **reterr);
void seccomp_program_done(struct sock_fprog *prog);

/* Compile with libseccomp, bypassing the precompiled programs (the generator and the tests use
 * it; seccomp_program_build picks a precompiled program when the policy has the default shape). */
int seccomp_program_compile(const struct sandlock_policy *p, int supervised,
			    const struct trap *traps, size_t n_traps, struct sock_fprog *ret,
			    struct sandlock_error **reterr);

/* Programs compiled at build time by tools/seccomp-gen (the output of seccomp_program_compile
 * for the default policy shapes), so that spawning a default sandbox does not run libseccomp's
 * compiler, which costs about 0.2 ms in a fresh process. key: bit 1 supervised, bit 0
 * sysv_ipc allowed. tests/unit/test-seccomp.c checks each against a fresh compile. */
struct seccomp_prebuilt {
	int key;
	const struct trap *traps;
	size_t n_traps;
	const struct sock_filter *insns;
	unsigned short len;
};
extern const struct seccomp_prebuilt seccomp_prebuilt_table[];
extern const size_t seccomp_prebuilt_count;
