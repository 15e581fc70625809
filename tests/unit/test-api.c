/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-api: the public API, through the public header only: the setters and their errnos,
 * policy checks, sandlock_confine in a forked child, and spawning: capture, a failing exec, a
 * parked start, waits with timeouts, kill, the sandbox timeout, pause/resume, signals after the
 * end. Each behaviour has a control.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandlock.h"
#include "spawn-helpers.h"
#include "tap.h"

static void msleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static void setters_fs_env(sandlock_policy_t *p)
{
	is_int(sandlock_policy_add_fs_read(p, "/usr"), 0, "add_fs_read(\"/usr\")");
	is_int(sandlock_policy_add_fs_read(p, ""), -EINVAL, "add_fs_read(\"\") is -EINVAL");
	is_int(sandlock_policy_add_fs_read(p, NULL), -EINVAL, "add_fs_read(NULL) is -EINVAL");
	is_int(sandlock_policy_add_fs_read(NULL, "/usr"), -EINVAL, "add_fs_read(NULL policy)");
	is_int(sandlock_policy_add_fs_write(p, "/tmp"), 0, "add_fs_write(\"/tmp\")");
	is_int(sandlock_policy_add_fs_write(p, ""), -EINVAL, "add_fs_write(\"\") is -EINVAL");
	is_int(sandlock_policy_add_fs_write(p, NULL), -EINVAL, "add_fs_write(NULL) is -EINVAL");

	is_int(sandlock_policy_set_env(p, "FOO", "bar"), 0, "set_env(FOO, bar)");
	is_int(sandlock_policy_set_env(p, "FOO", ""), 0, "set_env(FOO, \"\") (empty value ok)");
	is_int(sandlock_policy_set_env(p, "A=B", "c"), -EINVAL, "set_env with '=' in the name");
	is_int(sandlock_policy_set_env(p, "=", "c"), -EINVAL, "set_env(\"=\")");
	is_int(sandlock_policy_set_env(p, "", "c"), -EINVAL, "set_env with an empty name");
	is_int(sandlock_policy_set_env(p, NULL, "c"), -EINVAL, "set_env with a NULL name");
	is_int(sandlock_policy_set_env(p, "X", NULL), -EINVAL, "set_env with a NULL value");
}

static void setters_process(sandlock_policy_t *p)
{
	is_int(sandlock_policy_set_clean_env(p, 1), 0, "set_clean_env(1)");
	is_int(sandlock_policy_set_cwd(p, "/tmp"), 0, "set_cwd(\"/tmp\")");
	is_int(sandlock_policy_set_cwd(p, ""), -EINVAL, "set_cwd(\"\") is -EINVAL");
	is_int(sandlock_policy_set_cwd(p, NULL), 0, "set_cwd(NULL) unsets");

	is_int(sandlock_policy_set_max_open_files(p, 64), 0, "set_max_open_files(64)");
	is_int(sandlock_policy_set_max_open_files(p, 0), -EINVAL,
	       "set_max_open_files(0) is -EINVAL");
	is_int(sandlock_policy_set_no_coredump(p, 1), 0, "set_no_coredump(1)");
	is_int(sandlock_policy_set_no_huge_pages(p, 1), 0, "set_no_huge_pages(1)");
	is_int(sandlock_policy_set_no_randomize_memory(p, 1), 0, "set_no_randomize_memory(1)");
	is_int(sandlock_policy_set_no_supervisor(p, 0), 0, "set_no_supervisor(0)");

	is_int(sandlock_policy_add_cpu_core(p, 0), 0, "add_cpu_core(0)");
	is_int(sandlock_policy_add_cpu_core(p, CPU_SETSIZE - 1), 0, "add_cpu_core(CPU_SETSIZE-1)");
	is_int(sandlock_policy_add_cpu_core(p, CPU_SETSIZE), -EINVAL,
	       "add_cpu_core(CPU_SETSIZE) is -EINVAL");
	is_int(sandlock_policy_add_cpu_core(p, UINT32_MAX), -EINVAL,
	       "add_cpu_core(UINT32_MAX) is -EINVAL");

	is_int(sandlock_policy_add_extra_deny_syscall(p, "uname"), 0, "add_extra_deny(\"uname\")");
	is_int(sandlock_policy_add_extra_deny_syscall(p, ""), -EINVAL, "add_extra_deny(\"\")");
	is_int(sandlock_policy_add_extra_deny_syscall(p, NULL), -EINVAL, "add_extra_deny(NULL)");
	is_int(sandlock_policy_add_extra_allow_syscall(p, "sysv_ipc"), 0,
	       "add_extra_allow(sysv_ipc)");
	is_int(sandlock_policy_add_extra_allow_syscall(p, ""), -EINVAL, "add_extra_allow(\"\")");
}

static void setters_protection(sandlock_policy_t *p)
{
	for (uint32_t m = SANDLOCK_PROTECTION_STRICT; m <= SANDLOCK_PROTECTION_DISABLED; m++)
		is_int(sandlock_policy_set_protection(p, SANDLOCK_PROTECTION_NET_TCP, m), 0,
		       "set_protection(NET_TCP, %u)", m);
	is_int(sandlock_policy_set_protection(p, SANDLOCK_PROTECTION_COUNT,
					      SANDLOCK_PROTECTION_STRICT),
	       -EINVAL, "set_protection(COUNT, ...) is -EINVAL");
	is_int(sandlock_policy_set_protection(p, 0, SANDLOCK_PROTECTION_DISABLED + 1), -EINVAL,
	       "set_protection(.., DISABLED+1) is -EINVAL");
	is_int(sandlock_policy_set_protection(p, 0, UINT32_MAX), -EINVAL,
	       "set_protection(.., UINT32_MAX) is -EINVAL");
	is_int(sandlock_policy_set_protection(NULL, 0, 0), -EINVAL, "set_protection(NULL policy)");

	is_int(sandlock_policy_protection_status(p, SANDLOCK_PROTECTION_NET_TCP),
	       SANDLOCK_STATUS_DISABLED, "protection_status: disabled by the policy");
	is_int(sandlock_policy_protection_status(p, SANDLOCK_PROTECTION_COUNT), -EINVAL,
	       "protection_status(COUNT) is -EINVAL");
	is_int(sandlock_policy_protection_status(NULL, 0), -EINVAL, "protection_status(NULL)");
	if (sandlock_landlock_abi_version() >= 2)
		is_int(sandlock_policy_protection_status(p, SANDLOCK_PROTECTION_FS_REFER),
		       SANDLOCK_STATUS_ACTIVE, "protection_status: strict FsRefer is active here");
}

static void test_setters(void)
{
	sandlock_policy_t *p = NULL;

	is_int(sandlock_policy_new(NULL), -EINVAL, "policy_new(NULL) is -EINVAL");
	is_int(sandlock_policy_new(&p), 0, "policy_new");
	ok(p != NULL, "  returns a policy");
	sandlock_policy_free(NULL);
	ok(1, "policy_free(NULL) returns");

	setters_fs_env(p);
	setters_process(p);
	setters_protection(p);
	sandlock_policy_free(p);
}

static void check_name(sandlock_policy_t *p, const char *name, int want_r, const char *want_msg)
{
	sandlock_error_t *e = NULL;
	int r = sandlock_policy_set_name(p, name, &e);

	is_int(r, want_r, "set_name(\"%.20s%s\") is %d", name ? name : "(null)",
	       name && strlen(name) > 20 ? "..." : "", want_r);
	if (want_msg) {
		is_str(sandlock_error_message(e), want_msg, "  message");
		is_int(sandlock_error_code(e), want_r, "  error code");
	} else
		ok(e == NULL, "  no error object");
	sandlock_error_free(e);
}

