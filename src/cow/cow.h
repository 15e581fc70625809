/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cow: the copy-on-write branch of a workdir (the engine; the syscalls are handled in
 * supervisor/handlers/cow.c). No mount, no namespace: the branch is a directory, "upper", laid
 * out like the workdir ("lower"), plus what the engine remembers per path:
 *  - a whiteout: the lower entry there is deleted in the branch;
 *  - opaque: a directory made in the branch where the lower one was deleted: none of the lower
 *    entries beneath it shows;
 *  - touched: the path was changed by the run; its lower entry as it was then ("before").
 * Reads see upper, else lower unless whited out (or beneath an opaque or upper-only directory).
 * A change copies the entry up first (parents made as they are in the lower). The branch is
 * then committed into the workdir (under an exclusive lock on it, crash-safe: a marker in the
 * branch until the last step), aborted (removed), kept or deferred.
 * Paths handed to the engine are relative to the workdir, canonical ("" is the workdir itself,
 * no ".", "..", "//", trailing "/"). Only the supervisor loop changes a branch (a large copy's
 * bytes are written on a worker, into a file beside the upper layer: cow_copy_run).
 * Every write into the branch and every read of one layer is made here: the workdir's
 * handlers (supervisor/handlers/cow*.c) resolve a name and call in, and hold no layer's
 * descriptor; the plan makes and removes a branch (cow_open, cow_abort), the sandbox ends it
 * (cow_seal, cow_changes, cow_commit, cow_save). cow-internal.h is the engine's own.
 */
#pragma once

#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "error.h"
#include "path-util.h"

enum cow_kind {
	COW_KIND_FILE,
	COW_KIND_DIR,
	COW_KIND_SYMLINK,
	COW_KIND_OTHER, /* FIFO, socket, device node */
};

/* An entry of a change set: what was at a path (the sandlock_entry_t of the API). */
struct cow_entry {
	int present;
	enum cow_kind kind;
	uint32_t mode; /* permission bits */
	uint64_t size; /* files only */
	int has_digest;
	uint8_t digest[32]; /* files only */
	char *target;	    /* symlinks only */
};

struct cow_change {
	char *path; /* relative to the workdir */
	struct cow_entry before, after;
};

struct cow_mark;

struct cow {
	char *lower;		 /* the workdir's real path */
	char *dir;		 /* the branch: <fs_storage>/<name>-XXXXXX */
	char *upper;		 /* <dir>/upper */
	int lower_fd, upper_fd;	 /* O_PATH directories */
	uint64_t max_disk;	 /* bytes the upper layer may hold; 0: no quota */
	uint64_t used;		 /* bytes of the files in the upper layer */
	struct cow_mark **marks; /* open addressing by path */
	size_t n_marks, cap_marks;
	char **anchors;	   /* stand-ins made in the workdir: 'd' + path (cow_anchor), 'f' + path
			    * (cow_anchor_file) */
	ino_t *anchor_ino; /* per anchor: the inode linked ('f'), else 0 */
	size_t n_anchors;
	/* The branch's lock (<dir>/lock, held while the branch is in use: a branch whose lock is
	 * free was left by a sandlock that is gone) and the record of the anchors made
	 * (<dir>/anchors, cow_anchor_record), by which the next run takes back what a killed one
	 * left in the workdir (cow_clean_stale). */
	int lock_fd, journal_fd;
	struct cow_charged { /* max_disk: the size each branch file was charged for */
		dev_t dev;
		ino_t ino;
		int64_t size;
	} * charged;
	size_t n_charged;
	/* The upper layer as the run left it (cow_seal), sorted by path, and the entries found
	 * there that the supervisor did not make. */
	struct cow_sealed *sealed;
	size_t n_sealed;
	char **foreign;
	size_t n_foreign;
	int is_sealed;
	uint64_t gen; /* bumped by every change of the branch (cow_changed) */
	/* The last merged listing served (handlers/cow-look.c), reused while @gen holds: a listing
	 * read in several getdents calls is made once. Freed by cow_done with @listing_free. */
	struct cow_listing {
		char *rel;
		uint64_t gen;
		void *v;
		size_t n;
	} listing;
	void (*listing_free)(void *v, size_t n);
};

/* @path (absolute) relative to directory @root ("" for @root itself), or NULL when it does not
 * lie beneath it. */
static inline const char *cow_rel_to(const char *root, const char *path)
{
	if (!path_is_beneath(path, root))
		return NULL;
	path += strcmp(root, "/") == 0 ? 0 : strlen(root);
	return *path == '/' ? path + 1 : path;
}

