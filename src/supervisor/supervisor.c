/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * supervisor: receive, dispatch, answer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>

#include "dispatch.h"
#include "events.h"
#include "handlers/handlers.h"
#include "fd-util.h"
#include "judge.h"
#include "macro.h"
#include "notif.h"
#include "plan/plan.h"
#include "policy-fn.h"
#include "strv.h"
#include "supervisor.h"
#include "syscall-util.h"
#include "user-handlers.h"

int supervisor_prepare(struct supervisor *sv, const char *name, struct groups *groups,
		       const struct plan *plan)
{
	*sv = (struct supervisor){
		.listener = -1, .name = name, .groups = groups, .plan = plan, .prepared = 1
	};
	workers_init(&sv->workers);
	pthread_mutex_init(&sv->netlink_lock, NULL);
	port_map_init(&sv->ports);
	struct stat proc_st; /* what /proc is, for handlers/open.c and getdents.c, which serve it */
	if (plan && plan->proc.served && stat("/proc", &proc_st) == 0) {
		sv->proc_dev = proc_st.st_dev;
		sv->proc_ino = proc_st.st_ino;
	}

	if (sys_seccomp(SECCOMP_GET_NOTIF_SIZES, 0, &sv->sizes) < 0)
		return negative_errno();
	/* The kernel's structs may be larger than ours: allocate what it says. */
	sv->req = calloc(1, MAX(sv->sizes.seccomp_notif, sizeof(struct seccomp_notif)));
	sv->resp = calloc(1, MAX(sv->sizes.seccomp_notif_resp, sizeof(struct seccomp_notif_resp)));
	if (!sv->req || !sv->resp || (plan && plan->fs.ll.active && judge_cache_new(sv) < 0)) {
		supervisor_done(sv);
		return -ENOMEM;
	}
	return 0;
}

void supervisor_attach(struct supervisor *sv, int listener)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	sv->started_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	sv->listener = listener;
	/* 6.6+: wake this thread synchronously on a notification (the child's CPU switches
	 * straight to us), which shortens every round trip. Optional. */
	uint64_t flags = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
	(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, flags);
}

int supervisor_handle(struct supervisor *sv)
{
	struct seccomp_notif *req = sv->req;

	memset(req, 0, MAX(sv->sizes.seccomp_notif, sizeof(*req)));
	if (ioctl(sv->listener, SECCOMP_IOCTL_NOTIF_RECV, req) < 0) {
		/* ENOENT: the task died (or was signalled) before we received it. */
		if (errno == EINTR || errno == ENOENT)
			return 0;
		return negative_errno();
	}
	/* policy_fn: a held call waits for the callback's verdict off the loop. */
	int r = policy_fn_hold(sv, req);
	if (r == NOTIF_DEFERRED)
		return 0;
	if (r != NOTIF_NOT_MINE) { /* -errno: no verdict could be asked */
		struct seccomp_notif_resp *resp = sv->resp;
		memset(resp, 0, MAX(sv->sizes.seccomp_notif_resp, sizeof(*resp)));
		resp->id = req->id;
		notif_answer_errno(resp, r);
		if (ioctl(sv->listener, SECCOMP_IOCTL_NOTIF_SEND, resp) < 0 && errno != ENOENT)
			return negative_errno();
		return 0;
	}
	r = supervisor_answer(sv, req);
	if (r == 0 && sv->pfn)
		policy_fn_observe(sv, req, -sv->resp->error);
	return r;
}

/* The handlers of route @rt in order: the workdir's first, where the sandbox has one, then the
 * plain one where it passed (NOTIF_NOT_MINE). */
static int route_answer(struct supervisor *sv, const struct route *rt,
			const struct seccomp_notif *req, struct seccomp_notif_resp *resp)
{
	int r = NOTIF_NOT_MINE;

	if (sv->cow && rt->workdir) {
		/* A large copy-up on its way: a call that may change the workdir's tree waits
		 * for it (its handler answers NOTIF_HOLD once it finds a name there:
		 * cow_resolve_arg, res_of_real). */
		cow_wait_arm(sv, !dispatch_keeps_tree(rt, req));
		r = rt->workdir(sv, req, resp);
		cow_wait_arm(sv, 0);
		if (r == NOTIF_HOLD)
			r = cow_wait_hold(sv, req);
	}
	if (r == NOTIF_NOT_MINE && rt->handler)
		r = rt->handler(sv, req, resp);
	return r;
}

