/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * api-policy-fn: the exported policy_fn setters, and the context a policy_fn may change
 * (supervisor/policy-fn.c enforces it). Nothing else is exported from here.
 */
#include <errno.h>
#include <stdlib.h>

#include "macro.h"
#include "policy/policy.h"
#include "supervisor/policy-fn.h"

_public_ int sandlock_policy_set_policy_fn(sandlock_policy_t *policy, sandlock_policy_fn fn,
					   void *user_data, void (*drop)(void *user_data))
{
	struct policy_fn_ref *r = NULL;

	if (!policy)
		return -EINVAL;
	if (fn) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return -ENOMEM;
		*r = (struct policy_fn_ref){
			.refs = 1, .fn = fn, .user_data = user_data, .drop = drop
		};
	}
	policy_fn_unref(policy->policy_fn);
	policy->policy_fn = r;
	return 0;
}

_public_ int sandlock_policy_set_policy_fn_timeout(sandlock_policy_t *policy, uint32_t timeout_ms)
{
	if (!policy || timeout_ms == 0 || timeout_ms > POLICY_FN_TIMEOUT_MAX_MS)
		return -EINVAL;
	policy->policy_fn_timeout_ms = timeout_ms;
	return 0;
}

_public_ int sandlock_policy_ctx_restrict_network(sandlock_policy_ctx_t *ctx,
						  const char *const *ips, size_t n)
{
	return policy_fn_ctx_network(ctx, POLICY_NET_RESTRICT, 0, ips, n);
}

_public_ int sandlock_policy_ctx_grant_network(sandlock_policy_ctx_t *ctx, const char *const *ips,
					       size_t n)
{
	return policy_fn_ctx_network(ctx, POLICY_NET_GRANT, 0, ips, n);
}

_public_ int sandlock_policy_ctx_restrict_pid_network(sandlock_policy_ctx_t *ctx, int32_t pid,
						      const char *const *ips, size_t n)
{
	if (pid <= 0)
		return -EINVAL;
	return policy_fn_ctx_network(ctx, POLICY_NET_PID, pid, ips, n);
}

_public_ int sandlock_policy_ctx_restrict_max_memory(sandlock_policy_ctx_t *ctx, uint64_t bytes)
{
	return policy_fn_ctx_limit(ctx, 0, bytes);
}

_public_ int sandlock_policy_ctx_restrict_max_processes(sandlock_policy_ctx_t *ctx, uint32_t n)
{
	return policy_fn_ctx_limit(ctx, 1, n);
}

_public_ int sandlock_policy_ctx_deny_path(sandlock_policy_ctx_t *ctx, const char *path)
{
	return policy_fn_ctx_path(ctx, 1, path);
}

_public_ int sandlock_policy_ctx_allow_path(sandlock_policy_ctx_t *ctx, const char *path)
{
	return policy_fn_ctx_path(ctx, 0, path);
}
