/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * profile: a TOML profile (the sectioned schema) into a policy. Parses with src/toml, walks the
 * tree against the schema, expands ${HOME} in path fields, and reports every problem as one line
 * with the line:column of the offending key or value. The policy is built apart and handed out
 * only when all of it loaded and validated.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "expand.h"
#include "fd-util.h"
#include "profile.h"
#include "schema.h"
#include "strv.h"
#include "toml/toml.h"

struct loader {
	struct sandlock_policy *p;
	struct sandlock_error **reterr;
	int under_chroot;
};

static int at_pos(struct loader *l, unsigned line, unsigned col, int code, const char *fmt, ...)
	_printf_(5, 6);

static int at_pos(struct loader *l, unsigned line, unsigned col, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return error_set(l->reterr, code, "%u:%u: %s", line, col, msg);
}

static int at_value(struct loader *l, const struct toml_value *v, int code, const char *msg)
{
	unsigned line = 0, col = 0;

	toml_position(v, &line, &col);
	return at_pos(l, line, col, code, "%s", msg);
}

/* A relative grant is relative to where sandlock runs, as on the command line. */
static int absolutize(const char *path, char **ret)
{
	if (path[0] == '/')
		return (*ret = strdup(path)) ? 0 : -ENOMEM;
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	if (!cwd)
		return negative_errno();
	if (asprintf(ret, "%s%s%s", cwd, strcmp(cwd, "/") == 0 ? "" : "/", path) < 0)
		return -ENOMEM;
	return 0;
}

/* ${HOME} in a path field (an error in every one of them under chroot, as the reference says);
 * each half of a mount entry on its own, so that "~" leading either half is caught. */
static int expand_field(struct loader *l, const struct field *f, const char *in, char **ret,
			char *err, size_t errlen)
{
	const char *colon = f->type == FT_MOUNTV ? strchr(in, ':') : NULL;

	if (!colon)
		return expand_home(in, l->under_chroot, ret, err, errlen);
	_cleanup_free_ char *virt = strndup(in, (size_t)(colon - in)), *v = NULL, *h = NULL;
	if (!virt)
		return -ENOMEM;
	int r = expand_home(virt, l->under_chroot, &v, err, errlen);
	if (r == 0)
		r = expand_home(colon + 1, l->under_chroot, &h, err, errlen);
	if (r == 0 && asprintf(ret, "%s:%s", v, h) < 0)
		r = -ENOMEM;
	return r;
}

static const char *article(const char *noun)
{
	return strchr("aeiou", noun[0]) ? "an" : "a";
}

/* One TOML value into one assignment (lists call this per item). */
static int load_scalar(struct loader *l, const struct field *f, const struct toml_value *v)
{
	struct fvalue fv = { .kind = FV_STR };
	_cleanup_free_ char *owned = NULL;
	char err[256] = "", dt[48];
	struct sandlock_error *e = NULL;
	size_t slen = 0;
	int r = 0;

	switch (toml_type(v)) {
	case TOML_STRING:
		if (schema_native_type(f)) {
			snprintf(err, sizeof(err), "%s: expected %s, not a string", f->name,
				 schema_native_type(f));
			return at_value(l, v, -EINVAL, err);
		}
		toml_get_string(v, &fv.s, &slen);
		if (strlen(fv.s) != slen) {
			snprintf(err, sizeof(err), "[%s] %s: a string with a NUL character",
				 f->section, f->key);
			return at_value(l, v, -EINVAL, err);
		}
		if (f->flags & F_EXPAND) {
			r = expand_field(l, f, fv.s, &owned, err, sizeof(err));
			if (r == 0 && f->type == FT_GRANTV && owned[0] != '/' && l->under_chroot) {
				/* Relative to what? The host's directory names no place in the
				 * jail. */
				snprintf(err, sizeof(err),
					 "a relative path under chroot: write it as it is inside "
					 "the jail");
				r = -EINVAL;
			} else if (r == 0 && f->type == FT_GRANTV) {
				char *abs = NULL;
				r = absolutize(owned, &abs);
				free(owned);
				owned = abs;
			}
			fv.s = owned;
		}
		break;
	case TOML_INTEGER:
		fv.kind = FV_INT;
		toml_get_integer(v, &fv.i);
		break;
	case TOML_BOOL:
		fv.kind = FV_BOOL;
		toml_get_bool(v, &fv.b);
		break;
	case TOML_DATETIME: /* an offset date-time is a time_start written bare */
		toml_datetime_format(v, dt, sizeof(dt));
		fv.s = dt;
		break;
	default:
		snprintf(err, sizeof(err), "[%s] %s: %s %s is not accepted here", f->section,
			 f->key, article(toml_type_name(toml_type(v))),
			 toml_type_name(toml_type(v)));
		return at_value(l, v, -EINVAL, err);
	}
	if (r < 0) {
		char msg[320];
		snprintf(msg, sizeof(msg), "[%s] %s: %s", f->section, f->key, err);
		return at_value(l, v, r, msg);
	}
	r = schema_assign(l->p, f, &fv, &e);
	if (r < 0)
		r = at_value(l, v, r, e ? e->message : strerror(-r));
	error_free(e);
	return r;
}

