/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * user-handlers: the registrations checked at spawn, and the user half of the chain: each
 * handler of a syscall called in order after a built-in CONTINUE, its action applied, the
 * deferred ones (and the held calls) run on the worker pool, at most USER_DEFERRED_MAX at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "error.h"
#include "events.h"
#include "fd-util.h"
#include "groups.h"
#include "macro.h"
#include "notif.h"
#include "plan/seccomp.h"
#include "policy/policy.h"
#include "supervisor.h"
#include "syscall-util.h"
#include "user-handlers.h"

struct sandlock_handler *handler_ref(struct sandlock_handler *h)
{
	if (h)
		atomic_fetch_add(&h->refs, 1);
	return h;
}

void handler_unref(struct sandlock_handler *h)
{
	if (!h || atomic_fetch_sub(&h->refs, 1) != 1)
		return;
	if (h->user_data_drop)
		h->user_data_drop(h->user_data);
	free(h);
}

/* ---- registration ------------------------------------------------------------------------ */

/* The syscall of registration @i: resolved by name, or its number checked, on this
 * architecture. */
static int reg_resolve(const sandlock_handler_reg_t *reg, size_t i, struct sandlock_error **reterr)
{
	if (reg->syscall) {
		int nr = seccomp_syscall_resolve_name(reg->syscall);
		if (nr == __NR_SCMP_ERROR || nr < 0)
			return error_set(reterr, -EINVAL,
					 "handlers[%zu]: unknown syscall \"%s\" (a name of this "
					 "architecture, as in syscalls(2))",
					 i, reg->syscall);
		return nr;
	}
	char *name =
		reg->nr >= 0 ? seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, reg->nr) : NULL;
	if (!name)
		return error_set(reterr, -EINVAL,
				 "handlers[%zu]: unknown syscall number %d on this architecture", i,
				 reg->nr);
	free(name);
	return reg->nr;
}

/* The name of @nr for the messages ("mount"), in @buf. */
static const char *nr_name(int nr, char *buf, size_t size)
{
	char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
	snprintf(buf, size, "%s", name ? name : "?");
	free(name);
	return buf;
}

/* Whether @nr's built-in route keeps an account of the calls it lets through (handle_fork). */
static int reg_accounts(int nr)
{
#ifdef SYS_fork
	if (nr == SYS_fork || nr == SYS_vfork)
		return 1;
#endif
	(void)nr;
	return 0;
}

/* Whether a handler on @nr could ever run: not blocked by @p, not filtered by argument. */
static int reg_allowed(const struct sandlock_policy *p, int nr, size_t i,
		       struct sandlock_error **reterr)
{
	char name[64];

	int r = seccomp_is_denied(p, nr);
	if (r < 0)
		return error_set(reterr, r, "handlers[%zu]: %s: %s", i,
				 nr_name(nr, name, sizeof(name)), strerror(-r));
	if (r > 0)
		return error_set(
			reterr, -EINVAL,
			"handlers[%zu]: %s is blocked by the policy (the default blocklist "
			"or extra_deny_syscalls): a handler on it would never run",
			i, nr_name(nr, name, sizeof(name)));
	/* A whole-syscall trap would replace the filter's own rules on its arguments (libseccomp
	 * keeps one action per syscall without conditions): refused rather than weakened. */
	if (seccomp_arg_filtered(nr))
		return error_set(
			reterr, -EINVAL,
			"handlers[%zu]: %s: not supported: the seccomp filter decides some "
			"of its calls by their arguments, which a handler's whole-syscall "
			"trap would override",
			i, nr_name(nr, name, sizeof(name)));
	/* The built-in route of fork and vfork counts the new process for max_processes before
	 * the handlers run, and a handler's refusal cannot take the count back: refused, as
	 * clone is above. */
	if (reg_accounts(nr))
		return error_set(reterr, -EINVAL,
				 "handlers[%zu]: %s: not supported: the process limit counts "
				 "each call before a handler could refuse it",
				 i, nr_name(nr, name, sizeof(name)));
	return 0;
}

