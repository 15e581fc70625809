/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * toml document grammar: expressions line by line, [table] and [[array]] headers, key =
 * value with dotted keys, arrays and inline tables, and TOML 1.0's definition rules, which
 * decide what a header or a dotted key may extend:
 *
 *   - a [header] defines its table once; a table that only exists as the parent of an earlier
 *     header ("implicit") may be defined by one later header;
 *   - a table made by dotted keys may hold sub-tables from headers but is never defined by one,
 *     and dotted keys may not reach into a table a header defined;
 *   - inline tables and arrays written as values are complete: nothing extends them;
 *   - [[header]] appends to an array of tables, and later headers go into its last element.
 *
 * Dotted keys may also pass through an implicit table ("[a.b.c]" then "[a]" and "b.d = 1"),
 * as toml_edit does; the table then counts as made by dotted keys and no header may define it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toml/toml-internal.h"

static int parse_value(struct toml_parser *p, unsigned depth, struct toml_value **ret);

/* Formats the first @n parts of @path ("a.b.c") for a message; control characters show as
 * '?' so that the message stays one line. */
static const char *path_name(const struct toml_path *path, size_t n, char *buf, size_t size)
{
	size_t k = 0;

	for (size_t i = 0; i < n && k + 1 < size; i++) {
		if (i > 0)
			buf[k++] = '.';
		for (size_t j = 0; j < path->parts[i].len && k + 1 < size; j++) {
			char c = path->parts[i].s[j];
			buf[k++] = (unsigned char)c < 0x20 || c == 0x7f ? '?' : c;
		}
	}
	buf[MIN(k, size - 1)] = '\0';
	return buf;
}

/* "an integer", "an inline table", ... for messages about what a key already holds. */
static const char *what_is(const struct toml_value *v)
{
	switch (v->type) {
	case TOML_TABLE:
		return v->flags & TOML_F_FROZEN ? "an inline table" : "a table";
	case TOML_ARRAY:
		return v->flags & TOML_F_AOT ? "an array of tables" : "an array";
	case TOML_INTEGER:
		return "an integer";
	case TOML_STRING:
		return "a string";
	case TOML_FLOAT:
		return "a float";
	case TOML_BOOL:
		return "a boolean";
	default:
		return "a datetime";
	}
}

/* An error about a key part, reported at the part: parts keep their line:column (the parser
 * is past them by now). */
