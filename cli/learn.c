/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * learn: `sandlock learn [-o FILE] [--merge FILE] [--timeout SECS] -- CMD...`. The command runs
 * once in an observing sandbox: everything readable, its writes staged in a workdir branch
 * that is thrown away (over $HOME when the command runs beneath it, else over its directory),
 * a private TMPDIR, writes elsewhere refused, the network open, binds allowed. The event
 * stream (every allowed and denied decision) says what it read, wrote, ran, reached and bound;
 * the workdir's change set says what it wrote there; /proc, sampled during the run, its peak
 * memory, processes and open files. learn-paths.c makes grants of the paths, learn-profile.c
 * writes the profile.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli.h"
#include "learn.h"

/* Siblings merged into their parent from this many. */
#define LEARN_MERGE_MIN 3
/* /proc is sampled this often (ms) for the peaks. */
#define LEARN_SAMPLE_MS 20
/* At most this many processes are sampled. */
#define LEARN_MAX_PIDS 4096

struct learn_opts {
	const char *out_file, *merge_file, *timeout_arg;
	uint64_t timeout_ms;
	const char *workdir; /* the branch's directory, NULL: none */
};

struct learn_ctx {
	struct learn_run run;
	int failed;
};

/* ---- the events ---------------------------------------------------------------------------- */

static void record_net(struct learn_ctx *c, const sandlock_event_t *ev)
{
	char rule[128];
	int r = 0;

	if (ev->protocol && strcmp(ev->protocol, "unix") == 0) {
		/* A named socket is reached with a write grant on its directory. */
		if (ev->path)
			r = learn_paths_add(&c->run.paths, ev->path, LEARN_ENTRY);
	} else if (ev->syscall && strcmp(ev->syscall, "bind") == 0) {
		if ((!ev->protocol || strcmp(ev->protocol, "tcp") == 0) &&
		    (ev->family == AF_INET || ev->family == AF_INET6)) {
			snprintf(rule, sizeof(rule), "%u", ev->port);
			r = learn_set_add(&c->run.binds, rule);
		}
	} else if (ev->host && ev->port && ev->protocol &&
		   (strcmp(ev->protocol, "tcp") == 0 || strcmp(ev->protocol, "udp") == 0)) {
		int v6 = ev->family == AF_INET6 || strchr(ev->host, ':');
		snprintf(rule, sizeof(rule), "%s://%s%s%s:%u", ev->protocol, v6 ? "[" : "",
			 ev->host, v6 ? "]" : "", ev->port);
		r = learn_set_add(&c->run.net, rule);
	}
	if (r < 0)
		c->failed = 1;
}

/* The callback: on the library's events thread, one event at a time; the main thread reads
 * what it recorded only once the sandbox has ended. */
static void record(const sandlock_event_t *ev, void *user_data)
{
	struct learn_ctx *c = user_data;

	if (!ev->category)
		return;
	if (strcmp(ev->category, "network") == 0) {
		record_net(c, ev);
		return;
	}
	if (strcmp(ev->category, "file") != 0 || !ev->path)
		return;
	int access = learn_access_of(ev->access);
	if (access < 0)
		return;
	if (ev->access && strcmp(ev->access, "exec") == 0 &&
	    learn_set_add(&c->run.execs, ev->path) < 0)
		c->failed = 1;
	if (learn_paths_add(&c->run.paths, ev->path, (enum learn_access)access) < 0)
		c->failed = 1;
}

/* The workdir's change set: what the command wrote there (the branch is thrown away). */
static void record_changes(struct learn_ctx *c, sandlock_sandbox_t *sb, const char *workdir)
{
	size_t n = sandlock_sandbox_change_count(sb);

	for (size_t i = 0; i < n; i++) {
		const char *rel;
		sandlock_entry_t before, after;
		char path[PATH_MAX];
		if (sandlock_sandbox_change(sb, i, &rel, &before, &after) < 0)
			continue;
		snprintf(path, sizeof(path), "%s%s%s", workdir, *rel ? "/" : "", rel);
		/* Changed in place: the entry itself; made or removed: its directory. */
		int modified =
			before.kind != SANDLOCK_ENTRY_ABSENT && after.kind != SANDLOCK_ENTRY_ABSENT;
		if (learn_paths_add(&c->run.paths, path, modified ? LEARN_WRITE : LEARN_ENTRY) < 0)
			c->failed = 1;
	}
}

/* ---- the peaks ----------------------------------------------------------------------------- */

static uint64_t status_kb(const char *buf, const char *key)
{
	const char *p = strstr(buf, key);
	unsigned long long kb;

	return p && sscanf(p + strlen(key), "%llu", &kb) == 1 ? (uint64_t)kb * 1024 : 0;
}

