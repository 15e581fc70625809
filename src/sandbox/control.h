/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * control: a running sandbox's runtime directory, /dev/shm/sandlock-<euid>/<name>/ (0700), with a
 * pid file and a control socket (0600). `sandlock ps`, `inspect` and `kill` talk to it: one JSON
 * request line, one JSON answer. It is served by the sandbox's event loop without ever blocking
 * it (control-serve.c), and removed when the sandbox ends.
 *
 * Everything below the runtime root is reached through descriptors (openat, unlinkat, O_NOFOLLOW)
 * after the root itself was checked to be a directory of ours that nobody else can enter, so
 * neither another user nor a workload with a write grant on /dev/shm can redirect a write or a
 * removal. Claims and stale cleanups hold an flock on the root. Peers on either side of the
 * socket must be of our uid and not confined more than we are (control_peer_confined).
 */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "error.h"

#define CONTROL_CLIENTS 4
#define CONTROL_BACKLOG 16
#define CONTROL_TIMEOUT_MS 5000 /* what a client waits for an answer by default */

struct control_client {
	int fd;		 /* -1: free */
	uint64_t serial; /* accept order: the oldest is evicted when all slots are taken */
	size_t len;
	char buf[256];
};

struct control {
	int fd;		/* the listening socket; -1: no control socket */
	int dirfd;	/* the sandbox's directory */
	int lockfd;	/* the pid file, flock'ed for as long as we live */
	dev_t sock_dev; /* the socket file, as bound: a client reaching it renamed is refused */
	ino_t sock_ino;
	char name[65];
	int64_t started;  /* CLOCK_REALTIME seconds, once published */
	int published;	  /* the pid file names the sandbox */
	int64_t retry_at; /* CLOCK_MONOTONIC ms: accepting paused (out of descriptors); 0 = not */
	uint64_t serial;
	struct control_client clients[CONTROL_CLIENTS];
};

/* "/dev/shm/sandlock-<euid>" into @buf. */
int control_root(char *buf, size_t size);

void control_init(struct control *c);

/* Claim sandbox @name: create its directory and listening socket, and a pid file naming this
 * host and sandbox @pid (0: not known yet; control_publish() later). Only a live sandbox of that
 * name is an error (-EEXIST, "already running"); a directory left by a host that died is
 * replaced. When the runtime directory cannot be had (no writable /dev/shm, sandlock itself
 * confined, a root that is not a private directory of ours, the root locked for too long, out
 * of space) the sandbox simply has none: 0 with c->fd -1. */
int control_claim(struct control *c, const char *name, pid_t pid, struct sandlock_error **reterr);
/* Record the sandbox's pid, which makes it visible to `sandlock ps`. A no-op without a claimed
 * directory or when the claim had the pid; on failure the directory is removed and the sandbox
 * goes on without one. */
void control_publish(struct control *c, pid_t pid);
/* Close everything and remove the directory. */
void control_close(struct control *c);

/* Whether the peer of connected socket @fd is of another uid, or confined more than this
 * process: more seccomp filters, or no_new_privs where we have none (every sandbox has both).
 * 1 yes, 0 no; when it cannot be told (no /proc) 1. */
int control_peer_refused(int fd);

/* The names of this uid's running sandboxes; stale directories are removed on the way.
 * -EPERM (the root is not a private directory of ours), -ENOMEM, -EACCES (/dev/shm unreadable). */
int control_running(char ***ret_names, struct sandlock_error **reterr);
/* One request to sandbox @name and its answer (without the newline). -ENOENT (not running),
 * -EINVAL, -EPERM (the root, or the server is not a process of ours that is not confined),
 * -ETIMEDOUT (no answer in time, its queue full all along included), -EPROTO, -ENOMEM. */
int control_request(const char *name, const char *request, int timeout_ms, char **ret_answer,
		    struct sandlock_error **reterr);
