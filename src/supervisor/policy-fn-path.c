/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy-fn-path: deny_path and allow_path (the callback's), the set of identities they keep,
 * the check of a descriptor against it (the file, and each directory above the one it was found
 * in, walked by ".." on descriptors, so no name is trusted), and the gate an exec passes while
 * the set holds anything. The opens are made on the child's behalf (policy-fn-open.c).
 *
 * An exec cannot be made on another process's behalf: the kernel resolves the name again after
 * the CONTINUE. So the name is walked here component by component on descriptors (O_PATH |
 * O_NOFOLLOW, symlinks followed here, bounded), the file and its directories are checked, and
 * the exec goes on only when nothing the walk went through can change before the kernel walks
 * it: the name's bytes are memory no other task can write (policy-fn-argv.c), it is absolute (a
 * working directory or a descriptor may be shared with another process), and no directory on
 * the way lets the sandbox make, remove or move an entry (the recorded ruleset, judge_missing).
 * Anything else is refused (EACCES): fail closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/landlock.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "child.h"
#include "events.h"
#include "fd-util.h"
#include "judge.h"
#include "macro.h"
#include "policy-fn-internal.h"
#include "supervisor.h"
#include "supervisor/args.h"

#define WALK_MAX 64 /* directories walked up, or through, at most */
#define HOPS_MAX 40 /* symlinks followed, as the kernel's MAXSYMLINKS */

int policy_fn_denies_paths(const struct supervisor *sv)
{
	return sv->pfn && atomic_load(&sv->pfn->n_deny) > 0;
}

/* Under the lock: the entry of identity @st, or -1. */
static int deny_find(const struct policy_fn *st, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < st->n_deny; i++)
		if (st->deny[i].dev == dev && st->deny[i].ino == ino)
			return (int)i;
	return -1;
}

static int deny_add(struct policy_fn *st, const struct stat *s, const char *path)
{
	if (deny_find(st, s->st_dev, s->st_ino) >= 0)
		return 0;
	if (st->n_deny == POLICY_FN_DENY_MAX)
		return -ENOSPC;
	char *text = strdup(path);
	if (!text)
		return -ENOMEM;
	st->deny[st->n_deny] = (struct pfn_deny){ s->st_dev, s->st_ino, text };
	atomic_store(&st->n_deny, st->n_deny + 1);
	return 0;
}

/* allow_path: the entry of the file @path names now, else (gone, or another file) the one
 * deny_path was given the same text for. */
static int deny_remove(struct policy_fn *st, const struct stat *s, const char *path)
{
	int i = s ? deny_find(st, s->st_dev, s->st_ino) : -1;

	for (size_t k = 0; i < 0 && k < st->n_deny; k++)
		if (strcmp(st->deny[k].text, path) == 0)
			i = (int)k;
	if (i < 0)
		return -ENOENT;
	free(st->deny[i].text);
	st->deny[i] = st->deny[st->n_deny - 1];
	atomic_store(&st->n_deny, st->n_deny - 1);
	return 0;
}

int policy_fn_ctx_path(sandlock_policy_ctx_t *ctx, int deny, const char *path)
{
	struct stat s;

	if (!ctx || !path || path[0] != '/')
		return -EINVAL;
	struct policy_fn *st = ctx->st;
	const struct supervisor *sv = st->sv;
	/* A workdir's names and the files made beneath a writable grant holding a denied path are
	 * the supervisor's own opens, made on names it resolves itself: not checked here. */
	if (deny && (sv->cow || (sv->plan && sv->plan->fs.write_roots)))
		return -EOPNOTSUPP;
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);
	int found = fd >= 0 && fstat(fd, &s) == 0;
	if (deny && !found)
		return errno == ENOENT || errno == ENOTDIR ? -ENOENT : -EACCES;
	pthread_mutex_lock(&st->lock);
	int r = deny && st->nested ? -EOPNOTSUPP
		: deny		   ? deny_add(st, &s, path)
				   : deny_remove(st, found ? &s : NULL, path);
	pthread_mutex_unlock(&st->lock);
	return r;
}

