/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-setters: the setters' special cases through the public API: fs_mount_ro (the ":ro" entries
 * of fs_mount), syscall names checked as they are added, and "not supported yet" naming every
 * such field of a policy at once. Each refusal has its control.
 */
#include <errno.h>
#include <string.h>

#include "sandlock.h"
#include "tap.h"

static int set(sandlock_policy_t *p, const char *field, const char *value, char *msg, size_t n)
{
	sandlock_error_t *e = NULL;
	int r = sandlock_policy_set(p, field, value, &e);

	snprintf(msg, n, "%s", r < 0 && e ? sandlock_error_message(e) : "");
	sandlock_error_free(e);
	return r;
}

static char *dump(const sandlock_policy_t *p)
{
	char *t = NULL;
	return sandlock_policy_dump_toml(p, &t) == 0 ? t : NULL;
}

static void test_mount_ro(void)
{
	sandlock_policy_t *p = NULL;
	char msg[256];

	sandlock_policy_new(&p);
	is_int(set(p, "fs_mount_ro", "/data:/srv/data", msg, sizeof(msg)), 0, "set fs_mount_ro");
	is_int(set(p, "filesystem.mount_ro", "/etc:/srv/etc", msg, sizeof(msg)), 0,
	       "set filesystem.mount_ro");
	is_int(set(p, "fs_mount", "/work:/srv/work", msg, sizeof(msg)), 0,
	       "control: set fs_mount (read-write)");
	char *t = dump(p);
	is_str(t,
	       "[filesystem]\nmount = [\"/data:/srv/data:ro\", \"/etc:/srv/etc:ro\", "
	       "\"/work:/srv/work\"]\n",
	       "the read-only ones carry :ro, the other none");
	sandlock_free(t);

	is_int(set(p, "fs_mount_ro", "/x:/y:rw", msg, sizeof(msg)), -EINVAL,
	       "fs_mount_ro takes no mode");
	is_str(msg, "fs_mount_ro: expected VIRTUAL:HOST (the mount is read-only), got '/x:/y:rw'",
	       "  message");
	is_int(set(p, "fs_mount_ro", "/work:/other", msg, sizeof(msg)), 0,
	       "a virtual path already mapped read-write is accepted by the setter");
	sandlock_error_t *e = NULL;
	is_int(sandlock_policy_check(p, &e), -EINVAL, "... and refused by the check");
	is_str(e ? sandlock_error_message(e) : "",
	       "fs_mount, fs_mount_ro: /work is mounted both read-write and read-only",
	       "  message");
	sandlock_error_free(e);

	is_int(sandlock_policy_clear(p, "fs_mount_ro"), 0, "clear fs_mount_ro");
	t = dump(p);
	is_str(t, "[filesystem]\nmount = [\"/work:/srv/work\"]\n",
	       "clearing fs_mount_ro keeps the read-write mounts");
	sandlock_free(t);
	is_int(sandlock_field_supported("fs_mount_ro"), sandlock_field_supported("fs_mount"),
	       "fs_mount_ro is supported exactly when fs_mount is");
	sandlock_policy_free(p);
}

static void test_syscall_names(void)
{
	sandlock_policy_t *p = NULL;
	char msg[256];

	sandlock_policy_new(&p);
	is_int(set(p, "extra_deny_syscalls", "getcwd", msg, sizeof(msg)), 0,
	       "control: a known syscall is added");
	is_int(set(p, "extra_deny_syscalls", "nosuchsyscall", msg, sizeof(msg)), -EINVAL,
	       "an unknown syscall is refused as it is set");
	is_str(msg, "extra_deny_syscalls: unknown syscall nosuchsyscall", "  message");
	is_int(set(p, "syscalls.extra_allow", "sysv_ipc", msg, sizeof(msg)), 0,
	       "control: the sysv_ipc group is re-allowed");
	is_int(set(p, "extra_deny_syscalls", "shmget", msg, sizeof(msg)), -EINVAL,
	       "a member of a re-allowed group cannot be denied");
	char *t = dump(p);
	is_str(t, "[syscalls]\nextra_allow = [\"sysv_ipc\"]\nextra_deny = [\"getcwd\"]\n",
	       "the refused names were taken back out");
	sandlock_free(t);
	sandlock_policy_free(p);
}

