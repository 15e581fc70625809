/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy: the policy object behind sandlock_policy_t. Pure data: setters copy their input and
 * validate what can be validated without the kernel; nothing here makes a syscall. plan/ turns
 * a policy into kernel objects.
 */
#pragma once

#include <sched.h>
#include <stdint.h>

#include "policy/rules.h"
#include "sandlock.h"

/* An optional unsigned number: set or not (the reference's "None"). */
struct opt_u64 {
	int set;
	uint64_t v;
};

/* An optional list of unsigned numbers, where "set and empty" differs from "unset"
 * (gpu_devices: None denies every GPU, [] exposes all). */
struct opt_u32v {
	int set;
	size_t n;
	uint32_t *v;
};

/* COW branch actions (BranchAction). */
enum branch_action {
	BRANCH_COMMIT,
	BRANCH_ABORT,
	BRANCH_KEEP,
	BRANCH_DEFER,
};

/* The whole policy: every field of the sandbox reference's sectioned schema, plus the runtime
 * fields. The schema (schema.c) describes each field once: its section, key, Python name,
 * type, and whether its enforcement exists yet; loaders, dumpers and setters go through it.
 * Lists of rules and ports hold canonical text (each entry parsed and re-formatted when set). */
struct sandlock_policy {
	/* [config] */
	char *http_ca;
	char *http_key;
	char **http_inject_ca;
	char *http_ca_out;
	char *fs_storage;
	char *workdir;
	/* [determinism] */
	struct opt_u64 random_seed;
	char *time_start; /* canonical RFC 3339, UTC */
	int deterministic_dirs;
	int no_randomize_memory;
	/* [program] */
	char *exec;
	char **args;
	char **env; /* "NAME=VALUE", one entry per name, in the order first set */
	char *cwd;
	struct opt_u64 uid;
	struct opt_u64 gid;
	int clean_env;
	int no_coredump;
	int no_huge_pages;
	int no_supervisor;
	/* [filesystem] */
	char **fs_read; /* absolute paths */
	char **fs_write;
	char **fs_deny;
	char *chroot;
	char **fs_mount;  /* "VIRTUAL:HOST" or "VIRTUAL:HOST:ro" */
	uint8_t on_exit;  /* 0: the default (commit), else enum branch_action + 1 */
	uint8_t on_error; /* 0: the default (abort), else enum branch_action + 1 */
	int private_tmp;  /* a directory of the sandbox's own, its TMPDIR (cow/tmp.c) */
	/* [network] */
	char **net_allow;
	char **net_deny;
	char **net_allow_bind;
	char **net_deny_bind;
	int port_remap;
	/* [http] */
	struct opt_u32v http_ports;
	char **http_allow;
	char **http_deny;
	/* [syscalls] */
	char **extra_allow;
	char **extra_deny;
	/* [limits] */
	struct opt_u64 max_memory;
	struct opt_u64 max_processes;
	uint64_t max_open_files; /* 0: unset */
	struct opt_u64 max_cpu;
	struct opt_u64 max_disk;
	struct opt_u32v gpu_devices;
	int has_cpu_cores;
	cpu_set_t cpu_cores;
	struct opt_u64 num_cpus;
	/* runtime (not in profiles) */
	char *name;		/* NULL: "sandbox-<pid>" */
	int control_socket_off; /* control_socket = false */
	char **credentials;	/* "NAME=SOURCE" */
	char **http_auth;
	char *image; /* a container image reference */
	/* [protections] (an extension of the schema: the builder's allow_degraded/disable) */
	uint8_t protection[SANDLOCK_PROTECTION_COUNT]; /* SANDLOCK_PROTECTION_STRICT... */
	/* What messages call each field, by schema index (labels.c); NULL: the names. */
	char **labels;
	/* net_allow and net_deny as parsed when each entry was set (one rule per entry, in the
	 * same order), and what enforcing them takes, decided then: the plan and the trap set
	 * read these and never parse the text again (policy-net.c). */
	struct policy_net {
		struct net_rule *allow, *deny;
		size_t n_allow, n_deny;
		struct net_needs needs;
		int hosts; /* a net_allow rule names a host */
	} net;
	/* net_allow_bind and net_deny_bind, each entry parsed when it is set (the ranges of every
	 * entry, in order; .all for "*"): the ruleset's port rules read these (policy-net.c). */
	struct policy_bind {
		struct port_set allow, deny;
	} bind;
	/* policy_fn (not data: no schema field, never dumped or loaded), shared by the copies of
	 * the policy and the sandboxes spawned from them; NULL: none. */
	struct policy_fn_ref *policy_fn;
	uint32_t policy_fn_timeout_ms; /* 0: the default */
};

/* The callback of sandlock_policy_set_policy_fn, counted: @drop runs once, with the last
 * reference. */
