/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ps, inspect, kill: the running sandboxes of this user, through their control sockets
 * (sandlock_running, sandlock_control).
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define KILL_WAIT_MS 5000
#define PS_TIMEOUT_MS 1000

/* Ask sandbox @name; the parsed answer, or NULL after printing why (with @ret_r, the caller
 * gets the error instead). An {"error": ...} answer counts as a failure. */
static json_t *ask(const char *name, const char *request, int timeout_ms, int *ret_r)
{
	sandlock_error_t *err = NULL;
	char *text = NULL;

	int r = sandlock_control(name, request, timeout_ms, &text, &err);
	if (ret_r)
		*ret_r = r;
	if (r < 0) {
		if (!ret_r)
			cli_error(EXIT_POLICY, "%s",
				  err ? sandlock_error_message(err) : strerror(-r));
		sandlock_error_free(err);
		return NULL;
	}
	json_t *ans = json_loads(text, 0, NULL);
	sandlock_free(text);
	const char *e = json_string_value(json_object_get(ans, "error"));
	if (!json_is_object(ans) || e) {
		cli_error(EXIT_POLICY, "%s: %s", name, e ? e : "malformed answer");
		json_decref(ans);
		return NULL;
	}
	return ans;
}

static void format_uptime(int64_t s, char *buf, size_t size)
{
	if (s < 0)
		s = 0;
	if (s < 60)
		snprintf(buf, size, "%llds", (long long)s);
	else if (s < 3600)
		snprintf(buf, size, "%lldm%02llds", (long long)(s / 60), (long long)(s % 60));
	else if (s < 86400)
		snprintf(buf, size, "%lldh%02lldm", (long long)(s / 3600),
			 (long long)(s % 3600 / 60));
	else
		snprintf(buf, size, "%lldd%02lldh", (long long)(s / 86400),
			 (long long)(s % 86400 / 3600));
}

/* The strings of a JSON array joined by @sep, or @empty. */
static char *join(json_t *arr, const char *sep, const char *empty)
{
	size_t len = 1, i;
	json_t *v;

	json_array_foreach(arr, i, v) len += strlen(json_string_value(v) ?: "") + strlen(sep);
	char *s = calloc(1, len + strlen(empty));
	if (!s)
		return NULL;
	json_array_foreach(arr, i, v)
	{
		if (i)
			strcat(s, sep);
		strcat(s, json_string_value(v) ?: "");
	}
	if (!s[0])
		strcpy(s, empty);
	return s;
}

/* PORTS: under port_remap the ports the sandbox bound, "8080" or, bound elsewhere on the host,
 * "8080->41234" (virtual->real); else its bind rules; "-" for none. */
static char *ports_column(json_t *info)
{
	json_t *map = json_object_get(info, "port_map");
	if (!json_is_object(map) || json_object_size(map) == 0)
		return join(json_object_get(info, "ports"), ",", "-");
	json_t *arr = json_array();
	const char *key;
	json_t *v;
	json_object_foreach(map, key, v)
	{
		char item[32];
		long long real = json_integer_value(v);
		if (strtoll(key, NULL, 10) == real)
			snprintf(item, sizeof(item), "%s", key);
		else
			snprintf(item, sizeof(item), "%s->%lld", key, real);
		json_array_append_new(arr, json_string(item));
	}
	char *s = arr ? join(arr, ",", "-") : NULL;
	json_decref(arr);
	return s;
}

struct row {
	char *col[6];
};

static const char *const headers[6] = { "NAME", "PID", "UPTIME", "STATUS", "PORTS", "CMD" };

