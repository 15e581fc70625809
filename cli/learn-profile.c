/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * learn-profile: the profile `sandlock learn` writes. The grants are added to a JSON document
 * in the sectioned schema (an empty one, or the --merge profile as the library loaded it),
 * which the library then loads (so that what is written is a policy it accepts) and dumps as
 * TOML. The dump has every path expanded; its path strings are written back in the form the
 * merged file used ("${HOME}/x" stays so), and the new ones under $HOME as "${HOME}/...".
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "learn.h"

/* ---- the --merge file's strings ------------------------------------------------------------ */

/* "original text of a string" by "its value with ${HOME} expanded": the keys and values of
 * @map, parallel vectors. */
struct text_map {
	char **key, **raw;
	size_t n;
};

static void text_map_free(struct text_map *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->key[i]);
		free(m->raw[i]);
	}
	free(m->key);
	free(m->raw);
}

static const char *text_map_get(const struct text_map *m, const char *key)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->key[i], key) == 0)
			return m->raw[i];
	return NULL;
}

/* @value with every ${HOME} replaced by @home. */
static char *expand_home(const char *value, const char *home)
{
	size_t n = 0, hl = home ? strlen(home) : 0;
	char *out = malloc(strlen(value) * (hl + 1) + 1);

	if (!out)
		return NULL;
	for (const char *c = value; *c;) {
		if (home && strncmp(c, "${HOME}", 7) == 0) {
			memcpy(out + n, home, hl);
			n += hl;
			c += 7;
		} else
			out[n++] = *c++;
	}
	out[n] = '\0';
	return out;
}

static int text_map_add(struct text_map *m, const char *home, const char *inner, size_t len,
			const char *raw, size_t raw_len)
{
	char *value = strndup(inner, len), *key = value ? expand_home(value, home) : NULL;

	free(value);
	if (!key)
		return -ENOMEM;
	if (text_map_get(m, key)) {
		free(key);
		return 0;
	}
	char **k = realloc(m->key, (m->n + 1) * sizeof(*k));
	if (k)
		m->key = k;
	char **r = k ? realloc(m->raw, (m->n + 1) * sizeof(*r)) : NULL;
	if (r)
		m->raw = r;
	char *rawdup = r ? strndup(raw, raw_len) : NULL;
	if (!rawdup) {
		free(key);
		return -ENOMEM;
	}
	m->key[m->n] = key;
	m->raw[m->n++] = rawdup;
	return 0;
}

/* The one-line strings of TOML @text ("..." without escapes, '...'), comments skipped. A
 * string with escapes or over lines is left out: its entry is written in the dump's form. */
static int text_map_scan(struct text_map *m, const char *text, const char *home)
{
	for (const char *c = text; *c; c++) {
		if (*c == '#') {
			c += strcspn(c, "\n");
			if (!*c)
				break;
			continue;
		}
		if (*c != '"' && *c != '\'')
			continue;
		char q = *c;
		if (c[1] == q && c[2] == q) { /* a multi-line string: skipped whole */
			const char *end = strstr(c + 3, q == '"' ? "\"\"\"" : "'''");
			if (!end)
				break;
			c = end + 2;
			continue;
		}
		const char *end = c + 1 + strcspn(c + 1, q == '"' ? "\"\\\n" : "'\n");
		while (q == '"' && *end == '\\' && end[1])
			end = end + 2 + strcspn(end + 2, "\"\\\n");
		if (*end != q)
			break;
		int r = 0;
		if (q == '\'' || !memchr(c, '\\', (size_t)(end - c)))
			r = text_map_add(m, home, c + 1, (size_t)(end - c - 1), c,
					 (size_t)(end - c + 1));
		if (r < 0)
			return r;
		c = end;
	}
	return 0;
}

/* ---- the document -------------------------------------------------------------------------- */

static json_t *section(json_t *doc, const char *name)
{
	json_t *s = json_object_get(doc, name);

	if (!json_is_object(s)) {
		s = json_object();
		json_object_set_new(doc, name, s);
	}
	return s;
}

static json_t *list(json_t *doc, const char *sec, const char *key)
{
	json_t *s = section(doc, sec), *l = json_object_get(s, key);

	if (!json_is_array(l)) {
		l = json_array();
		json_object_set_new(s, key, l);
	}
	return l;
}

/* Whether a path of @l (strings) is @path or holds it. */
static int list_covers(json_t *l, const char *path)
{
	size_t i;
	json_t *v;

	json_array_foreach(l, i, v)
	{
		const char *s = json_string_value(v);
		if (s && learn_beneath(path, s))
			return 1;
	}
	return 0;
}

