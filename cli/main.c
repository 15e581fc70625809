/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * main: find the verb and hand over. Kept short; each verb lives in its own file.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sandlock.h"

int cli_error(int code, const char *fmt, ...)
{
	va_list ap;

	fputs("sandlock: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

/* A verb's help: @usage is its synopsis ("sandlock ps"), for `VERB --help` and its usage
 * errors, @about the paragraph under it. run has a help of its own (its flag table). */
static const struct verb {
	const char *name;
	int (*fn)(int argc, char **argv); /* NULL: comes with a later release */
	const char *help;
	const char *usage;
	const char *about;
} verbs[] = {
	{ "run", verb_run, "run a command confined", NULL, NULL },
	{ "check", verb_check, "report what this kernel supports", "sandlock check",
	  "Report the kernel's Landlock ABI, the minimum sandlock needs, and each protection\n"
	  "with the ABI it needs and whether this kernel has it. Exits 0 when a default sandbox\n"
	  "(every protection strict) can run here, 1 when it cannot." },
	{ "ps", verb_ps, "list running sandboxes", "sandlock ps",
	  "List this user's running sandboxes: NAME, PID, UPTIME, STATUS, PORTS and CMD.\n"
	  "A sandbox run with --no-control-socket is not listed." },
	{ "inspect", verb_inspect, "print a running sandbox's policy",
	  "sandlock inspect [--toml] [--] NAME",
	  "Print the effective policy of the running sandbox NAME as JSON, or with --toml as\n"
	  "TOML, in the profile schema." },
	{ "kill", verb_kill, "kill a running sandbox", "sandlock kill [--] NAME",
	  "Kill every process of the running sandbox NAME (SIGKILL) and wait up to 5 s for it\n"
	  "and its supervisor to end." },
	{ "profile", verb_profile, "manage profiles",
	  "sandlock profile list | show NAME | delete NAME",
	  "Profiles are NAME.toml files in $XDG_CONFIG_HOME/sandlock/profiles (else\n"
	  "~/.config/sandlock/profiles). list prints their names, show prints one as sandlock\n"
	  "reads it (validated, in canonical TOML), delete removes its file." },
	{ "learn", verb_learn, "write the profile a command needs",
	  "sandlock learn [-o FILE] [--merge FILE] [--timeout SECS] -- CMD [ARGS...]",
	  "Run CMD once in an observing sandbox and write the TOML profile it needs (to FILE,\n"
	  "else stdout: the command's output then goes to stderr), for `sandlock run\n"
	  "--profile-file FILE`. Everything is readable; writes under $HOME (when CMD runs\n"
	  "beneath it, else under the current directory) and in a private TMPDIR are staged and\n"
	  "thrown away, writes elsewhere are refused; the network is open. The profile grants\n"
	  "the directories read and written, the executables, the TCP and UDP destinations,\n"
	  "the bound ports, and limits above the peaks seen. /, ~/.ssh, ~/.aws, ~/.gnupg and\n"
	  "~/.kube are never granted; /etc, /proc, /sys, /dev and $HOME whole only with a\n"
	  "warning.\n"
	  "  -o, --output FILE   write the profile to FILE\n"
	  "  --merge FILE        keep that profile's entries, as written, and add the new ones\n"
	  "  --timeout SECS      kill CMD after SECS; the profile holds what it did until then\n"
	  "Exits with CMD's status (124 after --timeout) once the profile is written." },
};

#define N_VERBS (sizeof(verbs) / sizeof(verbs[0]))

static const struct verb *find_verb(const char *name)
{
	for (size_t i = 0; i < N_VERBS; i++)
		if (strcmp(name, verbs[i].name) == 0)
			return &verbs[i];
	return NULL;
}

int cli_usage_error(const char *verb)
{
	const struct verb *v = find_verb(verb);

	return cli_error(EXIT_USAGE, "usage: %s", v && v->usage ? v->usage : verb);
}

/* VERB --help (or -h) anywhere before "--": its usage and paragraph, on stdout. */
static int verb_wants_help(const struct verb *v, int argc, char **argv)
{
	if (!v->about)
		return 0;
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return 1;
	return 0;
}

static int usage(FILE *f, int code)
{
	fprintf(f, "Usage: sandlock COMMAND [ARGS...]\n\nCommands:\n");
	for (size_t i = 0; i < N_VERBS; i++)
		fprintf(f, "  %-9s %s%s\n", verbs[i].name, verbs[i].help,
			verbs[i].fn ? "" : " (not supported yet)");
	fprintf(f, "\nsandlock COMMAND --help shows a command's options.\n");
	return code;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage(stderr, EXIT_USAGE);
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("sandlock %s\n", sandlock_version());
		return 0;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		return usage(stdout, 0);
	const struct verb *v = find_verb(argv[1]);
	if (v && !v->fn)
		return cli_error(EXIT_POLICY, "not supported yet: %s", v->name);
	if (v && verb_wants_help(v, argc - 1, argv + 1)) {
		printf("Usage: %s\n\n%s\n", v->usage, v->about);
		return 0;
	}
	if (v)
		return v->fn(argc - 1, argv + 1);
	cli_error(EXIT_USAGE, "unknown command '%s'", argv[1]);
	fprintf(stderr, "Try 'sandlock --help'.\n");
	return EXIT_USAGE;
}
