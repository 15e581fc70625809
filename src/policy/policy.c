/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy: the protection table, environment updates and the checks that need no kernel. The
 * exported setters are in api-policy.c.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "macro.h"
#include "policy.h"
#include "rules.h"
#include "schema.h"
#include "strv.h"

const struct protection_info protection_table[SANDLOCK_PROTECTION_COUNT] = {
	[SANDLOCK_PROTECTION_FS_REFER] = { "FsRefer", "fs-refer", 2 },
	[SANDLOCK_PROTECTION_FS_TRUNCATE] = { "FsTruncate", "fs-truncate", 3 },
	[SANDLOCK_PROTECTION_NET_TCP] = { "NetTcp", "net-tcp", 4 },
	[SANDLOCK_PROTECTION_FS_IOCTL_DEV] = { "FsIoctlDev", "fs-ioctl-dev", 5 },
	[SANDLOCK_PROTECTION_SIGNAL_SCOPE] = { "SignalScope", "signal-scope", 6 },
	[SANDLOCK_PROTECTION_ABSTRACT_UNIX_SOCKET_SCOPE] = { "AbstractUnixSocketScope",
							     "abstract-unix-socket-scope", 6 },
};

int policy_protection_from_name(const char *name)
{
	if (!name)
		return -EINVAL;
	for (uint32_t i = 0; i < SANDLOCK_PROTECTION_COUNT; i++)
		if (strcmp(name, protection_table[i].name) == 0 ||
		    strcmp(name, protection_table[i].cli_name) == 0)
			return (int)i;
	return -EINVAL;
}

struct sandlock_policy *policy_new(void)
{
	/* All zero is all defaults (on_exit/on_error store 0 for theirs). */
	return calloc(1, sizeof(struct sandlock_policy));
}

void policy_free(struct sandlock_policy *p)
{
	if (!p)
		return;
	schema_free_all(p);
	policy_labels_free(p);
	policy_fn_unref(p->policy_fn);
	free(p);
}

struct policy_fn_ref *policy_fn_ref(struct policy_fn_ref *r)
{
	if (r)
		atomic_fetch_add(&r->refs, 1);
	return r;
}

void policy_fn_unref(struct policy_fn_ref *r)
{
	if (!r || atomic_fetch_sub(&r->refs, 1) != 1)
		return;
	if (r->drop)
		r->drop(r->user_data);
	free(r);
}

int policy_set_env(struct sandlock_policy *p, const char *name, const char *value)
{
	return strv_env_set(&p->env, name, value);
}

int policy_set_command(struct sandlock_policy *p, const char *const *argv)
{
	_cleanup_free_ char *exec = argv && argv[0] ? strdup(argv[0]) : NULL;
	_cleanup_strv_free_ char **args = NULL;

	if (!exec)
		return -ENOMEM;
	for (size_t i = 1; argv[i]; i++)
		if (strv_extend(&args, argv[i]) < 0)
			return -ENOMEM;
	free(p->exec);
	p->exec = TAKE_PTR(exec);
	strv_free(p->args);
	p->args = TAKE_PTR(args);
	return 0;
}

int policy_check_name(const char *name, struct sandlock_error **reterr)
{
	size_t len = strlen(name);

	if (len == 0)
		return error_set(reterr, -EINVAL, "name: must not be empty");
	if (len > 64)
		return error_set(reterr, -EINVAL, "name: %zu bytes, at most 64 allowed", len);
	if (strchr(name, '/'))
		return error_set(reterr, -EINVAL, "name: must not contain '/'");
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return error_set(reterr, -EINVAL, "name: must not be \".\" or \"..\"");
	return 0;
}

/* Every strict protection this kernel lacks in one message: one run tells the user all of them,
 * and how to let them degrade, as the caller spells allow_degraded (the CLI: a flag taking a
 * comma list; else the field, a list of names). */
static int unavailable_error(const struct sandlock_policy *p,
			     const uint32_t status[SANDLOCK_PROTECTION_COUNT], int abi,
			     struct sandlock_error **reterr)
{
	const char *label = schema_label_of(p, "allow_degraded");
	int flag = strncmp(label, "--", 2) == 0;
	char names[256] = "", floors[64] = "", list[256] = "";
	size_t n = 0, on = 0, of = 0, ol = 0;

	for (uint32_t i = 0; i < SANDLOCK_PROTECTION_COUNT; i++) {
		const struct protection_info *info = &protection_table[i];
		if (status[i] != SANDLOCK_STATUS_UNAVAILABLE)
			continue;
		const char *sep = n++ ? ", " : "";
		on += (size_t)snprintf(names + on, sizeof(names) - on, "%s%s", sep, info->name);
		of += (size_t)snprintf(floors + of, sizeof(floors) - of, "%s%d", sep,
				       info->abi_floor);
		ol += (size_t)snprintf(list + ol, sizeof(list) - ol, flag ? "%s%s" : "%s\"%s\"",
				       n == 1 ? ""
				       : flag ? ","
					      : ", ",
				       info->cli_name);
	}
	/* A lowered ABI is the caller's test setting, never the kernel's: say so. */
	const char *by =
		secure_getenv("SANDLOCK_TEST_LANDLOCK_ABI") ? " (SANDLOCK_TEST_LANDLOCK_ABI)" : "";
	if (n == 1)
		return error_set(
			reterr, -EOPNOTSUPP,
			"protection %s needs Landlock ABI %s, this kernel has %d%s (allow it "
			"to degrade with %s%s%s%s)",
			names, floors, abi, by, label, flag ? " " : " = [", list, flag ? "" : "]");
	return error_set(reterr, -EOPNOTSUPP,
			 "protections %s need Landlock ABI %s, this kernel has %d%s (allow them to "
			 "degrade with %s%s%s%s)",
			 names, floors, abi, by, label, flag ? " " : " = [", list,
			 flag ? ", or all" : "] or [\"all\"]");
}