static int load_env(struct loader *l, const struct field *f, const struct toml_value *v)
{
	const struct toml_key *k;
	const struct toml_value *item;

	for (size_t i = 0; (item = toml_table_at(v, i, &k)); i++) {
		const char *s;
		size_t slen;
		if (toml_get_string(item, &s, &slen) < 0)
			return at_value(l, item, -EINVAL, "[program] env: values must be strings");
		if (strlen(s) != slen)
			return at_value(l, item, -EINVAL,
					"[program] env: a value with a NUL character");
		if (strlen(k->name) != k->len || strchr(k->name, '='))
			return at_pos(l, k->line, k->column, -EINVAL,
				      "[program] env: invalid variable name");
		_cleanup_free_ char *kv = NULL;
		if (asprintf(&kv, "%s=%s", k->name, s) < 0)
			return -ENOMEM;
		struct sandlock_error *e = NULL;
		struct fvalue fv = { .kind = FV_STR, .s = kv };
		int r = schema_assign(l->p, f, &fv, &e);
		if (r < 0)
			r = at_value(l, item, r, e ? e->message : strerror(-r));
		error_free(e);
		if (r < 0)
			return r;
	}
	return 0;
}

static int load_field(struct loader *l, const struct field *f, const struct toml_value *v)
{
	char msg[160];

	if (f->type == FT_ENV) {
		if (toml_type(v) != TOML_TABLE)
			return at_value(l, v, -EINVAL, "[program] env: expected a table");
		return load_env(l, f, v);
	}
	if (!schema_is_list(f))
		return load_scalar(l, f, v);
	if (toml_type(v) != TOML_ARRAY) {
		snprintf(msg, sizeof(msg), "[%s] %s: expected an array", f->section, f->key);
		return at_value(l, v, -EINVAL, msg);
	}
	/* gpu_devices = [] is every GPU, unlike unset; http ports = [] is the default (json.c). */
	if (f->type == FT_U32V)
		((struct opt_u32v *)field_ptr(l->p, f))->set = 1;
	const struct toml_value *item;
	for (size_t i = 0; (item = toml_array_at(v, i)); i++) {
		int r = load_scalar(l, f, item);
		if (r < 0)
			return r;
	}
	return 0;
}

static int load_section(struct loader *l, const char *section, const struct toml_value *table)
{
	const struct toml_key *k;
	const struct toml_value *v;

	for (size_t i = 0; (v = toml_table_at(table, i, &k)); i++) {
		const struct field *f = schema_find_key(section, k->name);
		if (!f || (f->flags & F_RUNTIME) || strlen(k->name) != k->len) {
			char keys[512];
			schema_section_keys(section, keys, sizeof(keys));
			return at_pos(l, k->line, k->column, -EINVAL,
				      "unknown key '%s' in [%s]; allowed: %s", k->name, section,
				      keys);
		}
		int r = load_field(l, f, v);
		if (r < 0)
			return r;
	}
	return 0;
}

/* A top-level entry that is not a known section. */
static int bad_top(struct loader *l, const struct toml_key *k, const struct toml_value *v)
{
	const struct field *f = schema_find(k->name);

	if (f && !(f->flags & F_RUNTIME))
		return at_pos(l, k->line, k->column, -EINVAL,
			      "'%s' is an old flat key; profiles use sections: write it as [%s] %s",
			      k->name, f->section, f->key);
	if (schema_is_section(k->name) && strlen(k->name) == k->len)
		return at_pos(l, k->line, k->column, -EINVAL,
			      "'%s' must be a table ([%s]), not %s %s", k->name, k->name,
			      article(toml_type_name(toml_type(v))), toml_type_name(toml_type(v)));
	if (strcmp(k->name, "runtime") == 0 || (f && (f->flags & F_RUNTIME)))
		return at_pos(
			l, k->line, k->column, -EINVAL,
			"'%s' is not a profile key: the sandbox name and the runtime settings "
			"are given when it is created",
			k->name);
	return at_pos(l, k->line, k->column, -EINVAL,
		      "unknown section '%s'; sections: config, determinism, program, filesystem, "
		      "network, http, syscalls, limits, protections",
		      k->name);
}