static int uh_add(struct user_handlers *uh, int nr, struct sandlock_handler *h, size_t i,
		  struct sandlock_error **reterr)
{
	struct user_nr *un = NULL;

	for (size_t k = 0; k < uh->n_nrs && !un; k++)
		if (uh->nrs[k].nr == nr)
			un = &uh->nrs[k];
	if (!un) {
		if (uh->n_nrs >= USER_TRAPS_MAX)
			return error_set(reterr, -EINVAL,
					 "handlers[%zu]: more than %d syscalls with handlers", i,
					 USER_TRAPS_MAX);
		un = &uh->nrs[uh->n_nrs];
		uh->nrs_flat[uh->n_nrs++] = nr;
		un->nr = nr;
	}
	if (un->n >= USER_HANDLERS_PER_NR)
		return error_set(reterr, -EINVAL,
				 "handlers[%zu]: more than %d handlers on one syscall", i,
				 USER_HANDLERS_PER_NR);
	un->h[un->n++] = handler_ref(h);
	return 0;
}

int user_handlers_new(const struct sandlock_policy *p, const sandlock_handler_reg_t *regs, size_t n,
		      struct user_handlers **ret, struct sandlock_error **reterr)
{
	*ret = NULL;
	if (n == 0)
		return 0;
	if (!regs)
		return error_set(reterr, -EINVAL, "handlers: NULL array of %zu registrations", n);
	if (p->no_supervisor)
		return error_set(
			reterr, -EINVAL,
			"handlers: extension handlers run in the supervisor, and the policy "
			"has no_supervisor set");
	struct user_handlers *uh = calloc(1, sizeof(*uh));
	if (!uh)
		return error_set(reterr, -ENOMEM, "out of memory");
	int r = 0;
	for (size_t i = 0; r == 0 && i < n; i++) {
		if (!regs[i].handler || regs[i].reserved)
			r = error_set(reterr, -EINVAL, "handlers[%zu]: %s", i,
				      regs[i].handler ? "reserved must be 0" : "NULL handler");
		int nr = r == 0 ? reg_resolve(&regs[i], i, reterr) : r;
		r = nr < 0 ? nr : reg_allowed(p, nr, i, reterr);
		if (r == 0)
			r = uh_add(uh, nr, regs[i].handler, i, reterr);
	}
	if (r < 0) {
		user_handlers_free(uh);
		return r;
	}
	*ret = uh;
	return 0;
}

void user_handlers_free(struct user_handlers *uh)
{
	if (!uh)
		return;
	for (size_t k = 0; k < uh->n_nrs; k++)
		for (size_t i = 0; i < uh->nrs[k].n; i++)
			handler_unref(uh->nrs[k].h[i]);
	free(uh);
}

static const struct user_nr *uh_find(const struct user_handlers *uh, int nr)
{
	for (size_t k = 0; uh && k < uh->n_nrs; k++)
		if (uh->nrs[k].nr == nr)
			return &uh->nrs[k];
	return NULL;
}

int user_handlers_traps(const struct user_handlers *uh, int nr)
{
	return uh_find(uh, nr) != NULL;
}

/* ---- events ------------------------------------------------------------------------------ */

