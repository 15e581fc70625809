/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * options: the flags of `sandlock run` as one table. A flag either names a policy field, set
 * through sandlock_policy_set() (so every flag parses into the policy, and the library refuses
 * at spawn what is not built yet), or has a handler of its own (the run's own settings).
 * Parsing happens in two steps: collect (getopt), then apply, so that a profile named anywhere
 * on the command line is loaded first and the other flags append to its lists and override its
 * scalars, in command-line order.
 */
#include <errno.h>
#include <stdint.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

static int set_field(struct run_ctx *c, const char *field, const char *flag, const char *arg)
{
	sandlock_error_t *err = NULL;
	int r = sandlock_policy_set(c->policy, field, arg, &err);

	if (r < 0) {
		/* The library says "field: why"; the user typed a flag. */
		const char *msg = err ? sandlock_error_message(err) : strerror(-r);
		const char *colon = strstr(msg, ": ");
		cli_error(EXIT_USAGE, "--%s: invalid value '%s': %s", flag, arg,
			  colon ? colon + 2 : msg);
		sandlock_error_free(err);
		return EXIT_USAGE;
	}
	return 0;
}

static int opt_user(struct run_ctx *c, const char *arg, const char *flag)
{
	const char *colon = strchr(arg, ':');
	char uid[32];

	if (!colon || colon == arg || (size_t)(colon - arg) >= sizeof(uid) || !colon[1])
		return cli_error(EXIT_USAGE, "--%s: invalid value '%s': expected UID:GID", flag,
				 arg);
	memcpy(uid, arg, (size_t)(colon - arg));
	uid[colon - arg] = '\0';
	int r = set_field(c, "uid", flag, uid);
	return r ? r : set_field(c, "gid", flag, colon + 1);
}

/* The longest --timeout (about 31 years): far above any run, and its milliseconds fit. */
#define TIMEOUT_MAX_S 1000000000

static int opt_timeout(struct run_ctx *c, const char *arg, const char *flag)
{
	char *end;
	errno = 0;
	double s = strtod(arg, &end);
	/* A number that does not fit is told apart from one that is not a number. */
	if (!*end && end != arg && (s > TIMEOUT_MAX_S || (errno == ERANGE && s > 1)))
		return cli_error(EXIT_USAGE, "--%s: invalid value '%s': too large (max %d seconds)",
				 flag, arg, TIMEOUT_MAX_S);
	if (errno || *end || !(s > 0) || s != s)
		return cli_error(EXIT_USAGE,
				 "--%s: invalid value '%s': expected a positive number of seconds",
				 flag, arg);
	c->timeout_arg = arg;
	c->timeout_ms = (uint64_t)(s * 1000.0);
	if ((double)c->timeout_ms < s * 1000.0)
		c->timeout_ms++;
	return 0;
}

static int opt_exec_shell(struct run_ctx *c, const char *arg, const char *flag)
{
	c->shell_cmd = arg;
	return 0;
}

static int opt_interactive(struct run_ctx *c, const char *arg, const char *flag)
{
	c->interactive = 1;
	return 0;
}

static int opt_status_fd(struct run_ctx *c, const char *arg, const char *flag)
{
	char *end;
	errno = 0;
	long v = strtol(arg, &end, 10);
	if (!*end && arg[0] >= '0' && arg[0] <= '9' && (errno == ERANGE || v > INT32_MAX))
		return cli_error(EXIT_USAGE, "--%s: invalid value '%s': too large (max %d)", flag,
				 arg, INT32_MAX);
	if (errno || *end || arg[0] < '0' || arg[0] > '9')
		return cli_error(EXIT_USAGE,
				 "--%s: invalid value '%s': expected a file descriptor number",
				 flag, arg);
	c->status_fd = (int)v;
	return 0;
}

/* control_socket = false: a flag has no value to negate, so this one says it outright. */
static int opt_no_control_socket(struct run_ctx *c, const char *arg, const char *flag)
{
	return set_field(c, "control_socket", flag, "false");
}

/* --dry-run: the branch is aborted whatever the outcome; its change list is printed (on stderr,
 * apart from the command's output, or into FILE). */
static int opt_dry_run(struct run_ctx *c, const char *arg, const char *flag)
{
	if (arg && !arg[0])
		return cli_error(EXIT_USAGE, "--%s=: expected a file name after '='", flag);
	int r = set_field(c, "on_exit", flag, "abort");
	if (r == 0)
		r = set_field(c, "on_error", flag, "abort");
	c->dry_run = 1;
	c->dry_run_file = arg;
	return r;
}

/* --log-denials: a line per denial on stderr, or into FILE (run-log.c). */
static int opt_log_denials(struct run_ctx *c, const char *arg, const char *flag)
{
	if (arg && !arg[0])
		return cli_error(EXIT_USAGE, "--%s=: expected a file name after '='", flag);
	c->log_denials = 1;
	c->log_denials_file = arg;
	return 0;
}

static int opt_log_events(struct run_ctx *c, const char *arg, const char *flag)
{
	if (!arg[0])
		return cli_error(EXIT_USAGE, "--%s: expected a file name", flag);
	c->log_events_file = arg;
	return 0;
}

/* Flags that name a field take their value (or, without one, "true"). */
const struct run_option run_options[] = {
	{ "fs-read", 'r', "PATH", "grant read + execute (recursive for directories)",
	  "fs_readable" },
	{ "fs-write", 'w', "PATH", "grant read + write", "fs_writable" },
	{ "fs-deny", 0, "PATH", "deny even inside a broader grant", "fs_denied" },
	{ "net-allow", 0, "SPEC", "allow outbound to [scheme://]target[:ports]", "net_allow" },
	{ "net-deny", 0, "SPEC", "deny outbound to an IP or CIDR", "net_deny" },
	{ "net-allow-bind", 0, "PORTS", "TCP ports the sandbox may bind", "net_allow_bind" },
	{ "net-deny-bind", 0, "PORTS", "TCP ports the sandbox may not bind", "net_deny_bind" },
	{ "port-remap", 0, NULL, "per-sandbox virtual TCP port space", "port_remap" },
	{ "http-allow", 0, "RULE", "allow \"METHOD host/path\" through the HTTP proxy",
	  "http_allow" },
	{ "http-deny", 0, "RULE", "deny \"METHOD host/path\" through the HTTP proxy", "http_deny" },
	{ "http-port", 0, "PORT", "TCP port to intercept for HTTP rules", "http_ports" },
	{ "http-ca", 0, "PATH", "MITM CA certificate", "http_ca" },
	{ "http-key", 0, "PATH", "MITM CA private key", "http_key" },
	{ "http-inject-ca", 0, "PATH", "splice an ephemeral CA into this trust bundle",
	  "http_inject_ca" },
	{ "http-ca-out", 0, "PATH", "write the active CA certificate here", "http_ca_out" },
	{ "credential", 0, "NAME=SRC", "a secret held by the supervisor", "credentials" },
	{ "http-auth", 0, "RULE", "attach a credential to matching requests", "http_auth" },
	{ "max-memory", 'm', "SIZE", "memory limit (512M, 1G, bytes)", "max_memory" },
	{ "max-processes", 'P', "N", "concurrent process limit", "max_processes" },
	{ "max-open-files", 0, "N", "RLIMIT_NOFILE, clamped to sandlock's own", "max_open_files" },
	{ "cpu", 'c', "PERCENT", "CPU throttle, percent of one core", "max_cpu" },
	{ "cpu-cores", 0, "LIST", "pin to these cores (0,1 or 0-3)", "cpu_cores" },
	{ "num-cpus", 0, "N", "visible CPU count", "num_cpus" },
	{ "gpu", 0, "LIST", "expose these GPUs (all, 0,2)", "gpu_devices" },
	{ "max-disk", 0, "SIZE", "copy-on-write quota", "max_disk" },
	{ "workdir", 0, "PATH", "copy-on-write over this directory", "workdir" },
	{ "fs-storage", 0, "PATH", "where copy-on-write branches live", "fs_storage" },
	{ "on-exit", 0, "ACTION", "branch action after success", "on_exit" },
	{ "on-error", 0, "ACTION", "branch action after failure", "on_error" },
	{ "dry-run", 0, "FILE", "print the change list (stderr, or FILE), then abort", NULL,
	  opt_dry_run, 1 },
	{ "chroot", 0, "PATH", "emulated chroot", "chroot" },
	{ "fs-mount", 0, "MAP", "map a host directory into the chroot (VIRTUAL:HOST[:ro])",
	  "fs_mount" },
	{ "image", 0, "REF", "run inside a container image's rootfs", "image" },
	{ "cwd", 0, "PATH", "the command's working directory", "cwd" },
	{ "env", 0, "KEY=VALUE", "set an environment variable", "env" },
	{ "clean-env", 0, NULL, "start from PATH, HOME, USER, TERM, LANG only", "clean_env" },
	{ "user", 0, "UID:GID", "map to this uid/gid in a user namespace", "uid", opt_user },
	{ "random-seed", 0, "N", "deterministic getrandom and /dev/urandom", "random_seed" },
	{ "time-start", 0, "TIME", "virtual wall clock starting at this instant", "time_start" },
	{ "deterministic-dirs", 0, NULL, "sorted directory listings", "deterministic_dirs" },
	{ "no-randomize-memory", 0, NULL, "disable ASLR", "no_randomize_memory" },
	{ "no-huge-pages", 0, NULL, "disable transparent huge pages", "no_huge_pages" },
	{ "no-coredump", 0, NULL, "no core dumps (RLIMIT_CORE 0)", "no_coredump" },
	{ "extra-deny-syscall", 0, "NAME", "block a syscall or group", "extra_deny_syscalls" },
	{ "extra-allow-syscall", 0, "GROUP", "re-allow a blocked group (sysv_ipc)",
	  "extra_allow_syscalls" },
	{ "allow-degraded", 0, "PROT",
	  "enforce protections (a comma list, or all) only where the kernel has them",
	  "allow_degraded" },
	{ "disable", 0, "PROT", "never enforce these protections (a comma list)", "disable" },
	{ "no-supervisor", 0, NULL, "Landlock + kernel-only filter, no supervisor (nesting)",
	  "no_supervisor" },
	{ "profile", 'p', "NAME", "load a profile ($XDG_CONFIG_HOME/sandlock/profiles/NAME.toml)",
	  NULL },
	{ "profile-file", 0, "PATH", "load a profile file", NULL },
	{ "name", 0, "NAME", "sandbox name and virtual hostname", "name" },
	{ "no-control-socket", 0, NULL, "no runtime directory: invisible to ps/inspect/kill",
	  "control_socket", opt_no_control_socket },
	{ "timeout", 't', "SECONDS", "kill the whole sandbox after this long", NULL, opt_timeout },
	{ "exec-shell", 'e', "CMD", "run /bin/sh -c CMD", NULL, opt_exec_shell },
	{ "interactive", 'i', NULL, "give the sandbox the terminal", NULL, opt_interactive },
	{ "status-fd", 0, "FD", "write {\"exit_code\":N} to FD after exit", NULL, opt_status_fd },
	{ "tmp", 0, NULL, "a private TMPDIR, removed when the sandbox ends", "private_tmp" },
	{ "log-denials", 0, "FILE", "print each denial, the rule and a hint (stderr, or FILE)",
	  NULL, opt_log_denials, 1 },
	{ "log-events", 0, "FILE", "write every decision into FILE as JSON lines", NULL,
	  opt_log_events },
};

const size_t run_n_options = sizeof(run_options) / sizeof(run_options[0]);
_Static_assert(sizeof(run_options) / sizeof(run_options[0]) <= RUN_OPTIONS_MAX, "RUN_OPTIONS_MAX");

void run_help(void)
{
	printf("Usage: sandlock run [FLAGS] [--] [CMD [ARGS...]]\n\nFlags:\n");
	for (size_t i = 0; i < run_n_options; i++) {
		char left[64];
		const struct run_option *o = &run_options[i];
		snprintf(left, sizeof(left), "%s%c%s--%s%s%s%s", o->short_name ? "-" : "",
			 o->short_name ? o->short_name : ' ', o->short_name ? "," : " ", o->name,
			 !o->meta	    ? ""
			 : o->meta_optional ? "[="
					    : " ",
			 o->meta ? o->meta : "", o->meta_optional ? "]" : "");
		int later = o->field && sandlock_field_supported(o->field) == 0;
		printf("  %-34s %s%s\n", left, o->help, later ? " (not supported yet)" : "");
	}
	printf("  %-34s %s\n", "-h, --help", "show this help");
	printf("\nWithout CMD, the profile's [program] exec and args run. Fields whose enforcement "
	       "is not built yet are refused with \"not supported yet\".\n");
}

/* The edit distance of @a and @b (insertions, deletions, substitutions and swaps of two
 * neighbours each count 1), or a large number for names longer than any flag. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), d[40][40];

	if (la >= 40 || lb >= 40)
		return SIZE_MAX / 2;
	for (size_t i = 0; i <= la; i++)
		for (size_t j = 0; j <= lb; j++) {
			if (i == 0 || j == 0) {
				d[i][j] = i + j;
				continue;
			}
			size_t sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
			size_t best = sub < del ? sub : del;
			best = best < ins ? best : ins;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

const char *run_suggest(const char *typed)
{
	const char *best = NULL;
	size_t best_d = SIZE_MAX, n = strcspn(typed, "=");
	char name[40];

	if (strncmp(typed, "--", 2) != 0 || n - 2 >= sizeof(name) || n <= 2)
		return NULL;
	memcpy(name, typed + 2, n - 2);
	name[n - 2] = '\0';
	for (size_t i = 0; i <= run_n_options; i++) {
		const char *o = i < run_n_options ? run_options[i].name : "help";
		size_t d = distance(name, o);
		/* A name the user typed the start of (getopt takes a unique start, so this one
		 * is shared), else the one within a typo or two; a tie is no suggestion. */
		if (strncmp(o, name, strlen(name)) == 0)
			d = 0;
		if (d < best_d) {
			best_d = d;
			best = o;
		} else if (d == best_d) {
			best = NULL;
		}
	}
	return best && best_d <= (strlen(name) < 6 ? 1 : 2) ? best : NULL;
}

int run_label_fields(sandlock_policy_t *p)
{
	for (size_t i = 0; i < run_n_options; i++) {
		const struct run_option *o = &run_options[i];
		char label[64];
		if (!o->field)
			continue;
		snprintf(label, sizeof(label), "--%s", o->name);
		int r = sandlock_policy_set_label(p, o->field, label);
		/* --user sets gid with uid. */
		if (r == 0 && strcmp(o->field, "uid") == 0)
			r = sandlock_policy_set_label(p, "gid", label);
		if (r < 0)
			return r;
	}
	return 0;
}

int run_apply(struct run_ctx *c, const struct run_option *o, const char *arg)
{
	if (o->apply)
		return o->apply(c, arg, o->name);
	return set_field(c, o->field, o->name, o->meta ? arg : "true");
}
