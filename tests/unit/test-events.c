/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-events: the event stream (supervisor/events.c) driven directly, and its formats
 * (api-events.c): the denial table (one entry per object and reason, counted, bounded), `first`,
 * the sequence numbers and their order at the callback, a full queue behind a blocked callback
 * (counted, emit returns at once), the caller's process, parent and name, a NULL stream; the
 * denial line of every kind of denial and the JSON object (keys, order, absent fields).
 */
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/events.h"
#include "tap.h"

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct event denial(const char *path, const char *reason)
{
	return (struct event){
		.nr = SYS_openat,
		.category = EVENT_FILE,
		.pid = getpid(),
		.verdict = SANDLOCK_VERDICT_DENY,
		.error = EACCES,
		.path = path,
		.access = "O_RDONLY",
		.reason = reason,
		.hint = "add -r /etc",
	};
}

static void null_stream(void)
{
	struct event ev = denial("/etc/x", "no read grant covers /etc");

	events_emit(NULL, &ev);
	events_emit_to(NULL, &ev);
	ok(events_wants(NULL, SANDLOCK_VERDICT_DENY) == 0, "NULL stream: wants nothing");
	is_int(events_flags(NULL), 0, "NULL stream: flags 0");
	is_int(events_denial_count(NULL), 0, "NULL stream: no denials");
	is_int(events_dropped(NULL), 0, "NULL stream: nothing dropped");
	sandlock_event_t out;
	is_int(events_denial(NULL, 0, &out, NULL), -ERANGE, "NULL stream: denial 0 is -ERANGE");
	events_stop(NULL);
	events_free(NULL);
}

static void table(void)
{
	struct events *evs = NULL;
	sandlock_event_t e;
	uint64_t count = 0;

	is_int(events_new(&evs, 0, NULL, NULL), 0, "events_new without a callback");
	is_int(events_start(evs), 0, "events_start without a callback: nothing to start");
	ok(events_wants(evs, SANDLOCK_VERDICT_DENY), "a denial is always wanted (the table)");
	ok(!events_wants(evs, SANDLOCK_VERDICT_ALLOW), "an allowed event without a callback: not");

	struct event a = denial("/etc/gitconfig", "no read grant covers /etc");
	struct event b = denial("/etc/passwd", "no read grant covers /etc");
	for (int i = 0; i < 3; i++)
		events_emit_to(evs, &a);
	events_emit_to(evs, &b);
	a.access = "O_RDONLY|O_CLOEXEC"; /* another access to the same object: the same entry */
	a.nr = SYS_open;
	events_emit_to(evs, &a);
	struct event allowed = b;
	allowed.verdict = SANDLOCK_VERDICT_ALLOW;
	events_emit_to(evs, &allowed);

	is_int(events_denial_count(evs), 2, "two objects: two entries");
	is_int(events_denial(evs, 0, &e, &count), 0, "entry 0");
	is_str(e.path, "/etc/gitconfig", "entry 0 is the first seen");
	is_int(count, 4, "entry 0 seen four times (its two accesses together)");
	is_str(e.syscall, "openat", "the syscall's name is looked up from its number");
	is_str(e.category, "file", "category file");
	is_str(e.access, "O_RDONLY", "the entry keeps the first event's access");
	is_int(e.first, 1, "the entry is the first of its object");
	is_int(e.seq, 1, "entry 0: seq 1");
	is_int(e.error, EACCES, "its errno");
	is_int(e.size, sizeof(sandlock_event_t), "size is the library's struct");
	is_int(events_denial(evs, 1, &e, &count), 0, "entry 1");
	is_str(e.path, "/etc/passwd", "entry 1: the second object");
	is_int(count, 1, "entry 1 seen once");
	is_int(e.seq, 2, "entry 1: seq 2 (repeats without a callback are not numbered)");
	is_int(events_denial(evs, 2, &e, &count), -ERANGE, "entry 2 is -ERANGE");

	/* Without an object, the syscall tells blocked calls apart. */
	struct event mount = { .nr = SYS_mount, .category = EVENT_PROCESS, .pid = getpid(),
			       .verdict = SANDLOCK_VERDICT_DENY, .error = EPERM,
			       .reason = "blocked syscall" };
	struct event ptrace = mount;
	ptrace.nr = SYS_ptrace;
	events_emit_to(evs, &mount);
	events_emit_to(evs, &ptrace);
	events_emit_to(evs, &mount);
	is_int(events_denial_count(evs), 4, "blocked mount and ptrace: two entries more");
	/* The amount is no part of a memory denial's key: each mmap asks another size. */
	struct event mem = { .nr = SYS_mmap, .category = EVENT_MEMORY, .pid = getpid(),
			     .verdict = SANDLOCK_VERDICT_DENY, .error = ENOMEM, .amount = 4096,
			     .reason = "memory limit 64 MiB reached", .hint = "raise --max-memory" };
	events_emit_to(evs, &mem);
	mem.amount = 1 << 20;
	events_emit_to(evs, &mem);
	is_int(events_denial_count(evs), 5, "two refused mmaps of other sizes: one entry");
	struct event kill = mem;
	kill.nr = -1;
	kill.syscall = "max_memory";
	events_emit_to(evs, &kill);
	is_int(events_denial_count(evs), 5, "the limit's kill: the same entry");
	struct event fork_ev = { .nr = SYS_fork, .category = EVENT_PROCESS, .pid = getpid(),
				 .verdict = SANDLOCK_VERDICT_DENY, .error = EAGAIN, .amount = 10,
				 .reason = "process limit 10 reached" };
	struct event clone_ev = fork_ev;
	clone_ev.nr = SYS_clone;
	events_emit_to(evs, &fork_ev);
	events_emit_to(evs, &clone_ev);
	is_int(events_denial_count(evs), 6, "a refused fork and clone: one entry");
	is_int(events_dropped(evs), 0, "nothing dropped");
	events_free(evs);
}

