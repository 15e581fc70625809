/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy-fn-argv: whether an exec's argument vector, read for the policy_fn, is what the kernel
 * reads when the call goes on (CONTINUE). The caller waits in the syscall, so only another task
 * could change it: one sharing its memory (a thread of its group, a process cloned with CLONE_VM
 * that is not waiting in vfork), or one that writes a shared mapping or the file behind a private
 * one. ptrace and process_vm_writev are on the default blocklist. A write to /proc/<pid>/mem by
 * another process of the sandbox is stopped only by Landlock, where the policy grants no write
 * on /proc: a policy_fn with such a grant is refused at spawn (plan_check). The vector is stable
 * when:
 *  - the caller's process has one thread;
 *  - every other process sharing its memory (kcmp KCMP_VM, over /proc) is single-threaded and
 *    waits in a vfork (vfork, or clone with CLONE_VM and CLONE_VFORK; clone3 is answered
 *    ENOSYS): it runs no code until the exec is over; each is seen parked twice, its context
 *    switch counts unchanged between the looks, so none ran while the scan went on;
 *  - no AIO context is mapped ("/[aio]": a request submitted earlier writes memory later);
 *  - every byte of it lies in private anonymous memory (the stack, the heap, anonymous maps),
 *    or in a private map of the caller's own executable while that file cannot be opened for
 *    writing (ETXTBSY, or no write permission).
 * Where only the first two fail (other tasks share the memory), the exec is shown still with
 * those tasks stopped (policy-fn-freeze.c). Anything else, or a look that fails, is unstable:
 * the exec is refused (fail closed).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <linux/sched.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "child.h"
#include "fd-util.h"
#include "macro.h"
#include "notif.h"
#include "policy-fn-internal.h"

static int threads_of(pid_t pid)
{
	long n = 0;

	return proc_status_number(pid, "Threads", &n) < 0 ? -1 : (int)n;
}

/* Whether process @peer waits in a vfork (its child, sharing its memory, runs instead). Only
 * CLONE_VM with CLONE_VFORK parks it: a CLONE_VFORK child with its own memory leaves the
 * parent's writable by nothing, but the parent is then no peer of the caller either. */
static int in_vfork(pid_t peer)
{
	return threads_of(peer) == 1 && pfn_task_in_vfork(peer);
}

/* The context switches of @pid so far (voluntary and not), -1 unknown: a count that moved ran. */
static long switches(pid_t pid)
{
	long v, n;

	if (proc_status_number(pid, "voluntary_ctxt_switches", &v) < 0 ||
	    proc_status_number(pid, "nonvoluntary_ctxt_switches", &n) < 0)
		return -1;
	return v + n;
}

struct peer {
	pid_t pid;
	long sw;
};

/* Whether the leader thread of process @p has no memory (it exited, and is kept as a zombie while
 * other threads of its process run on), and some other thread is listed. */
static int leader_gone(pid_t p)
{
	char path[64], buf[64];
	struct stat st;

	/* /proc/<pid>/task counts two links and one per thread. */
	snprintf(path, sizeof(path), "/proc/%d/task", p);
	if (stat(path, &st) < 0 || st.st_nlink < 4)
		return 0;
	return proc_read(p, "statm", buf, sizeof(buf)) == 0 && strtoul(buf, NULL, 10) == 0;
}

/* Whether some thread of process @p runs on the memory of process @tgid. kcmp compares the
 * memory of the task @p names, the leader thread: one that exited has none left while the other
 * threads of its process still run on the memory they shared (a process cloned with CLONE_VM
 * whose leader called exit alone); each of them is compared then. A process kcmp may not look at
 * counts as no peer: one sharing the caller's memory shares its dumpability, and takes other
 * credentials only with privileges that would let the supervisor look at it too. */
static int shares_vm(pid_t tgid, pid_t p)
{
	char path[64];

	if (p == tgid || p == getpid())
		return 0;
	long r = syscall(SYS_kcmp, tgid, p, KCMP_VM, 0, 0);
	if (r == 0)
		return 1;
	if (r < 0 || !leader_gone(p))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/task", p);
	DIR *d = opendir(path);
	struct dirent *de;
	int shared = 0;
	while (d && !shared && (de = readdir(d))) {
		pid_t t = (pid_t)strtol(de->d_name, NULL, 10);
		shared = t > 0 && t != p && syscall(SYS_kcmp, tgid, t, KCMP_VM, 0, 0) == 0;
	}
	if (d)
		closedir(d);
	return shared;
}

/* Whether every process other than @tgid sharing its memory waits in a vfork: each parked one is
 * looked at again after the scan, still parked and its switch counts unchanged. */
