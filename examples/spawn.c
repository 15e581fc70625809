/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * spawn: the smallest complete use of libsandlock. Runs a command with read access to the system
 * directories only, captures its output, and reports how it ended.
 *
 *   spawn [--write DIR] CMD [ARGS...]
 */
#include <stdio.h>
#include <string.h>

#include <sandlock.h>

int main(int argc, char **argv)
{
	static const char *const system_dirs[] = { "/usr", "/lib", "/lib64", "/bin", "/etc" };
	sandlock_policy_t *policy = NULL;
	sandlock_sandbox_t *sb = NULL;
	sandlock_error_t *err = NULL;
	int first = 1;

	if (sandlock_policy_new(&policy) < 0)
		return 1;
	for (size_t i = 0; i < sizeof(system_dirs) / sizeof(system_dirs[0]); i++)
		sandlock_policy_add_fs_read(policy, system_dirs[i]);
	if (argc > 2 && strcmp(argv[1], "--write") == 0) {
		sandlock_policy_add_fs_write(policy, argv[2]);
		first = 3;
	}
	if (first >= argc) {
		fprintf(stderr, "usage: spawn [--write DIR] CMD [ARGS...]\n");
		sandlock_policy_free(policy);
		return 2;
	}

	sandlock_spawn_opts_t opts = {
		.size = sizeof(opts),
		.stdout_mode = SANDLOCK_STDIO_PIPE,
		.stderr_mode = SANDLOCK_STDIO_PIPE,
		.timeout_ms = 10000,
	};
	int r = sandlock_spawn(policy, (const char *const *)argv + first, &opts, &sb, &err);
	if (r < 0) {
		fprintf(stderr, "spawn failed (%d): %s\n", r, sandlock_error_message(err));
		sandlock_error_free(err);
		sandlock_policy_free(policy);
		return 127;
	}
	sandlock_sandbox_wait(sb, -1);

	size_t out_len, err_len;
	const uint8_t *out = sandlock_sandbox_stdout(sb, &out_len);
	const uint8_t *errb = sandlock_sandbox_stderr(sb, &err_len);
	printf("stdout: %zu bytes: %.*s", out_len, (int)out_len, out ? (const char *)out : "");
	if (!out_len || out[out_len - 1] != '\n')
		printf("\n");
	printf("stderr: %zu bytes: %.*s", err_len, (int)err_len, errb ? (const char *)errb : "");
	if (!err_len || errb[err_len - 1] != '\n')
		printf("\n");

	int code = 0;
	switch (sandlock_sandbox_exit_kind(sb)) {
	case SANDLOCK_EXIT_CODE:
		code = sandlock_sandbox_exit_code(sb);
		printf("exit: code %d\n", code);
		break;
	case SANDLOCK_EXIT_SIGNAL:
		code = 128 + sandlock_sandbox_exit_signal(sb);
		printf("exit: signal %d\n", sandlock_sandbox_exit_signal(sb));
		break;
	case SANDLOCK_EXIT_TIMEOUT:
		code = 124;
		printf("exit: timeout\n");
		break;
	}
	sandlock_sandbox_free(sb);
	sandlock_policy_free(policy);
	return code;
}
