/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/cow-quota: max_disk, the growth of a branch file charged before the call that makes
 * it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

#include "cow/cow.h"
#include "fd-util.h"
#include "cow-internal.h"
#include "handlers.h"
#include "macro.h"
#include "supervisor/child.h"
#include "supervisor/dispatch.h"
#include "supervisor/notif.h"
#include "supervisor/supervisor.h"
#include "syscall-util.h"

/* ---- quota ------------------------------------------------------------------------------- */

/* What a copy from the caller's descriptor @in (at the offset @off_addr points to, else its
 * position) can bring at most, of the @len it asks: a regular file's bytes from there, a pipe's
 * capacity (cp and shutil ask for far more than they copy). @len itself where it cannot tell
 * (a socket, a descriptor gone, the file @out into itself: never less than the call adds). A
 * pipe whose capacity another thread raises meanwhile gives at most pipe-max-size more, billed
 * at the file's next write. */
static uint64_t copy_len(struct supervisor *sv, const struct seccomp_notif *req, int in,
			 uint64_t off_addr, uint64_t len, const struct stat *out)
{
	_cleanup_close_ int fd = notif_get_fd(sv->listener, req, in);
	struct stat st;
	int64_t pos = 0;

	if (fd < 0 || fstat(fd, &st) < 0)
		return len;
	if (S_ISFIFO(st.st_mode)) {
		int cap = fcntl(fd, F_GETPIPE_SZ);
		return cap > 0 ? MIN(len, (uint64_t)cap) : len;
	}
	if (!S_ISREG(st.st_mode) || (st.st_dev == out->st_dev && st.st_ino == out->st_ino))
		return len; /* the file into itself: what it appends, it reads again */
	if (off_addr ? notif_mem_read(sv->listener, req, off_addr, &pos, sizeof(pos)) < 0
		     : (pos = lseek(fd, 0, SEEK_CUR)) < 0)
		return len;
	/* (a file the caller grows meanwhile gives more: billed at the next write, as any
	 * growth between a check and its call) */
	return pos >= st.st_size ? 0 : MIN(len, (uint64_t)(st.st_size - pos));
}

/* write, pwrite64, writev, pwritev, pwritev2, ftruncate, fallocate under max_disk: the growth
 * of a file of the branch is charged first (ENOSPC beyond the quota). */
int cow_quota(struct supervisor *sv, const struct seccomp_notif *req,
	      struct seccomp_notif_resp *resp)
{
	const __u64 *a = req->data.args;
	char real[PATH_MAX];
	struct cow *c = sv->cow;
	/* The descriptor written: copy_file_range's and splice's third argument. */
	int out = req->data.nr == SYS_copy_file_range || req->data.nr == SYS_splice ? (int)a[2]
										    : (int)a[0];

