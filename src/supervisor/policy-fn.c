/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy-fn: the policy thread, the reaper of held calls that wait too long, and the hand-back
 * of allowed calls to the loop (policy-fn.h says the design).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "events.h"
#include "fd-util.h"
#include "macro.h"
#include "notif.h"
#include "judge.h"
#include "policy-fn-internal.h"
#include "plan/plan.h"
#include "plan/traps.h"
#include "policy/policy.h"
#include "plan/seccomp.h"
#include "supervisor.h"
#include "user-handlers.h"

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void push(struct pfn_item **head, struct pfn_item **tail, struct pfn_item *it)
{
	it->next = NULL;
	if (*tail)
		(*tail)->next = it;
	else
		*head = it;
	*tail = it;
}

static struct pfn_item *pop(struct pfn_item **head, struct pfn_item **tail)
{
	struct pfn_item *it = *head;

	if (it) {
		*head = it->next;
		if (!*head)
			*tail = NULL;
	}
	return it;
}

static enum event_category category_enum(int nr)
{
	const char *c = pfn_category(nr);

	return c[0] == 'n'   ? EVENT_NETWORK
	       : c[0] == 'p' ? EVENT_PROCESS
	       : c[0] == 'm' ? EVENT_MEMORY
			     : EVENT_FILE;
}

/* A verdict of the callback as an event: an audit (allowed, flagged), or a denial. */
static void verdict_event(struct policy_fn *st, const struct seccomp_notif *req,
			  const struct pfn_event *e, uint32_t verdict, int err, const char *reason)
{
	struct event ev = {
		.nr = req->data.nr,
		.category = category_enum(req->data.nr),
		.pid = (pid_t)req->pid,
		.verdict = verdict,
		.error = err,
		.host = e ? e->ev.host : NULL,
		.port = e ? e->ev.port : 0,
		.reason = reason,
	};
	events_emit(st->sv, &ev);
}

static void answer_errno(struct policy_fn *st, uint64_t id, int err)
{
	struct seccomp_notif_resp resp = { .id = id, .error = -err };

	(void)ioctl(st->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp); /* ENOENT: gone */
}

/* An allowed call no handler mediates (st->direct): CONTINUE, as its handler would answer. An
 * open is Landlock's to decide, its name re-read by the kernel with nothing decided on it here;
 * an exec's argv was checked to stay what the callback saw (policy-fn-argv.c: no other task
 * runs on its memory; where some do, they are frozen and policy-fn-freeze.c sends the CONTINUE),
 * and its file is Landlock's too. */
static void answer_continue(struct policy_fn *st, uint64_t id)
{
	struct seccomp_notif_resp resp = { .id = id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE };

	(void)ioctl(st->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp); /* ENOENT: gone */
}

/* The held calls whose handler, where nothing else traps them, only CONTINUEs: the opens
 * (handle_open, no server) and the execs (handle_outside_workdir, no workdir). */
static int pfn_direct_ok(int nr)
{
	return nr == SYS_openat || nr == SYS_openat2 || nr == SYS_execve || nr == SYS_execveat
#ifdef SYS_open
	       || nr == SYS_open
#endif
		;
}

/* The callback's return value as an errno to deny with, 0 (allow) or -1 (allow, audit). */
static int verdict_errno(int32_t v)
{
	if (v == SANDLOCK_POLICY_ALLOW)
		return 0;
	if (v == SANDLOCK_POLICY_AUDIT)
		return -1;
	if (v > 0 && v < 4096)
		return v;
	return EPERM; /* -1, and what no convention names: fail closed */
}

/* Claim the answer of @it (held): 0 when the reaper answered it first. */
static int claim(struct policy_fn *st, struct pfn_item *it)
{
	pthread_mutex_lock(&st->lock);
	int mine = !it->answered;
	it->answered = 1;
	st->running = NULL;
	pthread_mutex_unlock(&st->lock);
	return mine;
}

