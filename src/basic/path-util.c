/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "path-util.h"

int path_is_beneath(const char *path, const char *root)
{
	size_t n = strlen(root);

	if (n == 1 && root[0] == '/')
		return 1;
	return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

int path_last_is(const char *path, const char *name)
{
	size_t len = strlen(path);

	while (len > 1 && path[len - 1] == '/')
		len--;
	size_t start = len;
	while (start > 0 && path[start - 1] != '/')
		start--;
	return len - start == strlen(name) && strncmp(path + start, name, len - start) == 0;
}