/* Where a path lies in the merged view. */
enum cow_layer {
	COW_NONE,  /* absent */
	COW_UPPER, /* in the branch */
	COW_LOWER, /* in the workdir, unchanged */
};

struct cow_node {
	enum cow_layer layer;
	struct stat st;	   /* lstat of the entry, when present */
	int lower_beneath; /* a directory whose lower entries show beneath it */
};

/* The per-user store root, where branches live when fs_storage names no other place:
 * COW_STORE_PARENT/sandlock-<euid>, 0700, the user's. On disk (not /tmp, often a tmpfs, and
 * what sandboxes are most often granted: a grant that holds the root costs the carve). */
#define COW_STORE_PARENT "/var/tmp"
int cow_store_root(char *buf, size_t size);
/* The store root opened (made first with @create when missing), never through a symlink: its
 * descriptor, or -EPERM where it is not a private directory of the user's, -errno. */
int cow_store_open(int create);

/* private_tmp (cow/tmp.c): the sandbox's own temporary directory, <store root>/tmp-<name>-XXXXXX
 * holding a lock file (locked while its sandlock lives) and t/, the directory the sandbox is
 * granted (0700) and given as TMPDIR. The store root is out of every sandbox's reach, so no
 * other sandbox sees it. */
struct cow_tmp {
	char *dir;   /* <store root>/tmp-<name>-XXXXXX */
	char *path;  /* dir/t */
	int lock_fd; /* dir/lock, flock'd */
};
/* Make one for the sandbox named @name (NULL: "sandbox"), after removing those whose sandlock
 * died (their lock free). 0 or -errno with a message. */
int cow_tmp_make(struct cow_tmp *t, const char *name, struct sandlock_error **reterr);
/* Remove it with everything in it (never through a symlink) and release it; NULL-safe. */
void cow_tmp_remove(struct cow_tmp *t);

/* Make a branch of @workdir in @storage (NULL: the store root), named after @name. */
int cow_open(struct cow *c, const char *workdir, const char *storage, const char *name,
	     uint64_t max_disk, struct sandlock_error **reterr);
/* Free what the branch holds in memory (the directories stay as they are). */
void cow_done(struct cow *c);

/* Path @rel of the merged view, not following a final symlink. -ENOENT (absent, or a parent
 * is), -ENOTDIR (a parent is no directory). Follows no symlink on the way either: the caller
 * resolves (cow_resolve). */
int cow_lookup(struct cow *c, const char *rel, struct cow_node *n);

/* The result of resolving a name as the child would. */
struct cow_res {
	int inside;	   /* the name is the workdir or beneath it */
	char rel[4096];	   /* inside: its path relative to the workdir */
	struct cow_node n; /* inside: the entry (layer COW_NONE: absent, its parent exists) */
	int trailing;	   /* the name ended in '/' */
	int last;  /* its last component as given (cow_resolve_arg): 0 a name, 1 ".", 2 "..",
		    * 3 none ("/") */
	int magic; /* the name is a descriptor's magic link itself (/proc/self/fd/N) */
};

/* Resolve @abs (an absolute name in the child's view) as the kernel would, following a final
 * symlink with @follow; symlinks inside the workdir are read in the merged view, components
 * outside it are taken as they read (lexically). 0, or -ENOENT, -ENOTDIR, -ELOOP,
 * -ENAMETOOLONG for a name the kernel would refuse the same way; -EXDEV: the name leaves the
 * workdir through a symlink made in the run. */
int cow_resolve(struct cow *c, const char *abs, int follow, struct cow_res *res);

/* The branch is about to change (every change goes through here): cached listings are stale. */
static inline void cow_changed(struct cow *c)
{
	c->gen++;
}
/* Record @rel's entry as it is now, the first time the run changes it (cow_changed too). */
int cow_touch(struct cow *c, const char *rel);
/* cow_touch, where @known (when given) is @rel's entry as cow_lookup gave it just now. */
int cow_touch_node(struct cow *c, const char *rel, const struct cow_node *known);
/* Make @rel's parents in the upper layer (as the lower ones are). */
int cow_parents_up(struct cow *c, const char *rel);
/* Copy @rel up (a file's bytes too, unless @truncate), touched first. 0 or -errno (-ENOSPC
 * beyond max_disk). */
int cow_copy_up(struct cow *c, const char *rel, int truncate);