int supervisor_answer(struct supervisor *sv, const struct seccomp_notif *req)
{
	struct seccomp_notif_resp *resp = sv->resp;

	if (sv->umasks.n_flying)
		umask_seen(sv, (pid_t)req->pid);

	memset(resp, 0, MAX(sv->sizes.seccomp_notif_resp, sizeof(*resp)));
	resp->id = req->id;
	/* Logging mode: a syscall the filter denies whole, or a call its argument rules refuse,
	 * is answered (and logged) by the judge, never by a handler of its number. */
	int r = judge_blocked(sv, req, resp);
	if (r == NOTIF_NOT_MINE)
		r = judge_arg_denied(sv, req, resp);
	int blocked = r != NOTIF_NOT_MINE, user_decided = 0;
	if (!blocked) {
		const struct route *rt = dispatch_lookup(req->data.nr);
		int user = user_handlers_traps(sv->user, req->data.nr);
		/* Extension handlers trap their syscalls whole: the built-in route answers only
		 * the calls the policy's own trap set takes, then the user handlers may add to a
		 * built-in CONTINUE (user-handlers.c). */
		if (user && !(sv->plan && trap_set_matches(sv->plan->builtin_traps,
							   sv->plan->n_builtin_traps, &req->data)))
			rt = NULL;
		r = rt ? route_answer(sv, rt, req, resp) : NOTIF_NOT_MINE;
		if (user) {
			int builtin = rt ? r : USER_BUILTIN_NONE;
			r = user_handlers_answer(sv, req, resp, builtin);
			/* Let go by the built-in chain, answered by a handler: its decision. */
			int let_go = builtin == NOTIF_CONTINUED || builtin == USER_BUILTIN_NONE;
			user_decided = let_go && r != NOTIF_CONTINUED;
		}
	}
	switch (r) {
	case NOTIF_ANSWERED:
	case NOTIF_CONTINUED:
		break;
	case NOTIF_GONE:
	case NOTIF_DEFERRED:
		return 0; /* the task is gone, or a worker answers */
	case NOTIF_NOT_MINE:
	case NOTIF_HOLD:
		notif_answer_errno(resp, -ENOSYS); /* no handler took it: fail closed */
		break;
	default: /* -errno */
		if (r < 0)
			notif_answer_errno(resp, r); /* fail closed */
		break;
	}
	/* deny_path: an open the chain lets go is made on the child's behalf, an exec checked. */
	if (sv->pfn && policy_fn_path_gate(sv, req, resp) == NOTIF_DEFERRED)
		return 0;
	/* Logging mode: a path call that goes on to the kernel is judged for the log against the
	 * ruleset, one refused here for a denied path is told why (judge.c); the answer stays
	 * what it is. A call a user handler answered is its decision, logged as such
	 * (user-handlers.c): the kernel never runs it. */
	struct judge_later later = { .base = -1 };
	if (!blocked && !user_decided && events_flags(sv->events))
		judge_answer(sv, req, resp, &later);

	int r_send = ioctl(sv->listener, SECCOMP_IOCTL_NOTIF_SEND, resp) < 0 && errno != ENOENT
			     ? negative_errno()
			     : 0;
	if (later.base >= 0)
		judge_after(sv, req, &later);
	if (r_send < 0)
		return r_send;
	sv->answered++;
	return 0;
}

void supervisor_stop_workers(struct supervisor *sv)
{
	if (!sv->prepared) { /* never prepared (no supervisor, or a spawn that failed first) */
		cow_wait_stop(sv);
		return;
	}
	workers_stop(&sv->workers);
	cow_wait_stop(sv);
	policy_fn_stop(sv);
}

void supervisor_done(struct supervisor *sv)
{
	if (!sv->prepared)
		return;
	supervisor_stop_workers(sv);
	sv->listener = safe_close(sv->listener);
	free(sv->req);
	free(sv->resp);
	sv->req = NULL;
	sv->resp = NULL;
	workers_done(&sv->workers);
	policy_fn_free(sv);
	judge_cache_free(sv);
	port_map_done(&sv->ports);
	umask_cache_done(sv);
	fs_meta_done(sv);
	proc_limit_done(&sv->procs);
	free(sv->mem_pids.v);
	sv->mem_pids = (struct mem_pids){ 0 };
	sv->fs_granted = strv_free(sv->fs_granted);
	sv->prepared = 0;
}
