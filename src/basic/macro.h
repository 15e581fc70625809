/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * macro.h: attribute shorthands and the cleanup helpers every module uses. Depends on nothing
 * of sandlock; must stay free of project types.
 */
#pragma once

#include <errno.h>
#include <stdlib.h>

#define _public_ __attribute__((visibility("default")))
#define _noreturn_ __attribute__((noreturn))
#define _unused_ __attribute__((unused))
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _likely_(x) __builtin_expect(!!(x), 1)
#define _unlikely_(x) __builtin_expect(!!(x), 0)

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* Hand ownership of a pointer or fd out of a _cleanup_ variable. */
#define TAKE_PTR(p)                                                                                \
	({                                                                                         \
		__typeof__(p) _p_ = (p);                                                           \
		(p) = NULL;                                                                        \
		_p_;                                                                               \
	})
#define TAKE_FD(fd)                                                                                \
	({                                                                                         \
		int _fd_ = (fd);                                                                   \
		(fd) = -1;                                                                         \
		_fd_;                                                                              \
	})

static inline void freep(void *p)
{
	free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)

/* -errno of the last failed libc call, never 0 (a libc bug or a missing errno gives -EIO). */
static inline int negative_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

/* @x rounded up to a multiple of @a. */
#define ALIGN_TO(x, a) (((x) + (a)-1) / (a) * (a))
