/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * expand: ${HOME} in profile path fields (see expand.c for the grammar).
 */
#pragma once

#include <stddef.h>

/* The home directory of whoever runs sandlock: $HOME when it is an absolute path other than
 * "/", else the passwd entry of the real uid under the same rule. -ENOENT when neither is. */
int home_directory(char *buf, size_t size);

/* Expand ${HOME} in @in into a new string *@ret. Errors (-EINVAL, with a one-line reason in
 * @err): any other ${NAME} (case-sensitive), a malformed name, an unterminated "${", a '$' not
 * starting ${HOME}, a leading '~', and ${HOME} at all when @forbid_home (a path inside a
 * chroot). -ENOENT: no usable home. -ENOMEM. */
int expand_home(const char *in, int forbid_home, char **ret, char *err, size_t errlen);
