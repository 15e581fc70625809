/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-umask: what the supervisor keeps of the sandbox's umasks (handlers/umask.c). A umask()
 * is let through (CONTINUE) and everything known is forgotten; until the caller's next call
 * nothing read is kept (the mask may be about to change); a mask is kept only for a task its
 * notification shows alive; without umask() trapped nothing is ever kept. The end-to-end
 * behaviour (modes of files made in a workdir as masks change) is in test_cow.py.
 */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor/handlers/handlers.h"
#include "supervisor/supervisor.h"
#include "tap.h"

static mode_t own_umask(void)
{
	mode_t m = umask(022);
	umask(m);
	return m;
}

int main(void)
{
	static struct supervisor sv; /* large: not on the stack */
	struct seccomp_notif req = { .id = 1, .pid = 4242 };
	struct seccomp_notif_resp resp = { 0 };
	mode_t m = 0;

	sv.listener = -1; /* no notification is ever pending: no task is proven alive */
	sv.umask_traced = 1;
	umask(027);

	ok(handle_umask(&sv, &req, &resp) == NOTIF_CONTINUED &&
		   (resp.flags & SECCOMP_USER_NOTIF_FLAG_CONTINUE),
	   "umask() is let through (CONTINUE)");
	is_int(sv.umasks.n_flying, 1, "  its caller's call is on its way");
	umask_seen(&sv, 4243);
	is_int(sv.umasks.n_flying, 1, "  another task's call proves nothing");
	umask_seen(&sv, 4242);
	is_int(sv.umasks.n_flying, 0, "  the caller's next call: it returned");

	/* Our own task, read from /proc; not kept (its notification is not pending). */
	req.pid = (uint32_t)gettid();
	ok(sandbox_umask(&sv, &req, &m) == 0 && m == 027, "a task's mask is read (027)");
	is_int(sv.umasks.n, 0, "  not kept for a task not shown alive");

	/* A kept mask is forgotten by any umask(). */
	sv.umasks.v[0] = (struct umask_entry){ .tid = 7, .pidfd = dup(0), .mask = 077 };
	sv.umasks.n = 1;
	req.pid = 7;
	handle_umask(&sv, &req, &resp);
	is_int(sv.umasks.n, 0, "umask() forgets every mask kept");
	umask_seen(&sv, 7);

	/* While a umask() is on its way, what is read is right and not kept. */
	req.pid = 99;
	handle_umask(&sv, &req, &resp);
	umask(077);
	req.pid = (uint32_t)gettid();
	ok(sandbox_umask(&sv, &req, &m) == 0 && m == 077 && sv.umasks.n == 0,
	   "while one is on its way: read each time (077), kept by nobody");
	umask_seen(&sv, 99);

	/* Too many at once to follow: nothing kept from then on. */
	for (uint32_t i = 0; i < 65; i++) {
		req.pid = 1000 + i;
		handle_umask(&sv, &req, &resp);
	}
	ok(sv.umasks.lost, "65 calls on their way at once: masks no longer kept");
	for (uint32_t i = 0; i < 65; i++)
		umask_seen(&sv, (pid_t)(1000 + i));
	is_int(sv.umasks.n_flying, 0, "  (all returned)");
	req.pid = (uint32_t)gettid();
	ok(sandbox_umask(&sv, &req, &m) == 0 && m == 077 && sv.umasks.n == 0,
	   "  and still none is kept after");

	/* Control: without umask() trapped, nothing is followed or kept either, and the mask is
	 * read all the same. */
	umask_cache_done(&sv);
	is_int(sv.umasks.lost, 0, "umask_cache_done forgets everything");
	sv.umask_traced = 0;
	umask(002);
	ok(sandbox_umask(&sv, &req, &m) == 0 && m == 002 && own_umask() == 002,
	   "control: not trapped, the mask is read (002)");
	return done_testing();
}
