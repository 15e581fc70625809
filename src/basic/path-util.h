/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * path-util: comparisons of absolute, normalized paths (as realpath or readlink of a
 * descriptor gives them). Pure string functions: no syscalls.
 */
#pragma once

/* Whether @path is @root or beneath it ("/" holds everything; "/a" does not hold "/ab"). */
int path_is_beneath(const char *path, const char *root);

/* Whether the last component of @path (trailing slashes aside) is @name. */
int path_last_is(const char *path, const char *name);
