/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plan/landlock: the Landlock half of the plan. Probes the ABI and builds a ruleset fd in the
 * parent (rule paths are opened here, so a missing path is reported before anything runs); the
 * child only calls landlock_restrict_self() on the inherited fd.
 */
#pragma once

#include <stdint.h>

#include "error.h"
#include "policy/policy.h"

/* The kernel's Landlock ABI (cached), or -EOPNOTSUPP. */
int landlock_abi(void);

/* Flags of landlock_ruleset_build(). */
#define LANDLOCK_BUILD_NO_NET 1 /* leave out the TCP rules (sandlock_confine) */
/* /proc is left out of every grant, for the supervisor to serve (handlers/open.c): a grant
 * covering /proc then costs trapped opens, and nothing of /proc is reached past it. */
#define LANDLOCK_BUILD_MEDIATE_PROC 2
/* A user's denied path inside a writable grant is carved out of it like one in a read grant,
 * for the supervisor to create, remove and rename in the directories on the way to it
 * (handlers/fs-write.c); without this flag such a grant is refused. */
#define LANDLOCK_BUILD_MEDIATE_WRITE 4

/* Build the ruleset for @p under the resolved protection @status, with @flags
 * (LANDLOCK_BUILD_*). /sys/firmware, /sys/kernel/security and /sys/class/net are always left
 * out of the grants. *@ret_bind_zero (may be NULL)
 * says whether bind(0) is allowed, which a listen() on an unbound socket amounts to.
 * *@ret_bind_ports (may be NULL) gets the TCP ports bind may take as a bitmap of 65536 bits
 * (malloc'd; the supervisor's check where it binds for the child, port_remap), or NULL when
 * bind is not restricted. *@ret_carved (may be NULL; appended to) gets the real paths of the
 * entries granted one by one beside the way to a denied path in a writable grant
 * (LANDLOCK_BUILD_MEDIATE_WRITE). Returns the ruleset fd (O_CLOEXEC) or -errno. */
int landlock_ruleset_build(const struct sandlock_policy *p, int abi,
			   const uint32_t status[SANDLOCK_PROTECTION_COUNT], int flags,
			   int *ret_bind_zero, uint8_t **ret_bind_ports, char ***ret_carved,
			   struct sandlock_error **reterr);

/* The access masks used for a read or a write grant under @handled (exposed for unit tests). */
uint64_t landlock_fs_handled(int abi, const uint32_t status[SANDLOCK_PROTECTION_COUNT]);
uint64_t landlock_read_access(uint64_t handled, int is_dir);
uint64_t landlock_write_access(uint64_t handled, int is_dir);

/* Whether a grant of @p covers /proc (its real path is /proc or above it): with a supervisor,
 * /proc is then served by it (LANDLOCK_BUILD_MEDIATE_PROC). */
int landlock_grants_proc(const struct sandlock_policy *p);
/* Append to @granted the random devices every sandbox may read (/dev/random, /dev/urandom:
 * the default devices' rules) but those an fs_denied path is or holds. 0 or -ENOMEM. */
int landlock_random_devices_granted(const struct sandlock_policy *p, char ***granted);
/* @path, absolute, with its longest existing prefix resolved (realpath) and the rest appended
 * as written (a denied path that does not exist yet). NULL with errno set: ENOLINK when a
 * component is a symlink that points nowhere. */
char *landlock_resolve_partly(const char *path);

/* The writable grants of @p that hold a denied path of the user's (beneath them, not the grant
 * itself): in *@ret_roots, their real paths, and in *@ret_denied the real paths of every path
 * carved out of the grants (the user's, the existing part resolved, and sandlock's own: /proc
 * with @mediate_proc, the /sys denials, the GPU nodes not exposed); both NULL when there is no
 * such grant. Either may be NULL. Returns how many such grants there are, or -ENOMEM. */
int landlock_write_mediation(const struct sandlock_policy *p, int mediate_proc, char ***ret_roots,
			     char ***ret_denied);

struct plan_ll;
/* Record every rule the ruleset builds of this thread add into @ll (plan/plan.h), until
 * landlock_record(NULL): the judge's copy of the ruleset (landlock-record.c). */
void landlock_record(struct plan_ll *ll);
/* The user's fs_denied paths, resolved and as written, into @ll. 0 or -ENOMEM. */
int landlock_record_denied(const struct sandlock_policy *p, struct plan_ll *ll);
void plan_ll_done(struct plan_ll *ll);

/* Grant @path read (and execute) in ruleset @ruleset_fd. */
int landlock_add_read(int ruleset_fd, int abi, const uint32_t status[SANDLOCK_PROTECTION_COUNT],
		      const char *path, const char *field, struct sandlock_error **reterr);
/* Grant @path read and write (everything the ruleset handles) in ruleset @ruleset_fd. */
int landlock_add_write(int ruleset_fd, int abi, const uint32_t status[SANDLOCK_PROTECTION_COUNT],
		       const char *path, const char *field, struct sandlock_error **reterr);