/* A file's bytes beyond this are not copied on the supervisor loop (cow_copy_up_start). */
#define COW_COPY_INLINE_MAX (1024 * 1024)
/* A copy-up made off the loop: begun by cow_copy_up_start, its bytes copied by cow_copy_run
 * (on any thread), put in place by cow_copy_land (on the loop again). */
struct cow_copy {
	int in, out;	    /* the lower file; its copy, beside the upper layer */
	int dir;	    /* the branch directory (O_PATH) */
	int truncate;	    /* (copy_entry: no bytes to copy) */
	struct stat st;	    /* the lower file's lstat */
	char rel[PATH_MAX]; /* where it goes */
};
/* cow_copy_up, unless @cp is given and @rel is a lower file of more than COW_COPY_INLINE_MAX
 * bytes to copy: then it is touched, its parents made, its size charged and its copy begun in
 * @cp, and the result is 1. 0 (copied, or nothing to copy), or -errno. */
int cow_copy_up_start(struct cow *c, const char *rel, int truncate, struct cow_copy *cp);
/* The bytes of @cp (any thread): 0, -errno, -ECANCELED once @cancel is set (checked every
 * 16 MiB). */
int cow_copy_run(struct cow_copy *cp, const atomic_int *cancel);
/* Put @cp's copy in place in the upper layer when @result (cow_copy_run's) is 0; otherwise, or
 * if that fails, take it back (removed, uncharged). Closes what @cp holds. */
int cow_copy_land(struct cow *c, struct cow_copy *cp, int result);
/* Delete @rel from the merged view (its upper entry removed, a whiteout when the lower has
 * one). @dir: rmdir's checks. */
int cow_remove(struct cow *c, const char *rel, int dir);
/* Make directory @rel in the upper layer with exactly @mode (the supervisor's umask undone;
 * the setgid bit and a default ACL's modes as the kernel gives them), opaque where a lower one
 * was deleted. -EEXIST where the merged view holds @rel. */
int cow_mkdir(struct cow *c, const char *rel, mode_t mode);
/* A workdir file of more than COW_COPY_INLINE_MAX bytes that renaming @rel would copy (@rel
 * itself, or one beneath it): its path in @out (1), or 0 for none; -errno. */
int cow_large_lower(struct cow *c, const char *rel, char *out, size_t size);
/* Whether cow_rename(@from, @to, @flags) would move anything, changing nothing: 0 (it would),
 * 1 (the same name: nothing to do), or the error it would give. */
int cow_rename_check(struct cow *c, const char *from, const char *to, unsigned flags);
/* Rename @from to @to in the merged view (@flags: RENAME_NOREPLACE). */
int cow_rename(struct cow *c, const char *from, const char *to, unsigned flags);
/* The merged entries of directory @rel (no "." and ".."), in name order: by @cb (a non-zero
 * return stops), or with @cb NULL as a NULL-terminated array of names in *(char ***)@arg. */
int cow_list(struct cow *c, const char *rel,
	     int (*cb)(const char *name, unsigned char type, uint64_t ino, void *arg), void *arg);
/* A directory of the branch a process enters (chdir): the working directory is the kernel's,
 * so the workdir gets an empty directory at @rel (and each missing parent), taken away again
 * by cow_unanchor() when the sandbox ends. Nothing is ever written into it (Landlock grants the
 * workdir no write; the branch holds its entries). */
int cow_anchor(struct cow *c, const char *rel);
/* A file of the branch a process executes (execve): the kernel runs the name it resolves, so
 * the workdir gets a hard link to the branch's file at @rel (its missing parents anchored),
 * taken away by cow_unanchor(). -EACCES where the workdir holds another entry there, a symlink
 * lies on the way, the file is set-user-ID or set-group-ID (with group execute: anyone who can
 * reach the workdir would run it with the sandbox user's rights) or the branch lies on another
 * filesystem. */
int cow_anchor_file(struct cow *c, const char *rel);
/* cow_anchor_file for a file of the branch that replaces one of the workdir (so its name is
 * taken there): a link to it under another name of the same length in the same directory,
 * left out of the merged listings, written to @alias (its path; @size bytes at most). Reused for
 * the same file. -EACCES where the branch lies on another filesystem or no free name is found.
 */
int cow_anchor_alias(struct cow *c, const char *rel, char *alias, size_t size);
/* An exec of @rel, when it names an alias (cow_anchor_alias: the caller's memory may keep the
 * alias's name, a vfork parent's too): the alias is made to link the file it stands for as it
 * is now (a rebuild replaced it). 0 (also for any other name), -ENOENT where that file is
 * gone, -errno. */
