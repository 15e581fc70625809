/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/http-trust: http_inject_ca's bundles, served with the active CA's certificate
 * appended (http-trust.c), for open.c's servers.
 */
#pragma once

#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>

struct supervisor;
struct path_args;

/* Whether an open with @flags may be answered: bundles are named, and it is a plain read-only
 * open (O_PATH, O_CREAT, O_TRUNC, a write... are the kernel's). No memory read. */
int http_trust_matches(const struct supervisor *sv, uint64_t flags);
/* The open @pa: when it reaches a bundle the sandbox may read, answered on a worker
 * (NOTIF_DEFERRED); else NOTIF_NOT_MINE. The name is read into @path (@size bytes) unless
 * *@have_path, which is set once it is. NOTIF_GONE, -errno. */
int http_trust_open(struct supervisor *sv, const struct seccomp_notif *req,
		    const struct path_args *pa, char *path, size_t size, int *have_path);
