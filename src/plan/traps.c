/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plan/traps: the policy tests of routes.def, and the trap set a policy needs.
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

static int port_remap(const struct sandlock_policy *p)
{
	return p->port_remap;
}

static int max_processes(const struct sandlock_policy *p)
{
	/* max_memory needs to know of new processes too (handlers/memory.c). */
	return p->max_processes.set || p->max_memory.set;
}

/* A clone that makes a process: no CLONE_THREAD, and none of the flags the filter refuses
 * (namespaces, CLONE_PARENT), so that this rule and those never match the same call. */
#define CLONE_PROCESS_MASK                                                                         \
	(CLONE_THREAD | CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC |              \
	 CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_PARENT)

static int max_memory(const struct sandlock_policy *p)
{
	return p->max_memory.set;
}

static int num_cpus(const struct sandlock_policy *p)
{
	return p->num_cpus.set;
}

static int serves_proc(const struct sandlock_policy *p)
{
	return !p->no_supervisor && landlock_grants_proc(p);
}

/* A writable grant holds a denied path (or the store root of the branches): what the carve leaves
 * out is done by the supervisor. */
static int mediates_write(const struct sandlock_policy *p)
{
	return !p->no_supervisor && p->fs_write && landlock_write_mediation(p, 0, NULL, NULL) > 0;
}

/* A workdir: its names are made in the copy-on-write branch (handlers/cow.c). */
static int workdir(const struct sandlock_policy *p)
{
	return !p->no_supervisor && p->workdir;
}

/* max_disk with a workdir: what grows a file of the branch is charged first. */
static int workdir_quota(const struct sandlock_policy *p)
{
	return workdir(p) && p->max_disk.set;
}

static int mediates_write_or_cow(const struct sandlock_policy *p)
{
	return workdir(p) || mediates_write(p);
}

static int serves_files(const struct sandlock_policy *p)
{
	return workdir(p) || policy_net_hosts(p) || p->port_remap || p->num_cpus.set ||
	       p->max_memory.set || serves_proc(p) || mediates_write(p) ||
	       (!p->no_supervisor && (p->random_seed.set || p->name));
}

static int time_start(const struct sandlock_policy *p)
{
	return !p->no_supervisor && p->time_start;
}

static int random_seed(const struct sandlock_policy *p)
{
	return !p->no_supervisor && p->random_seed.set;
}

/* Listings made by the supervisor: /proc's while it is served, every one sorted under
 * deterministic_dirs, and the workdir's. */
static int lists(const struct sandlock_policy *p)
{
	return workdir(p) || serves_proc(p) || (!p->no_supervisor && p->deterministic_dirs);
}

static int serves_proc_or_write(const struct sandlock_policy *p)
{
	return serves_proc(p) || mediates_write(p);
}

/* A trap of routes.def and the test that enables it (its handlers are supervisor/dispatch.c's). */
struct trap_row {
	struct trap trap;
	/* Whether @p needs this syscall trapped; NULL: every sandbox does. */
	int (*needed)(const struct sandlock_policy *p);
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

/* Whether @p needs row @e, each predicate asked once per trap set (@asked, @n_asked): several
 * resolve the grants' paths (realpath), and many rows share one (the twenty of a writable
 * grant holding a denied path). */
struct asked {
	int (*fn)(const struct sandlock_policy *p);
	int yes;
};

static int needed(const struct trap_row *e, const struct sandlock_policy *p, struct asked *asked,
		  size_t *n_asked)
{
	size_t k = 0;

	if (!e->needed)
		return 1;
	while (k < *n_asked && asked[k].fn != e->needed)
		k++;
	if (k == *n_asked)
		asked[(*n_asked)++] = (struct asked){ e->needed, e->needed(p) };
	return asked[k].yes;
}

size_t dispatch_trap_set(const struct sandlock_policy *p, struct trap *traps, size_t max)
{
	struct asked asked[ELEMENTSOF(rows)];
	size_t n = 0, n_asked = 0;

	for (size_t i = 0; i < ELEMENTSOF(rows) && n < max; i++)
		if (needed(&rows[i], p, asked, &n_asked)) {
			memset(&traps[n], 0, sizeof(traps[n]));
			traps[n++] = rows[i].trap;
		}
	return n;
}