int cow_alias_refresh(struct cow *c, const char *rel);
/* Take back the copy-up of @rel just made for a call that then failed (the workdir's entry
 * shows again). */
void cow_uncopy(struct cow *c, const char *rel);
/* Whether the upper entry at @rel is the copy of the workdir's entry at the same name, still
 * there: its lstat in @ret (whose owner and mode the kernel would judge a change by). */
int cow_original(struct cow *c, const char *rel, struct stat *ret);
/* Whether the upper entry at @rel is the copy-up of the workdir inode @st names (dev, ino):
 * what a descriptor of that workdir file stands for now. */
int cow_copy_of(struct cow *c, const char *rel, const struct stat *st);
/* ---- The calls the handlers make (cow/layer.c, cow/ops.c, cow/xattr.c) ----
 * The handlers never hold a layer's descriptor: they resolve a name (cow_resolve), then read
 * the entry in the layer that holds it, or change it in the branch, here. @rel is a resolved
 * entry's path (cow_res's rel); a final symlink is never followed. Each returns 0 (or what it
 * says) or -errno, the error of the call the kernel would make (openat, fstatat, ...). */

/* Reads of @rel in @layer (cow_node's: COW_UPPER or COW_LOWER; COW_NONE: -EBADF). */
/* Open it with @flags (O_NOFOLLOW and O_CLOEXEC added): a descriptor the caller owns. */
int cow_layer_open(struct cow *c, enum cow_layer layer, const char *rel, int flags);
int cow_layer_stat(struct cow *c, enum cow_layer layer, const char *rel, struct stat *st);
/* statx with @flags (AT_STATX_SYNC_TYPE's) and @mask. */
int cow_layer_statx(struct cow *c, enum cow_layer layer, const char *rel, int flags, unsigned mask,
		    struct statx *stx);
/* faccessat with @mode and @flags (AT_EACCESS): a write is allowed as the mode says, whatever
 * filesystem holds the layer (EROFS is no refusal: the write goes to the branch). */
int cow_layer_access(struct cow *c, enum cow_layer layer, const char *rel, int mode, int flags);
/* A symlink's target into @buf (@size bytes at most, no NUL): its length. */
ssize_t cow_layer_readlink(struct cow *c, enum cow_layer layer, const char *rel, char *buf,
			   size_t size);
/* Extended attribute @name's value into @buf (@size 0: its size only): its size. */
ssize_t cow_layer_getxattr(struct cow *c, enum cow_layer layer, const char *rel, const char *name,
			   void *buf, size_t size);
/* The names of its extended attributes into @buf (@size 0: their size only). */
ssize_t cow_layer_listxattr(struct cow *c, enum cow_layer layer, const char *rel, char *buf,
			    size_t size);
/* The kernel's permission check of a change of its user.* attributes: write access by its
 * mode and ACL, for the supervisor's effective ids. */
int cow_xattr_may_change(struct cow *c, enum cow_layer layer, const char *rel);
/* Whether the directory @rel is made in has a default ACL (in the branch, else in the
 * workdir, whose attributes the branch's copy of it takes): the kernel then gives the modes
 * of what is made there from the ACL, not from the umask. */
int cow_parent_has_default_acl(const struct cow *c, const char *rel);
/* The workdir's kernel object (FIFO, socket, device node) at @rel, reached without following
 * a symlink, when it still is the one @want names (dev, ino; the host may have replaced it):
 * an O_PATH descriptor of it the caller owns, else -EPERM. Its metadata is its own: the caller
 * changes it through the descriptor. */
int cow_lower_object(struct cow *c, const char *rel, const struct stat *want);

/* Make @rel, absent from the merged view (@known: its cow_node, or NULL), in the upper layer
 * (touched, parents made first): a regular file opened with @flags (O_EXCL and O_NOFOLLOW
 * added), whose descriptor the caller owns; exactly @mode, as cow_mkdir. */
int cow_create(struct cow *c, const char *rel, const struct cow_node *known, int flags,
	       mode_t mode);
/* The same, made by mknod and not opened: a regular file (FIFOs, sockets and device nodes are
 * the kernel's, never the branch's). */
int cow_mknod(struct cow *c, const char *rel, const struct cow_node *known, mode_t mode);
/* Make @rel a symlink to @target (charged its length under max_disk). */
int cow_symlink(struct cow *c, const char *target, const char *rel, const struct cow_node *known);
/* Link @to, absent, to @from, a file of the upper layer (cow_copy_up first). */
int cow_link(struct cow *c, const char *from, const char *to);
/* Changes of @rel's upper entry (cow_copy_up first; the caller refuses a symlink's mode). A
 * mode with a set-user-ID or set-group-ID bit takes the workdir's links to the file for an exec
 * away first (cow_unanchor_ino). */