static void test_name(void)
{
	sandlock_policy_t *p = NULL;
	char n64[65], n65[66];

	sandlock_policy_new(&p);
	memset(n64, 'a', 64);
	n64[64] = 0;
	memset(n65, 'a', 65);
	n65[65] = 0;
	check_name(p, "box-1", 0, NULL);
	check_name(p, n64, 0, NULL);
	check_name(p, "...", 0, NULL);
	check_name(p, NULL, 0, NULL);
	check_name(p, "", -EINVAL, "name: must not be empty");
	check_name(p, n65, -EINVAL, "name: 65 bytes, at most 64 allowed");
	check_name(p, "a/b", -EINVAL, "name: must not contain '/'");
	check_name(p, "/", -EINVAL, "name: must not contain '/'");
	check_name(p, ".", -EINVAL, "name: must not be \".\" or \"..\"");
	check_name(p, "..", -EINVAL, "name: must not be \".\" or \"..\"");
	is_int(sandlock_policy_set_name(p, "", NULL), -EINVAL, "set_name with a NULL reterr");
	sandlock_policy_free(p);
}

static void test_check(void)
{
	sandlock_policy_t *p = system_policy();
	sandlock_error_t *e = NULL;

	is_int(sandlock_policy_check(NULL, &e), -EINVAL, "policy_check(NULL) is -EINVAL");
	sandlock_error_free(e);
	e = NULL;
	int r = sandlock_policy_check(p, &e);
	if (!ok(r == 0, "policy_check of the system read grants passes (control)"))
		diag("  %d %s", r, sandlock_error_message(e));
	sandlock_error_free(e);
	e = NULL;

	sandlock_policy_add_fs_read(p, "/nonexistent-sandlock-test/x");
	is_int(sandlock_policy_check(p, &e), -ENOENT,
	       "policy_check with a missing grant is -ENOENT");
	is_str(sandlock_error_message(e),
	       "fs_readable: /nonexistent-sandlock-test/x: No such file or directory",
	       "  the message names the field and the path");
	is_int(sandlock_error_code(e), -ENOENT, "  error code");
	ok(sandlock_error_step(e) == NULL, "  no child step");
	sandlock_error_free(e);
	e = NULL;
	sandlock_policy_free(p);

	p = system_policy();
	sandlock_policy_add_extra_deny_syscall(p, "nosuchcall");
	is_int(sandlock_policy_check(p, &e), -EINVAL, "policy_check with an unknown syscall");
	is_str(sandlock_error_message(e), "extra_deny_syscalls: unknown syscall nosuchcall",
	       "  message");
	sandlock_error_free(e);
	sandlock_policy_free(p);

	ok(sandlock_error_code(NULL) == 0 && sandlock_error_message(NULL) == NULL &&
		   sandlock_error_step(NULL) == NULL,
	   "error accessors accept NULL");
	sandlock_error_free(NULL);
	is_str(sandlock_version(), "0.1.0", "sandlock_version");
}

struct confine_report {
	int before_r, confine_r, inside_r, outside_r, outside_errno, write_r, write_errno;
	char msg[200];
};

static int try_read(const char *path)
{
	char buf[64];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, sizeof(buf));
	int e = errno;
	close(fd);
	return n < 0 ? -e : (int)n;
}

/* sandlock_confine refuses a policy with settings beyond the filesystem rules. */
static void confine_refusals(void)
{
	sandlock_policy_t *p = NULL;
	sandlock_error_t *e = NULL;

	sandlock_policy_new(&p);
	sandlock_policy_add_fs_read(p, "/tmp");
	sandlock_policy_set_env(p, "A", "1");
	is_int(sandlock_confine(p, &e), -EINVAL, "confine refuses a policy with env set");
	is_str(sandlock_error_message(e), "confine applies filesystem rules only; also set: env",
	       "  the message names env");
	sandlock_error_free(e);
	e = NULL;
	sandlock_policy_free(p);

	sandlock_policy_new(&p);
	sandlock_policy_set_cwd(p, "/");
	sandlock_policy_set_no_coredump(p, 1);
	is_int(sandlock_confine(p, &e), -EINVAL, "confine refuses cwd and no_coredump");
	is_str(sandlock_error_message(e),
	       "confine applies filesystem rules only; also set: cwd, no_coredump",
	       "  the message lists both");
	sandlock_error_free(e);
	e = NULL;
	sandlock_policy_free(p);
	is_int(sandlock_confine(NULL, NULL), -EINVAL, "confine(NULL) is -EINVAL");
}

/* In the forked child: confine under @p, try the reads and the write, report on @wfd. */
static void confine_child(sandlock_policy_t *p, const char *dir, const char *file,
			  const char *outside, int wfd)
{
	struct confine_report rep = { 0 };
	sandlock_error_t *e = NULL;

	rep.before_r = try_read(outside);
	rep.confine_r = sandlock_confine(p, &e);
	if (e)
		snprintf(rep.msg, sizeof(rep.msg), "%s", sandlock_error_message(e));
	rep.inside_r = try_read(file);
	rep.outside_r = try_read(outside);
	char wpath[80];
	snprintf(wpath, sizeof(wpath), "%s/new", dir);
	rep.write_r = open(wpath, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	rep.write_errno = errno;
	(void)!write(wfd, &rep, sizeof(rep));
	_exit(0);
}

static void confine_check(const struct confine_report *rep, ssize_t n, const char *outside)
{
	if (ok(n == (ssize_t)sizeof(*rep), "confine: the child reported")) {
		ok(rep->before_r > 0, "confine: control: %s is readable before confine (%d)",
		   outside, rep->before_r);
		is_int(rep->confine_r, 0, "confine: sandlock_confine succeeds");
		if (rep->msg[0])
			diag("  %s", rep->msg);
		is_int(rep->inside_r, 5, "confine: reading inside the read grant works");
		is_int(rep->outside_r, -EACCES, "confine: reading %s fails with EACCES", outside);
		ok(rep->write_r < 0 && rep->write_errno == EACCES,
		   "confine: creating a file in a read-only grant fails with EACCES");
	}
}

static void test_confine(void)
{
	sandlock_policy_t *p = NULL;
	const char *outside = access("/etc/hostname", R_OK) == 0 ? "/etc/hostname" : "/etc/passwd";

	confine_refusals();

	if (sandlock_landlock_abi_version() < 0) {
		diag("Landlock unavailable: confine in a child skipped");
		return;
	}
	char dir[] = "/tmp/sl-api-XXXXXX", file[64];
	if (!ok(mkdtemp(dir) != NULL, "a temp dir"))
		return;
	snprintf(file, sizeof(file), "%s/data", dir);
	int fd = open(file, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	(void)!write(fd, "hello", 5);
	close(fd);

	sandlock_policy_new(&p);
	sandlock_policy_add_fs_read(p, dir);
	for (uint32_t i = 0; i < SANDLOCK_PROTECTION_COUNT; i++)
		sandlock_policy_set_protection(p, i, SANDLOCK_PROTECTION_DEGRADED);

	int pfd[2];
	if (pipe(pfd) < 0)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		confine_child(p, dir, file, outside, pfd[1]);
	}
	close(pfd[1]);
	struct confine_report rep = { 0 };
	ssize_t n = read(pfd[0], &rep, sizeof(rep));
	close(pfd[0]);
	waitpid(pid, NULL, 0);
	confine_check(&rep, n, outside);
	sandlock_policy_free(p);
	char wpath[80];
	snprintf(wpath, sizeof(wpath), "%s/new", dir);
	unlink(wpath);
	unlink(file);
	rmdir(dir);
}

static sandlock_spawn_opts_t capture_opts(void)
{
	sandlock_spawn_opts_t o = { .size = sizeof(o) };
	o.stdin_mode = SANDLOCK_STDIO_NULL;
	o.stdout_mode = SANDLOCK_STDIO_PIPE;
	o.stderr_mode = SANDLOCK_STDIO_PIPE;
	return o;
}

static char proc_state(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return '?';
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = 0;
	char *rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' ? rp[2] : '?';
}

/* Poll until the state is (want_t: is, else: is not) 'T', for up to 2 s. */
static char wait_state(pid_t pid, int want_t)
{
	char s = '?';
	for (int i = 0; i < 200; i++) {
		s = proc_state(pid);
		if ((s == 'T') == want_t)
			break;
		msleep(10);
	}
	return s;
}

static void read_comm(pid_t pid, char *buf, size_t size)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	buf[0] = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	char *nl = strchr(buf, '\n');
	if (nl)
		*nl = 0;
}

