/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * supervisor: receive, dispatch, answer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "dispatch.h"
#include "fd-util.h"
#include "macro.h"
#include "notif.h"
#include "supervisor.h"
#include "syscall-util.h"

int supervisor_prepare(struct supervisor *sv, const char *name, struct groups *groups)
{
	*sv = (struct supervisor){ .listener = -1, .name = name, .groups = groups };

	if (sys_seccomp(SECCOMP_GET_NOTIF_SIZES, 0, &sv->sizes) < 0)
		return negative_errno();
	/* The kernel's structs may be larger than ours: allocate what it says. */
	sv->req = calloc(1, MAX(sv->sizes.seccomp_notif, sizeof(struct seccomp_notif)));
	sv->resp = calloc(1, MAX(sv->sizes.seccomp_notif_resp, sizeof(struct seccomp_notif_resp)));
	if (!sv->req || !sv->resp) {
		supervisor_done(sv);
		return -ENOMEM;
	}
	return 0;
}

void supervisor_attach(struct supervisor *sv, int listener)
{
	sv->listener = listener;
	/* 6.6+: wake this thread synchronously on a notification (the child's CPU switches
	 * straight to us), which shortens every round trip. Optional. */
	uint64_t flags = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
	(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, flags);
}

int supervisor_handle(struct supervisor *sv)
{
	struct seccomp_notif *req = sv->req;
	struct seccomp_notif_resp *resp = sv->resp;

	memset(req, 0, MAX(sv->sizes.seccomp_notif, sizeof(*req)));
	if (ioctl(sv->listener, SECCOMP_IOCTL_NOTIF_RECV, req) < 0) {
		/* ENOENT: the task died (or was signalled) before we received it. */
		if (errno == EINTR || errno == ENOENT)
			return 0;
		return negative_errno();
	}

	memset(resp, 0, MAX(sv->sizes.seccomp_notif_resp, sizeof(*resp)));
	resp->id = req->id;
	notif_handler_t h = dispatch_lookup(req->data.nr);
	int r = h ? h(sv, req, resp) : -ENOSYS;
	if (r == NOTIF_GONE)
		return 0; /* the task is gone: nobody to answer */
	if (r < 0)
		notif_answer_errno(resp, r); /* fail closed */

	if (ioctl(sv->listener, SECCOMP_IOCTL_NOTIF_SEND, resp) < 0 && errno != ENOENT)
		return negative_errno();
	sv->answered++;
	return 0;
}

void supervisor_done(struct supervisor *sv)
{
	sv->listener = safe_close(sv->listener);
	free(sv->req);
	free(sv->resp);
	sv->req = NULL;
	sv->resp = NULL;
}
