/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/getdents: while the supervisor serves /proc, the /proc listing shows the sandbox's
 * own processes only. getdents64 on the /proc directory is made here, on the descriptor the
 * child named (pidfd_getfd: the same open file, so its offset moves as the child's would), and
 * the entries of other processes are left out of what is copied back.
 * Under deterministic_dirs every other listing is made here too (on a worker), sorted by name
 * (bytewise,
 * "." and ".." included): the directory is read whole through the child's own open file (the
 * rights it was opened with), and its offset is then the index of the next entry, which d_off
 * reports,
 * so that rewinddir, telldir and seekdir keep working. Otherwise any other directory is the
 * kernel's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fd-util.h"
#include "handlers.h"
#include "macro.h"
#include "plan/plan.h"
#include "procs.h"
#include "supervisor/child.h"
#include "supervisor/groups.h"
#include "supervisor/supervisor.h"

/* Whether /proc entry @name is to be listed: not a process, or one of the sandbox's. */
static int listed(struct supervisor *sv, const char *name)
{
	char *end;

	long pid = strtol(name, &end, 10);
	return *end || pid <= 0 || sandbox_owns_pid(sv, (pid_t)pid);
}

/* ---- deterministic_dirs ------------------------------------------------------------------ */

static int dent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct dent *)a)->name, ((const struct dent *)b)->name);
}

static void dents_free(struct dent *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

/* The entries of directory @fd (the child's open file: read from its start, with the rights it
 * was opened with; the caller then moves its offset), sorted by name. -errno. */
static int dents_sorted(int fd, struct dent **ret, size_t *ret_n)
{
	struct dent *v = NULL;
	size_t n = 0, cap = 0;
	int r = lseek(fd, 0, SEEK_SET) < 0 ? negative_errno() : 0;
	_cleanup_free_ char *buf = r == 0 ? malloc(65536) : NULL;

	if (r == 0 && !buf)
		r = -ENOMEM;
	for (long got = 1; r == 0 && got > 0;) {
		got = syscall(SYS_getdents64, fd, buf, 65536);
		if (got < 0)
			r = negative_errno();
		for (long off = 0; r == 0 && off < got;) {
			unsigned short reclen;
			uint64_t ino;
			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			if (reclen < 20 || off + reclen > got) {
				r = -EIO; /* not what the kernel writes: fail closed */
				break;
			}
			if (n == cap) {
				struct dent *nv =
					realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v));
				if (!nv) {
					r = -ENOMEM;
					break;
				}
				v = nv;
			}
			memcpy(&ino, buf + off, sizeof(ino));
			v[n] = (struct dent){ .ino = ino,
					      .type = (unsigned char)buf[off + 18],
					      .name = strndup(buf + off + 19, reclen - 19) };
			if (!v[n++].name)
				r = -ENOMEM;
			off += reclen;
		}
	}
	if (r < 0) {
		dents_free(v, n);
		return r;
	}
	qsort(v, n, sizeof(*v), dent_cmp);
	*ret = v;
	*ret_n = n;
	return 0;
}

int64_t getdents_answer(int listener, const struct seccomp_notif *req, int fd, size_t count,
			int legacy, const struct dent *v, size_t n)
{
	size_t n_out = 0;
	off_t pos = lseek(fd, 0, SEEK_CUR);
	if (pos < 0)
		return negative_errno();
	_cleanup_free_ char *out = malloc(count ? count : 1);
	if (!out)
		return -ENOMEM;
	size_t i = (size_t)pos;
	for (; i < n; i++) {
		size_t len = strlen(v[i].name);
		/* getdents64: ino, off, reclen, type, name; getdents: ino, off, reclen, name, NUL,
		 * padding, type in the last byte; both aligned as the kernel aligns them. */
		size_t reclen =
			legacy ? ALIGN_TO(18 + len + 2, sizeof(long)) : ALIGN_TO(19 + len + 1, 8);
		if (n_out + reclen > count)
			break;
		char *rec = out + n_out;
		uint64_t next = i + 1;
		unsigned short rl = (unsigned short)reclen;
		memset(rec, 0, reclen);
		if (legacy) {
			unsigned long ino = (unsigned long)v[i].ino, off = (unsigned long)next;
			memcpy(rec, &ino, sizeof(ino));
			memcpy(rec + 8, &off, sizeof(off));
			memcpy(rec + 16, &rl, sizeof(rl));
			memcpy(rec + 18, v[i].name, len);
			rec[reclen - 1] = (char)v[i].type;
		} else {
			memcpy(rec, &v[i].ino, sizeof(v[i].ino));
			memcpy(rec + 8, &next, sizeof(next));
			memcpy(rec + 16, &rl, sizeof(rl));
			rec[18] = (char)v[i].type;
			memcpy(rec + 19, v[i].name, len);
		}
		n_out += reclen;
	}
	if (!n_out && i < n)
		return -EINVAL; /* the buffer takes not even one entry, as the kernel says */
	int r;
	if (n_out && (r = notif_mem_write(listener, req, req->data.args[1], out, n_out)) < 0)
		return r;
	if (lseek(fd, (off_t)i, SEEK_SET) < 0)
		return negative_errno();
	return (int64_t)n_out;
}