static void table_bounded(void)
{
	struct events *evs = NULL;
	char path[64];

	events_new(&evs, 0, NULL, NULL);
	for (int i = 0; i < EVENTS_DENIALS_MAX + 44; i++) {
		snprintf(path, sizeof(path), "/etc/f%d", i);
		struct event ev = denial(path, "no read grant covers /etc");
		events_emit_to(evs, &ev);
		events_emit_to(evs, &ev); /* a repeat is not a new distinct denial */
	}
	is_int(events_denial_count(evs), EVENTS_DENIALS_MAX, "the table keeps %d",
	       EVENTS_DENIALS_MAX);
	is_int(events_dropped(evs), 44, "the 44 distinct denials past it are counted");
	is_int(events_overflowed(evs), 0, "none of them is a queue overflow");
	events_free(evs);
}

/* ---- the callback ------------------------------------------------------------------------ */

struct sink {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int block;   /* the callback waits while set */
	int entered; /* the callback ran at least once */
	size_t n;
	uint64_t seq[8192];
	uint32_t first[8192];
	pid_t tid[8192];
	char comm[64];
	int32_t pid, ppid;
};

static void sink_fn(const sandlock_event_t *ev, void *user_data)
{
	struct sink *s = user_data;

	pthread_mutex_lock(&s->lock);
	s->entered = 1;
	pthread_cond_broadcast(&s->cond);
	while (s->block)
		pthread_cond_wait(&s->cond, &s->lock);
	if (s->n < 8192) {
		s->seq[s->n] = ev->seq;
		s->first[s->n] = ev->first;
		s->tid[s->n] = (pid_t)syscall(SYS_gettid);
		s->n++;
	}
	snprintf(s->comm, sizeof(s->comm), "%s", ev->comm ? ev->comm : "(null)");
	s->pid = ev->pid;
	s->ppid = ev->ppid;
	pthread_mutex_unlock(&s->lock);
}