int policy_resolve_protections(const struct sandlock_policy *p, int abi,
			       uint32_t status[SANDLOCK_PROTECTION_COUNT],
			       struct sandlock_error **reterr)
{
	int missing = 0;

	for (uint32_t i = 0; i < SANDLOCK_PROTECTION_COUNT; i++) {
		const struct protection_info *info = &protection_table[i];

		if (p->protection[i] == SANDLOCK_PROTECTION_DISABLED)
			status[i] = SANDLOCK_STATUS_DISABLED;
		else if (abi >= info->abi_floor)
			status[i] = SANDLOCK_STATUS_ACTIVE;
		else if (p->protection[i] == SANDLOCK_PROTECTION_DEGRADED)
			status[i] = SANDLOCK_STATUS_DEGRADED;
		else {
			status[i] = SANDLOCK_STATUS_UNAVAILABLE;
			missing = 1;
		}
	}
	return missing ? unavailable_error(p, status, abi, reterr) : 0;
}

void policy_confine_extras(const struct sandlock_policy *p, char *buf, size_t size)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < schema_n_fields; i++) {
		const struct field *f = &schema_fields[i];
		/* What sandlock_confine applies: the Landlock grants (less the denied paths) and
		 * the protection modes. */
		if ((strcmp(f->section, "filesystem") == 0 &&
		     (strcmp(f->key, "read") == 0 || strcmp(f->key, "write") == 0 ||
		      strcmp(f->key, "deny") == 0)) ||
		    strcmp(f->section, "protections") == 0 || !schema_is_set(p, f))
			continue;
		int n = snprintf(buf + off, size - off, "%s%s", off ? ", " : "", f->name);
		if (n < 0 || (size_t)n >= size - off)
			return;
		off += (size_t)n;
	}
	/* Not a field of the schema, and nothing in place could call it. */
	if (p->policy_fn)
		snprintf(buf + off, size - off, "%spolicy_fn", off ? ", " : "");
}

int policy_bind_restricted(const struct sandlock_policy *p)
{
	if (p->net_deny_bind)
		return 1;
	for (size_t i = 0; p->net_allow_bind && p->net_allow_bind[i]; i++)
		if (strcmp(p->net_allow_bind[i], "*") == 0)
			return 0;
	return 1;
}

int policy_check_supervision(const struct sandlock_policy *p, struct sandlock_error **reterr)
{
	/* What the supervisor enforces, and why: refused without one, never run unenforced. */
	const struct {
		int asked;
		const char *field, *why;
	} needs[] = {
		{ policy_net_onbehalf(p), "net_allow",
		  " rules to hosts, IPs, CIDRs or restricted UDP/ICMP destinations, or "
		  "net_deny (connections and sends are made by the supervisor)" },
		{ policy_http_active(p), p->http_allow ? "http_allow" : "http_deny",
		  " rules (the HTTP proxy runs in the supervisor)" },
		{ p->port_remap, "port_remap", " (binds are made by the supervisor)" },
		{ p->max_memory.set, "max_memory", " (allocations are checked by the supervisor)" },
		{ p->max_processes.set, "max_processes",
		  " (the processes are counted by the supervisor)" },
		{ p->max_cpu.set && p->max_cpu.v < 100, "max_cpu",
		  " (a process that starts its own process group is found by the "
		  "supervisor)" },
		{ p->num_cpus.set, "num_cpus", " (the CPU count is shown by the supervisor)" },
		{ p->name != NULL, "name", " (the virtual hostname needs the supervisor)" },
		{ p->random_seed.set, "random_seed",
		  " (getrandom and /dev/urandom are answered by the supervisor)" },
		{ p->time_start != NULL, "time_start",
		  " (the wall clock is answered by the supervisor)" },
		{ p->deterministic_dirs, "deterministic_dirs",
		  " (directory listings are sorted by the supervisor)" },
		{ p->policy_fn != NULL, "policy_fn", " (its callback runs in the supervisor)" },
		{ p->workdir != NULL, "workdir",
		  " (its copy-on-write branch is made by the supervisor)" },
	};

	for (size_t i = 0; p->no_supervisor && i < ELEMENTSOF(needs); i++)
		if (needs[i].asked)
			return error_set(reterr, -EINVAL, "no_supervisor: cannot enforce %s%s",
					 schema_label_of(p, needs[i].field), needs[i].why);
	return 0;
}
