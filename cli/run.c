/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * run: `sandlock run [FLAGS] [--] CMD ARGS...`. Options are one table (name, value, meaning,
 * handler); a flag whose feature has not landed yet has no handler and is refused with
 * "not supported yet: <flag>". Parsed options fill a policy; the library does the rest.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cli.h"
#include "sandlock.h"

/* sandlock_policy_add_cpu_core() refuses CPUs at or above this (glibc's CPU_SETSIZE). */
#define CPU_SETSIZE_LIMIT 1024UL

struct run_ctx {
	sandlock_policy_t *policy;
	uint64_t timeout_ms;
	const char *timeout_arg; /* as given, for the message */
	int interactive;
	int status_fd;
	const char *shell_cmd;
};

typedef int (*apply_fn)(struct run_ctx *c, const char *arg, const char *flag);

struct run_option {
	const char *name;
	int short_name;
	const char *meta; /* NULL: takes no value */
	const char *help;
	apply_fn apply; /* NULL: not supported yet */
};

/* Value errors are usage errors (exit 2); the hint names the flag. */
static int bad_value(const char *flag, const char *arg, const char *why)
{
	return cli_error(EXIT_USAGE, "--%s: invalid value '%s': %s", flag, arg, why);
}

static int lib_error(int r, const char *flag, const char *arg)
{
	return cli_error(EXIT_POLICY, "--%s %s: %s", flag, arg, strerror(-r));
}

static int parse_u64(const char *s, uint64_t *ret)
{
	char *end;

	if (!*s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*ret = v;
	return 0;
}

static int opt_fs_read(struct run_ctx *c, const char *arg, const char *flag)
{
	int r = sandlock_policy_add_fs_read(c->policy, arg);
	return r < 0 ? lib_error(r, flag, arg) : 0;
}

static int opt_fs_write(struct run_ctx *c, const char *arg, const char *flag)
{
	int r = sandlock_policy_add_fs_write(c->policy, arg);
	return r < 0 ? lib_error(r, flag, arg) : 0;
}

static int opt_env(struct run_ctx *c, const char *arg, const char *flag)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg)
		return bad_value(flag, arg, "expected KEY=VALUE");
	char name[256];
	if ((size_t)(eq - arg) >= sizeof(name))
		return bad_value(flag, arg, "variable name too long");
	memcpy(name, arg, (size_t)(eq - arg));
	name[eq - arg] = '\0';
	int r = sandlock_policy_set_env(c->policy, name, eq + 1);
	return r < 0 ? lib_error(r, flag, arg) : 0;
}

static int opt_clean_env(struct run_ctx *c, const char *arg, const char *flag)
{
	return sandlock_policy_set_clean_env(c->policy, 1);
}

static int opt_cwd(struct run_ctx *c, const char *arg, const char *flag)
{
	int r = sandlock_policy_set_cwd(c->policy, arg);
	return r < 0 ? lib_error(r, flag, arg) : 0;
}

static int opt_max_open_files(struct run_ctx *c, const char *arg, const char *flag)
{
	uint64_t v;
	if (parse_u64(arg, &v) < 0 || v == 0)
		return bad_value(flag, arg, "expected a positive integer");
	return sandlock_policy_set_max_open_files(c->policy, v);
}

/* "0,1", "0-3,8": every entry a number or a range; an empty entry is an error. */
static int opt_cpu_cores(struct run_ctx *c, const char *arg, const char *flag)
{
	const char *p = arg;

	for (;;) {
		char *end;
		if (*p < '0' || *p > '9')
			return bad_value(flag, arg, "expected CPU numbers such as 0,1 or 0-3");
		unsigned long lo = strtoul(p, &end, 10), hi = lo;
		if (*end == '-') {
			if (end[1] < '0' || end[1] > '9')
				return bad_value(flag, arg, "expected a range such as 0-3");
			hi = strtoul(end + 1, &end, 10);
		}
		if (hi < lo || hi >= CPU_SETSIZE_LIMIT)
			return bad_value(flag, arg, "CPU number out of range");
		for (unsigned long core = lo; core <= hi; core++)
			if (sandlock_policy_add_cpu_core(c->policy, (uint32_t)core) < 0)
				return bad_value(flag, arg, "CPU number out of range");
		if (!*end)
			return 0;
		if (*end != ',')
			return bad_value(flag, arg, "expected CPU numbers such as 0,1 or 0-3");
		p = end + 1;
	}
}

