/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * expand: ${HOME} in profile path fields, exactly as the sandbox reference's "Variable
 * expansion" says. The grammar is strict so that a later release cannot change what an existing
 * profile grants: ${HOME} is the only meaning a '$' can have, and a leading '~' is an error.
 * The home directory is $HOME when usable, else the passwd entry of the real uid; the root
 * ("/", "//", "/tmp/..", a link to "/") is nobody's home.
 */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "expand.h"

/* Whether absolute path @h names the root lexically: only "/", ".", "..", and empty components
 * ("//", "/.", "/tmp/..", "/./"). */
static int lexically_root(const char *h)
{
	size_t depth = 0;

	for (const char *c = h; *c;) {
		while (*c == '/')
			c++;
		size_t n = strcspn(c, "/");
		if (n == 0 || (n == 1 && c[0] == '.'))
			;
		else if (n == 2 && c[0] == '.' && c[1] == '.')
			depth = depth ? depth - 1 : 0;
		else
			depth++;
		c += n;
	}
	return depth == 0;
}

/* An absolute path that is not the root, written in any way (lexically) or reached through
 * symbolic links: a grant over ${HOME} must never be one over everything. */
static int usable_home(const char *h)
{
	if (!h || h[0] != '/' || lexically_root(h))
		return 0;
	char *real = realpath(h, NULL);
	int root = real && strcmp(real, "/") == 0;
	free(real);
	return !root;
}

int home_directory(char *buf, size_t size)
{
	const char *env = getenv("HOME");

	if (usable_home(env) && strlen(env) < size) {
		strcpy(buf, env);
		return 0;
	}
	struct passwd pw, *res = NULL;
	char pwbuf[4096];
	if (getpwuid_r(getuid(), &pw, pwbuf, sizeof(pwbuf), &res) == 0 && res &&
	    usable_home(pw.pw_dir) && strlen(pw.pw_dir) < size) {
		strcpy(buf, pw.pw_dir);
		return 0;
	}
	return -ENOENT;
}

static int valid_name(const char *s, size_t n)
{
	if (n == 0 ||
	    !((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
		return 0;
	for (size_t i = 1; i < n; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return 1;
}

/* Check the ${...} at @p (p[0] == '$'); returns its length, or -EINVAL with @err filled. */
static int check_variable(const char *p, char *err, size_t errlen)
{
	if (p[1] != '{') {
		snprintf(err, errlen, "a '$' can only start ${HOME}");
		return -EINVAL;
	}
	const char *end = strchr(p + 2, '}');
	if (!end) {
		snprintf(err, errlen, "unterminated '${'");
		return -EINVAL;
	}
	size_t n = (size_t)(end - (p + 2));
	if (!valid_name(p + 2, n)) {
		snprintf(err, errlen, "malformed variable name '${%.*s}'", (int)n, p + 2);
		return -EINVAL;
	}
	if (n != 4 || strncmp(p + 2, "HOME", 4) != 0) {
		snprintf(err, errlen, "unknown variable '${%.*s}' (the only one is ${HOME})",
			 (int)n, p + 2);
		return -EINVAL;
	}
	return (int)n + 3;
}

int expand_home(const char *in, int forbid_home, char **ret, char *err, size_t errlen)
{
	char home[4096] = "";
	size_t cap = strlen(in) + 1, len = 0;

	if (in[0] == '~') {
		snprintf(err, errlen, "a leading '~' is not expanded: write ${HOME}");
		return -EINVAL;
	}
	for (const char *p = in; (p = strchr(p, '$')); p++) {
		int n = check_variable(p, err, errlen);
		if (n < 0)
			return n;
		if (forbid_home) {
			snprintf(
				err, errlen,
				"${HOME} is an error in a profile with a chroot: write the path in "
				"full");
			return -EINVAL;
		}
		if (!home[0] && home_directory(home, sizeof(home)) < 0) {
			snprintf(err, errlen,
				 "${HOME}: no usable home directory ($HOME and the passwd entry)");
			return -ENOENT;
		}
		cap += strlen(home);
		p += n - 1;
	}
	char *out = malloc(cap);
	if (!out)
		return -ENOMEM;
	for (const char *p = in; *p;) {
		if (*p == '$') { /* validated above: always ${HOME} */
			strcpy(out + len, home);
			len += strlen(home);
			p += 7;
		} else
			out[len++] = *p++;
	}
	out[len] = '\0';
	*ret = out;
	return 0;
}
