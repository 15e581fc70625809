/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dump: a policy back out in the sectioned schema, as TOML (what a profile holds, for
 * `sandlock inspect --toml` and `profile show`) and as JSON (for programs). Only fields that
 * differ from their defaults are written, in schema order, so dump(load(x)) is canonical and
 * load(dump(p)) equals p.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse-util.h"
#include "profile.h"
#include "schema.h"
#include "strv.h"

/* ---- values common to both formats ------------------------------------------------------- */

/* "512M": the largest binary unit that divides the size, or plain bytes. */
/* The protection names (CLI form) a protection list holds. */
static size_t protections_of(const struct sandlock_policy *p, const struct field *f,
			     const char **names)
{
	uint8_t mode = strcmp(f->key, "disable") == 0 ? SANDLOCK_PROTECTION_DISABLED
						      : SANDLOCK_PROTECTION_DEGRADED;
	size_t n = 0;

	for (uint32_t i = 0; i < SANDLOCK_PROTECTION_COUNT; i++)
		if (p->protection[i] == mode)
			names[n++] = protection_table[i].cli_name;
	return n;
}

/* ---- TOML -------------------------------------------------------------------------------- */

static void toml_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(f, "\\%c", *c);
		else if (*c == '\n')
			fputs("\\n", f);
		else if (*c == '\t')
			fputs("\\t", f);
		else if (*c < 0x20 || *c == 0x7f)
			fprintf(f, "\\u%04x", *c);
		else
			fputc(*c, f);
	}
	fputc('"', f);
}

static int bare_key(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
			return 0;
	return 1;
}

static void toml_strv(FILE *f, char *const *v)
{
	fputc('[', f);
	for (size_t i = 0; v && v[i]; i++) {
		fputs(i ? ", " : "", f);
		toml_string(f, v[i]);
	}
	fputc(']', f);
}

static void toml_env(FILE *f, char *const *env)
{
	fputs("{ ", f);
	for (size_t i = 0; env && env[i]; i++) {
		const char *eq = strchr(env[i], '=');
		char *name = strndup(env[i], (size_t)(eq - env[i]));
		if (!name)
			continue;
		fputs(i ? ", " : "", f);
		if (bare_key(name))
			fputs(name, f);
		else
			toml_string(f, name);
		fputs(" = ", f);
		toml_string(f, eq + 1);
		free(name);
	}
	fputs(" }", f);
}

/* The end of the run of consecutive numbers starting at @i of sorted @v. Runs of three or more
 * are written "lo-hi" (as they may be given), so ports = ["1-65535"] stays one entry. */
static size_t run_end(const uint32_t *v, size_t n, size_t i)
{
	size_t j = i + 1;

	while (j < n && v[j] == v[j - 1] + 1)
		j++;
	return j - i >= 3 ? j : i + 1;
}

static void toml_u32v(FILE *f, const uint32_t *v, size_t n)
{
	fputc('[', f);
	for (size_t i = 0, j; i < n; i = j) {
		j = run_end(v, n, i);
		if (j - i > 1)
			fprintf(f, "%s\"%u-%u\"", i ? ", " : "", v[i], v[j - 1]);
		else
			fprintf(f, "%s%u", i ? ", " : "", v[i]);
	}
	fputc(']', f);
}

static void toml_cpus(FILE *f, const cpu_set_t *set)
{
	int first = 1;

	fputc('[', f);
	for (unsigned c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, set)) {
			fprintf(f, "%s%u", first ? "" : ", ", c);
			first = 0;
		}
	fputc(']', f);
}

static void toml_value(FILE *out, const struct sandlock_policy *p, const struct field *f)
{
	const void *slot = field_ptr(p, f);
	char buf[32];
	const char *names[SANDLOCK_PROTECTION_COUNT + 1] = { 0 };

	switch (f->type) {
	case FT_STR:
	case FT_PATH:
	case FT_NAME:
	case FT_TIME:
		toml_string(out, *(char *const *)slot);
		break;
	case FT_BOOL:
		fputs(*(const int *)slot ? "true" : "false", out);
		break;
	case FT_NOBOOL:
		fputs(*(const int *)slot ? "false" : "true", out);
		break;
	case FT_OPT_U64:
		fprintf(out, "%llu", (unsigned long long)((const struct opt_u64 *)slot)->v);
		break;
	case FT_SIZE:
		format_size(((const struct opt_u64 *)slot)->v, buf, sizeof(buf));
		toml_string(out, buf);
		break;
	case FT_NZ_U64:
		fprintf(out, "%llu", (unsigned long long)*(const uint64_t *)slot);
		break;
	case FT_ACTION:
		toml_string(out, schema_action_name(*(const uint8_t *)slot - 1u));
		break;
	case FT_ENV:
		toml_env(out, *(char **const *)slot);
		break;
	case FT_PORTV:
	case FT_U32V:
		toml_u32v(out, ((const struct opt_u32v *)slot)->v,
			  ((const struct opt_u32v *)slot)->n);
		break;
	case FT_CPUSET:
		toml_cpus(out, &p->cpu_cores);
		break;
	case FT_PROTV:
		protections_of(p, f, names);
		toml_strv(out, (char *const *)names);
		break;
	default:
		toml_strv(out, *(char **const *)slot);
		break;
	}
}

