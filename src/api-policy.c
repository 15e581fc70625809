/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * api-policy: the exported policy setters and protection queries. Each validates its arguments,
 * stores a copy in the policy object and returns a documented errno; nothing else is exported
 * from here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "macro.h"
#include "plan/seccomp.h"
#include "policy/policy.h"
#include "policy/profile.h"
#include "policy/rules.h"
#include "policy/schema.h"
#include "strv.h"

_public_ int sandlock_policy_new(sandlock_policy_t **ret_policy)
{
	if (!ret_policy)
		return -EINVAL;
	struct sandlock_policy *p = policy_new();
	if (!p)
		return -ENOMEM;
	*ret_policy = p;
	return 0;
}

_public_ void sandlock_policy_free(sandlock_policy_t *p)
{
	policy_free(p);
}

static int add_nonempty(char ***v, const char *s)
{
	if (!s || !*s)
		return -EINVAL;
	return strv_extend(v, s);
}

/* A relative grant means "relative to where the caller is now", so it is made absolute here,
 * not when the sandbox is spawned (the caller may chdir in between). */
static int add_path(char ***v, const char *path)
{
	if (!path || !*path)
		return -EINVAL;
	if (path[0] == '/')
		return strv_extend(v, path);
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	if (!cwd)
		return negative_errno();
	_cleanup_free_ char *abs = malloc(strlen(cwd) + strlen(path) + 2);
	if (!abs)
		return -ENOMEM;
	sprintf(abs, "%s%s%s", cwd, strcmp(cwd, "/") == 0 ? "" : "/", path);
	int r = strv_push(v, abs);
	if (r == 0)
		abs = NULL;
	return r;
}

_public_ int sandlock_policy_add_fs_read(sandlock_policy_t *p, const char *path)
{
	return p ? add_path(&p->fs_read, path) : -EINVAL;
}

_public_ int sandlock_policy_add_fs_write(sandlock_policy_t *p, const char *path)
{
	return p ? add_path(&p->fs_write, path) : -EINVAL;
}

_public_ int sandlock_policy_set_env(sandlock_policy_t *p, const char *name, const char *value)
{
	if (!p || !name || !*name || strchr(name, '=') || !value)
		return -EINVAL;
	return policy_set_env(p, name, value);
}

static int set_path(char **slot, const char *path)
{
	char *c = NULL;

	if (path) {
		if (!*path)
			return -EINVAL;
		c = strdup(path);
		if (!c)
			return -ENOMEM;
	}
	free(*slot);
	*slot = c;
	return 0;
}

_public_ int sandlock_policy_set_cwd(sandlock_policy_t *p, const char *path)
{
	return p ? set_path(&p->cwd, path) : -EINVAL;
}

#define DEFINE_FLAG_SETTER(field)                                                                  \
	_public_ int sandlock_policy_set_##field(sandlock_policy_t *p, uint32_t enable)            \
	{                                                                                          \
		if (!p)                                                                            \
			return -EINVAL;                                                            \
		p->field = !!enable;                                                               \
		return 0;                                                                          \
	}

DEFINE_FLAG_SETTER(clean_env)
DEFINE_FLAG_SETTER(no_coredump)
DEFINE_FLAG_SETTER(no_huge_pages)
DEFINE_FLAG_SETTER(no_randomize_memory)
DEFINE_FLAG_SETTER(no_supervisor)

_public_ int sandlock_policy_set_max_open_files(sandlock_policy_t *p, uint64_t limit)
{
	if (!p || limit == 0)
		return -EINVAL;
	p->max_open_files = limit;
	return 0;
}

_public_ int sandlock_policy_add_cpu_core(sandlock_policy_t *p, uint32_t core)
{
	if (!p || core >= CPU_SETSIZE)
		return -EINVAL;
	if (!p->has_cpu_cores)
		CPU_ZERO(&p->cpu_cores);
	p->has_cpu_cores = 1;
	CPU_SET(core, &p->cpu_cores);
	return 0;
}

_public_ int sandlock_policy_set_name(sandlock_policy_t *p, const char *name,
				      sandlock_error_t **reterr)
{
	if (!p)
		return -EINVAL;
	if (name) {
		int r = policy_check_name(name, reterr);
		if (r < 0)
			return r;
	}
	return set_path(&p->name, name);
}