/* The value of a "Name:\tvalue" line of /proc/<pid>/status. */
static void status_field(pid_t pid, const char *name, char *buf, size_t size)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	buf[0] = 0;
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, name, strlen(name)) == 0) {
			char *v = line + strlen(name);
			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = 0;
			snprintf(buf, size, "%s", v);
			break;
		}
	fclose(f);
}

/* /bin/true and echo with capture, and a nonzero exit. */
static void spawn_capture(sandlock_policy_t *p)
{
	sandlock_sandbox_t *sb = NULL;
	sandlock_error_t *e = NULL;
	sandlock_spawn_opts_t o = capture_opts();
	size_t len;
	int r;

	r = sandlock_spawn(p, (const char *const[]){ "/bin/true", NULL }, &o, &sb, &e);
	if (!ok(r == 0, "spawn /bin/true"))
		diag("  %d %s", r, sandlock_error_message(e));
	sandlock_error_free(e);
	e = NULL;
	if (r == 0) {
		is_int(sandlock_sandbox_wait(sb, 10000), 0, "  wait");
		is_int(sandlock_sandbox_exit_kind(sb), SANDLOCK_EXIT_CODE, "  exit kind CODE");
		is_int(sandlock_sandbox_exit_code(sb), 0, "  exit code 0");
		ok(sandlock_sandbox_stdout(sb, &len) == NULL && len == 0, "  nothing captured");
		sandlock_sandbox_free(sb);
	}

	r = sandlock_spawn(p, (const char *const[]){ "echo", "hello", "world", NULL }, &o, &sb, &e);
	if (!ok(r == 0, "spawn echo (PATH search)"))
		diag("  %d %s", r, sandlock_error_message(e));
	sandlock_error_free(e);
	e = NULL;
	if (r == 0) {
		is_int(sandlock_sandbox_wait(sb, 10000), 0, "  wait");
		const uint8_t *out = sandlock_sandbox_stdout(sb, &len);
		ok(out && len == 12 && memcmp(out, "hello world\n", 12) == 0,
		   "  stdout captured: \"hello world\\n\" (%zu bytes)", len);
		ok(sandlock_sandbox_stderr(sb, &len) == NULL && len == 0, "  stderr empty");
		ok(sandlock_sandbox_pid(sb) > 0, "  a pid");
		char want[32];
		snprintf(want, sizeof(want), "sandbox-%d", sandlock_sandbox_pid(sb));
		is_str(sandlock_sandbox_name(sb), want, "  the default name is sandbox-<pid>");
		sandlock_sandbox_free(sb);
	}

	r = sandlock_spawn(p,
			   (const char *const[]){ "/bin/sh", "-c", "echo err >&2; exit 3", NULL },
			   &o, &sb, &e);
	ok(r == 0, "spawn sh -c 'exit 3'");
	sandlock_error_free(e);
	e = NULL;
	if (r == 0) {
		sandlock_sandbox_wait(sb, 10000);
		is_int(sandlock_sandbox_exit_kind(sb), SANDLOCK_EXIT_CODE, "  exit kind CODE");
		is_int(sandlock_sandbox_exit_code(sb), 3, "  exit code 3 (control for 0)");
		const uint8_t *err = sandlock_sandbox_stderr(sb, &len);
		ok(err && len == 4 && memcmp(err, "err\n", 4) == 0, "  stderr captured");
		sandlock_sandbox_free(sb);
	}
}

/* The policy confines: reading outside the grants fails, and with /etc granted works. */
static void spawn_confined(sandlock_policy_t *p)
{
	sandlock_sandbox_t *sb = NULL;
	sandlock_error_t *e = NULL;
	sandlock_spawn_opts_t o = capture_opts();
	size_t len;
	int r;

	r = sandlock_spawn(p, (const char *const[]){ "/bin/cat", "/etc/passwd", NULL }, &o, &sb,
			   &e);
	ok(r == 0, "spawn cat /etc/passwd without a grant on /etc");
	sandlock_error_free(e);
	e = NULL;
	if (r == 0) {
		sandlock_sandbox_wait(sb, 10000);
		is_int(sandlock_sandbox_exit_code(sb), 1, "  cat fails (exit 1)");
		const uint8_t *err = sandlock_sandbox_stderr(sb, &len);
		ok(err && memmem(err, len, "Permission denied", 17),
		   "  with \"Permission denied\" (EACCES)");
		ok(sandlock_sandbox_stdout(sb, &len) == NULL, "  and prints nothing");
		sandlock_sandbox_free(sb);
	}
	sandlock_policy_t *pe = system_policy();
	sandlock_policy_add_fs_read(pe, "/etc");
	r = sandlock_spawn(pe, (const char *const[]){ "/bin/cat", "/etc/passwd", NULL }, &o, &sb,
			   NULL);
	ok(r == 0, "control: spawn cat /etc/passwd with /etc granted");
	if (r == 0) {
		sandlock_sandbox_wait(sb, 10000);
		is_int(sandlock_sandbox_exit_code(sb), 0, "  cat succeeds");
		const uint8_t *out = sandlock_sandbox_stdout(sb, &len);
		ok(out && len > 5 && memcmp(out, "root:", 5) == 0, "  and prints the file");
		sandlock_sandbox_free(sb);
	}
	sandlock_policy_free(pe);
}

/* A command that does not exist, and invalid arguments. */
static void spawn_failures(sandlock_policy_t *p)
{
	sandlock_sandbox_t *sb = NULL;
	sandlock_error_t *e = NULL;
	sandlock_spawn_opts_t o = capture_opts();
	int r;

	r = sandlock_spawn(p, (const char *const[]){ "/nonexistent-sandlock/cmd", NULL }, &o, &sb,
			   &e);
	is_int(r, -ENOENT, "spawn of a missing command is -ENOENT");
	is_str(sandlock_error_step(e), "execve", "  the failing step is execve");
	is_int(sandlock_error_code(e), -ENOENT, "  error code");
	ok(sb == NULL, "  no sandbox handed out");
	sandlock_error_free(e);
	e = NULL;
	/* A PATH of searchable directories only, so that the caller's PATH (which may hold
	 * directories this user cannot search: EACCES, as execvp reports) does not matter. */
	sandlock_policy_t *pp = system_policy();
	sandlock_policy_set_env(pp, "PATH", "/usr/local/bin:/usr/bin:/bin");
	r = sandlock_spawn(pp, (const char *const[]){ "no-such-command-sandlock", NULL }, &o, &sb,
			   &e);
	is_int(r, -ENOENT, "spawn of a missing command by PATH search is -ENOENT");
	is_str(sandlock_error_step(e), "execve", "  step execve");
	sandlock_error_free(e);
	e = NULL;
	sandlock_policy_free(pp);

	is_int(sandlock_spawn(NULL, (const char *const[]){ "/bin/true", NULL }, &o, &sb, NULL),
	       -EINVAL, "spawn with a NULL policy is -EINVAL");
	sandlock_spawn_opts_t small = { .size = 4 };
	is_int(sandlock_spawn(p, (const char *const[]){ "/bin/true", NULL }, &small, &sb, NULL),
	       -EINVAL, "spawn with opts->size too small is -EINVAL");
}

