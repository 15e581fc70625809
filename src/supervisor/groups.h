/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * groups: the process groups a sandbox consists of. Kill, pause and resume reach a sandbox one
 * process group at a time, so every group it creates (setsid, setpgid) is recorded before the
 * kernel creates it. Each record holds a pidfd of the leader (so a signal never reaches an
 * unrelated group that reuses the number) and a "lifeline": a pipe whose two ends sandlock holds
 * with O_ASYNC, owner = the group and F_SETSIG = SIGKILL. When sandlock's process dies, however
 * it dies, the kernel closes the ends one after the other and the first close signals the other
 * end's owner: the whole group gets SIGKILL. That is what leaves no orphans behind a SIGKILLed
 * sandlock, with no namespace and no cgroup.
 */
#pragma once

#include <pthread.h>
#include <sys/types.h>

/* Live process groups one sandbox may have at a time; setsid/setpgid beyond it fail. */
#define GROUPS_MAX 128

struct group {
	pid_t pgid;
	int leader_pidfd;
	int lifeline[2];
};

struct groups {
	pthread_mutex_t lock;
	struct group *v;
	size_t n, cap;
};

/* Allocates room for a few groups, so that recording the first ones (on the sandbox thread)
 * does not allocate. -ENOMEM. */
int groups_init(struct groups *g);
/* Record the group led by @leader, whose pidfd @leader_pidfd the call takes over (also on
 * failure). A group already recorded with a live leader is kept. -EAGAIN beyond GROUPS_MAX
 * live groups; other -errno on failure. */
int groups_track(struct groups *g, pid_t leader, int leader_pidfd);
/* Whether @pgid is a recorded group: its leader is alive (its pid pins the number), or the
 * group still has members. The kernel itself refuses a move into an empty group. */
int groups_owns(struct groups *g, pid_t pgid);
/* Send @sig to every recorded group. Returns how many groups had members, or -errno. */
int groups_signal(struct groups *g, int sig);
/* Send @sig to the recorded group @pgid, through its leader's pidfd, under the lock that keeps
 * the record: never to another group that took the number. -ESRCH where @pgid is no recorded
 * group with members, other -errno on failure. */
int groups_signal_one(struct groups *g, pid_t pgid, int sig);
/* Release everything; closing the lifelines kills whatever is left in the groups. */
void groups_done(struct groups *g);
