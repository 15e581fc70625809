/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * workers: the supervisor's pool of threads for blocking operations (a connect on the child's
 * behalf, an open waiting for a FIFO's other end, a copy-up), so that the loop never waits.
 * Threads are started as jobs find none idle, up to the maximum (then jobs wait in a bounded
 * queue), and live until the pool stops (the sandbox ended), which cuts the running jobs short
 * (shutdown of their sockets) and drops the queued ones. The pool knows nothing of the
 * supervisor's other state: a job gets the pool's copy of the listener and its socket.
 */
#pragma once

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define SUPERVISOR_MAX_WORKERS 64
#define SUPERVISOR_MAX_QUEUED (4 * SUPERVISOR_MAX_WORKERS)

struct job;
struct supervisor;

struct supervisor_workers {
	pthread_mutex_t lock;
	pthread_cond_t work;	  /* a job was queued, or stopping */
	pthread_cond_t idle_cond; /* n reached 0 */
	int n, idle, stopping;
	atomic_int cancel; /* set with stopping: a long job (a copy) stops on its own */
	int pending;	   /* queued jobs no thread has taken yet */
	int listener;	   /* the workers' copy of the listener */
	struct job *queue, *queue_tail;
	uint8_t slot_used[SUPERVISOR_MAX_WORKERS];
	int socks[SUPERVISOR_MAX_WORKERS]; /* the socket each thread works on, or -1 */
};

/* An empty pool: no thread yet, no listener copy. */
void workers_init(struct supervisor_workers *w);
/* Drop queued jobs (each run with listener -1), cut running ones short, wait for the threads,
 * close the listener copy. Idempotent. */
void workers_stop(struct supervisor_workers *w);
/* Release the pool's locks (after workers_stop). */
void workers_done(struct supervisor_workers *w);

/* Queue @fn(@arg) for a pool thread, which owns @sock (closed after @fn) and answers
 * notifications on the pool's copy of the listener: @fn gets it and @sock, and must answer (or
 * find the notification gone) and release @arg. A job dropped because the sandbox ended is run
 * with listener -1: @fn then only releases @arg.
 * -ENOMEM, -EAGAIN (no thread could be started, or SUPERVISOR_MAX_QUEUED jobs wait already),
 * -EMFILE, -ECANCELED (the pool has stopped). */
int supervisor_run_worker(struct supervisor *sv, int sock,
			  void (*fn)(int listener, int sock, void *arg), void *arg);
/* supervisor_run_worker, unless no thread would take the job at once: -EBUSY then. */
int supervisor_run_worker_now(struct supervisor *sv, int sock,
			      void (*fn)(int listener, int sock, void *arg), void *arg);
