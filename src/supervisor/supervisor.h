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
#include <stdatomic.h>
#include <sys/types.h>

#include "handlers/fork.h"
#include "handlers/fs-meta.h"
#include "handlers/memory.h"
#include "handlers/netlink.h"
#include "handlers/random.h"
#include "handlers/time.h"
#include "handlers/umask.h"
#include "notices.h"
#include "notif.h"
#include "port-map.h"
#include "workers.h"

struct cow;
struct cow_wait;
struct judge_cache;
struct groups;
struct plan;
struct user_handlers;

struct supervisor {
	int listener;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	struct seccomp_notif_sizes sizes;
	const char *name;	 /* the sandbox's name: uname's nodename */
	int hostname_served;	 /* the name was given: /etc/hostname is it (handlers/open.c) */
	const char *private_tmp; /* private_tmp: its directory (the sandbox's), or NULL */
	struct groups *groups;	 /* the sandbox's process groups */
	const struct plan *plan; /* its net, fs and proc sections: what the handlers match */
	struct supervisor_workers workers;
	int prepared;		      /* supervisor_prepare() ran: the worker table exists */
	pthread_mutex_t netlink_lock; /* the loop adds, workers remove */
	struct netlink_fake netlink[SUPERVISOR_MAX_NETLINK]; /* handlers/netlink.h */
	atomic_int net_connects; /* connects made on the child's behalf, held (handlers/net.c) */
	uint32_t netlink_serial;
	struct port_map ports;	 /* port_remap: virtual -> real (handlers/ports.c) */
	unsigned num_cpus;	 /* num_cpus: the CPUs the sandbox sees (handlers/cpus.c); 0: all */
	struct proc_limit procs; /* max_processes (handlers/fork.h) */
	uint64_t max_memory;	 /* max_memory in bytes (handlers/memory.c); 0: unlimited */
	int64_t started_ns;	 /* CLOCK_MONOTONIC when the sandbox started: its /proc/uptime */
	int proc_nested;	 /* a process confined itself further: /proc no longer served */
	dev_t proc_dev;		 /* the identity of /proc's root, taken once (0: unknown) */
	ino_t proc_ino;
	char proc_ids[4096];	    /* the ids /proc is served to (child.c: proc_ids_snapshot) */
	int deterministic_dirs;	    /* listings sorted by name (handlers/getdents.c) */
	struct vtime vtime;	    /* time_start (handlers/time.h) */
	struct random_state random; /* random_seed (handlers/random.h) */
	int proc_no_caps;  /* and they hold no capability (no fanotify permission events) */
	char **fs_granted; /* the entries Landlock grants one by one beside the way to a denied
			    * path in a writable grant, while they keep their names: beneath
			    * them the kernel decides (handlers/fs-write.c); owned */
	struct mem_pids mem_pids;  /* max_memory (handlers/memory.h) */
	struct cow *cow;	   /* workdir: its branch (handlers/cow.c); NULL: none */
	struct http_proxy *proxy;  /* the HTTP ACL proxy (src/http/proxy.h); NULL: none. Owned by
				    * the sandbox (started before the launch, stopped at its end) */
	struct cow_wait *cow_wait; /* workdir: a copy-up off the loop (handlers/cow-copy.c) */
	int umask_traced;	   /* umask() is trapped: masks may be kept (handlers/umask.c) */
	int ruleset_fd; /* the sandbox's Landlock ruleset (not owned): what a watch may reach
			 * (handlers/watch.c); -1: none */
	struct umask_cache umasks; /* handlers/umask.h */
	struct fs_meta_state meta; /* the metadata calls (handlers/fs-meta.h) */
	uint64_t answered;
	struct notices notices; /* for the user: a process killed, a fork refused (notices.h) */
	struct events *events;	/* the decisions' stream (events.h); owned by the sandbox */
	pid_t main_pid;		/* the command's own process, once cloned */
	struct policy_fn *pfn;	/* the policy_fn's state (policy-fn.h); NULL: none */
	_Atomic uint32_t *kill_cause; /* the sandbox's: SANDLOCK_CAUSE_MEMORY once the command's
				       * own process is killed for max_memory (not owned) */
	struct user_handlers *user;   /* extension handlers (user-handlers.h); NULL: none. Owned
				       * by the sandbox */
	struct judge_cache *judge_cache; /* judge.c's, in logging mode; owned */
};

/* Allocate the notification buffers. Called by the thread that spawns, so that the sandbox
 * thread never allocates on the launch path (its first malloc would make glibc create a whole
 * arena). */
int supervisor_prepare(struct supervisor *sv, const char *name, struct groups *groups,
		       const struct plan *plan);
/* Take over @listener (closed by supervisor_done). Enables the synchronous wake-up of the
 * supervisor thread where the kernel has it (6.6+). */
void supervisor_attach(struct supervisor *sv, int listener);
/* Receive one pending notification and answer it. Returns 0, or -errno when the listener is
 * unusable. A notification whose task died meanwhile is not an error. */
int supervisor_handle(struct supervisor *sv);
/* Answer @req (received earlier: supervisor_handle's second half, for a call that waited). 0,
 * or -errno when the listener broke. */
int supervisor_answer(struct supervisor *sv, const struct seccomp_notif *req);
/* Stop the worker pool (workers_stop) and a copy-up in flight. Called when the sandbox ends;
 * idempotent. The pool's jobs are queued with supervisor_run_worker (workers.h). */
void supervisor_stop_workers(struct supervisor *sv);
/* Stop the workers, release everything. */
void supervisor_done(struct supervisor *sv);
