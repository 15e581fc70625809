/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-toml: toml_parse over arbitrary bytes (exactly @size of them, no terminator). On failure:
 * the errno is -EINVAL or -ENOMEM and the report is one non-empty line at a position inside the
 * input. On success the whole tree is walked twice: once into tagged JSON (every accessor, every
 * key looked up again through its table's index), once back into TOML, which must parse again
 * to the same JSON. The trees are freed; leaks are the sanitizers' to find.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toml/toml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct out {
	char *s;
	size_t len, cap;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->cap - o->len <= n) {
		while (o->cap - o->len <= n)
			o->cap = o->cap ? o->cap * 2 : 256;
		o->s = realloc(o->s, o->cap);
		if (!o->s)
			abort();
	}
	memcpy(o->s + o->len, s, n);
	o->len += n;
	o->s[o->len] = '\0';
}

static void __attribute__((format(printf, 2, 3))) putf(struct out *o, const char *fmt, ...)
{
	char buf[128];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		abort();
	put(o, buf, (size_t)n);
}

/* A quoted string with every byte below 0x20, '"', '\\' and 0x7f escaped: valid as JSON and as
 * a TOML basic string. */
static void put_quoted(struct out *o, const char *s, size_t len)
{
	put(o, "\"", 1);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = s[i];
		if (c < 0x20 || c == 0x7f)
			putf(o, "\\u%04x", c);
		else if (c == '"' || c == '\\')
			putf(o, "\\%c", c);
		else
			put(o, (const char *)&c, 1);
	}
	put(o, "\"", 1);
}

static void put_float(struct out *o, double d)
{
	if (isnan(d))
		putf(o, "nan");
	else if (isinf(d))
		putf(o, "%sinf", d < 0 ? "-" : "");
	else {
		char buf[64];
		snprintf(buf, sizeof(buf), "%.17g", d);
		/* TOML needs a '.' or an exponent to read a float back. */
		putf(o, "%s%s", buf, strpbrk(buf, ".e") ? "" : ".0");
	}
}

static void put_scalar(struct out *o, const struct toml_value *v)
{
	char buf[64];
	const char *s;
	size_t len;
	int64_t i;
	double d;
	int b;

	switch (toml_type(v)) {
	case TOML_STRING:
		if (toml_get_string(v, &s, &len) < 0 || s[len] != '\0')
			abort();
		put_quoted(o, s, len);
		return;
	case TOML_INTEGER:
		if (toml_get_integer(v, &i) < 0)
			abort();
		putf(o, "%lld", (long long)i);
		return;
	case TOML_FLOAT:
		if (toml_get_float(v, &d) < 0)
			abort();
		put_float(o, d);
		return;
	case TOML_BOOL:
		if (toml_get_bool(v, &b) < 0 || (b != 0 && b != 1))
			abort();
		putf(o, "%s", b ? "true" : "false");
		return;
	default: {
		struct toml_datetime dt;
		if (toml_get_datetime(v, &dt) < 0)
			abort();
		int n = toml_datetime_format(v, buf, sizeof(buf));
		if (n <= 0 || (size_t)n >= 40)
			abort();
		put(o, buf, (size_t)n);
	}
	}
}

/* JSON (@toml 0) or TOML inline syntax (@toml 1) for @v. */
static void put_value(struct out *o, const struct toml_value *v, int toml)
{
	const struct toml_key *key;
	const struct toml_value *item;

	switch (toml_type(v)) {
	case TOML_TABLE:
		put(o, "{", 1);
		for (size_t i = 0; (item = toml_table_at(v, i, &key)); i++) {
			if (key->line < 1 || key->column < 1 || key->name[key->len] != '\0')
				abort();
			if (toml_table_getn(v, key->name, key->len) != item)
				abort(); /* the index must find every key, and find it once */
			put(o, i ? ", " : " ", i ? 2 : 1);
			put_quoted(o, key->name, key->len);
			put(o, toml ? " = " : ": ", toml ? 3 : 2);
			put_value(o, item, toml);
		}
		if (toml_table_at(v, toml_table_size(v), NULL))
			abort();
		put(o, " }", 2);
		break;
	case TOML_ARRAY:
		put(o, "[", 1);
		for (size_t i = 0; (item = toml_array_at(v, i)); i++) {
			put(o, i ? ", " : " ", i ? 2 : 1);
			put_value(o, item, toml);
		}
		if (toml_array_at(v, toml_array_size(v)))
			abort();
		put(o, " ]", 2);
		break;
	case TOML_NONE:
		abort();
	default:
		if (toml) {
			put_scalar(o, v);
			break;
		}
		putf(o, "{\"type\": \"%s\", \"value\": \"", toml_type_name(toml_type(v)));
		struct out inner = { 0 };
		put_scalar(&inner, v);
		if (toml_type(v) == TOML_STRING)
			put(o, inner.s + 1, inner.len - 2); /* already quoted */
		else
			put(o, inner.s, inner.len);
		free(inner.s);
		put(o, "\"}", 2);
	}
}

/* The root as a TOML document: one "key" = value line per entry. */
static void put_document(struct out *o, const struct toml_value *root)
{
	const struct toml_key *key;
	const struct toml_value *item;

	for (size_t i = 0; (item = toml_table_at(root, i, &key)); i++) {
		put_quoted(o, key->name, key->len);
		put(o, " = ", 3);
		put_value(o, item, 1);
		put(o, "\n", 1);
	}
}

static void check_error(const struct toml_error *err, const uint8_t *data, size_t size)
{
	size_t lines = 1;

	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	if (err->line < 1 || err->line > lines || err->column < 1 || err->column > size + 1)
		abort();
	if (!err->message[0] || strchr(err->message, '\n'))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct toml_error err = { 0 };
	struct toml_value *root = NULL, *again = NULL;
	struct out json = { 0 }, toml = { 0 }, json2 = { 0 };

	int r = toml_parse((const char *)data, size, &root, &err);
	if (r == -ENOMEM)
		return 0;
	if (r < 0) {
		if (r != -EINVAL || root)
			abort();
		check_error(&err, data, size);
		return 0;
	}
	put_value(&json, root, 0);
	put_document(&toml, root);
	if (toml_parse(toml.s ? toml.s : "", toml.len, &again, &err) < 0) {
		fprintf(stderr, "re-encoded TOML does not parse: %u:%u: %s\n%s\n", err.line,
			err.column, err.message, toml.s);
		abort();
	}
	put_value(&json2, again, 0);
	if (strcmp(json.s, json2.s) != 0) {
		fprintf(stderr, "round trip differs:\n%s\n%s\n", json.s, json2.s);
		abort();
	}
	toml_free(root);
	toml_free(again);
	free(json.s);
	free(json2.s);
	free(toml.s);
	return 0;
}
