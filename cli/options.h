/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * options: the flag table of `sandlock run` (options.c) and the run's own settings.
 */
#pragma once

#include <stdint.h>

#include "cli.h"
#include "sandlock.h"

/* --log-denials / --log-events while the sandbox runs (run-log.c): written by the library's
 * events thread only, read once the sandbox ended. */
struct run_log {
	int denials_fd; /* -1: no denial log */
	int events_fd;	/* -1: no event log */
	int64_t window_ms;
	unsigned in_window;
	uint64_t held_back; /* first denials past the rate limit */
};

struct run_ctx {
	sandlock_policy_t *policy;
	uint64_t timeout_ms;
	const char *timeout_arg; /* as given, for the message */
	int interactive;
	int status_fd;
	const char *shell_cmd;
	int profile_loaded;
	int dry_run;		  /* --dry-run: the change list printed, the branch aborted */
	const char *dry_run_file; /* --dry-run=FILE: the change list's file, else stderr */
	int log_denials;	     /* --log-denials[=FILE] */
	const char *log_denials_file; /* its FILE, else stderr */
	const char *log_events_file;  /* --log-events=FILE */
	struct run_log log;
};

struct run_option {
	const char *name;
	int short_name;
	const char *meta; /* NULL: takes no value */
	const char *help;
	const char *field; /* the policy field it sets (and the errors name by the flag), or NULL */
	int (*apply)(struct run_ctx *c, const char *arg, const char *flag);
	int meta_optional; /* the value is optional, and only given as --name=VALUE */
};

/* run_n_options is at most this (the getopt tables are sized by it). */
#define RUN_OPTIONS_MAX 64

extern const struct run_option run_options[];
extern const size_t run_n_options;

void run_help(void);
/* The flag (without "--") closest to the unknown @typed ("--fs-rad"), or NULL when none is close
 * or two are equally close. */
const char *run_suggest(const char *typed);
/* Make @p's errors name each field by its flag ("--fs-read"). -ENOMEM. */
int run_label_fields(sandlock_policy_t *p);
/* run-log.c: open the logs' files (a usage error naming the flag and the path) and ask @opts
 * for the events they need; 0 or the exit code. run_log_close: the closing line, the files
 * closed, once the sandbox ended. */
int run_log_open(struct run_ctx *c, sandlock_spawn_opts_t *opts);
void run_log_close(struct run_ctx *c);

/* Apply one flag; returns 0 or the exit code (after printing the error). */
int run_apply(struct run_ctx *c, const struct run_option *o, const char *arg);
