/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * profile: TOML profiles and JSON documents into policies, and policies back out as TOML and
 * JSON (dump.c). One schema (schema.c) and one validator serve both formats.
 */
#pragma once

#include <stddef.h>

#include "error.h"
#include "policy.h"

/* A check the loaders run after their own (the syscall names, which plan/ knows). */
typedef int (*profile_check_fn)(const struct sandlock_policy *p, struct sandlock_error **reterr);

/* A TOML profile. Errors carry "line:column: " (the file variant: "path:line:column: ").
 * -EINVAL, -ENOMEM, -ENOENT (${HOME} has no usable home), errors of open/read. */
int profile_load_toml(const char *text, size_t len, profile_check_fn check,
		      struct sandlock_policy **ret, struct sandlock_error **reterr);
int profile_load_toml_file(const char *path, profile_check_fn check, struct sandlock_policy **ret,
			   struct sandlock_error **reterr);
/* A JSON document: the same sections as a profile, plus "runtime" (name, control_socket,
 * credentials, http_auth). No ${HOME} expansion: a program passes real paths. */
int profile_load_json(const char *text, size_t len, profile_check_fn check,
		      struct sandlock_policy **ret, struct sandlock_error **reterr);

/* Dumps in the sectioned schema, only what differs from the defaults, in schema order. The TOML
 * form leaves out the runtime fields (a profile holds none). *@ret is malloc'ed. -ENOMEM. */
int profile_dump_toml(const struct sandlock_policy *p, char **ret);
int profile_dump_json(const struct sandlock_policy *p, char **ret);
