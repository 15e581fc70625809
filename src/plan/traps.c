/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plan/traps: the policy tests of routes.def, over the needs summary decided once per policy,
 * and the trap set those needs take.
 */
#include <fcntl.h>
#include <linux/netlink.h>
#include <sched.h>
#include <seccomp.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>

#include "landlock.h"
#include "macro.h"
#include "plan.h"
#include "syscall-util.h"
#include "traps.h"

/* The addresses a peer's getpeername reports: virtual ports under port_remap, the original
 * destination of a connection redirected to the HTTP proxy (handlers/ports.c). */
static int peer_names(const struct plan_needs *n)
{
	return n->port_remap || n->http;
}

static int max_processes(const struct plan_needs *n)
{
	/* max_memory needs to know of new processes too (handlers/memory.c); a policy_fn observes
	 * forks, and may lower the limit. */
	return n->max_processes || n->max_memory || n->policy_fn;
}

/* A clone that makes a process: no CLONE_THREAD, and none of the flags the filter refuses
 * (namespaces, CLONE_PARENT), so that this rule and those never match the same call. */
#define CLONE_PROCESS_MASK                                                                         \
	(CLONE_THREAD | CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC |              \
	 CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_PARENT)

static int max_memory(const struct plan_needs *n)
{
	return n->max_memory;
}

/* mmap and brk: checked under max_memory, observed by a policy_fn (which may lower the limit). */
static int memory_or_pfn(const struct plan_needs *n)
{
	return n->max_memory || n->policy_fn;
}

static int num_cpus(const struct plan_needs *n)
{
	return n->num_cpus;
}

static int serves_proc(const struct plan_needs *n)
{
	return n->proc_served;
}

/* A writable grant holds a denied path (or the store root of the branches): what the carve leaves
 * out is done by the supervisor. */
static int mediates_write(const struct plan_needs *n)
{
	return n->write_mediated;
}

/* A workdir: its names are made in the copy-on-write branch (handlers/cow.c). */
static int workdir(const struct plan_needs *n)
{
	return n->workdir;
}

/* max_disk with a workdir: what grows a file of the branch is charged first. */
static int workdir_quota(const struct plan_needs *n)
{
	return workdir(n) && n->max_disk;
}

static int mediates_write_or_cow(const struct plan_needs *n)
{
	return workdir(n) || mediates_write(n);
}

static int serves_files(const struct plan_needs *n)
{
	return workdir(n) || n->net_hosts || n->http_files || n->port_remap || n->num_cpus ||
	       n->max_memory || serves_proc(n) || mediates_write(n) ||
	       (n->supervised && (n->random_seed || n->name));
}

static int time_start(const struct plan_needs *n)
{
	return n->supervised && n->time_start;
}

static int random_seed(const struct plan_needs *n)
{
	return n->supervised && n->random_seed;
}

/* Listings made by the supervisor: /proc's while it is served, every one sorted under
 * deterministic_dirs, and the workdir's. */
static int lists(const struct plan_needs *n)
{
	return workdir(n) || serves_proc(n) || (n->supervised && n->deterministic_dirs);
}

/* What the supervisor opens for the sandbox (/proc served, the writes beneath a denied path,
 * deny_path's opens under a policy_fn) must not reach a process that confined itself further. */
static int opens_for_child(const struct plan_needs *n)
{
	return serves_proc(n) || mediates_write(n) || n->policy_fn;
}

/* TCP bind is restricted: listen on an unbound socket picks a port past Landlock's check. */
static int bind_restricted(const struct plan_needs *n)
{
	return n->bind_restricted;
}

/* Logging mode (SANDLOCK_EVENTS_DENIALS): the calls Landlock may refuse are trapped too, for
 * the supervisor to judge for the log once it answers CONTINUE (supervisor/judge.c): the
 * kernel still decides. Their handlers CONTINUE what they would not have been asked about. */
static int logs_denials(const struct plan_needs *n)
{
	return n->supervised && (n->events & SANDLOCK_EVENTS_DENIALS);
}

/* With a policy_fn, the opens and execs are held for its verdict and the fs changes observed
 * (supervisor/policy-fn.c); their handlers CONTINUE what they mediate nothing of. */
static int files_or_log(const struct plan_needs *n)
{
	return serves_files(n) || logs_denials(n) || n->policy_fn;
}

static int writes_or_log(const struct plan_needs *n)
{
	return mediates_write_or_cow(n) || logs_denials(n) || n->policy_fn;
}

static int workdir_or_log(const struct plan_needs *n)
{
	return workdir(n) || logs_denials(n) || n->policy_fn;
}

void plan_needs_fill(const struct sandlock_policy *p, int proc_served, int write_mediated,
		     struct plan_needs *ret)
{
	int supervised = !p->no_supervisor;

