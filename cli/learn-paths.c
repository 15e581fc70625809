/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * learn-paths: the paths a learned command used, made into the read and write grants of its
 * profile. A file read is granted as its directory, a listed directory as itself, a new file
 * as its nearest existing directory; siblings merge into their parent. Some places are never
 * granted (/, the user's keys and cloud credentials, a directory above $HOME) and some only
 * whole with a warning (/etc, /proc, /sys, /dev, $HOME): a file directly in one of those is
 * granted alone. Pure but for stat(2) of the paths seen: the unit tests link this file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "learn.h"

/* ---- a set of strings -------------------------------------------------------------------- */

static size_t hash(const char *s)
{
	size_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static char **slot_of(char **slots, size_t cap, const char *str)
{
	size_t i = hash(str) & (cap - 1);

	while (slots[i] && strcmp(slots[i], str) != 0)
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

static int grow(struct learn_set *s)
{
	size_t cap = s->cap ? s->cap * 2 : 64;
	char **slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < s->cap; i++)
		if (s->slots[i])
			*slot_of(slots, cap, s->slots[i]) = s->slots[i];
	free(s->slots);
	s->slots = slots;
	s->cap = cap;
	return 0;
}

int learn_set_add(struct learn_set *s, const char *str)
{
	if ((s->n + 1) * 2 > s->cap && grow(s) < 0)
		return -ENOMEM;
	char **slot = slot_of(s->slots, s->cap, str);
	if (*slot)
		return 0;
	if (!(*slot = strdup(str)))
		return -ENOMEM;
	s->n++;
	return 1;
}

int learn_set_has(const struct learn_set *s, const char *str)
{
	return s->cap && *slot_of(s->slots, s->cap, str) != NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char **learn_set_sorted(const struct learn_set *s)
{
	const char **v = calloc(s->n + 1, sizeof(*v));
	size_t n = 0;

	if (!v)
		return NULL;
	for (size_t i = 0; i < s->cap; i++)
		if (s->slots[i])
			v[n++] = s->slots[i];
	qsort(v, n, sizeof(*v), cmp_str);
	return v;
}

void learn_set_free(struct learn_set *s)
{
	for (size_t i = 0; i < s->cap; i++)
		free(s->slots[i]);
	free(s->slots);
	*s = (struct learn_set){ 0 };
}

/* ---- paths ------------------------------------------------------------------------------- */

int learn_beneath(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return path[0] == '/';
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* The parent of @path ("/a/b" -> "/a", "/a" -> "/"), a new string. */
static char *parent_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash && slash != path ? (size_t)(slash - path) : 1;

	return strndup(path, n);
}

char *learn_existing_dir(const char *path)
{
	char *p = strdup(path);
	struct stat st;

	while (p && strcmp(p, "/") != 0 && !(stat(p, &st) == 0 && S_ISDIR(st.st_mode))) {
		char *up = parent_of(p);
		free(p);
		p = up;
	}
	return p;
}

char *learn_home_form(const char *home, const char *path)
{
	char *s;

	if (!home || strcmp(home, "/") == 0 || !learn_beneath(path, home))
		return strdup(path);
	return asprintf(&s, "${HOME}%s", path + strlen(home)) < 0 ? NULL : s;
}

/* Never granted under $HOME: keys and cloud credentials. */
static const char *const home_secrets[] = { ".ssh", ".aws", ".gnupg", ".kube" };
/* Granted whole only with a warning. */
static const char *const broad_dirs[] = { "/etc", "/proc", "/sys", "/dev" };

enum learn_class learn_path_class(const char *home, const char *path)
{
	char secret[4096];

	if (strcmp(path, "/") == 0)
		return LEARN_NEVER;
	if (home && strcmp(home, "/") != 0) {
		for (size_t i = 0; i < sizeof(home_secrets) / sizeof(home_secrets[0]); i++) {
			snprintf(secret, sizeof(secret), "%s/%s", home, home_secrets[i]);
			if (learn_beneath(path, secret))
				return LEARN_NEVER;
		}
		if (strcmp(path, home) == 0)
			return LEARN_WARN;
		if (learn_beneath(home, path)) /* a directory holding $HOME holds its keys */
			return LEARN_NEVER;
	}
	for (size_t i = 0; i < sizeof(broad_dirs) / sizeof(broad_dirs[0]); i++)
		if (strcmp(path, broad_dirs[i]) == 0)
			return LEARN_WARN;
	return LEARN_PLAIN;
}

/* The devices every sandbox has (plan/landlock-own.c): no grant needed. */
static int default_device(const char *path)
{
	static const char *const devs[] = { "/dev/null", "/dev/zero", "/dev/full", "/dev/random",
					    "/dev/urandom" };

	for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++)
		if (strcmp(path, devs[i]) == 0)
			return 1;
	return 0;
}

/* /proc/PID, /proc/self, /proc/thread-self and beneath: another number next run. */
static int proc_of_process(const char *path)
{
	const char *c = path + strlen("/proc/");

	if (strncmp(path, "/proc/", strlen("/proc/")) != 0)
		return 0;
	size_t n = strcspn(c, "/");
	if ((n == 4 && strncmp(c, "self", 4) == 0) ||
	    (n == 11 && strncmp(c, "thread-self", 11) == 0))
		return 1;
	return n > 0 && strspn(c, "0123456789") == n;
}

static int refuse(struct learn_paths *lp, const char *path, const char *grant)
{
	char *line;

	if (asprintf(&line, "%s\t%s", path, grant) < 0)
		return -ENOMEM;
	int r = learn_set_add(&lp->refused, line);
	free(line);
	return r < 0 ? r : 0;
}

/* The grant @path asked @access needs (a new string), NULL with *@r 0 for none. */
static char *target_of(struct learn_paths *lp, const char *path, enum learn_access access, int *r)
{
	struct stat st;
	int exists = stat(path, &st) == 0;

	*r = 0;
	if (access == LEARN_ENTRY) {
		char *up = parent_of(path);
		char *dir = up ? learn_existing_dir(up) : NULL;
		free(up);
		return dir ? dir : (*r = -ENOMEM, NULL);
	}
	if (!exists && access == LEARN_READ)
		return NULL; /* ENOENT whatever the grants */
	if (!exists)
		return learn_existing_dir(path) ?: (*r = -ENOMEM, NULL);
	if (S_ISDIR(st.st_mode) || access == LEARN_WRITE)
		return strdup(path) ?: (*r = -ENOMEM, NULL);
	char *up = parent_of(path);
	if (up && learn_path_class(lp->home, up) != LEARN_PLAIN) {
		free(up);
		return strdup(path) ?: (*r = -ENOMEM, NULL);
	}
	return up ?: (*r = -ENOMEM, NULL);
}

int learn_paths_add(struct learn_paths *lp, const char *path, enum learn_access access)
{
	int r = 0;

	if (!path || path[0] != '/' || default_device(path))
		return 0;
	if (lp->skip_under && learn_beneath(path, lp->skip_under))
		return 0;
	if (learn_path_class(lp->home, path) == LEARN_NEVER)
		return refuse(lp, path, path);
	char *target = proc_of_process(path) ? strdup("/proc") : target_of(lp, path, access, &r);
	if (!target)
		return proc_of_process(path) ? -ENOMEM : r;
	enum learn_class c = learn_path_class(lp->home, target);
	if (c == LEARN_NEVER)
		r = refuse(lp, path, target);
	else if (c == LEARN_WARN && (r = learn_set_add(&lp->warned, target)) < 0)
		;
	else
		r = learn_set_add(access == LEARN_READ ? &lp->read : &lp->write, target);
	free(target);
	return r < 0 ? r : 0;
}

int learn_access_of(const char *access)
{
	static const char *const entry_calls[] = { "mkdir",    "mknod",	 "symlink", "unlink",
						   "rmdir",    "rename", "link",    "creat",
						   "renameat", "linkat", "mkdirat", "unlinkat" };

	if (!access)
		return -1;
	if (strcmp(access, "exec") == 0)
		return LEARN_READ;
	if (strncmp(access, "O_", 2) == 0) {
		if (strstr(access, "O_PATH"))
			return -1;
		if (strstr(access, "O_WRONLY") || strstr(access, "O_RDWR") ||
		    strstr(access, "O_TRUNC"))
			return LEARN_WRITE;
		return strstr(access, "O_CREAT") ? LEARN_WRITE : LEARN_READ;
	}
	for (size_t i = 0; i < sizeof(entry_calls) / sizeof(entry_calls[0]); i++)
		if (strcmp(access, entry_calls[i]) == 0)
			return LEARN_ENTRY;
	/* A file's own changes: the file itself (fs-meta.c's beneath a write grant). */
	static const char *const file_calls[] = { "truncate", "chmod",	  "chown",
						  "utimes",   "setxattr", "file_setattr" };
	for (size_t i = 0; i < sizeof(file_calls) / sizeof(file_calls[0]); i++)
		if (strcmp(access, file_calls[i]) == 0)
			return LEARN_WRITE;
	return -1;
}

/* ---- collapsing -------------------------------------------------------------------------- */

/* Whether a proper ancestor of @path is in @a or @b. */
static int covered(const char *path, const struct learn_set *a, const struct learn_set *b, int *r)
{
	char *p = strdup(path);
	int yes = 0;

	*r = p ? 0 : -ENOMEM;
	while (p && !yes && strcmp(p, "/") != 0) {
		char *up = parent_of(p);
		free(p);
		p = up;
		if (!p)
			*r = -ENOMEM;
		else
			yes = learn_set_has(a, p) || (b && learn_set_has(b, p));
	}
	free(p);
	return yes;
}

/* @s without the entries beneath another of @s or of @also. */
static int drop_covered(struct learn_set *s, const struct learn_set *also)
{
	const char **v = learn_set_sorted(s);
	struct learn_set out = { 0 };
	int r = v ? 0 : -ENOMEM;

	for (size_t i = 0; v && v[i] && r >= 0; i++) {
		int c = covered(v[i], s, also, &r);
		if (r >= 0 && !c && (!also || !learn_set_has(also, v[i])))
			r = learn_set_add(&out, v[i]);
	}
	free(v);
	if (r < 0) {
		learn_set_free(&out);
		return r;
	}
	learn_set_free(s);
	*s = out;
	return 0;
}

/* The parents (of class LEARN_PLAIN) of @merge_min or more entries of @s, into @merged. */
static int merge_targets(struct learn_paths *lp, const struct learn_set *s, size_t merge_min,
			 struct learn_set *merged)
{
	const char **v = learn_set_sorted(s);
	char **parents = v ? calloc(s->n + 1, sizeof(*parents)) : NULL;
	size_t n = s->n;
	int r = parents ? 0 : -ENOMEM;

	for (size_t i = 0; r == 0 && i < n; i++)
		if (!(parents[i] = parent_of(v[i])))
			r = -ENOMEM;
	if (r == 0)
		qsort(parents, n, sizeof(*parents), cmp_str);
	for (size_t i = 0, j; r >= 0 && i < n; i = j) {
		for (j = i; j < n && strcmp(parents[j], parents[i]) == 0; j++)
			;
		if (j - i >= merge_min && learn_path_class(lp->home, parents[i]) == LEARN_PLAIN)
			r = learn_set_add(merged, parents[i]);
	}
	for (size_t i = 0; parents && i < n; i++)
		free(parents[i]);
	free(parents);
	free(v);
	return r < 0 ? r : 0;
}

/* One round of merging: the parents of many replace them. 1 when one did, 0, -ENOMEM. */
static int merge_round(struct learn_paths *lp, struct learn_set *s, size_t merge_min)
{
	struct learn_set merged = { 0 };
	int r = merge_targets(lp, s, merge_min, &merged);

	if (r == 0 && merged.n) {
		const char **m = learn_set_sorted(&merged);
		for (size_t i = 0; m && m[i] && r >= 0; i++)
			r = learn_set_add(s, m[i]);
		r = !m ? -ENOMEM : r < 0 ? r : drop_covered(s, NULL);
		free(m);
	}
	int any = merged.n > 0;
	learn_set_free(&merged);
	return r < 0 ? r : any;
}

static int collapse_set(struct learn_paths *lp, struct learn_set *s, const struct learn_set *also,
			size_t merge_min)
{
	int r = drop_covered(s, also);

	while (r >= 0 && merge_min > 1 && (r = merge_round(lp, s, merge_min)) > 0)
		;
	return r < 0 ? r : drop_covered(s, also);
}

int learn_paths_collapse(struct learn_paths *lp, size_t merge_min)
{
	int r = collapse_set(lp, &lp->write, NULL, merge_min);

	return r < 0 ? r : collapse_set(lp, &lp->read, &lp->write, merge_min);
}

void learn_paths_free(struct learn_paths *lp)
{
	learn_set_free(&lp->read);
	learn_set_free(&lp->write);
	learn_set_free(&lp->refused);
	learn_set_free(&lp->warned);
}