/* The bytes max_memory counts for @pid (RssAnon + RssShmem + VmPTE, handlers/memory.c). */
static uint64_t memory_of(pid_t pid)
{
	char name[64], buf[4096];

	snprintf(name, sizeof(name), "/proc/%d/status", (int)pid);
	FILE *f = fopen(name, "re");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return status_kb(buf, "RssAnon:") + status_kb(buf, "RssShmem:") + status_kb(buf, "VmPTE:");
}

/* The highest descriptor of @pid, plus one: what RLIMIT_NOFILE must allow. */
static uint64_t files_of(pid_t pid)
{
	char name[64];
	uint64_t top = 0;

	snprintf(name, sizeof(name), "/proc/%d/fd", (int)pid);
	DIR *d = opendir(name);
	for (struct dirent *e; d && (e = readdir(d));) {
		uint64_t fd = strtoull(e->d_name, NULL, 10);
		if (e->d_name[0] != '.' && fd + 1 > top)
			top = fd + 1;
	}
	if (d)
		closedir(d);
	return top;
}

/* The children of every thread of @pid appended to @pids. */
static size_t add_children(pid_t pid, pid_t *pids, size_t n)
{
	char name[64];

	snprintf(name, sizeof(name), "/proc/%d/task", (int)pid);
	DIR *d = opendir(name);
	for (struct dirent *e; d && (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		char path[320];
		snprintf(path, sizeof(path), "/proc/%d/task/%s/children", (int)pid, e->d_name);
		FILE *f = fopen(path, "re");
		for (int child; f && n < LEARN_MAX_PIDS && fscanf(f, "%d", &child) == 1;)
			pids[n++] = child;
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return n;
}

/* One look at the command's process tree. */
static void sample(struct learn_run *run, pid_t root)
{
	static pid_t pids[LEARN_MAX_PIDS];
	size_t n = 1;
	uint64_t memory = 0;

	pids[0] = root;
	for (size_t i = 0; i < n; i++)
		n = add_children(pids[i], pids, n);
	for (size_t i = 0; i < n; i++) {
		memory += memory_of(pids[i]);
		uint64_t files = files_of(pids[i]);
		if (files > run->peak_files)
			run->peak_files = files;
	}
	if (memory > run->peak_memory)
		run->peak_memory = memory;
	if (n > run->peak_processes)
		run->peak_processes = n;
}

/* ---- the run ------------------------------------------------------------------------------- */

static int set(sandlock_policy_t *p, const char *field, const char *value)
{
	sandlock_error_t *err = NULL;
	int r = sandlock_policy_set(p, field, value, &err);

	if (r < 0)
		cli_error(EXIT_POLICY, "learn: %s",
			  err ? sandlock_error_message(err) : strerror(-r));
	sandlock_error_free(err);
	return r;
}

/* The observing sandbox: read everything, write only into the thrown-away branch and the
 * private TMPDIR, reach and bind anything. Protections degrade: it observes, it does not
 * confine. */
static sandlock_policy_t *observing_policy(const struct learn_opts *o)
{
	sandlock_policy_t *p = NULL;

	if (sandlock_policy_new(&p) < 0)
		return NULL;
	if (set(p, "fs_readable", "/") < 0 || set(p, "private_tmp", "true") < 0 ||
	    set(p, "net_allow", "*") < 0 || set(p, "net_allow_bind", "*") < 0 ||
	    set(p, "allow_degraded", "all") < 0 ||
	    (o->workdir && (set(p, "workdir", o->workdir) < 0 || set(p, "on_exit", "abort") < 0 ||
			    set(p, "on_error", "abort") < 0))) {
		sandlock_policy_free(p);
		return NULL;
	}
	return p;
}

struct sampling {
	struct learn_run *run;
	pid_t root;
};

/* cli_wait_forwarding's tick: one look at the sandbox's processes. */
static void sample_tick(void *user_data)
{
	struct sampling *s = user_data;

	sample(s->run, s->root);
}

/* The command's exit status as `sandlock run` gives it; a warning where the run was cut. */
static int outcome(sandlock_sandbox_t *sb, const struct learn_opts *o)
{
	switch (sandlock_sandbox_exit_kind(sb)) {
	case SANDLOCK_EXIT_CODE: {
		int code = sandlock_sandbox_exit_code(sb);
		if (code)
			cli_error(0,
				  "warning: the command exited with status %d: the profile "
				  "holds what it did until then",
				  code);
		return code;
	}
	case SANDLOCK_EXIT_SIGNAL:
		cli_error(0,
			  "warning: the command was killed by signal %d: the profile holds what "
			  "it did until then",
			  sandlock_sandbox_exit_signal(sb));
		return 128 + sandlock_sandbox_exit_signal(sb);
	case SANDLOCK_EXIT_TIMEOUT:
		cli_error(0,
			  "warning: timeout after %ss: the profile holds what the command did "
			  "until then",
			  o->timeout_arg);
		return EXIT_TIMEOUT;
	}
	return EXIT_POLICY;
}

/* Run the command once, recording into @c. Returns the command's exit status, or an exit code
 * with the error printed, with *@ran set once it ran. */
static int observe(struct learn_ctx *c, const struct learn_opts *o, const char *const *cmd,
		   int *ran)
{
	sandlock_spawn_opts_t opts = {
		.size = sizeof(opts),
		.timeout_ms = o->timeout_ms,
		.events = SANDLOCK_EVENTS_DENIALS | SANDLOCK_EVENTS_ALLOWED,
		.on_event = record,
		.event_user_data = c,
		/* The profile goes to stdout: the command's output to stderr. */
		.stdout_mode = o->out_file ? SANDLOCK_STDIO_INHERIT : SANDLOCK_STDIO_FD,
		.stdout_fd = 2,
	};
	sandlock_sandbox_t *sb = NULL;
	sandlock_error_t *err = NULL;
	sigset_t fwd;

	*ran = 0;
	sandlock_policy_t *p = observing_policy(o);
	if (!p)
		return EXIT_POLICY;
	sigemptyset(&fwd);
	sigaddset(&fwd, SIGINT);
	sigaddset(&fwd, SIGTERM);
	sigaddset(&fwd, SIGHUP);
	sigaddset(&fwd, SIGQUIT);
	/* As `sandlock run` does: blocked before the library's threads exist, ending sandlock
	 * while the launch runs (nothing to pass them on to yet). */
	sigprocmask(SIG_BLOCK, &fwd, NULL);
	int sigfd = signalfd(-1, &fwd, SFD_CLOEXEC);
	cli_spawn_signals(&fwd, 1);
	int r = sigfd < 0 ? -errno : sandlock_spawn(p, cmd, &opts, &sb, &err);
	cli_spawn_signals(&fwd, 0);
	sandlock_policy_free(p);
	if (r < 0) {
		int code = err && sandlock_error_step(err) ? EXIT_LAUNCH : EXIT_POLICY;
		cli_error(code, "%s", err ? sandlock_error_message(err) : strerror(-r));
		sandlock_error_free(err);
		if (sigfd >= 0)
			close(sigfd);
		return code;
	}
	*ran = 1;
	struct sampling s = { &c->run, sandlock_sandbox_pid(sb) };
	cli_wait_forwarding(sb, sigfd, LEARN_SAMPLE_MS, sample_tick, &s);
	cli_print_notices(sb);
	int code = outcome(sb, o);
	if (o->workdir)
		record_changes(c, sb, o->workdir);
	if (sandlock_sandbox_events_dropped(sb))
		cli_error(0, "warning: %llu events dropped: the profile may lack grants",
			  (unsigned long long)sandlock_sandbox_events_dropped(sb));
	sandlock_sandbox_free(sb);
	close(sigfd);
	return code;
}

/* ---- the verb ------------------------------------------------------------------------------ */

/* $HOME as the profile loader expands ${HOME}: absolute and not the root, else the passwd
 * entry's. */
static const char *home_dir(void)
{
	const char *h = getenv("HOME");

	if (h && h[0] == '/' && h[strspn(h, "/")])
		return h;
	struct passwd *pw = getpwuid(getuid());
	return pw && pw->pw_dir && pw->pw_dir[0] == '/' && pw->pw_dir[strspn(pw->pw_dir, "/")]
		       ? pw->pw_dir
		       : NULL;
}

/* The branch's directory: $HOME when the command runs beneath it, else its directory; none
 * where that holds the store root of the branches (it cannot be in its own workdir). */
static char *choose_workdir(const char *home, const char *store)
{
	char *cwd = getcwd(NULL, 0);
	char *real = cwd ? realpath(cwd, NULL) : NULL;

	free(cwd);
	if (!real)
		return NULL;
	if (home && learn_beneath(real, home) && !learn_beneath(store, home)) {
		free(real);
		return strdup(home);
	}
	if (strcmp(real, "/") == 0 || learn_beneath(store, real)) {
		free(real);
		return NULL;
	}
	return real;
}

static int parse_timeout(struct learn_opts *o, const char *arg)
{
	char *end;

	errno = 0;
	double s = strtod(arg, &end);
	if (errno || *end || end == arg || !(s > 0) || s > 1e9)
		return cli_error(EXIT_USAGE,
				 "--timeout: invalid value '%s': expected a positive number of "
				 "seconds (at most 1000000000)",
				 arg);
	o->timeout_arg = arg;
	o->timeout_ms = (uint64_t)(s * 1000.0) ?: 1;
	return 0;
}

static int parse_args(struct learn_opts *o, int argc, char **argv)
{
	static const struct option longs[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "merge", required_argument, NULL, 'M' },
		{ "timeout", required_argument, NULL, 't' },
		{ 0 },
	};
	int ch;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+:o:t:", longs, NULL)) != -1) {
		if (ch == 'o')
			o->out_file = optarg;
		else if (ch == 'M')
			o->merge_file = optarg;
		else if (ch == 't' && parse_timeout(o, optarg))
			return EXIT_USAGE;
		else if (ch == ':' || ch == '?') {
			cli_error(EXIT_USAGE, "%s: %s",
				  ch == ':' ? "missing value" : "unknown flag", argv[optind - 1]);
			return cli_usage_error("learn");
		}
	}
	if (optind >= argc) {
		cli_error(EXIT_USAGE, "no command given");
		return cli_usage_error("learn");
	}
	return -1;
}

