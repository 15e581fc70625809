/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * strv: NULL-terminated string vectors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "strv.h"

size_t strv_length(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

int strv_push(char ***v, char *s)
{
	size_t n = strv_length(*v);
	char **nv = realloc(*v, (n + 2) * sizeof(char *));
	if (!nv)
		return -ENOMEM;
	nv[n] = s;
	nv[n + 1] = NULL;
	*v = nv;
	return 0;
}

int strv_extend(char ***v, const char *s)
{
	char *c = strdup(s);
	if (!c)
		return -ENOMEM;
	int r = strv_push(v, c);
	if (r < 0)
		free(c);
	return r;
}

char **strv_copy(char *const *v)
{
	size_t n = strv_length(v);
	char **c = calloc(n + 1, sizeof(char *));
	if (!c)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		c[i] = strdup(v[i]);
		if (!c[i])
			return strv_free(c);
	}
	return c;
}

int strv_contains(char *const *v, const char *s)
{
	for (size_t i = 0; v && v[i]; i++)
		if (strcmp(v[i], s) == 0)
			return 1;
	return 0;
}

char **strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
	return NULL;
}

void strv_freep(char ***v)
{
	*v = strv_free(*v);
}

int strv_env_set(char ***env, const char *name, const char *value)
{
	size_t len = strlen(name);
	_cleanup_free_ char *entry = malloc(len + strlen(value) + 2);
	if (!entry)
		return -ENOMEM;
	sprintf(entry, "%s=%s", name, value);

	for (size_t i = 0; *env && (*env)[i]; i++)
		if (strncmp((*env)[i], name, len) == 0 && (*env)[i][len] == '=') {
			free((*env)[i]);
			(*env)[i] = TAKE_PTR(entry);
			return 0;
		}
	int r = strv_push(env, entry);
	if (r == 0)
		entry = NULL;
	return r;
}

void strv_env_unset(char **env, const char *name)
{
	size_t len = strlen(name), k = 0;

	for (size_t i = 0; env && env[i]; i++) {
		if (strncmp(env[i], name, len) == 0 && env[i][len] == '=')
			free(env[i]);
		else
			env[k++] = env[i];
	}
	if (env)
		env[k] = NULL;
}

const char *strv_env_get(char *const *env, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; env && env[i]; i++)
		if (strncmp(env[i], name, len) == 0 && env[i][len] == '=')
			return env[i] + len + 1;
	return NULL;
}
