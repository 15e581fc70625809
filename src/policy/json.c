/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * json: a JSON policy document into a policy. The same sections and keys as a TOML profile (so
 * one validator serves both), plus "runtime" for what a program sets when it creates a sandbox:
 * name, control_socket, credentials, http_auth. Errors name the field ("limits.memory: ...").
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "profile.h"
#include "schema.h"

static int json_to_fvalue(const json_t *j, struct fvalue *fv)
{
	switch (json_typeof(j)) {
	case JSON_STRING:
		*fv = (struct fvalue){ .kind = FV_STR, .s = json_string_value(j) };
		return 0;
	case JSON_INTEGER:
		*fv = (struct fvalue){ .kind = FV_INT, .i = json_integer_value(j) };
		return 0;
	case JSON_TRUE:
	case JSON_FALSE:
		*fv = (struct fvalue){ .kind = FV_BOOL, .b = json_is_true(j) };
		return 0;
	default:
		return -EINVAL;
	}
}

static const char *type_name(const json_t *j)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a real number";
	case JSON_NULL:
		return "null";
	default:
		return "a boolean";
	}
}

static int assign_json(struct sandlock_policy *p, const struct field *f, const json_t *j,
		       struct sandlock_error **reterr)
{
	struct fvalue fv;

	if (json_is_string(j) && schema_native_type(f))
		return error_set(reterr, -EINVAL, "%s: expected %s, not a string", f->name,
				 schema_native_type(f));
	if (json_to_fvalue(j, &fv) < 0)
		return error_set(reterr, -EINVAL, "%s.%s: %s is not accepted here", f->section,
				 f->key, type_name(j));
	return schema_assign(p, f, &fv, reterr);
}

static int load_env(struct sandlock_policy *p, const struct field *f, const json_t *obj,
		    struct sandlock_error **reterr)
{
	const char *name;
	json_t *v;

	if (!json_is_object(obj))
		return error_set(reterr, -EINVAL, "program.env: expected an object");
	json_object_foreach((json_t *)obj, name, v)
	{
		char *kv = NULL;
		if (!json_is_string(v))
			return error_set(reterr, -EINVAL, "program.env: %s: expected a string",
					 name);
		if (!*name || strchr(name, '='))
			return error_set(reterr, -EINVAL, "program.env: invalid variable name '%s'",
					 name);
		if (asprintf(&kv, "%s=%s", name, json_string_value(v)) < 0)
			return -ENOMEM;
		struct fvalue fv = { .kind = FV_STR, .s = kv };
		int r = schema_assign(p, f, &fv, reterr);
		free(kv);
		if (r < 0)
			return r;
	}
	return 0;
}

static int load_field(struct sandlock_policy *p, const struct field *f, const json_t *j,
		      struct sandlock_error **reterr)
{
	size_t i;
	json_t *item;

	if (json_is_null(j))
		return 0; /* None: the default */
	if (f->type == FT_ENV)
		return load_env(p, f, j, reterr);
	/* The shapes TOML has: a list field takes an array, any other field a single value. */
	if (!schema_is_list(f))
		return assign_json(p, f, j, reterr);
	if (!json_is_array(j))
		return error_set(reterr, -EINVAL, "%s.%s: expected an array, not %s", f->section,
				 f->key, type_name(j));
	/* gpu_devices = [] is every GPU, unlike null; http_ports = [] is the default [80], as the
	 * SDK reference's http_ports=() is. */
	if (f->type == FT_U32V)
		((struct opt_u32v *)field_ptr(p, f))->set = 1;
	json_array_foreach(j, i, item)
	{
		int r = assign_json(p, f, item, reterr);
		if (r < 0)
			return r;
	}
	return 0;
}

static int load_section(struct sandlock_policy *p, const char *section, const json_t *obj,
			struct sandlock_error **reterr)
{
	const char *key;
	json_t *v;

	if (!json_is_object(obj))
		return error_set(reterr, -EINVAL, "%s: expected an object", section);
	json_object_foreach((json_t *)obj, key, v)
	{
		const struct field *f = schema_find_key(section, key);
		if (!f) {
			char keys[512];
			schema_section_keys(section, keys, sizeof(keys));
			return error_set(reterr, -EINVAL, "unknown key '%s' in %s; allowed: %s",
					 key, section, keys);
		}
		int r = load_field(p, f, v, reterr);
		if (r < 0)
			return r;
	}
	return 0;
}

int profile_load_json(const char *text, size_t len, profile_check_fn check,
		      struct sandlock_policy **ret, struct sandlock_error **reterr)
{
	json_error_t jerr;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	const char *section;
	json_t *v;
	int r = 0;

	if (!root)
		return error_set(reterr, -EINVAL, "%d:%d: %s", jerr.line, jerr.column, jerr.text);
	struct sandlock_policy *p = policy_new();
	if (!p) {
		json_decref(root);
		return error_set(reterr, -ENOMEM, "out of memory");
	}
	if (!json_is_object(root))
		r = error_set(reterr, -EINVAL, "a policy document is a JSON object");
	json_object_foreach(root, section, v)
	{
		if (r < 0)
			break;
		if (!schema_is_section(section) && strcmp(section, "runtime") != 0)
			r = error_set(
				reterr, -EINVAL,
				"unknown section '%s'; sections: config, determinism, program, "
				"filesystem, network, http, syscalls, limits, protections, "
				"runtime",
				section);
		else
			r = load_section(p, section, v, reterr);
	}
	json_decref(root);
	if (r == 0)
		r = schema_validate(p, reterr);
	if (r == 0 && check)
		r = check(p, reterr);
	if (r < 0) {
		policy_free(p);
		return r;
	}
	*ret = p;
	return 0;
}