	const char *rel;
	ssize_t k = proc_fd_path((pid_t)req->pid, out, real, sizeof(real));
	if (k == -ENOENT)
		return NOTIF_NOT_MINE; /* no such descriptor: the kernel's EBADF */
	/* A descriptor the supervisor may not look at (a non-dumpable task, read by a supervisor
	 * without CAP_SYS_PTRACE) could be a branch file's: refused, never written uncharged. */
	if (k <= 0)
		return -EPERM;
	if (!(rel = cow_rel_to(c->upper, real)) || !*rel)
		return NOTIF_NOT_MINE;
	_cleanup_close_ int fd = notif_get_fd(sv->listener, req, out);
	struct stat st;
	char again[PATH_MAX];
	if (fd < 0)
		return fd;
	if (fd_real_path(fd, again, sizeof(again)) <= 0 || strcmp(again, real) != 0)
		return -EAGAIN; /* the descriptor changed meanwhile: asked again, never uncounted */
	int fl = fcntl(fd, F_GETFL);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || fl < 0 || (fl & O_ACCMODE) == O_RDONLY)
		return NOTIF_NOT_MINE; /* no write of a branch file: the kernel's answer */
	int64_t pos = (fl & O_APPEND) ? st.st_size : lseek(fd, 0, SEEK_CUR);
	uint64_t len = 0, extra = 0;
	int64_t at = pos;
	switch (req->data.nr) {
	case SYS_write:
		len = a[2];
		break;
	case SYS_pwrite64:
		len = a[2], at = (fl & O_APPEND) ? st.st_size : (int64_t)a[3];
		if ((int64_t)a[3] < 0)
			return -EINVAL;
		break;
	case SYS_ftruncate:
		len = 0, at = (int64_t)a[1];
		break;
	case SYS_fallocate:
		/* Mode 0 grows the file to offset + len at most; a hole punched or a range
		 * collapsed adds nothing. The others (KEEP_SIZE: space past the end; ZERO_RANGE,
		 * INSERT_RANGE, UNSHARE_RANGE) may allocate their whole length where the size
		 * does not show it: each call is charged its length on top of what the file was
		 * charged before (a range allocated twice is counted twice: never less). */
		if ((int64_t)a[2] < 0 || (int64_t)a[3] <= 0)
			return -EINVAL; /* the kernel's answer */
		len = a[3], at = (int64_t)a[2];
		if ((int)a[1] & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_COLLAPSE_RANGE))
			len = 0, at = 0;
		else if ((int)a[1] & FALLOC_FL_INSERT_RANGE)
			at = st.st_size; /* the size grows by len */
		else if ((int)a[1]) {
			extra = len;
			if ((int)a[1] & FALLOC_FL_KEEP_SIZE)
				len = 0, at = 0; /* else the size may grow to offset + len too */
		}
		break;
	case SYS_copy_file_range:
	case SYS_splice: {
		/* At the offset the call names, else at the descriptor's position, as a write.
		 * The offset lies in the caller's memory, which another thread may change before
		 * the kernel reads it: a write moved further that way grows the file unbilled
		 * (sparse) until its next trapped write, which bills the size first, as for a
		 * position moved by lseek meanwhile. */
		int64_t off = 0;
		int r;
		len = copy_len(sv, req, (int)a[0], a[1], a[4], &st);
		if (a[3] && (r = notif_mem_read(sv->listener, req, a[3], &off, sizeof(off))) < 0)
			return r;
		if (a[3] && off < 0)
			return -EINVAL;
		if (a[3])
			at = off;
		break;
	}
	case SYS_sendfile: /* (out, in, offset *, count) */
		len = copy_len(sv, req, (int)a[1], a[2], a[3], &st);
		break;
	default: { /* writev, pwritev, pwritev2: the iovecs' total, as many as the kernel takes */
		struct iovec iov[64];
		size_t n = MIN((size_t)a[2], (size_t)1024);
		for (size_t i = 0; i < n; i += ELEMENTSOF(iov)) {
			size_t m = MIN(n - i, ELEMENTSOF(iov));
			if (notif_mem_read(sv->listener, req, a[1] + i * sizeof(*iov), iov,
					   m * sizeof(*iov)) < 0)
				return -EFAULT;
			for (size_t j = 0; j < m; j++)
				len = len + iov[j].iov_len < len ? UINT64_MAX
								 : len + iov[j].iov_len;
		}
		if (req->data.nr != SYS_writev && (int64_t)a[3] != -1)
			at = (int64_t)a[3];
		if ((fl & O_APPEND) || (req->data.nr == SYS_pwritev2 && (a[5] & RWF_APPEND)))
			at = st.st_size; /* written at the end, whatever the offset says */
	}
	}
	if (at < 0)
		return -EINVAL; /* a negative offset or length: the kernel's answer */
	if (len > (uint64_t)INT64_MAX - (uint64_t)at || extra > (uint64_t)INT64_MAX)
		return -EFBIG;
	/* Growth never charged (a size moved by another thread between a check and its call)
	 * is billed first: the file's size counts at least once, whatever happened. */
	int r = cow_charge_file(c, st.st_dev, st.st_ino, st.st_size);
	if (r < 0)
		return r;
	int64_t end = at + (int64_t)len;
	if (end > st.st_size && (r = cow_charge_file(c, st.st_dev, st.st_ino, end)) < 0)
		return r;
	if (extra && (r = cow_charge_file_more(c, st.st_dev, st.st_ino, (int64_t)extra)) < 0)
		return r;
	/* CONTINUE: the call writes through the child's own descriptor of a branch file; the
	 * charge above only counts bytes, at least what the call can add (a shrink is never
	 * refunded before it happens; a file grown by another thread meanwhile is counted at
	 * its next write); nothing is decided on memory the kernel reads again. */
	return notif_answer_continue(resp);
}