_public_ int sandlock_policy_add_extra_deny_syscall(sandlock_policy_t *p, const char *name)
{
	return p ? add_nonempty(&p->extra_deny, name) : -EINVAL;
}

_public_ int sandlock_policy_add_extra_allow_syscall(sandlock_policy_t *p, const char *group)
{
	return p ? add_nonempty(&p->extra_allow, group) : -EINVAL;
}

_public_ int sandlock_policy_set_protection(sandlock_policy_t *p, uint32_t protection,
					    uint32_t mode)
{
	if (!p || protection >= SANDLOCK_PROTECTION_COUNT || mode > SANDLOCK_PROTECTION_DISABLED)
		return -EINVAL;
	p->protection[protection] = (uint8_t)mode;
	return 0;
}

_public_ const char *sandlock_protection_name(uint32_t protection)
{
	return protection < SANDLOCK_PROTECTION_COUNT ? protection_table[protection].name : NULL;
}

_public_ int sandlock_protection_from_name(const char *name)
{
	return policy_protection_from_name(name);
}

_public_ int sandlock_protection_abi_floor(uint32_t protection)
{
	return protection < SANDLOCK_PROTECTION_COUNT ? protection_table[protection].abi_floor
						      : -EINVAL;
}

_public_ int sandlock_ports_parse(const char *spec, uint16_t *ret_ports, size_t n,
				  sandlock_error_t **reterr)
{
	char msg[256];

	if (!spec || (n && !ret_ports))
		return error_set(reterr, -EINVAL, "sandlock_ports_parse: NULL argument");
	int r = bind_ports_expand(spec, ret_ports, n, msg, sizeof(msg));
	return r < 0 ? error_set(reterr, r, "%s", msg) : r;
}

/* ---- the whole policy ------------------------------------------------------------------- */

_public_ int sandlock_policy_load_toml(const char *text, size_t len, sandlock_policy_t **ret_policy,
				       sandlock_error_t **reterr)
{
	if ((!text && len) || !ret_policy)
		return error_set(reterr, -EINVAL, "sandlock_policy_load_toml: NULL argument");
	return profile_load_toml(text ? text : "", len, seccomp_check_names, ret_policy, reterr);
}

_public_ int sandlock_policy_load_toml_file(const char *path, sandlock_policy_t **ret_policy,
					    sandlock_error_t **reterr)
{
	if (!path || !ret_policy)
		return error_set(reterr, -EINVAL, "sandlock_policy_load_toml_file: NULL argument");
	return profile_load_toml_file(path, seccomp_check_names, ret_policy, reterr);
}

_public_ int sandlock_policy_load_json(const char *text, size_t len, sandlock_policy_t **ret_policy,
				       sandlock_error_t **reterr)
{
	if ((!text && len) || !ret_policy)
		return error_set(reterr, -EINVAL, "sandlock_policy_load_json: NULL argument");
	return profile_load_json(text ? text : "", len, seccomp_check_names, ret_policy, reterr);
}

_public_ int sandlock_policy_dump_toml(const sandlock_policy_t *p, char **ret_text)
{
	return p && ret_text ? profile_dump_toml(p, ret_text) : -EINVAL;
}

_public_ int sandlock_policy_dump_json(const sandlock_policy_t *p, char **ret_text)
{
	return p && ret_text ? profile_dump_json(p, ret_text) : -EINVAL;
}

/* fs_mount_ro, the reference's mapping of read-only mounts, is the ":ro" entries of fs_mount
 * (one TOML key, "mount", holds both). */
static int is_mount_ro(const char *field)
{
	return strcmp(field, "fs_mount_ro") == 0 || strcmp(field, "filesystem.mount_ro") == 0;
}

static int set_mount_ro(sandlock_policy_t *p, const char *value, sandlock_error_t **reterr)
{
	const char *colon = strchr(value, ':');
	_cleanup_free_ char *entry = NULL;

	if (colon && strchr(colon + 1, ':'))
		return error_set(reterr, -EINVAL,
				 "fs_mount_ro: expected VIRTUAL:HOST (the mount is read-only), got "
				 "'%s'",
				 value);
	if (asprintf(&entry, "%s:ro", value) < 0)
		return error_set(reterr, -ENOMEM, "out of memory");
	struct fvalue fv = { .kind = FV_STR, .s = entry };
	return schema_assign(p, schema_find("fs_mount"), &fv, reterr);
}

