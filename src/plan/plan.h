/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plan: a policy turned into everything the child needs, built in the parent before fork so
 * that the child only makes async-signal-safe syscalls: the Landlock ruleset fd, the BPF program,
 * argv/envp, the exec candidates of the PATH search, the resolved rlimits and CPU set; and, in
 * sections of their own (net, fs, proc), what the supervisor's handlers read.
 */
#pragma once

#include <linux/filter.h>
#include <sched.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "policy/policy.h"
#include "policy/rules.h"
#include "plan/seccomp.h"
#include "plan/traps.h"
#include "http/proxy.h"

struct cow;
struct cow_tmp;

/* A file by identity (a bind mount or a hard link of it is the same). */
struct file_id {
	dev_t dev;
	ino_t ino;
};

/* The sections the supervisor's handlers read (supervisor_prepare takes the plan, read only).
 * The network: the connect and send rules, binds, named UNIX sockets, /etc/hosts. */
struct plan_net {
	struct net_rule *allow, *deny; /* connect (net_needs.onbehalf) */
	size_t n_allow, n_deny;
	int dgram_checked; /* UDP or ICMP sockets exist and their destinations are checked */
	int bind_zero;	   /* bind(0) is allowed: so is listen() on an unbound socket */
	char *hosts;	   /* the synthetic /etc/hosts when a rule names a host, else NULL */
	/* With hosts: the host's /etc/hosts (0/0: none), which every name reaching it is
	 * served the synthetic file for (handlers/open.c). */
	struct file_id hosts_id;
	int onbehalf;	   /* connects are the supervisor's (net_needs.onbehalf) */
	int abstract_open; /* the abstract UNIX socket scope is not in force: any name is reached */
	int tcp_open;	   /* the NetTcp protection is not in force: every TCP connect goes */
	char *runtime_prefix; /* "<real /dev/shm>/sandlock-": control sockets, never reached */
	int port_remap;	      /* TCP binds are the supervisor's, in a virtual port space */
	uint8_t *bind_ports;  /* port_remap, events, policy_fn: the TCP ports bind may take
			       * (65536 bits), NULL: all */
};

/* One rule of the Landlock ruleset, as added (plan/landlock.c records them in logging mode):
 * the inode it is on, the access it grants there and beneath, its real path then. */
struct ll_rule {
	dev_t dev;
	ino_t ino;
	uint64_t access;
	char *path;
};

/* The ruleset as the kernel got it, so that the supervisor can tell which path call Landlock
 * refuses (supervisor/judge.c) without asking the policy: every rule (the grants, sandlock's
 * carve-outs and default devices, the entries granted one by one around a denied path), the
 * access it handles, and the user's fs_denied paths. Empty (active 0) but in logging mode. */
struct plan_ll {
	int active;
	uint64_t handled; /* handled_access_fs */
	struct ll_rule *rules;
	size_t n, cap;
	char **denied;		  /* the user's fs_denied, real paths (landlock_resolve_partly) */
	char **denied_as_written; /* the same, as the user wrote them (the hint's) */
};

/* The filesystem: the grants as real paths, and a writable grant's denied paths. */
struct plan_fs {
	char **write_grants; /* the real paths of the write grants (named UNIX sockets, metadata
			      * changes, the views opened for writing) */
	char **granted;	     /* the real paths of every read and write grant: the supervisor's
			      * views of /proc and /sys files are served beneath them only */
	char **write_roots;  /* the writable grants holding a denied path (real paths): what is
			      * created, removed, renamed or opened beneath them is the
			      * supervisor's (handlers/fs-write.c); NULL: none */
	char **denied;	     /* with write_roots: the denied paths (real paths) */
	char **carved;	     /* with write_roots: the entries Landlock grants one by one beside
			      * the way to a denied path there (real paths); the supervisor
			      * takes them (supervisor.fs_granted) */
	struct file_id *denied_ids; /* with write_roots: the identities of the denied paths */
	size_t n_denied_ids;
	struct plan_ll ll; /* logging mode: the ruleset's rules, for the judge */
};

/* /proc: served by the supervisor when a grant covers it (Landlock leaves it out). */
struct plan_proc {
	int served; /* opens of it are the supervisor's (handlers/open.c) */
};

/* The HTTP ACL proxy (plan-http.c): active with any http_allow or http_deny rule. Everything
 * the proxy needs, built and checked before the sandbox starts; the secrets and the CA's key
 * exist only here, in the supervisor's memory. */
struct plan_http {
	int active;
	struct http_rule *allow, *deny; /* parsed from the policy's canonical rules */
	size_t n_allow, n_deny;
	struct http_auth *auth; /* http_auth, in order */
	size_t n_auth;
	struct http_secret *secrets; /* credentials, loaded (env:, file:, fd:); wiped when done */
	size_t n_secrets;
	struct http_host_addrs *hosts; /* the rules' concrete host names, resolved */
	size_t n_hosts;
	uint16_t *ports; /* the intercepted TCP ports: http_ports (default 80), 443 with a CA */
	size_t n_ports;
	struct tls_ca *ca; /* http_ca + http_key, or generated for http_inject_ca; NULL */
	char *ca_pem;	   /* its certificate (PEM), for injection and http_ca_out */
	size_t ca_pem_len;
	char **inject_paths;	    /* http_inject_ca: the bundles as given */
	struct file_id *inject_ids; /* their identities when the plan was built (0/0: missing) */
	size_t n_inject;
	const char *ca_out; /* http_ca_out (the policy's), or NULL */
};

