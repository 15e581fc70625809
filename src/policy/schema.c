/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * schema: the field table and the typed operations on it (assign, clear, is-set, free), plus the
 * checks across fields and the "not supported yet" refusal. Pure: no syscalls.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse-util.h"
#include "canon.h"
#include "schema.h"
#include "strv.h"

#define OFF(member) offsetof(struct sandlock_policy, member)
#define FIELD(sec, key, name, type, member, flags)                                                 \
	{                                                                                          \
		sec, key, name, type, OFF(member), flags, 0, 0                                     \
	}
#define RANGED(sec, key, name, type, member, flags, lo, hi)                                        \
	{                                                                                          \
		sec, key, name, type, OFF(member), flags, lo, hi                                   \
	}

const char *const schema_sections[] = {
	"config", "determinism", "program", "filesystem",  "network",
	"http",	  "syscalls",	 "limits",  "protections", NULL,
};

/* F_SUPPORTED marks what this release enforces; a later issue that builds a feature adds it. */
const struct field schema_fields[] = {
	FIELD("config", "http_ca", "http_ca", FT_PATH, http_ca, F_SUPPORTED | F_EXPAND),
	FIELD("config", "http_key", "http_key", FT_PATH, http_key, F_SUPPORTED | F_EXPAND),
	FIELD("config", "http_inject_ca", "http_inject_ca", FT_PATHV, http_inject_ca,
	      F_SUPPORTED | F_EXPAND),
	FIELD("config", "http_ca_out", "http_ca_out", FT_PATH, http_ca_out, F_SUPPORTED | F_EXPAND),
	FIELD("config", "fs_storage", "fs_storage", FT_PATH, fs_storage, F_SUPPORTED | F_EXPAND),
	FIELD("config", "workdir", "workdir", FT_PATH, workdir, F_SUPPORTED | F_EXPAND),

	RANGED("determinism", "random_seed", "random_seed", FT_OPT_U64, random_seed, F_SUPPORTED, 0,
	       INT64_MAX),
	FIELD("determinism", "time_start", "time_start", FT_TIME, time_start, F_SUPPORTED),
	FIELD("determinism", "deterministic_dirs", "deterministic_dirs", FT_BOOL,
	      deterministic_dirs, F_SUPPORTED),
	FIELD("determinism", "no_randomize_memory", "no_randomize_memory", FT_BOOL,
	      no_randomize_memory, F_SUPPORTED),

	FIELD("program", "exec", "exec", FT_PATH, exec, F_SUPPORTED | F_EXPAND),
	FIELD("program", "args", "args", FT_STRV, args, F_SUPPORTED),
	FIELD("program", "env", "env", FT_ENV, env, F_SUPPORTED),
	FIELD("program", "cwd", "cwd", FT_PATH, cwd, F_SUPPORTED | F_EXPAND),
	RANGED("program", "uid", "uid", FT_OPT_U64, uid, F_SUPPORTED, 0, UINT32_MAX - 1),
	RANGED("program", "gid", "gid", FT_OPT_U64, gid, F_SUPPORTED, 0, UINT32_MAX - 1),
	FIELD("program", "clean_env", "clean_env", FT_BOOL, clean_env, F_SUPPORTED),
	FIELD("program", "no_coredump", "no_coredump", FT_BOOL, no_coredump, F_SUPPORTED),
	FIELD("program", "no_huge_pages", "no_huge_pages", FT_BOOL, no_huge_pages, F_SUPPORTED),
	FIELD("program", "no_supervisor", "no_supervisor", FT_BOOL, no_supervisor, F_SUPPORTED),

	FIELD("filesystem", "read", "fs_readable", FT_GRANTV, fs_read, F_SUPPORTED | F_EXPAND),
	FIELD("filesystem", "write", "fs_writable", FT_GRANTV, fs_write, F_SUPPORTED | F_EXPAND),
	FIELD("filesystem", "deny", "fs_denied", FT_GRANTV, fs_deny, F_SUPPORTED | F_EXPAND),
	FIELD("filesystem", "chroot", "chroot", FT_PATH, chroot, F_EXPAND),
	FIELD("filesystem", "mount", "fs_mount", FT_MOUNTV, fs_mount, F_EXPAND),
	FIELD("filesystem", "on_exit", "on_exit", FT_ACTION, on_exit, F_SUPPORTED),
	FIELD("filesystem", "on_error", "on_error", FT_ACTION, on_error, F_SUPPORTED),
	FIELD("filesystem", "private_tmp", "private_tmp", FT_BOOL, private_tmp, F_SUPPORTED),

	FIELD("network", "allow", "net_allow", FT_NETV, net_allow, F_SUPPORTED),
	FIELD("network", "deny", "net_deny", FT_NETDENYV, net_deny, F_SUPPORTED),
	FIELD("network", "allow_bind", "net_allow_bind", FT_BINDV, net_allow_bind, F_SUPPORTED),
	FIELD("network", "deny_bind", "net_deny_bind", FT_BINDV, net_deny_bind, F_SUPPORTED),
	FIELD("network", "port_remap", "port_remap", FT_BOOL, port_remap, F_SUPPORTED),

	RANGED("http", "ports", "http_ports", FT_PORTV, http_ports, F_SUPPORTED, 1, 65535),
	FIELD("http", "allow", "http_allow", FT_HTTPV, http_allow, F_SUPPORTED),
	FIELD("http", "deny", "http_deny", FT_HTTPV, http_deny, F_SUPPORTED),

	FIELD("syscalls", "extra_allow", "extra_allow_syscalls", FT_STRV, extra_allow, F_SUPPORTED),
	FIELD("syscalls", "extra_deny", "extra_deny_syscalls", FT_STRV, extra_deny, F_SUPPORTED),

	RANGED("limits", "memory", "max_memory", FT_SIZE, max_memory, F_SUPPORTED, 1, UINT64_MAX),
	RANGED("limits", "processes", "max_processes", FT_OPT_U64, max_processes, F_SUPPORTED, 1,
	       UINT32_MAX),
	RANGED("limits", "open_files", "max_open_files", FT_NZ_U64, max_open_files, F_SUPPORTED, 1,
	       INT64_MAX),
	RANGED("limits", "cpu", "max_cpu", FT_OPT_U64, max_cpu, F_SUPPORTED, 1, 100),
	RANGED("limits", "disk", "max_disk", FT_SIZE, max_disk, F_SUPPORTED, 1, UINT64_MAX),
	RANGED("limits", "gpu_devices", "gpu_devices", FT_U32V, gpu_devices, F_SUPPORTED, 0, 1023),
	FIELD("limits", "cpu_cores", "cpu_cores", FT_CPUSET, cpu_cores, F_SUPPORTED),
	RANGED("limits", "num_cpus", "num_cpus", FT_OPT_U64, num_cpus, F_SUPPORTED, 1, 4096),

	FIELD("protections", "allow_degraded", "allow_degraded", FT_PROTV, protection, F_SUPPORTED),
	FIELD("protections", "disable", "disable", FT_PROTV, protection, F_SUPPORTED),

	FIELD("runtime", "name", "name", FT_NAME, name, F_SUPPORTED | F_RUNTIME),
	FIELD("runtime", "control_socket", "control_socket", FT_NOBOOL, control_socket_off,
	      F_SUPPORTED | F_RUNTIME),
	FIELD("runtime", "credentials", "credentials", FT_CREDV, credentials,
	      F_SUPPORTED | F_RUNTIME),
	FIELD("runtime", "http_auth", "http_auth", FT_AUTHV, http_auth, F_SUPPORTED | F_RUNTIME),
	FIELD("runtime", "image", "image", FT_STR, image, F_RUNTIME),
};

