/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * profile: `sandlock profile list | show NAME | delete NAME` over the NAME.toml files of the
 * library's profile directory (sandlock_profile_dir: $XDG_CONFIG_HOME/sandlock/profiles, else
 * ~/.config/sandlock/profiles).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static int profile_list(void)
{
	char **names = NULL;
	sandlock_error_t *err = NULL;

	int r = sandlock_profile_list(&names, &err);
	if (r < 0) {
		cli_error(EXIT_POLICY, "%s", err ? sandlock_error_message(err) : strerror(-r));
		sandlock_error_free(err);
		return EXIT_POLICY;
	}
	for (size_t i = 0; names[i]; i++)
		printf("%s\n", names[i]);
	sandlock_strv_free(names);
	return 0;
}

/* The profile as the library understands it: loaded, validated, dumped in canonical form. */
static int profile_show(const char *name)
{
	sandlock_policy_t *p = NULL;
	sandlock_error_t *err = NULL;
	char *text = NULL;

	char *path = NULL;
	int r = sandlock_profile_path(name, &path, NULL);
	sandlock_free(path);
	if (r == -EINVAL)
		return cli_error(EXIT_USAGE, "profile show %s: not a profile name", name);
	r = sandlock_policy_load_profile(name, &p, &err);
	if (r < 0) {
		cli_error(EXIT_POLICY, "%s", err ? sandlock_error_message(err) : strerror(-r));
		sandlock_error_free(err);
		return EXIT_POLICY;
	}
	r = sandlock_policy_dump_toml(p, &text);
	if (r == 0)
		fputs(text, stdout);
	sandlock_free(text);
	sandlock_policy_free(p);
	return r < 0 ? cli_error(EXIT_POLICY, "%s", strerror(-r)) : 0;
}

static int profile_delete(const char *name)
{
	char *path = NULL;

	int r = sandlock_profile_path(name, &path, NULL);
	if (r == -EINVAL)
		return cli_error(EXIT_USAGE, "profile delete %s: not a profile name", name);
	if (r < 0)
		return cli_error(EXIT_POLICY, "%s",
				 r == -ENOENT ? "no profile directory (set HOME or XDG_CONFIG_HOME)"
					      : strerror(-r));
	int status = 0;
	if (unlink(path) < 0)
		status = cli_error(EXIT_POLICY, "%s: %s", path, strerror(errno));
	else
		printf("deleted %s\n", path);
	sandlock_free(path);
	return status;
}

int verb_profile(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "list") == 0)
		return profile_list();
	if (argc == 3 && strcmp(argv[1], "show") == 0)
		return profile_show(argv[2]);
	if (argc == 3 && strcmp(argv[1], "delete") == 0)
		return profile_delete(argv[2]);
	return cli_usage_error("profile");
}
