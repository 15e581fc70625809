/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * supervisor: answers the seccomp user notifications of one sandbox. It receives a notification,
 * looks the syscall up in the dispatch table and sends the handler's answer. It runs on the
 * sandbox's own thread (sandbox/), never blocks on the child, and fails closed: a syscall with
 * no handler or a handler that cannot decide gets an error, never CONTINUE.
 */
#pragma once

#include <linux/seccomp.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/types.h>

struct groups;
struct net_plan;

/* Blocking operations done on a worker thread (a blocking connect on the child's behalf), so
 * the loop never waits: each holds the socket it works on, so that supervisor_done() can cut
 * them short (shutdown) when the sandbox ends. */
#define SUPERVISOR_MAX_WORKERS 64

struct supervisor_workers {
	pthread_mutex_t lock;
	pthread_cond_t idle; /* n reached 0 */
	int n;
	int socks[SUPERVISOR_MAX_WORKERS]; /* -1: a free slot */
};

struct supervisor {
	int listener;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	struct seccomp_notif_sizes sizes;
	const char *name;	    /* the sandbox's name: uname's nodename */
	struct groups *groups;	    /* the sandbox's process groups */
	const struct net_plan *net; /* the rules the connect handler matches */
	struct supervisor_workers workers;
	int prepared; /* supervisor_prepare() ran: the worker table exists */
	uint64_t answered;
};

/* Allocate the notification buffers. Called by the thread that spawns, so that the sandbox
 * thread never allocates on the launch path (its first malloc would make glibc create a whole
 * arena). */
int supervisor_prepare(struct supervisor *sv, const char *name, struct groups *groups,
		       const struct net_plan *net);
/* Take over @listener (closed by supervisor_done). Enables the synchronous wake-up of the
 * supervisor thread where the kernel has it (6.6+). */
void supervisor_attach(struct supervisor *sv, int listener);
/* Receive one pending notification and answer it. Returns 0, or -errno when the listener is
 * unusable. A notification whose task died meanwhile is not an error. */
int supervisor_handle(struct supervisor *sv);
/* Run @fn(@arg) on a detached worker thread that owns @sock (closed when it ends) and answers
 * notifications on its own copy of the listener. -EAGAIN when SUPERVISOR_MAX_WORKERS are busy.
 * @fn gets the listener copy and must answer (or find the notification gone). */
int supervisor_run_worker(struct supervisor *sv, int sock, void (*fn)(int listener, void *arg),
			  void *arg);
/* Stop: cut the workers' sockets short (shutdown), wait for them, release everything. */
void supervisor_done(struct supervisor *sv);
