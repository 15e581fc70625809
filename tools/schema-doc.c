/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * schema-doc: writes docs/profile-schema.md on stdout from the schema table (src/policy/schema.c)
 * and the flag table of `sandlock run` (cli/options.c), plus the prose of each field below. The
 * section, key, Python name, type, range, flag and "supported yet" come from the tables; the
 * default, the example and the sentence come from here. Every example is loaded as a profile (or
 * a JSON document, for the runtime fields) and must set its field, so a wrong example fails the
 * build of the document. A field of the table without prose here, or prose without a field, is
 * an error: the document cannot fall behind the table. `make docs` runs it; a test compares.
 * Exits 0, or 1 with one line per problem on stderr. Deterministic: no time, no environment in
 * the output. A build tool; not installed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/schema.h"
#include "../cli/options.h"

/* The CLI's error printer lives beside its main(); the flag table refers to it. */
__attribute__((weak)) int cli_error(int code, const char *fmt, ...)
{
	return code;
}

struct field_doc {
	const char *field;   /* "section.key" */
	const char *def;     /* the default, as markdown */
	const char *example; /* a TOML value (JSON for runtime fields) */
	const char *what;    /* one or two sentences */
	const char *python;  /* the Python name where it is not the table's, or NULL */
	const char *flag;    /* a flag the CLI table does not name by field, or NULL */
	const char *needs;   /* TOML (JSON members) the example needs to load, or NULL */
};

#include "schema-doc-fields.h"

static const struct field_doc *doc_of(const struct field *f)
{
	char name[96];

	snprintf(name, sizeof(name), "%s.%s", f->section, f->key);
	for (size_t i = 0; i < n_field_docs; i++)
		if (strcmp(field_docs[i].field, name) == 0)
			return &field_docs[i];
	return NULL;
}

static const char *type_name(const struct field *f)
{
	switch (f->type) {
	case FT_STR:
	case FT_NAME:
		return "string";
	case FT_PATH:
		return "path (string)";
	case FT_PATHV:
	case FT_GRANTV:
		return "list of paths";
	case FT_STRV:
		return "list of strings";
	case FT_BOOL:
	case FT_NOBOOL:
		return "boolean";
	case FT_OPT_U64:
	case FT_NZ_U64:
		return "integer";
	case FT_SIZE:
		return "size: integer (bytes) or string (`\"512M\"`, `\"1G\"`, `\"100K\"`)";
	case FT_TIME:
		return "string (RFC 3339 with an offset) or integer (Unix seconds)";
	case FT_ACTION:
		return "string: `commit`, `abort`, `keep` or `defer`";
	case FT_ENV:
		return "table of strings";
	case FT_MOUNTV:
		return "list of strings `\"VIRTUAL:HOST\"` or `\"VIRTUAL:HOST:ro\"`";
	case FT_NETV:
		return "list of rules `[scheme://]host[:ports]`";
	case FT_NETDENYV:
		return "list of IPs and CIDRs";
	case FT_BINDV:
		return "list of ports (integers) and ranges (`\"9000-9005\"`), or `[\"*\"]`";
	case FT_HTTPV:
		return "list of rules `\"METHOD host/path\"`";
	case FT_PORTV:
		return "list of ports (integers)";
	case FT_U32V:
		return "list of integers";
	case FT_CPUSET:
		return "list of CPU numbers";
	case FT_PROTV:
		return "list of protection names";
	case FT_CREDV:
		return "list of strings `\"NAME=env:VAR\"`, `\"NAME=file:PATH\"`, `\"NAME=fd:N\"`";
	case FT_AUTHV:
		return "list of strings `\"METHOD HOST/PATH AUTH NAME [replace|add-only]\"`";
	}
	return "?";
}

/* The type, with the accepted range where the table gives one worth saying. */
static void put_type(const struct field *f)
{
	fputs(type_name(f), stdout);
	if (f->max && f->max < (uint64_t)INT64_MAX)
		printf(", %llu to %llu", (unsigned long long)f->min, (unsigned long long)f->max);
	if (f->flags & F_EXPAND)
		fputs(", `${HOME}` expanded", stdout);
}