	*ret = (struct plan_needs){
		.supervised = supervised,
		.proc_served = supervised && proc_served,
		.write_mediated = supervised && write_mediated,
		.workdir = supervised && p->workdir,
		.max_disk = p->max_disk.set,
		.port_remap = p->port_remap,
		.max_processes = p->max_processes.set,
		.max_memory = p->max_memory.set,
		.num_cpus = p->num_cpus.set,
		.random_seed = p->random_seed.set,
		.name = p->name != NULL,
		.time_start = p->time_start != NULL,
		.deterministic_dirs = p->deterministic_dirs,
		.net_hosts = policy_net_hosts(p),
		.http = supervised && policy_http_active(p),
		.http_files = supervised && policy_http_active(p) &&
			      (policy_http_hosts(p) || (p->http_inject_ca && p->http_inject_ca[0])),
		.bind_restricted = policy_bind_restricted(p),
		.policy_fn = supervised && p->policy_fn != NULL,
	};
}

void plan_needs_of(const struct sandlock_policy *p, struct plan_needs *ret)
{
	int supervised = !p->no_supervisor;

	/* As plan_build decides them: plan.proc.served, and write_roots set (the mediated grants
	 * do not depend on /proc's carve, so 0 here is what the plan finds too). */
	plan_needs_fill(p, supervised && landlock_grants_proc(p),
			supervised && p->fs_write && landlock_write_mediation(p, 0, NULL, NULL) > 0,
			ret);
}

/* A trap of routes.def and the test that enables it (its handlers are supervisor/dispatch.c's). */
struct trap_row {
	struct trap trap;
	/* Whether a sandbox of these needs has this syscall trapped; NULL: every sandbox does. */
	int (*needed)(const struct plan_needs *n);
};

#define EQ(a, v)                                                                                   \
	{                                                                                          \
		.arg = (a), .op = SCMP_CMP_EQ, .datum = (v)                                        \
	}
#define MASKED_EQ(a, m, v)                                                                         \
	{                                                                                          \
		.arg = (a), .op = SCMP_CMP_MASKED_EQ, .datum = (m), .datum_b = (v)                 \
	}
#define NOT_ZERO(a)                                                                                \
	{                                                                                          \
		.arg = (a), .op = SCMP_CMP_NE, .datum = 0                                          \
	}

static const struct trap_row rows[] = {
#define ROUTE(nr_, needed_, deny_, workdir_, handler_, flags_, n_conds_, ...)                      \
	{ { .nr = (nr_),                                                                           \
	    .n_conds = (n_conds_),                                                                 \
	    .cond = { __VA_ARGS__ },                                                               \
	    .deny_unsupervised = (deny_) },                                                        \
	  (needed_) },
#include "routes.def"
#undef ROUTE
};

_Static_assert(ELEMENTSOF(rows) <= DISPATCH_MAX_TRAPS, "a trap set may not fit its array");

/* Every row's conditions fit a trap's array: seccomp.c compiles at most that many, and a row
 * with more would trap more calls than trap_set_matches reads it to take. */
#define ROUTE(nr_, needed_, deny_, workdir_, handler_, flags_, n_conds_, ...)                      \
	_Static_assert((n_conds_) <= ELEMENTSOF(((struct trap *)0)->cond),                         \
		       "a routes.def row has more conditions than a trap holds");
#include "routes.def"
#undef ROUTE

size_t trap_set_of(const struct plan_needs *needs, struct trap *traps, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < ELEMENTSOF(rows) && n < max; i++)
		if (!rows[i].needed || rows[i].needed(needs)) {
			memset(&traps[n], 0, sizeof(traps[n]));
			traps[n++] = rows[i].trap;
		}
	return n;
}

int trap_needed_without_pfn(const struct plan_needs *n, int nr)
{
	struct plan_needs without = *n;

	without.policy_fn = 0;
	for (size_t i = 0; i < ELEMENTSOF(rows); i++)
		if (rows[i].trap.nr == nr && (!rows[i].needed || rows[i].needed(&without)))
			return 1;
	return 0;
}

size_t dispatch_trap_set(const struct sandlock_policy *p, struct trap *traps, size_t max)
{
	struct plan_needs needs;

	plan_needs_of(p, &needs);
	return trap_set_of(&needs, traps, max);
}

static int cond_holds(const struct trap_cond *c, const struct seccomp_data *d)
{
	uint64_t v = c->arg < 6 ? d->args[c->arg] : 0;

	switch (c->op) {
	case SCMP_CMP_NE:
		return v != c->datum;
	case SCMP_CMP_LT:
		return v < c->datum;
	case SCMP_CMP_LE:
		return v <= c->datum;
	case SCMP_CMP_EQ:
		return v == c->datum;
	case SCMP_CMP_GE:
		return v >= c->datum;
	case SCMP_CMP_GT:
		return v > c->datum;
	case SCMP_CMP_MASKED_EQ:
		return (v & c->datum) == c->datum_b;
	default:
		return 0;
	}
}

int trap_set_matches(const struct trap *traps, size_t n, const struct seccomp_data *d)
{
	for (size_t i = 0; i < n; i++) {
		if (traps[i].nr != d->nr)
			continue;
		/* The conditions seccomp.c's add_trap compiles: the same bound, so that a call
		 * the filter traps by this rule is one this set takes. */
		uint32_t n_conds = MIN(traps[i].n_conds, (uint32_t)ELEMENTSOF(traps[i].cond)),
			 k = 0;
		while (k < n_conds && cond_holds(&traps[i].cond[k], d))
			k++;
		if (k == n_conds)
			return 1;
	}
	return 0;
}