static int list_has(json_t *l, const char *text)
{
	size_t i;
	json_t *v;

	json_array_foreach(l, i, v)
	{
		if (json_is_string(v) && strcmp(json_string_value(v), text) == 0)
			return 1;
		if (json_is_integer(v) && atoll(text) == json_integer_value(v) &&
		    strspn(text, "0123456789") == strlen(text))
			return 1;
	}
	return 0;
}

static void add_paths(json_t *doc, const struct learn_set *set, const char *key)
{
	json_t *read = list(doc, "filesystem", "read"), *write = list(doc, "filesystem", "write");
	const char **v = learn_set_sorted(set);

	for (size_t i = 0; v && v[i]; i++)
		if (!list_covers(write, v[i]) &&
		    (strcmp(key, "write") == 0 || !list_covers(read, v[i])))
			json_array_append_new(strcmp(key, "write") == 0 ? write : read,
					      json_string(v[i]));
	free(v);
}

static void add_strings(json_t *doc, const struct learn_set *set, const char *sec, const char *key)
{
	json_t *l = list(doc, sec, key);
	const char **v = learn_set_sorted(set);

	for (size_t i = 0; v && v[i]; i++)
		if (!list_has(l, v[i]))
			json_array_append_new(l, json_string(v[i]));
	free(v);
}

/* Whether an entry of @l is @dir or beneath it. */
static int list_reaches(json_t *l, const char *dir)
{
	size_t i;
	json_t *v;

	json_array_foreach(l, i, v)
	{
		const char *s = json_string_value(v);
		if (s && learn_beneath(s, dir))
			return 1;
	}
	return 0;
}

/* $HOME learned whole: its keys and credentials that exist are denied, unless the profile
 * merged grants one of them itself (called before the learned grants are added). */
static void deny_secrets(json_t *doc, const struct learn_run *lr)
{
	static const char *const secrets[] = { ".ssh", ".aws", ".gnupg", ".kube" };
	json_t *read = list(doc, "filesystem", "read"), *write = list(doc, "filesystem", "write");
	json_t *deny = list(doc, "filesystem", "deny");
	char path[4096];
	struct stat st;

	if (!lr->home || !(learn_set_has(&lr->paths.read, lr->home) ||
			   learn_set_has(&lr->paths.write, lr->home)))
		return;
	for (size_t i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", lr->home, secrets[i]);
		if (lstat(path, &st) == 0 && !list_reaches(read, path) &&
		    !list_reaches(write, path) && !list_has(deny, path))
			json_array_append_new(deny, json_string(path));
	}
}

/* @peak with room to grow: twice it and at least @floor more. */
static uint64_t headroom(uint64_t peak, uint64_t floor)
{
	return peak * 2 > peak + floor ? peak * 2 : peak + floor;
}

static void add_limits(json_t *doc, const struct learn_run *lr)
{
	json_t *lim = section(doc, "limits");
	char size[32];

	if (lr->peak_memory && !json_object_get(lim, "memory")) {
		uint64_t mib = (headroom(lr->peak_memory, 256ULL << 20) + (1 << 20) - 1) >> 20;
		snprintf(size, sizeof(size), "%lluM", (unsigned long long)((mib + 63) / 64 * 64));
		json_object_set_new(lim, "memory", json_string(size));
	}
	if (lr->peak_processes && !json_object_get(lim, "processes"))
		json_object_set_new(lim, "processes",
				    json_integer((json_int_t)headroom(lr->peak_processes, 16)));
	if (lr->peak_files && !json_object_get(lim, "open_files")) {
		uint64_t n = 256;
		while (n < lr->peak_files * 2)
			n *= 2;
		json_object_set_new(lim, "open_files", json_integer((json_int_t)n));
	}
}

static void add_program(json_t *doc, const struct learn_run *lr)
{
	json_t *prog = section(doc, "program");

	if (json_object_get(prog, "exec") || !lr->argv[0])
		return;
	json_object_set_new(prog, "exec", json_string(lr->argv[0]));
	json_t *args = json_array();
	for (size_t i = 1; lr->argv[i]; i++)
		json_array_append_new(args, json_string(lr->argv[i]));
	json_object_set_new(prog, "args", args);
}

/* Drop the lists left empty (an empty list is the default, and the dump leaves it out too). */
static void drop_empty(json_t *doc)
{
	const char *name, *key;
	json_t *sec, *v;
	void *tmp, *tmp2;

	json_object_foreach_safe(doc, tmp, name, sec)
	{
		if (!json_is_object(sec))
			continue;
		json_object_foreach_safe(sec, tmp2, key,
					 v) if (json_is_array(v) && !json_array_size(v))
			json_object_del(sec, key);
		if (!json_object_size(sec))
			json_object_del(doc, name);
	}
}

