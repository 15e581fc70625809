/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * toml-decode: the toml-test decoder for src/toml. Reads TOML on stdin and prints the value as
 * toml-test's tagged JSON on stdout (tables as objects, arrays as arrays, every scalar as
 * {"type": T, "value": "text"}). Exits 0, or 1 with "line:column: message" on stderr when the
 * input does not parse (2 when stdin cannot be read or memory runs out). A build tool for
 * tests/toml/run-toml-test; not installed.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "toml/toml.h"

static void put_json_string(const char *s, size_t len)
{
	putchar('"');
	for (size_t i = 0; i < len; i++) {
		unsigned char c = s[i];
		switch (c) {
		case '"':
			fputs("\\\"", stdout);
			break;
		case '\\':
			fputs("\\\\", stdout);
			break;
		case '\n':
			fputs("\\n", stdout);
			break;
		case '\t':
			fputs("\\t", stdout);
			break;
		default:
			/* The parser has validated the UTF-8; only controls need escaping. */
			if (c < 0x20 || c == 0x7f)
				printf("\\u%04x", c);
			else
				putchar(c);
		}
	}
	putchar('"');
}

/* The shortest %g form that reads back as the same double. */
static void format_float(double d, char *buf, size_t size)
{
	if (isnan(d)) {
		snprintf(buf, size, "nan");
		return;
	}
	if (isinf(d)) {
		snprintf(buf, size, "%sinf", d < 0 ? "-" : "");
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, size, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			return;
	}
}

static void put_scalar(const struct toml_value *v)
{
	char buf[64];
	const char *s;
	size_t len = 0;
	int64_t i;
	double d;
	int b;

	switch (toml_type(v)) {
	case TOML_STRING:
		toml_get_string(v, &s, &len);
		break;
	case TOML_INTEGER:
		toml_get_integer(v, &i);
		snprintf(buf, sizeof(buf), "%lld", (long long)i);
		s = buf;
		len = strlen(buf);
		break;
	case TOML_FLOAT:
		toml_get_float(v, &d);
		format_float(d, buf, sizeof(buf));
		s = buf;
		len = strlen(buf);
		break;
	case TOML_BOOL:
		toml_get_bool(v, &b);
		s = b ? "true" : "false";
		len = strlen(s);
		break;
	default:
		toml_datetime_format(v, buf, sizeof(buf));
		s = buf;
		len = strlen(buf);
		break;
	}
	printf("{\"type\": \"%s\", \"value\": ", toml_type_name(toml_type(v)));
	put_json_string(s, len);
	putchar('}');
}

/* Recursion is bounded by the parser's nesting limit. */
static void put_value(const struct toml_value *v)
{
	const struct toml_key *key;
	const struct toml_value *item;

	switch (toml_type(v)) {
	case TOML_TABLE:
		putchar('{');
		for (size_t i = 0; (item = toml_table_at(v, i, &key)); i++) {
			if (i)
				putchar(',');
			put_json_string(key->name, key->len);
			putchar(':');
			put_value(item);
		}
		putchar('}');
		break;
	case TOML_ARRAY:
		putchar('[');
		for (size_t i = 0; (item = toml_array_at(v, i)); i++) {
			if (i)
				putchar(',');
			put_value(item);
		}
		putchar(']');
		break;
	default:
		put_scalar(v);
	}
}

static int read_all(int fd, char **ret, size_t *ret_len)
{
	size_t len = 0, cap = 0;
	char *buf = NULL;

	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			char *t = realloc(buf, cap);
			if (!t) {
				free(buf);
				return -ENOMEM;
			}
			buf = t;
		}
		ssize_t k = read(fd, buf + len, cap - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int r = -errno;
			free(buf);
			return r;
		}
		if (k == 0)
			break;
		len += (size_t)k;
	}
	*ret = buf;
	*ret_len = len;
	return 0;
}

int main(void)
{
	struct toml_error err;
	struct toml_value *root = NULL;
	char *text = NULL;
	size_t len = 0;
	int r;

	r = read_all(STDIN_FILENO, &text, &len);
	if (r < 0) {
		fprintf(stderr, "toml-decode: reading stdin: %s\n", strerror(-r));
		return 2;
	}
	r = toml_parse(text, len, &root, &err);
	free(text);
	if (r == -ENOMEM) {
		fprintf(stderr, "toml-decode: out of memory\n");
		return 2;
	}
	if (r < 0) {
		fprintf(stderr, "%u:%u: %s\n", err.line, err.column, err.message);
		return 1;
	}
	put_value(root);
	putchar('\n');
	toml_free(root);
	return fflush(stdout) == 0 ? 0 : 2;
}
