/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rlimit-util: the descriptor limit raised once for the supervisors (see rlimit-util.h).
 */
#include <errno.h>
#include <pthread.h>

#include "macro.h"
#include "rlimit-util.h"

static pthread_once_t raise_once = PTHREAD_ONCE_INIT;
static struct rlimit original; /* before the raise */
static rlim_t raised;	       /* the soft limit the raise set; 0: none */

static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
		return;
	original = rl;
	struct rlimit up = { rl.rlim_max, rl.rlim_max };
	/* Fails only past fs.nr_open, which the hard limit cannot be: then nothing changes. */
	if (setrlimit(RLIMIT_NOFILE, &up) == 0)
		raised = rl.rlim_max;
}

int rlimit_nofile_raise(struct rlimit *ret_child)
{
	struct rlimit now;

	pthread_once(&raise_once, raise_nofile);
	if (getrlimit(RLIMIT_NOFILE, &now) < 0)
		return -errno;
	/* A soft limit still at what the raise set is the raise's, not the caller's. */
	if (raised && now.rlim_cur == raised)
		now.rlim_cur = MIN(original.rlim_cur, now.rlim_max);
	*ret_child = now;
	return 0;
}
