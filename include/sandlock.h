/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sandlock.h: the only public header of libsandlock, a rootless process sandbox for Linux
 * (Landlock + seccomp-bpf + a seccomp user-notification supervisor).
 *
 * Conventions, for every function below:
 *  - Functions return >= 0 on success and a negative errno on failure. The errno set a function
 *    can return is listed on its declaration; nothing else is returned.
 *  - Out-parameters named ret_* are written only on success; reterr (a sandlock_error_t **,
 *    may be NULL) is written only on failure, with a new error object the caller frees with
 *    sandlock_error_free().
 *  - Handles are opaque. Every *_free() accepts NULL.
 *  - The ABI holds no bool, enum or bitfield: flags and modes are uint32_t, so ctypes and cgo
 *    see one layout. Option structs are size-versioned: set .size = sizeof(struct) first.
 *  - The library never prints, exits or aborts, and every descriptor it opens is O_CLOEXEC.
 *  - Threads: a policy must not be changed while another thread uses it; a sandbox handle may
 *    be used from any thread (wait, kill, pause and resume are thread-safe).
 */
#ifndef SANDLOCK_H
#define SANDLOCK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SANDLOCK_VERSION_MAJOR 0
#define SANDLOCK_VERSION_MINOR 1
#define SANDLOCK_VERSION_MICRO 0

typedef struct sandlock_error sandlock_error_t;
typedef struct sandlock_policy sandlock_policy_t;
typedef struct sandlock_sandbox sandlock_sandbox_t;

/* ---- errors ----------------------------------------------------------------------------- */

/* The negative errno the failing call returned. */
int sandlock_error_code(const sandlock_error_t *err);
/* A one-line human message, e.g. "fs_read: /nope: No such file or directory". Owned by @err. */
const char *sandlock_error_message(const sandlock_error_t *err);
/* The confinement step that failed in the child ("execve", "landlock_restrict_self", ...) when
 * the error comes from the child's launch sequence, otherwise NULL. Owned by @err. */
const char *sandlock_error_step(const sandlock_error_t *err);
void sandlock_error_free(sandlock_error_t *err);

/* ---- library and kernel ----------------------------------------------------------------- */

/* "MAJOR.MINOR.MICRO" of the loaded library. Static storage. */
const char *sandlock_version(void);

/* The running kernel's Landlock ABI version (>= 1), or -EOPNOTSUPP when Landlock is missing
 * or disabled. */
int sandlock_landlock_abi_version(void);

/* The Landlock ABI a sandbox with every protection strict (the default) needs: 6. */
int sandlock_min_landlock_abi(void);

/* Landlock protections, each with an ABI floor (sandlock_protection_abi_floor()). */
#define SANDLOCK_PROTECTION_FS_REFER 0u			  /* ABI 2 */
#define SANDLOCK_PROTECTION_FS_TRUNCATE 1u		  /* ABI 3 */
#define SANDLOCK_PROTECTION_NET_TCP 2u			  /* ABI 4 */
#define SANDLOCK_PROTECTION_FS_IOCTL_DEV 3u		  /* ABI 5 */
#define SANDLOCK_PROTECTION_SIGNAL_SCOPE 4u		  /* ABI 6 */
#define SANDLOCK_PROTECTION_ABSTRACT_UNIX_SOCKET_SCOPE 5u /* ABI 6 */
#define SANDLOCK_PROTECTION_COUNT 6u

/* What the policy asks of a protection (sandlock_policy_set_protection). */
#define SANDLOCK_PROTECTION_STRICT 0u	/* enforce; refuse to start where the kernel lacks it */
#define SANDLOCK_PROTECTION_DEGRADED 1u /* enforce where available, skip where not */
#define SANDLOCK_PROTECTION_DISABLED 2u /* never enforce */

/* What a protection resolves to on this kernel (sandlock_policy_protection_status). */
#define SANDLOCK_STATUS_ACTIVE 0u      /* enforced */
#define SANDLOCK_STATUS_DEGRADED 1u    /* allowed to degrade, and this kernel lacks it */
#define SANDLOCK_STATUS_DISABLED 2u    /* disabled by the policy */
#define SANDLOCK_STATUS_UNAVAILABLE 3u /* strict, and this kernel lacks it: spawning fails */

/* The protection's name in the kernel-doc form ("FsRefer", ...) or NULL for an unknown value.
 * sandlock_protection_from_name() also accepts the CLI form ("fs-refer").
 * Returns the protection (>= 0) or -EINVAL. */
const char *sandlock_protection_name(uint32_t protection);
int sandlock_protection_from_name(const char *name);
/* The minimum Landlock ABI of @protection, or -EINVAL. */
int sandlock_protection_abi_floor(uint32_t protection);

/* ---- policy ----------------------------------------------------------------------------- */

/* A new empty policy: no filesystem access, no network, the default seccomp blocklist, every
 * protection strict, supervised. *@ret_policy is the caller's, released with
 * sandlock_policy_free(). Errors: -EINVAL (NULL), -ENOMEM. */
int sandlock_policy_new(sandlock_policy_t **ret_policy);
void sandlock_policy_free(sandlock_policy_t *policy);

/* Grant read + execute (recursive for a directory) / read + write on @path. Copies @path. The
 * path must be absolute or is made absolute against the caller's cwd now; it is opened when
 * the sandbox is spawned, and a missing path is then an error naming it.
 * Errors: -EINVAL (NULL or empty path), -ENOMEM, and for a relative path getcwd(3)'s errors
 * (-ENOENT, -EACCES, -ERANGE). */
int sandlock_policy_add_fs_read(sandlock_policy_t *policy, const char *path);
int sandlock_policy_add_fs_write(sandlock_policy_t *policy, const char *path);

/* Set @name=@value in the child's environment (after clean_env); a later call for the same
 * name wins. Copies both. Errors: -EINVAL (empty name, or a name holding '=' or NUL), -ENOMEM. */
int sandlock_policy_set_env(sandlock_policy_t *policy, const char *name, const char *value);
/* Start the child's environment from PATH, HOME, USER, TERM and LANG only. */
int sandlock_policy_set_clean_env(sandlock_policy_t *policy, uint32_t enable);
/* The child's working directory. Copies @path; NULL unsets. Errors: -EINVAL, -ENOMEM. */
int sandlock_policy_set_cwd(sandlock_policy_t *policy, const char *path);
/* RLIMIT_NOFILE (soft and hard) of the child, clamped to the limits the caller holds.
 * Errors: -EINVAL (0). */