/* What would fail after the run, found before it: a --merge profile that does not load, an -o
 * file whose directory cannot take it. */
static int precheck(const struct learn_opts *o)
{
	if (o->merge_file) {
		sandlock_policy_t *p = NULL;
		sandlock_error_t *err = NULL;
		int r = sandlock_policy_load_toml_file(o->merge_file, &p, &err);
		if (r < 0)
			cli_error(EXIT_POLICY, "--merge %s",
				  err ? sandlock_error_message(err) : strerror(-r));
		sandlock_error_free(err);
		sandlock_policy_free(p);
		if (r < 0)
			return EXIT_POLICY;
	}
	if (o->out_file) {
		char *dir = strdup(o->out_file);
		char *slash = dir ? strrchr(dir, '/') : NULL;
		if (slash)
			slash[slash == dir] = '\0';
		int r = !dir ? -ENOMEM : access(slash ? dir : ".", W_OK) < 0 ? -errno : 0;
		free(dir);
		if (r < 0)
			return cli_error(EXIT_USAGE, "-o %s: %s", o->out_file, strerror(-r));
	}
	return 0;
}

/* What the run did not get: the places never granted, those granted whole. */
static void warn_grants(const struct learn_run *run)
{
	const char **v = learn_set_sorted(&run->paths.refused);

	for (size_t i = 0; v && v[i]; i++) {
		int n = (int)strcspn(v[i], "\t");
		const char *grant = v[i] + n + (v[i][n] == '\t');
		if (strncmp(v[i], grant, (size_t)n) == 0 && grant[n] == '\0')
			cli_error(0,
				  "warning: not granted: %s (never granted: /, ~/.ssh, ~/.aws, "
				  "~/.gnupg, ~/.kube, the directories above $HOME)",
				  grant);
		else
			cli_error(0, "warning: not granted: %.*s (it needs %s, never granted)", n,
				  v[i], grant);
	}
	free(v);
	v = learn_set_sorted(&run->paths.warned);
	for (size_t i = 0; v && v[i]; i++)
		if (learn_set_has(&run->paths.read, v[i]) || learn_set_has(&run->paths.write, v[i]))
			cli_error(0, "warning: granted whole: %s (%s): check the profile", v[i],
				  learn_set_has(&run->paths.write, v[i]) ? "write" : "read");
	free(v);
}