static struct sink *sink_new(void)
{
	struct sink *s = calloc(1, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	return s;
}

static void ordering(void)
{
	struct sink *s = sink_new();
	struct events *evs = NULL;
	char path[64];

	events_new(&evs, SANDLOCK_EVENTS_ALLOWED, sink_fn, s);
	is_int(events_start(evs), 0, "events_start with a callback");
	ok(events_wants(evs, SANDLOCK_VERDICT_ALLOW), "ALLOWED and a callback: allowed wanted");
	for (int i = 0; i < 1000; i++) {
		snprintf(path, sizeof(path), "/etc/f%d", i % 10);
		struct event ev = denial(path, "no read grant covers /etc");
		if (i % 3 == 0)
			ev.verdict = SANDLOCK_VERDICT_ALLOW;
		events_emit_to(evs, &ev);
	}
	events_stop(evs);
	events_stop(evs); /* idempotent */
	is_int(s->n, 1000, "every event reached the callback before events_stop returned");
	int in_order = 1, firsts = 0, other_thread = 1;
	for (size_t i = 0; i < s->n; i++) {
		in_order &= s->seq[i] == i + 1;
		firsts += s->first[i];
		other_thread &= s->tid[i] != (pid_t)syscall(SYS_gettid);
	}
	ok(in_order, "delivered in order, seq 1, 2, ...");
	is_int(firsts, 10, "ten objects denied: ten events are the first of theirs");
	ok(other_thread, "the callback runs on the events thread, not the emitter's");
	is_int(events_denial_count(evs), 10, "the table has the ten");
	events_free(evs);
	free(s);
}

static void overflow(void)
{
	struct sink *s = sink_new();
	struct events *evs = NULL;
	struct event ev = denial("/etc/x", "no read grant covers /etc");

	events_new(&evs, 0, sink_fn, s);
	events_start(evs);
	s->block = 1;
	events_emit_to(evs, &ev);
	/* The first event is in the callback, which waits: the queue fills behind it. */
	pthread_mutex_lock(&s->lock);
	while (!s->entered)
		pthread_cond_wait(&s->cond, &s->lock);
	pthread_mutex_unlock(&s->lock);
	int64_t t0 = now_ms();
	for (int i = 0; i < EVENTS_QUEUE_MAX + 50; i++)
		events_emit_to(evs, &ev);
	int64_t took = now_ms() - t0;
	ok(took < 2000, "emit never waits for a blocked callback (%lld ms for %d events)",
	   (long long)took, EVENTS_QUEUE_MAX + 50);
	is_int(events_overflowed(evs), 50, "the 50 events past the full queue are counted");
	is_int(events_dropped(evs), 50, "and reported as dropped");
	pthread_mutex_lock(&s->lock);
	s->block = 0;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	events_stop(evs);
	is_int(s->n, EVENTS_QUEUE_MAX + 1, "the queued ones are delivered once it returns");
	ok(s->seq[s->n - 1] == (uint64_t)EVENTS_QUEUE_MAX + 1,
	   "the dropped ones were the last, numbered after the delivered ones");
	events_free(evs);
	free(s);
}

static void *emit_from_thread(void *arg)
{
	struct event ev = denial("/etc/thread", "no read grant covers /etc");
	ev.pid = (pid_t)syscall(SYS_gettid); /* a thread's id, as req->pid is */
	events_emit_to(arg, &ev);
	return NULL;
}

static void caller(void)
{
	struct sink *s = sink_new();
	struct events *evs = NULL;
	pthread_t t;
	char comm[64] = "";
	FILE *f = fopen("/proc/self/comm", "re");

	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	events_new(&evs, 0, sink_fn, s);
	events_start(evs);
	pthread_create(&t, NULL, emit_from_thread, evs);
	pthread_join(t, NULL);
	events_stop(evs);
	is_int(s->pid, getpid(), "a thread's id is reported as its process");
	is_int(s->ppid, getppid(), "ppid read from /proc");
	is_str(s->comm, comm, "comm read from /proc");

	/* A process that is gone: its pid as given, comm "". */
	pid_t gone = fork();
	if (gone == 0)
		_exit(0);
	waitpid(gone, NULL, 0);
	struct event ev = denial("/etc/gone", "no read grant covers /etc");
	ev.pid = gone;
	events_emit_to(evs, &ev);
	sandlock_event_t e;
	events_denial(evs, events_denial_count(evs) - 1, &e, NULL);
	is_int(e.pid, gone, "a process gone: its pid");
	is_str(e.comm, "", "a process gone: comm \"\"");
	events_free(evs);
	free(s);
}

/* ---- formats ----------------------------------------------------------------------------- */

static sandlock_event_t base(const char *syscall, const char *category)
{
	return (sandlock_event_t){
		.size = sizeof(sandlock_event_t),
		.seq = 7,
		.syscall = syscall,
		.category = category,
		.pid = 123,
		.ppid = 1,
		.comm = "git",
		.verdict = SANDLOCK_VERDICT_DENY,
		.error = EACCES,
		.first = 1,
	};
}

static void line_is(const sandlock_event_t *e, const char *want, const char *name)
{
	char *line = NULL;
	int r = sandlock_event_format(e, &line);
	if (r < 0)
		diag("sandlock_event_format: %d", r);
	is_str(line, want, "line: %s", name);
	sandlock_free(line);
}

static void format_lines(void)
{
	sandlock_event_t e = base("openat", "file");
	e.path = "/etc/gitconfig";
	e.access = "O_RDONLY";
	e.reason = "no read grant covers /etc";
	e.hint = "add -r /etc";
	line_is(&e,
		"denied openat(\"/etc/gitconfig\", O_RDONLY) by pid 123 (git): no read grant covers "
		"/etc; add -r /etc",
		"file read");
	e.access = NULL;
	e.hint = NULL;
	line_is(&e, "denied openat(\"/etc/gitconfig\") by pid 123 (git): no read grant covers /etc",
		"file, no access, no hint");
	e.path = "/tmp/a\"b\n";
	line_is(&e, "denied openat(\"/tmp/a\\\"b\\n\") by pid 123 (git): no read grant covers /etc",
		"a quote and a newline in a path are escaped");

	e = base("connect", "network");
	e.comm = "curl";
	e.host = "127.0.0.1";
	e.port = 8080;
	e.family = AF_INET;
	e.protocol = "tcp";
	e.error = ECONNREFUSED;
	e.reason = "no net_allow rule covers 127.0.0.1:8080";
	e.hint = "add --net-allow 127.0.0.1:8080";
	line_is(&e,
		"denied connect(127.0.0.1:8080) by pid 123 (curl): no net_allow rule covers "
		"127.0.0.1:8080; add --net-allow 127.0.0.1:8080",
		"connect ipv4");
	e.host = "::1";
	e.family = AF_INET6;
	e.reason = "no net_allow rule covers [::1]:8080";
	e.hint = NULL;
	line_is(&e, "denied connect([::1]:8080) by pid 123 (curl): no net_allow rule covers [::1]:8080",
		"connect ipv6 in brackets");
	e = base("sendto", "network");
	e.host = "127.0.0.1";
	e.port = 53;
	e.family = AF_INET;
	e.protocol = "udp";
	e.reason = "no net_allow rule covers udp 127.0.0.1:53";
	e.hint = "add --net-allow udp://127.0.0.1:53";
	line_is(&e,
		"denied sendto(127.0.0.1:53/udp) by pid 123 (git): no net_allow rule covers udp "
		"127.0.0.1:53; add --net-allow udp://127.0.0.1:53",
		"udp");
	e = base("connect", "network");
	e.path = "/run/x.sock";
	e.family = AF_UNIX;
	e.protocol = "unix";
	e.reason = "no write grant covers /run";
	e.hint = "add -w /run";
	line_is(&e,
		"denied connect(\"/run/x.sock\") by pid 123 (git): no write grant covers /run; add "
		"-w /run",
		"unix socket path");
	e = base("bind", "network");
	e.host = "0.0.0.0";
	e.port = 9000;
	e.family = AF_INET;
	e.protocol = "tcp";
	e.reason = "no bind grant covers port 9000";
	e.hint = "add --net-allow-bind 9000";
	line_is(&e,
		"denied bind(0.0.0.0:9000) by pid 123 (git): no bind grant covers port 9000; add "
		"--net-allow-bind 9000",
		"bind");
	e = base("mmap", "memory");
	e.amount = 1048576;
	e.error = ENOMEM;
	e.reason = "memory limit 64 MiB reached";
	e.hint = "raise --max-memory";
	line_is(&e,
		"denied mmap(1048576 bytes) by pid 123 (git): memory limit 64 MiB reached; raise "
		"--max-memory",
		"memory");
	e = base("fork", "process");
	e.amount = 10;
	e.error = EAGAIN;
	e.reason = "process limit 10 reached";
	e.hint = "raise --max-processes";
	line_is(&e, "denied fork() by pid 123 (git): process limit 10 reached; raise --max-processes",
		"process limit (its amount is not shown)");
	e = base("mount", "process");
	e.comm = "x";
	e.pid = 7;
	e.error = EPERM;
	e.reason = "blocked syscall";
	line_is(&e, "denied mount() by pid 7 (x): blocked syscall", "blocked syscall, no hint");
	e.syscall = "shmget";
	e.hint = "add --extra-allow-syscall sysv_ipc";
	line_is(&e,
		"denied shmget() by pid 7 (x): blocked syscall; add --extra-allow-syscall sysv_ipc",
		"blocked syscall with a hint");

	char *line = NULL;
	e.verdict = SANDLOCK_VERDICT_ALLOW;
	is_int(sandlock_event_format(&e, &line), -EINVAL, "an allowed event has no denial line");
	e.verdict = SANDLOCK_VERDICT_DENY;
	e.size = 8;
	is_int(sandlock_event_format(&e, &line), -EINVAL, "a struct too small is -EINVAL");
	is_int(sandlock_event_format(NULL, &line), -EINVAL, "NULL event is -EINVAL");
	ok(line == NULL, "nothing returned on error");
}

static void json_is(const sandlock_event_t *e, const char *want, const char *name)
{
	char *text = NULL;
	int r = sandlock_event_format_json(e, &text);
	if (r < 0)
		diag("sandlock_event_format_json: %d", r);
	is_str(text, want, "json: %s", name);
	json_error_t err;
	json_t *j = text ? json_loads(text, 0, &err) : NULL;
	ok(j != NULL, "json: %s parses", name);
	json_decref(j);
	sandlock_free(text);
}

static void format_json(void)
{
	sandlock_event_t e = base("openat", "file");
	e.judged = 1;
	e.path = "/etc/gitconfig";
	e.access = "O_RDONLY";
	e.reason = "no read grant covers /etc";
	e.hint = "add -r /etc";
	json_is(&e,
		"{\"seq\":7,\"syscall\":\"openat\",\"category\":\"file\",\"pid\":123,\"ppid\":1,"
		"\"comm\":\"git\",\"verdict\":\"deny\",\"error\":\"EACCES\",\"judged\":true,"
		"\"first\":true,\"path\":\"/etc/gitconfig\",\"access\":\"O_RDONLY\",\"reason\":"
		"\"no read grant covers /etc\",\"hint\":\"add -r /etc\"}",
		"a judged file denial");
	e = base("connect", "network");
	e.verdict = SANDLOCK_VERDICT_ALLOW;
	e.error = 0;
	e.first = 0;
	e.host = "::1";
	e.port = 443;
	e.family = AF_INET6;
	e.protocol = "tcp";
	json_is(&e,
		"{\"seq\":7,\"syscall\":\"connect\",\"category\":\"network\",\"pid\":123,\"ppid\":1,"
		"\"comm\":\"git\",\"verdict\":\"allow\",\"host\":\"::1\",\"port\":443,\"family\":"
		"\"inet6\",\"protocol\":\"tcp\"}",
		"an allowed connect: no error, first, reason or hint");
	e = base("mmap", "memory");
	e.error = ENOMEM;
	e.first = 0;
	e.amount = 4096;
	e.comm = NULL;
	e.reason = "memory limit 1 MiB reached";
	json_is(&e,
		"{\"seq\":7,\"syscall\":\"mmap\",\"category\":\"memory\",\"pid\":123,\"ppid\":1,"
		"\"comm\":\"\",\"verdict\":\"deny\",\"error\":\"ENOMEM\",\"amount\":4096,\"reason\":"
		"\"memory limit 1 MiB reached\"}",
		"memory: amount; a NULL comm is \"\"");
	e = base("openat", "file");
	e.path = "/tmp/\xff\x41";
	e.reason = "r";
	json_is(&e,
		"{\"seq\":7,\"syscall\":\"openat\",\"category\":\"file\",\"pid\":123,\"ppid\":1,"
		"\"comm\":\"git\",\"verdict\":\"deny\",\"error\":\"EACCES\",\"first\":true,"
		"\"path\":\"/tmp/\xef\xbf\xbd" "A\",\"reason\":\"r\"}",
		"a path that is not UTF-8 stays valid JSON");
	char *text = NULL;
	is_int(sandlock_event_format_json(NULL, &text), -EINVAL, "json: NULL event is -EINVAL");
}

int main(void)
{
	null_stream();
	table();
	table_bounded();
	ordering();
	overflow();
	caller();
	format_lines();
	format_json();
	return done_testing();
}