/* The checks that span fields, and @check. Their messages start with the field to blame
 * ("uid, gid: ..."): the error gets the line:column of that field's key. */
static int validate_at(const struct toml_value *root, const struct sandlock_policy *p,
		       profile_check_fn check, struct sandlock_error **reterr)
{
	struct sandlock_error *e = NULL;
	char name[64];
	const struct toml_key *k;

	int r = schema_validate(p, &e);
	if (r == 0 && check)
		r = check(p, &e);
	if (r == 0)
		return 0;
	if (!e)
		return error_set(reterr, r, "%s", strerror(-r));
	/* The fields named before the ':' ("uid, gid: ..."), the first one the profile sets. */
	size_t end = strcspn(e->message, ":");
	for (const char *c = e->message; c < e->message + end;) {
		size_t n = strcspn(c, ",:");
		snprintf(name, sizeof(name), "%.*s", (int)MIN(n, sizeof(name) - 1), c);
		const struct field *f = schema_find(name);
		const struct toml_value *section = f ? toml_table_get(root, f->section) : NULL;
		for (size_t i = 0; section && toml_table_at(section, i, &k); i++)
			if (strcmp(k->name, f->key) == 0) {
				r = error_set(reterr, r, "%u:%u: %s", k->line, k->column,
					      e->message);
				error_free(e);
				return r;
			}
		c += n;
		while (*c == ',' || *c == ' ')
			c++;
	}
	r = error_set(reterr, r, "%s", e->message);
	error_free(e);
	return r;
}

int profile_load_toml(const char *text, size_t len, profile_check_fn check,
		      struct sandlock_policy **ret, struct sandlock_error **reterr)
{
	_cleanup_toml_free_ struct toml_value *root = NULL;
	struct toml_error terr;

	int r = toml_parse(text, len, &root, &terr);
	if (r < 0)
		return r == -ENOMEM ? error_set(reterr, r, "out of memory")
				    : error_set(reterr, r, "%u:%u: %s", terr.line, terr.column,
						terr.message);
	struct sandlock_policy *p = policy_new();
	if (!p)
		return error_set(reterr, -ENOMEM, "out of memory");
	struct loader l = {
		.p = p,
		.reterr = reterr,
		.under_chroot =
			toml_table_get(toml_table_get(root, "filesystem"), "chroot") != NULL,
	};
	const struct toml_key *k;
	const struct toml_value *v;
	for (size_t i = 0; r == 0 && (v = toml_table_at(root, i, &k)); i++) {
		if (toml_type(v) != TOML_TABLE || strlen(k->name) != k->len ||
		    !schema_is_section(k->name))
			r = bad_top(&l, k, v);
		else
			r = load_section(&l, k->name, v);
	}
	if (r == 0)
		r = validate_at(root, p, check, reterr);
	if (r < 0) {
		policy_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

#define PROFILE_MAX (1 << 20)

int profile_load_toml_file(const char *path, profile_check_fn check, struct sandlock_policy **ret,
			   struct sandlock_error **reterr)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return error_set(reterr, negative_errno(), "%s: %s", path, strerror(errno));
	/* One byte more than the limit: reading it means the file is over. */
	_cleanup_free_ char *buf = malloc(PROFILE_MAX + 1);
	if (!buf)
		return error_set(reterr, -ENOMEM, "out of memory");
	size_t len = 0;
	for (ssize_t n; (n = read(fd, buf + len, PROFILE_MAX + 1 - len)) != 0; len += (size_t)n) {
		if (n < 0 && errno == EINTR)
			n = 0;
		else if (n < 0)
			return error_set(reterr, negative_errno(), "%s: %s", path, strerror(errno));
		if (len + (size_t)n > PROFILE_MAX)
			return error_set(reterr, -EFBIG, "%s: larger than 1 MiB", path);
	}
	struct sandlock_error *e = NULL;
	int r = profile_load_toml(buf, len, check, ret, &e);
	if (r < 0)
		error_set(reterr, r, "%s:%s", path, e ? e->message : strerror(-r));
	error_free(e);
	return r;
}
