/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * run: `sandlock run [FLAGS] [--] [CMD ARGS...]`. The flags (options.c) fill a policy, on top of
 * a profile if one is named; the command is -e, the words after the flags, or the profile's
 * [program]. The library does the rest; this file waits, forwards signals and maps the outcome
 * to the exit status.
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
#include "options.h"
#include "sandlock.h"

/* sandlock_policy_add_cpu_core() refuses CPUs at or above this (glibc's CPU_SETSIZE). */
#define CPU_SETSIZE_LIMIT 1024UL

/* Build getopt_long's tables from ours. Option index i is returned as 256 + i. */
static void build_getopt(struct option *longs, char *shorts)
{
	size_t s = 0;

	shorts[s++] = '+'; /* stop at the command */
	shorts[s++] = ':'; /* report a missing value as ':' */
	for (size_t i = 0; i < run_n_options; i++) {
		int has_arg = !run_options[i].meta	     ? no_argument
			      : run_options[i].meta_optional ? optional_argument
							     : required_argument;
		longs[i] = (struct option){ run_options[i].name, has_arg, NULL, 256 + (int)i };
		if (run_options[i].short_name) {
			shorts[s++] = (char)run_options[i].short_name;
			if (run_options[i].meta)
				shorts[s++] = ':';
		}
	}
	longs[run_n_options] = (struct option){ "help", no_argument, NULL, 'h' };
	longs[run_n_options + 1] = (struct option){ 0 };
	shorts[s++] = 'h';
	shorts[s] = '\0';
}

static const struct run_option *find_option(int ch)
{
	if (ch >= 256)
		return &run_options[ch - 256];
	for (size_t i = 0; i < run_n_options; i++)
		if (run_options[i].short_name == ch)
			return &run_options[i];
	return NULL;
}

static int usage_hint(void)
{
	fprintf(stderr, "Try 'sandlock run --help'.\n");
	return EXIT_USAGE;
}

struct parsed {
	const struct run_option *opt;
	const char *arg;
};