static enum event_category nr_category(int nr)
{
	switch (nr) {
	case SYS_connect:
	case SYS_bind:
	case SYS_listen:
	case SYS_accept:
	case SYS_accept4:
	case SYS_sendto:
	case SYS_sendmsg:
	case SYS_sendmmsg:
	case SYS_recvfrom:
	case SYS_recvmsg:
	case SYS_socket:
	case SYS_socketpair:
	case SYS_getsockopt:
	case SYS_getsockname:
	case SYS_getpeername:
	case SYS_shutdown:
		return EVENT_NETWORK;
	case SYS_clone:
	case SYS_execve:
	case SYS_execveat:
	case SYS_kill:
	case SYS_tgkill:
	case SYS_exit_group:
	case SYS_wait4:
	case SYS_getpid:
	case SYS_getppid:
	case SYS_uname:
	case SYS_setpgid:
	case SYS_setsid:
	case SYS_prlimit64:
#ifdef SYS_fork
	case SYS_fork:
	case SYS_vfork:
#endif
		return EVENT_PROCESS;
	case SYS_mmap:
	case SYS_munmap:
	case SYS_brk:
	case SYS_mprotect:
	case SYS_mremap:
	case SYS_memfd_create:
	case SYS_madvise:
		return EVENT_MEMORY;
	default:
		return EVENT_FILE;
	}
}

/* A user handler's decision as an event: a denial (reason "handler") always goes to the
 * table, an answer or an injection only where allowed decisions are wanted. */
static void user_event(struct supervisor *sv, const struct seccomp_notif *req, int error)
{
	uint32_t verdict = error ? SANDLOCK_VERDICT_DENY : SANDLOCK_VERDICT_ALLOW;

	if (!sv->events || !events_wants(sv->events, verdict))
		return;
	struct event ev = { .nr = req->data.nr,
			    .category = nr_category(req->data.nr),
			    .pid = (pid_t)req->pid,
			    .verdict = verdict,
			    .error = error,
			    .reason = error ? "handler" : NULL };
	events_emit(sv, &ev);
}

/* ---- actions ----------------------------------------------------------------------------- */

/* Signal the trapped thread's process (its thread group), or group @pgid (one of the sandbox's:
 * signalled through its recorded leader's pidfd under the groups' lock, so a number reused
 * since the handler asked, by a group outside the sandbox, is never signalled). */
static int user_kill(struct supervisor *sv, int listener, const struct seccomp_notif *req, int sig,
		     pid_t pgid)
{
	if (pgid) {
		int r = sv->groups ? groups_signal_one(sv->groups, pgid, sig) : -ESRCH;
		return r == -ESRCH ? -EPERM : r;
	}
	pid_t tgid;
	int r = proc_status_field((pid_t)req->pid, "Tgid", &tgid);
	if (r < 0)
		return r == -ESRCH ? NOTIF_GONE : r;
	_cleanup_close_ int pidfd = sys_pidfd_open(tgid, 0);
	if (pidfd < 0)
		return errno == ESRCH ? NOTIF_GONE : -errno;
	/* The thread is still in the call: its process is the one the pidfd names (a live
	 * thread keeps its group leader's pid from reuse). */
	if (!notif_id_valid(listener, req->id))
		return NOTIF_GONE;
	return sys_pidfd_send_signal(pidfd, sig, NULL, 0) < 0 ? -errno : 0;
}

/* What on_exception answers. */
static int user_exception(struct supervisor *sv, int listener, const struct seccomp_notif *req,
			  struct seccomp_notif_resp *resp, const struct sandlock_handler *h)
{
	switch (h->on_exception) {
	case SANDLOCK_EXCEPTION_CONTINUE:
		return NOTIF_CONTINUED; /* @resp holds the chain's CONTINUE (user_handlers_answer)
					 */
	case SANDLOCK_EXCEPTION_DENY_EIO:
		notif_answer_errno(resp, -EIO);
		user_event(sv, req, EIO);
		return NOTIF_ANSWERED;
	case SANDLOCK_EXCEPTION_DENY_EPERM:
		notif_answer_errno(resp, -EPERM);
		user_event(sv, req, EPERM);
		return NOTIF_ANSWERED;
	default: { /* KILL */
		int r = user_kill(sv, listener, req, SIGKILL, 0);
		notif_answer_errno(resp, -EPERM); /* fail closed where the kill failed */
		user_event(sv, req, EPERM);
		return r == NOTIF_GONE ? r : NOTIF_ANSWERED;
	}
	}
}