static json_t *build(json_t *doc, const struct learn_run *lr)
{
	add_program(doc, lr);
	deny_secrets(doc, lr);
	add_paths(doc, &lr->paths.write, "write");
	add_paths(doc, &lr->paths.read, "read");
	json_object_set_new(section(doc, "filesystem"), "private_tmp", json_true());
	add_strings(doc, &lr->net, "network", "allow");
	add_strings(doc, &lr->binds, "network", "allow_bind");
	add_limits(doc, lr);
	drop_empty(doc);
	return doc;
}

/* ---- the TOML text ------------------------------------------------------------------------- */

/* The path fields of the schema, as "section.key": their strings are paths, ${HOME} expanded. */
static int path_field(const char *sec, const char *key, int *learned)
{
	static const char *const fields[] = {
		"config.http_ca",     "config.http_key",   "config.http_inject_ca",
		"config.http_ca_out", "config.fs_storage", "config.workdir",
		"program.exec",	      "program.cwd",	   "filesystem.read",
		"filesystem.write",   "filesystem.deny",   "filesystem.chroot",
		"filesystem.mount",
	};
	char name[128];

	snprintf(name, sizeof(name), "%s.%s", sec, key);
	*learned = strcmp(name, "filesystem.read") == 0 || strcmp(name, "filesystem.write") == 0 ||
		   strcmp(name, "filesystem.deny") == 0;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (strcmp(name, fields[i]) == 0)
			return 1;
	return 0;
}

/* One string of a path field, from the dump ("..." at @s, @n bytes with the quotes), in the form
 * to write: the merged file's, else "${HOME}/..." under $HOME where @learned, else as dumped. */
static void put_path(FILE *f, const char *s, size_t n, const struct text_map *m,
		     const struct learn_run *lr, int learned)
{
	char *value = strndup(s + 1, n - 2);
	int plain = value && !strchr(value, '\\');
	const char *raw = plain ? text_map_get(m, value) : NULL;
	/* $HOME as the loader expands it (a merged entry), or resolved (a learned one). */
	const char *home = !plain || !learned					? NULL
			   : lr->home_env && learn_beneath(value, lr->home_env) ? lr->home_env
			   : lr->home && learn_beneath(value, lr->home)		? lr->home
										: NULL;

	if (raw)
		fputs(raw, f);
	else if (home && strcmp(home, "/") != 0)
		fprintf(f, "\"${HOME}%s\"", value + strlen(home));
	else
		fwrite(s, 1, n, f);
	free(value);
}

/* The dump (one key a line, strings in "...") with the path strings in their forms. */
static void put_toml(FILE *f, const char *dump, const struct text_map *m,
		     const struct learn_run *lr)
{
	char sec[64] = "";

	for (const char *line = dump; *line;) {
		size_t len = strcspn(line, "\n");
		int learned = 0;
		if (line[0] == '[' && len < sizeof(sec))
			snprintf(sec, sizeof(sec), "%.*s", (int)(strcspn(line, "]") - 1), line + 1);
		size_t klen = strcspn(line, " =\n");
		char key[64];
		snprintf(key, sizeof(key), "%.*s", (int)(klen < 63 ? klen : 63), line);
		int paths = line[0] != '[' && path_field(sec, key, &learned);
		for (size_t i = 0; i < len; i++) {
			if (!paths || line[i] != '"') {
				fputc(line[i], f);
				continue;
			}
			size_t j = i + 1;
			while (j < len && line[j] != '"')
				j += line[j] == '\\' ? 2 : 1;
			j = j < len ? j : len - 1;
			put_path(f, line + i, j - i + 1, m, lr, learned);
			i = j;
		}
		line += len;
		if (*line == '\n') {
			fputc('\n', f);
			line++;
		}
	}
}

/* @text on the comment line it is part of: a newline written as "\\n". */
static void put_comment_text(FILE *f, const char *text)
{
	for (const char *c = text; *c; c++)
		if (*c == '\n')
			fputs("\\n", f);
		else
			fputc(*c, f);
}

