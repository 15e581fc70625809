/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * schema: the sectioned schema of the sandbox reference as one table. Each field appears once,
 * with its section and key (TOML, JSON), its Python name (the name errors use), its CLI flag, its
 * type, and whether its enforcement exists yet. The TOML and JSON loaders, the dumpers, the
 * generic setters of the C API and the CLI all go through this table, so a field means the same
 * thing everywhere. Pure: no syscalls (the ${HOME} expansion is done by the profile loader).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "policy.h"

enum field_type {
	FT_STR,	     /* char *: any string */
	FT_PATH,     /* char *: a path */
	FT_PATHV,    /* char **: paths */
	FT_GRANTV,   /* char **: paths made absolute (filesystem grants) */
	FT_STRV,     /* char **: strings (args, syscall names) */
	FT_BOOL,     /* int */
	FT_NOBOOL,   /* int, stored inverted (control_socket -> control_socket_off) */
	FT_OPT_U64,  /* struct opt_u64 */
	FT_SIZE,     /* struct opt_u64: bytes, written "512M", "1G" or as a number */
	FT_NZ_U64,   /* uint64_t, 0 = unset, 0 refused */
	FT_TIME,     /* char *: canonical RFC 3339 (UTC) */
	FT_ACTION,   /* uint8_t: enum branch_action */
	FT_ENV,	     /* char **: "NAME=VALUE" (a table in TOML/JSON) */
	FT_MOUNTV,   /* char **: "VIRTUAL:HOST[:ro]" */
	FT_NETV,     /* char **: outbound rules */
	FT_NETDENYV, /* char **: outbound deny rules (literal IPs/CIDRs) */
	FT_BINDV,    /* char **: TCP bind ports, "*" alone */
	FT_HTTPV,    /* char **: "METHOD host/path" */
	FT_PORTV,    /* struct opt_u32v: TCP ports */
	FT_U32V,     /* struct opt_u32v: numbers (gpu_devices) */
	FT_CPUSET,   /* has_cpu_cores + cpu_set_t */
	FT_PROTV,    /* protection names: writes protection[] */
	FT_NAME,     /* char *: the sandbox name */
	FT_CREDV,    /* char **: "NAME=env:VAR|file:PATH|fd:N" */
	FT_AUTHV,    /* char **: "METHOD HOST/PATH AUTH NAME [replace|add-only]" */
};

#define F_SUPPORTED (1u << 0) /* enforced: setting it is accepted at spawn */
#define F_RUNTIME (1u << 1)   /* not a profile key: JSON "runtime" section, CLI, setters */
#define F_EXPAND (1u << 2)    /* ${HOME} expanded in profiles */

struct field {
	const char *section; /* "limits" */
	const char *key;     /* "memory" */
	const char *name;    /* "max_memory": the Python field, and the name in messages */
	enum field_type type;
	size_t offset;
	uint32_t flags;
	uint64_t min, max; /* numbers: the accepted range */
};

extern const struct field schema_fields[];

/* Whether @f holds a list (an array in TOML and JSON). */
int schema_is_list(const struct field *f);
/* What a document must give for @f where the setters also take text ("true", "64"): "a
 * boolean" or "an integer"; NULL when a string is fine. Documents are typed. */
const char *schema_native_type(const struct field *f);
extern const size_t schema_n_fields;
extern const char *const schema_sections[];

/* Look a field up by "section.key" or by its Python name. NULL if unknown. */
const struct field *schema_find(const char *name);
const struct field *schema_find_key(const char *section, const char *key);
/* The keys of @section, comma-separated, for "allowed keys" messages. */
void schema_section_keys(const char *section, char *buf, size_t size);
int schema_is_section(const char *section);

/* A value from TOML, JSON or a command line. */
struct fvalue {
	enum { FV_STR, FV_INT, FV_BOOL } kind;
	const char *s;
	int64_t i;
	int b;
};

/* Set a scalar field, or append one entry to a list field (a string value for a list of numbers
 * may hold several, "0,2"; for env, "NAME=VALUE"). Validates and canonicalises; on failure the
 * policy is unchanged and *@reterr names the field. -EINVAL, -ERANGE, -ENOMEM. */
int schema_assign(struct sandlock_policy *p, const struct field *f, const struct fvalue *v,
		  struct sandlock_error **reterr);
/* Reset a field to its default (an empty list, unset). */
void schema_clear(struct sandlock_policy *p, const struct field *f);
/* Whether the field differs from its default. */
int schema_is_set(const struct sandlock_policy *p, const struct field *f);
/* Release everything the policy owns. */
void schema_free_all(struct sandlock_policy *p);

/* Checks across fields (uid with gid, http_ca with http_key, ...), each failure one line naming
 * the fields. -EINVAL. */
int schema_validate(const struct sandlock_policy *p, struct sandlock_error **reterr);
/* Refuse the first field that is set but not enforced yet: "not supported yet: <name>".
 * -EOPNOTSUPP. */
int schema_check_supported(const struct sandlock_policy *p, struct sandlock_error **reterr);

/* Accessors for the typed storage, for the dumpers. */
static inline void *field_ptr(const struct sandlock_policy *p, const struct field *f)
{
	return (char *)p + f->offset;
}

/* Action names: "commit", "abort", "keep", "defer". */
const char *schema_action_name(unsigned a);

/* Labels (labels.c): what messages call a field. */
/* Call @f @label (copied; NULL: its name) in the messages about @p. -ENOMEM. */
int policy_set_label(struct sandlock_policy *p, const struct field *f, const char *label);
void policy_labels_free(struct sandlock_policy *p);
int policy_labels_copy(struct sandlock_policy *to, const struct sandlock_policy *from);
/* The label of @f in @p (NULL @p: the field's name), and of the field named @name (@name
 * itself when it names none). Owned by @p or the schema. */
const char *schema_label(const struct sandlock_policy *p, const struct field *f);
const char *schema_label_of(const struct sandlock_policy *p, const char *name);
/* Rewrite the field names *@e starts with into @p's labels (unchanged when @p has none, or on
 * ENOMEM). */
void error_relabel(struct sandlock_error **e, const struct sandlock_policy *p);
