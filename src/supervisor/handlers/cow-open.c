/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/cow-open: open, openat, openat2 and creat of a name under the workdir. A file is
 * opened in the layer that holds it (copied up first for a write, made in the branch for a
 * create) and installed in the child; a kernel object, and an O_PATH open of a workdir file,
 * are the kernel's (CONTINUE). The name is resolved by cow.c (cow_resolve_arg).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <sys/stat.h>

#include "cow/cow.h"
#include "fd-util.h"
#include "cow-internal.h"
#include "handlers.h"
#include "supervisor/args.h"
#include "supervisor/events.h"
#include "supervisor/judge.h"
#include "supervisor/notif.h"
#include "supervisor/supervisor.h"

/* An open the workdir answers is an allowed decision of the supervisor's (the judge sees only
 * the calls that go on to the kernel): with SANDLOCK_EVENTS_ALLOWED, an event (what `sandlock
 * learn` reads of the workdir). */
static void open_event(struct supervisor *sv, const struct seccomp_notif *req, const char *rel,
		       uint64_t flags)
{
	char path[PATH_MAX + 2], access[128];

	if (!events_wants(sv->events, SANDLOCK_VERDICT_ALLOW))
		return;
	if (snprintf(path, sizeof(path), "%s%s%s", sv->cow->lower, *rel ? "/" : "", rel) >=
	    (int)sizeof(path))
		return;
	judge_open_text(flags, access, sizeof(access));
	struct event ev = { .nr = req->data.nr,
			    .category = EVENT_FILE,
			    .pid = (pid_t)req->pid,
			    .verdict = SANDLOCK_VERDICT_ALLOW,
			    .path = path,
			    .access = access };
	events_emit(sv, &ev);
}

static int cow_open_call(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
			 uint64_t addr, uint64_t flags, mode_t mode, uint64_t resolve,
			 struct seccomp_notif_resp *resp)
{
	struct cow *c = sv->cow;
	struct cow_res res;
	int excl = (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL);
	int r = cow_resolve_arg(sv, req, dirfd, addr, !(flags & O_NOFOLLOW) && !excl, 0, &res);

	if (r != 0)
		return r;
	if (resolve)
		return -EXDEV; /* openat2's resolve flags are not followed under the workdir */
	if ((flags & __O_TMPFILE) == __O_TMPFILE)
		return -EOPNOTSUPP;
	int acc = (int)(flags & O_ACCMODE);
	int write = !(flags & O_PATH) && (acc != O_RDONLY || (flags & O_TRUNC));
	struct cow_node *n = &res.n;
	int fd;
	if (n->layer == COW_NONE) {
		mode_t um;
		if (!(flags & O_CREAT))
			return -ENOENT;
		if (res.trailing)
			return -EISDIR;
		if ((r = cow_create_mask(sv, req, res.rel, &um)) < 0)
			return r;
		if ((fd = cow_create(c, res.rel, &res.n, (int)flags, mode & ~um & 07777)) < 0)
			return fd;
	} else {
		if (excl)
			return -EEXIST;
		if (S_ISLNK(n->st.st_mode) && !(flags & O_PATH))
			return -ELOOP; /* O_NOFOLLOW on a symlink */
		if (S_ISDIR(n->st.st_mode) && write)
			return -EISDIR;
		if ((flags & O_DIRECTORY) && !S_ISDIR(n->st.st_mode))
			return -ENOTDIR;
		if ((flags & O_PATH) && n->layer == COW_LOWER) {
			/* CONTINUE: an O_PATH descriptor reads and writes nothing (a change of
			 * metadata through it is trapped and made in the branch: resolve_arg takes
			 * /proc/self/fd/N for the file it names), and Landlock does not restrict
			 * O_PATH opens, so whatever the name reads by then, the call gives the
			 * caller nothing it could not open itself. */
			return notif_answer_continue(resp);
		}
		if (cow_is_special(n->st.st_mode)) {
			/* A FIFO, socket or device node: the kernel opens it, under Landlock's
			 * read-only grant of the workdir (no name under it can be opened for
			 * writing by the kernel, whatever it reads by then). */
			return notif_answer_continue(resp);
		}
		if (write && n->layer == COW_LOWER) {
			if ((r = cow_copy_up_off_loop(sv, req, res.rel, (flags & O_TRUNC) != 0)) <
			    0)
				return r;
		} else if (write && (r = cow_touch_node(c, res.rel, n)) < 0)
			return r;

		uint64_t oflags = flags & ~(uint64_t)(O_CREAT | O_EXCL | O_CLOEXEC);
		if (flags & O_PATH) {
			/* A branch entry: the kernel installs no O_PATH file (ADDFD takes only
			 * ordinary ones), so the caller gets it open for reading, which the
			 * branch's file allows it anyway. A symlink has no such file. */
			if (S_ISLNK(n->st.st_mode))
				return -EOPNOTSUPP; /* what glibc's chmod of a symlink says */
			oflags = O_RDONLY | (flags & O_DIRECTORY) | O_NONBLOCK;
		}
		fd = cow_layer_open(c, write ? COW_UPPER : n->layer, res.rel, (int)oflags);
		if (fd < 0)
			return fd;
	}
	open_event(sv, req, res.rel, flags);
	r = notif_addfd_answer(sv->listener, req, &fd, (flags & O_CLOEXEC) != 0);
	safe_close(fd);
	return r;
}

int cow_open_nr(struct supervisor *sv, const struct seccomp_notif *req,
		struct seccomp_notif_resp *resp)
{
	struct path_args pa;
	int r = path_args_decode(&req->data, &pa);

	if (r < 0)
		return r;
	if (pa.flags_in_mem) { /* openat2 */
		struct open_how how = { 0 };
		if (pa.mem_size < sizeof(how))
			return -EINVAL;
		if ((r = notif_mem_read(sv->listener, req, pa.mem, &how, sizeof(how))) < 0)
			return r;
		path_args_set_how(&pa, how.flags, how.mode, how.resolve);
	}
	return cow_open_call(sv, req, pa.dirfd, pa.path, pa.flags, (mode_t)pa.mode, pa.resolve,
			     resp);
}
