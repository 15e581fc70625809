/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sandbox-internal: how the files of sandbox/ call each other. One sandbox's life:
 *
 *  launcher (the main thread spawning, else the sandbox thread)        child
 *  plan_build, pipes, clone(CLONE_PIDFD) -------------------------->  close host fds, confine
 *  setpgid, record the group, tty                                     "ready" (+ listener)
 *  [parked: take "ready", wait for sandlock_sandbox_start()]          wait for "go"
 *  "go" ---------------------------------------------------------->  close fds, execve
 *  take "ready" + listener; error pipe: EOF = exec'd
 *  sandbox thread: event loop until the sandbox ends
 *
 * lifecycle.c (the caller's threads) spawns, starts, waits, signals and frees; handshake.c is
 * the launch above; loop.c the event loop; sandbox.c the sandbox thread, the outcome (the exit
 * status, the branch settled) and the end. Calls go lifecycle -> sandbox -> handshake, loop,
 * and back to sandbox.c only for reap_child (the outcome).
 */
#pragma once

#include "sandbox.h"

/* handshake.c: clone the child and record its process group; wait for its "ready" and take
 * its listener; let it exec and read its report; give up on a launch that failed. Each
 * returns 0 or -errno with *@reterr set. */
int launch_clone(struct sandlock_sandbox *sb, struct sandlock_error **reterr);
int launch_ready(struct sandlock_sandbox *sb, struct sandlock_error **reterr);
int launch_go(struct sandlock_sandbox *sb, int parked, struct sandlock_error **reterr);
void launch_abandon(struct sandlock_sandbox *sb, const struct sandlock_error *err);

/* loop.c: the listener is readable (answered, or closed when no task uses it any more). */
void on_listener(struct sandlock_sandbox *sb, short revents);
/* loop.c: run until the command has exited and its output is drained. */
void event_loop(struct sandlock_sandbox *sb);

/* sandbox.c: reap the command (@options: WNOHANG or 0) and record how it ended. */
void reap_child(struct sandlock_sandbox *sb, int options);
/* sandbox.c: the launch's result, published to wait_launched (lifecycle.c). */
void record_launch(struct sandlock_sandbox *sb, int r, struct sandlock_error *err);
/* sandbox.c: everything left of the sandbox ended, the branch settled, the outcome published. */
void finish(struct sandlock_sandbox *sb);
/* sandbox.c: the sandbox thread of a launch done by the caller (the event loop only), and the
 * one that launches too (parked sandboxes, callers other than the main thread). */
void *loop_thread(void *arg);
void *sandbox_thread(void *arg);

/* http-ca-out.c: http_ca_out, the active CA's certificate written to its path (plan.http), before
 * the command starts. 0, or -errno with *@reterr set ("@label: PATH: why", @label what the
 * caller calls the field: "http_ca_out", "--http-ca-out"). */
int sandbox_http_ca_out(const struct plan *plan, const char *label, struct sandlock_error **reterr);
