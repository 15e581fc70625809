/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * api-handlers: the exported functions of extension handlers: the handler object, the memory
 * handle and the actions a handler's call sets, and the run functions. The chain that calls
 * them is supervisor/user-handlers.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "error.h"
#include "fd-util.h"
#include "macro.h"
#include "policy/policy.h"
#include "supervisor/groups.h"
#include "supervisor/notif.h"
#include "supervisor/supervisor.h"
#include "supervisor/user-handlers.h"

/* ---- the handler ------------------------------------------------------------------------- */

_public_ sandlock_handler_t *sandlock_handler_new(sandlock_handler_fn fn, void *user_data,
						  void (*user_data_drop)(void *),
						  uint32_t on_exception)
{
	if (!fn || on_exception > SANDLOCK_EXCEPTION_DENY_EIO) {
		errno = EINVAL;
		return NULL;
	}
	struct sandlock_handler *h = calloc(1, sizeof(*h));
	if (!h) {
		errno = ENOMEM;
		return NULL;
	}
	atomic_init(&h->refs, 1);
	h->fn = fn;
	h->user_data = user_data;
	h->user_data_drop = user_data_drop;
	h->on_exception = on_exception;
	return h;
}

_public_ int sandlock_handler_set_deferred(sandlock_handler_t *h, int deferred)
{
	if (!h || (deferred != 0 && deferred != 1))
		return -EINVAL;
	h->deferred = deferred;
	return 0;
}

_public_ void sandlock_handler_free(sandlock_handler_t *h)
{
	handler_unref(h);
}

/* ---- the memory handle ------------------------------------------------------------------- */

static int64_t mem_result(int r, size_t len)
{
	if (r == NOTIF_GONE)
		return -ESRCH;
	return r < 0 ? r : (int64_t)len;
}

_public_ int64_t sandlock_mem_read(sandlock_mem_t *mem, uint64_t addr, void *buf, size_t len)
{
	if (!mem || (!buf && len))
		return -EINVAL;
	if (!mem->valid)
		return -EBADF;
	if (len == 0)
		return 0;
	return mem_result(notif_mem_read(mem->listener, mem->req, addr, buf, len), len);
}

_public_ int64_t sandlock_mem_read_cstr(sandlock_mem_t *mem, uint64_t addr, char *buf, size_t size)
{
	size_t off = 0;

	if (!mem || !buf || size == 0)
		return -EINVAL;
	if (!mem->valid)
		return -EBADF;
	/* Page by page: the string may end just before an unmapped page. */
	while (off < size) {
		size_t chunk = MIN(size - off, 4096 - ((addr + off) & 4095));
		int r = notif_mem_read(mem->listener, mem->req, addr + off, buf + off, chunk);
		if (r < 0)
			return mem_result(r, 0);
		char *nul = memchr(buf + off, '\0', chunk);
		if (nul)
			return nul - buf;
		off += chunk;
	}
	buf[size - 1] = '\0';
	return -ENAMETOOLONG;
}

_public_ int64_t sandlock_mem_write(sandlock_mem_t *mem, uint64_t addr, const void *buf, size_t len)
{
	if (!mem || (!buf && len))
		return -EINVAL;
	if (!mem->valid)
		return -EBADF;
	if (len == 0)
		return 0;
	return mem_result(notif_mem_write(mem->listener, mem->req, addr, buf, len), len);
}

/* ---- the actions ------------------------------------------------------------------------- */

/* Whether an action may be set on @a now; a second one marks the call an exception. */
static int action_free_slot(sandlock_action_t *a)
{
	if (!a)
		return -EINVAL;
	if (!a->valid)
		return -EBADF;
	if (a->kind != USER_ACTION_NONE || a->twice) {
		a->twice = 1;
		return -EALREADY;
	}
	return 0;
}

static int action_set(sandlock_action_t *a, enum user_action_kind kind, int64_t value)
{
	int r = action_free_slot(a);
	if (r < 0)
		return r;
	a->kind = kind;
	a->value = value;
	return 0;
}

_public_ int sandlock_action_continue(sandlock_action_t *a)
{
	return action_set(a, USER_ACTION_CONTINUE, 0);
}

_public_ int sandlock_action_errno(sandlock_action_t *a, int32_t err)
{
	if (err <= 0 || err > 4095)
		return a && !a->valid ? -EBADF : -EINVAL;
	return action_set(a, USER_ACTION_ERRNO, err);
}

_public_ int sandlock_action_return(sandlock_action_t *a, int64_t value)
{
	return action_set(a, USER_ACTION_RETURN, value);
}

_public_ int sandlock_action_hold(sandlock_action_t *a)
{
	return action_set(a, USER_ACTION_HOLD, 0);
}