/* Collect the flags; returns -1 to go on, or an exit code. */
static int collect(int argc, char **argv, struct parsed *out, size_t *n)
{
	struct option longs[RUN_OPTIONS_MAX + 2];
	char shorts[2 * RUN_OPTIONS_MAX + 4];
	int ch;

	build_getopt(longs, shorts);
	optind = 1;
	opterr = 0;
	*n = 0;
	while ((ch = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		if (ch == 'h') {
			run_help();
			return 0;
		}
		const struct run_option *o = ch == '?' || ch == ':' ? NULL : find_option(ch);
		const char *hint = ch == '?' ? run_suggest(argv[optind - 1]) : NULL;
		if (!o && hint)
			cli_error(EXIT_USAGE, "unknown flag: %s (did you mean --%s?)",
				  argv[optind - 1], hint);
		else if (!o)
			cli_error(EXIT_USAGE, "%s: %s",
				  ch == ':' ? "missing value" : "unknown flag", argv[optind - 1]);
		if (!o)
			return usage_hint();
		out[(*n)++] = (struct parsed){ o, optarg };
	}
	return -1;
}

/* Profiles first, wherever they were named; then every other flag in order. */
static int apply_all(struct run_ctx *c, const struct parsed *v, size_t n)
{
	size_t profiles = 0;

	for (size_t i = 0; i < n; i++)
		profiles += !v[i].opt->field && !v[i].opt->apply;
	if (profiles > 1)
		return cli_error(EXIT_USAGE, "give one profile (-p or --profile-file)");
	for (size_t i = 0; i < n; i++) {
		if (v[i].opt->field || v[i].opt->apply)
			continue;
		sandlock_policy_t *loaded = NULL;
		sandlock_error_t *err = NULL;
		int r;
		if (strcmp(v[i].opt->name, "profile") == 0) {
			char *path = NULL;
			r = sandlock_profile_path(v[i].arg, &path, NULL);
			sandlock_free(path);
			if (r < 0)
				return cli_error(EXIT_USAGE, "-p %s: %s", v[i].arg,
						 r == -EINVAL ? "not a profile name"
							      : strerror(-r));
			r = sandlock_policy_load_profile(v[i].arg, &loaded, &err);
		} else
			r = sandlock_policy_load_toml_file(v[i].arg, &loaded, &err);
		if (r < 0) {
			cli_error(EXIT_POLICY, "%s",
				  err ? sandlock_error_message(err) : strerror(-r));
			sandlock_error_free(err);
			return EXIT_POLICY;
		}
		sandlock_policy_free(c->policy);
		c->policy = loaded;
		if (run_label_fields(c->policy) < 0)
			return cli_error(EXIT_POLICY, "out of memory");
		c->profile_loaded = 1;
	}
	for (size_t i = 0; i < n; i++) {
		if (!v[i].opt->field && !v[i].opt->apply)
			continue;
		int r = run_apply(c, v[i].opt, v[i].arg);
		if (r != 0)
			return r == EXIT_USAGE ? usage_hint() : r;
	}
	return -1;
}

static int parse_args(struct run_ctx *c, int argc, char **argv)
{
	struct parsed *v = calloc((size_t)argc + 1, sizeof(*v));
	size_t n;

	if (!v)
		return cli_error(EXIT_POLICY, "out of memory");
	int code = collect(argc, argv, v, &n);
	if (code < 0)
		code = apply_all(c, v, n);
	free(v);
	return code;
}

static int report_spawn_error(int r, sandlock_error_t *err)
{
	const char *msg = err ? sandlock_error_message(err) : strerror(-r);
	int code = err && sandlock_error_step(err) ? EXIT_LAUNCH : EXIT_POLICY;

	cli_error(code, "%s", msg);
	sandlock_error_free(err);
	return code;
}

static void exit_on_signal(int sig)
{
	_exit(128 + sig);
}

/* While the sandbox starts (@starting), the signals of @set end sandlock with 128 + the
 * signal; after it, they are blocked again, read from the signalfd and passed on. A signal
 * sandlock was started ignoring (nohup's SIGHUP) stays ignored: never passed on. */
void cli_spawn_signals(const sigset_t *set, int starting)
{
	struct sigaction sa = { .sa_handler = starting ? exit_on_signal : SIG_DFL }, old;

	if (!starting)
		sigprocmask(SIG_BLOCK, set, NULL);
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(set, sig) == 1 && sigaction(sig, NULL, &old) == 0 &&
		    old.sa_handler != SIG_IGN)
			(void)sigaction(sig, &sa, NULL);
	if (starting)
		sigprocmask(SIG_UNBLOCK, set, NULL);
}

/* Wait for the sandbox, passing on the signals a user sends to sandlock; with @tick, call it
 * every @tick_ms meanwhile (and once first). */
void cli_wait_forwarding(sandlock_sandbox_t *sb, int sigfd, int tick_ms, void (*tick)(void *),
			 void *user_data)
{
	struct pollfd pfd[2] = {
		{ .fd = sandlock_sandbox_done_fd(sb), .events = POLLIN },
		{ .fd = sigfd, .events = POLLIN },
	};

	for (;;) {
		if (tick)
			tick(user_data);
		if (poll(pfd, 2, tick ? tick_ms : -1) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents)
			break;
		struct signalfd_siginfo si;
		if (pfd[1].revents && read(sigfd, &si, sizeof(si)) == sizeof(si))
			(void)sandlock_sandbox_signal(sb, (int32_t)si.ssi_signo);
	}
	sandlock_sandbox_wait(sb, -1);
}

/* What the library would tell the user about the run (a process killed for max_memory, a
 * fork refused by max_processes), one "sandlock: " line each, once the sandbox ended. */
