/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * profiles: the profile directory ($XDG_CONFIG_HOME/sandlock/profiles, else
 * ~/.config/sandlock/profiles) and the name-to-file rule, shared by the CLI (-p, `profile`) and
 * the SDKs (load_profile, list_profiles) through api-profile.c, so a profile name means one file
 * everywhere.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "profiles.h"
#include "strv.h"

int profiles_dir(char **ret_dir, struct sandlock_error **reterr)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	char *dir = NULL;
	int n;

	if (!ret_dir)
		return error_set(reterr, -EINVAL, "profile directory: NULL argument");
	/* The XDG rule: a relative $XDG_CONFIG_HOME is ignored. */
	if (xdg && xdg[0] == '/')
		n = asprintf(&dir, "%s/sandlock/profiles", xdg);
	else if (home && home[0] == '/')
		n = asprintf(&dir, "%s/.config/sandlock/profiles", home);
	else
		return error_set(reterr, -ENOENT,
				 "no profile directory (set HOME or XDG_CONFIG_HOME)");
	if (n < 0)
		return error_set(reterr, -ENOMEM, "out of memory");
	*ret_dir = dir;
	return 0;
}

/* A plain file name: not empty, not hidden, no '/'. */
static int profile_name_ok(const char *name)
{
	return name && name[0] && name[0] != '.' && !strchr(name, '/') && strlen(name) <= 200;
}

int profiles_path(const char *name, char **ret_path, struct sandlock_error **reterr)
{
	char *dir = NULL, *path = NULL;

	if (!ret_path)
		return error_set(reterr, -EINVAL, "profile path: NULL argument");
	if (!profile_name_ok(name))
		return error_set(reterr, -EINVAL, "%s: not a profile name", name ? name : "(null)");
	int r = profiles_dir(&dir, reterr);
	if (r < 0)
		return r;
	r = asprintf(&path, "%s/%s.toml", dir, name);
	free(dir);
	if (r < 0)
		return error_set(reterr, -ENOMEM, "out of memory");
	*ret_path = path;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int profiles_list(char ***ret_names, struct sandlock_error **reterr)
{
	char *dir = NULL, **names = NULL;
	struct dirent *de;
	int r;

	if (!ret_names)
		return error_set(reterr, -EINVAL, "profile list: NULL argument");
	if ((r = profiles_dir(&dir, reterr)) < 0)
		return r;
	DIR *d = opendir(dir);
	if (!d && errno != ENOENT) {
		r = error_set(reterr, -errno, "%s: %s", dir, strerror(errno));
		free(dir);
		return r;
	}
	free(dir);
	if (!(names = calloc(1, sizeof(*names))))
		r = -ENOMEM;
	while (r == 0 && d && (de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (!profile_name_ok(de->d_name) || len <= 5 ||
		    strcmp(de->d_name + len - 5, ".toml") != 0)
			continue;
		char *n = strndup(de->d_name, len - 5);
		r = n ? strv_push(&names, n) : -ENOMEM;
		if (r < 0)
			free(n);
	}
	if (d)
		closedir(d);
	if (r < 0) {
		strv_free(names);
		return error_set(reterr, r, "out of memory");
	}
	size_t n = 0;
	while (names[n])
		n++;
	qsort(names, n, sizeof(*names), cmp_names);
	*ret_names = names;
	return 0;
}