static void clear_mount_ro(sandlock_policy_t *p)
{
	size_t w = 0;

	for (size_t i = 0; p->fs_mount && p->fs_mount[i]; i++) {
		size_t len = strlen(p->fs_mount[i]);
		if (len > 3 && strcmp(p->fs_mount[i] + len - 3, ":ro") == 0)
			free(p->fs_mount[i]);
		else
			p->fs_mount[w++] = p->fs_mount[i];
	}
	if (p->fs_mount)
		p->fs_mount[w] = NULL;
}

static int policy_set(sandlock_policy_t *p, const char *field, const char *value,
		      sandlock_error_t **reterr)
{
	if (!p || !field || !value)
		return error_set(reterr, -EINVAL, "sandlock_policy_set: NULL argument");
	if (is_mount_ro(field))
		return set_mount_ro(p, value, reterr);
	const struct field *f = schema_find(field);
	if (!f)
		return error_set(reterr, -EINVAL, "unknown field '%s'", field);
	_cleanup_strv_free_ char **abs = NULL;
	if (f->type == FT_GRANTV && value[0] != '/') {
		int r = add_path(&abs, value);
		if (r < 0)
			return error_set(reterr, r, "%s: %s: %s", f->name, value, strerror(-r));
		value = abs[0];
	}
	struct fvalue fv = { .kind = FV_STR, .s = value };
	char ***list = f->type == FT_STRV && f != schema_find("args") ? field_ptr(p, f) : NULL;
	size_t before = list ? strv_length(*list) : 0;
	int r = schema_assign(p, f, &fv, reterr);
	if (r < 0 || !list || strv_length(*list) == before)
		return r;
	/* A syscall name or group: known, and not contradicting the other list (the loaders
	 * check the same after a whole document). Refused, it is taken back out. */
	r = seccomp_check_names(p, reterr);
	if (r < 0) {
		free((*list)[before]);
		(*list)[before] = NULL;
	}
	return r;
}

_public_ int sandlock_policy_set(sandlock_policy_t *p, const char *field, const char *value,
				 sandlock_error_t **reterr)
{
	int r = policy_set(p, field, value, reterr);
	error_relabel(reterr, p);
	return r;
}

_public_ int sandlock_policy_set_label(sandlock_policy_t *p, const char *field, const char *label)
{
	const struct field *f = p && field ? schema_find(field) : NULL;

	if (!f || (label && !label[0]))
		return -EINVAL;
	return policy_set_label(p, f, label);
}

_public_ int sandlock_policy_clear(sandlock_policy_t *p, const char *field)
{
	if (p && field && is_mount_ro(field)) {
		clear_mount_ro(p);
		return 0;
	}
	const struct field *f = p && field ? schema_find(field) : NULL;

	if (!f)
		return -EINVAL;
	schema_clear(p, f);
	return 0;
}

_public_ int sandlock_policy_command(const sandlock_policy_t *p, char ***ret_argv)
{
	if (!p || !ret_argv)
		return -EINVAL;
	if (!p->exec)
		return -ENOENT;
	_cleanup_strv_free_ char **v = NULL;
	if (strv_extend(&v, p->exec) < 0)
		return -ENOMEM;
	for (size_t i = 0; p->args && p->args[i]; i++)
		if (strv_extend(&v, p->args[i]) < 0)
			return -ENOMEM;
	*ret_argv = TAKE_PTR(v);
	return 0;
}

_public_ void sandlock_free(void *ptr)
{
	free(ptr);
}

_public_ void sandlock_strv_free(char **strv)
{
	strv_free(strv);
}

_public_ int sandlock_field_supported(const char *field)
{
	const struct field *f = field ? schema_find(is_mount_ro(field) ? "fs_mount" : field) : NULL;

	return f ? !!(f->flags & F_SUPPORTED) : -EINVAL;
}
