/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * events: the supervisor's decisions as one stream (events.h). events_emit runs on the loop and
 * on workers, so it only copies and counts under one mutex and never waits for the callback:
 * the denial table (one entry per category, object and reason, looked up through a set of key
 * hashes), the sequence numbers, and a bounded ring of copies that the events thread hands to
 * the callback one at a time, in order. Whatever does not fit is counted, never waited for.
 *
 * The /proc look at the caller (its process, parent and name) happens only when the event goes
 * somewhere new: a new table entry, or the callback. A denial repeated in a loop with no
 * callback costs a hash and a counter.
 */
#include <errno.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "macro.h"
#include "notif.h"
#include "supervisor.h"

/* Distinct denial keys remembered (table entries and those past it), for `first`: a power of
 * two, well above EVENTS_DENIALS_MAX so that the set stays sparse. */
#define KEYS_MAX 8192u
#define KEY_NOT_KEPT UINT32_MAX /* a key seen, its entry not kept (the table was full) */

struct stored {
	sandlock_event_t ev; /* its strings point into strings[] */
	char strings[];
};

struct key_slot {
	uint64_t hash; /* 0: empty */
	uint32_t index;
};

struct events {
	uint32_t flags;
	sandlock_event_fn fn;
	void *user_data;

	pthread_mutex_t lock; /* everything below */
	pthread_cond_t cond;  /* the queue has an event, or stopping */
	uint64_t seq;
	/* Entry i is reserved when its key is first seen and filled once copied (NULL meanwhile,
	 * or for good when out of memory); counts[i] counts it from the reservation on. */
	struct stored *denials[EVENTS_DENIALS_MAX];
	uint64_t counts[EVENTS_DENIALS_MAX];
	size_t n_denials;
	uint64_t not_kept;     /* distinct denials past the table */
	uint64_t overflowed;   /* events the full queue did not take */
	struct key_slot *keys; /* KEYS_MAX, made at the first denial (most runs have none) */
	size_t n_keys;
	struct stored *queue[EVENTS_QUEUE_MAX];
	size_t head, len;
	int running, stopping;
	pthread_t thread;
};

static const char *const category_names[] = {
	[EVENT_FILE] = "file",
	[EVENT_NETWORK] = "network",
	[EVENT_PROCESS] = "process",
	[EVENT_MEMORY] = "memory",
};

int events_new(struct events **ret, uint32_t flags, sandlock_event_fn fn, void *user_data)
{
	struct events *evs = calloc(1, sizeof(*evs));

	if (!evs)
		return -ENOMEM;
	evs->flags = flags;
	evs->fn = fn;
	evs->user_data = user_data;
	pthread_mutex_init(&evs->lock, NULL);
	pthread_cond_init(&evs->cond, NULL);
	*ret = evs;
	return 0;
}

static void *events_thread(void *arg)
{
	struct events *evs = arg;

	pthread_mutex_lock(&evs->lock);
	for (;;) {
		while (evs->len == 0 && !evs->stopping)
			pthread_cond_wait(&evs->cond, &evs->lock);
		if (evs->len == 0)
			break; /* stopping, and everything delivered */
		struct stored *s = evs->queue[evs->head];
		evs->head = (evs->head + 1) % EVENTS_QUEUE_MAX;
		evs->len--;
		/* The callback runs unlocked: emit never waits for it. */
		pthread_mutex_unlock(&evs->lock);
		evs->fn(&s->ev, evs->user_data);
		free(s);
		pthread_mutex_lock(&evs->lock);
	}
	pthread_mutex_unlock(&evs->lock);
	return NULL;
}

int events_start(struct events *evs)
{
	sigset_t all, old;

	if (!evs || !evs->fn || evs->running)
		return 0;
	/* The host's signals go to its own threads, never to the callback's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int r = pthread_create(&evs->thread, NULL, events_thread, evs);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0)
		return -r;
	evs->running = 1;
	return 0;
}

void events_stop(struct events *evs)
{
	if (!evs || !evs->running)
		return;
	pthread_mutex_lock(&evs->lock);
	evs->stopping = 1;
	pthread_cond_broadcast(&evs->cond);
	pthread_mutex_unlock(&evs->lock);
	pthread_join(evs->thread, NULL);
	evs->running = 0;
}

void events_free(struct events *evs)
{
	if (!evs)
		return;
	events_stop(evs);
	for (size_t i = 0; i < evs->n_denials; i++)
		free(evs->denials[i]);
	/* Queued for a thread that never started (a spawn that failed first). */
	for (size_t i = 0; i < evs->len; i++)
		free(evs->queue[(evs->head + i) % EVENTS_QUEUE_MAX]);
	free(evs->keys);
	pthread_cond_destroy(&evs->cond);
	pthread_mutex_destroy(&evs->lock);
	free(evs);
}

uint32_t events_flags(const struct events *evs)
{
	return evs ? evs->flags : 0;
}

