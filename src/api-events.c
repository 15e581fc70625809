/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * api-events: the exported functions of the event stream: an event as the denial line sandlock
 * prints and as one JSON object, and the run's denial table once the sandbox ended. The stream
 * itself is supervisor/events.c.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "macro.h"
#include "sandbox/sandbox.h"
#include "supervisor/events.h"

/* The fields every event of this ABI has (the struct's first version). */
static int event_ok(const sandlock_event_t *ev)
{
	return ev && ev->size >= offsetof(sandlock_event_t, hint) + sizeof(ev->hint);
}

/* @s with control characters (a newline in a file name would start a line of its own in a log)
 * as \n, \t, \xNN; @quoted: inside quotes, so '"' and '\' are escaped too. */
static void put_escaped(FILE *f, const char *s, int quoted)
{
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '\n')
			fputs("\\n", f);
		else if (ch == '\t')
			fputs("\\t", f);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(f, "\\x%02x", ch);
		else if (quoted && (ch == '"' || ch == '\\'))
			fprintf(f, "\\%c", ch);
		else
			fputc(ch, f);
	}
}

/* What the call was about: "PATH", ACCESS | HOST:PORT[/udp] | AMOUNT bytes | nothing. */
static void put_object(FILE *f, const sandlock_event_t *ev)
{
	if (ev->path) {
		fputc('"', f);
		put_escaped(f, ev->path, 1);
		fputc('"', f);
		if (ev->access) {
			fputs(", ", f);
			put_escaped(f, ev->access, 0);
		}
	} else if (ev->host) {
		int unix_name = ev->family == AF_UNIX || (ev->protocol && !strcmp(ev->protocol, "unix"));
		int v6 = !unix_name && (ev->family == AF_INET6 || strchr(ev->host, ':'));
		fputs(unix_name ? "\"" : v6 ? "[" : "", f);
		put_escaped(f, ev->host, unix_name);
		fputs(unix_name ? "\"" : v6 ? "]" : "", f);
		if (ev->port && !unix_name)
			fprintf(f, ":%u", ev->port);
		if (ev->protocol && strcmp(ev->protocol, "udp") == 0)
			fputs("/udp", f);
	} else if (ev->amount && ev->category && strcmp(ev->category, "memory") == 0) {
		fprintf(f, "%llu bytes", (unsigned long long)ev->amount);
	}
}

_public_ int sandlock_event_format(const sandlock_event_t *ev, char **ret_line)
{
	char *buf = NULL;
	size_t len = 0;

	if (!event_ok(ev) || !ret_line || ev->verdict != SANDLOCK_VERDICT_DENY || !ev->reason)
		return -EINVAL;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	fputs("denied ", f);
	put_escaped(f, ev->syscall ? ev->syscall : "?", 0);
	fputc('(', f);
	put_object(f, ev);
	fprintf(f, ") by pid %d (", ev->pid);
	put_escaped(f, ev->comm, 0);
	fputs("): ", f);
	put_escaped(f, ev->reason, 0);
	if (ev->hint) {
		fputs("; ", f);
		put_escaped(f, ev->hint, 0);
	}
	if (ferror(f) | fclose(f)) {
		free(buf);
		return -ENOMEM;
	}
	*ret_line = buf;
	return 0;
}

/* ---- JSON -------------------------------------------------------------------------------- */

/* The length of the UTF-8 sequence at @s, or 0 where it is not one (jansson refuses those). */
static size_t utf8_len(const unsigned char *s)
{
	size_t n = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3
				   : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
	if (n == 2 && s[0] < 0xc2)
		return 0; /* overlong */
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* A string value: a name that is not UTF-8 (Linux file names are bytes) gets U+FFFD for each
 * byte that is not, so the line stays valid JSON. */
static json_t *jstr(const char *s)
{
	json_t *j = json_string(s ? s : "");
	if (j || !s)
		return j;
	_cleanup_free_ char *clean = malloc(strlen(s) * 3 + 1);
	if (!clean)
		return NULL;
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = utf8_len(p);
		if (n) {
			memcpy(clean + o, p, n);
			o += n;
			p += n;
		} else {
			memcpy(clean + o, "\xef\xbf\xbd", 3);
			o += 3;
			p++;
		}
	}
	clean[o] = '\0';
	return json_string(clean);
}

