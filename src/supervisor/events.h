/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * events: every decision of the supervisor as one stream. A handler, on the loop or on a
 * worker, describes what it decided (struct event) and calls events_emit(), which copies it and
 * never waits: denials go into the run's table (one entry per object and reason, counted), and
 * when the caller gave a callback, the event goes into a bounded queue that the events thread
 * empties into it. A full queue drops the event and counts it; the loop never stalls.
 *
 * Ownership: struct events is the sandbox's (sv->events), made by events_new before the launch
 * and released by events_free after events_stop; the table's strings live until then.
 */
#pragma once

#include <linux/seccomp.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandlock.h"

struct supervisor;
struct events;

enum event_category {
	EVENT_FILE,
	EVENT_NETWORK,
	EVENT_PROCESS,
	EVENT_MEMORY,
};

#define EVENTS_QUEUE_MAX 4096  /* events waiting for the callback */
#define EVENTS_DENIALS_MAX 256 /* distinct denials kept for sandlock_sandbox_denial */

/* What a handler decided. Strings are borrowed for the call (events_emit copies them); NULL or
 * 0 where the event has none. */
struct event {
	int nr;		     /* the syscall's number (its name is looked up), or -1 */
	const char *syscall; /* the name to show instead (a limit's "fork"), or NULL */
	enum event_category category;
	pid_t pid;	  /* the trapped task's process (req->pid is its thread: either is fine) */
	uint32_t verdict; /* SANDLOCK_VERDICT_* */
	int error;	  /* a denial's errno, positive */
	int judged;	  /* the kernel's denial, judged for the log */
	const char *path;
	const char *access;
	const char *host;
	uint32_t port;
	int family;
	const char *protocol;
	uint64_t amount;
	const char *reason; /* a denial: required */
	const char *hint;
};

/* Make the sandbox's stream: @flags SANDLOCK_EVENTS_*, @fn (may be NULL) called with @user_data
 * on the events thread, which events_start starts. -ENOMEM. */
int events_new(struct events **ret, uint32_t flags, sandlock_event_fn fn, void *user_data);
/* Start the events thread (only when there is a callback). 0 or -errno. */
int events_start(struct events *evs);
/* Deliver what is queued, stop the thread. Called at the sandbox's end, once the workers are
 * stopped (nothing emits any more). Idempotent. */
void events_stop(struct events *evs);
void events_free(struct events *evs);

/* The SANDLOCK_EVENTS_* flags of the run (0 for NULL): whether to trap and judge the kernel's
 * denials, whether allowed decisions are wanted. */
uint32_t events_flags(const struct events *evs);
/* Whether an event of @verdict would go anywhere: a denial always (the table), an allowed
 * decision only with SANDLOCK_EVENTS_ALLOWED and a callback. Lets a handler skip building it. */
int events_wants(const struct events *evs, uint32_t verdict);

/* Record @ev: fills in the sequence number, the process's parent and name (read from
 * /proc/PID now, while the task waits), whether it is the first of its object and reason;
 * adds a denial to the table; queues it for the callback. Never blocks, never fails (what does
 * not fit is counted). Safe from the loop and from workers. */
void events_emit(struct supervisor *sv, const struct event *ev);
/* events_emit of a plain denial of @req (its syscall and process): @error, @reason, @hint. */
void events_deny(struct supervisor *sv, const struct seccomp_notif *req,
		 enum event_category category, int error, const char *reason, const char *hint);
/* The same into @evs (NULL: nothing), for a caller without a supervisor (the tests). */
void events_emit_to(struct events *evs, const struct event *ev);

/* The table, for the API once the sandbox ended: the number of distinct denials, the @i-th (its
 * strings owned by @evs) and how often it was seen, the events dropped. */
size_t events_denial_count(const struct events *evs);
int events_denial(const struct events *evs, size_t i, sandlock_event_t *ret, uint64_t *ret_count);
uint64_t events_dropped(const struct events *evs);
/* Of those, the events the full queue did not take (the callback too slow). */
uint64_t events_overflowed(const struct events *evs);
