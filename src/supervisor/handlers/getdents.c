/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/getdents: while the supervisor serves /proc, the /proc listing shows the sandbox's
 * own processes only. getdents64 on the /proc directory is made here, on the descriptor the
 * child named (pidfd_getfd: the same open file, so its offset moves as the child's would), and
 * the entries of other processes are left out of what is copied back. Any other directory is
 * the kernel's.
 */
#include <dirent.h>
#include <errno.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fd-util.h"
#include "handlers.h"
#include "macro.h"
#include "net-internal.h"
#include "plan/plan.h"
#include "sandbox/groups.h"
#include "supervisor/notif.h"
#include "supervisor/supervisor.h"

/* Whether /proc entry @name is to be listed: not a process, or one of the sandbox's. */
static int listed(struct supervisor *sv, const char *name)
{
	char *end;

	long pid = strtol(name, &end, 10);
	return *end || pid <= 0 || sandbox_owns_pid(sv, (pid_t)pid);
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
	char link[64], name[16];
	snprintf(link, sizeof(link), "/proc/%u/fd/%d", req->pid, (int)req->data.args[0]);
	ssize_t k = readlink(link, name, sizeof(name) - 1);
	if (k > 0)
		name[k] = '\0';
	if (k > 0 && strcmp(name, "/proc") != 0) {
		notif_answer_continue(resp);
		return 0;
	}
	_cleanup_close_ int fd = notif_get_fd(sv->listener, req, (int)req->data.args[0]);
	if (fd == NOTIF_GONE)
		return fd;
	/* A descriptor that cannot be seen (the caller made itself non-dumpable) is listed by the
	 * kernel too: the listing is a view, and which pids exist is no secret of the kernel's
	 * anyway (stat of /proc/<pid> answers it, untrapped); their files stay refused (open.c). */
	if (fd < 0 || fstatfs(fd, &fs) < 0 || fs.f_type != PROC_SUPER_MAGIC || fstat(fd, &st) < 0 ||
	    !sv->proc_dev || st.st_dev != sv->proc_dev || st.st_ino != sv->proc_ino) {
		notif_answer_continue(resp);
		return 0;
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