int sandlock_policy_set_max_open_files(sandlock_policy_t *policy, uint64_t limit);
/* RLIMIT_CORE = 0 (no core dumps), survives execve. */
int sandlock_policy_set_no_coredump(sandlock_policy_t *policy, uint32_t enable);
/* PR_SET_THP_DISABLE for the child and its descendants. */
int sandlock_policy_set_no_huge_pages(sandlock_policy_t *policy, uint32_t enable);
/* personality(ADDR_NO_RANDOMIZE) for the child and its descendants. */
int sandlock_policy_set_no_randomize_memory(sandlock_policy_t *policy, uint32_t enable);
/* Pin the child to this CPU (repeatable). Errors: -EINVAL (core >= CPU_SETSIZE). */
int sandlock_policy_add_cpu_core(sandlock_policy_t *policy, uint32_t core);
/* Sandbox name and the child's virtual hostname: at most 64 bytes, no '/', not "." or "..".
 * Copies @name; NULL restores the default "sandbox-<pid>". Errors: -EINVAL, -ENOMEM. */
int sandlock_policy_set_name(sandlock_policy_t *policy, const char *name,
			     sandlock_error_t **reterr);
/* Run without the user-notification supervisor: Landlock + a kernel-only deny filter. */
int sandlock_policy_set_no_supervisor(sandlock_policy_t *policy, uint32_t enable);
/* Block a syscall or a group ("sysv_ipc") on top of the default blocklist; re-allow a group
 * of the default blocklist. Copies @name; checked when the sandbox is spawned (unknown names,
 * a group both allowed and denied, a denied member of an allowed group are errors).
 * Errors: -EINVAL (NULL or empty), -ENOMEM. */
int sandlock_policy_add_extra_deny_syscall(sandlock_policy_t *policy, const char *name);
int sandlock_policy_add_extra_allow_syscall(sandlock_policy_t *policy, const char *group);
/* Set a protection's mode (SANDLOCK_PROTECTION_STRICT|DEGRADED|DISABLED); last call wins.
 * Errors: -EINVAL. */
int sandlock_policy_set_protection(sandlock_policy_t *policy, uint32_t protection, uint32_t mode);
/* The resolved status (SANDLOCK_STATUS_*) of @protection under @policy on this kernel.
 * Errors: -EINVAL. */
int sandlock_policy_protection_status(const sandlock_policy_t *policy, uint32_t protection);

/* ---- the whole policy: profiles, documents, fields ---------------------------------------- */

/* Load a policy from a TOML profile (the sectioned profile schema, docs/profile-schema.md:
 * [config], [determinism], [program], [filesystem], [network], [http], [syscalls], [limits], and
 * [protections]), from a TOML file, or from a JSON document (the same sections, plus "runtime":
 * name, control_socket, credentials, http_auth, image). ${HOME} is expanded in a profile's path
 * fields. *@ret_policy is the caller's (sandlock_policy_free). A profile error's message starts
 * with "line:column: " (a file's with "path:line:column: "); every error is one line naming the
 * field. Errors: -EINVAL, -ERANGE (a number out of its range: cpu = 150), -ENOMEM, -ENOENT (a
 * missing file, or ${HOME} without a usable home), -EACCES, -EFBIG (a file over 1 MiB). */
int sandlock_policy_load_toml(const char *text, size_t len, sandlock_policy_t **ret_policy,
			      sandlock_error_t **reterr);
int sandlock_policy_load_toml_file(const char *path, sandlock_policy_t **ret_policy,
				   sandlock_error_t **reterr);
int sandlock_policy_load_json(const char *text, size_t len, sandlock_policy_t **ret_policy,
			      sandlock_error_t **reterr);

/* Dump the policy in the sectioned schema (what differs from the defaults). TOML leaves out the
 * runtime fields; JSON includes them. *@ret_text is the caller's (sandlock_free).
 * Errors: -EINVAL, -ENOMEM. */
int sandlock_policy_dump_toml(const sandlock_policy_t *policy, char **ret_text);
int sandlock_policy_dump_json(const sandlock_policy_t *policy, char **ret_text);

/* Set any field from text: @field is "section.key" ("limits.memory") or the Python name
 * ("max_memory"); a scalar is replaced, a list gets @value appended (a list of numbers may take
 * "0,2"; env takes "NAME=VALUE"; gpu_devices takes "all"). fs_mount takes "VIRTUAL:HOST[:ro]";
 * fs_mount_ro (or "filesystem.mount_ro") takes "VIRTUAL:HOST" and adds it read-only. Syscall
 * names and groups are checked as they are added. Relative filesystem grants are made
 * absolute against the caller's cwd. Copies @value. The policy is unchanged on failure.
 * Errors: -EINVAL (unknown field, bad value), -ERANGE, -ENOMEM. */
int sandlock_policy_set(sandlock_policy_t *policy, const char *field, const char *value,
			sandlock_error_t **reterr);
/* Reset a field to its default. Errors: -EINVAL (unknown field). */
int sandlock_policy_clear(sandlock_policy_t *policy, const char *field);
/* Call @field ("section.key" or the Python name) @label in the errors about @policy, where they
 * name the field (those of sandlock_policy_set(), sandlock_policy_check(), sandlock_spawn()):
 * a program that reads its own options gives each field the option its user types, as the
 * sandlock CLI does ("--fs-read: /x: No such file or directory", not "fs_readable: ..."). By
 * default a field is called by its Python name. @label is copied; NULL restores the name. Not
 * part of the policy's dump; a loaded policy starts with none. Errors: -EINVAL (NULL policy,
 * unknown field, empty label), -ENOMEM. */
int sandlock_policy_set_label(sandlock_policy_t *policy, const char *field, const char *label);

/* The ports of @spec, in the bind-port grammar ("8080", "9000-9005", "80, 443, 8000-8005";
 * 0..65535; not "*"), sorted without duplicates: the first @n are written to @ret_ports and
 * the number of ports is returned (65536 at most). Errors: -EINVAL, -ERANGE, -ENOMEM. */
int sandlock_ports_parse(const char *spec, uint16_t *ret_ports, size_t n,
			 sandlock_error_t **reterr);

/* Profiles: NAME.toml in $XDG_CONFIG_HOME/sandlock/profiles (an absolute $XDG_CONFIG_HOME),
 * else $HOME/.config/sandlock/profiles. A name is a plain file name: not empty, no '/', not
 * starting with '.', at most 200 bytes. Strings and vectors are the caller's (sandlock_free,
 * sandlock_strv_free). Errors: -EINVAL (a bad name), -ENOENT (neither variable is set, or for
 * load, no such profile), -ENOMEM, and for load those of sandlock_policy_load_toml_file. */