/* An allowed exec whose freeze ended before the verdict came: refused. */
static void deny_frozen(struct policy_fn *st, const struct pfn_item *it, const struct pfn_event *e)
{
	answer_errno(st, it->req.id, EPERM);
	verdict_event(st, &it->req, e, SANDLOCK_VERDICT_DENY, EPERM,
		      "policy_fn: the verdict came after the exec's peers were released");
}

static void decide_held(struct policy_fn *st, struct pfn_item *it)
{
	struct pfn_event e;
	struct sandlock_policy_ctx ctx = { .st = st, .pid = (pid_t)it->req.pid };
	int r = pfn_event_build(st, it, &e), err;

	if (r == 0) {
		ctx.pid = e.ev.pid;
		err = verdict_errno(st->ref->fn(&e.ev, &ctx, st->ref->user_data));
	} else
		err = r == NOTIF_GONE ? 0 : -r;
	if (!claim(st, it)) { /* timed out meanwhile: answered EPERM already */
		pfn_event_done(&e);
		free(it);
		return;
	}
	if (r == NOTIF_GONE) {
		free(it);
	} else if (err > 0) {
		answer_errno(st, it->req.id, err);
		int nr = (int)it->req.data.nr;
		pfn_event_end_freeze(&e); /* the exec is refused: its peers may run */
		verdict_event(st, &it->req, r == 0 ? &e : NULL, SANDLOCK_VERDICT_DENY, err,
			      r == 0 ? "policy_fn"
			      : nr == SYS_sendmmsg
				      ? "policy_fn: the messages name different destinations"
			      : e.why ? e.why
				      : "policy_fn: the exec's arguments could change "
					"before the exec");
		free(it);
	} else {
		if (err < 0)
			verdict_event(st, &it->req, &e, SANDLOCK_VERDICT_AUDIT, 0, "policy_fn");
		/* An extension handler on the syscall runs in the chain: it may refuse still. */
		/* While deny_path's set holds anything, the chain's CONTINUE goes through its gate
		 * (policy_fn_path_gate): the loop's. */
		if (it->req.data.nr < POLICY_FN_NAMES && st->direct[it->req.data.nr] &&
		    !user_handlers_traps(st->sv->user, (int)it->req.data.nr) &&
		    !policy_fn_denies_paths(st->sv)) {
			if (!e.freeze)
				answer_continue(st, it->req.id);
			else if (pfn_freeze_continue(e.freeze) < 0) /* it gave up waiting */
				deny_frozen(st, it, &e);
			/* The peers stay frozen until the exec is over. */
			free(it);
			pfn_event_done(&e);
			return;
		}
		/* Allowed: the loop runs the built-in chain on it, whose denials still win. */
		pthread_mutex_lock(&st->lock);
		push(&st->ready, &st->ready_tail, it);
		pthread_mutex_unlock(&st->lock);
		uint64_t one = 1;
		(void)!write(st->ready_fd, &one, sizeof(one));
	}
	pfn_event_done(&e);
}

static void observe(struct policy_fn *st, struct pfn_item *it)
{
	struct pfn_event e;
	struct sandlock_policy_ctx ctx = { .st = st, .pid = (pid_t)it->req.pid };

	if (pfn_event_build(st, it, &e) == 0) {
		ctx.pid = e.ev.pid;
		(void)st->ref->fn(&e.ev, &ctx, st->ref->user_data); /* the call is answered */
	}
	pfn_event_done(&e);
	free(it);
}

static void *policy_thread(void *arg)
{
	struct policy_fn *st = arg;

	pthread_mutex_lock(&st->lock);
	while (!st->stopping) {
		struct pfn_item *it = pop(&st->held, &st->held_tail);
		if (it) {
			st->running = it;
			pthread_mutex_unlock(&st->lock);
			decide_held(st, it);
			pthread_mutex_lock(&st->lock);
			continue;
		}
		it = pop(&st->obs, &st->obs_tail);
		if (it) {
			st->n_obs--;
			pthread_mutex_unlock(&st->lock);
			observe(st, it);
			pthread_mutex_lock(&st->lock);
			continue;
		}
		pthread_cond_wait(&st->work, &st->lock);
	}
	pthread_mutex_unlock(&st->lock);
	return NULL;
}

