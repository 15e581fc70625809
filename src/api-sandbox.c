/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * api-sandbox: the exported spawn and sandbox functions. Each validates its arguments, calls
 * sandbox/ and returns a documented errno.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

#include "error.h"
#include "macro.h"
#include "policy/schema.h"
#include "sandbox/sandbox.h"

/* Whether the caller's struct (of @size bytes) has @field. */
#define HAS(size, field)                                                                           \
	((size) >=                                                                                 \
	 offsetof(sandlock_spawn_opts_t, field) + sizeof(((sandlock_spawn_opts_t *)0)->field))

static int events_check(const sandlock_spawn_opts_t *opts, sandlock_error_t **reterr)
{
	const uint32_t known = SANDLOCK_EVENTS_DENIALS | SANDLOCK_EVENTS_ALLOWED;

	if (HAS(opts->size, reserved3) && opts->reserved3 != 0)
		return error_set(reterr, -EINVAL, "sandlock_spawn: opts->reserved3 must be 0");
	if (!HAS(opts->size, events))
		return 0;
	if (opts->events & ~known)
		return error_set(reterr, -EINVAL,
				 "sandlock_spawn: opts->events %#x: unknown flags %#x (known: "
				 "SANDLOCK_EVENTS_DENIALS, SANDLOCK_EVENTS_ALLOWED)",
				 opts->events, opts->events & ~known);
	/* The allowed decisions go to the callback only: without one they would be dropped. */
	if ((opts->events & SANDLOCK_EVENTS_ALLOWED) &&
	    !(HAS(opts->size, on_event) && opts->on_event))
		return error_set(reterr, -EINVAL,
				 "sandlock_spawn: SANDLOCK_EVENTS_ALLOWED needs opts->on_event");
	return 0;
}

static int opts_check(const sandlock_spawn_opts_t *opts, sandlock_error_t **reterr)
{
	if (opts->size < sizeof(uint64_t) + 4 * sizeof(uint32_t))
		return error_set(reterr, -EINVAL, "sandlock_spawn: opts->size too small");
	/* A flag this library does not know is an option it would drop, as below. */
	const uint32_t known =
		SANDLOCK_SPAWN_INTERACTIVE | SANDLOCK_SPAWN_PARKED | SANDLOCK_SPAWN_FDS_FROM_3;
	if (opts->flags & ~known)
		return error_set(reterr, -E2BIG,
				 "sandlock_spawn: flags %#x unknown to this library",
				 opts->flags & ~known);
	/* A newer caller's options this library does not know must be zero: never drop an
	 * option silently. */
	for (uint64_t i = sizeof(*opts); i < opts->size; i++)
		if (((const uint8_t *)opts)[i] != 0)
			return error_set(reterr, -E2BIG,
					 "sandlock_spawn: option at offset %llu unknown to this "
					 "library",
					 (unsigned long long)i);
	/* Each reserved word is checked when the caller's struct has it. */
	if ((HAS(opts->size, reserved) && opts->reserved != 0) ||
	    (HAS(opts->size, reserved2) && opts->reserved2 != 0))
		return error_set(reterr, -EINVAL, "sandlock_spawn: opts->reserved must be 0");
	if (HAS(opts->size, reserved4) && opts->reserved4 != 0)
		return error_set(reterr, -EINVAL, "sandlock_spawn: opts->reserved4 must be 0");
	if (HAS(opts->size, n_handlers) && opts->n_handlers && !opts->handlers)
		return error_set(reterr, -EINVAL,
				 "sandlock_spawn: opts->n_handlers is %u and opts->handlers NULL",
				 opts->n_handlers);
	return events_check(opts, reterr);
}

_public_ int sandlock_spawn(const sandlock_policy_t *policy, const char *const *argv,
			    const sandlock_spawn_opts_t *opts, sandlock_sandbox_t **ret_sandbox,
			    sandlock_error_t **reterr)
{
	if (!policy || !argv || !ret_sandbox)
		return error_set(reterr, -EINVAL, "sandlock_spawn: NULL argument");
	int r = opts ? opts_check(opts, reterr) : 0;
	if (r < 0)
		return r;
	r = sandbox_spawn(policy, argv, opts, ret_sandbox, reterr);
	error_relabel(reterr, policy);
	return r;
}

_public_ int sandlock_sandbox_start(sandlock_sandbox_t *sb, sandlock_error_t **reterr)
{
	if (!sb)
		return error_set(reterr, -EINVAL, "sandlock_sandbox_start: NULL sandbox");
	return sandbox_start(sb, reterr);
}