struct policy_fn_ref {
	_Atomic long refs;
	sandlock_policy_fn fn;
	void *user_data;
	void (*drop)(void *user_data);
};
struct policy_fn_ref *policy_fn_ref(struct policy_fn_ref *r);
void policy_fn_unref(struct policy_fn_ref *r);
struct protection_info {
	const char *name;     /* "FsRefer" */
	const char *cli_name; /* "fs-refer" */
	int abi_floor;
};

extern const struct protection_info protection_table[SANDLOCK_PROTECTION_COUNT];

/* The protection called @name ("FsRefer" or "fs-refer"), or -EINVAL. */
int policy_protection_from_name(const char *name);

/* Resolve each protection's status for @abi. Fails with -EOPNOTSUPP and a message naming the
 * first strict protection this kernel lacks (and its floor). */
int policy_resolve_protections(const struct sandlock_policy *p, int abi,
			       uint32_t status[SANDLOCK_PROTECTION_COUNT],
			       struct sandlock_error **reterr);

/* A policy with every field at its default; NULL on ENOMEM. policy_free() accepts NULL. */
struct sandlock_policy *policy_new(void);
void policy_free(struct sandlock_policy *p);
/* A deep copy; NULL on ENOMEM. */
struct sandlock_policy *policy_copy(const struct sandlock_policy *p);

/* Set NAME=VALUE, replacing an earlier value of NAME. The caller checked NAME. -ENOMEM. */
int policy_set_env(struct sandlock_policy *p, const char *name, const char *value);

/* [program] exec and args from @argv (non-empty). -ENOMEM. */
int policy_set_command(struct sandlock_policy *p, const char *const *argv);

/* Valid sandbox name: 1..64 bytes, no '/', not "." or "..". Returns 0 or -EINVAL with a message. */
int policy_check_name(const char *name, struct sandlock_error **reterr);

/* Refuse, naming them, the fields only the supervisor can enforce when @p has no_supervisor.
 * -EINVAL. */
int policy_check_supervision(const struct sandlock_policy *p, struct sandlock_error **reterr);

/* Append @r (taking it over, even on failure) to the typed net_allow (@deny 0) or net_deny
 * rules of @p, the rule the schema just added as text. 0 or -ENOMEM. */
int policy_net_add(struct sandlock_policy *p, int deny, struct net_rule *r);
/* Drop the typed net_allow (@deny 0) or net_deny rules of @p, with their text. */
void policy_net_clear(struct sandlock_policy *p, int deny);
/* Copy the typed rules of @from, and their summary, into @to, whose own are none (policy_copy).
 * 0 or -ENOMEM. */
int policy_net_copy(struct sandlock_policy *to, const struct sandlock_policy *from, int deny);

/* Append the ports of one net_allow_bind (@deny 0) or net_deny_bind entry, @set (taken over,
 * even on failure), to the typed lists of @p, the entry the schema just added as text. 0 or
 * -ENOMEM. */
int policy_bind_add(struct sandlock_policy *p, int deny, struct port_set *set);
/* Drop the typed net_allow_bind (@deny 0) or net_deny_bind ports of @p (not their text). */
void policy_bind_clear(struct sandlock_policy *p, int deny);
/* Copy the typed bind ports of @from into @to, whose own are none (policy_copy). 0 or -ENOMEM. */
int policy_bind_copy(struct sandlock_policy *to, const struct sandlock_policy *from, int deny);

/* What the policy's network rules take (net_rules_needs_of), as decided when they were set. */
void policy_net_needs(const struct sandlock_policy *p, struct net_needs *ret);
/* Whether the policy's network rules need the supervisor's on-behalf connect (a rule to a host,
 * an IP or a CIDR, a checked UDP or ICMP rule, a deny rule), rather than Landlock's port rules
 * alone. */
int policy_net_onbehalf(const struct sandlock_policy *p);
/* Whether sends on datagram sockets are checked: sendmsg and sendmmsg are trapped. */
int policy_net_sends(const struct sandlock_policy *p);

/* Whether a net_allow rule names a host (resolved at start, served in a synthetic /etc/hosts). */
int policy_net_hosts(const struct sandlock_policy *p);

/* Whether the HTTP ACL proxy runs: the policy has an http_allow or http_deny rule. */
int policy_http_active(const struct sandlock_policy *p);
/* Whether an http_allow or http_deny rule names a host (resolved at start, served in the
 * synthetic /etc/hosts, as for net_allow). */
int policy_http_hosts(const struct sandlock_policy *p);

/* Whether TCP bind is restricted at all (anything but net_allow_bind "*" alone): listen() on
 * an unbound socket must then be checked (supervisor/handlers/net.c). */
int policy_bind_restricted(const struct sandlock_policy *p);

/* The fields a policy for sandlock_confine() may not set, as a comma-separated list of field
 * names written to @buf; empty when the policy only holds filesystem grants and protections. */
void policy_confine_extras(const struct sandlock_policy *p, char *buf, size_t size);
