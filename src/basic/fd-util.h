/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fd-util: descriptor helpers (close that keeps errno, cleanup attribute, pipes). No project
 * types.
 */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* Close @fd if >= 0, keep errno, return -1 (so "fd = safe_close(fd)" resets it). */
int safe_close(int fd);
void closep(int *fd);
#define _cleanup_close_ __attribute__((cleanup(closep)))

/* Close both ends of a pipe pair and reset them to -1. */
void close_pair(int pair[2]);

/* Read or write exactly @n bytes, retrying on EINTR and short transfers. Returns 0, -errno, or
 * -EPIPE (read: end of file before @n bytes). */
int read_full(int fd, void *buf, size_t n);
int write_full(int fd, const void *buf, size_t n);

/* Return @fd if it is above 2, else a O_CLOEXEC copy above 2 (closing @fd). A host that runs
 * with its stdio closed gets new descriptors in 0..2, which would collide with the child's
 * stdio. Returns the descriptor or -errno (@fd is closed then too). */
int fd_move_above_stdio(int fd);

/* Set or clear O_NONBLOCK. */
int fd_set_nonblock(int fd, int on);

/* A read-only descriptor (O_CLOEXEC, offset 0) of a sealed memfd named @name holding @len bytes
 * of @data: a file the receiver can read but never change. Returns it or -errno. */
/* Open directory @path (created 0700 when missing and @create), which must be the caller's
 * (euid) and closed to everyone else: a directory another user made first, or one others may
 * enter, would hold what they could read or replace. Never follows a symlink at the last
 * component. Returns the descriptor (O_CLOEXEC); -EPERM when it is not private, or -errno. */
int private_dir_open(const char *path, int create);

int memfd_sealed_readonly(const char *name, const void *data, size_t len);
