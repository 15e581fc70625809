/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * landlock-compat: the Landlock UAPI up to ABI 7, for building against kernel headers older than
 * the running kernel (Debian 12 ships 6.1 headers: ABI 3). Values are the kernel's
 * include/uapi/linux/landlock.h; each is defined only when the installed header lacks it.
 */
#pragma once

#include <stdint.h>
#include <sys/syscall.h>
#include <linux/landlock.h>

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

/* Our own copy of the attribute struct with every field up to ABI 6; the kernel accepts a larger
 * struct whose unknown tail is zero, so this works on every ABI. */
struct sl_landlock_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped;	     /* ABI 6 */
};

struct sl_landlock_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
};

#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
/* ABI 2 */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
/* ABI 3 */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
/* ABI 4 */
#define SL_LANDLOCK_RULE_NET_PORT 2
#define SL_LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#define SL_LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
/* ABI 5 */
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
/* ABI 6 */
#define SL_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define SL_LANDLOCK_SCOPE_SIGNAL (1ULL << 1)

/* Rights of ABI 1, all of which Landlock can handle on every version. */
#define SL_LANDLOCK_FS_ABI1                                                                        \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |                              \
	 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR |                              \
	 LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |                          \
	 LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |                              \
	 LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |                              \
	 LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |                            \
	 LANDLOCK_ACCESS_FS_MAKE_SYM)

/* Rights that may be granted on a non-directory (the kernel rejects the others with EINVAL). */
#define SL_LANDLOCK_FS_FILE                                                                        \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |                              \
	 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |                              \
	 LANDLOCK_ACCESS_FS_IOCTL_DEV)