int policy_fn_nest(struct supervisor *sv, const struct seccomp_notif *req)
{
	struct policy_fn *st = sv->pfn;

	pthread_mutex_lock(&st->lock);
	int refuse = st->n_deny > 0;
	if (!refuse)
		st->nested = 1;
	pthread_mutex_unlock(&st->lock);
	if (!refuse)
		return 0;
	struct event ev = {
		.nr = req->data.nr,
		.category = EVENT_PROCESS,
		.pid = (pid_t)req->pid,
		.verdict = SANDLOCK_VERDICT_DENY,
		.error = EPERM,
		.reason = "a Landlock domain of the sandbox's own is refused while deny_path is in "
			  "force",
	};
	events_emit(sv, &ev);
	return -EPERM;
}

void pfn_deny_free(struct policy_fn *st)
{
	for (size_t i = 0; i < st->n_deny; i++)
		free(st->deny[i].text);
	atomic_store(&st->n_deny, 0);
}

/* The text of the entry of identity (@dev, @ino) into @text: 1 when there is one. */
static int deny_has(struct policy_fn *st, dev_t dev, ino_t ino, char *text, size_t size)
{
	pthread_mutex_lock(&st->lock);
	int i = deny_find(st, dev, ino);
	if (i >= 0)
		snprintf(text, size, "%s", st->deny[i].text);
	pthread_mutex_unlock(&st->lock);
	return i >= 0;
}

int pfn_denied(struct policy_fn *st, int fd, int dir, char *text, size_t size)
{
	struct stat s;

	if (fd >= 0) {
		if (fstat(fd, &s) < 0)
			return negative_errno();
		if (deny_has(st, s.st_dev, s.st_ino, text, size))
			return 1;
	}
	if (dir < 0)
		return 0;
	/* Each directory above, by "..": the root is its own parent. */
	_cleanup_close_ int cur = fcntl(dir, F_DUPFD_CLOEXEC, 3);
	dev_t pdev = 0;
	ino_t pino = 0;
	for (int n = 0; cur >= 0; n++) {
		if (fstat(cur, &s) < 0)
			return negative_errno();
		if (n > 0 && s.st_dev == pdev && s.st_ino == pino)
			return 0;
		if (n == 4 * WALK_MAX)
			return -ELOOP; /* cannot tell: fail closed */
		if (deny_has(st, s.st_dev, s.st_ino, text, size))
			return 1;
		pdev = s.st_dev;
		pino = s.st_ino;
		int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		close(cur);
		cur = up;
	}
	return negative_errno();
}

void pfn_deny_event(struct supervisor *sv, const struct seccomp_notif *req, const char *path,
		    const char *reason)
{
	struct event ev = {
		.nr = req->data.nr,
		.category = EVENT_FILE,
		.pid = (pid_t)req->pid,
		.verdict = SANDLOCK_VERDICT_DENY,
		.error = EACCES,
		.path = path,
		.reason = reason,
	};
	events_emit(sv, &ev);
}

void pfn_denied_event(struct supervisor *sv, const struct seccomp_notif *req, const char *path,
		      const char *entry)
{
	char reason[PATH_MAX + 64];

	snprintf(reason, sizeof(reason), "denied by the policy_fn (deny_path %s)", entry);
	pfn_deny_event(sv, req, path, reason);
}

/* ---- exec ------------------------------------------------------------------------------ */

/* The rights that change a directory's entries: with any of them the sandbox could swap a name
 * there between this walk and the kernel's. */
#define DIR_CHANGE                                                                                 \
	(LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |                          \
	 LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |                              \
	 LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |                              \
	 LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |                            \
	 LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER)

/* The identities of directory @dir and of each directory above it, to the root, after the
 * @n already in @chain: 0 with *@n grown, or -errno. */
static int dir_chain(int dir, struct file_id chain[static WALK_MAX + 1], size_t *n)
{
	struct stat s;
	size_t first = *n;
	_cleanup_close_ int cur = fcntl(dir, F_DUPFD_CLOEXEC, 3);

	while (cur >= 0) {
		if (fstat(cur, &s) < 0)
			return negative_errno();
		if (*n > first && chain[*n - 1].dev == s.st_dev && chain[*n - 1].ino == s.st_ino)
			return 0;
		if (*n == WALK_MAX + 1)
			return -ELOOP;
		chain[(*n)++] = (struct file_id){ .dev = s.st_dev, .ino = s.st_ino };
		int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		close(cur);
		cur = up;
	}
	return negative_errno();
}

