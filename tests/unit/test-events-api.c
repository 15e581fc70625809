/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-events-api: the event stream's C ABI through the public header only: the spawn options
 * (unknown flags, reserved3, ALLOWED without a callback, events without a supervisor), a spawn
 * with on_event and SANDLOCK_EVENTS_DENIALS: the callback runs on a thread of the library's,
 * never after sandlock_sandbox_wait() returned, and what it saw agrees with the denial table
 * (each first denial is an entry, in order, with its count). Which denials a run produces is
 * the handlers' (tests/integration/test_denials.py covers each kind): here the command reads a
 * file outside its grants, and whatever the run reports must be consistent.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sandlock.h"
#include "spawn-helpers.h"
#include "tap.h"

struct seen {
	pthread_mutex_t lock;
	size_t n, firsts;
	uint64_t first_seq[512];
	int on_main; /* a callback ran on the spawning thread */
	int bad_line;
};

static void on_event(const sandlock_event_t *ev, void *user_data)
{
	struct seen *s = user_data;
	char *line = NULL;

	pthread_mutex_lock(&s->lock);
	s->n++;
	if ((pid_t)syscall(SYS_gettid) == getpid())
		s->on_main = 1;
	if (ev->verdict == SANDLOCK_VERDICT_DENY && ev->first && s->firsts < 512)
		s->first_seq[s->firsts++] = ev->seq;
	if (ev->verdict == SANDLOCK_VERDICT_DENY &&
	    (sandlock_event_format(ev, &line) < 0 || strncmp(line, "denied ", 7) != 0))
		s->bad_line = 1;
	sandlock_free(line);
	pthread_mutex_unlock(&s->lock);
}

static int spawn_with(const sandlock_policy_t *p, sandlock_spawn_opts_t *o, char **msg)
{
	const char *argv[] = { "/bin/true", NULL };
	sandlock_sandbox_t *sb = NULL;
	sandlock_error_t *err = NULL;

	int r = sandlock_spawn(p, argv, o, &sb, &err);
	if (msg)
		*msg = err ? strdup(sandlock_error_message(err)) : NULL;
	sandlock_error_free(err);
	if (sb) {
		sandlock_sandbox_wait(sb, -1);
		sandlock_sandbox_free(sb);
	}
	return r;
}

static void options(sandlock_policy_t *p)
{
	struct seen s = { .lock = PTHREAD_MUTEX_INITIALIZER };
	sandlock_spawn_opts_t o = { .size = sizeof(o), .events = 1u << 7 };
	char *msg = NULL;

	is_int(spawn_with(p, &o, &msg), -EINVAL, "an unknown events flag is -EINVAL");
	ok(msg && strstr(msg, "opts->events") && strstr(msg, "0x80"), "its message names it: %s",
	   msg ? msg : "(none)");
	free(msg);
	o = (sandlock_spawn_opts_t){ .size = sizeof(o), .reserved3 = 1 };
	is_int(spawn_with(p, &o, NULL), -EINVAL, "reserved3 != 0 is -EINVAL");
	o = (sandlock_spawn_opts_t){ .size = sizeof(o), .events = SANDLOCK_EVENTS_ALLOWED };
	is_int(spawn_with(p, &o, NULL), -EINVAL, "SANDLOCK_EVENTS_ALLOWED without on_event");
	/* An older caller's struct ends before the events: they are not read. */
	o = (sandlock_spawn_opts_t){ .size = offsetof(sandlock_spawn_opts_t, events),
				     .events = 1u << 7 };
	is_int(spawn_with(p, &o, NULL), 0, "a struct without the events field: not read");
	o = (sandlock_spawn_opts_t){ .size = sizeof(o), .events = SANDLOCK_EVENTS_DENIALS,
				     .on_event = on_event, .event_user_data = &s };
	is_int(spawn_with(p, &o, NULL), 0, "control: DENIALS with a callback spawns");

	sandlock_policy_t *q = system_policy();
	sandlock_policy_set(q, "no_supervisor", "true", NULL);
	is_int(spawn_with(q, &o, &msg), -EINVAL, "events without a supervisor is -EINVAL");
	ok(msg && strstr(msg, "supervisor"), "its message says why: %s", msg ? msg : "(none)");
	free(msg);
	o.events = 0;
	o.on_event = NULL;
	is_int(spawn_with(q, &o, NULL), 0, "control: no events without a supervisor spawns");
	sandlock_policy_free(q);
}