int sandlock_profile_dir(char **ret_dir, sandlock_error_t **reterr);
int sandlock_profile_path(const char *name, char **ret_path, sandlock_error_t **reterr);
/* The profile names, sorted; an empty vector when the directory does not exist. */
int sandlock_profile_list(char ***ret_names, sandlock_error_t **reterr);
int sandlock_policy_load_profile(const char *name, sandlock_policy_t **ret_policy,
				 sandlock_error_t **reterr);

/* The default command of the policy: [program] exec followed by args, as a NULL-terminated
 * vector the caller frees with sandlock_strv_free(); -ENOENT when exec is not set.
 * Errors: -EINVAL, -ENOENT, -ENOMEM. */
int sandlock_policy_command(const sandlock_policy_t *policy, char ***ret_argv);

/* Whether this library enforces @field ("section.key" or the Python name): 1 yes, 0 not yet
 * (setting it makes spawning fail with "not supported yet: <field>"). Errors: -EINVAL. */
int sandlock_field_supported(const char *field);

/* Release memory the library handed out. Both accept NULL. */
void sandlock_free(void *ptr);
void sandlock_strv_free(char **strv);

/* Check the policy as spawn would (names, paths, protections against this kernel) without
 * running anything. Errors: -EINVAL, -ENOENT (a grant path), -EOPNOTSUPP (a strict protection
 * or Landlock missing), -ENOMEM, others from opening grant paths. */
int sandlock_policy_check(const sandlock_policy_t *policy, sandlock_error_t **reterr);

/* Apply the policy's Landlock filesystem rules, and the IPC scopes (signals, abstract UNIX
 * sockets), to the calling thread in place (and threads it creates later), with no fork and no
 * exec; sets NO_NEW_PRIVS. Irreversible. TCP is left alone. A policy with anything but
 * filesystem grants and protection modes set is rejected with -EINVAL. @policy is
 * read, not retained.
 * Errors: -EINVAL, -ENOENT/-EACCES/-ENOTDIR/-ELOOP (opening a grant path), -EOPNOTSUPP,
 * -ENOMEM, -EPERM, -E2BIG (the thread already has the maximum of 16 Landlock layers). */
int sandlock_confine(const sandlock_policy_t *policy, sandlock_error_t **reterr);

/* ---- spawning --------------------------------------------------------------------------- */

#define SANDLOCK_STDIO_INHERIT 0u /* the caller's descriptor */
#define SANDLOCK_STDIO_NULL 1u	  /* /dev/null */
#define SANDLOCK_STDIO_PIPE                                                                        \
	2u		     /* stdin: a pipe the caller writes (sandlock_sandbox_stdin_fd);       \
			      * stdout/stderr: captured (sandlock_sandbox_stdout/stderr) */
#define SANDLOCK_STDIO_FD 3u /* the descriptor in stdin_fd/stdout_fd/stderr_fd (dup'ed) */

#define SANDLOCK_SPAWN_INTERACTIVE                                                                 \
	(1u << 0) /* make the sandbox the terminal's foreground                                    \
		   * process group, give the terminal back after */
#define SANDLOCK_SPAWN_PARKED                                                                      \
	(1u << 1) /* stop between confinement and exec until                                       \
		   * sandlock_sandbox_start() */
#define SANDLOCK_SPAWN_FDS_FROM_3                                                                  \
	(1u << 2) /* the command gets pass_fds[i] as descriptor 3 + i (as a shell's 3<&FD),        \
		   * not at its own number */

/* ---- events: what the supervisor decided ---------------------------------------------- */

#define SANDLOCK_VERDICT_ALLOW 0u
#define SANDLOCK_VERDICT_DENY 1u
#define SANDLOCK_VERDICT_AUDIT 2u /* allowed, and flagged */

/* SANDLOCK_EVENTS_DENIALS: also the denials the kernel makes alone (Landlock refusing a path,
 * a blocked syscall): the path calls Landlock may refuse are trapped and judged against the
 * grants for the log (the kernel still decides; the judgement may race a rename and is a
 * diagnosis, not a decision), the blocklist answered by the supervisor with its errno.
 * SANDLOCK_EVENTS_ALLOWED: the allowed decisions too (every trapped call, with the path calls
 * of DENIALS). Each costs a notification round trip on calls the policy would not trap. */
#define SANDLOCK_EVENTS_DENIALS (1u << 0)
#define SANDLOCK_EVENTS_ALLOWED (1u << 1)

/* One decision. Strings are owned by the library, valid only during the callback (or, from
 * sandlock_sandbox_denial, as long as the sandbox); NULL where the event has none. */
typedef struct sandlock_event {
	uint64_t size;	      /* sizeof(sandlock_event_t) of the library that filled it */
	uint64_t seq;	      /* 1, 2, ...: the order of the decisions */
	const char *syscall;  /* "openat", "connect", "sendto", "bind", "fork", "mmap", ... */
	const char *category; /* "file", "network", "process", "memory" */
	int32_t pid;	      /* the calling thread's process (the caller's pid namespace) */
	int32_t ppid;
	const char *comm; /* its name (/proc/PID/comm), "" when gone */
	uint32_t verdict; /* SANDLOCK_VERDICT_* */
	int32_t error;	  /* a denial's errno (EACCES, EPERM, ...), else 0 */
	uint32_t judged;  /* 1: the kernel's denial, judged for the log (SANDLOCK_EVENTS_DENIALS) */
	uint32_t first;	  /* 1: the first denial of this object and reason in this run */
	const char *path; /* the object as the supervisor resolved it (absolute) */
	const char *access;   /* what was asked of it: "O_RDONLY", "O_WRONLY|O_CREAT", "exec",
			       * "mkdir", "unlink", "rename", "stat", ... */
	const char *host;     /* the IP address (text), or a UNIX socket's name */
	uint32_t port;	      /* the destination or bind port; 0 */
	int32_t family;	      /* AF_INET, AF_INET6, AF_UNIX; 0 */
	const char *protocol; /* "tcp", "udp", "unix"; NULL */
	uint64_t amount;      /* memory: the bytes asked or used; process: the limit */
	const char *reason;   /* a denial's rule or missing grant: "no read grant covers /etc" */
	const char *hint;     /* what would allow it, as sandlock run's flags: "add -r /etc" */
} sandlock_event_t;

typedef void (*sandlock_event_fn)(const sandlock_event_t *event, void *user_data);

