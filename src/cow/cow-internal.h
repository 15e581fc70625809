/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cow-internal: what the engine's files share, beside cow.h (the supervisor's header). Only
 * src/cow/ includes it.
 */
#pragma once

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include <sys/stat.h>

#include "cow.h"

/* What the branch knows of one path (cow.c's marks). */
struct cow_mark {
	char *path;
	int whiteout; /* the lower entry here is hidden */
	/* A directory of the workdir whose copy the run gave another mode, then removed: that
	 * mode (0: none), whose owner bits the commit lends the workdir's (widen). */
	mode_t gone_mode;
	mode_t parent_seen, parent_lower; /* a whiteout's: its directory's mode in the run's
					   * view then, and the workdir's as the run found it */
	dev_t parent_dev;		  /* (and which directory that is: widen) */
	ino_t parent_ino;
	dev_t gone_dev; /* and the workdir's directory it was a copy of */
	ino_t gone_ino;
	int hidden; /* an anchor under another name (cow_anchor_alias): unlisted, no change */
	/* The upper entry here is a copy of this workdir inode (cow_note_copy): what a
	 * descriptor of that inode now stands for. */
	dev_t from_dev;
	ino_t from_ino;
	ino_t copy_ino; /* the upper entry made by that copy (a later one at the name is not) */
	/* A directory of the workdir copied into the branch: its mode and extended attributes
	 * as copied (cow_snapshot_dir), which the commit compares with the copy's then. */
	int snapped;
	int snap_failed; /* the attributes could not be listed: a commit cannot tell, fails */
	mode_t snap_mode;
	char **snap_names;
	uint64_t *snap_hash;
	int touched; /* the run changed this path: @before holds what it was */
	struct cow_entry before;
	/* A workdir file's digest is taken when the change set is read, not on the loop at the
	 * first touch: from the workdir's file, still the one seen then (this stat). */
	int lazy;
	struct stat before_st;
};

/* A path for the *at() calls relative to a layer's directory: "" is the directory itself. */
static inline const char *cow_at(const char *rel)
{
	return *rel ? rel : ".";
}

/* @name beneath directory @rel ("": the workdir itself), into @out. */
static inline void cow_join(char *out, size_t size, const char *rel, const char *name)
{
	snprintf(out, size, "%s%s%s", rel, *rel ? "/" : "", name);
}

/* A descriptor of @rel's parent under @root, reached without following any symlink (-ENOENT,
 * -ENOTDIR, -ELOOP where it is gone or no longer a directory), and @rel's last component. */
int cow_parent_of(int root, const char *rel, const char **name);
/* Give @rel, just made in the upper layer (@fd: open, or -1), exactly @mode (cow_mkdir). */
int cow_mode_exactly(struct cow *c, int fd, const char *rel, mode_t mode);
/* Make and lock the branch's lock file (cow/stale.c): 0 or -errno. */
int cow_lock_branch(struct cow *c);
/* The mark of @rel, or NULL; cow_mark_add: found or made (NULL: out of memory). */
struct cow_mark *cow_mark_get(struct cow *c, const char *rel);
struct cow_mark *cow_mark_add(struct cow *c, const char *rel);
/* Whether the workdir's entry at @rel is deleted in the branch (a whiteout mark). */
int cow_whited_out(struct cow *c, const char *rel);
/* Free what @e holds (a symlink's target) and zero it (changes.c). */
void cow_entry_clear(struct cow_entry *e);
/* Remove @name under @dir, a directory with everything beneath it. */
int cow_remove_tree(int dir, const char *name);
/* The extended attribute @name of directory @fd as a hash of its value (0: absent). */
uint64_t cow_xattr_hash(int fd, const char *name);
/* The names of directory @fd's extended attributes into *@ret (NULL-terminated; NULL for
 * none): 0, or -errno (nothing known). */
int cow_xattr_names(int fd, char ***ret);
/* The names in directory @rel under @dirfd (without "." and ".."), NULL-terminated. */
int cow_names_of(int dirfd, const char *rel, char ***ret, size_t *ret_n);

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