/* Parked, then started. */
static void spawn_parked_start(sandlock_policy_t *p, const sandlock_spawn_opts_t *po)
{
	sandlock_sandbox_t *sb = NULL;
	sandlock_error_t *e = NULL;
	size_t len;
	int r;

	r = sandlock_spawn(p, (const char *const[]){ "/bin/sh", "-c", "echo started", NULL }, po,
			   &sb, &e);
	if (!ok(r == 0, "spawn parked"))
		diag("  %d %s", r, sandlock_error_message(e));
	sandlock_error_free(e);
	e = NULL;
	if (r == 0) {
		char comm[32];
		msleep(100);
		read_comm(sandlock_sandbox_pid(sb), comm, sizeof(comm));
		ok(strcmp(comm, "sh") != 0 && comm[0], "  parked: not exec'd yet (comm '%s')",
		   comm);
		is_int(sandlock_sandbox_wait(sb, 100), -ETIMEDOUT, "  parked: wait(100) times out");
		is_int(sandlock_sandbox_exit_kind(sb), SANDLOCK_EXIT_RUNNING,
		       "  exit kind RUNNING");
		is_int(sandlock_sandbox_start(sb, &e), 0, "  start");
		sandlock_error_free(e);
		e = NULL;
		is_int(sandlock_sandbox_start(sb, &e), -EALREADY, "  a second start is -EALREADY");
		sandlock_error_free(e);
		e = NULL;
		is_int(sandlock_sandbox_wait(sb, 10000), 0, "  wait");
		const uint8_t *out = sandlock_sandbox_stdout(sb, &len);
		ok(out && len == 8 && memcmp(out, "started\n", 8) == 0, "  it ran after start");
		is_int(sandlock_sandbox_exit_code(sb), 0, "  exit code 0");
		sandlock_sandbox_free(sb);
	}
}

/* Parked means confined: the child already runs under its filter and NO_NEW_PRIVS. Killed or
 * freed before it starts. */
static void spawn_parked_end(sandlock_policy_t *p, const sandlock_spawn_opts_t *po)
{
	sandlock_sandbox_t *sb = NULL;
	sandlock_error_t *e = NULL;
	int r;

	r = sandlock_spawn(p, (const char *const[]){ "/bin/true", NULL }, po, &sb, NULL);
	if (ok(r == 0, "spawn parked, to kill it before it starts")) {
		char nnp[16], secc[16];
		status_field(sandlock_sandbox_pid(sb), "NoNewPrivs:", nnp, sizeof(nnp));
		status_field(sandlock_sandbox_pid(sb), "Seccomp:", secc, sizeof(secc));
		is_str(nnp, "1", "  parked: NoNewPrivs is set");
		is_str(secc, "2", "  parked: seccomp is in filter mode");
		status_field(getpid(), "Seccomp:", secc, sizeof(secc));
		is_str(secc, "0", "  control: this process has no filter");
		is_int(sandlock_sandbox_kill(sb), 0, "  kill while parked");
		is_int(sandlock_sandbox_wait(sb, 10000), 0, "  wait ends");
		is_int(sandlock_sandbox_exit_kind(sb), SANDLOCK_EXIT_SIGNAL, "  exit kind SIGNAL");
		is_int(sandlock_sandbox_exit_signal(sb), SIGKILL, "  signal 9");
		is_int(sandlock_sandbox_start(sb, &e), -EALREADY,
		       "  start after the kill is -EALREADY");
		sandlock_error_free(e);
		e = NULL;
		sandlock_sandbox_free(sb);
	}
	r = sandlock_spawn(p, (const char *const[]){ "/bin/true", NULL }, po, &sb, NULL);
	if (ok(r == 0, "spawn parked, to free it without starting")) {
		pid_t pid = sandlock_sandbox_pid(sb);
		sandlock_sandbox_free(sb);
		ok(kill(pid, 0) < 0 && errno == ESRCH, "  free reaps the parked child");
	}
}

/* The supervisor answers uname with the sandbox's name. */
static void spawn_name(void)
{
	sandlock_sandbox_t *sb = NULL;
	sandlock_spawn_opts_t o = capture_opts();
	size_t len;
	int r;

	sandlock_policy_t *pn = system_policy();
	sandlock_policy_set_name(pn, "box-one", NULL);
	r = sandlock_spawn(pn, (const char *const[]){ "/bin/uname", "-n", NULL }, &o, &sb, NULL);
	if (ok(r == 0, "spawn uname -n with name box-one")) {
		sandlock_sandbox_wait(sb, 10000);
		const uint8_t *out = sandlock_sandbox_stdout(sb, &len);
		ok(out && len == 8 && memcmp(out, "box-one\n", 8) == 0,
		   "  the hostname is box-one");
		is_str(sandlock_sandbox_name(sb), "box-one", "  sandbox_name is box-one");
		sandlock_sandbox_free(sb);
	}
	sandlock_policy_free(pn);
	pn = system_policy();
	sandlock_policy_set_no_supervisor(pn, 1);
	r = sandlock_spawn(pn, (const char *const[]){ "/bin/uname", "-n", NULL }, &o, &sb, NULL);
	if (ok(r == 0, "control: spawn uname -n without the supervisor")) {
		char host[256] = "", want[260];
		gethostname(host, sizeof(host) - 1);
		snprintf(want, sizeof(want), "%s\n", host);
		sandlock_sandbox_wait(sb, 10000);
		const uint8_t *out = sandlock_sandbox_stdout(sb, &len);
		ok(out && len == strlen(want) && memcmp(out, want, len) == 0,
		   "  the real hostname (%s)", host);
		sandlock_sandbox_free(sb);
	}
	sandlock_policy_free(pn);
}

/* start of a sandbox that was not parked; wait(0) on a sleeping sandbox, then kill. */
static void spawn_kill(sandlock_policy_t *p)
{
	sandlock_sandbox_t *sb = NULL;
	sandlock_error_t *e = NULL;
	sandlock_spawn_opts_t o = capture_opts();
	int r;

	r = sandlock_spawn(p, (const char *const[]){ "/bin/true", NULL }, &o, &sb, NULL);
	if (r == 0) {
		is_int(sandlock_sandbox_start(sb, &e), -EALREADY,
		       "start of a sandbox that was not parked is -EALREADY");
		sandlock_error_free(e);
		e = NULL;
		sandlock_sandbox_free(sb);
	}

	r = sandlock_spawn(p, (const char *const[]){ "/bin/sleep", "30", NULL }, &o, &sb, NULL);
	if (ok(r == 0, "spawn sleep 30")) {
		is_int(sandlock_sandbox_wait(sb, 0), -ETIMEDOUT, "  wait(0) is -ETIMEDOUT");
		is_int(sandlock_sandbox_exit_kind(sb), SANDLOCK_EXIT_RUNNING, "  still RUNNING");
		ok(sandlock_sandbox_done_fd(sb) >= 0, "  a done fd");
		is_int(sandlock_sandbox_exit_cause(sb), SANDLOCK_CAUSE_NONE,
		       "  no cause while it runs");
		is_str(sandlock_sandbox_notices(sb), "", "  no notices while it runs");
		is_int(sandlock_sandbox_kill(sb), 0, "  kill");
		is_int(sandlock_sandbox_wait(sb, 10000), 0, "  wait after kill");
		is_int(sandlock_sandbox_exit_kind(sb), SANDLOCK_EXIT_SIGNAL, "  exit kind SIGNAL");
		is_int(sandlock_sandbox_exit_signal(sb), SIGKILL, "  signal 9");
		is_int(sandlock_sandbox_exit_cause(sb), SANDLOCK_CAUSE_KILL, "  cause KILL");
		is_str(sandlock_sandbox_notices(sb), "", "  no notices");
		is_int(sandlock_sandbox_exit_code(sb), -1, "  no exit code");
		is_int(sandlock_sandbox_wait(sb, 0), 0, "  wait(0) on an ended sandbox is 0");
		is_int(sandlock_sandbox_signal(sb, SIGTERM), -ESRCH,
		       "  signal after the end is -ESRCH");
		is_int(sandlock_sandbox_kill(sb), -ESRCH, "  kill after the end is -ESRCH");
		is_int(sandlock_sandbox_pause(sb), -ESRCH, "  pause after the end is -ESRCH");
		sandlock_sandbox_free(sb);
	}
}