/* The denial line sandlock prints for @event (without "sandlock: " and the newline):
 * `denied open("/etc/gitconfig", O_RDONLY) by pid 123 (git): no read grant covers /etc; add -r
 * /etc`. *@ret_line is the caller's (sandlock_free). Errors: -EINVAL (not a denial), -ENOMEM. */
int sandlock_event_format(const sandlock_event_t *event, char **ret_line);
/* The event as one JSON object on one line (every field but size; NULLs left out). */
int sandlock_event_format_json(const sandlock_event_t *event, char **ret_json);

/* ---- policy_fn: a callback that decides per event ------------------------------------- */

/* What a policy_fn sees. Strings are owned by the library, valid only during the callback; NULL
 * where the event has none. There are no path strings: a path in the child's memory can change
 * after the check. Held: execve, execveat, open, openat, openat2, connect, bind, sendto with an
 * address, sendmsg, sendmmsg. Observed: the creates, removes, renames, links and truncates of
 * files, fork/vfork/clone making a process, writable anonymous mmap, brk. The sandbox's first
 * command (its launch's exec) is no event. */
typedef struct sandlock_policy_event {
	uint64_t size;	      /* sizeof(sandlock_policy_event_t) of the library that filled it */
	uint64_t seq;	      /* 1, 2, ...: the order of the events of this sandbox */
	const char *syscall;  /* "execve", "openat", "connect", "sendto", "fork", "mmap", ... */
	const char *category; /* "file", "network", "process", "memory" */
	int32_t pid;	      /* the calling thread's process (the caller's pid namespace) */
	int32_t ppid;
	/* connect/bind/sendto/sendmsg/sendmmsg: the IP address (text; an IPv4-mapped IPv6
	 * address as IPv4). An allowed connect or send goes where the callback was shown (else it
	 * fails EPERM); a sendmmsg whose messages name different destinations is refused (EPERM).
	 * An allowed bind of an IP socket is made by the supervisor with the address shown (EPERM
	 * where it changed), under the static bind rules; a UNIX socket's bind, by a process whose
	 * descriptors another thread shares, is refused (EPERM). */
	const char *host;
	uint32_t port; /* the destination or bind port; 0 */
	uint32_t held; /* 1: the call waits for the verdict; 0: observed, the verdict unused */
	/* execve/execveat: the arguments the kernel will exec (a TOCTOU-safe copy: no other task
	 * can change them before the exec: the tasks sharing the caller's memory are held in
	 * ptrace-stop until the exec is over), NULL-terminated; else NULL. An exec whose
	 * arguments could still change (shared memory, AIO, a task that cannot be stopped) is
	 * refused with EPERM, and the callback is not called for it. */
	const char *const *argv;
	uint32_t argc;
	/* Observed events: 1 when the static policy refused the call (the callback only observes).
	 * Held events: 0, since the static policy decides after an allow, and its denials win. */
	uint32_t denied;
} sandlock_policy_event_t;

/* What the callback may change, valid only during the callback. */
typedef struct sandlock_policy_ctx sandlock_policy_ctx_t;

/* The verdict: 0 allow; -1 deny (EPERM); a positive errno: deny with it; -2 allow and flag (an
 * event with SANDLOCK_VERDICT_AUDIT); anything else denies (EPERM). Called on a thread of the
 * sandbox's own (never the supervisor's loop), one event at a time, in order. No verdict within
 * the timeout denies the held call (EPERM). */
#define SANDLOCK_POLICY_ALLOW 0
#define SANDLOCK_POLICY_DENY (-1)
#define SANDLOCK_POLICY_AUDIT (-2)
typedef int32_t (*sandlock_policy_fn)(const sandlock_policy_event_t *event,
				      sandlock_policy_ctx_t *ctx, void *user_data);

/* Set (or with @fn NULL, clear) the policy's policy_fn. @user_data is passed to @fn; @drop (may
 * be NULL) is called with it once, when the last policy or sandbox holding it is gone (copies
 * share it). The policy_fn is not data: dumps leave it out, loaders never set it. The sandbox's
 * end waits for a callback that is running: one that never returns keeps the sandbox from
 * ending. The calls waiting for a verdict are bounded by the sandbox's tasks (each waits in one
 * call). Errors: -EINVAL (NULL policy; at spawn: a no_supervisor policy, a writable grant
 * covering /proc), -ENOMEM (then @drop is not called). */
int sandlock_policy_set_policy_fn(sandlock_policy_t *policy, sandlock_policy_fn fn, void *user_data,
				  void (*drop)(void *user_data));
/* How long a held call waits for the verdict (1..600000 ms; the default 5000). -EINVAL. */
int sandlock_policy_set_policy_fn_timeout(sandlock_policy_t *policy, uint32_t timeout_ms);

/* Network, by IP address (text, "127.0.0.1", "::1"): the addresses a connection or datagram may
 * reach resolve per-pid override > live set > static net_allow, and the static net_deny applies
 * after and always wins. restrict_network sets the live set to @ips (never above the static
 * ceiling: the static rules are checked first); grant_network adds @ips back to the live set (an
 * address net_allow does not allow stays refused; without a live set it changes nothing);
 * restrict_pid_network sets @pid's own set, kept while that process lives. @n 0 allows none. At
 * most 256 addresses a set and 64 live pids. Errors: -EINVAL (a bad address, NULL, @n too
 * large), -ENOSPC, -ESRCH (no process @pid). */
int sandlock_policy_ctx_restrict_network(sandlock_policy_ctx_t *ctx, const char *const *ips,
					 size_t n);
int sandlock_policy_ctx_grant_network(sandlock_policy_ctx_t *ctx, const char *const *ips, size_t n);
int sandlock_policy_ctx_restrict_pid_network(sandlock_policy_ctx_t *ctx, int32_t pid,
					     const char *const *ips, size_t n);
/* Lower the live limits (never raise: a value above the current one is -EPERM). A sandbox
 * without the static limit gets it set (max_memory / max_processes are then checked from the
 * next call on). Errors: -EINVAL (0), -EPERM. */
int sandlock_policy_ctx_restrict_max_memory(sandlock_policy_ctx_t *ctx, uint64_t bytes);
int sandlock_policy_ctx_restrict_max_processes(sandlock_policy_ctx_t *ctx, uint32_t n);
/* Deny the file or directory @path (absolute, copied) resolves to now, by identity (device and
 * inode: hard links and renames keep the deny): from then on the sandbox's opens and execs of
 * it, or of anything beneath the directory, fail with EACCES (a denial event). Descriptors
 * opened before stay usable. While any deny is in force the opens (and links, renames) are made
 * on the child's behalf, and an exec runs only when its absolute name goes through directories
 * the sandbox cannot change (else EACCES). While any deny is in force a landlock_restrict_self
 * of the sandbox's fails with EPERM. Errors: -EINVAL (NULL, not absolute), -ENOENT (no such
 * file), -EACCES (cannot be resolved), -ENOSPC (64 denies), -EOPNOTSUPP (a workdir, fs_deny
 * beneath a writable grant, or a process of the sandbox made a Landlock domain of its own),
 * -ENOMEM.
 * allow_path removes only what deny_path added: the entry of the file @path names now, else the
 * one deny_path was given the same text for. Errors: -EINVAL, -ENOENT (no such entry). */
