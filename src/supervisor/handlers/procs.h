/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/procs: the sandbox's processes (procs.c), which the /proc, memory, fork, listen and
 * other-process handlers share.
 */
#pragma once

#include <sys/types.h>

struct supervisor;

struct proc_info {
	pid_t pid, ppid, pgrp;
	char state;
};
/* State, parent and process group of process (or thread) @pid, from its stat. -ESRCH (gone),
 * -EPERM (unreadable: cannot tell). */
int proc_info_of(pid_t pid, struct proc_info *ret);
/* Whether process (or thread) @pid is one of the sandbox's: a member of its groups. */
int sandbox_owns_pid(struct supervisor *sv, pid_t pid);
/* Call @fn for each process of the sandbox (a member of one of its process groups), zombies
 * included (state 'Z'); stops at the first non-zero return, which it returns, or -errno, also
 * when a process's stat cannot be read (not gone: unreadable), so that no count built on the
 * scan comes out low. */
int sandbox_processes(struct supervisor *sv, int (*fn)(const struct proc_info *p, void *arg),
		      void *arg);
/* A task through which process @p is alive: its pid, or for a leader that exited while other
 * threads run on (it reads as a zombie), one of those; 0 when the process is a zombie indeed;
 * -EPERM when its task list cannot be read (cannot tell). */
pid_t proc_live_task(const struct proc_info *p);