/* Whether the sandbox can change directory @dir's entries: 1, 0, or -errno (fail closed). */
static int dir_changeable(struct supervisor *sv, int dir)
{
	struct file_id chain[WALK_MAX + 1];
	size_t n = 0;

	if (!sv->plan || !sv->plan->fs.ll.active)
		return -EPERM; /* the ruleset was not recorded: cannot tell */
	int r = dir_chain(dir, chain, &n);
	if (r < 0)
		return r;
	return judge_missing(&sv->plan->fs.ll, chain, n, DIR_CHANGE) != DIR_CHANGE;
}

/* Whether the sandbox can write the file @fd (found in directory @dir): what it reads there,
 * a "#!" line, the program headers, could change before the kernel reads it. -ETXTBSY when it
 * can, 0, or -errno (fail closed). */
static int file_writable(struct supervisor *sv, int fd, int dir)
{
	struct file_id chain[WALK_MAX + 1];
	struct stat s;
	size_t n = 1;

	if (!sv->plan || !sv->plan->fs.ll.active)
		return -EPERM;
	if (fstat(fd, &s) < 0)
		return negative_errno();
	chain[0] = (struct file_id){ .dev = s.st_dev, .ino = s.st_ino };
	int r = dir_chain(dir, chain, &n);
	if (r < 0)
		return r;
	return judge_missing(&sv->plan->fs.ll, chain, n, LANDLOCK_ACCESS_FS_WRITE_FILE) ? 0
											: -ETXTBSY;
}

struct walk {
	int root; /* the child's root */
	int dir;  /* the directory the next component is looked up in */
	int file; /* what the name reaches, once walked */
	int hops;
	char rest[PATH_MAX];
};