/* The flags of `sandlock run` that set @f, "-r, --fs-read PATH". */
static void put_flags(const struct field *f, const struct field_doc *d)
{
	int n = 0;

	for (size_t i = 0; i < run_n_options; i++) {
		const struct run_option *o = &run_options[i];
		if (!o->field || strcmp(o->field, f->name) != 0)
			continue;
		printf("%s`", n++ ? ", " : "");
		if (o->short_name)
			printf("-%c`, `", o->short_name);
		printf("--%s%s%s`", o->name, o->meta ? " " : "", o->meta ? o->meta : "");
	}
	if (d->flag)
		printf("%s%s", n++ ? ", " : "", d->flag);
	if (!n)
		fputs("none", stdout);
}

/* Load the example as a document of its own; it must parse and set the field. */
static int check_example(const struct field *f, const struct field_doc *d)
{
	char text[1024];
	sandlock_policy_t *p = NULL;
	sandlock_error_t *err = NULL;
	int r;

	if (f->flags & F_RUNTIME) {
		snprintf(text, sizeof(text), "{\"runtime\": {\"%s\": %s}%s%s}", f->key, d->example,
			 d->needs ? ", " : "", d->needs ? d->needs : "");
		r = sandlock_policy_load_json(text, strlen(text), &p, &err);
	} else {
		snprintf(text, sizeof(text), "[%s]\n%s = %s\n%s", f->section, f->key, d->example,
			 d->needs ? d->needs : "");
		r = sandlock_policy_load_toml(text, strlen(text), &p, &err);
	}
	if (r < 0)
		fprintf(stderr, "schema-doc: the example of %s.%s does not load: %s\n", f->section,
			f->key, err ? sandlock_error_message(err) : "?");
	else if (!schema_is_set(p, f))
		fprintf(stderr, "schema-doc: the example of %s.%s leaves it at its default\n",
			f->section, f->key);
	int ok = r >= 0 && schema_is_set(p, f);
	sandlock_error_free(err);
	sandlock_policy_free(p);
	return ok ? 0 : -1;
}

static int check_docs(void)
{
	int bad = 0;

	for (size_t i = 0; i < schema_n_fields; i++) {
		const struct field *f = &schema_fields[i];
		const struct field_doc *d = doc_of(f);
		if (!d) {
			fprintf(stderr,
				"schema-doc: %s.%s has no entry in tools/schema-doc-fields.h (add "
				"its default, example and sentence)\n",
				f->section, f->key);
			bad = 1;
			continue;
		}
		if (check_example(f, d) < 0)
			bad = 1;
	}
	for (size_t i = 0; i < n_field_docs; i++)
		if (!schema_find(field_docs[i].field)) {
			fprintf(stderr,
				"schema-doc: %s is documented but not in the schema table\n",
				field_docs[i].field);
			bad = 1;
		}
	return bad ? -1 : 0;
}

static void put_field(const struct field *f, const struct field_doc *d)
{
	const char *python = d->python ? d->python : f->name;

	printf("### `%s.%s`\n\n%s\n\n", f->section, f->key, d->what);
	printf("- Python: %s%s%s\n", d->python ? "" : "`", python, d->python ? "" : "`");
	fputs("- Flag: ", stdout);
	put_flags(f, d);
	fputs("\n- Type: ", stdout);
	put_type(f);
	printf("\n- Default: %s\n", d->def);
	if (f->flags & F_RUNTIME)
		printf("- Example (JSON): `\"runtime\": {\"%s\": %s}`\n", f->key, d->example);
	else
		printf("- Example: `%s = %s`\n", f->key, d->example);
	printf("- Supported: %s\n\n", f->flags & F_SUPPORTED ? "yes" : "not yet");
}

static void put_section(const char *section, const char *title, const char *text)
{
	printf("## %s\n\n%s", title, text);
	for (size_t i = 0; i < schema_n_fields; i++)
		if (strcmp(schema_fields[i].section, section) == 0)
			put_field(&schema_fields[i], doc_of(&schema_fields[i]));
}

int main(void)
{
	char title[64];

	if (check_docs() < 0)
		return 1;
	fputs(intro, stdout);
	for (size_t i = 0; schema_sections[i]; i++) {
		snprintf(title, sizeof(title), "`[%s]`", schema_sections[i]);
		put_section(schema_sections[i], title, section_intro(schema_sections[i]));
	}
	put_section("runtime", "Runtime fields (JSON and Python only)", section_intro("runtime"));
	return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}
