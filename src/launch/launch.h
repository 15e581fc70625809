/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * launch: the child's side of spawning, the only code that runs between fork and exec. It
 * confines the child in a fixed order and reports a failure as (step, errno) on the error pipe.
 * Async-signal-safe only: raw syscalls, no allocation, no locks, no libc state.
 */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "macro.h"
#include "plan/plan.h"

enum launch_step {
	LAUNCH_STEP_STDIO,
	LAUNCH_STEP_SIGNALS,
	LAUNCH_STEP_SETPGID,
	LAUNCH_STEP_PDEATHSIG,
	LAUNCH_STEP_PERSONALITY,
	LAUNCH_STEP_THP,
	LAUNCH_STEP_COREDUMP,
	LAUNCH_STEP_AFFINITY,
	LAUNCH_STEP_CHDIR,
	LAUNCH_STEP_USERNS,
	LAUNCH_STEP_ID_MAP,
	LAUNCH_STEP_NO_NEW_PRIVS,
	LAUNCH_STEP_LANDLOCK,
	LAUNCH_STEP_SECCOMP,
	LAUNCH_STEP_SEND_LISTENER,
	LAUNCH_STEP_WAIT,
	LAUNCH_STEP_CLOSE_FDS,
	LAUNCH_STEP_RLIMIT,
	LAUNCH_STEP_EXECVE,
	_LAUNCH_STEP_MAX,
};

/* What the child writes to the error pipe when a step fails. */
struct launch_report {
	int32_t step;
	int32_t err;
};

struct launch_io {
	/* Every descriptor here, and the plan's ruleset fd, is >= 3, so installing stdio never
	 * overwrites one of them. */
	int stdio[3]; /* descriptors to install as 0, 1, 2; -1 keeps the inherited one */
	int sock;     /* child end of the control socket: the listener goes out, "go" comes in */
	int errpipe;  /* write end of the error pipe, O_CLOEXEC, >= 3 */
	pid_t parent; /* sandlock's pid, to notice a parent that died before PDEATHSIG was set */
	int wait_go;  /* wait for "go" before exec: a forked child (-i, parked) */
	const int *pass_fds; /* the caller's descriptors (>= 3) the command inherits as they are */
	int n_pass_fds;
	int fds_from_3; /* ... or as 3, 4, ... in order (SANDLOCK_SPAWN_FDS_FROM_3) */
};

/* The name of a step for messages ("execve", "landlock_restrict_self", ...). */
const char *launch_step_name(int step);

/* Run in the child right after clone. Never returns: execs the command or exits 127. */
_noreturn_ void launch_child(const struct plan *plan, const struct launch_io *io);

/* The same as a clone(2) entry point, for a child on a stack of its own (CLONE_VM): @arg is a
 * struct launch_arg. It lives in launch.c so that nothing instrumented runs on that stack. */
struct launch_arg {
	const struct plan *plan;
	const struct launch_io *io;
};
int launch_child_main(void *arg);
