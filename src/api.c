/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * api: exported error accessors, version and kernel queries, policy check and confine.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "error.h"
#include "macro.h"
#include "plan/landlock.h"
#include "plan/plan.h"
#include "plan/seccomp.h"
#include "policy/policy.h"
#include "policy/schema.h"
#include "syscall-util.h"

#define STR_(x) #x
#define STR(x) STR_(x)

_public_ int sandlock_error_code(const sandlock_error_t *err)
{
	return err ? err->code : 0;
}

_public_ const char *sandlock_error_message(const sandlock_error_t *err)
{
	return err ? err->message : NULL;
}

_public_ const char *sandlock_error_step(const sandlock_error_t *err)
{
	return err ? err->step : NULL;
}

_public_ void sandlock_error_free(sandlock_error_t *err)
{
	error_free(err);
}

_public_ const char *sandlock_version(void)
{
	return STR(SANDLOCK_VERSION_MAJOR) "." STR(SANDLOCK_VERSION_MINOR) "." STR(
		SANDLOCK_VERSION_MICRO);
}

_public_ int sandlock_landlock_abi_version(void)
{
	return landlock_abi();
}

_public_ int sandlock_min_landlock_abi(void)
{
	int floor = 1;

	for (uint32_t i = 0; i < SANDLOCK_PROTECTION_COUNT; i++)
		floor = MAX(floor, protection_table[i].abi_floor);
	return floor;
}

_public_ int sandlock_policy_protection_status(const sandlock_policy_t *p, uint32_t protection)
{
	uint32_t status[SANDLOCK_PROTECTION_COUNT];

	if (!p || protection >= SANDLOCK_PROTECTION_COUNT)
		return -EINVAL;
	(void)policy_resolve_protections(p, MAX(landlock_abi(), 0), status, NULL);
	return (int)status[protection];
}

static int check_common(const sandlock_policy_t *p, int no_net, sandlock_error_t **reterr)
{
	uint32_t status[SANDLOCK_PROTECTION_COUNT];
	int abi = landlock_abi();

	if (abi < 0)
		return error_set(reterr, -EOPNOTSUPP, "Landlock is not available on this kernel");
	int r = policy_resolve_protections(p, abi, status, reterr);
	if (r < 0)
		return r;
	return landlock_ruleset_build(p, abi, status, no_net, NULL, NULL, NULL, reterr);
}

static int policy_check(const sandlock_policy_t *p, sandlock_error_t **reterr)
{
	if (!p)
		return error_set(reterr, -EINVAL, "NULL policy");
	uint32_t status[SANDLOCK_PROTECTION_COUNT];
	/* A protection this kernel lacks is reported by check_common() below. */
	(void)policy_resolve_protections(p, MAX(landlock_abi(), 0), status, NULL);
	int r = seccomp_check_names(p, reterr);
	if (r == 0)
		r = plan_check(p, status, reterr);
	if (r < 0)
		return r;
	int fd = check_common(p, 0, reterr);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

_public_ int sandlock_policy_check(const sandlock_policy_t *p, sandlock_error_t **reterr)
{
	int r = policy_check(p, reterr);
	error_relabel(reterr, p);
	return r;
}

_public_ int sandlock_confine(const sandlock_policy_t *p, sandlock_error_t **reterr)
{
	char extras[1024];

	if (!p)
		return error_set(reterr, -EINVAL, "NULL policy");
	policy_confine_extras(p, extras, sizeof(extras));
	if (extras[0])
		return error_set(reterr, -EINVAL,
				 "confine applies filesystem rules only; also set: %s", extras);
	int fd = check_common(p, 1, reterr);
	if (fd < 0)
		return fd;
	int r = 0;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || sys_landlock_restrict_self(fd, 0) < 0)
		r = error_set(reterr, negative_errno(), "confine: %s", strerror(errno));
	close(fd);
	return r;
}