static void put_header(FILE *f, const struct learn_run *lr)
{
	fputs("# Learned by sandlock learn from one run of:", f);
	for (size_t i = 0; lr->argv[i]; i++) {
		fputc(' ', f);
		put_comment_text(f, lr->argv[i]);
	}
	fputs("\n# It grants what that run used; another input may need more.\n", f);
	const char **execs = learn_set_sorted(&lr->execs);
	for (size_t i = 0; execs && execs[i]; i++)
		if (i < 16) {
			fputs("# Ran ", f);
			put_comment_text(f, execs[i]);
			fputc('\n', f);
		} else if (!execs[i + 1])
			fprintf(f, "# Ran %zu more executables\n", i - 15);
	free(execs);
	if (lr->peak_memory || lr->peak_processes)
		fprintf(f, "# Peaks seen: memory %lluK, processes %llu, open files %llu.\n",
			(unsigned long long)(lr->peak_memory >> 10),
			(unsigned long long)lr->peak_processes, (unsigned long long)lr->peak_files);
	fputc('\n', f);
}

/* ---- writing ------------------------------------------------------------------------------- */

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "re");
	char *text = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	FILE *mem = open_memstream(&text, &len);
	char buf[8192];
	for (size_t n; mem && (n = fread(buf, 1, sizeof(buf), f)) > 0;)
		fwrite(buf, 1, n, mem);
	if (mem)
		fclose(mem);
	fclose(f);
	return text;
}

/* The --merge profile as a document, and its strings' forms. */
static json_t *load_merged(const char *file, const char *home, struct text_map *m)
{
	sandlock_policy_t *p = NULL;
	sandlock_error_t *err = NULL;
	char *json = NULL;

	int r = sandlock_policy_load_toml_file(file, &p, &err);
	if (r < 0) {
		cli_error(EXIT_POLICY, "--merge %s",
			  err ? sandlock_error_message(err) : strerror(-r));
		sandlock_error_free(err);
		return NULL;
	}
	char *text = read_text(file);
	r = sandlock_policy_dump_json(p, &json);
	sandlock_policy_free(p);
	json_t *doc = r == 0 ? json_loads(json, 0, NULL) : NULL;
	sandlock_free(json);
	if (!text || !doc || text_map_scan(m, text, home) < 0) {
		cli_error(EXIT_POLICY, "--merge %s: %s", file, strerror(text ? ENOMEM : errno));
		json_decref(doc);
		doc = NULL;
	}
	free(text);
	return doc;
}

/* The document loaded by the library and dumped: what `run --profile-file` will read. */
static char *dump_checked(json_t *doc)
{
	char *json = json_dumps(doc, JSON_COMPACT), *toml = NULL;
	sandlock_policy_t *p = NULL;
	sandlock_error_t *err = NULL;

	int r = json ? sandlock_policy_load_json(json, strlen(json), &p, &err) : -ENOMEM;
	free(json);
	if (r == 0)
		r = sandlock_policy_dump_toml(p, &toml);
	if (r < 0)
		cli_error(EXIT_POLICY, "the learned profile does not load: %s",
			  err ? sandlock_error_message(err) : strerror(-r));
	sandlock_error_free(err);
	sandlock_policy_free(p);
	return r < 0 ? NULL : toml;
}

static int write_file(const char *out_file, const struct learn_run *lr, const char *toml,
		      const struct text_map *m)
{
	char *tmp = NULL;

	if (asprintf(&tmp, "%s.XXXXXX", out_file) < 0)
		return cli_error(EXIT_POLICY, "out of memory");
	int fd = mkostemp(tmp, O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		free(tmp);
		return cli_error(EXIT_POLICY, "-o %s: %s", out_file, strerror(e));
	}
	(void)fchmod(fd, 0644);
	put_header(f, lr);
	put_toml(f, toml, m, lr);
	int bad = ferror(f) | (fclose(f) != 0);
	if (bad || rename(tmp, out_file) < 0) {
		int e = errno;
		unlink(tmp);
		free(tmp);
		return cli_error(EXIT_POLICY, "-o %s: %s", out_file, strerror(e));
	}
	free(tmp);
	return 0;
}

int learn_profile_write(const struct learn_run *lr, const char *merge_file, const char *out_file)
{
	struct text_map m = { 0 };
	json_t *doc = merge_file ? load_merged(merge_file, lr->home_env, &m) : json_object();
	int code = 0;

	if (!doc) {
		text_map_free(&m);
		return merge_file ? EXIT_POLICY : cli_error(EXIT_POLICY, "out of memory");
	}
	char *toml = dump_checked(build(doc, lr));
	json_decref(doc);
	if (!toml)
		code = EXIT_POLICY;
	else if (out_file)
		code = write_file(out_file, lr, toml, &m);
	else {
		put_header(stdout, lr);
		put_toml(stdout, toml, &m, lr);
		fflush(stdout);
	}
	sandlock_free(toml);
	text_map_free(&m);
	return code;
}