int profile_dump_toml(const struct sandlock_policy *p, char **ret)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&buf, &size);

	if (!out)
		return -ENOMEM;
	for (size_t s = 0; schema_sections[s]; s++) {
		int header = 0;
		for (size_t i = 0; i < schema_n_fields; i++) {
			const struct field *f = &schema_fields[i];
			if (strcmp(f->section, schema_sections[s]) != 0 || !schema_is_set(p, f))
				continue;
			if (!header)
				fprintf(out, "%s[%s]\n", ftell(out) ? "\n" : "", f->section);
			header = 1;
			fprintf(out, "%s = ", f->key);
			toml_value(out, p, f);
			fputc('\n', out);
		}
	}
	if (fclose(out) != 0) {
		free(buf);
		return -ENOMEM;
	}
	*ret = buf;
	return 0;
}

/* ---- JSON -------------------------------------------------------------------------------- */

static json_t *json_strv(char *const *v)
{
	json_t *a = json_array();

	for (size_t i = 0; a && v && v[i]; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

static json_t *json_env(char *const *env)
{
	json_t *o = json_object();

	for (size_t i = 0; o && env && env[i]; i++) {
		const char *eq = strchr(env[i], '=');
		char *name = strndup(env[i], (size_t)(eq - env[i]));
		if (name)
			json_object_set_new(o, name, json_string(eq + 1));
		free(name);
	}
	return o;
}

static json_t *json_u32v(const uint32_t *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0, j; a && i < n; i = j) {
		j = run_end(v, n, i);
		char range[24];
		snprintf(range, sizeof(range), "%u-%u", v[i], v[j - 1]);
		json_array_append_new(a, j - i > 1 ? json_string(range) : json_integer(v[i]));
	}
	return a;
}

static json_t *json_cpus(const cpu_set_t *set)
{
	json_t *a = json_array();

	for (unsigned c = 0; a && c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, set))
			json_array_append_new(a, json_integer(c));
	return a;
}

static json_t *json_value(const struct sandlock_policy *p, const struct field *f)
{
	const void *slot = field_ptr(p, f);
	char buf[32];
	const char *names[SANDLOCK_PROTECTION_COUNT + 1] = { 0 };

	switch (f->type) {
	case FT_STR:
	case FT_PATH:
	case FT_NAME:
	case FT_TIME:
		return json_string(*(char *const *)slot);
	case FT_BOOL:
		return json_boolean(*(const int *)slot);
	case FT_NOBOOL:
		return json_boolean(!*(const int *)slot);
	case FT_OPT_U64:
		return json_integer((json_int_t)((const struct opt_u64 *)slot)->v);
	case FT_SIZE:
		format_size(((const struct opt_u64 *)slot)->v, buf, sizeof(buf));
		return json_string(buf);
	case FT_NZ_U64:
		return json_integer((json_int_t) * (const uint64_t *)slot);
	case FT_ACTION:
		return json_string(schema_action_name(*(const uint8_t *)slot - 1u));
	case FT_ENV:
		return json_env(*(char **const *)slot);
	case FT_PORTV:
	case FT_U32V:
		return json_u32v(((const struct opt_u32v *)slot)->v,
				 ((const struct opt_u32v *)slot)->n);
	case FT_CPUSET:
		return json_cpus(&p->cpu_cores);
	case FT_PROTV:
		protections_of(p, f, names);
		return json_strv((char *const *)names);
	default:
		return json_strv(*(char **const *)slot);
	}
}

int profile_dump_json(const struct sandlock_policy *p, char **ret)
{
	json_t *root = json_object();

	if (!root)
		return -ENOMEM;
	for (size_t i = 0; i < schema_n_fields; i++) {
		const struct field *f = &schema_fields[i];
		if (!schema_is_set(p, f))
			continue;
		json_t *section = json_object_get(root, f->section);
		if (!section) {
			section = json_object();
			json_object_set_new(root, f->section, section);
		}
		json_object_set_new(section, f->key, json_value(p, f));
	}
	*ret = json_dumps(root, JSON_PRESERVE_ORDER | JSON_COMPACT);
	json_decref(root);
	return *ret ? 0 : -ENOMEM;
}
