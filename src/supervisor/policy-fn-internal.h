/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy-fn-internal: the state behind sv->pfn, shared by policy-fn.c (the queues and threads),
 * policy-fn-event.c (what the callback is shown) and policy-fn-ctx.c (what it may change).
 */
#pragma once

#include <linux/seccomp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy-fn.h"
#include "sandlock.h"

#define POLICY_FN_NAMES 512
#define POLICY_FN_IDS 64 /* threads whose process and parent are kept */

/* A file deny_path denied: its identity when denied, and the path as the callback gave it. */
struct pfn_deny {
	dev_t dev;
	ino_t ino;
	char *text;
};

struct pfn_confined;

struct pfn_item {
	struct pfn_item *next;
	struct seccomp_notif req;
	int held;
	int error;    /* observed: the errno the chain answered, 0 allowed */
	int answered; /* held: answered (a timeout, the verdict): under the lock */
	int64_t deadline_ns;
	/* A held network call: the destination the callback was shown (addr_len 0: none), which
	 * the chain's own read must match (policy_fn_addr_check); addr_fault: its memory could not
	 * be read for the callback, which was shown none. */
	int addr_set;
	int addr_fault;
	uint32_t addr_len;
	struct sockaddr_storage addr;
};

/* A set of IP addresses, each as 16 bytes (IPv4 as ::ffff:a.b.c.d). */
struct pfn_ipset {
	size_t n;
	struct in6_addr a[POLICY_FN_NET_MAX];
};

/* A per-pid override, with a pidfd of its process: dropped once that is readable (the process
 * ended), so that a later process given the same pid never inherits it. */
struct pfn_pid_set {
	pid_t pid;
	int pidfd;
	struct pfn_ipset set;
};

/* A thread's process and parent, valid while the process's pidfd is not readable (it lives). */
struct pfn_ids {
	pid_t tid, tgid, ppid;
	int pidfd;
};

struct policy_fn {
	struct supervisor *sv;
	struct policy_fn_ref *ref;
	int64_t timeout_ns;
	pthread_mutex_t lock;
	pthread_cond_t work; /* an item queued, or stopping */
	pthread_cond_t reap; /* a deadline queued, or stopping */
	pthread_t thread, reaper;
	int started; /* threads started: 0, 1 (the policy thread), 2 (both) */
	int64_t reap_at; /* the deadline the reaper sleeps until, 0: none (under the lock) */
	int stopping;
	atomic_int armed;
	int broken;   /* armed without a listener copy: held calls refused */
	int listener; /* the copy the threads answer on, -1 before policy_fn_arm */
	int ready_fd; /* an eventfd: calls the callback allowed wait on the ready list */
	struct pfn_item *held, *held_tail, *obs, *obs_tail, *ready, *ready_tail;
	struct pfn_item *running; /* the held call the callback decides now */
	const struct pfn_item *current; /* the loop's: the allowed call the chain answers now */
	size_t n_obs;
	uint64_t dropped;  /* observed events the full queue did not take */
	uint64_t seq;	   /* the policy thread's */
	char (*names)[32]; /* POLICY_FN_NAMES syscall names, looked up once each */
	/* Per held syscall below POLICY_FN_NAMES: trapped for the policy_fn alone, so the chain
	 * would CONTINUE it: an allowed call is answered CONTINUE here, not handed back. */
	uint8_t *direct;
	struct pfn_ids *ids; /* POLICY_FN_IDS, the policy thread's */
	size_t ids_next;
	/* The context (policy-fn-ctx.c), under the lock. */
	atomic_int net_limited; /* a live or per-pid set exists */
	int live_set;
	struct pfn_ipset live;
	size_t n_pids;
	struct pfn_pid_set *pids; /* POLICY_FN_PIDS_MAX */
	atomic_int limits_pending;
	uint64_t max_memory; /* the live limits: 0 unlimited */
	unsigned max_processes;
	/* deny_path's set (policy-fn-path.c), under the lock; n_deny is read without it. */
	atomic_size_t n_deny;
	struct pfn_deny deny[POLICY_FN_DENY_MAX];
	int nested; /* a process made a Landlock domain of its own: no deny (under the lock) */
	struct pfn_confined *confined; /* the threads that act for the child (policy-fn-confined.c) */
};

/* The context handed to the callback: valid only during it. */
struct sandlock_policy_ctx {
	struct policy_fn *st;
	pid_t pid;
};

/* What the callback is shown, with the storage its strings point into. */
struct pfn_event {
	sandlock_policy_event_t ev;
	char name[64];
	char host[INET6_ADDRSTRLEN];
	char **argv; /* owned */
	struct pfn_freeze *freeze; /* an exec's peers held (owned), NULL: none */
	const char *why;	   /* a refused exec: why (static, or in reason) */
	char reason[192];
};

/* Fill @e for @item (policy-fn-event.c), reading the child through the state's listener: 0,
 * NOTIF_GONE, or -errno: deny the call with it (an exec whose arguments could change before
 * the kernel reads them again: -EPERM; too long: -E2BIG). */