int sandlock_policy_ctx_deny_path(sandlock_policy_ctx_t *ctx, const char *path);
int sandlock_policy_ctx_allow_path(sandlock_policy_ctx_t *ctx, const char *path);

typedef struct sandlock_spawn_opts {
	uint64_t size; /* sizeof(sandlock_spawn_opts_t) */
	uint32_t flags;
	uint32_t stdin_mode, stdout_mode, stderr_mode;
	int32_t stdin_fd, stdout_fd, stderr_fd;
	uint32_t reserved;
	/* 0 = none: kill the whole sandbox after this long, counted from the launch (a parked
	 * sandbox's from sandlock_sandbox_start()); a launch that takes longer ends as
	 * SANDLOCK_EXIT_TIMEOUT too. */
	uint64_t timeout_ms;
	/* Descriptors (each >= 3, distinct, at most SANDLOCK_PASS_FDS_MAX) the command inherits at
	 * the same numbers (at 3, 4, ... in order with SANDLOCK_SPAWN_FDS_FROM_3), close-on-exec
	 * cleared in the child only; every other descriptor above 2 is closed before exec.
	 * Borrowed: used by number, not duplicated and not closed, so they must stay open until
	 * sandlock_spawn() returns. They are the caller's grant: what they reach, the command
	 * reaches, whatever the policy says (a pipe between two sandboxes, say). */
	const int32_t *pass_fds;
	uint32_t n_pass_fds;
	uint32_t reserved2;
	/* What the supervisor decided, as events (below): SANDLOCK_EVENTS_* flags. 0: the denials
	 * the supervisor makes itself are still recorded (sandlock_sandbox_denial), nothing more.
	 */
	uint32_t events;
	uint32_t reserved3;
	/* Called with every event the flags ask for, on a thread of the library's (never the
	 * supervisor's loop), one at a time, in order; NULL: none. */
	sandlock_event_fn on_event;
	void *event_user_data; /* borrowed: passed to @on_event, must outlive the sandbox */
	/* Extension handlers (below) in the supervisor's chain; NULL / 0: none. The array and its
	 * names are read during sandlock_spawn() only; each handler is retained by the sandbox
	 * (the caller may free its own reference once sandlock_spawn() returns). */
	const struct sandlock_handler_reg *handlers;
	uint32_t n_handlers;
	uint32_t reserved4;
} sandlock_spawn_opts_t;

#define SANDLOCK_PASS_FDS_MAX 64u

/* Spawn @argv[0] (PATH search in the child's environment) confined by @policy. @policy is read,
 * not retained (it may be changed or freed once this returns); @argv, a NULL-terminated
 * vector, is copied; @opts may be NULL (everything inherited, no timeout). *@ret_sandbox is the
 * caller's, released with sandlock_sandbox_free(). Returns when the command is running (execve
 * succeeded), or when it is parked (confined, waiting for sandlock_sandbox_start()).
 * Errors:
 *  - a step of the child failed: the errno of that step (-ENOENT, -EACCES, -ENOEXEC, -ENOTDIR,
 *    -ELOOP, -E2BIG, -ETXTBSY, ... for execve), and sandlock_error_step() names the step;
 *    -EBUSY at step "seccomp": a supervised sandbox inside another supervised sandbox;
 *  - -EINVAL (a bad policy or option), -E2BIG (an option unknown to this library is set),
 *    -ENOENT/-EACCES/-ENOTDIR/-ELOOP (opening a grant path), -EOPNOTSUPP (a strict protection
 *    or Landlock missing), -EHOSTUNREACH (a net_allow hostname that does not resolve),
 *    -ENOTTY (SANDLOCK_SPAWN_INTERACTIVE without a terminal), -EBADF
 *    (a bad SANDLOCK_STDIO_FD or pass_fds descriptor), -ENOMEM, -EMFILE/-ENFILE, -EAGAIN. */
int sandlock_spawn(const sandlock_policy_t *policy, const char *const *argv,
		   const sandlock_spawn_opts_t *opts, sandlock_sandbox_t **ret_sandbox,
		   sandlock_error_t **reterr);

/* Let a parked sandbox exec. Errors: those of the child's steps as for sandlock_spawn;
 * -EALREADY (not parked), -ECANCELED (killed while parked). */
int sandlock_sandbox_start(sandlock_sandbox_t *sandbox, sandlock_error_t **reterr);

/* Wait for the sandbox to end: its command exited and the rest of it is gone, captured output
 * is complete. @timeout_ms < 0 waits forever. Errors: -ETIMEDOUT. */
int sandlock_sandbox_wait(sandlock_sandbox_t *sandbox, int64_t timeout_ms);

/* A descriptor that becomes readable when the sandbox has ended (for poll/epoll loops). Owned
 * by the sandbox. */
int sandlock_sandbox_done_fd(const sandlock_sandbox_t *sandbox);

/* Signal every process of the sandbox (every process group it created). kill is SIGKILL;
 * pause/resume are SIGSTOP/SIGCONT. Errors: -ESRCH (the sandbox has ended), -EINVAL. */
int sandlock_sandbox_signal(sandlock_sandbox_t *sandbox, int32_t signo);
int sandlock_sandbox_kill(sandlock_sandbox_t *sandbox);
int sandlock_sandbox_pause(sandlock_sandbox_t *sandbox);
int sandlock_sandbox_resume(sandlock_sandbox_t *sandbox);

/* The command's pid (in the caller's pid namespace). */
int32_t sandlock_sandbox_pid(const sandlock_sandbox_t *sandbox);
/* The sandbox's name (its virtual hostname). Owned by the sandbox. */
const char *sandlock_sandbox_name(const sandlock_sandbox_t *sandbox);
/* port_remap: the TCP ports the sandbox bound elsewhere than it asked, while it runs. The
 * first @n pairs, sorted by virtual port, go to @ret_virtual[i] (the port the sandbox sees)
 * and @ret_real[i] (the port on the host); returns the number of pairs. A port bound as asked
 * (it was free on the host) is no pair. 0 without port_remap and once the sandbox has ended.
 * -EINVAL, -ENOMEM. */