static int row_fill(struct row *row, const char *name, json_t *info)
{
	char pid[24], up[32];

	snprintf(pid, sizeof(pid), "%lld",
		 (long long)json_integer_value(json_object_get(info, "pid")));
	format_uptime((int64_t)time(NULL) - json_integer_value(json_object_get(info, "started")),
		      up, sizeof(up));
	const char *status = json_string_value(json_object_get(info, "status"));
	row->col[0] = strdup(name);
	row->col[1] = strdup(pid);
	row->col[2] = strdup(up);
	row->col[3] = strdup(status ? status : "?");
	row->col[4] = ports_column(info);
	row->col[5] = join(json_object_get(info, "cmd"), " ", "");
	/* One row per sandbox: control characters (a newline in a "-c" script) print as '?',
	 * as ps(1) prints them. */
	for (char *c = row->col[5]; c && *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	for (int i = 0; i < 6; i++)
		if (!row->col[i])
			return -ENOMEM;
	return 0;
}

static int row_unknown(struct row *row, const char *name)
{
	const char *cols[6] = { name, "?", "?", "unresponsive", "?", "?" };

	for (int i = 0; i < 6; i++)
		if (!(row->col[i] = strdup(cols[i])))
			return -ENOMEM;
	return 0;
}

static void rows_free(struct row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < 6; c++)
			free(rows[i].col[c]);
	free(rows);
}

static void print_row(const char *const *col, const size_t *width)
{
	for (int c = 0; c < 5; c++)
		printf("%-*s  ", (int)width[c], col[c]);
	printf("%s\n", col[5]);
}

int verb_ps(int argc, char **argv)
{
	char **names = NULL;
	size_t width[6], n = 0;

	if (argc != 1)
		return cli_usage_error("ps");
	sandlock_error_t *err = NULL;
	int r = sandlock_running(&names, &err);
	if (r < 0) {
		cli_error(EXIT_POLICY, "%s", err ? sandlock_error_message(err) : strerror(-r));
		sandlock_error_free(err);
		return EXIT_POLICY;
	}
	size_t count = 0;
	while (names[count])
		count++;
	struct row *rows = calloc(count + 1, sizeof(*rows));
	for (size_t i = 0; rows && i < count; i++) {
		int q;
		json_t *info = ask(names[i], "{\"cmd\":\"info\"}", PS_TIMEOUT_MS, &q);
		/* One that ended since the listing is simply not shown; one that does not answer
		 * (its host stopped, say) is shown as such. */
		if (!info && q == -ENOENT)
			continue;
		r = info ? row_fill(&rows[n++], names[i], info) : row_unknown(&rows[n++], names[i]);
		json_decref(info);
		if (r < 0)
			break;
	}
	sandlock_strv_free(names);
	if (!rows || r == -ENOMEM) {
		rows_free(rows, n);
		return cli_error(EXIT_POLICY, "out of memory");
	}
	if (n == 0) {
		printf("No running sandboxes.\n");
		free(rows);
		return 0;
	}
	for (int c = 0; c < 6; c++) {
		width[c] = strlen(headers[c]);
		for (size_t i = 0; i < n; i++)
			if (strlen(rows[i].col[c]) > width[c])
				width[c] = strlen(rows[i].col[c]);
	}
	print_row((const char *const *)headers, width);
	for (size_t i = 0; i < n; i++)
		print_row((const char *const *)rows[i].col, width);
	rows_free(rows, n);
	return 0;
}

/* What a profile cannot hold, as TOML comments after it: the credentials by name and the
 * http_auth rules (runtime settings, given when a sandbox is created). */
static void toml_runtime_notes(const json_t *policy, const json_t *names)
{
	const json_t *auth = json_object_get(json_object_get(policy, "runtime"), "http_auth");
	size_t i;
	json_t *v;

	if (json_array_size(names)) {
		printf("\n# credentials (held by the supervisor, by name):");
		json_array_foreach(names, i, v)
		{
			printf("%s %s", i ? "," : "", json_string_value(v));
		}
		printf("\n");
	}
	json_array_foreach(auth, i, v)
	{
		printf("%s# http_auth: %s\n", i || json_array_size(names) ? "" : "\n",
		       json_string_value(v));
	}
}

/* The JSON document for people: indented, with the credentials by name in its runtime section
 * (the sandbox gives them apart from its policy, which never holds their sources). */
static void print_json(const char *text, json_t *names)
{
	json_t *doc = json_loads(text, 0, NULL);

	if (doc && json_array_size(names)) {
		json_t *rt = json_object_get(doc, "runtime");
		if (!rt) {
			rt = json_object();
			json_object_set_new(doc, "runtime", rt);
		}
		json_object_set(rt, "credentials", names);
	}
	char *pretty = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	printf("%s\n", pretty ? pretty : text);
	free(pretty);
	json_decref(doc);
}

