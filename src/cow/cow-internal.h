/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cow-internal: what the engine's files share (cow.c, copy.c), beside cow.h.
 */
#pragma once

#include <stdatomic.h>
#include <stdint.h>

#include "cow.h"

/* Copy @from's bytes into @to, in steps of at most @step bytes, stopping with -ECANCELED once
 * @cancel (when given) is set. */
int cow_copy_bytes(int from, int to, uint64_t size, uint64_t step, const atomic_int *cancel);
/* The extended attributes of file @from given to file @to, those the supervisor may set
 * (user.*; others where it holds the capability); the rest are not copied, as with cp -a. */
void cow_copy_xattrs(int from, int to);
/* Remember the mode and extended attributes of the branch's copy of the workdir's directory
 * @rel as made: the commit gives the workdir's what the run changed of them since. */
void cow_snapshot_dir(struct cow *c, const char *rel);
/* Extended attribute @name of file @from given to @to (as it is there; none: nothing). */
void cow_copy_xattr(int from, int to, const char *name);
/* cow_copy_xattrs, then what @to holds of the attributes a copy takes (user.*, the ACLs) that
 * @from does not, removed: a directory's, merged by a commit. */
void cow_sync_xattrs(int from, int to);
/* cow_copy_xattrs for directories @from under @fromdir and @to under @todir ("": itself). */
void cow_copy_dir_xattrs(int fromdir, const char *from, int todir, const char *to);
/* Make @to under @todir a symlink with the target of @from under @fromdir. */
int cow_copy_symlink(int fromdir, const char *from, int todir, const char *to);
/* Copy the entry at @from (under @fromfd) to @to in the upper layer (a new name). */
int cow_copy_entry(struct cow *c, int fromfd, const char *from, const char *to, int truncate);
/* A regular file of the upper layer (@st, its lstat) is gone: its size refunded, its inode
 * charged from nothing (a file made next may reuse it). */
void cow_uncharge_file(struct cow *c, const struct stat *st);
/* The upper entry @rel is a copy of the workdir's entry @from (its inode): cow_copy_of. */
void cow_note_copy(struct cow *c, const char *rel, const struct stat *from);