int verb_learn(int argc, char **argv)
{
	struct learn_opts o = { 0 };
	struct learn_ctx c = { 0 };
	char store[64];
	int ran;

	int code = parse_args(&o, argc, argv);
	if (code >= 0)
		return code;
	if ((code = precheck(&o)) != 0)
		return code;
	const char *home_env = home_dir();
	char *home = home_env ? realpath(home_env, NULL) : NULL;
	snprintf(store, sizeof(store), "/var/tmp/sandlock-%u", (unsigned)geteuid());
	char *workdir = choose_workdir(home, store);
	if (!workdir)
		cli_error(0, "warning: no workdir: every write the command makes is refused");
	o.workdir = workdir;
	c.run.argv = (const char *const *)argv + optind;
	c.run.home = home;
	c.run.home_env = home_env;
	c.run.paths.home = home;
	c.run.paths.skip_under = store;
	code = observe(&c, &o, c.run.argv, &ran);
	if (ran && c.failed)
		code = cli_error(EXIT_POLICY, "out of memory");
	else if (ran && learn_paths_collapse(&c.run.paths, LEARN_MERGE_MIN) < 0)
		code = cli_error(EXIT_POLICY, "out of memory");
	else if (ran) {
		warn_grants(&c.run);
		int w = learn_profile_write(&c.run, o.merge_file, o.out_file);
		code = w ? w : code;
	}
	learn_paths_free(&c.run.paths);
	learn_set_free(&c.run.net);
	learn_set_free(&c.run.binds);
	learn_set_free(&c.run.execs);
	free(workdir);
	free(home);
	return code;
}