/* max_memory: @cmd under a 32M limit, its outcome and notices. */
static sandlock_sandbox_t *spawn_memory(sandlock_policy_t *p, const char *cmd)
{
	sandlock_sandbox_t *sb = NULL;
	sandlock_spawn_opts_t o = capture_opts();
	sandlock_error_t *e = NULL;

	if (sandlock_spawn(p, (const char *const[]){ "/bin/sh", "-c", cmd, NULL }, &o, &sb, &e) <
	    0) {
		diag("  spawn: %s", e ? sandlock_error_message(e) : "?");
		sandlock_error_free(e);
		return NULL;
	}
	if (sandlock_sandbox_wait(sb, 20000) < 0) {
		sandlock_sandbox_free(sb);
		return NULL;
	}
	return sb;
}

/* The control socket's "kill" (`sandlock kill`) is a cause too. */
static void spawn_control_kill(void)
{
	sandlock_policy_t *p = system_policy();
	sandlock_sandbox_t *sb = NULL;
	sandlock_spawn_opts_t o = capture_opts();
	char name[64], *answer = NULL;

	snprintf(name, sizeof(name), "cause-kill-%d", (int)getpid());
	sandlock_policy_set_name(p, name, NULL);
	if (!ok(sandlock_spawn(p, (const char *const[]){ "/bin/sleep", "30", NULL }, &o, &sb,
			       NULL) == 0,
		"spawn a named sleep 30")) {
		sandlock_policy_free(p);
		return;
	}
	int r = -1;
	for (int i = 0; i < 100 && r < 0; i++) { /* the runtime directory is claimed at once */
		r = sandlock_control(name, "{\"cmd\": \"kill\"}", 2000, &answer, NULL);
		if (r < 0)
			usleep(10000);
	}
	sandlock_free(answer);
	is_int(r, 0, "  kill through the control socket");
	is_int(sandlock_sandbox_wait(sb, 10000), 0, "  it ends");
	is_int(sandlock_sandbox_exit_cause(sb), SANDLOCK_CAUSE_KILL, "  cause KILL");
	sandlock_sandbox_free(sb);
	sandlock_policy_free(p);
}

/* Why sandlock ended the command: MEMORY when the command's own process was killed for
 * max_memory, NONE when only a process of it was (the command lives on) or none was. */
static void spawn_exit_cause(void)
{
	static const char hog[] = "python3 -c 'b=[]\nwhile 1: b.append(bytearray(1<<20))'";
	char cmd[256], want[64];
	sandlock_policy_t *p = system_policy();
	sandlock_error_t *e = NULL;

	if (access("/usr/bin/python3", X_OK) != 0) {
		diag("no /usr/bin/python3: exit cause tests skipped");
		sandlock_policy_free(p);
		return;
	}
	if (!ok(sandlock_policy_set(p, "max_memory", "32M", &e) == 0, "max_memory 32M")) {
		sandlock_error_free(e);
		sandlock_policy_free(p);
		return;
	}
	snprintf(cmd, sizeof(cmd), "exec %s", hog);
	sandlock_sandbox_t *sb = spawn_memory(p, cmd);
	if (ok(sb != NULL, "the command itself grows past max_memory")) {
		is_int(sandlock_sandbox_exit_signal(sb), SIGKILL, "  killed by SIGKILL");
		is_int(sandlock_sandbox_exit_cause(sb), SANDLOCK_CAUSE_MEMORY, "  cause MEMORY");
		snprintf(want, sizeof(want), "killed %d (python3): memory limit 32M reached\n",
			 sandlock_sandbox_pid(sb));
		is_str(sandlock_sandbox_notices(sb), want, "  the notice names it");
		sandlock_sandbox_free(sb);
	}
	snprintf(cmd, sizeof(cmd), "%s; exit 3", hog);
	sb = spawn_memory(p, cmd);
	if (ok(sb != NULL, "a process of the command grows past max_memory")) {
		is_int(sandlock_sandbox_exit_code(sb), 3, "  the command exits by itself (3)");
		is_int(sandlock_sandbox_exit_cause(sb), SANDLOCK_CAUSE_NONE, "  cause NONE");
		const char *n = sandlock_sandbox_notices(sb);
		ok(strncmp(n, "killed ", 7) == 0 &&
			   strstr(n, " (python3): memory limit 32M reached\n") != NULL,
		   "  the notice names the process killed: %s", n);
		sandlock_sandbox_free(sb);
	}
	sb = spawn_memory(p, "exit 0");
	if (ok(sb != NULL, "a command within max_memory")) {
		is_int(sandlock_sandbox_exit_cause(sb), SANDLOCK_CAUSE_NONE, "  cause NONE");
		is_str(sandlock_sandbox_notices(sb), "", "  no notices");
		sandlock_sandbox_free(sb);
	}
	sandlock_policy_free(p);
}

/* The sandbox's own timeout; it counts from the start, not while parked. */
static void spawn_timeout(sandlock_policy_t *p)
{
	sandlock_sandbox_t *sb = NULL;
	int r;

	sandlock_spawn_opts_t to = capture_opts();
	to.timeout_ms = 300;
	r = sandlock_spawn(p, (const char *const[]){ "/bin/sleep", "30", NULL }, &to, &sb, NULL);
	if (ok(r == 0, "spawn sleep 30 with timeout_ms 300")) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		is_int(sandlock_sandbox_wait(sb, 10000), 0, "  wait");
		clock_gettime(CLOCK_MONOTONIC, &t1);
		long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
		is_int(sandlock_sandbox_exit_kind(sb), SANDLOCK_EXIT_TIMEOUT,
		       "  exit kind TIMEOUT");
		is_int(sandlock_sandbox_exit_signal(sb), SIGKILL, "  killed by SIGKILL");
		is_int(sandlock_sandbox_exit_cause(sb), SANDLOCK_CAUSE_NONE, "  cause NONE");
		ok(ms >= 200 && ms < 5000, "  ended after about 300 ms (%ld ms)", ms);
		sandlock_sandbox_free(sb);
	}
	to.timeout_ms = 10000;
	r = sandlock_spawn(p, (const char *const[]){ "/bin/true", NULL }, &to, &sb, NULL);
	if (ok(r == 0, "control: a command that ends before its timeout")) {
		sandlock_sandbox_wait(sb, 10000);
		is_int(sandlock_sandbox_exit_kind(sb), SANDLOCK_EXIT_CODE, "  exit kind CODE");
		sandlock_sandbox_free(sb);
	}

	sandlock_spawn_opts_t pto = capture_opts();
	pto.flags = SANDLOCK_SPAWN_PARKED;
	pto.timeout_ms = 400;
	r = sandlock_spawn(p, (const char *const[]){ "/bin/sleep", "0.1", NULL }, &pto, &sb, NULL);
	if (ok(r == 0, "spawn parked sleep 0.1 with timeout_ms 400")) {
		msleep(600); /* longer than the timeout, while parked */
		is_int(sandlock_sandbox_exit_kind(sb), SANDLOCK_EXIT_RUNNING,
		       "  still parked after 600 ms: the timeout has not fired");
		is_int(sandlock_sandbox_start(sb, NULL), 0, "  start");
		is_int(sandlock_sandbox_wait(sb, 10000), 0, "  wait");
		is_int(sandlock_sandbox_exit_kind(sb), SANDLOCK_EXIT_CODE,
		       "  exit kind CODE: 100 ms of work fit in the 400 ms from the start");
		is_int(sandlock_sandbox_exit_code(sb), 0, "  exit code 0");
		sandlock_sandbox_free(sb);
	}
}

