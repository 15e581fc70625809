/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/fs-write: what open.c and ports.c hand to the writes beneath a writable grant that
 * holds a denied path (fs-write.c).
 */
#pragma once

#include <linux/seccomp.h>
#include <stdint.h>

struct path_args;
struct supervisor;

/* An open beneath a writable grant that holds a denied path (plan.fs.write_roots), its
 * arguments @pa (the flags, mode and resolve as the kernel takes them: open.c's) and its name
 * @path, read from the child: answered (0 with @resp set, NOTIF_CONTINUED, NOTIF_DEFERRED,
 * -errno), or NOTIF_NOT_MINE for the other servers of open.c to decide. */
int fs_write_open(struct supervisor *sv, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp, const struct path_args *pa, const char *path);
/* bind(2) of AF_UNIX socket @sock (the child's, a copy) to a name beneath a writable grant that
 * holds a denied path: answered, or NOTIF_NOT_MINE. */
int fs_write_bind(struct supervisor *sv, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp, int sock);
