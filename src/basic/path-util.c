/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>
#include <sys/stat.h>

#include "path-util.h"

int path_is_beneath(const char *path, const char *root)
{
	size_t n = strlen(root);

	if (n == 1 && root[0] == '/')
		return 1;
	return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

int path_is_beneath_any(const char *path, char *const *roots)
{
	for (size_t i = 0; roots && roots[i]; i++)
		if (path_is_beneath(path, roots[i]))
			return 1;
	return 0;
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

static int is_octal(char c)
{
	return c >= '0' && c <= '7';
}

void path_unescape_mount(const char *in, size_t len, char *out, size_t size)
{
	size_t k = 0;

	for (size_t i = 0; i < len && k + 1 < size; i++) {
		if (in[i] == '\\' && i + 3 < len && in[i + 1] >= '0' && in[i + 1] <= '3' &&
		    is_octal(in[i + 2]) && is_octal(in[i + 3])) {
			out[k++] = (char)((in[i + 1] - '0') * 64 + (in[i + 2] - '0') * 8 +
					  (in[i + 3] - '0'));
			i += 3;
		} else {
			out[k++] = in[i];
		}
	}
	if (size)
		out[k] = '\0';
}

int path_holds_inode(const char *path, const char *other)
{
	struct stat o, st;
	char buf[4096];

	if (stat(other, &o) < 0 || strlen(path) >= sizeof(buf))
		return 0;
	strcpy(buf, path);
	for (;;) {
		if (stat(buf, &st) == 0 && st.st_dev == o.st_dev && st.st_ino == o.st_ino)
			return 1;
		char *slash = strrchr(buf, '/');
		if (!slash || strcmp(buf, "/") == 0)
			return 0;
		if (slash == buf)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
}