/* spawn with NULL opts: everything inherited, no timeout. */
static void spawn_null_opts(sandlock_policy_t *p)
{
	sandlock_sandbox_t *sb = NULL;
	int r;

	r = sandlock_spawn(p, (const char *const[]){ "/bin/true", NULL }, NULL, &sb, NULL);
	if (ok(r == 0, "spawn with NULL opts")) {
		is_int(sandlock_sandbox_wait(sb, 10000), 0, "  wait");
		is_int(sandlock_sandbox_exit_code(sb), 0, "  exit code 0");
		is_int(sandlock_sandbox_stdin_fd(sb), -EBADF, "  no stdin pipe: -EBADF");
		sandlock_sandbox_free(sb);
	}
}

/* pause / resume, and signals. */
static void spawn_pause(sandlock_policy_t *p)
{
	sandlock_sandbox_t *sb = NULL;
	sandlock_spawn_opts_t o = capture_opts();
	int r;

	r = sandlock_spawn(p, (const char *const[]){ "/bin/sleep", "30", NULL }, &o, &sb, NULL);
	if (ok(r == 0, "spawn sleep 30 for pause/resume")) {
		pid_t pid = sandlock_sandbox_pid(sb);
		char s = proc_state(pid);
		ok(s != 'T' && s != '?', "  control: running, not stopped (state %c)", s);
		is_int(sandlock_sandbox_pause(sb), 0, "  pause");
		s = wait_state(pid, 1);
		is_int(s, 'T', "  paused: state T");
		is_int(sandlock_sandbox_resume(sb), 0, "  resume");
		s = wait_state(pid, 0);
		ok(s != 'T' && s != '?', "  resumed: state %c, not T", s);
		is_int(sandlock_sandbox_exit_kind(sb), SANDLOCK_EXIT_RUNNING, "  still RUNNING");
		is_int(sandlock_sandbox_signal(sb, 0), -EINVAL, "  signal(0) is -EINVAL");
		is_int(sandlock_sandbox_signal(sb, 4096), -EINVAL, "  signal(4096) is -EINVAL");
		is_int(sandlock_sandbox_signal(sb, SIGTERM), 0, "  signal(SIGTERM)");
		is_int(sandlock_sandbox_wait(sb, 10000), 0, "  wait");
		is_int(sandlock_sandbox_exit_kind(sb), SANDLOCK_EXIT_SIGNAL, "  exit kind SIGNAL");
		is_int(sandlock_sandbox_exit_signal(sb), SIGTERM, "  signal SIGTERM");
		sandlock_sandbox_free(sb);
	}
}

static void test_spawn(void)
{
	if (sandlock_landlock_abi_version() < 0) {
		diag("Landlock unavailable: spawn tests skipped");
		return;
	}
	sandlock_policy_t *p = system_policy();
	sandlock_spawn_opts_t po = capture_opts();

	po.flags = SANDLOCK_SPAWN_PARKED;
	spawn_capture(p);
	spawn_confined(p);
	spawn_failures(p);
	spawn_parked_start(p, &po);
	spawn_parked_end(p, &po);
	spawn_name();
	spawn_kill(p);
	spawn_timeout(p);
	spawn_null_opts(p);
	spawn_pause(p);
	spawn_exit_cause();
	spawn_control_kill();
	sandlock_sandbox_free(NULL);
	ok(1, "sandbox_free(NULL) returns");
	sandlock_policy_free(p);
}

/* The header: a relative path "is made absolute against the caller's cwd". A later chdir of the
 * caller must not change which directory the grant names. */
static void test_relative_path(void)
{
	char dir[] = "/tmp/sl-rel-XXXXXX", sub[64], old[4096];
	sandlock_error_t *e = NULL;

	if (sandlock_landlock_abi_version() < 0 || !getcwd(old, sizeof(old)) || !mkdtemp(dir))
		return;
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	mkdir(sub, 0755);

	sandlock_policy_t *p = system_policy();
	if (chdir(dir) == 0) {
		is_int(sandlock_policy_add_fs_read(p, "sub"), 0, "add_fs_read(\"sub\") in %s", dir);
		int r = sandlock_policy_check(p, &e);
		ok(r == 0, "control: policy_check in the same cwd passes");
		sandlock_error_free(e);
		e = NULL;
		(void)!chdir("/");
		r = sandlock_policy_check(p, &e);
		if (!ok(r == 0, "after the caller's chdir(\"/\"), the grant still names %s", sub))
			diag("BUG: relative grant paths are resolved at spawn/check time, not made "
			     "absolute when added (got %d: %s)",
			     r, sandlock_error_message(e) ? sandlock_error_message(e) : "");
		sandlock_error_free(e);
	}
	(void)!chdir(old);
	sandlock_policy_free(p);
	rmdir(sub);
	rmdir(dir);
}

/* Run @argv under @p with stdout captured into @out (NUL-terminated). Returns the exit code,
 * or -1000 - exit kind when it did not exit normally, or the spawn error. */
static int run_capture(sandlock_policy_t *p, const char *const *argv, char *out, size_t size)
{
	sandlock_spawn_opts_t o = capture_opts();
	sandlock_sandbox_t *sb = NULL;
	sandlock_error_t *e = NULL;
	size_t len;

	out[0] = 0;
	int r = sandlock_spawn(p, argv, &o, &sb, &e);
	if (r < 0) {
		diag("  spawn %s: %d %s", argv[0], r, sandlock_error_message(e));
		sandlock_error_free(e);
		return r;
	}
	sandlock_sandbox_wait(sb, 10000);
	const uint8_t *data = sandlock_sandbox_stdout(sb, &len);
	if (data) {
		len = len < size - 1 ? len : size - 1;
		memcpy(out, data, len);
		out[len] = 0;
	}
	r = sandlock_sandbox_exit_kind(sb) == SANDLOCK_EXIT_CODE
		    ? sandlock_sandbox_exit_code(sb)
		    : -1000 - (int)sandlock_sandbox_exit_kind(sb);
	sandlock_sandbox_free(sb);
	return r;
}

/* cwd: a missing one fails in the child's chdir step, an existing one is where it runs. */
static void knob_cwd(void)
{
	char out[4096];
	sandlock_policy_t *p;
	sandlock_error_t *e = NULL;

	p = system_policy();
	sandlock_policy_set_cwd(p, "/nonexistent-sandlock-cwd");
	sandlock_sandbox_t *sb = NULL;
	sandlock_spawn_opts_t o = capture_opts();
	is_int(sandlock_spawn(p, (const char *const[]){ "/bin/true", NULL }, &o, &sb, &e), -ENOENT,
	       "a missing cwd is -ENOENT");
	is_str(sandlock_error_step(e), "chdir", "  step chdir");
	is_str(sandlock_error_message(e),
	       "chdir /nonexistent-sandlock-cwd: No such file or directory", "  message");
	sandlock_error_free(e);
	e = NULL;
	sandlock_policy_set_cwd(p, "/tmp");
	is_int(run_capture(p, (const char *const[]){ "/bin/pwd", NULL }, out, sizeof(out)), 0,
	       "cwd /tmp: pwd runs");
	is_str(out, "/tmp\n", "  and prints /tmp");
	sandlock_policy_free(p);
}

