/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy-fn-confined: the threads that make deny_path's opens, links and renames on the child's
 * behalf. Each is confined for good when it starts (pfn_confine: the sandbox's Landlock
 * ruleset, the child's capabilities, no_new_privs, a umask of its own), so it is kept and
 * reused: started lazily as calls find none idle, up to one per worker and one for the loop,
 * and stopped with the policy_fn (after the workers, so no call is in flight then). A call
 * whose capabilities differ from the pool's (a process that dropped some) gets a thread of its
 * own, confined for it and ended after it.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#include "policy-fn-internal.h"
#include "workers.h"

#define CONFINED_MAX (SUPERVISOR_MAX_WORKERS + 1)

struct pfn_cjob {
	struct pfn_cjob *next;
	void (*fn)(void *arg);
	void *arg;
	int done;
};

struct pfn_confined {
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	struct pfn_cjob *queue, *tail;
	int n, idle, stopping, broken;
	int ruleset;
	uint64_t caps;
	pthread_t threads[CONFINED_MAX];
};

static void *pool_main(void *arg)
{
	struct pfn_confined *c = arg;
	sigset_t all;

	/* No signal interrupts a call made for the child with an EINTR it never asked for. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_mutex_lock(&c->lock);
	if (pfn_confine(c->ruleset, c->caps) < 0)
		c->broken = 1; /* cannot confine: every call fails closed */
	for (;;) {
		while (!c->queue && !c->stopping)
			pthread_cond_wait(&c->work, &c->lock);
		struct pfn_cjob *j = c->queue;
		if (!j)
			break;
		c->queue = j->next;
		if (!c->queue)
			c->tail = NULL;
		c->idle--;
		int broken = c->broken;
		pthread_mutex_unlock(&c->lock);
		if (!broken)
			j->fn(j->arg);
		pthread_mutex_lock(&c->lock);
		j->done = broken ? -1 : 1;
		c->idle++;
		pthread_cond_broadcast(&c->done);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

struct once {
	int ruleset;
	uint64_t caps;
	void (*fn)(void *arg);
	void *arg;
	int r;
};

static void *once_main(void *arg)
{
	struct once *o = arg;

	o->r = pfn_confine(o->ruleset, o->caps);
	if (o->r == 0)
		o->fn(o->arg);
	return NULL;
}

static int run_once(int ruleset, uint64_t caps, void (*fn)(void *arg), void *arg)
{
	struct once o = { ruleset, caps, fn, arg, -EACCES };
	pthread_t t;

	if (pthread_create(&t, NULL, once_main, &o) != 0)
		return -EACCES;
	pthread_join(t, NULL);
	return o.r;
}

int pfn_confined_run(struct policy_fn *st, int ruleset, uint64_t caps, void (*fn)(void *arg),
		     void *arg)
{
	struct pfn_confined *c = st->confined;
	struct pfn_cjob j = { .fn = fn, .arg = arg };

	if (!c)
		return run_once(ruleset, caps, fn, arg);
	pthread_mutex_lock(&c->lock);
	if (c->n == 0) {
		c->ruleset = ruleset;
		c->caps = caps;
	}
	if (c->stopping || c->caps != caps || c->ruleset != ruleset ||
	    (c->idle == 0 && c->n == CONFINED_MAX)) {
		pthread_mutex_unlock(&c->lock);
		return run_once(ruleset, caps, fn, arg);
	}
	if (c->idle == 0) {
		if (pthread_create(&c->threads[c->n], NULL, pool_main, c) != 0) {
			pthread_mutex_unlock(&c->lock);
			return run_once(ruleset, caps, fn, arg);
		}
		c->n++;
		c->idle++;
	}
	if (c->tail)
		c->tail->next = &j;
	else
		c->queue = &j;
	c->tail = &j;
	pthread_cond_signal(&c->work);
	while (!j.done)
		pthread_cond_wait(&c->done, &c->lock);
	pthread_mutex_unlock(&c->lock);
	return j.done > 0 ? 0 : -EACCES;
}

int pfn_confined_init(struct policy_fn *st)
{
	struct pfn_confined *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->work, NULL);
	pthread_cond_init(&c->done, NULL);
	st->confined = c;
	return 0;
}

void pfn_confined_stop(struct policy_fn *st)
{
	struct pfn_confined *c = st->confined;

	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->stopping = 1;
	pthread_cond_broadcast(&c->work);
	int n = c->n;
	pthread_mutex_unlock(&c->lock);
	for (int i = 0; i < n; i++)
		pthread_join(c->threads[i], NULL);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->work);
	pthread_cond_destroy(&c->done);
	free(c);
	st->confined = NULL;
}
