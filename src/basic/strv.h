/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * strv: NULL-terminated string vectors owned by their holder. No project types.
 */
#pragma once

#include <stddef.h>

size_t strv_length(char *const *v);
/* Append a copy of @s. Returns 0 or -ENOMEM (then @v is unchanged). */
int strv_extend(char ***v, const char *s);
/* Append @s, taking ownership of it on success. */
int strv_push(char ***v, char *s);
/* A deep copy of @v (NULL copies to an empty vector). Returns NULL on ENOMEM. */
char **strv_copy(char *const *v);
int strv_contains(char *const *v, const char *s);
/* Environment vectors ("NAME=VALUE"): set (replacing an earlier NAME in place) and look up. */
int strv_env_set(char ***env, const char *name, const char *value);
const char *strv_env_get(char *const *env, const char *name);
/* Remove every NAME=... entry (an environment may hold one name twice). */
void strv_env_unset(char **env, const char *name);
char **strv_free(char **v);
void strv_freep(char ***v);
#define _cleanup_strv_free_ __attribute__((cleanup(strv_freep)))
