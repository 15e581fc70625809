/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-cow-api: the workdir's branch through the C API: a deferred branch's change set
 * (paths, kinds, sizes, SHA-256 digests before and after), its upper directory, then commit;
 * another deferred and aborted; and without a workdir (the control) none of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/sha256.h"
#include "spawn-helpers.h"
#include "tap.h"

static char root[] = "/tmp/test-cow-api-XXXXXX";
static char wd[64], store[64];

static void put(const char *name, const char *text)
{
	char p[128];
	snprintf(p, sizeof(p), "%s/%s", wd, name);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static char *get(const char *dir, const char *name)
{
	static char buf[256];
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "r");
	if (!f)
		return NULL;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static void digest_of(const char *text, uint8_t out[32])
{
	struct sha256 s;
	sha256_init(&s);
	sha256_update(&s, text, strlen(text));
	sha256_final(&s, out);
}

/* Run @script in a sandbox under @p (the caller's stdio), ended; NULL on failure. */
static sandlock_sandbox_t *run(sandlock_policy_t *p, const char *script)
{
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	sandlock_spawn_opts_t o = { .size = sizeof(o) };
	sandlock_sandbox_t *sb = NULL;
	sandlock_error_t *err = NULL;

	if (sandlock_spawn(p, argv, &o, &sb, &err) < 0) {
		diag("spawn: %s", err ? sandlock_error_message(err) : "?");
		sandlock_error_free(err);
		return NULL;
	}
	sandlock_sandbox_wait(sb, -1);
	return sb;
}

static void test_defer_then_commit(sandlock_policy_t *p)
{
	uint8_t d_old[32], d_new[32];
	const char *path;
	sandlock_entry_t before, after;

	sandlock_policy_set(p, "on_exit", "defer", NULL);
	char script[256];
	snprintf(script, sizeof(script), "cd %s && echo more >> a && echo n > n && rm gone", wd);
	sandlock_sandbox_t *sb = run(p, script);
	if (!ok(sb != NULL, "a deferred run"))
		return;
	is_int(sandlock_sandbox_exit_code(sb), 0, "  exits 0");
	is_int(sandlock_sandbox_branch_action(sb), SANDLOCK_BRANCH_DEFER, "  its branch deferred");
	is_int(sandlock_sandbox_pending(sb), 1, "  and pending");
	ok(sandlock_sandbox_branch_error(sb) == NULL, "  with no error");
	is_str(get(wd, "a"), "hello\n", "  the workdir's file as it was");
	const char *upper = sandlock_sandbox_upper_dir(sb);
	ok(upper != NULL, "  the upper directory is named");
	is_str(upper ? get(upper, "n") : NULL, "n\n", "  and holds the new file's bytes");

	is_int((int)sandlock_sandbox_change_count(sb), 3, "three changes");
	digest_of("hello\n", d_old);
	digest_of("hello\nmore\n", d_new);
	ok(sandlock_sandbox_change(sb, 0, &path, &before, &after) == 0 && strcmp(path, "a") == 0,
	   "  the first is a (sorted by path)");
	ok(before.kind == SANDLOCK_ENTRY_FILE && before.size == 6 && before.has_digest &&
		   memcmp(before.digest, d_old, 32) == 0,
	   "  before: the old bytes' digest");
	ok(after.kind == SANDLOCK_ENTRY_FILE && after.size == 11 && after.has_digest &&
		   memcmp(after.digest, d_new, 32) == 0,
	   "  after: the new bytes' digest");
	ok(memcmp(before.digest, after.digest, 32) != 0, "  the two differ (control)");
	ok(sandlock_sandbox_change(sb, 1, &path, &before, &after) == 0 &&
		   strcmp(path, "gone") == 0 && before.kind == SANDLOCK_ENTRY_FILE &&
		   after.kind == SANDLOCK_ENTRY_ABSENT,
	   "  gone: deleted");
	ok(sandlock_sandbox_change(sb, 2, &path, &before, &after) == 0 && strcmp(path, "n") == 0 &&
		   before.kind == SANDLOCK_ENTRY_ABSENT && after.kind == SANDLOCK_ENTRY_FILE,
	   "  n: added");
	is_int(sandlock_sandbox_change(sb, 3, &path, &before, &after), -ERANGE,
	       "  no fourth (-ERANGE)");

	sandlock_error_t *err = NULL;
	is_int(sandlock_sandbox_commit(sb, &err), 0, "commit");
	sandlock_error_free(err);
	is_int(sandlock_sandbox_pending(sb), 0, "  no longer pending");
	is_int(sandlock_sandbox_branch_action(sb), SANDLOCK_BRANCH_COMMIT, "  committed");
	ok(sandlock_sandbox_upper_dir(sb) == NULL, "  the branch is gone");
	is_str(get(wd, "a"), "hello\nmore\n", "  the append landed");
	is_str(get(wd, "n"), "n\n", "  the new file landed");
	ok(get(wd, "gone") == NULL, "  the deleted file is gone");
	err = NULL;
	is_int(sandlock_sandbox_commit(sb, &err), -EINVAL, "  a second commit: nothing pending");
	sandlock_error_free(err);
	sandlock_sandbox_free(sb);
}

static void test_defer_then_abort(sandlock_policy_t *p)
{
	char script[256];
	snprintf(script, sizeof(script), "cd %s && echo x > a", wd);
	sandlock_sandbox_t *sb = run(p, script);
	if (!ok(sb != NULL, "another deferred run"))
		return;
	sandlock_error_t *err = NULL;
	is_int(sandlock_sandbox_abort(sb, &err), 0, "abort");
	sandlock_error_free(err);
	is_int(sandlock_sandbox_branch_action(sb), SANDLOCK_BRANCH_ABORT, "  aborted");
	is_str(get(wd, "a"), "hello\nmore\n", "  the workdir untouched");
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A %s)\"", store);
	is_int(system(cmd), 0, "  and the store empty");
	sandlock_sandbox_free(sb);
}

static void test_without_workdir(void)
{
	sandlock_policy_t *p = system_policy();
	sandlock_sandbox_t *sb = p ? run(p, "true") : NULL;
	if (!ok(sb != NULL, "a run without a workdir (control)"))
		return;
	is_int(sandlock_sandbox_branch_action(sb), -ENOENT, "  no branch (-ENOENT)");
	is_int((int)sandlock_sandbox_change_count(sb), 0, "  no changes");
	is_int(sandlock_sandbox_pending(sb), 0, "  nothing pending");
	ok(sandlock_sandbox_upper_dir(sb) == NULL, "  no upper directory");
	sandlock_error_t *err = NULL;
	is_int(sandlock_sandbox_commit(sb, &err), -ENOENT, "  commit: -ENOENT");
	sandlock_error_free(err);
	sandlock_sandbox_free(sb);
	sandlock_policy_free(p);
}

int main(void)
{
	if (!mkdtemp(root))
		return 1;
	snprintf(wd, sizeof(wd), "%s/wd", root);
	snprintf(store, sizeof(store), "%s/store", root);
	mkdir(wd, 0755);
	mkdir(store, 0755);
	put("a", "hello\n");
	put("gone", "bye\n");

	sandlock_policy_t *p = system_policy();
	ok(p && sandlock_policy_set(p, "workdir", wd, NULL) == 0 &&
		   sandlock_policy_set(p, "fs_storage", store, NULL) == 0,
	   "a policy with a workdir");
	if (p) {
		test_defer_then_commit(p);
		test_defer_then_abort(p);
		sandlock_policy_free(p);
	}
	test_without_workdir();

	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	(void)!system(cmd);
	return done_testing();
}
