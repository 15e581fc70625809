/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cli: the `sandlock` program, one file per verb, on the public API only. Only the CLI prints
 * and maps errors to exit codes (CLI.md).
 */
#pragma once

#include <signal.h>

#define EXIT_USAGE 2
#define EXIT_POLICY 1
#define EXIT_TIMEOUT 124
#define EXIT_LAUNCH 127

#include "sandlock.h"

int verb_run(int argc, char **argv);
int verb_check(int argc, char **argv);
int verb_profile(int argc, char **argv);
int verb_ps(int argc, char **argv);
int verb_inspect(int argc, char **argv);
int verb_kill(int argc, char **argv);
int verb_learn(int argc, char **argv);

/* "sandlock: usage: <VERB's synopsis>" on stderr; returns EXIT_USAGE. */
int cli_usage_error(const char *verb);
/* "sandlock: <message>" on stderr; returns @code. */
int cli_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* run.c: while a sandbox starts (@starting 1), the signals of @set (SIGINT, SIGTERM, SIGHUP,
 * SIGQUIT) end sandlock with 128 + the signal, as one passed on to the command would; after it
 * (@starting 0) they are blocked, for a signalfd to read and pass on. One sandlock was started
 * ignoring stays ignored. */
void cli_spawn_signals(const sigset_t *set, int starting);
/* run.c: wait for @sb's end, passing on the signals @sigfd reads (a signalfd of the signals
 * sandlock forwards); @tick, when given, is called every @tick_ms meanwhile. */
void cli_wait_forwarding(sandlock_sandbox_t *sb, int sigfd, int tick_ms, void (*tick)(void *),
			 void *user_data);
/* run.c: the library's notices of the ended run, a "sandlock: " line each on stderr. */
void cli_print_notices(sandlock_sandbox_t *sb);
