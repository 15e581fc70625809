/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy: the policy object behind sandlock_policy_t. Pure data: setters copy their input and
 * validate what can be validated without the kernel; nothing here makes a syscall. plan/ turns
 * a policy into kernel objects.
 */
#pragma once

#include <sched.h>
#include <stdint.h>

#include "sandlock.h"

struct sandlock_policy {
	char **fs_read; /* paths, as given */
	char **fs_write;
	char **env; /* "NAME=VALUE", one entry per name, in the order first set */
	int clean_env;
	char *cwd;
	uint64_t max_open_files; /* 0: unset */
	int no_coredump;
	int no_huge_pages;
	int no_randomize_memory;
	int has_cpu_cores;
	cpu_set_t cpu_cores;
	char *name; /* NULL: "sandbox-<pid>" */
	int no_supervisor;
	char **extra_deny;
	char **extra_allow;
	uint8_t protection[SANDLOCK_PROTECTION_COUNT]; /* SANDLOCK_PROTECTION_STRICT... */
};

struct protection_info {
	const char *name;     /* "FsRefer" */
	const char *cli_name; /* "fs-refer" */
	int abi_floor;
};

extern const struct protection_info protection_table[SANDLOCK_PROTECTION_COUNT];

/* Resolve each protection's status for @abi. Fails with -EOPNOTSUPP and a message naming the
 * first strict protection this kernel lacks (and its floor). */
int policy_resolve_protections(const struct sandlock_policy *p, int abi,
			       uint32_t status[SANDLOCK_PROTECTION_COUNT],
			       struct sandlock_error **reterr);

/* Set NAME=VALUE, replacing an earlier value of NAME. The caller checked NAME. -ENOMEM. */
int policy_set_env(struct sandlock_policy *p, const char *name, const char *value);

/* Valid sandbox name: 1..64 bytes, no '/', not "." or "..". Returns 0 or -EINVAL with a message. */
int policy_check_name(const char *name, struct sandlock_error **reterr);

/* Refuse, naming them, the fields only the supervisor can enforce when @p has no_supervisor.
 * -EINVAL. */
int policy_check_supervision(const struct sandlock_policy *p, struct sandlock_error **reterr);

/* The fields a policy for sandlock_confine() may not set, as a comma-separated list of field
 * names written to @buf; empty when the policy only holds filesystem grants and protections. */
void policy_confine_extras(const struct sandlock_policy *p, char *buf, size_t size);