int verb_inspect(int argc, char **argv)
{
	int toml = 0;
	const char *name = NULL;
	sandlock_policy_t *p = NULL;
	sandlock_error_t *err = NULL;
	char *text = NULL;

	int bad = 0, dashdash = 0;
	for (int i = 1; i < argc; i++) {
		if (!dashdash && strcmp(argv[i], "--toml") == 0)
			toml = 1;
		else if (!dashdash && strcmp(argv[i], "--") == 0)
			dashdash = 1;
		else if (!name && (dashdash || argv[i][0] != '-'))
			name = argv[i];
		else
			bad = 1;
	}
	if (!name || bad)
		return cli_usage_error("inspect");
	json_t *ans = ask(name, "{\"cmd\":\"policy\"}", 0, NULL);
	if (!ans)
		return EXIT_POLICY;
	char *json = json_dumps(json_object_get(ans, "policy"), JSON_COMPACT);
	if (!json) {
		json_decref(ans);
		return cli_error(EXIT_POLICY, "%s: malformed answer", name);
	}
	/* Through the library's loader: the same validation as any policy document, and its
	 * canonical dump. */
	int r = sandlock_policy_load_json(json, strlen(json), &p, &err);
	free(json);
	if (r == 0)
		r = toml ? sandlock_policy_dump_toml(p, &text)
			 : sandlock_policy_dump_json(p, &text);
	sandlock_policy_free(p);
	if (r < 0) {
		json_decref(ans);
		cli_error(EXIT_POLICY, "%s: %s", name,
			  err ? sandlock_error_message(err) : strerror(-r));
		sandlock_error_free(err);
		return EXIT_POLICY;
	}
	json_t *names = json_object_get(ans, "credentials");
	if (toml) {
		fputs(text, stdout);
		toml_runtime_notes(json_object_get(ans, "policy"), names);
	} else {
		print_json(text, names);
	}
	json_decref(ans);
	sandlock_free(text);
	return 0;
}

static int sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	return nanosleep(&ts, NULL);
}

int verb_kill(int argc, char **argv)
{
	int dashdash = argc == 3 && strcmp(argv[1], "--") == 0;
	if (!(argc == 2 && argv[1][0] != '-') && !dashdash)
		return cli_usage_error("kill");
	const char *name = argv[dashdash ? 2 : 1];
	json_t *ans = ask(name, "{\"cmd\":\"kill\"}", 0, NULL);
	if (!ans)
		return EXIT_POLICY;
	char *groups = NULL;
	json_t *g = json_object_get(ans, "groups"), *v;
	size_t i, len = 1;
	json_array_foreach(g, i, v) len += 24;
	groups = calloc(1, len);
	json_array_foreach(g, i, v) if (groups)
		snprintf(groups + strlen(groups), len - strlen(groups), "%s%lld", i ? " " : "",
			 (long long)json_integer_value(v));
	long long pid = json_integer_value(json_object_get(ans, "pid"));
	json_decref(ans);

	/* The sandbox is gone when its supervisor has reaped it and removed its directory. */
	int gone = 0;
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (long waited = 0; waited < KILL_WAIT_MS && !gone;) {
		char *text = NULL;
		int r = sandlock_control(name, "{\"cmd\":\"info\"}", KILL_WAIT_MS - (int)waited,
					 &text, NULL);
		sandlock_free(text);
		gone = r == -ENOENT;
		if (!gone)
			sleep_ms(10);
		clock_gettime(CLOCK_MONOTONIC, &now);
		waited = (now.tv_sec - start.tv_sec) * 1000 +
			 (now.tv_nsec - start.tv_nsec) / 1000000;
	}
	/* Its supervisor is the sandbox thread of the host (`sandlock run`, or a program using
	 * the library): it has ended with the sandbox; a `sandlock run` host exits 137. */
	printf("killed %s: pid %lld, process groups %s, and its supervisor\n", name, pid,
	       groups ? groups : "?");
	free(groups);
	if (!gone)
		return cli_error(EXIT_POLICY, "%s: still running %d ms after SIGKILL", name,
				 KILL_WAIT_MS);
	return 0;
}