_public_ int sandlock_sandbox_wait(sandlock_sandbox_t *sb, int64_t timeout_ms)
{
	return sb ? sandbox_wait(sb, timeout_ms) : -EINVAL;
}

_public_ int sandlock_sandbox_done_fd(const sandlock_sandbox_t *sb)
{
	return sb ? sb->done_efd : -EINVAL;
}

_public_ int sandlock_sandbox_signal(sandlock_sandbox_t *sb, int32_t signo)
{
	if (!sb || signo <= 0 || signo >= _NSIG)
		return -EINVAL;
	int r = sandbox_signal(sb, signo);
	return r == -ESRCH || r == -EINVAL ? r : r < 0 ? -ESRCH : 0;
}

_public_ int sandlock_sandbox_kill(sandlock_sandbox_t *sb)
{
	return sandlock_sandbox_signal(sb, SIGKILL);
}

_public_ int sandlock_sandbox_pause(sandlock_sandbox_t *sb)
{
	return sandlock_sandbox_signal(sb, SIGSTOP);
}

_public_ int sandlock_sandbox_resume(sandlock_sandbox_t *sb)
{
	return sandlock_sandbox_signal(sb, SIGCONT);
}

_public_ int32_t sandlock_sandbox_pid(const sandlock_sandbox_t *sb)
{
	return sb ? sb->pid : -EINVAL;
}

_public_ const char *sandlock_sandbox_name(const sandlock_sandbox_t *sb)
{
	return sb ? sb->name : NULL;
}

_public_ int sandlock_sandbox_ports(const sandlock_sandbox_t *sb, uint16_t *ret_virtual,
				    uint16_t *ret_real, size_t n)
{
	if (!sb || (n && (!ret_virtual || !ret_real)))
		return -EINVAL;
	if (!sb->sv.prepared)
		return 0;
	n = MIN(n, (size_t)65536); /* there are no more ports */
	_cleanup_free_ struct port_pair *pairs = n ? calloc(n, sizeof(*pairs)) : NULL;
	if (n && !pairs)
		return -ENOMEM;
	/* Only the map's lock is taken: the sandbox itself is not changed. */
	size_t total = port_map_copy((struct port_map *)&sb->sv.ports, pairs, n, 1);
	for (size_t i = 0; i < MIN(n, total); i++) {
		ret_virtual[i] = pairs[i].virt;
		ret_real[i] = pairs[i].real;
	}
	return (int)total;
}

_public_ int sandlock_sandbox_stdin_fd(const sandlock_sandbox_t *sb)
{
	return sb && sb->stdin_w >= 0 ? sb->stdin_w : -EBADF;
}

_public_ int sandlock_sandbox_close_stdin(sandlock_sandbox_t *sb)
{
	if (!sb || sb->stdin_w < 0)
		return -EBADF;
	int fd = sb->stdin_w;
	sb->stdin_w = -1;
	close(fd);
	return 0;
}

/* The outcome is published by the sandbox thread with a release store of ended. */
static int ended(const struct sandlock_sandbox *sb)
{
	return sb && __atomic_load_n(&sb->ended, __ATOMIC_ACQUIRE);
}

_public_ uint32_t sandlock_sandbox_exit_kind(const sandlock_sandbox_t *sb)
{
	return ended(sb) ? sb->exit_kind : SANDLOCK_EXIT_RUNNING;
}

_public_ int32_t sandlock_sandbox_exit_code(const sandlock_sandbox_t *sb)
{
	return ended(sb) && sb->exit_kind == SANDLOCK_EXIT_CODE ? sb->exit_code : -1;
}

_public_ uint32_t sandlock_sandbox_exit_cause(const sandlock_sandbox_t *sb)
{
	return ended(sb) ? sb->exit_cause : SANDLOCK_CAUSE_NONE;
}

_public_ const char *sandlock_sandbox_notices(const sandlock_sandbox_t *sb)
{
	return ended(sb) && sb->notices ? sb->notices : "";
}

_public_ int32_t sandlock_sandbox_exit_signal(const sandlock_sandbox_t *sb)
{
	if (!ended(sb))
		return 0;
	return sb->exit_kind == SANDLOCK_EXIT_SIGNAL || sb->exit_kind == SANDLOCK_EXIT_TIMEOUT
		       ? sb->exit_signal
		       : 0;
}