static int opt_no_coredump(struct run_ctx *c, const char *arg, const char *flag)
{
	return sandlock_policy_set_no_coredump(c->policy, 1);
}

static int opt_no_huge_pages(struct run_ctx *c, const char *arg, const char *flag)
{
	return sandlock_policy_set_no_huge_pages(c->policy, 1);
}

static int opt_no_randomize_memory(struct run_ctx *c, const char *arg, const char *flag)
{
	return sandlock_policy_set_no_randomize_memory(c->policy, 1);
}

static int opt_extra_deny(struct run_ctx *c, const char *arg, const char *flag)
{
	int r = sandlock_policy_add_extra_deny_syscall(c->policy, arg);
	return r < 0 ? bad_value(flag, arg, "expected a syscall or group name") : 0;
}

static int opt_extra_allow(struct run_ctx *c, const char *arg, const char *flag)
{
	int r = sandlock_policy_add_extra_allow_syscall(c->policy, arg);
	return r < 0 ? bad_value(flag, arg, "expected a group name") : 0;
}

static int set_protection(struct run_ctx *c, const char *arg, const char *flag, uint32_t mode)
{
	int p = sandlock_protection_from_name(arg);
	if (p < 0)
		return bad_value(flag, arg,
				 "expected fs-refer, fs-truncate, net-tcp, fs-ioctl-dev, "
				 "signal-scope or abstract-unix-socket-scope");
	return sandlock_policy_set_protection(c->policy, (uint32_t)p, mode);
}

static int opt_allow_degraded(struct run_ctx *c, const char *arg, const char *flag)
{
	return set_protection(c, arg, flag, SANDLOCK_PROTECTION_DEGRADED);
}

static int opt_disable(struct run_ctx *c, const char *arg, const char *flag)
{
	return set_protection(c, arg, flag, SANDLOCK_PROTECTION_DISABLED);
}

static int opt_no_supervisor(struct run_ctx *c, const char *arg, const char *flag)
{
	return sandlock_policy_set_no_supervisor(c->policy, 1);
}

static int opt_name(struct run_ctx *c, const char *arg, const char *flag)
{
	sandlock_error_t *err = NULL;
	int r = sandlock_policy_set_name(c->policy, arg, &err);
	if (r < 0) {
		r = cli_error(EXIT_POLICY, "%s", err ? sandlock_error_message(err) : strerror(-r));
		sandlock_error_free(err);
	}
	return r;
}

static int opt_timeout(struct run_ctx *c, const char *arg, const char *flag)
{
	char *end;
	errno = 0;
	double s = strtod(arg, &end);
	if (errno || *end || !(s > 0) || s > 1e9 || s != s)
		return bad_value(flag, arg, "expected a positive number of seconds");
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
	uint64_t v;
	if (parse_u64(arg, &v) < 0 || v > INT32_MAX)
		return bad_value(flag, arg, "expected a file descriptor number");
	c->status_fd = (int)v;
	return 0;
}