static const char *verdict_name(uint32_t v)
{
	return v == SANDLOCK_VERDICT_DENY ? "deny" : v == SANDLOCK_VERDICT_AUDIT ? "audit" : "allow";
}

static json_t *family_value(int32_t family)
{
	switch (family) {
	case AF_INET:
		return json_string("inet");
	case AF_INET6:
		return json_string("inet6");
	case AF_UNIX:
		return json_string("unix");
	default:
		return json_integer(family);
	}
}

static json_t *errno_value(int32_t e)
{
	const char *name = strerrorname_np(e);
	return name ? json_string(name) : json_integer(e);
}

/* Each key once, in the documented order; a NULL value (out of memory) fails the object. */
static int put(json_t *o, const char *key, json_t *v)
{
	return json_object_set_new(o, key, v);
}

static int put_str(json_t *o, const char *key, const char *s)
{
	return s ? put(o, key, jstr(s)) : 0;
}

static int event_json(json_t *o, const sandlock_event_t *ev)
{
	int r = put(o, "seq", json_integer((json_int_t)ev->seq));
	r |= put(o, "syscall", jstr(ev->syscall));
	r |= put(o, "category", jstr(ev->category));
	r |= put(o, "pid", json_integer(ev->pid));
	r |= put(o, "ppid", json_integer(ev->ppid));
	r |= put(o, "comm", jstr(ev->comm));
	r |= put(o, "verdict", json_string(verdict_name(ev->verdict)));
	if (ev->error)
		r |= put(o, "error", errno_value(ev->error));
	if (ev->judged)
		r |= put(o, "judged", json_true());
	if (ev->first)
		r |= put(o, "first", json_true());
	r |= put_str(o, "path", ev->path);
	r |= put_str(o, "access", ev->access);
	r |= put_str(o, "host", ev->host);
	if (ev->port)
		r |= put(o, "port", json_integer(ev->port));
	if (ev->family)
		r |= put(o, "family", family_value(ev->family));
	r |= put_str(o, "protocol", ev->protocol);
	if (ev->amount)
		r |= put(o, "amount", json_integer((json_int_t)MIN(ev->amount, (uint64_t)INT64_MAX)));
	r |= put_str(o, "reason", ev->reason);
	r |= put_str(o, "hint", ev->hint);
	return r ? -ENOMEM : 0;
}

_public_ int sandlock_event_format_json(const sandlock_event_t *ev, char **ret_json)
{
	if (!event_ok(ev) || !ret_json)
		return -EINVAL;
	json_t *o = json_object();
	if (!o)
		return -ENOMEM;
	int r = event_json(o, ev);
	char *text = r == 0 ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	json_decref(o);
	if (!text)
		return -ENOMEM;
	*ret_json = text;
	return 0;
}

/* ---- the run's denials ------------------------------------------------------------------- */

_public_ size_t sandlock_sandbox_denial_count(const sandlock_sandbox_t *sb)
{
	return events_denial_count(sandbox_events(sb));
}

_public_ int sandlock_sandbox_denial(const sandlock_sandbox_t *sb, size_t i,
				     sandlock_event_t *ret_event, uint64_t *ret_count)
{
	if (!sb || !ret_event)
		return -EINVAL;
	return events_denial(sandbox_events(sb), i, ret_event, ret_count);
}

_public_ uint64_t sandlock_sandbox_events_dropped(const sandlock_sandbox_t *sb)
{
	return events_dropped(sandbox_events(sb));
}
