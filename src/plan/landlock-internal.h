/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plan/landlock-internal: what the files of the ruleset build share (landlock.c, landlock-deny.c,
 * landlock-own.c, landlock-ports.c); nothing outside plan/landlock*.c includes it.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "error.h"
#include "policy/policy.h"

/* landlock.c: one rule granting @path, read (and execute) or @write (everything @handled), and
 * one granting @access on the opened @fd (none when @access is 0). */
int add_path_rule(int ruleset_fd, const char *field, const char *path, uint64_t handled, int write,
		  struct sandlock_error **reterr);
int add_fd_rule(int ruleset_fd, int fd, uint64_t access, const char *field, const char *path,
		struct sandlock_error **reterr);

/* landlock-record.c: the rule on @fd granting @access, recorded while a record is open. */
void ll_record_rule(int fd, uint64_t access);

/* ---- landlock-deny.c: fs_denied, carved out of the grants ------------------------------ */

/* A denied path: its real path (the existing part resolved, the rest as written) and, when it
 * exists, its identity. */
struct denied {
	char *real;
	int exists;
	int internal; /* one of sandlock's own (/proc, the /sys denials): never moved by the
		       * sandbox, so carved out of writable grants too */
	dev_t dev;
	ino_t ino;
};

/* The denied paths, and the identities of the directories above them (what a grant is carved
 * down through, recognized by identity as well as by name). */
struct denied_set {
	struct denied *v;
	size_t n;
	struct stat *above;
	size_t n_above;
};

void denied_set_done(struct denied_set *s);
int grants_touch(const struct sandlock_policy *p, const char *area, int inside);
/* Every path carved out of @p's grants into @s: sandlock's own (/sys, /proc with @mediate_proc,
 * the GPU nodes not exposed, the store root) and the user's, which are checked here. */
int denied_collect(const struct sandlock_policy *p, int mediate_proc, struct denied_set *s,
		   struct sandlock_error **reterr);
int is_denied_inode(const struct denied_set *s, const struct stat *st);
int add_grant(int ruleset_fd, const char *field, const char *path, uint64_t handled, int write,
	      int mediate_write, const struct denied_set *deny, char ***carved,
	      struct sandlock_error **reterr);

/* ---- landlock-own.c: sandlock's own carve-outs, the GPU nodes and the default devices --- */

#define SYS_DENIED_N 3
extern const char *const sys_denied[SYS_DENIED_N];
int add_internal(struct denied_set *s, const char *path);
int add_above(struct denied_set *s, const char *real);
char *store_root_granted(const struct sandlock_policy *p);
int add_store_root(const struct sandlock_policy *p, struct denied_set *s);
int gpu_nodes(const struct sandlock_policy *p, int (*fn)(const char *path, int exposed, void *arg),
	      void *arg);
int gpu_collect_cb(const char *path, int exposed, void *arg);
struct gpu_grant {
	int ruleset_fd;
	uint64_t handled;
	struct sandlock_error **reterr;
};

int gpu_grant_cb(const char *path, int exposed, void *arg);
int add_default_devices(int ruleset_fd, uint64_t handled, const struct denied_set *deny,
			struct sandlock_error **reterr);

/* ---- landlock-ports.c: the TCP port rules ------------------------------------------------ */

/* The TCP ports a sandbox may bind and connect to, as two bitmaps (65536 bits each). */
struct tcp_ports {
	int bind_all, connect_all;
	size_t n; /* ports marked */
	uint8_t bind[65536 / 8], connect[65536 / 8];
};

int tcp_ports_collect(const struct sandlock_policy *p, struct tcp_ports *t,
		      struct sandlock_error **reterr);
int add_port_rules(int ruleset_fd, const struct tcp_ports *t, uint64_t handled,
		   struct sandlock_error **reterr);