static const struct run_option options[] = {
	{ "fs-read", 'r', "PATH", "grant read + execute (recursive for directories)", opt_fs_read },
	{ "fs-write", 'w', "PATH", "grant read + write", opt_fs_write },
	{ "fs-deny", 0, "PATH", "deny even inside a broader grant", NULL },
	{ "net-allow", 0, "SPEC", "allow outbound to [scheme://]target[:ports]", NULL },
	{ "net-deny", 0, "SPEC", "deny outbound to an IP or CIDR", NULL },
	{ "net-allow-bind", 0, "PORTS", "TCP ports the sandbox may bind", NULL },
	{ "net-deny-bind", 0, "PORTS", "TCP ports the sandbox may not bind", NULL },
	{ "port-remap", 0, NULL, "per-sandbox virtual TCP port space", NULL },
	{ "http-allow", 0, "RULE", "allow \"METHOD host/path\" through the HTTP proxy", NULL },
	{ "http-deny", 0, "RULE", "deny \"METHOD host/path\" through the HTTP proxy", NULL },
	{ "http-port", 0, "PORT", "TCP port to intercept for HTTP rules", NULL },
	{ "http-ca", 0, "PATH", "MITM CA certificate", NULL },
	{ "http-key", 0, "PATH", "MITM CA private key", NULL },
	{ "http-inject-ca", 0, "PATH", "splice an ephemeral CA into this trust bundle", NULL },
	{ "http-ca-out", 0, "PATH", "write the active CA certificate here", NULL },
	{ "credential", 0, "NAME=SRC", "a secret held by the supervisor", NULL },
	{ "http-auth", 0, "RULE", "attach a credential to matching requests", NULL },
	{ "max-memory", 'm', "SIZE", "memory limit (512M, 1G, bytes)", NULL },
	{ "max-processes", 'P', "N", "concurrent process limit", NULL },
	{ "max-open-files", 0, "N", "RLIMIT_NOFILE, clamped to sandlock's own",
	  opt_max_open_files },
	{ "cpu", 'c', "PERCENT", "CPU throttle, percent of one core", NULL },
	{ "cpu-cores", 0, "LIST", "pin to these cores (0,1)", opt_cpu_cores },
	{ "num-cpus", 0, "N", "visible CPU count", NULL },
	{ "gpu", 0, "LIST", "expose these GPUs (all, 0,2)", NULL },
	{ "max-disk", 0, "SIZE", "copy-on-write quota", NULL },
	{ "workdir", 0, "PATH", "copy-on-write over this directory", NULL },
	{ "fs-storage", 0, "PATH", "where copy-on-write branches live", NULL },
	{ "on-exit", 0, "ACTION", "branch action after success", NULL },
	{ "on-error", 0, "ACTION", "branch action after failure", NULL },
	{ "dry-run", 0, NULL, "print the change list, then abort", NULL },
	{ "chroot", 0, "PATH", "emulated chroot", NULL },
	{ "fs-mount", 0, "MAP", "map a host directory into the chroot", NULL },
	{ "image", 0, "REF", "run inside a container image's rootfs", NULL },
	{ "cwd", 0, "PATH", "the command's working directory", opt_cwd },
	{ "env", 0, "KEY=VALUE", "set an environment variable", opt_env },
	{ "clean-env", 0, NULL, "start from PATH, HOME, USER, TERM, LANG only", opt_clean_env },
	{ "user", 0, "UID:GID", "map to this uid/gid in a user namespace", NULL },
	{ "random-seed", 0, "N", "deterministic getrandom and /dev/urandom", NULL },
	{ "time-start", 0, "TIME", "virtual wall clock starting at this instant", NULL },
	{ "deterministic-dirs", 0, NULL, "sorted directory listings", NULL },
	{ "no-randomize-memory", 0, NULL, "disable ASLR", opt_no_randomize_memory },
	{ "no-huge-pages", 0, NULL, "disable transparent huge pages", opt_no_huge_pages },
	{ "no-coredump", 0, NULL, "no core dumps (RLIMIT_CORE 0)", opt_no_coredump },
	{ "extra-deny-syscall", 0, "NAME", "block a syscall or group", opt_extra_deny },
	{ "extra-allow-syscall", 0, "GROUP", "re-allow a blocked group (sysv_ipc)",
	  opt_extra_allow },
	{ "allow-degraded", 0, "PROT", "enforce a protection only where the kernel has it",
	  opt_allow_degraded },
	{ "disable", 0, "PROT", "never enforce a protection", opt_disable },
	{ "no-supervisor", 0, NULL, "Landlock + kernel-only filter, no supervisor (nesting)",
	  opt_no_supervisor },
	{ "profile", 'p', "NAME", "load a profile", NULL },
	{ "profile-file", 0, "PATH", "load a profile file", NULL },
	{ "name", 0, "NAME", "sandbox name and virtual hostname", opt_name },
	{ "timeout", 't', "SECONDS", "kill the whole sandbox after this long", opt_timeout },
	{ "exec-shell", 'e', "CMD", "run /bin/sh -c CMD", opt_exec_shell },
	{ "interactive", 'i', NULL, "give the sandbox the terminal", opt_interactive },
	{ "status-fd", 0, "FD", "write {\"exit_code\":N} to FD after exit", opt_status_fd },
};