static void test_all_unsupported(void)
{
	sandlock_policy_t *p = NULL;
	sandlock_error_t *e = NULL;
	char msg[256];

	sandlock_policy_new(&p);
	set(p, "chroot", "/", msg, sizeof(msg));
	is_int(sandlock_policy_check(p, &e), -EOPNOTSUPP, "one field not built yet");
	is_str(e ? sandlock_error_message(e) : "", "not supported yet: chroot", "  message");
	sandlock_error_free(e);
	e = NULL;
	set(p, "fs_mount", "/work:/tmp", msg, sizeof(msg));
	set(p, "http_ca_out", "/tmp/ca.pem", msg, sizeof(msg));
	is_int(sandlock_policy_check(p, &e), -EINVAL, "http_ca_out without an HTTP rule");
	sandlock_error_free(e);
	e = NULL;
	sandlock_policy_clear(p, "http_ca_out");
	set(p, "http_allow", "GET example.com/*", msg, sizeof(msg));
	is_int(sandlock_policy_check(p, &e), -EOPNOTSUPP, "two fields not built yet");
	is_str(e ? sandlock_error_message(e) : "", "not supported yet: chroot, fs_mount",
	       "  all named at once, in schema order (http_allow is built)");
	sandlock_error_free(e);
	e = NULL;
	/* A mistake is reported before "not yet". */
	set(p, "http_ca", "/ca.pem", msg, sizeof(msg));
	is_int(sandlock_policy_check(p, &e), -EINVAL, "http_ca without http_key");
	is_str(e ? sandlock_error_message(e) : "", "http_ca, http_key: set both or neither",
	       "  the pairing rule, not \"not supported yet\"");
	sandlock_error_free(e);
	sandlock_policy_free(p);
}

/* The message for @p's check, or for setting @field to @value when @field is set. */
static void expect(sandlock_policy_t *p, const char *field, const char *value, const char *want,
		   const char *what)
{
	sandlock_error_t *e = NULL;

	if (field)
		(void)sandlock_policy_set(p, field, value, &e);
	else
		(void)sandlock_policy_check(p, &e);
	is_str(e ? sandlock_error_message(e) : "", want, "%s", what);
	sandlock_error_free(e);
}

/* Labels: the errors name a field as the caller's program spells it, wherever the message
 * names it (first, in a list, in the text). */
static void test_labels(void)
{
	sandlock_policy_t *p = NULL, *q = NULL;
	char msg[256];

	sandlock_policy_new(&p);
	is_int(sandlock_policy_set_label(p, "no_such_field", "--x"), -EINVAL, "unknown field");
	is_int(sandlock_policy_set_label(p, "fs_readable", ""), -EINVAL, "empty label");
	is_int(sandlock_policy_set_label(NULL, "fs_readable", "--x"), -EINVAL, "NULL policy");
	ok(sandlock_policy_set_label(p, "limits.processes", "--max-processes") == 0 &&
		   sandlock_policy_set_label(p, "fs_readable", "--fs-read") == 0 &&
		   sandlock_policy_set_label(p, "chroot", "--chroot") == 0 &&
		   sandlock_policy_set_label(p, "fs_mount", "--fs-mount") == 0 &&
		   sandlock_policy_set_label(p, "uid", "--user") == 0 &&
		   sandlock_policy_set_label(p, "gid", "--user") == 0 &&
		   sandlock_policy_set_label(p, "http_allow", "--http-allow") == 0,
	   "labels set");
	expect(p, "max_processes", "abc", "--max-processes: expected a non-negative integer",
	       "a setter's error");
	sandlock_policy_add_fs_read(p, "/nonexistent-sandlock-test");
	expect(p, NULL, NULL, "--fs-read: /nonexistent-sandlock-test: No such file or directory",
	       "a grant's error at check");
	sandlock_policy_clear(p, "fs_readable");
	set(p, "uid", "1", msg, sizeof(msg));
	expect(p, NULL, NULL, "--user: set both or neither", "two fields, one label: said once");
	sandlock_policy_clear(p, "uid");
	set(p, "chroot", "/", msg, sizeof(msg));
	set(p, "fs_mount", "/work:/tmp", msg, sizeof(msg));
	set(p, "http_allow", "GET example.com/*", msg, sizeof(msg));
	expect(p, NULL, NULL, "not supported yet: --chroot, --fs-mount",
	       "every field not built yet, by its label");
	sandlock_policy_set_label(p, "chroot", NULL);
	expect(p, NULL, NULL, "not supported yet: chroot, --fs-mount",
	       "a NULL label restores the name");
	/* The labels travel with the policy, not with its dump. */
	char *json = NULL;
	ok(sandlock_policy_dump_json(p, &json) == 0 && json && !strstr(json, "--"),
	   "the dump holds no labels");
	ok(sandlock_policy_load_json(json, strlen(json), &q, NULL) == 0, "the dump loads");
	expect(q, NULL, NULL, "not supported yet: chroot, fs_mount",
	       "  a loaded policy names the fields");
	sandlock_free(json);
	sandlock_policy_free(q);
	sandlock_policy_free(p);
}

int main(void)
{
	test_labels();
	test_mount_ro();
	test_syscall_names();
	test_all_unsupported();
	return done_testing();
}
