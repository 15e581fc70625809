/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/procs: the sandbox's processes, found by scanning /proc for the processes whose
 * process group is one the sandbox created (supervisor/groups.c). Every process of the sandbox is
 * in such a group whatever its parent is now (an orphan keeps its group), and no other is.
 * The counts built on the scan (max_processes, max_memory) must not come out low, so a process
 * whose stat cannot be read for any reason but its being gone fails the whole scan: a
 * supervisor out of descriptors, or a /proc that hides processes (hidepid), refuses instead
 * of counting nothing.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "procs.h"
#include "supervisor/child.h"
#include "supervisor/groups.h"
#include "supervisor/supervisor.h"

int proc_info_of(pid_t pid, struct proc_info *ret)
{
	char buf[1024];

	int r = proc_read(pid, "stat", buf, sizeof(buf));
	if (r < 0)
		return r;
	/* "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses. */
	const char *close = strrchr(buf, ')');
	*ret = (struct proc_info){ .pid = pid };
	if (!close || sscanf(close + 1, " %c %d %d", &ret->state, &ret->ppid, &ret->pgrp) != 3)
		return -EPERM; /* cannot tell: fail closed */
	return 0; /* pgrp 0: a process in another pid namespace's init group, never ours */
}

int sandbox_owns_pid(struct supervisor *sv, pid_t pid)
{
	struct proc_info p;

	return proc_info_of(pid, &p) == 0 && p.pgrp > 0 && groups_owns(sv->groups, p.pgrp);
}

int sandbox_processes(struct supervisor *sv, int (*fn)(const struct proc_info *p, void *arg),
		      void *arg)
{
	pid_t owned[16], foreign[16]; /* the last groups seen: most processes share a few */
	size_t n_owned = 0, n_foreign = 0;
	int r = 0;

	DIR *d = opendir("/proc");
	if (!d)
		return negative_errno();
	for (struct dirent *e; r == 0;) {
		errno = 0;
		if (!(e = readdir(d))) {
			r = errno ? -errno : 0;
			break;
		}
		char *end;
		struct proc_info p;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0)
			continue; /* not a process */
		int k = proc_info_of((pid_t)pid, &p);
		if (k == -ESRCH || (k == 0 && p.pgrp <= 0))
			continue; /* gone meanwhile, or in no group of ours */
		if (k < 0) {
			r = k; /* cannot tell whose it is: fail closed */
			break;
		}
		int ours = -1;
		for (size_t i = 0; i < n_owned && ours < 0; i++)
			if (owned[i] == p.pgrp)
				ours = 1;
		for (size_t i = 0; i < n_foreign && ours < 0; i++)
			if (foreign[i] == p.pgrp)
				ours = 0;
		if (ours < 0) {
			ours = groups_owns(sv->groups, p.pgrp);
			pid_t *cache = ours ? owned : foreign;
			size_t *n = ours ? &n_owned : &n_foreign;
			cache[*n % ELEMENTSOF(owned)] = p.pgrp;
			*n = MIN(*n + 1, ELEMENTSOF(owned));
		}
		if (ours)
			r = fn(&p, arg);
	}
	closedir(d);
	return r;
}

pid_t proc_live_task(const struct proc_info *p)
{
	char dir[64];

	if (p->state != 'Z' && p->state != 'X')
		return p->pid;
	/* A leader that exited while other threads run on: the process lives in them. */
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)p->pid);
	DIR *d = opendir(dir);
	if (!d) /* gone: no live task; anything else: cannot tell */
		return errno == ENOENT || errno == ESRCH ? 0 : -EPERM;
	pid_t live = 0;
	for (struct dirent *e; !live && (e = readdir(d));) {
		char *end;
		long tid = strtol(e->d_name, &end, 10);
		if (*end || tid <= 0 || tid == p->pid)
			continue;
		live = (pid_t)tid;
	}
	closedir(d);
	return live;
}
