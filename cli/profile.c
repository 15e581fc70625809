/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * profile: `sandlock profile list | show NAME | delete NAME` over
 * the NAME.toml files of $XDG_CONFIG_HOME/sandlock/profiles (fallback ~/.config/sandlock/profiles),
 * and the
 * name-to-file rule `run -p NAME` shares.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int profile_dir(char *buf, size_t size)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	int n;

	if (xdg && xdg[0] == '/')
		n = snprintf(buf, size, "%s/sandlock/profiles", xdg);
	else if (home && home[0] == '/')
		n = snprintf(buf, size, "%s/.config/sandlock/profiles", home);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* A plain file name: no '/', not hidden, not empty. */
static int valid_name(const char *name)
{
	return name[0] && name[0] != '.' && !strchr(name, '/') && strlen(name) <= 200;
}

int profile_path(const char *name, char *buf, size_t size)
{
	char dir[4096];

	if (!valid_name(name))
		return -EINVAL;
	int r = profile_dir(dir, sizeof(dir));
	if (r < 0)
		return r;
	int n = snprintf(buf, size, "%s/%s.toml", dir, name);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int profile_list(void)
{
	char dir[4096];
	char **names = NULL;
	size_t n = 0;

	if (profile_dir(dir, sizeof(dir)) < 0)
		return cli_error(EXIT_POLICY, "no profile directory (set HOME or XDG_CONFIG_HOME)");
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (de->d_name[0] == '.' || len <= 5 || strcmp(de->d_name + len - 5, ".toml") != 0)
			continue;
		char **nv = realloc(names, (n + 1) * sizeof(*nv));
		if (!nv || !(nv[n] = strndup(de->d_name, len - 5))) {
			names = nv ? nv : names;
			break;
		}
		names = nv;
		n++;
	}
	if (d)
		closedir(d);
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		printf("%s\n", names[i]);
		free(names[i]);
	}
	free(names);
	return 0;
}

/* The profile as the library understands it: loaded, validated, dumped in canonical form. */
static int profile_show(const char *name)
{
	char path[4096];
	sandlock_policy_t *p = NULL;
	sandlock_error_t *err = NULL;
	char *text = NULL;

	if (profile_path(name, path, sizeof(path)) < 0)
		return cli_error(EXIT_USAGE, "profile show %s: not a profile name", name);
	int r = sandlock_policy_load_toml_file(path, &p, &err);
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
	char path[4096];

	if (profile_path(name, path, sizeof(path)) < 0)
		return cli_error(EXIT_USAGE, "profile delete %s: not a profile name", name);
	if (unlink(path) < 0)
		return cli_error(EXIT_POLICY, "%s: %s", path, strerror(errno));
	printf("deleted %s\n", path);
	return 0;
}

int verb_profile(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "list") == 0)
		return profile_list();
	if (argc == 3 && strcmp(argv[1], "show") == 0)
		return profile_show(argv[2]);
	if (argc == 3 && strcmp(argv[1], "delete") == 0)
		return profile_delete(argv[2]);
	if (argc == 2 && strcmp(argv[1], "--help") == 0) {
		printf("Usage: sandlock profile list | show NAME | delete NAME\n");
		return 0;
	}
	cli_error(EXIT_USAGE, "usage: sandlock profile list | show NAME | delete NAME");
	return EXIT_USAGE;
}