int sandlock_sandbox_ports(const sandlock_sandbox_t *sandbox, uint16_t *ret_virtual,
			   uint16_t *ret_real, size_t n);
/* The write end of the child's stdin with SANDLOCK_STDIO_PIPE, else -EBADF. Owned by the
 * sandbox until sandlock_sandbox_close_stdin(). */
int sandlock_sandbox_stdin_fd(const sandlock_sandbox_t *sandbox);
int sandlock_sandbox_close_stdin(sandlock_sandbox_t *sandbox);

/* ---- outcome (valid once sandlock_sandbox_wait() returned 0) ---------------------------- */

#define SANDLOCK_EXIT_RUNNING 0u /* not ended yet */
#define SANDLOCK_EXIT_CODE 1u	 /* exited with sandlock_sandbox_exit_code() */
#define SANDLOCK_EXIT_SIGNAL 2u	 /* killed by sandlock_sandbox_exit_signal() */
#define SANDLOCK_EXIT_TIMEOUT 3u /* killed because timeout_ms expired */

uint32_t sandlock_sandbox_exit_kind(const sandlock_sandbox_t *sandbox);
int32_t sandlock_sandbox_exit_code(const sandlock_sandbox_t *sandbox);
int32_t sandlock_sandbox_exit_signal(const sandlock_sandbox_t *sandbox);

/* Causes. NONE: the command ended by itself, or by the timeout (SANDLOCK_EXIT_TIMEOUT). */
#define SANDLOCK_CAUSE_NONE 0u
#define SANDLOCK_CAUSE_MEMORY 1u /* sandlock killed the command's process: max_memory reached */
#define SANDLOCK_CAUSE_KILL 2u	 /* sandlock_sandbox_kill() or `sandlock kill` ended it */
/* Why sandlock ended the command's process (valid once sandlock_sandbox_wait() returned 0):
 * MEMORY or KILL only when the command's own process died of that SIGKILL (exit kind
 * SANDLOCK_EXIT_SIGNAL, signal 9), the first of the two asked for; NONE otherwise (a
 * command that exited first, a process of the command's killed for memory while the command
 * itself lived on), and while the sandbox runs. */
uint32_t sandlock_sandbox_exit_cause(const sandlock_sandbox_t *sandbox);
/* What sandlock would tell a user about the run, one line each ending in '\n' (a process
 * killed for max_memory: "killed PID (NAME): memory limit 50M reached"; a fork refused by
 * max_processes, once per run: "fork refused: process limit 2 reached"), without the
 * "sandlock: " prefix; "" when none. At most 16 lines, then one saying how many were left
 * out. Owned by the sandbox; valid once sandlock_sandbox_wait() returned 0 ("" before). */
const char *sandlock_sandbox_notices(const sandlock_sandbox_t *sandbox);
/* The run's denials, one per object and reason, in the order first seen (those the supervisor
 * decides, and with SANDLOCK_EVENTS_DENIALS the kernel's it judged): their number, and the
 * @i-th into *@ret_event (its strings owned by the sandbox) with *@ret_count the times it was
 * seen. At most 256 kept; sandlock_sandbox_events_dropped() counts the rest. Valid once
 * sandlock_sandbox_wait() returned 0 (0 before). 0 / -ERANGE, -EINVAL. */
size_t sandlock_sandbox_denial_count(const sandlock_sandbox_t *sandbox);
int sandlock_sandbox_denial(const sandlock_sandbox_t *sandbox, size_t i,
			    sandlock_event_t *ret_event, uint64_t *ret_count);
/* Events not delivered: the callback's queue was full (it never makes the supervisor wait), or
 * more distinct denials than the table keeps. */
uint64_t sandlock_sandbox_events_dropped(const sandlock_sandbox_t *sandbox);
/* Captured bytes (SANDLOCK_STDIO_PIPE), owned by the sandbox; *ret_len gets the length. NULL
 * with length 0 when nothing was captured. */
const uint8_t *sandlock_sandbox_stdout(const sandlock_sandbox_t *sandbox, size_t *ret_len);
const uint8_t *sandlock_sandbox_stderr(const sandlock_sandbox_t *sandbox, size_t *ret_len);

/* ---- the workdir's copy-on-write branch (valid once the sandbox has ended) ------------- */

/* Branch actions (on_exit, on_error). */
#define SANDLOCK_BRANCH_COMMIT 0u /* merge the branch into the workdir */
#define SANDLOCK_BRANCH_ABORT 1u  /* discard it */
#define SANDLOCK_BRANCH_KEEP 2u	  /* leave it on disk for recovery tooling */
#define SANDLOCK_BRANCH_DEFER 3u  /* hold it for sandlock_sandbox_commit() / _abort() */

/* What a change set entry was or is. */
#define SANDLOCK_ENTRY_ABSENT 0u
#define SANDLOCK_ENTRY_FILE 1u
#define SANDLOCK_ENTRY_DIR 2u
#define SANDLOCK_ENTRY_SYMLINK 3u
#define SANDLOCK_ENTRY_OTHER 4u /* FIFO, socket, device node */

typedef struct sandlock_entry {
	uint32_t kind;	     /* SANDLOCK_ENTRY_* */
	uint32_t mode;	     /* permission bits */
	uint64_t size;	     /* bytes of a file; 0 otherwise */
	uint32_t has_digest; /* files: @digest is the SHA-256 of the bytes */
	uint8_t digest[32];
	const char *target; /* symlinks: the link's target (owned by the sandbox); else NULL */
} sandlock_entry_t;

/* The action applied to the branch when the sandbox ended (SANDLOCK_BRANCH_*; KEEP also when a
 * commit failed: see sandlock_sandbox_branch_error), or -ENOENT without a workdir, -EBUSY
 * while it runs. A deferred branch later committed or aborted reports that action. */
int sandlock_sandbox_branch_action(const sandlock_sandbox_t *sandbox);
/* Why the branch could not be settled as asked (a commit that failed leaves the branch on disk
 * and says where), or NULL. Owned by the sandbox. */
const sandlock_error_t *sandlock_sandbox_branch_error(const sandlock_sandbox_t *sandbox);
/* The changes the run made in the workdir, read from its branch before the action was applied:
 * their number, and the @i-th (sorted by path): its path relative to the workdir and its entry
 * before (when the run first touched it) and after (kind SANDLOCK_ENTRY_ABSENT: none). Strings
 * are owned by the sandbox. 0 / -ERANGE. */