/* Whether descriptors @a and @b are of the same file: 1, 0, or -errno. */
static int same_file(int a, int b)
{
	struct stat x, y;

	if (fstat(a, &x) < 0 || fstat(b, &y) < 0)
		return negative_errno();
	return x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* Take the next component of w->rest into @name: its length (0: none left). */
static size_t next_component(struct walk *w, char name[static NAME_MAX + 1])
{
	const char *p = w->rest + strspn(w->rest, "/");
	size_t len = strcspn(p, "/");

	if (len > NAME_MAX)
		return (size_t)-1;
	memcpy(name, p, len);
	name[len] = '\0';
	memmove(w->rest, p + len, strlen(p + len) + 1);
	return len;
}

/* A symlink @fd met on the way: its target goes in front of what is left of the name. */
static int walk_link(struct walk *w, int fd)
{
	char target[PATH_MAX], tail[PATH_MAX];

	ssize_t k = readlinkat(fd, "", target, sizeof(target) - 1);
	if (k <= 0 || ++w->hops > HOPS_MAX)
		return k < 0 ? negative_errno() : -ELOOP;
	target[k] = '\0';
	snprintf(tail, sizeof(tail), "%s", w->rest);
	if (snprintf(w->rest, sizeof(w->rest), "%s/%s", target, tail) >= (int)sizeof(w->rest))
		return -ENAMETOOLONG;
	if (target[0] == '/') {
		int root = fcntl(w->root, F_DUPFD_CLOEXEC, 3);
		if (root < 0)
			return negative_errno();
		close(w->dir);
		w->dir = root;
	}
	return 0;
}

/* Walk w->rest from w->dir to w->file (w->dir: its directory), every directory a name is
 * looked up in checked unchangeable (-EROFS where it is not). */
static int walk_name(struct supervisor *sv, struct walk *w)
{
	char name[NAME_MAX + 1];
	struct stat s;

	for (int steps = 0; steps < 4 * WALK_MAX + HOPS_MAX; steps++) {
		size_t len = next_component(w, name);
		if (len == (size_t)-1)
			return -ENAMETOOLONG;
		if (len == 0)
			return w->file >= 0 ? 0 : -ENOENT;
		if (strcmp(name, ".") == 0)
			continue;
		/* ".." at the child's root is that root (a chroot of its own holds it), as in the
		 * kernel's walk; from here it would reach the supervisor's parent directory. */
		int top = strcmp(name, "..") == 0 ? same_file(w->dir, w->root) : 0;
		if (top < 0)
			return top;
		if (top)
			continue;
		int fd = openat(w->dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			/* Not there: the kernel finds nothing either, unless the name can be made
			 * meanwhile. */
			int err = negative_errno(), ch = dir_changeable(sv, w->dir);
			return ch == 0 ? err : ch < 0 ? ch : -EROFS;
		}
		int r = fstat(fd, &s) < 0 ? negative_errno() : dir_changeable(sv, w->dir);
		struct statfs fs;
		/* A /proc link (/proc/self/exe, .../cwd) jumps where its text may not lead. */
		if (r == 0 && S_ISLNK(s.st_mode) &&
		    (fstatfs(fd, &fs) < 0 || fs.f_type == PROC_SUPER_MAGIC))
			r = -EXDEV;
		else if (r == 0 && S_ISLNK(s.st_mode))
			r = walk_link(w, fd);
		else if (r == 0 && w->rest[strspn(w->rest, "/")]) {
			close(w->dir); /* more to walk: the next directory */
			w->dir = TAKE_FD(fd);
		} else if (r == 0) {
			w->file = TAKE_FD(fd);
		}
		safe_close(fd);
		if (r != 0)
			return r < 0 ? r : -EROFS;
	}
	return -ELOOP;
}

/* Walk @name from the child's root (w->root) to the file it reaches and check that file:
 * 0, 1 (denied: the entry's text in @entry), or -errno. What the file makes the kernel load
 * with no call seen here, a script's interpreter or an ELF's (the loader), is checked the
 * same way: @depth counts the scripts met (-1: an ELF's interpreter, which loads nothing
 * more). */
static int exec_target(struct supervisor *sv, struct walk *w, const char *name, int depth,
		       char *entry, size_t size)
{
	char interp[PATH_MAX];
	int kind = 0;

	snprintf(w->rest, sizeof(w->rest), "%s", name);
	w->dir = fcntl(w->root, F_DUPFD_CLOEXEC, 3);
	int r = w->dir < 0 ? negative_errno() : walk_name(sv, w);
	if (r == 0)
		r = pfn_denied(sv->pfn, w->file, w->dir, entry, size);
	/* What is read of the file must stay what the kernel reads. */
	if (r == 0)
		r = file_writable(sv, w->file, w->dir);
	if (r == 0 && depth >= 0)
		kind = pfn_exec_interp(w->file, interp, sizeof(interp));
	w->dir = safe_close(w->dir);
	w->file = safe_close(w->file);
	if (r != 0 || kind <= 0)
		return r != 0 ? r : kind;
	/* A relative interpreter is looked up from the working directory, which another
	 * process may share (CLONE_FS); the kernel gives up past five interpreters. */
	if (interp[0] != '/')
		return -ENOEXEC;
	if (depth == 5)
		return -ELOOP;
	return exec_target(sv, w, interp, kind == PFN_INTERP_ELF ? -1 : depth + 1, entry, size);
}

/* The denial reason of exec_target's answer @r into @why. */
static void exec_why(int r, const char *entry, char *why, size_t size)
{
	static const struct {
		int r;
		const char *what;
	} whys[] = {
		{ -EROFS, "an exec from a directory the sandbox can change" },
		{ -EXDEV, "an exec through a /proc link" },
		{ -ETXTBSY, "an exec of a file the sandbox can write" },
		{ -ENOEXEC, "an exec of a script whose interpreter has a relative name" },
	};

	if (r == 1) {
		snprintf(why, size, "denied by the policy_fn (deny_path %s)", entry);
		return;
	}
	for (size_t i = 0; i < ELEMENTSOF(whys); i++)
		if (whys[i].r == r) {
			snprintf(why, size, "%s is refused while deny_path is in force",
				 whys[i].what);
			return;
		}
	snprintf(why, size, "deny_path: the exec's name could not be checked (%s)", strerror(-r));
}

/* The exec @req names: 0 (may go on), or -errno with the reason written in @why. */
static int exec_check(struct supervisor *sv, const struct seccomp_notif *req, char *path,
		      size_t size, char *why, size_t why_size)
{
	struct path_args pa;
	char entry[PATH_MAX];
	int n;
	const char *rest;

	if (path_args_decode(&req->data, &pa) < 0)
		return -EACCES;
	int r = child_read_path(sv, req, pa.path, path, size);
	if (r < 0)
		return r;
	uint64_t range[1][2] = { { pa.path, pa.path + strlen(path) + 1 } };
	if (path[0] != '/' || own_fd_name(path, &n, &rest) ||
	    (req->data.nr == SYS_execveat && (req->data.args[4] & AT_EMPTY_PATH))) {
		snprintf(why, why_size,
			 "an exec by a relative name or a descriptor is refused "
			 "while deny_path is in force");
		return -EACCES;
	}
	/* A caller alone on its memory is single-threaded: its tid is its process's. */
	if (!pfn_argv_alone((pid_t)req->pid) ||
	    !pfn_argv_private((pid_t)req->pid, (const uint64_t(*)[2])range, 1)) {
		snprintf(why, why_size,
			 "an exec whose name could change before the exec is "
			 "refused while deny_path is in force");
		return -EACCES;
	}
	struct walk w = { .root = child_path_open(sv, req, AT_FDCWD, "/", 0, 0),
			  .dir = -1,
			  .file = -1 };
	if (w.root < 0)
		return w.root;
	r = exec_target(sv, &w, path, 0, entry, sizeof(entry));
	safe_close(w.root);
	if (r == -ENOENT || r == -ENOTDIR)
		return 0; /* the kernel's answer: it finds nothing to exec either */
	if (r != 0)
		exec_why(r, entry, why, why_size);
	return r == 0 ? 0 : -EACCES;
}

static int exec_gate(struct supervisor *sv, const struct seccomp_notif *req,
		     struct seccomp_notif_resp *resp)
{
	char path[PATH_MAX] = "", why[PATH_MAX + 96] = "";

	int r = exec_check(sv, req, path, sizeof(path), why, sizeof(why));
	if (r == NOTIF_GONE)
		return NOTIF_DEFERRED; /* nobody to answer */
	if (r == 0 && !notif_id_valid(sv->listener, req->id))
		return NOTIF_DEFERRED;
	if (r == 0) {
		/* CONTINUE (kept from the chain): the file, the interpreters it loads and every
		 * directory above each were checked, and the kernel's walk of the names meets
		 * what this walk met: the name is absolute, in memory no other task can write
		 * (pfn_argv_alone, pfn_argv_private), no directory on the way can be changed by
		 * the sandbox (no Landlock right to make, remove or move an entry there:
		 * judge_missing over the recorded ruleset; a workdir and the supervisor's own
		 * creates beneath a writable grant refuse deny_path), and no file whose "#!" line
		 * or program headers were read can be written by it (no Landlock write right on
		 * it). */
		return NOTIF_ANSWERED;
	}
	if (why[0])
		pfn_deny_event(sv, req, path, why);
	notif_answer_errno(resp, r);
	return NOTIF_ANSWERED;
}

int policy_fn_path_gate(struct supervisor *sv, const struct seccomp_notif *req,
			struct seccomp_notif_resp *resp)
{
	int nr = (int)req->data.nr;

	if (!policy_fn_denies_paths(sv) || !(resp->flags & SECCOMP_USER_NOTIF_FLAG_CONTINUE))
		return NOTIF_ANSWERED;
	if (nr == SYS_execve || nr == SYS_execveat)
		return exec_gate(sv, req, resp);
	if (nr == SYS_openat || nr == SYS_openat2
#ifdef SYS_open
	    || nr == SYS_open || nr == SYS_creat
#endif
	)
		return pfn_open_gate(sv, req, resp);
	if (nr == SYS_linkat || nr == SYS_renameat || nr == SYS_renameat2
#ifdef SYS_link
	    || nr == SYS_link || nr == SYS_rename
#endif
	)
		return pfn_move_gate(sv, req, resp);
	return NOTIF_ANSWERED;
}