/* Under the lock: take out the queued held calls past their deadline (into @expired), mark the
 * running one answered if it is, and return the next deadline (0: none). */
static int64_t reap_expired(struct policy_fn *st, int64_t now, struct pfn_item **expired,
			    uint64_t *running_id)
{
	int64_t next = 0;

	for (struct pfn_item **p = &st->held; *p;) {
		struct pfn_item *it = *p;
		if (it->deadline_ns <= now) {
			*p = it->next;
			it->next = *expired;
			*expired = it;
			continue;
		}
		if (!next || it->deadline_ns < next)
			next = it->deadline_ns;
		st->held_tail = it;
		p = &it->next;
	}
	if (!st->held)
		st->held_tail = NULL;
	struct pfn_item *r = st->running;
	if (r && !r->answered && r->deadline_ns <= now) {
		r->answered = 1;
		*running_id = r->req.id;
	} else if (r && !r->answered && (!next || r->deadline_ns < next))
		next = r->deadline_ns;
	return next;
}

static void timed_out(struct policy_fn *st, const struct seccomp_notif *req)
{
	answer_errno(st, req->id, EPERM);
	verdict_event(st, req, NULL, SANDLOCK_VERDICT_DENY, EPERM,
		      "policy_fn: no verdict within the timeout");
}

static void *reaper_thread(void *arg)
{
	struct policy_fn *st = arg;

	pthread_mutex_lock(&st->lock);
	while (!st->stopping) {
		struct pfn_item *expired = NULL;
		uint64_t running_id = 0;
		struct seccomp_notif running_req;
		if (st->running)
			running_req = st->running->req;
		int64_t next = reap_expired(st, mono_ns(), &expired, &running_id);
		if (expired || running_id) {
			pthread_mutex_unlock(&st->lock);
			for (struct pfn_item *it; (it = expired);) {
				expired = it->next;
				timed_out(st, &it->req);
				free(it);
			}
			if (running_id)
				timed_out(st, &running_req);
			pthread_mutex_lock(&st->lock);
			continue;
		}
		st->reap_at = next;
		if (!next) {
			pthread_cond_wait(&st->reap, &st->lock);
			continue;
		}
		struct timespec ts = { .tv_sec = next / 1000000000, .tv_nsec = next % 1000000000 };
		(void)pthread_cond_timedwait(&st->reap, &st->lock, &ts);
	}
	pthread_mutex_unlock(&st->lock);
	return NULL;
}

static int state_init(struct policy_fn *st)
{
	pthread_condattr_t ca;

	pthread_mutex_init(&st->lock, NULL);
	pthread_cond_init(&st->work, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&st->reap, &ca);
	pthread_condattr_destroy(&ca);
	st->listener = -1;
	st->ready_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (st->ready_fd < 0)
		return negative_errno();
	st->pids = calloc(POLICY_FN_PIDS_MAX, sizeof(*st->pids));
	st->names = calloc(POLICY_FN_NAMES, sizeof(*st->names));
	st->direct = calloc(POLICY_FN_NAMES, 1);
	st->ids = calloc(POLICY_FN_IDS, sizeof(*st->ids));
	for (size_t i = 0; st->ids && i < POLICY_FN_IDS; i++)
		st->ids[i].pidfd = -1;
	if (!st->pids || !st->names || !st->direct || !st->ids)
		return -ENOMEM;
	return pfn_confined_init(st);
}

