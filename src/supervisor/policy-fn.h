/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy-fn: the sandbox's policy_fn (sandlock_policy_set_policy_fn). The loop hands each held
 * call (exec, open, connect, bind, the sends with an address) to the sandbox's policy thread and
 * leaves it waiting (NOTIF_DEFERRED); the thread builds the event (the address, the argv of an
 * exec, checked to be what the kernel will exec), calls the callback and either answers a denial
 * itself, on its copy of the listener, or hands the call back to the loop (an eventfd), which
 * runs the built-in chain on it as on any call: the static policy still decides after an allow,
 * so its denials always win; an open or exec trapped for the policy_fn alone, whose handler would
 * only CONTINUE, is answered CONTINUE by the policy thread itself. A reaper thread answers EPERM to a held call whose verdict did not
 * come within the timeout. Observed calls (the fs changes, fork, mmap, brk) are answered by the
 * chain first and then queued (bounded; a full queue drops and counts).
 *
 * What the callback changes (the context) is kept here, under the state's lock: the live and
 * per-pid IP sets, read by handlers/net.c (policy_fn_net_allows), and lowered limits, which the
 * loop applies to sv->max_memory and sv->procs before it decides its next call.
 */
#pragma once

#include <linux/seccomp.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandlock.h"

struct supervisor;
struct policy_fn_ref;

#define POLICY_FN_TIMEOUT_DEFAULT_MS 5000u
#define POLICY_FN_TIMEOUT_MAX_MS 600000u
#define POLICY_FN_OBSERVED_MAX 1024 /* observed events waiting for the callback */
#define POLICY_FN_NET_MAX 256	    /* addresses in one set */
#define POLICY_FN_PIDS_MAX 64	    /* per-pid overrides */
#define POLICY_FN_DENY_MAX 64	    /* files and directories deny_path denies */

enum policy_net_op {
	POLICY_NET_RESTRICT,
	POLICY_NET_GRANT,
	POLICY_NET_PID,
};

/* Make the state of @sv's policy_fn, taking a reference to @ref (NULL: none, sv->pfn stays
 * NULL), and start its threads. The calls are held only once policy_fn_arm ran (the launch's own
 * exec is not). 0 or -errno. */
int policy_fn_start(struct supervisor *sv, struct policy_fn_ref *ref, uint32_t timeout_ms);
/* From the loop, once it runs: take a copy of the listener, start holding. Returns the eventfd
 * the loop polls (policy_fn_on_ready), or -1 when there is no policy_fn. */
int policy_fn_arm(struct supervisor *sv);
/* Answer every held call EPERM, stop the threads, deliver nothing more. Idempotent. */
void policy_fn_stop(struct supervisor *sv);
void policy_fn_free(struct supervisor *sv);

/* On the loop, before a received call is dispatched: apply the limits the callback lowered,
 * then hold @req when it is a held call (NOTIF_DEFERRED: the policy thread has it) or
 * NOTIF_NOT_MINE (dispatch it as usual). An error: answer it (fail closed). */
int policy_fn_hold(struct supervisor *sv, const struct seccomp_notif *req);
/* On the loop, once an observed call was answered (@error: its errno, 0 allowed). */
void policy_fn_observe(struct supervisor *sv, const struct seccomp_notif *req, int error);
/* On the loop, when the eventfd is readable: run the built-in chain on each call the callback
 * allowed (supervisor_answer). */
void policy_fn_on_ready(struct supervisor *sv);

/* On the loop, while the chain answers a held network call the callback allowed: 0 when the
 * destination the chain read (@addr, @len bytes; NULL, 0: none) is the one the callback was
 * shown, else -EPERM (another thread changed it between the two reads); -EFAULT when the
 * callback was shown none because the memory was unreadable then. 0 for any other call. */
int policy_fn_addr_check(struct supervisor *sv, const void *addr, size_t len);

/* On the loop: whether the chain answers a held call the callback allowed (the address it was
 * shown is the one policy_fn_addr_check holds the chain's read to). */
int policy_fn_deciding(struct supervisor *sv);

/* Whether the callback restricted the network at all: net_route checks every destination then. */
int policy_fn_net_limited(struct supervisor *sv);
/* Whether thread @tid (its process) may reach @addr (@family AF_INET: 4 bytes, AF_INET6: 16)
 * under the callback's sets: the per-pid one, else the live one, else any. The static rules
 * are the caller's (net_decide), before and after. */
int policy_fn_net_allows(struct supervisor *sv, pid_t tid, int family, const uint8_t *addr);

/* Whether deny_path's set holds anything: the opens and execs are then checked by identity. */
int policy_fn_denies_paths(const struct supervisor *sv);
/* On the loop, for a call the chain answered CONTINUE (@resp): while deny_path's set holds
 * anything, an open (open, openat, openat2, creat) is made on the child's behalf instead and an
 * exec is checked (policy-fn-path.c, policy-fn-open.c). NOTIF_DEFERRED (answered or queued:
 * send nothing), NOTIF_ANSWERED (@resp holds the answer: a refusal, or the CONTINUE kept). */
int policy_fn_path_gate(struct supervisor *sv, const struct seccomp_notif *req,
			struct seccomp_notif_resp *resp);

/* On the loop, for a landlock_restrict_self: 0 (no deny can be made from now on), or -EPERM
 * (an event emitted) while a deny is in force. */
int policy_fn_nest(struct supervisor *sv, const struct seccomp_notif *req);

/* On the loop, before a server of handlers/open.c answers an open with a file of its own (a
 * view, /etc/hosts, a trust bundle, a /proc file): -EACCES (an event emitted) when the file the
 * name reaches now is denied, else 0; NOTIF_GONE. */
int policy_fn_path_precheck(struct supervisor *sv, const struct seccomp_notif *req);

/* The context's functions (api-policy-fn.c). */
int policy_fn_ctx_network(sandlock_policy_ctx_t *ctx, enum policy_net_op op, pid_t pid,
			  const char *const *ips, size_t n);
int policy_fn_ctx_limit(sandlock_policy_ctx_t *ctx, int processes, uint64_t v);
int policy_fn_ctx_path(sandlock_policy_ctx_t *ctx, int deny, const char *path);