static void run_with_callback(sandlock_policy_t *p)
{
	struct seen s = { .lock = PTHREAD_MUTEX_INITIALIZER };
	sandlock_spawn_opts_t o = { .size = sizeof(o), .events = SANDLOCK_EVENTS_DENIALS,
				    .on_event = on_event, .event_user_data = &s,
				    .stdout_mode = SANDLOCK_STDIO_NULL,
				    .stderr_mode = SANDLOCK_STDIO_NULL };
	/* /etc is not granted: the read is refused (by Landlock, judged for the log). */
	const char *argv[] = { "/bin/sh", "-c", "cat /etc/hostname; cat /etc/hostname; exit 3",
			       NULL };
	sandlock_sandbox_t *sb = NULL;
	sandlock_error_t *err = NULL;

	is_int(sandlock_spawn(p, argv, &o, &sb, &err), 0, "spawn with on_event");
	if (!sb) {
		diag("%s", err ? sandlock_error_message(err) : "?");
		sandlock_error_free(err);
		return;
	}
	is_int(sandlock_sandbox_denial_count(sb), 0, "no denials before the end");
	sandlock_event_t e;
	is_int(sandlock_sandbox_denial(sb, 0, &e, NULL), -ERANGE, "denial 0 before the end");
	is_int(sandlock_sandbox_wait(sb, -1), 0, "wait");
	pthread_mutex_lock(&s.lock);
	size_t n = s.n, firsts = s.firsts;
	pthread_mutex_unlock(&s.lock);
	struct timespec ts = { 0, 50 * 1000000 };
	nanosleep(&ts, NULL);
	pthread_mutex_lock(&s.lock);
	is_int(s.n, n, "no callback after sandlock_sandbox_wait returned (%zu events)", n);
	pthread_mutex_unlock(&s.lock);
	ok(!s.on_main, "the callback never ran on the spawning thread");
	ok(!s.bad_line, "every denial the callback got has its line");
	is_int(sandlock_sandbox_exit_code(sb), 3, "the command ran to its end");
	size_t count = sandlock_sandbox_denial_count(sb);
	is_int(count, firsts, "each first denial the callback saw is one entry of the table");
	int agree = 1;
	for (size_t i = 0; i < count && i < 512; i++) {
		uint64_t times = 0;
		agree &= sandlock_sandbox_denial(sb, i, &e, &times) == 0 &&
			 e.seq == s.first_seq[i] && times >= 1 && e.first == 1 &&
			 e.verdict == SANDLOCK_VERDICT_DENY && e.reason;
	}
	ok(agree, "the table's entries are those denials, in order, counted");
	if (count == 0)
		diag("no denial reported: the kernel's denials are judged by supervisor/judge.c");
	is_int(sandlock_sandbox_denial(sb, count, &e, NULL), -ERANGE, "past the last: -ERANGE");
	is_int(sandlock_sandbox_denial(sb, 0, NULL, NULL), -EINVAL, "NULL event: -EINVAL");
	is_int(sandlock_sandbox_events_dropped(sb), 0, "nothing dropped");
	sandlock_sandbox_free(sb);
	is_int(sandlock_sandbox_denial_count(NULL), 0, "NULL sandbox: no denials");
	is_int(sandlock_sandbox_events_dropped(NULL), 0, "NULL sandbox: nothing dropped");
}

int main(void)
{
	sandlock_policy_t *p = system_policy();

	if (!p)
		return 1;
	options(p);
	run_with_callback(p);
	sandlock_policy_free(p);
	return done_testing();
}