int pfn_event_build(struct policy_fn *st, struct pfn_item *item, struct pfn_event *e);
void pfn_event_done(struct pfn_event *e);
/* Release the exec's frozen peers, if any (pfn_event_done does too). */
void pfn_event_end_freeze(struct pfn_event *e);
/* What the event is called ("network", ...) and whether the call is held or observed (0: none). */
const char *pfn_category(int nr);
int pfn_kind(int nr); /* 1 held, 2 observed, 0 neither */
/* The argument vector of an exec (policy-fn-argv.c) stays what it is until the kernel reads it
 * when no other task can write it: pfn_argv_alone (no task but the caller of process @tgid runs
 * on its memory) or the others frozen (policy-fn-freeze.c), and pfn_argv_private (the ranges @r,
 * n pairs of start and end, lie in memory only the caller's own writes change). */
int pfn_argv_alone(pid_t tgid);
int pfn_argv_private(pid_t tgid, const uint64_t (*r)[2], size_t n);

/* A task: a thread and its process. */
struct pfn_task {
	pid_t tid, tgid;
};

/* Every thread other than @tid (of process @tgid) of every process sharing its memory: its own
 * process and those cloned with CLONE_VM (kcmp KCMP_VM over /proc). *@ret owned. */
int pfn_peers(pid_t tid, pid_t tgid, struct pfn_task **ret, size_t *ret_n);
/* Whether thread @tid waits in a vfork (vfork, or clone with CLONE_VM and CLONE_VFORK). */
int pfn_task_in_vfork(pid_t tid);

/* The tasks sharing an exec's memory, held in ptrace-stop by a thread of their own from before
 * the vector is read until the exec is over (policy-fn-freeze.c). */
struct pfn_freeze;
/* Freeze the peers of @tid (process @tgid), whose exec is notification @id; @deadline_ns (a
 * CLOCK_MONOTONIC time) bounds the wait for a verdict. 0 with *@ret set, or -EPERM with *@why
 * (a static string) saying why. */
int pfn_freeze_start(struct policy_fn *st, pid_t tid, pid_t tgid, uint64_t id,
		     int64_t deadline_ns, struct pfn_freeze **ret, const char **why);
/* The verdict allows the exec: its CONTINUE is sent from the freezing thread, which releases
 * the peers once the exec is over. 0, or -EPERM when the freeze ended first (answer EPERM). */
int pfn_freeze_continue(struct pfn_freeze *f);
/* Release the peers (after a denial, or with nothing decided) and free @f; NULL is fine. */
void pfn_freeze_end(struct pfn_freeze *f);

/* deny_path (policy-fn-path.c): whether descriptor @fd's file (-1: none) or the directory @dir
 * (-1: none) or one above it is denied: 1 (the entry's text in @text), 0, or -errno (fail
 * closed). */
int pfn_denied(struct policy_fn *st, int fd, int dir, char *text, size_t size);
/* A denial of @req by deny_path's gate, on @path as the child named it. */
void pfn_deny_event(struct supervisor *sv, const struct seccomp_notif *req, const char *path,
		    const char *reason);
/* The same for a file the entry @entry denies ("denied by the policy_fn (deny_path ...)"). */
void pfn_denied_event(struct supervisor *sv, const struct seccomp_notif *req, const char *path,
		      const char *entry);
void pfn_deny_free(struct policy_fn *st);
/* The interpreter the kernel loads for the file of descriptor @fd when it is executed
 * (policy-fn-interp.c): PFN_INTERP_SCRIPT (a "#!" line's) or PFN_INTERP_ELF (a PT_INTERP) with
 * its name in @name, 0 (none), or -errno (it cannot be read: cannot tell). */
enum { PFN_INTERP_SCRIPT = 1, PFN_INTERP_ELF = 2 };
int pfn_exec_interp(int fd, char *name, size_t size);
/* The gate of an open (policy-fn-open.c): as policy_fn_path_gate. */
int pfn_open_gate(struct supervisor *sv, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp);
/* Confine the calling thread, for good, as the sandbox: its Landlock @ruleset, capabilities
 * @caps (effective and permitted), no_new_privs, a umask of its own (unshare(CLONE_FS)). */
int pfn_confine(int ruleset, uint64_t caps);
/* Whether thread @tid has the supervisor's ids and groups; its effective capabilities (within
 * the supervisor's) in *@caps. 0 or -EACCES. */
int pfn_same_ids(pid_t tid, uint64_t *caps);
/* The reason of a call pfn_same_ids refuses. */
#define PFN_WHY_IDS                                                                                \
	"a call by a thread whose ids or capabilities differ from the supervisor's is refused "   \
	"while deny_path is in force"
/* The gate of a link or rename (policy-fn-move.c): as policy_fn_path_gate. */
int pfn_move_gate(struct supervisor *sv, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp);
/* Run @fn(@arg) on a thread confined as pfn_confine(@ruleset, @caps) says, and wait for it:
 * 0, or -EACCES (no such thread: @fn did not run). */
int pfn_confined_run(struct policy_fn *st, int ruleset, uint64_t caps, void (*fn)(void *arg),
		     void *arg);
int pfn_confined_init(struct policy_fn *st);
/* End the threads (none may be running a call: after the workers stopped). */
void pfn_confined_stop(struct policy_fn *st);