int policy_fn_start(struct supervisor *sv, struct policy_fn_ref *ref, uint32_t timeout_ms)
{
	if (!ref)
		return 0;
	struct policy_fn *st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->sv = sv;
	st->ref = policy_fn_ref(ref);
	st->timeout_ns =
		(int64_t)(timeout_ms ? timeout_ms : POLICY_FN_TIMEOUT_DEFAULT_MS) * 1000000;
	st->max_memory = sv->max_memory;
	st->max_processes = sv->procs.max;
	sv->pfn = st;
	int r = state_init(st);
	for (int nr = 0; r == 0 && sv->plan && nr < POLICY_FN_NAMES; nr++)
		st->direct[nr] = pfn_kind(nr) == 1 && pfn_direct_ok(nr) &&
				 !trap_needed_without_pfn(&sv->plan->needs, nr);
	if (r == 0 && (r = -pthread_create(&st->thread, NULL, policy_thread, st)) == 0)
		st->started = 1;
	if (r == 0 && (r = -pthread_create(&st->reaper, NULL, reaper_thread, st)) == 0)
		st->started = 2;
	return r;
}

int policy_fn_arm(struct supervisor *sv)
{
	struct policy_fn *st = sv->pfn;

	if (!st || sv->listener < 0)
		return -1;
	st->listener = fcntl(sv->listener, F_DUPFD_CLOEXEC, 3);
	/* Without a copy no verdict could be answered: every held call is refused then. */
	st->broken = st->listener < 0;
	atomic_store(&st->armed, 1);
	return st->broken ? -1 : st->ready_fd;
}

static void deny_all(struct policy_fn *st, struct pfn_item *list)
{
	for (struct pfn_item *it; (it = list);) {
		list = it->next;
		if (st->listener >= 0)
			answer_errno(st, it->req.id, EPERM);
		free(it);
	}
}

void policy_fn_stop(struct supervisor *sv)
{
	struct policy_fn *st = sv->pfn;

	if (!st || !st->ref)
		return;
	pthread_mutex_lock(&st->lock);
	st->stopping = 1;
	atomic_store(&st->armed, 0);
	pthread_cond_broadcast(&st->work);
	pthread_cond_broadcast(&st->reap);
	pthread_mutex_unlock(&st->lock);
	/* A callback that runs is waited for: its user_data is released only after. */
	if (st->started >= 1)
		pthread_join(st->thread, NULL);
	if (st->started >= 2)
		pthread_join(st->reaper, NULL);
	st->started = 0;
	deny_all(st, st->held);
	deny_all(st, st->ready);
	deny_all(st, st->obs);
	st->held = st->ready = st->obs = NULL;
	st->held_tail = st->ready_tail = st->obs_tail = NULL;
	if (st->dropped)
		notices_add(&sv->notices,
			    "%llu policy_fn event%s dropped: the callback was too slow",
			    (unsigned long long)st->dropped, st->dropped == 1 ? "" : "s");
	policy_fn_unref(st->ref);
	st->ref = NULL;
	st->listener = safe_close(st->listener);
	pfn_confined_stop(st);
}

void policy_fn_free(struct supervisor *sv)
{
	struct policy_fn *st = sv->pfn;

	if (!st)
		return;
	policy_fn_stop(sv);
	safe_close(st->ready_fd);
	for (size_t i = 0; st->pids && i < st->n_pids; i++)
		safe_close(st->pids[i].pidfd);
	free(st->pids);
	free(st->names);
	free(st->direct);
	for (size_t i = 0; st->ids && i < POLICY_FN_IDS; i++)
		safe_close(st->ids[i].pidfd);
	free(st->ids);
	pfn_deny_free(st);
	pthread_mutex_destroy(&st->lock);
	pthread_cond_destroy(&st->work);
	pthread_cond_destroy(&st->reap);
	free(st);
	sv->pfn = NULL;
}

static void apply_limits(struct supervisor *sv, struct policy_fn *st)
{
	if (!atomic_exchange(&st->limits_pending, 0))
		return;
	pthread_mutex_lock(&st->lock);
	sv->max_memory = st->max_memory;
	sv->procs.max = st->max_processes;
	pthread_mutex_unlock(&st->lock);
}

