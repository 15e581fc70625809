/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * toml: the in-house TOML 1.0 parser (conformance-tested with toml-test). It owns one pure
 * function from a buffer to a value tree, the tree's accessors and its destructor. It makes no
 * syscalls, keeps no globals, never logs and never reads past the @len bytes it is given (the
 * input needs no NUL terminator). Policy meaning is not its business: the profile loader walks
 * the tree and reports unknown keys with the line:column every table entry keeps.
 *
 * Accessors accept NULL and values of the wrong type (they return NULL, 0 or -EINVAL), so that
 * lookups chain: toml_table_get(toml_table_get(root, "network"), "allow_hosts").
 *
 * Where TOML 1.0 leaves room: CRLF inside multi-line strings is stored as LF; fractional seconds
 * are kept to nanoseconds (more digits are accepted and dropped); a float that overflows to
 * infinity is an error, one that underflows reads as 0 or a subnormal; a second of 60 is
 * accepted (RFC 3339 leap seconds); dotted keys may extend a table that so far only exists as the
 * parent of a [header]; tables and arrays nest at most 128 deep (TOML_MAX_DEPTH).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "macro.h"

enum toml_type {
	TOML_NONE = 0, /* what toml_type(NULL) returns */
	TOML_TABLE,
	TOML_ARRAY,
	TOML_STRING,
	TOML_INTEGER,
	TOML_FLOAT,
	TOML_BOOL,
	TOML_DATETIME,	     /* offset date-time: 1979-05-27T07:32:00Z, ...-07:00 */
	TOML_DATETIME_LOCAL, /* 1979-05-27T07:32:00 */
	TOML_DATE_LOCAL,     /* 1979-05-27 */
	TOML_TIME_LOCAL,     /* 07:32:00.999 */
};

/* Filled by toml_parse() on failure only. @line and @column are 1-based and point at the
 * offending character; @column counts characters (UTF-8 sequences), not bytes. @message is one
 * line without the position, e.g. "duplicate key 'name'". */
struct toml_error {
	unsigned line, column;
	char message[160];
};

/* The components of the four datetime kinds. A date-local has no time, a time-local no date
 * (those fields are 0); only TOML_DATETIME has an offset. */
struct toml_datetime {
	int year, month, day;
	int hour, minute, second; /* second may be 60 (a leap second, as RFC 3339 allows) */
	uint32_t nanosecond;	  /* the fraction, truncated to nanoseconds */
	unsigned frac_digits;	  /* fraction digits as written, at most 9 (0: no fraction) */
	int offset_minutes;	  /* east of UTC, -1439..1439 */
	int offset_z;		  /* written as "Z" rather than as a numeric offset */
};

/* A table entry's key. @name is NUL-terminated but may itself contain NULs ("\u0000" is a legal
 * key), so @len is the length. @line:@column is where the key was first written: the key of a
 * [header], of a dotted key part, or of a key = value. */
struct toml_key {
	const char *name;
	size_t len;
	unsigned line, column;
};

struct toml_value;

/* Parses the @len bytes at @text (UTF-8, an optional BOM, LF or CRLF line ends; no terminator
 * needed, and a NUL byte inside @len is an error). On success returns 0 and stores the root
 * table in *@ret (the caller owns it: toml_free()); *@reterr is untouched. On failure returns
 * -EINVAL (a syntax or semantic error: *@reterr says where and why; or @ret NULL, or @text NULL
 * with a non-zero @len: then the position is 0:0) or -ENOMEM (*@reterr says "out of memory"),
 * and *@ret is untouched. @reterr may be NULL. Reads nothing but @text: no locale, no globals
 * (floats are converted with strtod_l() in the C locale). */
int toml_parse(const char *text, size_t len, struct toml_value **ret, struct toml_error *reterr);

/* Frees a tree returned by toml_parse(). Accepts NULL. */
void toml_free(struct toml_value *v);
static inline void toml_freep(struct toml_value **v)
{
	toml_free(*v);
}
#define _cleanup_toml_free_ _cleanup_(toml_freep)

enum toml_type toml_type(const struct toml_value *v);
/* "table", "array", "string", "integer", "float", "bool", "datetime", "datetime-local",
 * "date-local", "time-local" (the toml-test tags), "none" for TOML_NONE. */
const char *toml_type_name(enum toml_type type);
/* Where the value starts in the input (for a table made by a header or a dotted key: where
 * its key was first written). -EINVAL for NULL. */
int toml_position(const struct toml_value *v, unsigned *ret_line, unsigned *ret_column);

/* Tables keep their entries in the order the keys were first written. */
size_t toml_table_size(const struct toml_value *table);
/* The value under @key (NUL-terminated), or NULL. */
const struct toml_value *toml_table_get(const struct toml_value *table, const char *key);
/* The same for a key of @len bytes that may contain NULs. */
const struct toml_value *toml_table_getn(const struct toml_value *table, const char *key,
					 size_t len);
/* Entry @i (0-based) of @table: its value, and its key in *@ret_key when @ret_key is not
 * NULL. NULL when @i is out of range. Both point into the tree. */
const struct toml_value *toml_table_at(const struct toml_value *table, size_t i,
				       const struct toml_key **ret_key);

size_t toml_array_size(const struct toml_value *array);
/* Item @i (0-based) of @array, or NULL. */
const struct toml_value *toml_array_at(const struct toml_value *array, size_t i);

/* Scalars: 0 and the value, or -EINVAL when @v is NULL or of another type (then the out
 * parameters are untouched). The string points into the tree (NUL-terminated, may contain
 * NULs: *@ret_len is its length; @ret_len may be NULL). */
int toml_get_string(const struct toml_value *v, const char **ret, size_t *ret_len);
int toml_get_integer(const struct toml_value *v, int64_t *ret);
int toml_get_float(const struct toml_value *v, double *ret);
int toml_get_bool(const struct toml_value *v, int *ret);
/* Any of the four datetime kinds (toml_type() says which). */
int toml_get_datetime(const struct toml_value *v, struct toml_datetime *ret);

/* Prints a datetime value back in RFC 3339 form ("T" separator, the fraction with the digits
 * written, "Z" or "+hh:mm"). Returns the length snprintf() would, or -EINVAL when @v is not a
 * datetime. 40 bytes always suffice. */
int toml_datetime_format(const struct toml_value *v, char *buf, size_t size);