_public_ int sandlock_action_kill(sandlock_action_t *a, int32_t sig, int32_t pgid)
{
	int r = action_free_slot(a);
	if (r < 0)
		return r;
	if (sig <= 0 || sig >= _NSIG || pgid < 0)
		return -EINVAL;
	/* Only a group of the sandbox's own: never a process outside it. */
	if (pgid && !(a->sv && a->sv->groups && groups_owns(a->sv->groups, pgid)))
		return -EPERM;
	a->kind = USER_ACTION_KILL;
	a->value = sig;
	a->pgid = pgid;
	return 0;
}

static int action_inject(sandlock_action_t *a, int fd, int cloexec)
{
	a->kind = USER_ACTION_INJECT;
	a->fd = fd;
	a->cloexec = cloexec;
	return 0;
}

_public_ int sandlock_action_inject_fd(sandlock_action_t *a, int32_t srcfd, uint32_t newfd_flags)
{
	int r = action_free_slot(a);
	if (r < 0)
		return r;
	if (srcfd < 0 || (newfd_flags & ~(uint32_t)O_CLOEXEC))
		return -EINVAL;
	/* Borrowed: a copy of ours goes to the child, the caller keeps its own. */
	int fd = fcntl(srcfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	return action_inject(a, fd, !!(newfd_flags & O_CLOEXEC));
}

_public_ int sandlock_action_inject_bytes(sandlock_action_t *a, const void *data, size_t len,
					  uint32_t flags)
{
	const uint32_t known = SANDLOCK_INJECT_WRITABLE | SANDLOCK_INJECT_NO_CLOEXEC;
	int r = action_free_slot(a);
	if (r < 0)
		return r;
	if ((flags & ~known) || (!data && len))
		return -EINVAL;
	_cleanup_close_ int fd = memfd_create("sandlock-handler", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	/* pwrite: the offset stays 0, and the child shares it (one open file description). */
	for (size_t off = 0; off < len;) {
		ssize_t n = pwrite(fd, (const char *)data + off, len - off, (off_t)off);
		if (n < 0)
			return errno == EINTR ? -EINTR : -ENOMEM;
		off += (size_t)n;
	}
	/* Sealed: the bytes are what the handler gave, whoever holds the descriptor. */
	const int seals = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
	if (!(flags & SANDLOCK_INJECT_WRITABLE) && fcntl(fd, F_ADD_SEALS, seals) < 0)
		return -errno;
	return action_inject(a, TAKE_FD(fd), !(flags & SANDLOCK_INJECT_NO_CLOEXEC));
}

/* ---- running ----------------------------------------------------------------------------- */

static int run_handlers(const sandlock_policy_t *policy, const char *name, const char *const *argv,
			size_t argc, const sandlock_handler_reg_t *regs, size_t n, uint32_t flags,
			sandlock_sandbox_t **ret_sandbox, sandlock_error_t **reterr)
{
	if (!policy || !argv || argc == 0 || !ret_sandbox || (n && !regs) || n > UINT32_MAX)
		return error_set(reterr, -EINVAL, "sandlock_run_with_handlers: bad argument");
	_cleanup_free_ const char **v = calloc(argc + 1, sizeof(*v));
	if (!v)
		return error_set(reterr, -ENOMEM, "out of memory");
	for (size_t i = 0; i < argc; i++)
		if (!(v[i] = argv[i]))
			return error_set(reterr, -EINVAL,
					 "sandlock_run_with_handlers: argv[%zu] "
					 "is NULL",
					 i);
	struct sandlock_policy *named = NULL;
	if (name) {
		named = policy_copy(policy);
		if (!named)
			return error_set(reterr, -ENOMEM, "out of memory");
		int r = sandlock_policy_set_name(named, name, reterr);
		if (r < 0) {
			policy_free(named);
			return r;
		}
	}
	sandlock_spawn_opts_t opts = {
		.size = sizeof(opts), .flags = flags, .handlers = regs, .n_handlers = (uint32_t)n
	};
	sandlock_sandbox_t *sb = NULL;
	int r = sandlock_spawn(named ? named : policy, v, &opts, &sb, reterr);
	policy_free(named);
	if (r < 0)
		return r;
	(void)sandlock_sandbox_wait(sb, -1);
	*ret_sandbox = sb;
	return 0;
}

_public_ int sandlock_run_with_handlers(const sandlock_policy_t *policy, const char *name,
					const char *const *argv, size_t argc,
					const sandlock_handler_reg_t *regs, size_t n,
					sandlock_sandbox_t **ret_sandbox, sandlock_error_t **reterr)
{
	return run_handlers(policy, name, argv, argc, regs, n, 0, ret_sandbox, reterr);
}

_public_ int sandlock_run_interactive_with_handlers(const sandlock_policy_t *policy,
						    const char *name, const char *const *argv,
						    size_t argc, const sandlock_handler_reg_t *regs,
						    size_t n, sandlock_sandbox_t **ret_sandbox,
						    sandlock_error_t **reterr)
{
	return run_handlers(policy, name, argv, argc, regs, n, SANDLOCK_SPAWN_INTERACTIVE,
			    ret_sandbox, reterr);
}
