/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * profiles: the profile directory and the name rule (a plain file name: not empty, no '/', not
 * starting with '.', at most 200 bytes). Strings and vectors are the caller's. -EINVAL (a bad
 * name), -ENOENT (neither $XDG_CONFIG_HOME nor $HOME is absolute), -ENOMEM, readdir's errors.
 */
#pragma once

#include "error.h"

int profiles_dir(char **ret_dir, struct sandlock_error **reterr);
int profiles_path(const char *name, char **ret_path, struct sandlock_error **reterr);
/* The names of the NAME.toml files, sorted; empty when the directory does not exist. */
int profiles_list(char ***ret_names, struct sandlock_error **reterr);
