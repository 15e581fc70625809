/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/pgroup: setsid(2) and setpgid(2). A process group the sandbox creates is recorded
 * (leader pidfd + lifeline, supervisor/groups.c) before the kernel creates it, so kill and timeouts
 * reach it; a move into a group that is not the sandbox's is refused, because signalling that
 * group would hit processes outside the sandbox (sandlock's own group is in the same session,
 * and the kernel would allow the move).
 *
 * Both are answered with CONTINUE. That is safe because neither syscall takes a pointer: the
 * decision is made on register values (seccomp_data.args), which the kernel uses unchanged when
 * it resumes the syscall; there is no user memory to re-read.
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "handlers.h"
#include "supervisor/child.h"
#include "supervisor/events.h"
#include "supervisor/groups.h"
#include "supervisor/supervisor.h"
#include "syscall-util.h"

/* The caller's process (thread group) id, or -errno. A pidfd opens only on a thread-group
 * leader, which settles the common case without /proc; a thread needs /proc/<tid>/status. */
static pid_t caller_tgid(const struct seccomp_notif *req)
{
	pid_t tid = (pid_t)req->pid, tgid;
	int fd = sys_pidfd_open(tid, 0);

	if (fd >= 0) {
		close(fd);
		return tid;
	}
	return proc_status_field(tid, "Tgid", &tgid) == 0 ? tgid : -EPERM;
}

/* The event of a refusal (EPERM) of @req, for @reason. */
static void refused_event(struct supervisor *sv, const struct seccomp_notif *req,
			  const char *reason)
{
	events_deny(sv, req, EVENT_PROCESS, EPERM, reason, NULL);
}

/* Record the group @leader is about to lead, then CONTINUE. Nothing unverified is let through:
 * a target that is not (yet) the caller's child is refused here with the kernel's own answer,
 * since a child forked with that pid before the kernel looked it up would otherwise get an
 * unrecorded group. */
static int track_new_group(struct supervisor *sv, const struct seccomp_notif *req,
			   struct seccomp_notif_resp *resp, pid_t caller, pid_t leader)
{
	pid_t ppid;

	if (leader != caller) {
		int r = proc_status_field(leader, "PPid", &ppid);
		if (r == -ESRCH || (r == 0 && ppid != caller))
			return -ESRCH; /* the kernel: neither the caller nor its child */
		if (r < 0) {
			refused_event(sv, req, "the new group's leader could not be identified");
			return -EPERM; /* cannot tell: fail closed */
		}
	}
	int pidfd = sys_pidfd_open(leader, 0);
	if (pidfd < 0 && errno == ESRCH)
		return -ESRCH;
	if (pidfd < 0) {
		refused_event(sv, req, "the new group's leader could not be identified");
		return -EPERM;
	}
	/* The caller is parked in this syscall; a still-valid notification proves the pids read
	 * above were not recycled under the check. */
	if (!notif_id_valid(sv->listener, req->id)) {
		close(pidfd);
		return NOTIF_GONE;
	}
	/* Fail closed: a group we could not record must not be created. */
	if (groups_track(sv->groups, leader, pidfd) < 0) {
		refused_event(sv, req, "the new process group could not be recorded");
		return -EPERM;
	}
	/* CONTINUE: no pointer argument (see the file comment). */
	return notif_answer_continue(resp);
}

int handle_setsid(struct supervisor *sv, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp)
{
	pid_t caller = caller_tgid(req);

	if (caller < 0)
		refused_event(sv, req, "the caller's process could not be identified");
	return caller < 0 ? caller : track_new_group(sv, req, resp, caller, caller);
}

int handle_setpgid(struct supervisor *sv, const struct seccomp_notif *req,
		   struct seccomp_notif_resp *resp)
{
	/* The kernel reads both arguments as pid_t (int). */
	pid_t pid = (pid_t)req->data.args[0], pgid = (pid_t)req->data.args[1];

	if (pid < 0 || pgid < 0) {
		/* CONTINUE: no pointer argument (see the file comment); the kernel answers
		 * EINVAL. */
		return notif_answer_continue(resp);
	}
	/* Moving into, or staying in, a group of the sandbox is fine whoever asks: the common
	 * case (shells do it for every job) needs no look at /proc. */
	if (pgid != 0 && groups_owns(sv->groups, pgid)) {
		/* CONTINUE: no pointer argument (see the file comment); the group is ours and
		 * has members, which pins its number. */
		return notif_answer_continue(resp);
	}
	pid_t caller = caller_tgid(req);
	if (caller < 0) {
		refused_event(sv, req, "the caller's process could not be identified");
		return caller;
	}
	pid_t target = pid ? pid : caller;
	if (!pgid)
		pgid = target;
	if (pgid != target) {
		char reason[64];
		snprintf(reason, sizeof(reason), "process group %d is not the sandbox's",
			 (int)pgid);
		refused_event(sv, req, reason);
		return -EPERM; /* a group outside the sandbox */
	}
	return track_new_group(sv, req, resp, caller, target);
}
