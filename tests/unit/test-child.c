/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-child: the toolkit for the trapped process (supervisor/child.c) on what can be checked
 * without a trapped process: the names of the caller's own descriptors, a descriptor's real
 * path, the id snapshot and the comparisons made with it, and that nothing is resolved for a
 * notification that is not pending (the ID_VALID discipline: NOTIF_GONE, never a descriptor),
 * and the looks at a task's /proc files (its syscall, heap, user namespace, auxiliary vector,
 * a whole file) on this process and a child of its own.
 */
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervisor/child.h"
#include "supervisor/supervisor.h"
#include "tap.h"

static void test_own_fd_name(void)
{
	const char *rest = NULL;
	int n = -1;

	ok(own_fd_name("/proc/self/fd/7", &n, &rest) == 1 && n == 7 && strcmp(rest, "") == 0,
	   "/proc/self/fd/7: descriptor 7, nothing after");
	ok(own_fd_name("/proc/thread-self/fd/12/a/b", &n, &rest) == 1 && n == 12 &&
		   strcmp(rest, "/a/b") == 0,
	   "/proc/thread-self/fd/12/a/b: descriptor 12, then /a/b");
	ok(own_fd_name("/dev/fd/0", &n, &rest) == 1 && n == 0, "/dev/fd/0: descriptor 0");
	is_int(own_fd_name("/proc/self/fd/", &n, &rest), 0, "/proc/self/fd/: no number");
	is_int(own_fd_name("/proc/self/fd/-1", &n, &rest), 0, "/proc/self/fd/-1: not a number");
	is_int(own_fd_name("/proc/self/fd/3x", &n, &rest), 0, "/proc/self/fd/3x: not a number");
	is_int(own_fd_name("/proc/self/fd/99999999999", &n, &rest), 0,
	       "/proc/self/fd/99999999999: beyond an int");
	is_int(own_fd_name("/proc/1/fd/3", &n, &rest), 0, "/proc/1/fd/3: another's, not ours");
	is_int(own_fd_name("proc/self/fd/3", &n, &rest), 0, "a relative name: not ours");
}

