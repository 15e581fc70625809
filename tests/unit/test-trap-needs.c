/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-trap-needs: the trap set plan_build decides from the needs it resolved once (plan.needs)
 * is the one a caller without a plan gets from the policy alone (dispatch_trap_set), trap for
 * trap, and so is the BPF program built with it, over policies that enable each policy test of
 * routes.def.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "plan/landlock.h"
#include "plan/plan.h"
#include "plan/seccomp.h"
#include "plan/traps.h"
#include "policy/policy.h"
#include "sandlock.h"
#include "tap.h"

/* One policy: its name, then field/value pairs set as a user would (NULL ends them). */
struct spec {
	const char *name;
	const char *set[32];
	int proc_served, write_mediated; /* what plan.needs must say */
};

static char dir[64], wdir[128], secret[160], workdir[128];

static struct sandlock_policy *make(const struct spec *s)
{
	struct sandlock_policy *p = policy_new();

	if (p && sandlock_policy_set(p, "allow_degraded", "all", NULL) < 0)
		p = (policy_free(p), NULL);
	for (size_t i = 0; p && s->set[i]; i += 2) {
		char value[256];
		/* "@W" and "@S" stand for the writable directory and the denied path in it, "@K"
		 * for the workdir beside it. */
		snprintf(value, sizeof(value), "%s",
			 strcmp(s->set[i + 1], "@W") == 0   ? wdir
			 : strcmp(s->set[i + 1], "@S") == 0 ? secret
			 : strcmp(s->set[i + 1], "@K") == 0 ? workdir
							    : s->set[i + 1]);
		struct sandlock_error *e = NULL;
		if (sandlock_policy_set(p, s->set[i], value, &e) < 0) {
			diag("%s: %s = %s: %s", s->name, s->set[i], value, e ? e->message : "");
			p = (policy_free(p), NULL);
		}
		error_free(e);
	}
	return p;
}

static int same_prog(const struct sock_fprog *a, const struct sock_fprog *b)
{
	return a->len == b->len && a->filter && b->filter &&
	       memcmp(a->filter, b->filter, a->len * sizeof(*a->filter)) == 0;
}

static void check(const struct spec *s)
{
	struct sandlock_policy *p = make(s);
	struct trap from_policy[DISPATCH_MAX_TRAPS], from_plan[DISPATCH_MAX_TRAPS];
	struct plan_needs needs;
	struct sandlock_error *e = NULL;
	struct plan plan;

	if (!ok(p != NULL, "%s: the policy is set", s->name))
		return;
	size_t n_policy = dispatch_trap_set(p, from_policy, DISPATCH_MAX_TRAPS);
	plan_needs_of(p, &needs);
	int r = plan_build(p, (const char *const[]){ "true", NULL }, 0, &plan, &e);
	if (!ok(r == 0, "%s: plan_build", s->name)) {
		diag("  %d %s", r, e ? e->message : "");
		error_free(e);
		policy_free(p);
		return;
	}
	size_t n_plan = trap_set_of(&plan.needs, from_plan, DISPATCH_MAX_TRAPS);
	ok(memcmp(&needs, &plan.needs, sizeof(needs)) == 0,
	   "  the needs decided from the policy alone are the plan's");
	is_int(plan.needs.proc_served, s->proc_served, "  /proc served: %d", s->proc_served);
	is_int(plan.needs.write_mediated, s->write_mediated, "  writes mediated: %d",
	       s->write_mediated);
	is_int(plan.needs.proc_served, plan.proc.served, "  the same as plan.proc.served");
	is_int(plan.needs.write_mediated, plan.fs.write_roots != NULL,
	       "  the same as plan.fs.write_roots");
	ok(n_plan == n_policy &&
		   memcmp(from_plan, from_policy, n_plan * sizeof(from_plan[0])) == 0,
	   "  the same %zu traps (plan: %zu)", n_policy, n_plan);
	struct sock_fprog prog = { 0 };
	r = seccomp_program_build(p, !p->no_supervisor, from_policy, n_policy, &prog, NULL);
	ok(r == 0 && same_prog(&prog, &plan.prog), "  the same BPF program (%u instructions)",
	   plan.prog.len);
	seccomp_program_done(&prog);
	plan_done(&plan);
	policy_free(p);
}

static const struct spec specs[] = {
	{ "defaults", { NULL } },
	{ "no_supervisor", { "no_supervisor", "true", NULL } },
	{ "a workdir", { "workdir", "@K", NULL } },
	{ "a workdir with max_disk", { "workdir", "@K", "max_disk", "1M", NULL } },
	{ "a writable grant holding a denied path",
	  { "fs_writable", "@W", "fs_denied", "@S", NULL },
	  0,
	  1 },
	{ "a denied path outside the writable grant (control)",
	  { "fs_writable", "@W", "fs_denied", "/tmp/test-trap-needs-elsewhere", NULL } },
	{ "a /proc grant", { "fs_readable", "/proc", NULL }, 1, 0 },
	{ "a / grant (covers /proc)", { "fs_readable", "/", NULL }, 1, 0 },
	{ "port_remap", { "port_remap", "true", NULL } },
	{ "num_cpus", { "num_cpus", "1", NULL } },
	{ "max_memory", { "max_memory", "64M", NULL } },
	{ "max_processes", { "max_processes", "8", NULL } },
	{ "random_seed", { "random_seed", "7", NULL } },
	{ "time_start", { "time_start", "2000-01-01T00:00:00Z", NULL } },
	{ "deterministic_dirs", { "deterministic_dirs", "true", NULL } },
	{ "net rules",
	  { "net_allow", "tcp://127.0.0.1:80", "net_allow", "udp://127.0.0.1:53", "net_deny",
	    "10.0.0.0/8", NULL } },
	{ "a host rule", { "net_allow", "tcp://localhost:443", NULL } },
	{ "an HTTP rule to an IP", { "http_allow", "GET 127.0.0.1/*", NULL } },
	{ "an HTTP rule to a host", { "http_deny", "* localhost/admin", NULL } },
	{ "bind open to every port", { "net_allow_bind", "*", NULL } },
	{ "bind ports", { "net_allow_bind", "8080", "net_deny_bind", "22", NULL } },
	{ "a name", { "name", "test-trap-needs", NULL } },
	{ "all combined",
	  { "fs_readable", "/proc", "fs_writable", "@W", "fs_denied", "@S", "port_remap", "true",
	    "num_cpus", "1", "max_memory", "64M", "max_processes", "8", "random_seed", "7",
	    "time_start", "2000-01-01T00:00:00Z", "deterministic_dirs", "true", "net_allow",
	    "tcp://127.0.0.1:80", "net_allow_bind", "8080", "name", "test-trap-needs", "workdir",
	    "@K", "max_disk", "1M", NULL },
	  1,
	  1 },
};

int main(void)
{
	if (landlock_abi() < 0)
		skip_all("Landlock");
	if (!ok(tap_mkdtemp(dir, sizeof(dir), "test-trap-needs") != NULL, "a scratch directory"))
		return done_testing();
	snprintf(wdir, sizeof(wdir), "%s/w", dir);
	snprintf(secret, sizeof(secret), "%s/secret", wdir);
	snprintf(workdir, sizeof(workdir), "%s/wd", dir);
	ok(mkdir(wdir, 0755) == 0 && mkdir(workdir, 0755) == 0,
	   "a writable directory and a workdir in it");
	for (size_t i = 0; i < ELEMENTSOF(specs); i++)
		check(&specs[i]);
	rmdir(workdir);
	rmdir(wdir);
	rmdir(dir);
	return done_testing();
}
