/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * toml value tree: allocation, the ordered tables with their hash index, arrays, the
 * destructor and every read accessor of toml.h. It knows nothing of TOML's syntax; the
 * definition rules (what may extend what) live in parse.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toml/toml-internal.h"

struct toml_value *toml_value_new(struct toml_parser *p, uint8_t type, size_t off)
{
	struct toml_value *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->type = type;
	toml_locate(p, off, &v->line, &v->column);
	return v;
}

void toml_free(struct toml_value *v)
{
	if (!v)
		return;
	/* Recursion is bounded: nothing is created deeper than TOML_MAX_DEPTH. */
	switch (v->type) {
	case TOML_TABLE:
		for (size_t i = 0; i < v->table.n; i++) {
			free((char *)v->table.entries[i].key.name);
			toml_free(v->table.entries[i].value);
		}
		free(v->table.entries);
		free(v->table.index);
		break;
	case TOML_ARRAY:
		for (size_t i = 0; i < v->array.n; i++)
			toml_free(v->array.items[i]);
		free(v->array.items);
		break;
	case TOML_STRING:
		free(v->string.s);
		break;
	default:
		break;
	}
	free(v);
}

/* FNV-1a: keys are short and the index only has to spread them. */
static size_t key_hash(const char *key, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)key[i];
		h *= 0x100000001b3ULL;
	}
	return (size_t)(h ^ (h >> 32));
}

static bool key_equal(const struct toml_key *k, const char *key, size_t len)
{
	return k->len == len && memcmp(k->name, key, len) == 0;
}

static void index_insert(size_t *index, size_t cap, const struct toml_key *k, size_t entry)
{
	size_t i = key_hash(k->name, k->len) & (cap - 1);

	while (index[i])
		i = (i + 1) & (cap - 1);
	index[i] = entry + 1;
}

/* Keeps the index at most half full; builds it once the table outgrows a linear scan. */
static int index_grow(struct toml_value *t)
{
	size_t need = t->table.n + 1;

	if (need <= TOML_INDEX_MIN || need * 2 <= t->table.index_cap)
		return 0;
	size_t cap = t->table.index_cap ? t->table.index_cap * 2 : 4 * TOML_INDEX_MIN;
	while (need * 2 > cap)
		cap *= 2;
	size_t *index = calloc(cap, sizeof(*index));
	if (!index)
		return -ENOMEM;
	for (size_t i = 0; i < t->table.n; i++)
		index_insert(index, cap, &t->table.entries[i].key, i);
	free(t->table.index);
	t->table.index = index;
	t->table.index_cap = cap;
	return 0;
}

struct toml_value *toml_table_find(const struct toml_value *t, const char *key, size_t len)
{
	if (!t->table.index) {
		for (size_t i = 0; i < t->table.n; i++)
			if (key_equal(&t->table.entries[i].key, key, len))
				return t->table.entries[i].value;
		return NULL;
	}
	size_t mask = t->table.index_cap - 1;
	for (size_t i = key_hash(key, len) & mask; t->table.index[i]; i = (i + 1) & mask) {
		const struct toml_entry *e = &t->table.entries[t->table.index[i] - 1];
		if (key_equal(&e->key, key, len))
			return e->value;
	}
	return NULL;
}

int toml_table_add(struct toml_value *t, struct toml_part *part, struct toml_value *v)
{
	if (t->table.n == t->table.cap) {
		size_t cap = t->table.cap ? t->table.cap * 2 : 4;
		struct toml_entry *e = reallocarray(t->table.entries, cap, sizeof(*e));
		if (!e)
			return -ENOMEM;
		t->table.entries = e;
		t->table.cap = cap;
	}
	if (index_grow(t) < 0)
		return -ENOMEM;

	struct toml_entry *e = &t->table.entries[t->table.n];
	*e = (struct toml_entry){
		.key = { .name = part->s,
			 .len = part->len,
			 .line = part->line,
			 .column = part->column },
		.value = v,
	};
	if (t->table.index)
		index_insert(t->table.index, t->table.index_cap, &e->key, t->table.n);
	t->table.n++;
	part->s = NULL;
	return 0;
}

int toml_array_push(struct toml_value *a, struct toml_value *v)
{
	if (a->array.n == a->array.cap) {
		size_t cap = a->array.cap ? a->array.cap * 2 : 4;
		struct toml_value **items = reallocarray(a->array.items, cap, sizeof(*items));
		if (!items)
			return -ENOMEM;
		a->array.items = items;
		a->array.cap = cap;
	}
	a->array.items[a->array.n++] = v;
	return 0;
}

enum toml_type toml_type(const struct toml_value *v)
{
	return v ? (enum toml_type)v->type : TOML_NONE;
}

