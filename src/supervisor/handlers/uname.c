/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/uname: the sandbox's virtual hostname. uname(2) is emulated: the supervisor takes
 * its own utsname, puts the sandbox name in nodename, and writes it into the task.
 */
#include <errno.h>
#include <string.h>
#include <sys/utsname.h>

#include "handlers.h"
#include "supervisor/child.h"
#include "supervisor/supervisor.h"

int handle_uname(struct supervisor *sv, const struct seccomp_notif *req,
		 struct seccomp_notif_resp *resp)
{
	struct utsname u;

	if (uname(&u) < 0)
		return -EFAULT;
	memset(u.nodename, 0, sizeof(u.nodename));
	strncpy(u.nodename, sv->name, sizeof(u.nodename) - 1);

	int r = notif_mem_write(sv->listener, req, req->data.args[0], &u, sizeof(u));
	if (r < 0)
		return r;
	notif_answer_value(resp, 0);
	return 0;
}
