/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * run-log: `sandlock run --log-denials[=FILE]` and `--log-events=FILE`. The library calls
 * on_event on a thread of its own, one event at a time, so the callback keeps no lock, uses no
 * stdio (the main thread may be printing) and writes each line with one write(2): a line never
 * mixes with the command's output or with the other log's line in the same file. The denial log
 * shows the first of each object and reason, at most RATE_LINES a second; what it held back is
 * counted, and said once the sandbox ended (every callback has returned by then).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "options.h"

#define RATE_LINES 20 /* denial lines a second, at most */

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* @text and a newline in one write (a short one goes on: a full pipe, a signal). */
static void write_line(int fd, const char *text)
{
	size_t n = strlen(text);
	char *buf = malloc(n + 1);

	if (!buf)
		return;
	memcpy(buf, text, n);
	buf[n++] = '\n';
	for (size_t off = 0; off < n;) {
		ssize_t k = write(fd, buf + off, n - off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		off += (size_t)k;
	}
	free(buf);
}

static void log_denial(struct run_log *l, const sandlock_event_t *ev)
{
	if (ev->verdict != SANDLOCK_VERDICT_DENY || !ev->first)
		return;
	int64_t t = now_ms();
	if (t - l->window_ms >= 1000) {
		l->window_ms = t;
		l->in_window = 0;
	}
	if (l->in_window >= RATE_LINES) {
		l->held_back++;
		return;
	}
	l->in_window++;
	char *line = NULL, *out = NULL;
	if (sandlock_event_format(ev, &line) == 0 && asprintf(&out, "sandlock: %s", line) >= 0)
		write_line(l->denials_fd, out);
	free(out);
	sandlock_free(line);
}

static void on_event(const sandlock_event_t *ev, void *user_data)
{
	struct run_log *l = user_data;

	if (l->denials_fd >= 0)
		log_denial(l, ev);
	if (l->events_fd >= 0) {
		char *json = NULL;
		if (sandlock_event_format_json(ev, &json) == 0)
			write_line(l->events_fd, json);
		sandlock_free(json);
	}
}

/* FILE, truncated; appended to, so that both logs may name the same one. */
static int open_log(const char *flag, const char *path, int *ret_fd)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC | O_NOCTTY, 0644);
	if (fd < 0)
		return cli_error(EXIT_USAGE, "--%s=%s: %s", flag, path, strerror(errno));
	*ret_fd = fd;
	return 0;
}

int run_log_open(struct run_ctx *c, sandlock_spawn_opts_t *opts)
{
	struct run_log *l = &c->log;
	int r;

	l->denials_fd = l->events_fd = -1;
	if (c->log_denials)
		l->denials_fd = STDERR_FILENO;
	if (c->log_denials_file && (r = open_log("log-denials", c->log_denials_file,
						 &l->denials_fd)) != 0)
		return r;
	if (c->log_events_file &&
	    (r = open_log("log-events", c->log_events_file, &l->events_fd)) != 0)
		return r;
	if (c->log_denials)
		opts->events |= SANDLOCK_EVENTS_DENIALS;
	if (c->log_events_file)
		opts->events |= SANDLOCK_EVENTS_DENIALS | SANDLOCK_EVENTS_ALLOWED;
	if (opts->events) {
		opts->on_event = on_event;
		opts->event_user_data = l;
	}
	return 0;
}

void run_log_close(struct run_ctx *c)
{
	struct run_log *l = &c->log;

	if (l->held_back) {
		char line[96];
		snprintf(line, sizeof(line), "sandlock: %llu more denial%s not shown",
			 (unsigned long long)l->held_back, l->held_back == 1 ? "" : "s");
		write_line(l->denials_fd, line);
		l->held_back = 0;
	}
	if (l->denials_fd > STDERR_FILENO)
		close(l->denials_fd);
	if (l->events_fd >= 0)
		close(l->events_fd);
	l->denials_fd = l->events_fd = -1;
}