/* max_open_files and no_coredump, through ulimit. */
static void knob_rlimits(void)
{
	char out[4096];
	sandlock_policy_t *p;

	const char *const ulimit_n[] = { "/bin/sh", "-c", "ulimit -n", NULL };
	const char *const ulimit_c[] = { "/bin/sh", "-c", "ulimit -c", NULL };
	p = system_policy();
	is_int(run_capture(p, ulimit_n, out, sizeof(out)), 0, "control: ulimit -n");
	ok(strcmp(out, "37\n") != 0, "  control: not 37 (%.*s)", (int)strcspn(out, "\n"), out);
	sandlock_policy_set_max_open_files(p, 37);
	is_int(run_capture(p, ulimit_n, out, sizeof(out)), 0, "max_open_files 37: ulimit -n");
	is_str(out, "37\n", "  prints 37");
	sandlock_policy_free(p);

	struct rlimit rl;
	p = system_policy();
	if (getrlimit(RLIMIT_CORE, &rl) == 0 && rl.rlim_cur != 0) {
		is_int(run_capture(p, ulimit_c, out, sizeof(out)), 0, "control: ulimit -c");
		ok(strcmp(out, "0\n") != 0, "  control: not 0");
	}
	sandlock_policy_set_no_coredump(p, 1);
	is_int(run_capture(p, ulimit_c, out, sizeof(out)), 0, "no_coredump: ulimit -c");
	is_str(out, "0\n", "  prints 0");
	sandlock_policy_free(p);
}

/* no_randomize_memory, through the personality; cpu_cores, through nproc. */
static void knob_personality_cpus(void)
{
	char out[4096], want[4096];
	sandlock_policy_t *p;

	const char *const pers[] = { "/bin/cat", "/proc/self/personality", NULL };
	p = system_policy();
	sandlock_policy_add_fs_read(p, "/proc");
	is_int(run_capture(p, pers, out, sizeof(out)), 0, "control: cat /proc/self/personality");
	is_str(out, "00000000\n", "  control: no ADDR_NO_RANDOMIZE");
	sandlock_policy_set_no_randomize_memory(p, 1);
	is_int(run_capture(p, pers, out, sizeof(out)), 0, "no_randomize_memory: personality");
	is_str(out, "00040000\n", "  ADDR_NO_RANDOMIZE is set");
	sandlock_policy_free(p);

	cpu_set_t cs;
	if (sched_getaffinity(0, sizeof(cs), &cs) == 0 && CPU_COUNT(&cs) > 1 && CPU_ISSET(0, &cs)) {
		const char *const nproc[] = { "/usr/bin/nproc", NULL };
		p = system_policy();
		is_int(run_capture(p, nproc, out, sizeof(out)), 0, "control: nproc");
		snprintf(want, sizeof(want), "%d\n", CPU_COUNT(&cs));
		is_str(out, want, "  control: all %d CPUs", CPU_COUNT(&cs));
		sandlock_policy_add_cpu_core(p, 0);
		is_int(run_capture(p, nproc, out, sizeof(out)), 0, "cpu_cores 0: nproc");
		is_str(out, "1\n", "  one CPU");
		sandlock_policy_free(p);
	}
}

/* clean_env keeps PATH HOME USER TERM LANG (those set here), then the policy's env. */
static void knob_clean_env(void)
{
	static const char *const keep[] = { "PATH", "HOME", "USER", "TERM", "LANG" };
	const char *const env[] = { "/usr/bin/env", NULL };
	char out[4096], want[4096];
	sandlock_policy_t *p;

	setenv("SANDLOCK_TEST_SECRET", "s3cret", 1);
	p = system_policy();
	is_int(run_capture(p, env, out, sizeof(out)), 0, "control: env");
	ok(strstr(out, "SANDLOCK_TEST_SECRET=s3cret\n") != NULL,
	   "  control: the caller's environment is inherited by default");
	sandlock_policy_set_clean_env(p, 1);
	sandlock_policy_set_env(p, "FOO", "bar");
	sandlock_policy_set_env(p, "HOME", "/sandbox-home");
	/* Expected: the kept variables present here, in that order, HOME overridden in place,
	 * then FOO (an override of an absent variable is appended after them). */
	want[0] = 0;
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
		const char *v = getenv(keep[i]);
		if (v && strcmp(keep[i], "HOME") == 0)
			v = "/sandbox-home";
		if (v)
			snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s=%s\n",
				 keep[i], v);
	}
	snprintf(want + strlen(want), sizeof(want) - strlen(want), "FOO=bar\n%s",
		 getenv("HOME") ? "" : "HOME=/sandbox-home\n");
	is_int(run_capture(p, env, out, sizeof(out)), 0, "clean_env + env: env");
	is_str(out, want, "  exactly the kept variables, HOME overridden, then FOO");
	sandlock_policy_free(p);
	unsetenv("SANDLOCK_TEST_SECRET");
}

/* The process knobs reach the child, each against a control without it. */
static void test_knobs(void)
{
	if (sandlock_landlock_abi_version() < 0)
		return;
	knob_cwd();
	knob_rlimits();
	knob_personality_cpus();
	knob_clean_env();
}

/* A sandbox spawned from a thread that then exits must live on: PR_SET_PDEATHSIG follows the
 * thread that cloned the child, so sandlock clones from its own thread there. */
struct thread_spawn {
	sandlock_policy_t *policy;
	sandlock_sandbox_t *sb;
	int r;
};

static void *spawn_in_thread(void *arg)
{
	struct thread_spawn *t = arg;
	sandlock_spawn_opts_t o = capture_opts();

	t->r = sandlock_spawn(
		t->policy, (const char *const[]){ "/bin/sh", "-c", "sleep 0.3; echo alive", NULL },
		&o, &t->sb, NULL);
	return NULL;
}

/* The control: a child with PDEATHSIG forked by a thread dies when that thread exits. */
static void *fork_in_thread(void *arg)
{
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		sleep(5);
		_exit(0);
	}
	*(pid_t *)arg = pid;
	msleep(50); /* let the child set PDEATHSIG before this thread exits */
	return NULL;
}

static void test_spawn_from_thread(void)
{
	pid_t control = -1;
	pthread_t cth;
	int st = 0;
	if (pthread_create(&cth, NULL, fork_in_thread, &control) == 0)
		pthread_join(cth, NULL);
	ok(control > 0 && waitpid(control, &st, 0) == control && WIFSIGNALED(st) &&
		   WTERMSIG(st) == SIGKILL,
	   "control: a PDEATHSIG child forked by an exiting thread is killed with it");

	if (sandlock_landlock_abi_version() < 0) {
		diag("Landlock unavailable: thread spawn test skipped");
		return;
	}
	struct thread_spawn t = { .policy = system_policy() };
	pthread_t th;
	size_t len;

	ok(pthread_create(&th, NULL, spawn_in_thread, &t) == 0 && pthread_join(th, NULL) == 0,
	   "spawn from a thread that exits right after");
	if (!ok(t.r == 0, "  spawn succeeded")) {
		sandlock_policy_free(t.policy);
		return;
	}
	is_int(sandlock_sandbox_wait(t.sb, 10000), 0, "  wait from another thread");
	is_int(sandlock_sandbox_exit_kind(t.sb), SANDLOCK_EXIT_CODE,
	       "  the command outlived the spawning thread (not killed by PDEATHSIG)");
	const uint8_t *out = sandlock_sandbox_stdout(t.sb, &len);
	ok(out && len == 6 && memcmp(out, "alive\n", 6) == 0, "  and finished its work");
	sandlock_sandbox_free(t.sb);
	sandlock_policy_free(t.policy);
}

