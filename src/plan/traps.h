/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plan/traps: the syscalls a policy routes to the supervisor (the trap set the BPF program is
 * built with). Each row of plan/routes.def names a syscall, its argument filter, the policy test
 * that enables it, and its handlers; this half reads the first three, supervisor/dispatch.c the
 * syscall and its handlers. So the plan never calls into the supervisor, and the supervisor's
 * routing never asks the policy.
 */
#pragma once

#include <linux/btrfs.h>
#include <linux/fs.h>
#include <linux/fscrypt.h>
#include <linux/fsverity.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

/* A syscall the supervisor answers, optionally only when its arguments match every condition
 * (libseccomp comparisons: op is an enum scmp_compare, compared on the full 64-bit value). */
struct trap_cond {
	uint32_t arg;
	uint32_t op;
	uint64_t datum;
	uint64_t datum_b; /* SCMP_CMP_MASKED_EQ: datum is the mask, datum_b the value */
};

struct trap {
	int nr;
	uint32_t n_conds;
	struct trap_cond cond[2];
	/* Without a supervisor (no_supervisor): 1 = the matching calls are denied (EPERM),
	 * because nobody could check them; 0 = they are allowed. */
	uint32_t deny_unsupervised;
};

/* The most traps a sandbox can need: every row of the table (checked when it is built). */
#define DISPATCH_MAX_TRAPS 160
/* The most syscalls extension handlers may add to a trap set (each trapped whole). */
#define PLAN_USER_TRAPS_MAX 64

/* What the policy tests of routes.def read, decided once per policy: the facts of the policy the
 * trap set depends on. Two of them resolve the grants' paths (realpath), which plan_build does
 * once for its own sections (plan.proc.served, plan.fs.write_roots) and hands over here. */
struct plan_needs {
	int supervised;	    /* !no_supervisor */
	int proc_served;    /* supervised, and a grant covers /proc (landlock_grants_proc) */
	int write_mediated; /* supervised, and a writable grant holds a denied path
			     * (landlock_write_mediation) */
	int workdir;	    /* supervised, with a workdir */
	int max_disk;	    /* max_disk is set */
	int port_remap;
	int max_processes, max_memory, num_cpus; /* each is set */
	int random_seed, name, time_start;	 /* each is set */
	int deterministic_dirs;
	int net_hosts;	     /* a net_allow rule names a host (policy_net_hosts) */
	int http;	     /* supervised, with the HTTP proxy (policy_http_active) */
	int http_files;	     /* http, and a rule names a host (policy_http_hosts) or
			      * http_inject_ca names bundles (both served by handlers/open.c) */
	int bind_restricted; /* policy_bind_restricted */
	uint32_t events;     /* supervised: the run's SANDLOCK_EVENTS_* (set by plan_build) */
	int policy_fn;	     /* supervised, with a policy_fn: its held and observed calls */
};

/* The summary of @p, with the two answers that resolve paths given: whether a grant covers /proc
 * (@proc_served) and whether a writable grant holds a denied path (@write_mediated); both are
 * taken only when @p is supervised. */
void plan_needs_fill(const struct sandlock_policy *p, int proc_served, int write_mediated,
		     struct plan_needs *ret);
/* The same summary for a policy without a plan (each path answer asked once). */
void plan_needs_of(const struct sandlock_policy *p, struct plan_needs *ret);

/* The traps a sandbox with the needs @n takes (the BPF program routes them to the supervisor,
 * or denies the deny_unsupervised ones without one). Returns how many were written (at most
 * @max); unused bytes of each entry are zero, so entries compare with memcmp. */
size_t trap_set_of(const struct plan_needs *n, struct trap *traps, size_t max);
/* Whether a sandbox of the needs @n would trap syscall @nr without its policy_fn: if not, its
 * handlers mediate nothing of it and answer CONTINUE (supervisor/policy-fn.c then answers an
 * allowed call itself). */
int trap_needed_without_pfn(const struct plan_needs *n, int nr);
/* Whether a call with @d is one of @traps (its number, and every condition of one of them on
 * its arguments holds, as the BPF program compares them). */
int trap_set_matches(const struct trap *traps, size_t n, const struct seccomp_data *d);
/* The trap set of @p for a caller without a plan: trap_set_of(plan_needs_of(@p)). */
size_t dispatch_trap_set(const struct sandlock_policy *p, struct trap *traps, size_t max);

/* The ioctl requests that change a file's inode (flags, version, verity, an encryption
 * policy, a subvolume's flags, a filesystem's label) rather than its content: trapped in every
 * supervised sandbox (routes.def), refused for a workdir file (handlers/cow-meta.c), made by the
 * supervisor elsewhere (handlers/fs-meta-attr.c). On the low 32 bits. */
#define EXT4_IOC_SETVERSION_ _IOW('f', 4, long)
#define COW_INODE_IOCTLS                                                                           \
	FS_IOC_SETFLAGS, FS_IOC_FSSETXATTR, FS_IOC_SETVERSION, EXT4_IOC_SETVERSION_,               \
		FS_IOC_ENABLE_VERITY, FS_IOC_SET_ENCRYPTION_POLICY, BTRFS_IOC_SUBVOL_SETFLAGS,     \
		FS_IOC_SETFSLABEL