#define N_OPTIONS (sizeof(options) / sizeof(options[0]))

static void run_help(void)
{
	printf("Usage: sandlock run [FLAGS] [--] CMD [ARGS...]\n\nFlags:\n");
	for (size_t i = 0; i < N_OPTIONS; i++) {
		char left[64];
		const struct run_option *o = &options[i];
		snprintf(left, sizeof(left), "%s%c%s--%s%s%s", o->short_name ? "-" : "",
			 o->short_name ? o->short_name : ' ', o->short_name ? "," : " ", o->name,
			 o->meta ? " " : "", o->meta ? o->meta : "");
		printf("  %-34s %s%s\n", left, o->help, o->apply ? "" : " (not supported yet)");
	}
	printf("  %-34s %s\n", "-h, --help", "show this help");
}

/* Build getopt_long's tables from ours. Option index i is returned as 256 + i. */
static void build_getopt(struct option *longs, char *shorts)
{
	size_t s = 0;

	shorts[s++] = '+'; /* stop at the command */
	shorts[s++] = ':'; /* report a missing value as ':' */
	for (size_t i = 0; i < N_OPTIONS; i++) {
		longs[i] = (struct option){ options[i].name,
					    options[i].meta ? required_argument : no_argument, NULL,
					    256 + (int)i };
		if (options[i].short_name) {
			shorts[s++] = (char)options[i].short_name;
			if (options[i].meta)
				shorts[s++] = ':';
		}
	}
	longs[N_OPTIONS] = (struct option){ "help", no_argument, NULL, 'h' };
	longs[N_OPTIONS + 1] = (struct option){ 0 };
	shorts[s++] = 'h';
	shorts[s] = '\0';
}

static const struct run_option *find_short(int c)
{
	for (size_t i = 0; i < N_OPTIONS; i++)
		if (options[i].short_name == c)
			return &options[i];
	return NULL;
}

static int usage_hint(void)
{
	fprintf(stderr, "Try 'sandlock run --help'.\n");
	return EXIT_USAGE;
}

/* Returns -1 to go on, or the exit code. */
static int parse_args(struct run_ctx *c, int argc, char **argv)
{
	struct option longs[N_OPTIONS + 2];
	char shorts[2 * N_OPTIONS + 4];
	int ch;

	build_getopt(longs, shorts);
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		const struct run_option *o = NULL;
		if (ch == 'h') {
			run_help();
			return 0;
		}
		if (ch == '?' || ch == ':') {
			const char *what = argv[optind - 1];
			cli_error(EXIT_USAGE, "%s: %s",
				  ch == '?' ? "unknown flag" : "missing value", what);
			return usage_hint();
		}
		o = ch >= 256 ? &options[ch - 256] : find_short(ch);
		if (!o->apply)
			return cli_error(EXIT_POLICY, "not supported yet: --%s", o->name);
		int r = o->apply(c, optarg, o->name);
		if (r != 0)
			return r == EXIT_USAGE ? usage_hint() : r;
	}
	return -1;
}

static int report_spawn_error(int r, sandlock_error_t *err)
{
	const char *msg = err ? sandlock_error_message(err) : strerror(-r);
	int code = err && sandlock_error_step(err) ? EXIT_LAUNCH : EXIT_POLICY;

	cli_error(code, "%s", msg);
	sandlock_error_free(err);
	return code;
}