_printf_(3, 4) static int fail_at_key(struct toml_parser *p, const struct toml_part *part,
				      const char *fmt, ...)
{
	va_list ap;

	if (p->err) {
		p->err->line = part->line;
		p->err->column = part->column;
		va_start(ap, fmt);
		vsnprintf(p->err->message, sizeof(p->err->message), fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int new_container(struct toml_parser *p, uint8_t type, unsigned depth, size_t off,
			 struct toml_value **ret)
{
	if (depth > TOML_MAX_DEPTH)
		return toml_fail(p, off, "nested deeper than %d levels", TOML_MAX_DEPTH);
	struct toml_value *v = toml_value_new(p, type, off);
	if (!v)
		return toml_oom(p);
	v->depth = (uint16_t)depth;
	*ret = v;
	return 0;
}

/* Adds a new table under @part of @t, with @flags. */
static int add_table(struct toml_parser *p, struct toml_value *t, struct toml_part *part,
		     uint8_t flags, struct toml_value **ret)
{
	struct toml_value *v = NULL;
	int r;

	if (t->depth + 1u > TOML_MAX_DEPTH)
		return fail_at_key(p, part, "key nested deeper than %d levels", TOML_MAX_DEPTH);
	r = new_container(p, TOML_TABLE, t->depth + 1u, p->pos, &v);
	if (r < 0)
		return r;
	/* The table starts where its key was written, not where the parser is now. */
	v->line = part->line;
	v->column = part->column;
	v->flags = flags;
	if (toml_table_add(t, part, v) < 0) {
		toml_free(v);
		return toml_oom(p);
	}
	*ret = v;
	return 0;
}

/* One step of a [header]'s path through parent @t: creates an implicit table, or goes into
 * an existing table or the last element of an array of tables. */
static int header_step(struct toml_parser *p, struct toml_value *t, struct toml_path *path,
		       size_t i, struct toml_value **ret)
{
	struct toml_part *part = &path->parts[i];
	struct toml_value *v = toml_table_find(t, part->s, part->len);
	char name[64];

	if (!v)
		return add_table(p, t, part, TOML_F_IMPLICIT, ret);
	if (v->type == TOML_ARRAY && (v->flags & TOML_F_AOT))
		v = v->array.items[v->array.n - 1];
	else if (v->type != TOML_TABLE || (v->flags & TOML_F_FROZEN))
		return fail_at_key(p, part, "'%s' is %s, which a [header] cannot extend",
				   path_name(path, i + 1, name, sizeof(name)), what_is(v));
	*ret = v;
	return 0;
}

/* The last key of [header]: defines a table. */
static int header_define(struct toml_parser *p, struct toml_value *t, struct toml_path *path,
			 struct toml_value **ret)
{
	struct toml_part *part = &path->parts[path->n - 1];
	struct toml_value *v = toml_table_find(t, part->s, part->len);
	char name[64];

	if (!v)
		return add_table(p, t, part, TOML_F_DEFINED, ret);
	path_name(path, path->n, name, sizeof(name));
	if (v->type != TOML_TABLE || (v->flags & TOML_F_FROZEN))
		return fail_at_key(p, part, "'%s' is already defined as %s", name, what_is(v));
	if (v->flags & TOML_F_DOTTED)
		return fail_at_key(p, part, "table '%s' is already defined by dotted keys", name);
	if (!(v->flags & TOML_F_IMPLICIT))
		return fail_at_key(p, part, "table '%s' is already defined", name);
	v->flags = TOML_F_DEFINED;
	*ret = v;
	return 0;
}

/* The last key of [[header]]: appends a table to an array of tables. */
static int header_append(struct toml_parser *p, struct toml_value *t, struct toml_path *path,
			 struct toml_value **ret)
{
	struct toml_part *part = &path->parts[path->n - 1];
	struct toml_value *a = toml_table_find(t, part->s, part->len), *v = NULL;
	char name[64];
	int r;

	if (!a) {
		/* The array and its tables: check both levels here, where the key is known. */
		if (t->depth + 2u > TOML_MAX_DEPTH)
			return fail_at_key(p, part, "key nested deeper than %d levels",
					   TOML_MAX_DEPTH);
		r = new_container(p, TOML_ARRAY, t->depth + 1u, p->pos, &a);
		if (r < 0)
			return r;
		a->line = part->line;
		a->column = part->column;
		a->flags = TOML_F_AOT;
		if (toml_table_add(t, part, a) < 0) {
			toml_free(a);
			return toml_oom(p);
		}
	} else if (a->type != TOML_ARRAY || !(a->flags & TOML_F_AOT))
		return fail_at_key(p, part, "'%s' is already defined as %s, not an array of tables",
				   path_name(path, path->n, name, sizeof(name)), what_is(a));
	r = new_container(p, TOML_TABLE, a->depth + 1u, p->pos, &v);
	if (r < 0)
		return r;
	v->line = part->line;
	v->column = part->column;
	v->flags = TOML_F_DEFINED;
	if (toml_array_push(a, v) < 0) {
		toml_free(v);
		return toml_oom(p);
	}
	*ret = v;
	return 0;
}

/* [a.b] or [[a.b]] at pos. */
static int parse_header(struct toml_parser *p)
{
	_cleanup_(toml_path_done) struct toml_path path = { 0 };
	bool aot = toml_peek_at(p, 1) == '[';
	struct toml_value *t = p->root;
	char d[32];
	int r;

	p->pos += aot ? 2 : 1;
	toml_skip_ws(p);
	r = toml_parse_key(p, &path);
	if (r < 0)
		return r;
	if (toml_peek(p) != ']' || (aot && toml_peek_at(p, 1) != ']'))
		return toml_fail(p, p->pos + (toml_peek(p) == ']'), "expected '%s', found %s",
				 aot ? "]]" : "]",
				 toml_describe(p, p->pos + (toml_peek(p) == ']'), d));
	p->pos += aot ? 2 : 1;

	for (size_t i = 0; i + 1 < path.n; i++) {
		r = header_step(p, t, &path, i, &t);
		if (r < 0)
			return r;
	}
	return aot ? header_append(p, t, &path, &p->cur) : header_define(p, t, &path, &p->cur);
}

/* One step of a dotted key through @t: creates a table, or goes into a table dotted keys may
 * extend. */
static int dotted_step(struct toml_parser *p, struct toml_value *t, struct toml_path *path,
		       size_t i, struct toml_value **ret)
{
	struct toml_part *part = &path->parts[i];
	struct toml_value *v = toml_table_find(t, part->s, part->len);
	char name[64];

	if (!v)
		return add_table(p, t, part, TOML_F_DOTTED, ret);
	if (v->type != TOML_TABLE || (v->flags & TOML_F_FROZEN))
		return fail_at_key(p, part, "'%s' is %s, which a dotted key cannot extend",
				   path_name(path, i + 1, name, sizeof(name)), what_is(v));
	if (v->flags & TOML_F_DEFINED)
		return fail_at_key(p, part,
				   "'%s' is a table defined by a [header], which a "
				   "dotted key cannot extend",
				   path_name(path, i + 1, name, sizeof(name)));
	if (v->flags & TOML_F_IMPLICIT)
		v->flags = TOML_F_DOTTED;
	*ret = v;
	return 0;
}

/* key = value at pos, into table @t. */
static int parse_keyval(struct toml_parser *p, struct toml_value *t)
{
	_cleanup_(toml_path_done) struct toml_path path = { 0 };
	struct toml_value *v = NULL;
	char d[32], name[64];
	int r;

	r = toml_parse_key(p, &path);
	if (r < 0)
		return r;
	if (toml_peek(p) != '=')
		return toml_fail(p, p->pos, "expected '=' after a key, found %s",
				 toml_describe(p, p->pos, d));
	p->pos++;
	toml_skip_ws(p);

	for (size_t i = 0; i + 1 < path.n; i++) {
		r = dotted_step(p, t, &path, i, &t);
		if (r < 0)
			return r;
	}
	struct toml_part *last = &path.parts[path.n - 1];
	if (toml_table_find(t, last->s, last->len))
		return fail_at_key(p, last, "duplicate key '%s'",
				   path_name(&path, path.n, name, sizeof(name)));
	r = parse_value(p, t->depth + 1u, &v);
	if (r < 0)
		return r;
	if (toml_table_add(t, last, v) < 0) {
		toml_free(v);
		return toml_oom(p);
	}
	return 0;
}

/* [ value, value, ] at pos: whitespace, comments and line ends anywhere between values. */
static int parse_array(struct toml_parser *p, unsigned depth, struct toml_value **ret)
{
	_cleanup_toml_free_ struct toml_value *a = NULL;
	char d[32];
	int r = new_container(p, TOML_ARRAY, depth, p->pos, &a);

	if (r < 0)
		return r;
	p->pos++;
	for (;;) {
		r = toml_skip_ws_comments_newlines(p);
		if (r < 0)
			return r;
		if (toml_peek(p) == ']')
			break;
		struct toml_value *v;
		r = parse_value(p, depth + 1, &v);
		if (r < 0)
			return r;
		if (toml_array_push(a, v) < 0) {
			toml_free(v);
			return toml_oom(p);
		}
		r = toml_skip_ws_comments_newlines(p);
		if (r < 0)
			return r;
		if (toml_peek(p) == ']')
			break;
		if (toml_peek(p) != ',')
			return toml_fail(p, p->pos, "expected ',' or ']' in an array, found %s",
					 toml_describe(p, p->pos, d));
		p->pos++;
	}
	p->pos++;
	*ret = TAKE_PTR(a);
	return 0;
}

/* { key = value, ... } at pos: on one line, no trailing comma (TOML 1.0). */
static int parse_inline_table(struct toml_parser *p, unsigned depth, struct toml_value **ret)
{
	_cleanup_toml_free_ struct toml_value *t = NULL;
	char d[32];
	int r = new_container(p, TOML_TABLE, depth, p->pos, &t);

	if (r < 0)
		return r;
	p->pos++;
	toml_skip_ws(p);
	if (toml_peek(p) == '}') {
		p->pos++;
		t->flags = TOML_F_FROZEN;
		*ret = TAKE_PTR(t);
		return 0;
	}
	for (;;) {
		r = parse_keyval(p, t);
		if (r < 0)
			return r;
		toml_skip_ws(p);
		int c = toml_peek(p);
		if (c == '}')
			break;
		if (c != ',')
			return toml_fail(p, p->pos,
					 "expected ',' or '}' in an inline table, found %s",
					 toml_describe(p, p->pos, d));
		p->pos++;
		toml_skip_ws(p);
		if (toml_peek(p) == '}')
			return toml_fail(p, p->pos, "trailing comma in an inline table");
	}
	p->pos++;
	/* Sub-tables made by dotted keys inside need no mark: every path to them goes through
	 * this table. */
	t->flags = TOML_F_FROZEN;
	*ret = TAKE_PTR(t);
	return 0;
}

static int parse_string_value(struct toml_parser *p, struct toml_value **ret)
{
	_cleanup_(toml_buf_done) struct toml_buf b = { 0 };
	size_t start = p->pos;
	int r = toml_parse_string(p, &b);

	if (r < 0)
		return r;
	struct toml_value *v = toml_value_new(p, TOML_STRING, start);
	if (!v)
		return toml_oom(p);
	v->string.s = TAKE_PTR(b.s);
	v->string.len = b.len;
	*ret = v;
	return 0;
}

static int parse_value(struct toml_parser *p, unsigned depth, struct toml_value **ret)
{
	switch (toml_peek(p)) {
	case '"':
	case '\'':
		return parse_string_value(p, ret);
	case '[':
		return parse_array(p, depth, ret);
	case '{':
		return parse_inline_table(p, depth, ret);
	default:
		return toml_parse_scalar(p, ret);
	}
}

static int parse_document(struct toml_parser *p)
{
	int r;

	while (p->pos < p->len) {
		toml_skip_ws(p);
		int c = toml_peek(p);
		if (c == '[')
			r = parse_header(p);
		else if (c == '#' || c == '\n' || c == '\r' || c < 0)
			r = 0;
		else
			r = parse_keyval(p, p->cur);
		if (r < 0)
			return r;
		r = toml_expect_eol(p);
		if (r < 0)
			return r;
	}
	return 0;
}

int toml_parse(const char *text, size_t len, struct toml_value **ret, struct toml_error *reterr)
{
	struct toml_error scratch;
	struct toml_parser p = {
		.buf = text,
		.len = len,
		.loc_line = 1,
		.loc_column = 1,
		.err = &scratch,
	};
	int r;

	if ((!text && len) || !ret) {
		if (reterr)
			*reterr = (struct toml_error){ .message = "invalid argument" };
		return -EINVAL;
	}
	if (!text)
		p.buf = "";
	scratch = (struct toml_error){ 0 };
	/* A UTF-8 byte order mark may start the document (and only start it); it takes no
	 * column. */
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		p.begin = p.pos = p.loc_off = 3;
	r = toml_validate_utf8(&p);
	if (r >= 0) {
		p.root = toml_value_new(&p, TOML_TABLE, p.pos);
		r = p.root ? 0 : toml_oom(&p);
	}
	if (r >= 0) {
		p.root->flags = TOML_F_DEFINED;
		p.cur = p.root;
		r = parse_document(&p);
	}
	if (p.c_locale)
		freelocale(p.c_locale);
	if (r < 0) {
		toml_free(p.root);
		if (reterr)
			*reterr = scratch;
		return r;
	}
	*ret = p.root;
	return 0;
}