const char *toml_type_name(enum toml_type type)
{
	static const char *const names[] = {
		[TOML_NONE] = "none",
		[TOML_TABLE] = "table",
		[TOML_ARRAY] = "array",
		[TOML_STRING] = "string",
		[TOML_INTEGER] = "integer",
		[TOML_FLOAT] = "float",
		[TOML_BOOL] = "bool",
		[TOML_DATETIME] = "datetime",
		[TOML_DATETIME_LOCAL] = "datetime-local",
		[TOML_DATE_LOCAL] = "date-local",
		[TOML_TIME_LOCAL] = "time-local",
	};

	if ((unsigned)type >= ELEMENTSOF(names))
		return "none";
	return names[type];
}

int toml_position(const struct toml_value *v, unsigned *ret_line, unsigned *ret_column)
{
	if (!v)
		return -EINVAL;
	if (ret_line)
		*ret_line = v->line;
	if (ret_column)
		*ret_column = v->column;
	return 0;
}

size_t toml_table_size(const struct toml_value *t)
{
	return toml_type(t) == TOML_TABLE ? t->table.n : 0;
}

const struct toml_value *toml_table_getn(const struct toml_value *t, const char *key, size_t len)
{
	if (toml_type(t) != TOML_TABLE || (!key && len))
		return NULL;
	return toml_table_find(t, key, len);
}

const struct toml_value *toml_table_get(const struct toml_value *t, const char *key)
{
	if (!key)
		return NULL;
	return toml_table_getn(t, key, strlen(key));
}

const struct toml_value *toml_table_at(const struct toml_value *t, size_t i,
				       const struct toml_key **ret_key)
{
	if (toml_type(t) != TOML_TABLE || i >= t->table.n)
		return NULL;
	if (ret_key)
		*ret_key = &t->table.entries[i].key;
	return t->table.entries[i].value;
}

size_t toml_array_size(const struct toml_value *a)
{
	return toml_type(a) == TOML_ARRAY ? a->array.n : 0;
}

const struct toml_value *toml_array_at(const struct toml_value *a, size_t i)
{
	if (toml_type(a) != TOML_ARRAY || i >= a->array.n)
		return NULL;
	return a->array.items[i];
}

int toml_get_string(const struct toml_value *v, const char **ret, size_t *ret_len)
{
	if (toml_type(v) != TOML_STRING)
		return -EINVAL;
	if (ret)
		*ret = v->string.s;
	if (ret_len)
		*ret_len = v->string.len;
	return 0;
}

int toml_get_integer(const struct toml_value *v, int64_t *ret)
{
	if (toml_type(v) != TOML_INTEGER)
		return -EINVAL;
	if (ret)
		*ret = v->integer;
	return 0;
}

int toml_get_float(const struct toml_value *v, double *ret)
{
	if (toml_type(v) != TOML_FLOAT)
		return -EINVAL;
	if (ret)
		*ret = v->fp;
	return 0;
}

int toml_get_bool(const struct toml_value *v, int *ret)
{
	if (toml_type(v) != TOML_BOOL)
		return -EINVAL;
	if (ret)
		*ret = v->boolean;
	return 0;
}

static bool is_datetime(const struct toml_value *v)
{
	switch (toml_type(v)) {
	case TOML_DATETIME:
	case TOML_DATETIME_LOCAL:
	case TOML_DATE_LOCAL:
	case TOML_TIME_LOCAL:
		return true;
	default:
		return false;
	}
}

int toml_get_datetime(const struct toml_value *v, struct toml_datetime *ret)
{
	if (!is_datetime(v))
		return -EINVAL;
	if (ret)
		*ret = v->dt;
	return 0;
}

int toml_datetime_format(const struct toml_value *v, char *buf, size_t size)
{
	/* Sized for any int, so the compiler can see nothing is cut; the parser keeps the
	 * components in range. */
	char date[48] = "", time[80] = "", frac[16] = "", offset[32] = "";

	if (!is_datetime(v))
		return -EINVAL;
	const struct toml_datetime *dt = &v->dt;
	if (v->type != TOML_TIME_LOCAL)
		snprintf(date, sizeof(date), "%04d-%02d-%02d", dt->year, dt->month, dt->day);
	if (v->type != TOML_DATE_LOCAL) {
		if (dt->frac_digits) {
			/* The fraction is kept truncated to nanoseconds: print the digits the
			 * input had, which are the leading ones of the nine. */
			snprintf(frac, sizeof(frac), ".%09u", dt->nanosecond);
			frac[1 + MIN(dt->frac_digits, 9u)] = '\0';
		}
		snprintf(time, sizeof(time), "%s%02d:%02d:%02d%s",
			 v->type == TOML_TIME_LOCAL ? "" : "T", dt->hour, dt->minute, dt->second,
			 frac);
	}
	if (v->type == TOML_DATETIME) {
		int off = dt->offset_minutes < 0 ? -dt->offset_minutes : dt->offset_minutes;
		if (dt->offset_z)
			snprintf(offset, sizeof(offset), "Z");
		else
			snprintf(offset, sizeof(offset), "%c%02d:%02d",
				 dt->offset_minutes < 0 ? '-' : '+', off / 60, off % 60);
	}
	return snprintf(buf, size, "%s%s%s", date, time, offset);
}
