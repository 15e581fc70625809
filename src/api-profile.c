/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * api-profile: the exported profile functions (policy/profiles.c does the work).
 */
#include <errno.h>
#include <stdlib.h>

#include "error.h"
#include "macro.h"
#include "policy/profiles.h"
#include "sandlock.h"

_public_ int sandlock_profile_dir(char **ret_dir, sandlock_error_t **reterr)
{
	return profiles_dir(ret_dir, reterr);
}

_public_ int sandlock_profile_path(const char *name, char **ret_path, sandlock_error_t **reterr)
{
	return profiles_path(name, ret_path, reterr);
}

_public_ int sandlock_profile_list(char ***ret_names, sandlock_error_t **reterr)
{
	return profiles_list(ret_names, reterr);
}

_public_ int sandlock_policy_load_profile(const char *name, sandlock_policy_t **ret_policy,
					  sandlock_error_t **reterr)
{
	char *path = NULL;

	if (!ret_policy)
		return error_set(reterr, -EINVAL, "sandlock_policy_load_profile: NULL argument");
	int r = profiles_path(name, &path, reterr);
	if (r < 0)
		return r;
	r = sandlock_policy_load_toml_file(path, ret_policy, reterr);
	free(path);
	return r;
}