void cli_print_notices(sandlock_sandbox_t *sb)
{
	const char *line = sandlock_sandbox_notices(sb);

	fflush(stdout);
	while (*line) {
		const char *eol = strchr(line, '\n');
		int n = eol ? (int)(eol - line) : (int)strlen(line);
		fprintf(stderr, "sandlock: %.*s\n", n, line);
		line += n + (eol != NULL);
	}
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

/* --dry-run: what the run changed in the workdir, one "A|M|D path" per line, on @out. */
static void print_changes(sandlock_sandbox_t *sb, FILE *out)
{
	size_t n = sandlock_sandbox_change_count(sb);

	for (size_t i = 0; i < n; i++) {
		const char *path;
		sandlock_entry_t before, after;
		if (sandlock_sandbox_change(sb, i, &path, &before, &after) < 0)
			continue;
		fprintf(out, "%c %s\n",
			before.kind == SANDLOCK_ENTRY_ABSENT  ? 'A'
			: after.kind == SANDLOCK_ENTRY_ABSENT ? 'D'
							      : 'M',
			path);
	}
	if (!n)
		fprintf(out, "no changes\n");
	fflush(out);
}

/* --dry-run needs a workdir, from a flag or a profile. */
static int has_workdir(const sandlock_policy_t *p)
{
	char *json = NULL;
	int yes = sandlock_policy_dump_json(p, &json) == 0 && json && strstr(json, "\"workdir\"");
	sandlock_free(json);
	return yes;
}

static int run_spawned(struct run_ctx *c, const char *const *cmd, FILE *changes)
{
	sandlock_spawn_opts_t opts = {
		.size = sizeof(opts),
		.flags = c->interactive ? SANDLOCK_SPAWN_INTERACTIVE : 0,
		.timeout_ms = c->timeout_ms,
	};
	sandlock_sandbox_t *sb = NULL;
	sandlock_error_t *err = NULL;
	sigset_t fwd;

	int code = run_log_open(c, &opts);
	if (code != 0)
		return code;

	/* Signals for the sandbox arrive on a signalfd; blocked before the sandbox thread
	 * exists, so every thread has them blocked. */
	sigemptyset(&fwd);
	sigaddset(&fwd, SIGINT);
	sigaddset(&fwd, SIGTERM);
	sigaddset(&fwd, SIGHUP);
	sigaddset(&fwd, SIGQUIT);
	sigprocmask(SIG_BLOCK, &fwd, NULL);
	int sigfd = signalfd(-1, &fwd, SFD_CLOEXEC);
	if (sigfd < 0) { /* without it, signals for the sandbox would be lost */
		run_log_close(c);
		return cli_error(EXIT_POLICY, "signalfd: %s", strerror(errno));
	}

	/* Until the command runs there is nothing to pass a signal on to: one ends sandlock,
	 * and the kernel ends the sandbox (the child's PDEATHSIG, each group's lifeline). The
	 * launch itself may take long (a resolver, an execve waiting on a file). The command
	 * may run before sandlock_spawn returns, so sandlock exits as a signal passed on would
	 * have made it: 128 + the signal. */
	cli_spawn_signals(&fwd, 1);
	int r = sandlock_spawn(c->policy, cmd, &opts, &sb, &err);
	cli_spawn_signals(&fwd, 0);
	if (r < 0) {
		close(sigfd);
		run_log_close(c);
		return report_spawn_error(r, err);
	}
	cli_wait_forwarding(sb, sigfd, 0, NULL, NULL);
	cli_print_notices(sb);
	run_log_close(c); /* every callback has returned: the sandbox ended */
	code = outcome(c, sb);
	if (c->dry_run)
		print_changes(sb, changes);
	const sandlock_error_t *berr = sandlock_sandbox_branch_error(sb);
	if (berr) {
		/* The branch could not be settled as asked (it is on disk, the message says
		 * where): a command that succeeded does not make this run a success. */
		cli_error(0, "%s", sandlock_error_message(berr));
		if (code == 0)
			code = EXIT_POLICY;
	}
	sandlock_sandbox_free(sb);
	close(sigfd);
	return code;
}

/* "FsRefer" as the flags spell it: "fs-refer". */
static void flag_form(const char *name, char *buf, size_t size)
{
	size_t n = 0;

	for (const char *c = name; *c && n + 2 < size; c++) {
		if (*c >= 'A' && *c <= 'Z' && c != name)
			buf[n++] = '-';
		buf[n++] = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
	}
	buf[n] = '\0';
}

/* Every protection the policy lets degrade and this kernel lacks, named on one line. */
static void warn_degraded(const sandlock_policy_t *p)
{
	char names[512] = "", name[64];
	size_t off = 0;

	for (uint32_t i = 0; i < SANDLOCK_PROTECTION_COUNT; i++) {
		if (sandlock_policy_protection_status(p, i) != (int)SANDLOCK_STATUS_DEGRADED)
			continue;
		flag_form(sandlock_protection_name(i), name, sizeof(name));
		int n = snprintf(names + off, sizeof(names) - off, "%s%s (ABI %d)", off ? ", " : "",
				 name, sandlock_protection_abi_floor(i));
		if (n > 0 && (size_t)n < sizeof(names) - off)
			off += (size_t)n;
	}
	/* A lowered ABI is the caller's test setting, never the kernel's: say so. */
	if (off)
		cli_error(0, "warning: running without %s: this kernel has Landlock ABI %d%s",
			  names, sandlock_landlock_abi_version(),
			  secure_getenv("SANDLOCK_TEST_LANDLOCK_ABI")
				  ? " (SANDLOCK_TEST_LANDLOCK_ABI)"
				  : "");
}

/* The change list of --dry-run goes apart from the command's output: to stderr, or to the file
 * named, opened before the run so that a bad name costs no run. */
static int run_command(struct run_ctx *c, const char *const *cmd)
{
	FILE *changes = stderr;

	if (c->dry_run && !has_workdir(c->policy))
		return cli_error(EXIT_USAGE, "--dry-run needs --workdir (or a profile's workdir)");
	if (c->dry_run_file && !(changes = fopen(c->dry_run_file, "we")))
		return cli_error(EXIT_USAGE, "--dry-run=%s: %s", c->dry_run_file, strerror(errno));
	warn_degraded(c->policy);
	int code = run_spawned(c, cmd, changes);
	if (changes != stderr && fclose(changes) != 0 && code == 0)
		code = cli_error(EXIT_POLICY, "--dry-run=%s: %s", c->dry_run_file, strerror(errno));
	return code;
}

/* The command: -e, else the words after the flags, else the profile's [program]. */
static int run_with_command(struct run_ctx *c, int argc, char **argv)
{
	const char *shell[] = { "/bin/sh", "-c", c->shell_cmd, NULL };
	char **profile_cmd = NULL;

	if (c->shell_cmd && optind < argc) {
		cli_error(EXIT_USAGE, "give either -e CMD or a command, not both");
		return usage_hint();
	}
	if (c->shell_cmd)
		return run_command(c, shell);
	if (optind < argc)
		return run_command(c, (const char *const *)argv + optind);
	if (sandlock_policy_command(c->policy, &profile_cmd) < 0) {
		cli_error(EXIT_USAGE, "no command given%s",
			  c->profile_loaded ? " (and the profile has no [program] exec)" : "");
		return usage_hint();
	}
	int code = run_command(c, (const char *const *)profile_cmd);
	sandlock_strv_free(profile_cmd);
	return code;
}

int verb_run(int argc, char **argv)
{
	struct run_ctx c = { .status_fd = -1 };

	if (sandlock_policy_new(&c.policy) < 0 || run_label_fields(c.policy) < 0) {
		sandlock_policy_free(c.policy);
		return cli_error(EXIT_POLICY, "out of memory");
	}
	int code = parse_args(&c, argc, argv);
	if (code < 0)
		code = run_with_command(&c, argc, argv);
	sandlock_policy_free(c.policy);
	return code;
}
