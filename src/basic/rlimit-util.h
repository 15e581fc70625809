/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rlimit-util: the process's descriptor limit. A supervisor holds descriptors for the sandbox
 * (a pidfd and a lifeline pipe per process group, the sockets of connects made on its behalf),
 * and one that runs out can no longer read /proc: its counts would fail. So the first sandbox
 * of a process raises the process's soft RLIMIT_NOFILE to its hard limit, once, and the
 * sandboxes' children get the soft limit the caller had (select() and programs that close
 * every descriptor up to the limit expect the usual 1024), as Go's runtime does.
 */
#pragma once

#include <sys/resource.h>

/* Raise the soft RLIMIT_NOFILE to the hard one (once per process; best effort), and fill
 * @ret_child with the limits a child should get: the soft limit the caller had before the
 * raise (or the one it set since), the hard limit. -errno (getrlimit). */
int rlimit_nofile_raise(struct rlimit *ret_child);
