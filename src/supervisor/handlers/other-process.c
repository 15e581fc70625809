/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/other-process: syscalls that change another process's resource limits, nice value,
 * I/O priority or scheduling (prlimit64 with a new limit, setpriority, ioprio_set,
 * sched_setaffinity, sched_setscheduler, sched_setparam, sched_setattr). For these the kernel only
 * compares uids, and Landlock's scoping covers signals, not them: without this a sandboxed
 * process could, say, lower the CPU-time limit of any process of the same user and so kill it.
 * They are trapped only when they name a process other than the caller (the BPF program lets
 * "0", the caller, through), and allowed when the target is one of the sandbox's processes:
 * a member of a process group the sandbox created (supervisor/groups.c).
 *
 * Allowed calls are answered with CONTINUE. The decision is on register values (pid, which,
 * who), which the kernel uses unchanged when it resumes the syscall; the pointer arguments
 * (limits, masks, attributes) carry no part of the decision. What remains is the pid number:
 * the kernel looks it up again, so a target that exits, is reaped, and whose number goes round
 * the whole pid space to an outside process between our check and that lookup would be hit
 * instead. pid allocation is cyclic, so that takes pid_max new processes within the few
 * microseconds of this handler; the user-facing alternative, refusing every call on another
 * process, would break thread pinning (pthread_setaffinity_np names a thread id).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "handlers.h"
#include "procs.h"
#include "supervisor/child.h"
#include "supervisor/events.h"
#include "supervisor/groups.h"
#include "supervisor/supervisor.h"

enum target_kind {
	TARGET_PROCESS,
	TARGET_GROUP,
	TARGET_USER, /* every process of a uid: never the sandbox's alone */
	TARGET_INVALID,
};

/* ioprio_set(2)'s "which" values (linux/ioprio.h). */
#define IOPRIO_WHO_PROCESS 1
#define IOPRIO_WHO_PGRP 2
#define IOPRIO_WHO_USER 3

static enum target_kind classify(const struct seccomp_notif *req, pid_t *target)
{
	/* Every "which", pid and who is an int for the kernel: compare the low 32 bits. */
	int which = (int)req->data.args[0];

	switch (req->data.nr) {
	case SYS_setpriority:
		*target = (pid_t)req->data.args[1];
		return which == PRIO_PROCESS ? TARGET_PROCESS
		       : which == PRIO_PGRP  ? TARGET_GROUP
		       : which == PRIO_USER  ? TARGET_USER
					     : TARGET_INVALID;
	case SYS_ioprio_set:
		*target = (pid_t)req->data.args[1];
		return which == IOPRIO_WHO_PROCESS ? TARGET_PROCESS
		       : which == IOPRIO_WHO_PGRP  ? TARGET_GROUP
		       : which == IOPRIO_WHO_USER  ? TARGET_USER
						   : TARGET_INVALID;
	default: /* prlimit64 and sched_set*: the pid is the first argument */
		*target = (pid_t)req->data.args[0];
		return TARGET_PROCESS;
	}
}

/* The event of a refusal (EPERM) of @req on @target (@kind). */
static void refused_event(struct supervisor *sv, const struct seccomp_notif *req,
			  enum target_kind kind, pid_t target)
{
	char reason[96];

	if (kind == TARGET_USER)
		snprintf(reason, sizeof(reason),
			 "the processes of user %d are not the sandbox's alone", (int)target);
	else
		snprintf(reason, sizeof(reason), "%s %d is not the sandbox's",
			 kind == TARGET_GROUP ? "process group" : "process", (int)target);
	events_deny(sv, req, EVENT_PROCESS, EPERM, reason, NULL);
}

int handle_other_process(struct supervisor *sv, const struct seccomp_notif *req,
			 struct seccomp_notif_resp *resp)
{
	pid_t target;
	enum target_kind kind = classify(req, &target);

	switch (kind) {
	case TARGET_USER:
		refused_event(sv, req, kind, target);
		return -EPERM;
	case TARGET_INVALID:
		/* CONTINUE: integers only (see the file comment); the kernel answers EINVAL. */
		return notif_answer_continue(resp);
	case TARGET_GROUP:
		if (target != 0 && !groups_owns(sv->groups, target)) {
			refused_event(sv, req, kind, target);
			return -EPERM;
		}
		break;
	case TARGET_PROCESS:
		if (target < 0)
			break; /* the kernel answers EINVAL or ESRCH */
		if (target != 0) {
			struct proc_info info;
			int r = proc_info_of(target, &info);
			if (r < 0)
				return r; /* no such process: what the kernel would say */
			if (!groups_owns(sv->groups, info.pgrp)) {
				refused_event(sv, req, kind, target);
				return -EPERM;
			}
		}
		break;
	}
	/* CONTINUE: the target is the caller (0), or a process or group of the sandbox; the
	 * decision rests on register values only (see the file comment). */
	return notif_answer_continue(resp);
}
