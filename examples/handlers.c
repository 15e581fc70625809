/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers: an extension handler in the supervisor's chain. The command sees a file that exists
 * nowhere on disk (/sandlock/hello, bytes in a sealed memfd) and a getppid() of 1; every other
 * open goes on to the kernel, where Landlock decides it as usual.
 *
 *   handlers CMD [ARGS...]        e.g. handlers cat /sandlock/hello
 */
#include <stdio.h>
#include <string.h>

#include <sandlock.h>

static const char hello[] = "hello from a handler\n";

/* openat(dirfd, path, flags, mode): the path is read from the child's memory for a look only
 * (the child may change it after the read), so the answer for it is the injected file, never a
 * continue that would depend on it. */
static int on_openat(const sandlock_notif_t *n, sandlock_mem_t *mem, sandlock_action_t *action,
		     void *user_data)
{
	char path[256];

	(void)user_data;
	if (sandlock_mem_read_cstr(mem, n->args[1], path, sizeof(path)) >= 0 &&
	    strcmp(path, "/sandlock/hello") == 0)
		return sandlock_action_inject_bytes(action, hello, sizeof(hello) - 1, 0);
	return sandlock_action_continue(action);
}

static int on_getppid(const sandlock_notif_t *n, sandlock_mem_t *mem, sandlock_action_t *action,
		      void *user_data)
{
	(void)n, (void)mem, (void)user_data;
	return sandlock_action_return(action, 1);
}

int main(int argc, char **argv)
{
	static const char *const system_dirs[] = { "/usr", "/lib", "/lib64", "/bin", "/etc" };
	sandlock_policy_t *policy = NULL;
	sandlock_sandbox_t *sb = NULL;
	sandlock_error_t *err = NULL;

	if (argc < 2) {
		fprintf(stderr, "usage: handlers CMD [ARGS...]\n");
		return 2;
	}
	if (sandlock_policy_new(&policy) < 0)
		return 1;
	for (size_t i = 0; i < sizeof(system_dirs) / sizeof(system_dirs[0]); i++)
		sandlock_policy_add_fs_read(policy, system_dirs[i]);
	sandlock_handler_t *open_h =
		sandlock_handler_new(on_openat, NULL, NULL, SANDLOCK_EXCEPTION_DENY_EIO);
	sandlock_handler_t *ppid_h = sandlock_handler_new(on_getppid, NULL, NULL, 0);
	const sandlock_handler_reg_t regs[] = {
		{ .syscall = "openat", .handler = open_h },
		{ .syscall = "getppid", .handler = ppid_h },
	};
	int r = sandlock_run_with_handlers(policy, NULL, (const char *const *)argv + 1,
					   (size_t)argc - 1, regs, 2, &sb, &err);
	sandlock_handler_free(open_h);
	sandlock_handler_free(ppid_h);
	sandlock_policy_free(policy);
	if (r < 0) {
		fprintf(stderr, "handlers: %s\n", sandlock_error_message(err));
		sandlock_error_free(err);
		return 1;
	}
	int code = sandlock_sandbox_exit_kind(sb) == SANDLOCK_EXIT_CODE
			   ? sandlock_sandbox_exit_code(sb)
			   : 128 + sandlock_sandbox_exit_signal(sb);
	sandlock_sandbox_free(sb);
	return code;
}