/* getdents64 or getdents (@legacy) of directory @fd (the child's open file) sorted. */
static int64_t getdents_sorted(int listener, const struct seccomp_notif *req, int fd, size_t count,
			       int legacy)
{
	struct dent *v = NULL;
	size_t n = 0;
	/* The index the child's offset holds, before the listing moves it. */
	off_t pos = lseek(fd, 0, SEEK_CUR);
	if (pos < 0)
		return negative_errno();
	int r = dents_sorted(fd, &v, &n);
	if (r == 0 && lseek(fd, pos, SEEK_SET) < 0)
		r = negative_errno();
	if (r < 0) {
		if (v)
			dents_free(v, n);
		return r;
	}
	int64_t k = getdents_answer(listener, req, fd, count, legacy, v, n);
	dents_free(v, n);
	return k;
}

struct sorted_job {
	struct seccomp_notif req;
	size_t count;
	int legacy;
};

/* On a worker (a large directory, or one on a filesystem whose readdir waits, would hold the
 * loop): the sorted listing of @fd, the child's open directory, and the answer. */
static void sorted_worker(int listener, int fd, void *arg)
{
	struct sorted_job *job = arg;

	if (listener >= 0 && notif_id_valid(listener, job->req.id)) {
		int64_t r = getdents_sorted(listener, &job->req, fd, job->count, job->legacy);
		if (r != NOTIF_GONE) {
			struct seccomp_notif_resp resp = { .id = job->req.id };
			if (r < 0)
				notif_answer_errno(&resp, (int)r);
			else
				notif_answer_value(&resp, r);
			(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp); /* ENOENT: gone */
		}
	}
	free(job);
}

/* getdents64(fd, buf, count), and the legacy getdents. On another directory CONTINUE: what a
 * descriptor swapped in meanwhile for /proc would list is the numbers of the host's processes,
 * never their files (open.c serves those to the sandbox's own only). */
int handle_getdents(struct supervisor *sv, const struct seccomp_notif *req,
		    struct seccomp_notif_resp *resp)
{
	struct statfs fs;
	struct stat st;
	size_t count = MIN((size_t)(uint32_t)req->data.args[2], (size_t)(1 << 20));

	/* Most listings are of other directories: told by the descriptor's name (one readlink;
	 * not a decision: a /proc by another name is checked below, by identity). */
	char name[16];
	ssize_t k = proc_fd_path((pid_t)req->pid, (int)req->data.args[0], name, sizeof(name));
	if ((k > 0 || k == -ENAMETOOLONG) && (k < 0 || strcmp(name, "/proc") != 0) &&
	    !sv->deterministic_dirs) {
		return notif_answer_continue(resp);
	}
	_cleanup_close_ int fd = notif_get_fd(sv->listener, req, (int)req->data.args[0]);
	if (fd == NOTIF_GONE)
		return fd;
	int is_proc = fd >= 0 && fstatfs(fd, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC &&
		      fstat(fd, &st) == 0 && sv->proc_dev && st.st_dev == sv->proc_dev &&
		      st.st_ino == sv->proc_ino;
	if (sv->deterministic_dirs && fd >= 0 && !is_proc) {
		/* Not a directory, or an O_PATH descriptor: the kernel's answer (ENOTDIR, EBADF).
		 * CONTINUE: the call lists a directory the child holds open, which it may list. */
		int fl = fcntl(fd, F_GETFL);
		if (fl < 0 || (fl & O_PATH) || fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
			return notif_answer_continue(resp);
		}
		struct sorted_job *job = malloc(sizeof(*job));
		if (!job)
			return -ENOMEM;
		*job = (struct sorted_job){ .req = *req,
					    .count = count,
					    .legacy = req->data.nr != SYS_getdents64 };
		int r = supervisor_run_worker(sv, fd, sorted_worker, job);
		if (r < 0) {
			free(job);
			return r; /* fd: still ours, closed on return */
		}
		TAKE_FD(fd); /* the worker's now */
		return NOTIF_DEFERRED;
	}
	/* A descriptor that cannot be seen (the caller made itself non-dumpable) is listed by the
	 * kernel too: the listing is a view, and which pids exist is no secret of the kernel's
	 * anyway (stat of /proc/<pid> answers it, untrapped); their files stay refused (open.c). */
	if (fd < 0 || fstatfs(fd, &fs) < 0 || fs.f_type != PROC_SUPER_MAGIC || fstat(fd, &st) < 0 ||
	    !sv->proc_dev || st.st_dev != sv->proc_dev || st.st_ino != sv->proc_ino) {
		return notif_answer_continue(resp);
	}
	/* getdents64's entries name at 19 bytes in, the legacy getdents's at 18. */
	size_t name_off = req->data.nr == SYS_getdents64 ? 19 : 18;
	_cleanup_free_ char *in = malloc(count), *out = malloc(count);
	if (!in || !out)
		return -ENOMEM;
	size_t n_out = 0;
	for (;;) {
		long got = syscall((long)req->data.nr, fd, in, count);
		if (got < 0)
			return negative_errno();
		if (got == 0)
			break; /* the end */
		for (long off = 0; off < got;) {
			unsigned short reclen;
			memcpy(&reclen, in + off + 16, sizeof(reclen)); /* both layouts */
			if (reclen == 0 || off + reclen > got || name_off >= reclen)
				return -EIO; /* not what the kernel writes: fail closed */
			if (listed(sv, in + off + name_off)) {
				memcpy(out + n_out, in + off, reclen);
				n_out += reclen;
			}
			off += reclen;
		}
		if (n_out)
			break; /* else every entry of that chunk was another's: read on */
	}
	if (n_out) {
		int r = notif_mem_write(sv->listener, req, req->data.args[1], out, n_out);
		if (r < 0)
			return r;
	}
	notif_answer_value(resp, (int64_t)n_out);
	return 0;
}
