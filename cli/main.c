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

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv); /* NULL: comes with a later release */
	const char *help;
} verbs[] = {
	{ "run", verb_run, "run a command confined" },
	{ "check", verb_check, "report what this kernel supports" },
	{ "ps", verb_ps, "list running sandboxes" },
	{ "inspect", verb_inspect, "print a running sandbox's policy" },
	{ "kill", verb_kill, "kill a running sandbox" },
	{ "profile", verb_profile, "manage profiles" },
	{ "learn", NULL, "write the profile a command needs" },
};

static int usage(FILE *f, int code)
{
	fprintf(f, "Usage: sandlock COMMAND [ARGS...]\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
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
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		if (strcmp(argv[1], verbs[i].name) != 0)
			continue;
		if (!verbs[i].fn)
			return cli_error(EXIT_POLICY, "not supported yet: %s", verbs[i].name);
		return verbs[i].fn(argc - 1, argv + 1);
	}
	cli_error(EXIT_USAGE, "unknown command '%s'", argv[1]);
	fprintf(stderr, "Try 'sandlock --help'.\n");
	return EXIT_USAGE;
}