/* A parked child must hold none of the host's descriptors: had it kept another sandbox's error
 * pipe (cloned while that one was being spawned), that spawn would wait for it forever. */
static int fd_links_to(pid_t pid, const char *target)
{
	char dir[64], path[320], link[256];
	int found = 0;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		ssize_t n = readlink(path, link, sizeof(link) - 1);
		if (n > 0) {
			link[n] = 0;
			found |= strcmp(link, target) == 0;
		}
	}
	if (d)
		closedir(d);
	return found;
}

static void test_parked_holds_no_host_fd(void)
{
	sandlock_policy_t *p = system_policy();
	sandlock_spawn_opts_t po = { .size = sizeof(po), .flags = SANDLOCK_SPAWN_PARKED };
	sandlock_sandbox_t *sb = NULL;
	char self[64], target[256];
	int host[2];

	if (pipe2(host, O_CLOEXEC) < 0)
		return;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", host[1]);
	ssize_t n = readlink(self, target, sizeof(target) - 1);
	target[n > 0 ? n : 0] = 0;
	ok(fd_links_to(getpid(), target), "control: the host holds its pipe (%s)", target);
	int r = sandlock_spawn(p, (const char *const[]){ "/bin/true", NULL }, &po, &sb, NULL);
	if (ok(r == 0, "parked spawn")) {
		ok(!fd_links_to(sandlock_sandbox_pid(sb), target),
		   "  the parked child does not hold the host's pipe");
		sandlock_sandbox_free(sb);
	}
	close(host[0]);
	close(host[1]);
	sandlock_policy_free(p);
}

/* Eight sandboxes at once from eight threads of one process, each with its own name and output. */
struct concurrent {
	sandlock_policy_t *p;
	int index;
	int ok;
};

static void *spawn_concurrent(void *arg)
{
	struct concurrent *c = arg;
	sandlock_spawn_opts_t o = capture_opts();
	sandlock_sandbox_t *sb = NULL;
	char want[32];
	size_t len;

	snprintf(want, sizeof(want), "box%d\n", c->index);
	if (sandlock_spawn(c->p, (const char *const[]){ "uname", "-n", NULL }, &o, &sb, NULL) < 0)
		return NULL;
	const uint8_t *out =
		sandlock_sandbox_wait(sb, 10000) == 0 ? sandlock_sandbox_stdout(sb, &len) : NULL;
	c->ok = out && len == strlen(want) && memcmp(out, want, len) == 0 &&
		sandlock_sandbox_exit_code(sb) == 0;
	sandlock_sandbox_free(sb);
	return NULL;
}

static void test_concurrent_threads(void)
{
	struct concurrent c[8];
	pthread_t th[8];
	int good = 0;

	for (int i = 0; i < 8; i++) {
		char name[16];
		c[i] = (struct concurrent){ .p = system_policy(), .index = i };
		snprintf(name, sizeof(name), "box%d", i);
		sandlock_policy_set_name(c[i].p, name, NULL);
	}
	for (int i = 0; i < 8; i++)
		pthread_create(&th[i], NULL, spawn_concurrent, &c[i]);
	for (int i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		good += c[i].ok;
		sandlock_policy_free(c[i].p);
	}
	is_int(good, 8, "8 sandboxes from 8 threads at once: each ran and saw its own hostname");
}

static int handler_pipe[2] = { -1, -1 };

static void usr1_handler(int sig)
{
	(void)!write(handler_pipe[1], "H", 1);
}

/* A signal pending in the child before execve meets the default action, not the host's
 * handler (which a forked copy of the host would otherwise run in the confined child). */
static void test_host_handler_not_run(void)
{
	sandlock_policy_t *p = system_policy();
	sandlock_spawn_opts_t po = { .size = sizeof(po), .flags = SANDLOCK_SPAWN_PARKED };
	sandlock_sandbox_t *sb = NULL;
	struct sigaction sa = { .sa_handler = usr1_handler }, old;
	char c;

	if (pipe2(handler_pipe, O_CLOEXEC | O_NONBLOCK) < 0 || sigaction(SIGUSR1, &sa, &old) < 0)
		return;
	raise(SIGUSR1);
	ok(read(handler_pipe[0], &c, 1) == 1, "control: the host's SIGUSR1 handler runs here");
	int r = sandlock_spawn(p, (const char *const[]){ "/bin/true", NULL }, &po, &sb, NULL);
	if (ok(r == 0, "parked spawn for the handler test")) {
		/* Pending in the parked child, which blocks every signal until just before exec. */
		kill(sandlock_sandbox_pid(sb), SIGUSR1);
		sandlock_sandbox_start(sb, NULL);
		sandlock_sandbox_wait(sb, 5000);
		is_int(sandlock_sandbox_exit_kind(sb), SANDLOCK_EXIT_SIGNAL,
		       "  the child died of the signal's default action");
		is_int(sandlock_sandbox_exit_signal(sb), SIGUSR1, "  SIGUSR1");
		ok(read(handler_pipe[0], &c, 1) < 0,
		   "  the host's handler did not run in the child");
		sandlock_sandbox_free(sb);
	}
	sigaction(SIGUSR1, &old, NULL);
	close(handler_pipe[0]);
	close(handler_pipe[1]);
	sandlock_policy_free(p);
}

/* Options this library does not know must be zero; reserved must be zero. */
static void test_opts_versioning(void)
{
	sandlock_policy_t *p = system_policy();
	sandlock_sandbox_t *sb = NULL;
	sandlock_error_t *e = NULL;
	struct {
		sandlock_spawn_opts_t o;
		uint64_t future;
	} big = { .o = { .size = sizeof(big) } };

	big.future = 1;
	is_int(sandlock_spawn(p, (const char *const[]){ "/bin/true", NULL }, &big.o, &sb, &e),
	       -E2BIG, "a non-zero option beyond this library's struct: -E2BIG");
	ok(e && strstr(sandlock_error_message(e), "unknown to this library"), "  with a message");
	sandlock_error_free(e);
	big.future = 0;
	int r = sandlock_spawn(p, (const char *const[]){ "/bin/true", NULL }, &big.o, &sb, NULL);
	ok(r == 0, "a larger struct with a zero tail: accepted (control)");
	if (r == 0) {
		sandlock_sandbox_wait(sb, 5000);
		sandlock_sandbox_free(sb);
	}
	sandlock_spawn_opts_t o = { .size = sizeof(o), .reserved = 1 };
	is_int(sandlock_spawn(p, (const char *const[]){ "/bin/true", NULL }, &o, &sb, NULL),
	       -EINVAL, "reserved != 0: -EINVAL");
	sandlock_policy_free(p);
}

/* sandlock_policy_check refuses what spawn refuses. */
static void test_check_supervision(void)
{
	sandlock_policy_t *p = system_policy();
	sandlock_error_t *e = NULL;

	is_int(sandlock_policy_check(p, NULL), 0, "check: a plain policy passes (control)");
	sandlock_policy_set_no_supervisor(p, 1);
	sandlock_policy_set_name(p, "box", NULL);
	is_int(sandlock_policy_check(p, &e), -EINVAL, "check: no_supervisor with a name: -EINVAL");
	ok(e && strstr(sandlock_error_message(e), "no_supervisor: cannot enforce name"),
	   "  naming the field");
	sandlock_error_free(e);
	sandlock_policy_free(p);
}

int main(void)
{
	test_setters();
	test_name();
	test_check();
	test_confine();
	test_spawn();
	test_spawn_from_thread();
	test_parked_holds_no_host_fd();
	test_concurrent_threads();
	test_host_handler_not_run();
	test_opts_versioning();
	test_check_supervision();
	test_knobs();
	test_relative_path();
	return done_testing();
}
