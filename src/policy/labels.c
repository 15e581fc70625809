/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * labels: what a message calls a field. By default a field is called by its name in the schema
 * ("fs_readable"), the name the setters, the JSON document's runtime section and the Python SDK
 * use. A program with its own spelling of the fields (the CLI's "--fs-read") gives each field
 * its label on the policy, and every error about the policy names the field that way. Messages
 * are written with the schema's names; error_relabel() rewrites the names a message starts
 * with, where the policy's errors leave the library. Pure: no syscalls.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema.h"

static const char *const unsupported_prefix = "not supported yet: ";

int policy_set_label(struct sandlock_policy *p, const struct field *f, const char *label)
{
	size_t i = (size_t)(f - schema_fields);
	char *c = NULL;

	if (label && !(c = strdup(label)))
		return -ENOMEM;
	if (!p->labels && !(p->labels = calloc(schema_n_fields, sizeof(char *)))) {
		free(c);
		return -ENOMEM;
	}
	free(p->labels[i]);
	p->labels[i] = c;
	return 0;
}

void policy_labels_free(struct sandlock_policy *p)
{
	for (size_t i = 0; p->labels && i < schema_n_fields; i++)
		free(p->labels[i]);
	free(p->labels);
	p->labels = NULL;
}

int policy_labels_copy(struct sandlock_policy *to, const struct sandlock_policy *from)
{
	to->labels = NULL;
	for (size_t i = 0; from->labels && i < schema_n_fields; i++)
		if (from->labels[i] && policy_set_label(to, &schema_fields[i], from->labels[i]) < 0)
			return -ENOMEM;
	return 0;
}

const char *schema_label(const struct sandlock_policy *p, const struct field *f)
{
	const char *l = p && p->labels ? p->labels[f - schema_fields] : NULL;
	return l ? l : f->name;
}

const char *schema_label_of(const struct sandlock_policy *p, const char *name)
{
	const struct field *f = schema_find(name);
	return f ? schema_label(p, f) : name;
}

/* The field @s starts with (a name up to ", ", ": ", " " or the end), its length in *@len. */
static const struct field *leading_field(const char *s, size_t *len)
{
	char name[64];
	size_t n = strcspn(s, ",: ");

	if (n == 0 || n >= sizeof(name))
		return NULL;
	memcpy(name, s, n);
	name[n] = '\0';
	*len = n;
	return schema_find(name);
}

/* @msg with the fields it starts with ("uid, gid: ...", "not supported yet: chroot, fs_mount")
 * called by their labels; NULL when nothing changes or on ENOMEM. A label the message already
 * gave (uid and gid are both --user) is said once. */
static char *relabel(const struct sandlock_policy *p, const char *msg)
{
	char *out = NULL;
	const char *last = NULL;
	size_t size = 0, n;
	FILE *f = open_memstream(&out, &size);
	const char *s = msg;
	int changed = 0;

	if (!f)
		return NULL;
	if (strncmp(s, unsupported_prefix, strlen(unsupported_prefix)) == 0) {
		fputs(unsupported_prefix, f);
		s += strlen(unsupported_prefix);
	}
	for (const struct field *fl; (fl = leading_field(s, &n));) {
		const char *label = schema_label(p, fl);
		changed |= strlen(label) != n || strncmp(label, s, n) != 0;
		if (last && strcmp(last, label) == 0)
			changed = 1;
		else
			fprintf(f, "%s%s", last ? ", " : "", label);
		last = label;
		s += n;
		if (strncmp(s, ", ", 2) != 0)
			break;
		s += 2;
	}
	fputs(s, f);
	if (fclose(f) != 0 || !changed) {
		free(out);
		return NULL;
	}
	return out;
}

void error_relabel(struct sandlock_error **e, const struct sandlock_policy *p)
{
	struct sandlock_error *n = NULL;

	if (!e || !*e || !p || !p->labels)
		return;
	char *msg = relabel(p, (*e)->message);
	if (!msg)
		return;
	if ((*e)->step)
		error_set_step(&n, (*e)->code, (*e)->step, "%s", msg);
	else
		error_set(&n, (*e)->code, "%s", msg);
	free(msg);
	if (!n)
		return;
	error_free(*e);
	*e = n;
}