int cow_chmod(struct cow *c, const char *rel, mode_t mode);
int cow_chown(struct cow *c, const char *rel, uid_t uid, gid_t gid);
/* @ts as utimensat takes it (NULL: now). */
int cow_utimens(struct cow *c, const char *rel, const struct timespec ts[2]);
/* Truncate @rel's upper file (touched first) to @len, its growth charged under max_disk first
 * (a shrink is not refunded). */
int cow_truncate(struct cow *c, const char *rel, int64_t len);
/* Set extended attribute @name of @rel's upper entry to @value (@size bytes; @flags:
 * XATTR_CREATE, XATTR_REPLACE), its name and value charged under max_disk; remove it. The
 * caller checks what the kernel would (cow_xattr_may_change) first. */
int cow_setxattr(struct cow *c, const char *rel, const char *name, const void *value, size_t size,
		 int flags);
int cow_removexattr(struct cow *c, const char *rel, const char *name);

/* Take the workdir's links to branch file @ino (cow_anchor_file, cow_anchor_alias) away now:
 * it is about to be given a set-user-ID or set-group-ID bit, which every user who can reach
 * the workdir would run it with. A later exec of it is refused (EACCES). */
void cow_unanchor_ino(struct cow *c, ino_t ino);
/* Remove the anchors (the directories still empty), deepest first, and their record. */
void cow_unanchor(struct cow *c);
/* Note anchor @rel of @type ('d', 'f', 'a'; @target: the branch file linked) with the inode made
 * or linked, in the branch's record of anchors, as soon as it is made. */
int cow_anchor_record(struct cow *c, char type, const char *rel, const struct stat *st,
		      const char *target);
/* The stand-ins that branches of @storage left by a sandlock that is gone (their lock free)
 * hold in their workdir (only the workdir of @lower_fd when >= 0): each removed if it still is
 * the very directory (empty) or link recorded, never by its name alone; the record then. */
void cow_clean_stale(const char *storage, int lower_fd);
/* Charge branch file (@dev, @ino) up to @size bytes (what it was charged for before is not
 * charged again): -ENOSPC where max_disk would be passed. */
int cow_charge_file(struct cow *c, dev_t dev, ino_t ino, int64_t size);
/* Charge branch file (@dev, @ino) @more bytes on top of what it was charged for (space a call
 * allocates that its size does not show): -ENOSPC where max_disk would be passed. */
int cow_charge_file_more(struct cow *c, dev_t dev, ino_t ino, int64_t more);
/* Account @delta bytes to the upper layer: -ENOSPC where max_disk would be passed. */
int cow_charge(struct cow *c, int64_t delta);
/* What max_disk charges an entry other than a regular file of the branch: a directory one
 * block, a symlink its target's length (@st: its lstat; 0 for anything else). */
#define COW_DIR_COST 4096
int64_t cow_entry_cost(const struct stat *st);
/* An entry of the upper layer (@st, its lstat then) is gone: what it was charged, refunded (a
 * regular file by cow_uncharge_file). */
void cow_uncharge_entry(struct cow *c, const struct stat *st);

/* Record the upper layer as the run left it (once nothing of the sandbox runs, before the
 * change set is read; the workdir's stand-ins taken away first): every entry, by identity, and
 * those the supervisor did not make. */
int cow_seal(struct cow *c);
/* Whether the upper layer is exactly as sealed (sealing it now if it was not), holding nothing
 * the supervisor did not make: 0, or -EPERM naming the entries that differ (or -errno). */
int cow_seal_check(struct cow *c, struct sandlock_error **reterr);
void cow_seal_free(struct cow *c);

/* The change set: every touched path whose entry differs, sorted by path. */
int cow_changes(struct cow *c, struct cow_change **ret, size_t *ret_n);
void cow_changes_free(struct cow_change *v, size_t n);

/* Merge the branch into the workdir (exclusive lock on it, waiting up to @wait_ms), then remove
 * the branch. On failure the branch stays on disk, marked. */
int cow_commit(struct cow *c, int wait_ms, struct sandlock_error **reterr);
/* Remove the branch. */
int cow_abort(struct cow *c);
/* Write what the branch remembers into it (for keep, defer): <dir>/whiteouts. */
int cow_save(struct cow *c);
