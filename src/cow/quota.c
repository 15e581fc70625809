/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cow/quota: max_disk, what the upper layer holds, charged before the change that makes it
 * (cow.h): a regular file by the size each inode was charged for (a file charged once is not
 * charged again for the same bytes, and a hard link adds nothing), a directory one block, a
 * symlink its target. A charge past the quota is -ENOSPC and changes nothing; a refund never
 * takes the count below zero.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "cow-internal.h"
#include "macro.h"

int cow_charge_file(struct cow *c, dev_t dev, ino_t ino, int64_t size)
{
	size_t i = 0;

	for (; i < c->n_charged; i++)
		if (c->charged[i].dev == dev && c->charged[i].ino == ino)
			break;
	if (i == c->n_charged) {
		struct cow_charged *v = realloc(c->charged, (i + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		c->charged = v;
		c->charged[c->n_charged++] = (struct cow_charged){ dev, ino, 0 };
	}
	if (size <= c->charged[i].size)
		return 0;
	int r = cow_charge(c, size - c->charged[i].size);
	if (r == 0)
		c->charged[i].size = size;
	return r;
}

int cow_charge_file_more(struct cow *c, dev_t dev, ino_t ino, int64_t more)
{
	int64_t have = 0;

	for (size_t i = 0; i < c->n_charged; i++)
		if (c->charged[i].dev == dev && c->charged[i].ino == ino)
			have = c->charged[i].size;
	if (more > INT64_MAX - have)
		return -ENOSPC;
	return cow_charge_file(c, dev, ino, have + more);
}

void cow_uncharge_file(struct cow *c, const struct stat *st)
{
	int64_t refund = 0; /* what it was charged for, exactly (not its size: never charged) */

	for (size_t i = 0; i < c->n_charged; i++)
		if (c->charged[i].dev == st->st_dev && c->charged[i].ino == st->st_ino) {
			refund = c->charged[i].size;
			c->charged[i].size = 0;
		}
	(void)cow_charge(c, -refund);
}

int64_t cow_entry_cost(const struct stat *st)
{
	if (S_ISDIR(st->st_mode))
		return COW_DIR_COST;
	return S_ISLNK(st->st_mode) ? MAX((int64_t)st->st_size, (int64_t)1) : 0;
}

void cow_uncharge_entry(struct cow *c, const struct stat *st)
{
	if (S_ISREG(st->st_mode)) {
		if (st->st_nlink <= 1)
			cow_uncharge_file(c, st);
	} else if (S_ISDIR(st->st_mode) || st->st_nlink <= 1) /* (a symlink's last name) */
		(void)cow_charge(c, -cow_entry_cost(st));
}

int cow_charge(struct cow *c, int64_t delta)
{
	if (delta > 0 && c->max_disk && c->used + (uint64_t)delta > c->max_disk)
		return -ENOSPC;
	if (delta < 0 && (uint64_t)-delta > c->used)
		c->used = 0;
	else
		c->used += (uint64_t)delta;
	return 0;
}
