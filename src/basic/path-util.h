/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * path-util: comparisons of absolute, normalized paths (as realpath or readlink of a
 * descriptor gives them). Pure string functions: no syscalls.
 */
#pragma once

#include <stddef.h>

/* Whether @path is @root or beneath it ("/" holds everything; "/a" does not hold "/ab"). */
int path_is_beneath(const char *path, const char *root);

/* Whether @path is beneath one of @roots (a NULL-terminated list, or NULL: none). */
int path_is_beneath_any(const char *path, char *const *roots);

/* Whether the last component of @path (trailing slashes aside) is @name. */
int path_last_is(const char *path, const char *name);

/* The first @len bytes of @in, a path as /proc/self/mounts and mountinfo write it (space, tab,
 * newline and backslash as "\ooo"), unescaped into @out of @size bytes (NUL-terminated,
 * truncated to fit). @out may be @in. */
void path_unescape_mount(const char *in, size_t len, char *out, size_t size);

/* Whether @path (a real path) or one of its parents is the inode @other names (stat): a grant
 * of @other, by whatever mount it is reached, covers @path in Landlock. */
int path_holds_inode(const char *path, const char *other);