size_t sandlock_sandbox_change_count(const sandlock_sandbox_t *sandbox);
int sandlock_sandbox_change(const sandlock_sandbox_t *sandbox, size_t i, const char **ret_path,
			    sandlock_entry_t *ret_before, sandlock_entry_t *ret_after);
/* 1 while a deferred branch waits for sandlock_sandbox_commit() or _abort(), else 0. */
int sandlock_sandbox_pending(const sandlock_sandbox_t *sandbox);
/* The branch's upper directory (the new bytes of every added or modified file, laid out like
 * the workdir) while it is on disk (deferred, kept, or a failed commit), else NULL. */
const char *sandlock_sandbox_upper_dir(const sandlock_sandbox_t *sandbox);
/* A pending branch: merge it into the workdir (waiting up to 5 s for another sandbox merging
 * the same workdir; on failure it stays pending, on disk), or discard it. The merge lands the
 * change set and nothing else: -EPERM, the workdir untouched, where the branch holds an entry
 * the run did not make or one changed since the run ended (the message names them). */
int sandlock_sandbox_commit(sandlock_sandbox_t *sandbox, sandlock_error_t **reterr);
int sandlock_sandbox_abort(sandlock_sandbox_t *sandbox, sandlock_error_t **reterr);

/* Kill the sandbox if it still runs, wait for it, release everything. A pending branch stays
 * on disk, as SANDLOCK_BRANCH_KEEP leaves it. */
void sandlock_sandbox_free(sandlock_sandbox_t *sandbox);

/* ---- extension handlers: user code in the supervisor's chain ----------------------------- */

/* A handler is called for a trapped syscall after the built-in chain: only when the built-in
 * verdict lets the call go on (or the syscall has no built-in route), so a handler may deny,
 * fabricate an answer or hand the child a descriptor, but never undo a built-in decision.
 * Several handlers on one syscall run in registration order; the first that answers anything
 * but continue decides. A handler's reads of the child's memory are an observation, not a
 * security boundary: another thread of the child may change the memory after the read, so a
 * handler that answers continue must not rely on what it read (answer with errno, a value or
 * an injected descriptor instead). A call the built-in chain answers itself (uname's virtual
 * hostname, a refused connect) never reaches a handler, nor does one it makes itself on the
 * child's behalf (the IP connects it checks against the network rules, which the supervisor
 * makes on the child's socket, and the IP binds of a sandbox with a policy_fn or port_remap):
 * those are answered by the built-in chain alone. Handlers see
 * the calls of the launch sequence made after the seccomp filter (closing inherited
 * descriptors, the execve) too. */

/* The notification, as the kernel gave it. @pid is the calling thread (the caller's pid
 * namespace); @args are the raw syscall arguments. */
typedef struct sandlock_notif {
	uint64_t id;
	int32_t pid;
	uint32_t flags;
	int32_t syscall_nr;
	uint32_t arch; /* AUDIT_ARCH_* */
	uint64_t instruction_pointer;
	uint64_t args[6];
} sandlock_notif_t;

/* @flags: the call was held (sandlock_action_hold) and this is its call on a worker. */
#define SANDLOCK_NOTIF_HELD (1u << 0)

/* The calling process's memory. Valid only during the handler's call, and never to be kept:
 * its storage is the call's own (the functions refuse a handle whose call is over with -EBADF
 * while that storage lasts, a guard and not a promise). */
typedef struct sandlock_mem sandlock_mem_t;
/* The answer of one call: exactly one action is set per call. */
typedef struct sandlock_action sandlock_action_t;

/* Read a NUL-terminated string at @addr into @buf (@size bytes, NUL-terminated on success):
 * its length, or -EFAULT (unreadable), -ENAMETOOLONG (no NUL in @size - 1 bytes), -ESRCH (the
 * call is gone: the thread died or the notification was answered), -EPERM/-EACCES (the memory
 * cannot be reached: a non-dumpable process, a sandlock confined itself), -EBADF (the handle
 * is no longer valid), -EINVAL. */
int64_t sandlock_mem_read_cstr(sandlock_mem_t *mem, uint64_t addr, char *buf, size_t size);
/* Read / write @len bytes at @addr: @len, or -EFAULT (a part is unmapped or not writable),
 * -ESRCH, -EPERM/-EACCES, -EBADF, -EINVAL. Each read is checked against the notification after it
 * is made (SECCOMP_IOCTL_NOTIF_ID_VALID), so what it returns belongs to this call's process. */
int64_t sandlock_mem_read(sandlock_mem_t *mem, uint64_t addr, void *buf, size_t len);
int64_t sandlock_mem_write(sandlock_mem_t *mem, uint64_t addr, const void *buf, size_t len);

/* The actions. Each returns 0, or -EALREADY when an action is already set (the call then
 * counts as an exception, as does a handler that sets none), -EINVAL (a bad argument; the
 * action stays unset), -EBADF (the handle is no longer valid).
 *  - continue: the call runs in the kernel as the built-in chain let it (the kernel's own
 *    checks and Landlock apply);
 *  - errno: the call fails with @err (1..4095);
 *  - return: the call returns @value without running;
 *  - inject_fd: a copy of @srcfd (borrowed: it is dup'ed now, the caller keeps and closes its
 *    own) is installed in the child and its number is the call's result; @newfd_flags: 0 or
 *    O_CLOEXEC;
 *  - inject_bytes: @data (copied) in a new memfd is installed in the child and its number is
 *    the call's result; sealed (F_SEAL_WRITE, SHRINK, GROW, SEAL) unless
 *    SANDLOCK_INJECT_WRITABLE, close-on-exec unless SANDLOCK_INJECT_NO_CLOEXEC; -ENOMEM,
 *    -EMFILE;
 *  - hold: the call waits and is answered later from the deferred path: the handler is called
 *    again for it on a worker thread, off the supervisor's loop, with SANDLOCK_NOTIF_HELD in
 *    @notif->flags, and sets the answer there (a handler decides the quick cases on the loop
 *    and holds only the slow ones). In a deferred call (a deferred handler, or the held call
 *    itself) hold is an exception. Held calls count against the 64 deferred ones in flight;
 *  - kill: @sig (1..64) to the calling process, or to process group @pgid when it is not 0
 *    and is one of the sandbox's groups (-EPERM otherwise); the call fails with EINTR should
 *    the process survive. */