/* Apply action @a (set, and not an exception) to @resp. NOTIF_CONTINUED: the next handler
 * decides. */
static int user_apply(struct supervisor *sv, int listener, const struct seccomp_notif *req,
		      struct seccomp_notif_resp *resp, struct sandlock_action *a)
{
	int r;

	switch (a->kind) {
	case USER_ACTION_ERRNO:
		notif_answer_errno(resp, -(int)a->value);
		user_event(sv, req, (int)a->value);
		return NOTIF_ANSWERED;
	case USER_ACTION_RETURN:
		notif_answer_value(resp, a->value);
		user_event(sv, req, 0);
		return NOTIF_ANSWERED;
	case USER_ACTION_INJECT:
		r = notif_addfd_send(listener, req, a->fd, a->cloexec);
		a->fd = safe_close(a->fd);
		if (r == NOTIF_DEFERRED)
			user_event(sv, req, 0);
		return r;
	case USER_ACTION_KILL:
		r = user_kill(sv, listener, req, (int)a->value, a->pgid);
		if (r == NOTIF_GONE)
			return r;
		/* Should the process survive (a caught or stopping signal), the call fails. */
		notif_answer_errno(resp, r < 0 ? r : -EINTR);
		user_event(sv, req, r < 0 ? -r : EINTR);
		return NOTIF_ANSWERED;
	default: /* CONTINUE: @resp keeps the chain's CONTINUE */
		return NOTIF_CONTINUED;
	}
}

/* ---- the chain --------------------------------------------------------------------------- */

#define USER_CALL_LOOP 0
#define USER_CALL_DEFERRED 1 /* on a worker: hold is an exception */

/* Call handler @h for @req; its action in @a (a->kind USER_ACTION_NONE on an exception). */
static void user_call(struct supervisor *sv, int listener, const struct seccomp_notif *req,
		      const struct sandlock_handler *h, uint32_t flags, int where,
		      struct sandlock_action *a)
{
	sandlock_notif_t n = { .id = req->id,
			       .pid = (int32_t)req->pid,
			       .flags = flags,
			       .syscall_nr = req->data.nr,
			       .arch = req->data.arch,
			       .instruction_pointer = req->data.instruction_pointer };
	memcpy(n.args, req->data.args, sizeof(n.args));
	struct sandlock_mem mem = { .listener = listener, .req = req, .valid = 1 };
	*a = (struct sandlock_action){ .sv = sv, .valid = 1, .fd = -1 };

	int r = h->fn(&n, &mem, a, h->user_data);
	mem.valid = a->valid = 0;
	if (r != 0 || a->twice || (a->kind == USER_ACTION_HOLD && where == USER_CALL_DEFERRED)) {
		a->fd = safe_close(a->fd);
		a->kind = USER_ACTION_NONE;
	}
}

struct user_job {
	struct supervisor *sv;
	const struct user_nr *un;
	size_t start;
	uint32_t flags; /* the first call's: SANDLOCK_NOTIF_HELD for a held call */
	struct seccomp_notif req;
	size_t resp_size;
	struct seccomp_notif_resp resp[]; /* resp_size bytes: the kernel's may be larger */
};

static int user_chain(struct supervisor *sv, int listener, const struct seccomp_notif *req,
		      struct seccomp_notif_resp *resp, const struct user_nr *un, size_t start,
		      uint32_t flags, int where);

static void user_deferred_run(int listener, int sock, void *arg)
{
	struct user_job *job = arg;

	(void)sock;
	if (listener >= 0) { /* -1: the sandbox ended, nobody to answer */
		int r = user_chain(job->sv, listener, &job->req, job->resp, job->un, job->start,
				   job->flags, USER_CALL_DEFERRED);
		if (r < 0 && r != NOTIF_GONE && r != NOTIF_DEFERRED && r != NOTIF_CONTINUED) {
			notif_answer_errno(job->resp, r); /* fail closed */
			r = NOTIF_ANSWERED;
		}
		if (r == NOTIF_ANSWERED || r == NOTIF_CONTINUED)
			(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, job->resp);
	}
	atomic_fetch_sub(&job->sv->user->deferred, 1);
	free(job);
}