/* A sendmsg flag no workload needs: the kernel (5.x: ignored by UNIX sockets; since 6.5:
 * MSG_SPLICE_PAGES, cleared from what user space passes) sends as without it. The supervised
 * filter leaves a sendmsg with it untrapped, so that the launch can hand the listener over
 * before anybody answers trapped calls; right after, the child installs a second filter that
 * refuses it (EINVAL), so the command and its descendants never send it past the supervisor. */
#define LAUNCH_SENDMSG_FLAG 0x8000000u

struct plan {
	int ruleset_fd;
	struct sock_fprog prog;
	int supervised;
	/* LAUNCH_SENDMSG_FLAG is refused here already (sandlock runs in a sandbox of its own):
	 * the child sends "ready" without it (listener_by_number). */
	int launch_flag_refused;
	/* sendmsg is in the trap set: before its filter, the child reports the number the
	 * listener will have, and the parent takes it with pidfd_getfd. */
	int listener_by_number;
	int abi;
	uint32_t status[SANDLOCK_PROTECTION_COUNT];

	char **argv;
	char **envp;
	char **exec_paths; /* the PATH search, in order; argv[0] itself when it holds a '/' */
	char **sh_argv;	   /* "/bin/sh" <path> argv[1..]: the ENOEXEC fallback of execvp */
	char *cwd;

	int has_nofile; /* RLIMIT_NOFILE set in the child: soft nofile, hard nofile_max */
	uint64_t nofile, nofile_max;
	int no_coredump;
	int no_huge_pages;
	int no_randomize_memory;
	int has_cpus;
	cpu_set_t cpus;
	unsigned num_cpus; /* the CPUs the sandbox sees (the supervisor's views); 0: the host's */
	int deterministic_dirs; /* listings sorted by the supervisor */
	int has_random_seed;	/* random_seed: getrandom and /dev/urandom from it */
	int has_ids;		/* uid/gid: the child's in a user namespace of its own */
	int has_time_start;	/* time_start: the wall clock starts there */
	int64_t time_start_sec;
	uint32_t time_start_nsec;
	uint32_t uid, gid;
	uint64_t random_seed;
	unsigned max_cpu;	/* percent of each 100 ms period the sandbox runs; 0: unthrottled */
	unsigned max_processes; /* the most processes at once; 0: unlimited */
	uint64_t max_memory;	/* the most anonymous memory, bytes; 0: unlimited */
	char *name;		/* NULL: "sandbox-<pid>" once the pid is known */
	int control;		/* a runtime directory and control socket (control_socket) */
	struct cow *cow;	/* workdir: its branch, made here (the sandbox takes it); NULL */
	struct cow_tmp *tmp;	/* private_tmp: made here (the sandbox takes it); NULL */
	int umask_traced;	/* umask() is trapped (the supervisor keeps the masks it reads) */
	uint8_t on_exit, on_error; /* enum branch_action, resolved */
	struct plan_needs needs;   /* what the trap set is built for (plan/traps.c) */
	uint32_t events;	   /* SANDLOCK_EVENTS_* of the run (supervisor/events.h) */
	struct plan_net net;
	struct plan_fs fs;
	struct plan_proc proc;
	struct plan_http http;
	/* Logging mode (needs.events & SANDLOCK_EVENTS_DENIALS): the syscalls the filter denies
	 * whole (the default blocklist, extra_deny_syscalls) are the supervisor's to answer with
	 * their errno and log (supervisor/judge.c): by number, what blocks each; NULL otherwise. */
	struct seccomp_block *blocked; /* SECCOMP_BLOCK_NR entries */
	char **blocked_extra;	       /* extra_deny_syscalls as written (seccomp_block.index) */
	/* logging mode: the argument filters' denials the filter hands the supervisor */
	struct seccomp_arg_rules arg_denied;
	/* Extension handlers: the trap set without their syscalls (which are trapped whole),
	 * where the supervisor asks whether a call is one the built-in routes would see
	 * (trap_set_matches); NULL without handlers. */
	struct trap *builtin_traps;
	size_t n_builtin_traps;
};

/* What spawning refuses before building anything, with the protections resolved to @status:
 * mistakes, fields not supported yet, what needs a supervisor or a protection in force. Shared
 * by plan_build() and sandlock_policy_check(). */
int plan_check(const struct sandlock_policy *p, const uint32_t status[SANDLOCK_PROTECTION_COUNT],
	       struct sandlock_error **reterr);

/* Everything that can fail or allocate. @events: the run's SANDLOCK_EVENTS_* (what the trap
 * set must let the supervisor see: plan_needs.events). On failure nothing is left open. */
int plan_build(const struct sandlock_policy *p, const char *const *argv, uint32_t events,
	       struct plan *ret, struct sandlock_error **reterr);
/* plan_build, with the @n_user syscalls of @user_nrs (extension handlers, checked already:
 * supervisor/user-handlers.c) trapped whole beside the policy's traps. */
int plan_build_with(const struct sandlock_policy *p, const char *const *argv, uint32_t events,
		    const int *user_nrs, size_t n_user, struct plan *ret,
		    struct sandlock_error **reterr);
void plan_done(struct plan *plan);

/* The HTTP proxy's section (plan-http.c), for a policy with HTTP rules (policy_http_active):
 * @plan->http filled, the rules' reachability merged into @plan->net.allow and their names into
 * @plan->net.hosts. Called by plan_build; plan_done frees it (plan_http_done), its secrets
 * wiped. */
int plan_http_build(const struct sandlock_policy *p, struct plan *plan,
		    struct sandlock_error **reterr);
void plan_http_done(struct plan_http *h);

/* The envp the child gets under @p, built from @environ (exposed for unit tests). */
char **plan_build_env(const struct sandlock_policy *p, char *const *environ_);
/* The exec candidates of @cmd under the PATH value @path (NULL: the default search path). */
char **plan_exec_paths(const char *cmd, const char *path);