int events_wants(const struct events *evs, uint32_t verdict)
{
	if (!evs)
		return 0;
	if (verdict == SANDLOCK_VERDICT_DENY)
		return 1;
	/* An audited call is flagged for whoever listens, whatever the flags. */
	if (verdict == SANDLOCK_VERDICT_AUDIT)
		return evs->fn != NULL;
	return evs->fn && (evs->flags & SANDLOCK_EVENTS_ALLOWED);
}

/* ---- the key of a denial ----------------------------------------------------------------- */

static uint64_t fnv_str(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
	return (h ^ 0xff) * 0x100000001b3ULL; /* NULL, "" and the field boundaries differ */
}

static uint64_t fnv_u64(uint64_t h, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 8)
		h = (h ^ (v & 0xff)) * 0x100000001b3ULL;
	return h;
}

/* Category, object and reason. A blocked syscall, which has no object, is told apart by its
 * name: "blocked syscall" of mount and of ptrace are two denials. A limit is one denial
 * whatever the call and the amount: every refused mmap asks another size of the same
 * max_memory, and a fork and a clone meet the same max_processes. */
static uint64_t denial_key(const struct event *ev)
{
	uint64_t h = fnv_u64(0xcbf29ce484222325ULL, (uint64_t)ev->category);

	h = fnv_str(h, ev->path);
	h = fnv_str(h, ev->host);
	h = fnv_u64(h, ev->port);
	h = fnv_str(h, ev->protocol);
	h = fnv_str(h, ev->reason);
	if (!ev->path && !ev->host && !ev->amount && ev->category != EVENT_MEMORY) {
		h = fnv_u64(h, (uint64_t)(int64_t)ev->nr);
		h = fnv_str(h, ev->syscall);
	}
	return h ? h : 1; /* 0 marks an empty slot */
}

/* The slot of @key: its own, or the empty one where it goes; NULL when the set is full. */
static struct key_slot *key_find(struct events *evs, uint64_t key)
{
	if (!evs->keys && !(evs->keys = calloc(KEYS_MAX, sizeof(*evs->keys))))
		return NULL; /* out of memory: as a full set */
	for (size_t i = 0, at = key & (KEYS_MAX - 1); i < KEYS_MAX;
	     i++, at = (at + 1) & (KEYS_MAX - 1)) {
		struct key_slot *k = &evs->keys[at];
		if (k->hash == key || k->hash == 0)
			return k->hash == 0 && evs->n_keys >= KEYS_MAX / 2 ? NULL : k;
	}
	return NULL;
}

/* ---- copies ------------------------------------------------------------------------------ */

struct caller {
	pid_t pid, ppid;
	char comm[64];
};

/* The trapped task's process, parent and name, from its status (it waits for our answer, so
 * it is there unless it was killed: then pid as given, comm ""). Only shown, never decided on. */
static void caller_read(pid_t tid, struct caller *c)
{
	char buf[1024];

	*c = (struct caller){ .pid = tid };
	if (tid <= 0 || proc_read(tid, "status", buf, sizeof(buf)) < 0)
		return;
	for (char *line = buf; line && *line;
	     line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (strncmp(line, "Name:\t", 6) == 0) {
			size_t n = strcspn(line + 6, "\n");
			n = MIN(n, sizeof(c->comm) - 1);
			memcpy(c->comm, line + 6, n);
			c->comm[n] = '\0';
		} else if (strncmp(line, "Tgid:\t", 6) == 0) {
			c->pid = (pid_t)strtol(line + 6, NULL, 10);
		} else if (strncmp(line, "PPid:\t", 6) == 0) {
			c->ppid = (pid_t)strtol(line + 6, NULL, 10);
			break; /* the last of the three */
		}
	}
	if (c->pid <= 0)
		c->pid = tid;
}

static size_t slen(const char *s)
{
	return s ? strlen(s) + 1 : 0;
}

static const char *sput(char **at, const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	char *d = memcpy(*at, s, n);
	*at += n;
	return d;
}

/* One allocation: the public event and its strings. */
static struct stored *stored_new(const struct event *ev, const char *name, const struct caller *c,
				 int first)
{
	size_t n = slen(name) + slen(c->comm) + slen(ev->path) + slen(ev->access) + slen(ev->host) +
		   slen(ev->protocol) + slen(ev->reason) + slen(ev->hint);
	struct stored *s = malloc(sizeof(*s) + n);

	if (!s)
		return NULL;
	char *at = s->strings;
	s->ev = (sandlock_event_t){
		.size = sizeof(sandlock_event_t),
		.syscall = sput(&at, name),
		.category = (size_t)ev->category < ELEMENTSOF(category_names)
				    ? category_names[ev->category]
				    : "process",
		.pid = c->pid,
		.ppid = c->ppid,
		.comm = sput(&at, c->comm),
		.verdict = ev->verdict,
		.error = ev->error,
		.judged = !!ev->judged,
		.first = (uint32_t)first,
		.path = sput(&at, ev->path),
		.access = sput(&at, ev->access),
		.host = sput(&at, ev->host),
		.port = ev->port,
		.family = ev->family,
		.protocol = sput(&at, ev->protocol),
		.amount = ev->amount,
		.reason = sput(&at, ev->reason),
		.hint = sput(&at, ev->hint),
	};
	return s;
}

