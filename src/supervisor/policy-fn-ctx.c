/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy-fn-ctx: what a policy_fn may change while it runs (sandlock_policy_ctx_*), and the
 * network check that reads it (handlers/net.c). Every change only narrows: the static rules are
 * checked before the sets here and the static net_deny after, and the limits only go down.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include "fd-util.h"
#include "notif.h"
#include "syscall-util.h"
#include "policy-fn-internal.h"
#include "supervisor.h"

static int parse_set(const char *const *ips, size_t n, struct pfn_ipset *ret)
{
	if (n > POLICY_FN_NET_MAX || (n && !ips))
		return -EINVAL;
	ret->n = 0;
	for (size_t i = 0; i < n; i++) {
		struct in6_addr a;
		struct in_addr a4;
		if (!ips[i])
			return -EINVAL;
		if (inet_pton(AF_INET, ips[i], &a4) == 1) {
			memset(&a, 0, sizeof(a));
			a.s6_addr[10] = a.s6_addr[11] = 0xff;
			memcpy(a.s6_addr + 12, &a4, 4);
		} else if (inet_pton(AF_INET6, ips[i], &a) != 1)
			return -EINVAL;
		ret->a[ret->n++] = a;
	}
	return 0;
}

static int set_has(const struct pfn_ipset *s, const struct in6_addr *a)
{
	for (size_t i = 0; i < s->n; i++)
		if (memcmp(&s->a[i], a, sizeof(*a)) == 0)
			return 1;
	return 0;
}

/* Under the lock: drop the overrides of processes that ended. */
static void pids_prune(struct policy_fn *st)
{
	size_t k = 0;

	for (size_t i = 0; i < st->n_pids; i++) {
		struct pollfd pfd = { .fd = st->pids[i].pidfd, .events = POLLIN };
		if (poll(&pfd, 1, 0) != 0) { /* readable (ended), or an error: not this process */
			safe_close(st->pids[i].pidfd);
			continue;
		}
		st->pids[k++] = st->pids[i];
	}
	st->n_pids = k;
	atomic_store(&st->net_limited, st->live_set || st->n_pids);
}

static struct pfn_pid_set *pid_set(struct policy_fn *st, pid_t pid, int make)
{
	pids_prune(st);
	for (size_t i = 0; i < st->n_pids; i++)
		if (st->pids[i].pid == pid)
			return &st->pids[i];
	if (!make || st->n_pids == POLICY_FN_PIDS_MAX)
		return NULL;
	int fd = sys_pidfd_open(pid, 0);
	if (fd < 0)
		return NULL; /* no such process: nothing to override */
	st->pids[st->n_pids] = (struct pfn_pid_set){ .pid = pid, .pidfd = fd };
	return &st->pids[st->n_pids++];
}

int policy_fn_ctx_network(sandlock_policy_ctx_t *ctx, enum policy_net_op op, pid_t pid,
			  const char *const *ips, size_t n)
{
	struct pfn_ipset set;
	int r;

	if (!ctx || (r = parse_set(ips, n, &set)) < 0)
		return -EINVAL;
	struct policy_fn *st = ctx->st;
	pthread_mutex_lock(&st->lock);
	if (op == POLICY_NET_RESTRICT) {
		st->live = set;
		st->live_set = 1;
	} else if (op == POLICY_NET_GRANT && st->live_set) {
		/* Only back into the live set: the static allow list is checked before it, so an
		 * address it does not allow stays refused. Without a live set all is allowed. */
		for (size_t i = 0; i < set.n && r == 0; i++)
			if (!set_has(&st->live, &set.a[i]))
				r = st->live.n < POLICY_FN_NET_MAX ? 0 : -ENOSPC;
		for (size_t i = 0; i < set.n && r == 0; i++)
			if (!set_has(&st->live, &set.a[i]))
				st->live.a[st->live.n++] = set.a[i];
	} else if (op == POLICY_NET_PID) {
		struct pfn_pid_set *ps = pid_set(st, pid, 1);
		if (ps)
			ps->set = set;
		else
			r = st->n_pids == POLICY_FN_PIDS_MAX ? -ENOSPC : -ESRCH;
	}
	atomic_store(&st->net_limited, st->live_set || st->n_pids);
	pthread_mutex_unlock(&st->lock);
	return r;
}

int policy_fn_ctx_limit(sandlock_policy_ctx_t *ctx, int processes, uint64_t v)
{
	if (!ctx || v == 0 || (processes && v > UINT32_MAX))
		return -EINVAL;
	struct policy_fn *st = ctx->st;
	int r = 0;
	pthread_mutex_lock(&st->lock);
	uint64_t cur = processes ? st->max_processes : st->max_memory;
	if (cur && v > cur)
		r = -EPERM; /* never raised */
	else if (processes)
		st->max_processes = (unsigned)v;
	else
		st->max_memory = v;
	pthread_mutex_unlock(&st->lock);
	if (r == 0) /* applied by the loop before it decides its next call */
		atomic_store(&st->limits_pending, 1);
	return r;
}

int policy_fn_net_limited(struct supervisor *sv)
{
	return sv->pfn && atomic_load(&sv->pfn->net_limited);
}

int policy_fn_net_allows(struct supervisor *sv, pid_t tid, int family, const uint8_t *addr)
{
	struct policy_fn *st = sv->pfn;
	struct in6_addr a = { 0 };
	pid_t tgid = tid;

	if (!policy_fn_net_limited(sv))
		return 1;
	if (family == AF_INET) {
		a.s6_addr[10] = a.s6_addr[11] = 0xff;
		memcpy(a.s6_addr + 12, addr, 4);
	} else if (family == AF_INET6)
		memcpy(a.s6_addr, addr, 16);
	else
		return 0;
	(void)proc_status_field(tid, "Tgid", &tgid);
	pthread_mutex_lock(&st->lock);
	/* Per-pid override > live set > the static list alone. */
	const struct pfn_pid_set *ps = pid_set(st, tgid, 0);
	if (!ps && tgid != tid)
		ps = pid_set(st, tid, 0);
	int ok = ps ? set_has(&ps->set, &a) : st->live_set ? set_has(&st->live, &a) : 1;
	pthread_mutex_unlock(&st->lock);
	return ok;
}
