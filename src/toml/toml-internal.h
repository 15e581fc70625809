/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * toml-internal: the value tree's layout and the parser state shared by the files of src/toml/
 * (value.c: the tree; lex.c: positions, errors, whitespace, comments, strings and keys;
 * scalar.c: numbers, booleans and datetimes; parse.c: the document grammar and TOML's
 * definition rules). Nothing outside src/toml/ includes it.
 */
#pragma once

#include <locale.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"
#include "toml/toml.h"

/* The deepest a table or array may sit below the root. It bounds the parser's recursion and the
 * recursion of everything that walks the tree (toml_free, encoders), whatever the input. */
#define TOML_MAX_DEPTH 128

/* Tables with more entries than this get a hash index, so that a table with many keys does
 * not make the duplicate check quadratic. */
#define TOML_INDEX_MIN 8

enum {
	/* Tables */
	TOML_F_IMPLICIT =
		1 << 0,		 /* created as a parent in a [header]; one [header] may define it */
	TOML_F_DEFINED = 1 << 1, /* defined by a [header] (or an element of [[header]]) */
	TOML_F_DOTTED = 1 << 2,	 /* created by a dotted key: no [header] may define it */
	TOML_F_FROZEN = 1 << 3,	 /* an inline table: complete when written */
	/* Arrays */
	TOML_F_AOT = 1 << 4, /* made by [[header]]: more [[header]]s append to it */
};

struct toml_entry {
	struct toml_key key; /* key.name is owned */
	struct toml_value *value;
};

struct toml_value {
	uint8_t type;
	uint8_t flags;
	uint16_t depth; /* 0 for the root */
	unsigned line, column;
	union {
		struct {
			struct toml_entry *entries;
			size_t n, cap;
			size_t *index; /* open addressing: entry number + 1, 0 when free */
			size_t index_cap;
		} table;
		struct {
			struct toml_value **items;
			size_t n, cap;
		} array;
		struct {
			char *s; /* NUL-terminated */
			size_t len;
		} string;
		int64_t integer;
		double fp;
		int boolean;
		struct toml_datetime dt;
	};
};

/* A growing byte buffer, always NUL-terminated once anything was appended. */
struct toml_buf {
	char *s;
	size_t len, cap;
};

/* One part of a (dotted) key, with the offset and position of its first character. */
struct toml_part {
	char *s; /* owned until handed to a table */
	size_t len;
	unsigned line, column;
};

struct toml_path {
	struct toml_part *parts;
	size_t n, cap;
};

struct toml_parser {
	const char *buf;
	size_t len, pos;
	size_t begin; /* where the document starts: after a byte order mark */
	struct toml_value *root;
	struct toml_value *cur; /* the table the next key = value goes into */
	locale_t c_locale;	/* for strtod_l(), made on the first float */
	/* The last position computed: the parser asks for positions in increasing order, so
	 * locating is linear over the whole input. */
	size_t loc_off;
	unsigned loc_line, loc_column;
	struct toml_error *err;
};

/* value.c */
struct toml_value *toml_value_new(struct toml_parser *p, uint8_t type, size_t off);
struct toml_value *toml_table_find(const struct toml_value *table, const char *key, size_t len);
/* Takes ownership of @part->s and of @v on success (then @part->s is NULL). -ENOMEM. */
int toml_table_add(struct toml_value *table, struct toml_part *part, struct toml_value *v);
/* Takes ownership of @v on success. -ENOMEM. */
int toml_array_push(struct toml_value *array, struct toml_value *v);

/* lex.c */
int toml_fail(struct toml_parser *p, size_t off, const char *fmt, ...) _printf_(3, 4);
int toml_oom(struct toml_parser *p);
void toml_locate(struct toml_parser *p, size_t off, unsigned *ret_line, unsigned *ret_column);
/* Describes the character at @off for an error message: "'x'", "U+000B", "end of line"... */
const char *toml_describe(const struct toml_parser *p, size_t off, char buf[static 32]);
int toml_validate_utf8(struct toml_parser *p);
void toml_skip_ws(struct toml_parser *p);
/* Skips whitespace, comments and newlines (inside arrays). */
int toml_skip_ws_comments_newlines(struct toml_parser *p);
/* The end of an expression: whitespace, an optional comment, then a newline or the end. */
int toml_expect_eol(struct toml_parser *p);
/* A key, dotted or not, with the whitespace around its dots; leaves pos after its last part. */
int toml_parse_key(struct toml_parser *p, struct toml_path *ret);
void toml_path_done(struct toml_path *path);
/* A string value of any of the four kinds, at a quote. */
int toml_parse_string(struct toml_parser *p, struct toml_buf *ret);
void toml_buf_done(struct toml_buf *b);

static inline int toml_peek(const struct toml_parser *p)
{
	return p->pos < p->len ? (unsigned char)p->buf[p->pos] : -1;
}

static inline int toml_peek_at(const struct toml_parser *p, size_t k)
{
	return k < p->len - p->pos ? (unsigned char)p->buf[p->pos + k] : -1;
}

static inline bool toml_is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* scalar.c */
/* A boolean, number or datetime at pos. */
int toml_parse_scalar(struct toml_parser *p, struct toml_value **ret);
