/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * user-handlers: extension handlers, user code in the supervisor's chain (sandlock.h,
 * "extension handlers"). The registrations are resolved and checked at spawn, before anything
 * runs; their syscalls are trapped whole beside the policy's traps (plan_build_with). A call of
 * such a syscall goes through the built-in route first (the routes.def row, where the built-in
 * trap set would have trapped that call), and only a built-in CONTINUE (or no built-in route)
 * reaches the user handlers, in registration order: they can add restrictions, never undo one.
 *
 * Ownership: struct user_handlers is the sandbox's (made by user_handlers_new, freed after the
 * workers stopped); it holds a reference to each handler. The memory handle and the action are
 * on the stack of the call that runs a handler, flagged invalid once it returns.
 */
#pragma once

#include <linux/seccomp.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "sandlock.h"

struct sandlock_policy;
struct sandlock_error;
struct supervisor;

/* Distinct syscalls a sandbox may give handlers, and the handlers of one syscall. */
#define USER_TRAPS_MAX 64
#define USER_HANDLERS_PER_NR 16
/* Deferred calls (a deferred handler, a held call) in flight per sandbox; one more: EAGAIN. */
#define USER_DEFERRED_MAX 64

struct sandlock_handler {
	atomic_uint refs;
	sandlock_handler_fn fn;
	void *user_data;
	void (*user_data_drop)(void *);
	uint32_t on_exception; /* SANDLOCK_EXCEPTION_* */
	int deferred;
};

struct sandlock_handler *handler_ref(struct sandlock_handler *h);
void handler_unref(struct sandlock_handler *h);

enum user_action_kind {
	USER_ACTION_NONE,
	USER_ACTION_CONTINUE,
	USER_ACTION_ERRNO,
	USER_ACTION_RETURN,
	USER_ACTION_INJECT, /* @fd is installed (ADDFD SEND) */
	USER_ACTION_HOLD,
	USER_ACTION_KILL,
};

struct sandlock_mem {
	int listener;
	const struct seccomp_notif *req;
	int valid; /* cleared when the handler returns: the handle is then -EBADF */
};

struct sandlock_action {
	struct supervisor *sv;
	int valid;
	int twice; /* a second action was asked: an exception */
	enum user_action_kind kind;
	int64_t value; /* RETURN's value, ERRNO's errno, KILL's signal */
	int32_t pgid;  /* KILL: the group, 0: the process */
	int fd;	       /* INJECT: owned, closed after the call */
	int cloexec;   /* INJECT */
};

struct user_handlers {
	size_t n_nrs;
	struct user_nr {
		int nr;
		size_t n;
		struct sandlock_handler *h[USER_HANDLERS_PER_NR];
	} nrs[USER_TRAPS_MAX];
	atomic_int deferred; /* deferred calls in flight */
	int nrs_flat[USER_TRAPS_MAX];
};

/* Resolve and check @n registrations of @regs against @p: every syscall named or numbered
 * exists, none is blocked by @p (the default blocklist, extra_deny_syscalls) or filtered by
 * argument in the BPF program, @p is supervised. *@ret is NULL for n == 0. -EINVAL with a
 * message naming what was given, -ENOMEM. */
int user_handlers_new(const struct sandlock_policy *p, const sandlock_handler_reg_t *regs, size_t n,
		      struct user_handlers **ret, struct sandlock_error **reterr);
void user_handlers_free(struct user_handlers *uh);

/* Whether @nr has user handlers (@uh may be NULL). */
int user_handlers_traps(const struct user_handlers *uh, int nr);

/* The built-in verdict for a call of a user-trapped syscall that no built-in row would have
 * trapped (above every notif_verdict and 0). */
#define USER_BUILTIN_NONE 1

/* Run the user handlers of @req's syscall after the built-in chain, whose verdict is
 * @builtin (NOTIF_CONTINUED, @resp holding its CONTINUE; USER_BUILTIN_NONE: no built-in route
 * for this call). Any other built-in verdict is returned as it is: the handlers are not
 * consulted. Returns a verdict for supervisor_answer (NOTIF_DEFERRED: answered elsewhere). */
int user_handlers_answer(struct supervisor *sv, const struct seccomp_notif *req,
			 struct seccomp_notif_resp *resp, int builtin);