const size_t schema_n_fields = ELEMENTSOF(schema_fields);

static const char *const action_names[] = { "commit", "abort", "keep", "defer" };

const char *schema_action_name(unsigned a)
{
	return a < ELEMENTSOF(action_names) ? action_names[a] : "?";
}

const struct field *schema_find_key(const char *section, const char *key)
{
	for (size_t i = 0; i < schema_n_fields; i++)
		if (strcmp(schema_fields[i].section, section) == 0 &&
		    strcmp(schema_fields[i].key, key) == 0)
			return &schema_fields[i];
	return NULL;
}

const struct field *schema_find(const char *name)
{
	const char *dot = strchr(name, '.');

	if (dot) {
		char section[32];
		size_t n = (size_t)(dot - name);
		if (n >= sizeof(section))
			return NULL;
		memcpy(section, name, n);
		section[n] = '\0';
		return schema_find_key(section, dot + 1);
	}
	for (size_t i = 0; i < schema_n_fields; i++)
		if (strcmp(schema_fields[i].name, name) == 0)
			return &schema_fields[i];
	return NULL;
}

int schema_is_section(const char *section)
{
	for (size_t i = 0; schema_sections[i]; i++)
		if (strcmp(schema_sections[i], section) == 0)
			return 1;
	return 0;
}

void schema_section_keys(const char *section, char *buf, size_t size)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < schema_n_fields; i++) {
		if (strcmp(schema_fields[i].section, section) != 0)
			continue;
		int n = snprintf(buf + off, size - off, "%s%s", off ? ", " : "",
				 schema_fields[i].key);
		if (n < 0 || (size_t)n >= size - off)
			return;
		off += (size_t)n;
	}
}

int schema_is_list(const struct field *f)
{
	switch (f->type) {
	case FT_PATHV:
	case FT_GRANTV:
	case FT_STRV:
	case FT_MOUNTV:
	case FT_NETV:
	case FT_NETDENYV:
	case FT_BINDV:
	case FT_HTTPV:
	case FT_PORTV:
	case FT_U32V:
	case FT_CPUSET:
	case FT_PROTV:
	case FT_CREDV:
	case FT_AUTHV:
		return 1;
	default:
		return 0;
	}
}

const char *schema_native_type(const struct field *f)
{
	switch (f->type) {
	case FT_BOOL:
	case FT_NOBOOL:
		return "a boolean";
	case FT_OPT_U64:
	case FT_NZ_U64:
		return "an integer";
	default:
		return NULL;
	}
}
