/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy-fn-move: the links and renames made on the child's behalf while deny_path's set holds
 * anything (policy_fn_path_gate). A hard link or a rename keeps a denied file's identity, so
 * the deny follows it; but one made of a file beneath a denied directory would take the file
 * out from under it. So the source's directory is resolved as the child would reach it (an
 * O_PATH descriptor), checked with each directory above it, and refused (EACCES) when one is
 * denied; otherwise the call is made here on the two directories' descriptors (linkat,
 * renameat2), by a thread confined as the sandbox (its Landlock ruleset, which checks the
 * rights as for the child, and its capabilities): the names are never resolved again.
 * linkat with AT_SYMLINK_FOLLOW or AT_EMPTY_PATH (whose source is not an entry of a directory)
 * is refused while a deny is in force.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "child.h"
#include "fd-util.h"
#include "macro.h"
#include "policy-fn-internal.h"
#include "supervisor.h"
#include "supervisor/args.h"

struct entry_at {
	int dir;
	char base[NAME_MAX + 1];
};

/* The directory and last component of the name at @addr, from the child's @dirfd. */
static int entry_open(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		      uint64_t addr, char *path, struct entry_at *e)
{
	char dir[PATH_MAX];

	int r = child_read_path(sv, req, addr, path, PATH_MAX);
	if (r < 0)
		return r;
	size_t len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--; /* "a/b/": b */
	const char *slash = memrchr(path, '/', len);
	const char *last = slash ? slash + 1 : path;
	size_t blen = len - (size_t)(last - path);
	if (!blen || blen > NAME_MAX || (blen == 1 && last[0] == '.') ||
	    (blen == 2 && last[0] == '.' && last[1] == '.'))
		return -EINVAL; /* "/", ".", "..": the kernel's answers, for a rename too */
	memcpy(e->base, last, blen);
	e->base[blen] = '\0';
	size_t dlen = slash ? (size_t)(slash - path) : 0;
	if (slash && dlen == 0)
		strcpy(dir, "/");
	else if (slash)
		memcpy(dir, path, dlen), dir[dlen] = '\0';
	else
		strcpy(dir, ".");
	e->dir = child_path_open(sv, req, dirfd, dir, 0, 0);
	return e->dir < 0 ? e->dir : 0;
}

struct move {
	int link;
	uint64_t flags;
	struct entry_at from, to;
	int ruleset;
	uint64_t caps;
	int r;
};

static void confined_move(void *arg)
{
	struct move *m = arg;

	long r = m->link ? linkat(m->from.dir, m->from.base, m->to.dir, m->to.base, 0)
			 : syscall(SYS_renameat2, m->from.dir, m->from.base, m->to.dir, m->to.base,
				   (unsigned)m->flags);
	m->r = r < 0 ? negative_errno() : 0;
}

static int move_decide(struct supervisor *sv, const struct seccomp_notif *req, struct move *m,
		       char *path, char *entry, const char **why)
{
	struct path_args pa;
	char to_path[PATH_MAX];

	if (path_args_decode(&req->data, &pa) < 0)
		return -EACCES;
	m->link = pa.call->family == PATH_LINK;
	m->flags = (uint32_t)pa.flags;
	if (m->link ? m->flags != 0
		    : (m->flags & ~(uint64_t)(RENAME_NOREPLACE | RENAME_EXCHANGE))) {
		*why = "a link following a symlink or by descriptor, or a rename with these flags, "
		       "is "
		       "refused while deny_path is in force";
		return -EACCES;
	}
	int r = entry_open(sv, req, pa.dirfd, pa.path, path, &m->from);
	if (r == 0)
		r = entry_open(sv, req, pa.dirfd2, pa.path2, to_path, &m->to);
	if (r < 0)
		return r;
	/* An exchange moves the destination too: both sides are sources. */
	r = pfn_denied(sv->pfn, -1, m->from.dir, entry, PATH_MAX);
	if (r == 0 && (m->flags & RENAME_EXCHANGE))
		r = pfn_denied(sv->pfn, -1, m->to.dir, entry, PATH_MAX);
	if (r != 0)
		return r < 0 ? r : 1;
	if (!notif_id_valid(sv->listener, req->id))
		return NOTIF_GONE;
	r = pfn_same_ids((pid_t)req->pid, &m->caps);
	if (r < 0)
		*why = PFN_WHY_IDS;
	return r;
}

int pfn_move_gate(struct supervisor *sv, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp)
{
	struct move m = { .from.dir = -1, .to.dir = -1, .ruleset = sv->ruleset_fd };
	char path[PATH_MAX] = "", entry[PATH_MAX];
	const char *why = NULL;

	int r = move_decide(sv, req, &m, path, entry, &why);
	/* A link or rename does not wait (no FIFO is opened): the confined thread's call is
	 * made while the loop waits for it, as the other handlers' own calls. */
	if (r == 0) {
		m.r = -EACCES;
		r = pfn_confined_run(sv->pfn, m.ruleset, m.caps, confined_move, &m);
		if (r == 0)
			r = m.r;
	}
	safe_close(m.from.dir);
	safe_close(m.to.dir);
	if (r == NOTIF_GONE)
		return NOTIF_DEFERRED;
	if (r == 1) {
		pfn_denied_event(sv, req, path, entry);
		r = -EACCES;
	} else if (why)
		pfn_deny_event(sv, req, path, why);
	if (r == 0)
		notif_answer_value(resp, 0);
	else
		notif_answer_errno(resp, r);
	return NOTIF_ANSWERED;
}