/* Wait for the sandbox, passing on the signals a user sends to sandlock. */
static void wait_forwarding(sandlock_sandbox_t *sb, int sigfd)
{
	struct pollfd pfd[2] = {
		{ .fd = sandlock_sandbox_done_fd(sb), .events = POLLIN },
		{ .fd = sigfd, .events = POLLIN },
	};

	for (;;) {
		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents)
			break;
		struct signalfd_siginfo si;
		if (pfd[1].revents && read(sigfd, &si, sizeof(si)) == sizeof(si))
			(void)sandlock_sandbox_signal(sb, (int32_t)si.ssi_signo);
	}
	sandlock_sandbox_wait(sb, -1);
}

static int outcome(struct run_ctx *c, sandlock_sandbox_t *sb)
{
	int code = 0, sig = 0;

	switch (sandlock_sandbox_exit_kind(sb)) {
	case SANDLOCK_EXIT_CODE:
		code = sandlock_sandbox_exit_code(sb);
		break;
	case SANDLOCK_EXIT_SIGNAL:
		sig = sandlock_sandbox_exit_signal(sb);
		code = 128 + sig;
		break;
	case SANDLOCK_EXIT_TIMEOUT:
		sig = sandlock_sandbox_exit_signal(sb);
		cli_error(0, "timeout after %ss", c->timeout_arg);
		code = EXIT_TIMEOUT;
		break;
	}
	if (c->status_fd >= 0) {
		if (sig)
			dprintf(c->status_fd, "{\"exit_code\":-1,\"signal\":%d}\n", sig);
		else
			dprintf(c->status_fd, "{\"exit_code\":%d}\n", code);
	}
	return code;
}

static int run_command(struct run_ctx *c, const char *const *cmd)
{
	sandlock_spawn_opts_t opts = {
		.size = sizeof(opts),
		.flags = c->interactive ? SANDLOCK_SPAWN_INTERACTIVE : 0,
		.timeout_ms = c->timeout_ms,
	};
	sandlock_sandbox_t *sb = NULL;
	sandlock_error_t *err = NULL;
	sigset_t fwd;

	/* Signals for the sandbox arrive on a signalfd; blocked before the sandbox thread
	 * exists, so every thread has them blocked. */
	sigemptyset(&fwd);
	sigaddset(&fwd, SIGINT);
	sigaddset(&fwd, SIGTERM);
	sigaddset(&fwd, SIGHUP);
	sigaddset(&fwd, SIGQUIT);
	sigprocmask(SIG_BLOCK, &fwd, NULL);
	int sigfd = signalfd(-1, &fwd, SFD_CLOEXEC);
	if (sigfd < 0) /* without it, signals for the sandbox would be lost */
		return cli_error(EXIT_POLICY, "signalfd: %s", strerror(errno));

	int r = sandlock_spawn(c->policy, cmd, &opts, &sb, &err);
	if (r < 0) {
		close(sigfd);
		return report_spawn_error(r, err);
	}
	wait_forwarding(sb, sigfd);
	int code = outcome(c, sb);
	sandlock_sandbox_free(sb);
	close(sigfd);
	return code;
}

int verb_run(int argc, char **argv)
{
	struct run_ctx c = { .status_fd = -1 };

	if (sandlock_policy_new(&c.policy) < 0)
		return cli_error(EXIT_POLICY, "out of memory");
	int code = parse_args(&c, argc, argv);
	if (code < 0) {
		const char *shell[] = { "/bin/sh", "-c", c.shell_cmd, NULL };
		if (c.shell_cmd && optind < argc) {
			cli_error(EXIT_USAGE, "give either -e CMD or a command, not both");
			code = usage_hint();
		} else if (!c.shell_cmd && optind >= argc) {
			cli_error(EXIT_USAGE, "no command given");
			code = usage_hint();
		} else
			code = run_command(&c, c.shell_cmd ? shell
							   : (const char *const *)argv + optind);
	}
	sandlock_policy_free(c.policy);
	return code;
}