/* Hand the chain from handler @start on to a worker; beyond USER_DEFERRED_MAX calls in flight
 * (or with no worker to be had) the call fails with EAGAIN. */
static int user_defer(struct supervisor *sv, const struct seccomp_notif *req,
		      struct seccomp_notif_resp *resp, const struct user_nr *un, size_t start,
		      uint32_t flags)
{
	size_t resp_size = MAX(sv->sizes.seccomp_notif_resp, sizeof(*resp));

	if (atomic_fetch_add(&sv->user->deferred, 1) >= USER_DEFERRED_MAX) {
		atomic_fetch_sub(&sv->user->deferred, 1);
		notif_answer_errno(resp, -EAGAIN);
		return NOTIF_ANSWERED;
	}
	struct user_job *job = calloc(1, sizeof(*job) + resp_size);
	int r = job ? 0 : -ENOMEM;
	if (job) {
		*job = (struct user_job){
			.sv = sv, .un = un, .start = start, .flags = flags, .resp_size = resp_size
		};
		memcpy(&job->req, req, sizeof(job->req));
		memcpy(job->resp, resp, resp_size);
		r = supervisor_run_worker(sv, -1, user_deferred_run, job);
	}
	if (r < 0) {
		free(job);
		atomic_fetch_sub(&sv->user->deferred, 1);
		notif_answer_errno(resp, r == -ENOMEM ? -ENOMEM : -EAGAIN);
		return NOTIF_ANSWERED;
	}
	return NOTIF_DEFERRED;
}

/* Handlers @start.. of @un in order, until one answers something but continue. @resp holds
 * the chain's CONTINUE on entry. */
static int user_chain(struct supervisor *sv, int listener, const struct seccomp_notif *req,
		      struct seccomp_notif_resp *resp, const struct user_nr *un, size_t start,
		      uint32_t flags, int where)
{
	for (size_t i = start; i < un->n; i++, flags = 0) {
		const struct sandlock_handler *h = un->h[i];
		struct sandlock_action a;

		if (where == USER_CALL_LOOP && h->deferred)
			return user_defer(sv, req, resp, un, i, 0);
		user_call(sv, listener, req, h, flags, where, &a);
		if (a.kind == USER_ACTION_HOLD)
			return user_defer(sv, req, resp, un, i, SANDLOCK_NOTIF_HELD);
		int r = a.kind == USER_ACTION_NONE ? user_exception(sv, listener, req, resp, h)
						   : user_apply(sv, listener, req, resp, &a);
		if (r != NOTIF_CONTINUED)
			return r;
	}
	/* CONTINUE (every handler let the call go on): @resp is the built-in chain's own
	 * CONTINUE, made under the reason its handler names, or the one user_handlers_answer
	 * made for a call the policy does not restrict. */
	return NOTIF_CONTINUED;
}

int user_handlers_answer(struct supervisor *sv, const struct seccomp_notif *req,
			 struct seccomp_notif_resp *resp, int builtin)
{
	const struct user_nr *un = uh_find(sv->user, req->data.nr);

	/* A built-in decision (a denial, an emulated answer, a deferral) is final. */
	if (!un || (builtin != NOTIF_CONTINUED && builtin != USER_BUILTIN_NONE))
		return builtin == USER_BUILTIN_NONE ? NOTIF_NOT_MINE : builtin;
	if (builtin == USER_BUILTIN_NONE)
		/* CONTINUE: the syscall (or this call of it) is one the policy does not restrict:
		 * the built-in trap set would have let it run untrapped, so the kernel's own checks
		 * and Landlock apply, as without handlers. */
		notif_answer_continue(resp);
	return user_chain(sv, sv->listener, req, resp, un, 0, 0, USER_CALL_LOOP);
}
