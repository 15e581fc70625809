/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * schema-check: the checks that span fields, run when a policy is loaded and again when a
 * sandbox is built, and the refusal of fields whose enforcement does not exist yet. Each failure
 * is one line naming the fields. Pure: no syscalls.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "rules.h"
#include "schema.h"
#include "strv.h"

static int mount_is_ro(const char *m)
{
	size_t len = strlen(m);
	return len > 3 && strcmp(m + len - 3, ":ro") == 0;
}

/* Each virtual path is mapped once: a second mapping, read-only or not, would make which host
 * directory it shows depend on the order of the entries. */
static int check_mounts(const struct sandlock_policy *p, struct sandlock_error **reterr)
{
	for (size_t i = 0; p->fs_mount && p->fs_mount[i]; i++) {
		const char *a = p->fs_mount[i], *colon = strchr(a, ':');
		if (!colon)
			continue;
		size_t vlen = (size_t)(colon - a);
		for (size_t j = i + 1; p->fs_mount[j]; j++) {
			const char *b = p->fs_mount[j];
			if (strncmp(a, b, vlen) != 0 || b[vlen] != ':')
				continue;
			if (mount_is_ro(a) != mount_is_ro(b))
				return error_set(reterr, -EINVAL,
						 "fs_mount, fs_mount_ro: %.*s is mounted both "
						 "read-write and read-only",
						 (int)vlen, a);
			return error_set(reterr, -EINVAL, "fs_mount: %.*s is mapped twice",
					 (int)vlen, a);
		}
	}
	return 0;
}

/* "@field: needs at least one http_allow or http_deny rule", the fields by @p's labels. */
static int needs_http_rule(const struct sandlock_policy *p, const char *field,
			   struct sandlock_error **reterr)
{
	return error_set(reterr, -EINVAL, "%s: needs at least one %s or %s rule", field,
			 schema_label_of(p, "http_allow"), schema_label_of(p, "http_deny"));
}

int schema_validate(const struct sandlock_policy *p, struct sandlock_error **reterr)
{
	int has_http_rule = p->http_allow || p->http_deny;

	if (!!p->http_ca != !!p->http_key)
		return error_set(reterr, -EINVAL, "http_ca, http_key: set both or neither");
	if (p->uid.set != p->gid.set)
		return error_set(reterr, -EINVAL, "uid, gid: set both or neither");
	if (p->http_inject_ca && !has_http_rule)
		return needs_http_rule(p, "http_inject_ca", reterr);
	if (p->http_ca_out && !has_http_rule)
		return needs_http_rule(p, "http_ca_out", reterr);
	/* The CA is the certificate written: without one there is nothing to write, which the
	 * user should learn before anything runs. */
	if (p->http_ca_out && !p->http_ca && !p->http_inject_ca)
		return error_set(reterr, -EINVAL, "%s: no CA is active: set %s and %s, or %s",
				 schema_label_of(p, "http_ca_out"), schema_label_of(p, "http_ca"),
				 schema_label_of(p, "http_key"),
				 schema_label_of(p, "http_inject_ca"));
	if (p->http_auth && !has_http_rule)
		return needs_http_rule(p, "http_auth", reterr);
	return check_mounts(p, reterr);
}

int schema_check_supported(const struct sandlock_policy *p, struct sandlock_error **reterr)
{
	char names[1024] = "";
	size_t len = 0;

	/* All of them at once: one run tells the user everything that is not there yet. */
	for (size_t i = 0; i < schema_n_fields; i++) {
		const struct field *f = &schema_fields[i];
		if ((f->flags & F_SUPPORTED) || !schema_is_set(p, f))
			continue;
		int n = snprintf(names + len, sizeof(names) - len, "%s%s", len ? ", " : "",
				 f->name);
		if (n > 0 && (size_t)n < sizeof(names) - len)
			len += (size_t)n;
	}
	return len ? error_set(reterr, -EOPNOTSUPP, "not supported yet: %s", names) : 0;
}