/* The name shown: the handler's, else libseccomp's for the number, in @buf (one lookup per
 * event that goes somewhere). */
static const char *syscall_name(const struct event *ev, char *buf, size_t size)
{
	if (ev->syscall)
		return ev->syscall;
	char *n = ev->nr >= 0 ? seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, ev->nr) : NULL;
	if (n)
		snprintf(buf, size, "%s", n);
	else
		snprintf(buf, size, "syscall_%d", ev->nr);
	free(n);
	return buf;
}

/* ---- emit -------------------------------------------------------------------------------- */

/* Under the lock: the table's part of a denial. Returns whether it is the first of its key,
 * and in *@ret_index the table entry reserved for it (-1: none to fill). */
static int denial_note(struct events *evs, uint64_t key, long *ret_index)
{
	struct key_slot *k = key_find(evs, key);

	*ret_index = -1;
	if (k && k->hash == key) {
		if (k->index != KEY_NOT_KEPT)
			evs->counts[k->index]++;
		return 0;
	}
	if (!k) { /* too many distinct denials to tell: counted, never shown as new */
		evs->not_kept++;
		return 0;
	}
	k->hash = key;
	k->index = KEY_NOT_KEPT;
	evs->n_keys++;
	if (evs->n_denials < EVENTS_DENIALS_MAX) {
		k->index = (uint32_t)evs->n_denials;
		evs->counts[evs->n_denials] = 1;
		*ret_index = (long)evs->n_denials++;
	} else
		evs->not_kept++;
	return 1;
}

static void queue_push(struct events *evs, struct stored *s)
{
	if (!s || evs->len >= EVENTS_QUEUE_MAX || evs->stopping) {
		evs->overflowed++;
		free(s);
		return;
	}
	evs->queue[(evs->head + evs->len) % EVENTS_QUEUE_MAX] = s;
	evs->len++;
	pthread_cond_signal(&evs->cond);
}

void events_emit(struct supervisor *sv, const struct event *ev)
{
	events_emit_to(sv ? sv->events : NULL, ev);
}

void events_deny(struct supervisor *sv, const struct seccomp_notif *req,
		 enum event_category category, int error, const char *reason, const char *hint)
{
	struct event ev = {
		.nr = (int)req->data.nr,
		.category = category,
		.pid = (pid_t)req->pid,
		.verdict = SANDLOCK_VERDICT_DENY,
		.error = error,
		.reason = reason,
		.hint = hint,
	};

	events_emit(sv, &ev);
}

void events_emit_to(struct events *evs, const struct event *ev)
{
	if (!ev || !events_wants(evs, ev->verdict))
		return;
	int deny = ev->verdict == SANDLOCK_VERDICT_DENY, first = 0;
	long index = -1;

	/* First the key: whether the event goes anywhere (a repeated denial without a callback
	 * stops here). */
	pthread_mutex_lock(&evs->lock);
	if (deny)
		first = denial_note(evs, denial_key(ev), &index);
	int queued = evs->fn && !evs->stopping;
	pthread_mutex_unlock(&evs->lock);
	if (index < 0 && !queued)
		return;

	/* Outside the lock: the /proc read and the copies (the task waits for our answer). */
	struct caller c;
	char buf[64];
	caller_read(ev->pid, &c);
	const char *name = syscall_name(ev, buf, sizeof(buf));
	struct stored *entry = index >= 0 ? stored_new(ev, name, &c, first) : NULL;
	struct stored *copy = queued ? stored_new(ev, name, &c, first) : NULL;

	/* The number and the queue together: the callback sees the events in their order. */
	pthread_mutex_lock(&evs->lock);
	uint64_t seq = ++evs->seq;
	if (entry) {
		entry->ev.seq = seq;
		evs->denials[index] = entry;
	} else if (index >= 0) {
		evs->not_kept++; /* out of memory: its entry stays empty */
	}
	if (copy)
		copy->ev.seq = seq;
	if (queued)
		queue_push(evs, copy);
	pthread_mutex_unlock(&evs->lock);
}

/* ---- the table --------------------------------------------------------------------------- */

/* Entries left empty (out of memory as they were copied) are skipped. Read once the sandbox
 * ended: nothing emits any more. */
size_t events_denial_count(const struct events *evs)
{
	size_t n = 0;

	for (size_t i = 0; evs && i < evs->n_denials; i++)
		n += evs->denials[i] != NULL;
	return n;
}

int events_denial(const struct events *evs, size_t i, sandlock_event_t *ret, uint64_t *ret_count)
{
	for (size_t j = 0; evs && j < evs->n_denials; j++) {
		if (!evs->denials[j] || i-- > 0)
			continue;
		if (ret)
			*ret = evs->denials[j]->ev;
		if (ret_count)
			*ret_count = evs->counts[j];
		return 0;
	}
	return -ERANGE;
}

uint64_t events_dropped(const struct events *evs)
{
	return evs ? evs->overflowed + evs->not_kept : 0;
}

uint64_t events_overflowed(const struct events *evs)
{
	return evs ? evs->overflowed : 0;
}