static struct pfn_item *item_new(const struct seccomp_notif *req, int held)
{
	struct pfn_item *it = calloc(1, sizeof(*it));

	if (it) {
		it->req = *req;
		it->held = held;
	}
	return it;
}

int policy_fn_hold(struct supervisor *sv, const struct seccomp_notif *req)
{
	struct policy_fn *st = sv->pfn;

	if (!st || !atomic_load(&st->armed))
		return NOTIF_NOT_MINE;
	apply_limits(sv, st);
	if (pfn_kind(req->data.nr) != 1)
		return NOTIF_NOT_MINE;
	/* A syscall the filter denies whole, or a call its argument rules refuse, is the judge's
	 * (logging mode): never shown. */
	if (sv->plan && sv->plan->blocked && req->data.nr < SECCOMP_BLOCK_NR &&
	    sv->plan->blocked[req->data.nr].kind)
		return NOTIF_NOT_MINE;
	if (judge_arg_denies(sv, req))
		return NOTIF_NOT_MINE;
	if (st->broken)
		return -EPERM;
	struct pfn_item *it = item_new(req, 1);
	if (!it)
		return -EPERM; /* no verdict can be asked: fail closed */
	it->deadline_ns = mono_ns() + st->timeout_ns;
	pthread_mutex_lock(&st->lock);
	int stopping = st->stopping;
	if (!stopping) {
		push(&st->held, &st->held_tail, it);
		pthread_cond_signal(&st->work);
		/* Every call is held for the same timeout, so a deadline queued later is never
		 * the first: the reaper, asleep until an earlier one, is woken only when idle. */
		if (!st->reap_at || it->deadline_ns < st->reap_at)
			pthread_cond_signal(&st->reap);
	}
	pthread_mutex_unlock(&st->lock);
	if (stopping) {
		free(it);
		return -EPERM;
	}
	return NOTIF_DEFERRED;
}

void policy_fn_observe(struct supervisor *sv, const struct seccomp_notif *req, int error)
{
	struct policy_fn *st = sv->pfn;

	if (!st || !atomic_load(&st->armed) || pfn_kind(req->data.nr) != 2)
		return;
	pthread_mutex_lock(&st->lock);
	struct pfn_item *it = st->n_obs < POLICY_FN_OBSERVED_MAX ? item_new(req, 0) : NULL;
	if (it) {
		it->error = error;
		push(&st->obs, &st->obs_tail, it);
		st->n_obs++;
		pthread_cond_signal(&st->work);
	} else
		st->dropped++;
	pthread_mutex_unlock(&st->lock);
}

int policy_fn_addr_check(struct supervisor *sv, const void *addr, size_t len)
{
	const struct pfn_item *it = sv->pfn ? sv->pfn->current : NULL;

	if (it && it->addr_fault)
		return -EFAULT; /* the callback was shown no address: none it allowed */
	if (!it || !it->addr_set)
		return 0;
	/* The callback decided on its read; the chain acts on its own: they must agree. */
	if (len != it->addr_len ||
	    (len && (!addr || memcmp(addr, &it->addr, MIN(len, sizeof(it->addr))) != 0)))
		return -EPERM;
	return 0;
}

int policy_fn_deciding(struct supervisor *sv)
{
	return sv->pfn && sv->pfn->current;
}

void policy_fn_on_ready(struct supervisor *sv)
{
	struct policy_fn *st = sv->pfn;
	uint64_t n;

	if (!st)
		return;
	(void)!read(st->ready_fd, &n, sizeof(n));
	pthread_mutex_lock(&st->lock);
	struct pfn_item *list = st->ready;
	st->ready = st->ready_tail = NULL;
	pthread_mutex_unlock(&st->lock);
	for (struct pfn_item *it; (it = list);) {
		list = it->next;
		/* The task may have died meanwhile: the chain's ID_VALID checks find it gone. */
		st->current = it;
		if (sv->listener >= 0)
			(void)supervisor_answer(sv, &it->req);
		st->current = NULL;
		free(it);
	}
}