int sandlock_action_continue(sandlock_action_t *a);
int sandlock_action_errno(sandlock_action_t *a, int32_t err);
int sandlock_action_return(sandlock_action_t *a, int64_t value);
int sandlock_action_inject_fd(sandlock_action_t *a, int32_t srcfd, uint32_t newfd_flags);
#define SANDLOCK_INJECT_WRITABLE (1u << 0)
#define SANDLOCK_INJECT_NO_CLOEXEC (1u << 1)
int sandlock_action_inject_bytes(sandlock_action_t *a, const void *data, size_t len,
				 uint32_t flags);
int sandlock_action_hold(sandlock_action_t *a);
int sandlock_action_kill(sandlock_action_t *a, int32_t sig, int32_t pgid);

/* Return 0: the action set is the answer. Anything else is an exception, handled as the
 * handler's on_exception says. Called on the supervisor's loop (keep it short: every call of
 * the sandbox waits) unless the handler is deferred. */
typedef int (*sandlock_handler_fn)(const sandlock_notif_t *notif, sandlock_mem_t *mem,
				   sandlock_action_t *action, void *user_data);

/* What an exception (a nonzero return, no action, two actions, a failed action) answers. */
#define SANDLOCK_EXCEPTION_KILL 0u	 /* SIGKILL the calling process */
#define SANDLOCK_EXCEPTION_DENY_EPERM 1u /* the call fails with EPERM */
#define SANDLOCK_EXCEPTION_CONTINUE 2u	 /* the call goes on, as the built-in chain let it */
#define SANDLOCK_EXCEPTION_DENY_EIO 3u	 /* the call fails with EIO */

typedef struct sandlock_handler sandlock_handler_t;

/* A new handler calling @fn with @user_data (borrowed until @user_data_drop, if not NULL, is
 * called with it when the last reference goes: sandlock_handler_free() and the end of every
 * sandbox that uses it). NULL on a bad argument (NULL @fn, unknown @on_exception: errno
 * EINVAL) or out of memory (ENOMEM). */
sandlock_handler_t *sandlock_handler_new(sandlock_handler_fn fn, void *user_data,
					 void (*user_data_drop)(void *), uint32_t on_exception);
/* 1: @fn is called on a worker thread, off the supervisor's loop (a slow handler delays only
 * its own call), and may be called on several workers at once; at most 64 such calls are in
 * flight per sandbox, a call beyond fails with EAGAIN. 0: on the loop (the default), one call
 * at a time per sandbox. The sandbox's end waits for the deferred calls running (a handler
 * must return; the call it answers may be gone by then). Set before spawning. Errors: -EINVAL. */
int sandlock_handler_set_deferred(sandlock_handler_t *h, int deferred);
/* Drop the caller's reference (NULL accepted). */
void sandlock_handler_free(sandlock_handler_t *h);

/* One registration: a syscall by @syscall (a name of this architecture, "openat") or, with
 * @syscall NULL, by number @nr; @reserved is 0; @handler is borrowed (retained by the sandbox
 * that uses it). */
typedef struct sandlock_handler_reg {
	const char *syscall;
	int32_t nr;
	uint32_t reserved;
	sandlock_handler_t *handler;
} sandlock_handler_reg_t;

/* Run @argv (@argc entries, PATH search) under @policy with the @n handlers of @regs, stdio
 * inherited; wait for the end. *@ret_sandbox holds the outcome (exit kind, code, signal; the
 * caller frees it with sandlock_sandbox_free()). @name: the sandbox's name, NULL for the
 * policy's. The interactive variant makes the sandbox the terminal's foreground process group
 * (SANDLOCK_SPAWN_INTERACTIVE). Registrations are checked before anything runs: -EINVAL for an
 * unknown syscall name or number, a handler on a syscall the policy blocks (the default
 * blocklist, extra_deny_syscalls), on one the seccomp filter decides by its arguments (clone,
 * ioctl, ...), on fork or vfork (the process limit counts them before a handler could refuse
 * one), a policy without the supervisor (no_supervisor); the message names what was given.
 * Other errors: those of sandlock_spawn(). */
int sandlock_run_with_handlers(const sandlock_policy_t *policy, const char *name,
			       const char *const *argv, size_t argc,
			       const sandlock_handler_reg_t *regs, size_t n,
			       sandlock_sandbox_t **ret_sandbox, sandlock_error_t **reterr);
int sandlock_run_interactive_with_handlers(const sandlock_policy_t *policy, const char *name,
					   const char *const *argv, size_t argc,
					   const sandlock_handler_reg_t *regs, size_t n,
					   sandlock_sandbox_t **ret_sandbox,
					   sandlock_error_t **reterr);

/* ---- running sandboxes (the control socket) --------------------------------------------- */

/* Every sandbox with a control socket (control_socket, the default) has a runtime directory
 * /dev/shm/sandlock-<euid>/<name>/ while it runs, and answers only its own user. */

/* The names of this user's running sandboxes, sorted, as a NULL-terminated vector the caller
 * frees with sandlock_strv_free(). Directories left by hosts that died are removed on the way.
 * Errors: -EPERM (the runtime directory is not a private one of this user), -EACCES, -ENOMEM. */
int sandlock_running(char ***ret_names, sandlock_error_t **reterr);

/* Send one request to the running sandbox @name and return its answer; both are JSON objects
 * on one line (*@ret_answer, without the newline, is freed with sandlock_free()). Requests:
 *   {"cmd":"info"}   -> {"name", "pid", "sandlock_pid", "started" (Unix seconds),
 *                        "status" ("running" | "paused"), "cmd" [argv], "ports" [bind rules],
 *                        "port_map" {"virtual port": real port} (port_remap: every port the
 *                        sandbox bound, remapped or not; {} without port_remap)}
 *   {"cmd":"policy"} -> {"policy": the effective policy in the JSON schema}
 *   {"cmd":"kill"}   -> {"pid", "groups" [process group ids], "reached"}: SIGKILL sent to the
 *                        whole sandbox; it ends, and its directory goes, right after.
 * An unknown request answers {"error": "..."}. Only processes of the sandbox's uid that are not
 * confined more than its host (no more seccomp filters; no no_new_privs the host lacks) are
 * answered: a sandbox cannot reach another through its socket. @timeout_ms: how long to wait
 * for the answer, 0 for 5 seconds.
 * Errors: -ENOENT (no running sandbox of that name), -EINVAL (a bad name or request), -EPERM
 * (the runtime directory is not ours alone, or the socket is served by a process that is not an
 * unconfined one of ours), -ETIMEDOUT (no answer in time), -EPROTO (no answer, or a malformed
 * one), -ENOMEM. */
int sandlock_control(const char *name, const char *request, int32_t timeout_ms, char **ret_answer,
		     sandlock_error_t **reterr);

#ifdef __cplusplus
}
#endif
#endif