static const uint8_t *buffer_get(const struct sandlock_sandbox *sb, const struct buffer *b,
				 size_t *ret_len)
{
	size_t len = ended(sb) ? b->len : 0;

	if (ret_len)
		*ret_len = len;
	return len ? b->data : NULL;
}

_public_ const uint8_t *sandlock_sandbox_stdout(const sandlock_sandbox_t *sb, size_t *ret_len)
{
	if (!sb) {
		if (ret_len)
			*ret_len = 0;
		return NULL;
	}
	return buffer_get(sb, &sb->out, ret_len);
}

_public_ const uint8_t *sandlock_sandbox_stderr(const sandlock_sandbox_t *sb, size_t *ret_len)
{
	if (!sb) {
		if (ret_len)
			*ret_len = 0;
		return NULL;
	}
	return buffer_get(sb, &sb->err, ret_len);
}

_public_ void sandlock_sandbox_free(sandlock_sandbox_t *sb)
{
	sandbox_free(sb);
}

_public_ int sandlock_running(char ***ret_names, sandlock_error_t **reterr)
{
	if (!ret_names)
		return error_set(reterr, -EINVAL, "invalid argument");
	return control_running(ret_names, reterr);
}

_public_ int sandlock_control(const char *name, const char *request, int32_t timeout_ms,
			      char **ret_answer, sandlock_error_t **reterr)
{
	if (!name || !request || !ret_answer || timeout_ms < 0)
		return error_set(reterr, -EINVAL, "invalid argument");
	return control_request(name, request, timeout_ms, ret_answer, reterr);
}

/* ---- the workdir's branch ---------------------------------------------------------------- */

_public_ int sandlock_sandbox_branch_action(const sandlock_sandbox_t *sb)
{
	if (!sb || !sb->cow)
		return -ENOENT;
	if (!ended(sb) || sb->branch_action < 0)
		return -EBUSY;
	return sb->branch_action;
}

_public_ const sandlock_error_t *sandlock_sandbox_branch_error(const sandlock_sandbox_t *sb)
{
	return ended(sb) ? sb->branch_err : NULL;
}

_public_ size_t sandlock_sandbox_change_count(const sandlock_sandbox_t *sb)
{
	return ended(sb) ? sb->n_changes : 0;
}

static void entry_out(const struct cow_entry *e, sandlock_entry_t *out)
{
	static const uint32_t kinds[] = { SANDLOCK_ENTRY_FILE, SANDLOCK_ENTRY_DIR,
					  SANDLOCK_ENTRY_SYMLINK, SANDLOCK_ENTRY_OTHER };
	if (!out)
		return;
	memset(out, 0, sizeof(*out));
	if (!e->present)
		return;
	out->kind = kinds[e->kind];
	out->mode = e->mode;
	out->size = e->size;
	out->has_digest = (uint32_t)e->has_digest;
	memcpy(out->digest, e->digest, sizeof(out->digest));
	out->target = e->target;
}

_public_ int sandlock_sandbox_change(const sandlock_sandbox_t *sb, size_t i, const char **ret_path,
				     sandlock_entry_t *ret_before, sandlock_entry_t *ret_after)
{
	if (!ended(sb) || i >= sb->n_changes)
		return -ERANGE;
	if (ret_path)
		*ret_path = sb->changes[i].path;
	entry_out(&sb->changes[i].before, ret_before);
	entry_out(&sb->changes[i].after, ret_after);
	return 0;
}

_public_ int sandlock_sandbox_pending(const sandlock_sandbox_t *sb)
{
	return ended(sb) && sb->pending;
}

_public_ const char *sandlock_sandbox_upper_dir(const sandlock_sandbox_t *sb)
{
	if (!ended(sb) || !sb->cow)
		return NULL;
	return sb->pending || sb->branch_action == SANDLOCK_BRANCH_KEEP ? sb->cow->upper : NULL;
}

_public_ int sandlock_sandbox_commit(sandlock_sandbox_t *sb, sandlock_error_t **reterr)
{
	if (!ended(sb))
		return error_set(reterr, -EBUSY, "commit: the sandbox has not ended");
	return sandbox_branch_commit(sb, reterr);
}

_public_ int sandlock_sandbox_abort(sandlock_sandbox_t *sb, sandlock_error_t **reterr)
{
	if (!ended(sb))
		return error_set(reterr, -EBUSY, "abort: the sandbox has not ended");
	return sandbox_branch_abort(sb, reterr);
}
