/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cow/store: the per-user store root (cow.h), where every branch lives unless fs_storage names
 * another place: one well-known directory per user, so that every sandbox's grants can leave it
 * out (plan/landlock.c carves it as it carves fs_denied paths), whatever else they grant.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cow.h"
#include "fd-util.h"
#include "macro.h"

int cow_store_root(char *buf, size_t size)
{
	int k = snprintf(buf, size, "%s/sandlock-%u", COW_STORE_PARENT, (unsigned)geteuid());
	return k < 0 || (size_t)k >= size ? -ENAMETOOLONG : 0;
}

int cow_store_open(int create)
{
	char root[64];

	int r = cow_store_root(root, sizeof(root));
	if (r < 0)
		return r;
	return private_dir_open(root, create);
}