static void test_fd_real_path(void)
{
	char tmpl[256], buf[PATH_MAX], want[PATH_MAX];

	int fd = open("/", O_PATH | O_CLOEXEC);
	ok(fd_real_path(fd, buf, sizeof(buf)) == 1 && strcmp(buf, "/") == 0, "/ is \"/\"");
	close(fd);
	if (!tap_mkdtemp(tmpl, sizeof(tmpl), "test-child") || !realpath(tmpl, want)) {
		ok(0, "a temporary directory");
		return;
	}
	fd = open(tmpl, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ok(fd_real_path(fd, buf, sizeof(buf)) == (ssize_t)strlen(want) && strcmp(buf, want) == 0,
	   "a directory's real path (%s)", want);
	rmdir(tmpl);
	ok(fd_real_path(fd, buf, sizeof(buf)) > 0 && strstr(buf, " (deleted)"),
	   "  the kernel's name once it is removed (%s)", buf);
	close(fd);
	ok(fd_real_path(fd, buf, sizeof(buf)) < 0, "a closed descriptor: an error");
}

/* A pid that names no process: a child's, once reaped. */
static pid_t gone_pid(void)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

/* In a process with one more seccomp filter (allowing everything), the snapshot of what it
 * has and the comparisons with it: bit 0 proc_same_ids, bit 1 proc_same_creds (of its thread). */
static int same_in_filtered_child(struct supervisor *sv)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { .len = 1, .filter = &allow };
	int status;

	pid_t pid = fork();
	if (pid == 0) {
		long filters = 0;
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0 ||
		    proc_status_number(0, "Seccomp_filters", &filters) < 0)
			_exit(100);
		proc_ids_snapshot(sv, getpid(), filters);
		int ids = proc_same_ids(sv, getpid()) == 1;
		int creds = proc_same_creds(sv, gettid()) == 1;
		_exit(ids | (creds << 1));
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static void test_ids(struct supervisor *sv)
{
	long filters = 0;

	if (proc_status_number(0, "Seccomp_filters", &filters) < 0) {
		ok(0, "Seccomp_filters of our own status");
		return;
	}
	/* The launch's last filter still to come: the snapshot reads one more than we have. */
	proc_ids_snapshot(sv, getpid(), filters + 1);
	ok(sv->proc_ids[0] != '\0', "a snapshot of our own ids is taken");
	ok(strstr(sv->proc_ids, "\nUid:") && strstr(sv->proc_ids, "\nCapEff:"),
	   "  it holds the ids and the capabilities");
	is_int(proc_same_ids(sv, getpid()), 0, "  one filter less than the snapshot: not the same");
	is_int(proc_same_creds(sv, getpid()), 1, "  the same credentials (filters left aside)");

	is_int(same_in_filtered_child(sv), 3,
	       "a snapshot of what a filtered process has: the same ids and credentials");
	if (filters == 0) {
		proc_ids_snapshot(sv, getpid(), 0);
		is_str(sv->proc_ids, "", "no filter at all (never a sandbox's): an empty snapshot");
	}

	pid_t gone = gone_pid();
	is_int(proc_same_ids(sv, gone), NOTIF_GONE, "a task gone: NOTIF_GONE");
	is_int(proc_same_creds(sv, gone), NOTIF_GONE, "  for the credentials too");

	/* A filter count the launch cannot end with: nobody matches the snapshot. */
	proc_ids_snapshot(sv, getpid(), filters + 2);
	is_str(sv->proc_ids, "", "a count two off: an empty snapshot");
	is_int(proc_same_ids(sv, getpid()), 0, "  which matches nobody");
	is_int(proc_same_creds(sv, getpid()), 0, "  not even on the credentials");
	proc_ids_snapshot(sv, getpid(), -1);
	is_str(sv->proc_ids, "", "an unknown count (-1): an empty snapshot");
}

static void test_not_pending(struct supervisor *sv)
{
	struct seccomp_notif req = { .id = 1, .pid = (uint32_t)getpid() };
	char buf[64];

	/* No listener: no notification is pending, so nothing taken is known to be the task's. */
	is_int(child_path_open(sv, &req, AT_FDCWD, "/", 0, 0), NOTIF_GONE,
	       "an absolute name for a notification not pending: NOTIF_GONE");
	is_int(child_path_open(sv, &req, AT_FDCWD, "tmp", 0, 0), NOTIF_GONE,
	       "a name from the working directory: NOTIF_GONE");
	ok(child_path_open(sv, &req, AT_FDCWD, "/proc/self/fd/0", 0, 0) < 0,
	   "one of the caller's descriptors: an error, no descriptor");
	ok(child_read_path(sv, &req, (uint64_t)(uintptr_t) "/etc", buf, sizeof(buf)) < 0,
	   "the child's memory: not read for a notification not pending");
}

/* A child blocked in read(2): what its /proc says of it, then of its pid once reaped. */
static void test_syscall_nr(void)
{
	int pipefd[2];
	long nr = -2;
	char c;

	if (pipe(pipefd) < 0) {
		ok(0, "a pipe");
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(pipefd[1]);
		_exit(read(pipefd[0], &c, 1) == 1 ? 0 : 1);
	}
	close(pipefd[0]);
	for (int i = 0; i < 2000 && !(proc_syscall_nr(pid, &nr) == 0 && nr == SYS_read); i++)
		usleep(1000);
	is_int(nr, SYS_read, "a child blocked in read: its syscall is read (%d)", SYS_read);
	ok(write(pipefd[1], "x", 1) == 1, "the child released");
	close(pipefd[1]);
	int status;
	waitpid(pid, &status, 0);
	is_int(proc_syscall_nr(pid, &nr), -ESRCH, "a pid reaped: -ESRCH");
	uint64_t v;
	is_int(proc_heap_end(pid, &v), -ESRCH, "  its heap: -ESRCH");
	is_int(proc_userns_is_ours(pid), -EPERM, "  its user namespace: cannot tell (-EPERM)");
	is_int(proc_auxv(pid, AT_PAGESZ, &v), -ESRCH, "  its auxiliary vector: -ESRCH");
	char *buf = NULL;
	is_int(proc_read_all(pid, "status", &buf, NULL), -ESRCH, "  a file of it: -ESRCH");
	free(buf);
	struct seccomp_notif req = { .pid = (uint32_t)pid };
	char name[64];
	is_int(child_proc_path(&req, 0, "/status", name, sizeof(name)), NOTIF_GONE,
	       "  its /proc/self: NOTIF_GONE");
}

static void test_proc_path(void)
{
	struct seccomp_notif req = { .pid = (uint32_t)getpid() };
	char name[64], want[64];

	snprintf(want, sizeof(want), "/proc/%d/status", (int)getpid());
	ok(child_proc_path(&req, 0, "/status", name, sizeof(name)) == 0 && !strcmp(name, want),
	   "/proc/self/status of the trapped thread: %s", want);
	snprintf(want, sizeof(want), "/proc/%d/task/%d", (int)getpid(), (int)getpid());
	ok(child_proc_path(&req, 1, "", name, sizeof(name)) == 0 && !strcmp(name, want),
	   "its /proc/thread-self: %s", want);
	ok(child_proc_path(&req, 0, "/a-long-name", name, 8) == 0 && strlen(name) == 7 &&
		   strncmp(name, want, 7) == 0,
	   "cut at the buffer's size");
}

static void test_proc_looks(void)
{
	uint64_t v = 0;

	/* A heap of at least a page past the start of the break. */
	char *brk0 = sbrk(0);
	if (brk0 != (void *)-1 && sbrk(8192) != (void *)-1) {
		uintptr_t want = ((uintptr_t)sbrk(0) + 4095) & ~(uintptr_t)4095;
		int r = proc_heap_end(getpid(), &v);
		ok(r == 0 && v == want, "the heap's end is the break's page (%#llx, %#llx)",
		   (unsigned long long)v, (unsigned long long)want);
		(void)sbrk(-8192);
	} else {
		ok(1, "# skip: no break to grow");
	}
	is_int(proc_userns_is_ours(getpid()), 1, "this process: in our user namespace");
	ok(proc_auxv(getpid(), AT_SYSINFO_EHDR, &v) == 0 && v == getauxval(AT_SYSINFO_EHDR),
	   "AT_SYSINFO_EHDR: the vDSO's base, as getauxval says");
	ok(proc_auxv(getpid(), AT_PAGESZ, &v) == 0 && v == (uint64_t)sysconf(_SC_PAGESIZE),
	   "AT_PAGESZ: the page size");
	is_int(proc_auxv(getpid(), 999, &v), -ENOENT, "an entry it has not: -ENOENT");
	char *buf = NULL;
	size_t len = 0;
	int r = proc_read_all(getpid(), "status", &buf, &len);
	ok(r == 0 && buf && strncmp(buf, "Name:\t", 6) == 0 && len == strlen(buf) &&
		   strstr(buf, "\nPid:\t"),
	   "a whole file: its status, NUL-terminated, its length (%zu)", len);
	free(buf);
	buf = NULL;
	is_int(proc_read_all(getpid(), "no-such-file", &buf, NULL), -ESRCH,
	       "a file the task has not: -ESRCH");
	ok(!buf, "  nothing returned");
}

int main(void)
{
	static struct supervisor sv; /* large: not on the stack */

	sv.listener = -1;
	test_own_fd_name();
	test_fd_real_path();
	test_ids(&sv);
	test_not_pending(&sv);
	test_syscall_nr();
	test_proc_looks();
	test_proc_path();
	done_testing();
}