static int peers_parked(pid_t tgid)
{
	_cleanup_free_ struct peer *seen = NULL;
	size_t n = 0, cap = 0;
	DIR *d = opendir("/proc");
	struct dirent *de;
	int parked = 1;

	if (!d)
		return 0;
	while (parked && (de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid_t p = (pid_t)strtol(de->d_name, NULL, 10);
		if (!shares_vm(tgid, p))
			continue;
		long sw = switches(p);
		if (sw < 0 || !in_vfork(p)) {
			parked = 0;
		} else if (n == cap) {
			struct peer *g = realloc(seen, (cap = cap ? cap * 2 : 8) * sizeof(*g));
			parked = g != NULL;
			if (g)
				seen = g;
		}
		if (parked)
			seen[n++] = (struct peer){ p, sw };
	}
	closedir(d);
	for (size_t i = 0; parked && i < n; i++)
		parked = in_vfork(seen[i].pid) && switches(seen[i].pid) == seen[i].sw;
	return parked;
}

/* Whether the caller's executable cannot be written (by the sandbox, which has no more rights
 * than this process): the kernel denies writes to a running program (ETXTBSY), or no write
 * permission. */
static int exe_unwritable(pid_t tgid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/exe", tgid);
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno == ETXTBSY || errno == EACCES || errno == EPERM || errno == EROFS;
}

struct map {
	uint64_t start, end;
	int ok;
};

/* The caller's maps, each marked whether its content can change only by the caller's own
 * writes. *@ret owned. */
static int maps_of(pid_t tgid, struct map **ret, size_t *ret_n)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0, n = 0, cap = 0;
	struct stat exe;
	char path[64];
	int exe_ok = -1;

	snprintf(path, sizeof(path), "/proc/%d/exe", tgid);
	if (stat(path, &exe) < 0 || proc_read_all(tgid, "maps", &text, &len) < 0)
		return -EPERM;
	struct map *m = NULL;
	for (char *line = text, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		unsigned long long s, e, off, ino;
		unsigned maj, min;
		char perms[8], name[16] = "";
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %15s", &s, &e, perms, &off, &maj,
			   &min, &ino, name) < 7)
			continue;
		if (strcmp(name, "/[aio]") == 0) { /* a submitted read may land in any page later */
			free(m);
			return -EPERM;
		}
		if (n == cap) {
			struct map *g = realloc(m, (cap = cap ? cap * 2 : 64) * sizeof(*m));
			if (!g) {
				free(m);
				return -ENOMEM;
			}
			m = g;
		}
		int ok = perms[3] == 'p' && ino == 0;
		if (!ok && perms[3] == 'p' && ino == exe.st_ino && maj == major(exe.st_dev) &&
		    min == minor(exe.st_dev)) {
			if (exe_ok < 0)
				exe_ok = exe_unwritable(tgid);
			ok = exe_ok;
		}
		m[n++] = (struct map){ s, e, ok };
	}
	*ret = m;
	*ret_n = n;
	return 0;
}

/* Whether [@s, @e) lies in maps marked ok, end to end. */
static int range_ok(const struct map *m, size_t n, uint64_t s, uint64_t e)
{
	for (size_t i = 0; i < n && s < e; i++) {
		if (m[i].end <= s)
			continue;
		if (m[i].start > s || !m[i].ok)
			return 0;
		s = m[i].end;
	}
	return s >= e;
}

int pfn_argv_alone(pid_t tgid)
{
	return threads_of(tgid) == 1 && peers_parked(tgid);
}

int pfn_argv_private(pid_t tgid, const uint64_t (*r)[2], size_t n)
{
	struct map *m = NULL;
	size_t n_maps = 0;

	if (maps_of(tgid, &m, &n_maps) < 0)
		return 0;
	int ok = 1;
	for (size_t i = 0; ok && i < n; i++)
		ok = range_ok(m, n_maps, r[i][0], r[i][1]);
	free(m);
	return ok;
}

int pfn_task_in_vfork(pid_t tid)
{
	char buf[256];
	unsigned long long nr, a0;
	const unsigned long long both = CLONE_VM | CLONE_VFORK;

	if (proc_read(tid, "syscall", buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%llu %llx", &nr, &a0) != 2)
		return 0;
#ifdef SYS_vfork
	if (nr == SYS_vfork)
		return 1;
#endif
	return nr == SYS_clone && (a0 & both) == both;
}

/* Append the threads of process @pid other than @skip to *@v. */
static int add_threads(pid_t pid, pid_t skip, struct pfn_task **v, size_t *n, size_t *cap)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	struct dirent *de;
	int r = 0;
	while (r == 0 && (de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid_t t = (pid_t)strtol(de->d_name, NULL, 10);
		if (t == skip)
			continue;
		if (*n == *cap) {
			struct pfn_task *g =
				realloc(*v, (*cap = *cap ? *cap * 2 : 16) * sizeof(*g));
			if (!g) {
				r = -ENOMEM;
				break;
			}
			*v = g;
		}
		(*v)[(*n)++] = (struct pfn_task){ t, pid };
	}
	closedir(d);
	return r;
}

int pfn_peers(pid_t tid, pid_t tgid, struct pfn_task **ret, size_t *ret_n)
{
	struct pfn_task *v = NULL;
	size_t n = 0, cap = 0;
	int r = add_threads(tgid, tid, &v, &n, &cap);
	DIR *d = r == 0 ? opendir("/proc") : NULL;
	struct dirent *de;

	if (r == 0 && !d)
		r = -errno;
	while (r == 0 && (de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid_t p = (pid_t)strtol(de->d_name, NULL, 10);
		if (!shares_vm(tgid, p))
			continue;
		r = add_threads(p, 0, &v, &n, &cap);
		if (r == -ENOENT)
			r = 0; /* it ended meanwhile */
	}
	if (d)
		closedir(d);
	if (r < 0) {
		free(v);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}
