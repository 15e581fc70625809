/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/open: open(2), openat(2), openat2(2), trapped only where a file is served from the
 * supervisor's view instead of the host's:
 *  - /etc/hosts, when a rule names a host: the names resolved at start (plan.net.hosts);
 *  - /proc/net/tcp and tcp6 under port_remap: the sandbox's own sockets, with their virtual
 *    ports (proc-net.c), whatever name reaches the file (/proc/net/tcp, /proc/self/net/tcp,
 *    /proc/<pid>/task/<tid>/net/tcp, a name relative to a descriptor of /proc/net);
 *  - /proc/cpuinfo and /sys/devices/system/cpu/{online,possible,present} under num_cpus
 *    (cpus.c), under the same kinds of names;
 *  - the trust bundles of http_inject_ca, with the proxy's CA appended (http-trust.c).
 * The answer is a sealed memfd, installed in the child and returned in one step
 * (SECCOMP_ADDFD_FLAG_SEND). Any other open is the kernel's (CONTINUE).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cpus.h"
#include "fd-util.h"
#include "fs-write.h"
#include "hostname.h"
#include "http-trust.h"
#include "memory.h"
#include "path-util.h"
#include "handlers.h"
#include "macro.h"
#include "plan/plan.h"
#include "proc-net.h"
#include "proc-views.h"
#include "procs.h"
#include "supervisor/args.h"
#include "supervisor/child.h"
#include "supervisor/groups.h"
#include "supervisor/policy-fn.h"
#include "supervisor/supervisor.h"

/* Serve @text as the file the open returns. */
static int answer_file(struct supervisor *sv, const struct seccomp_notif *req, const char *name,
		       const char *text, size_t len, uint64_t flags)
{
	_cleanup_close_ int fd = memfd_sealed_readonly(name, text, len);
	if (fd < 0)
		return fd;
	/* Answered: the new descriptor is the syscall's result. */
	return notif_addfd_send(sv->listener, req, fd, (flags & O_CLOEXEC) != 0);
}

/* The files served from a view. */
enum view {
	VIEW_NONE,
	VIEW_TCP4,
	VIEW_TCP6,
	VIEW_CPUINFO,
	VIEW_CPU_ONLINE,
	VIEW_CPU_POSSIBLE,
	VIEW_CPU_PRESENT,
	VIEW_MEMINFO,
	VIEW_LOADAVG,
	VIEW_UPTIME,
	VIEW_MOUNTS,
	VIEW_MOUNTINFO,
	VIEW_HOSTNAME,
	VIEW_RANDOM, /* /dev/urandom, /dev/random under random_seed: a stream (random.c) */
};

static int ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);
	return len >= n && strcmp(s + len - n, suffix) == 0;
}

/* Which view @fd is, as the supervisor reaches it: a procfs file whose path ends in /net/tcp
 * or /net/tcp6 (port_remap) or is /proc/cpuinfo, or the sysfs CPU lists (num_cpus). */
static enum view view_of(struct supervisor *sv, int fd)
{
	char real[PATH_MAX];
	struct statfs fs;

	if (fstatfs(fd, &fs) < 0)
		return VIEW_NONE;
	ssize_t k = fd_real_path(fd, real, sizeof(real));
	if (k <= 0)
		return VIEW_NONE;
	size_t len = (size_t)k;
	/* Served only where the policy grants reading the file: the views hold the host's data
	 * too (its CPUs), and without a grant Landlock refuses the real file (CONTINUE). */
	if (!path_is_beneath_any(real, sv->plan->fs.granted))
		return VIEW_NONE;
	if (fs.f_type != PROC_SUPER_MAGIC && fs.f_type != SYSFS_MAGIC) {
		/* The kernel's random devices (1:8, 1:9) under random_seed, by identity. */
		struct stat st;
		if (sv->random.seeded && fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) &&
		    (st.st_rdev == makedev(1, 8) || st.st_rdev == makedev(1, 9)))
			return VIEW_RANDOM;
		/* /etc/hostname is the sandbox's name while it serves /proc (opens resolved). */
		return sv->plan->proc.served && strcmp(real, "/etc/hostname") == 0 ? VIEW_HOSTNAME
										   : VIEW_NONE;
	}
	if (fs.f_type == PROC_SUPER_MAGIC && sv->plan->net.port_remap) {
		if (ends_with(real, len, "/net/tcp"))
			return VIEW_TCP4;
		if (ends_with(real, len, "/net/tcp6"))
			return VIEW_TCP6;
	}
	if (fs.f_type == PROC_SUPER_MAGIC && sv->max_memory && strcmp(real, "/proc/meminfo") == 0)
		return VIEW_MEMINFO;
	if (fs.f_type == PROC_SUPER_MAGIC && sv->plan->proc.served) {
		/* /proc served by the supervisor: the sandbox's load, uptime and mounts. */
		if (strcmp(real, "/proc/loadavg") == 0)
			return VIEW_LOADAVG;
		if (strcmp(real, "/proc/uptime") == 0)
			return VIEW_UPTIME;
		if (strcmp(real, "/proc/sys/kernel/hostname") == 0)
			return VIEW_HOSTNAME;
		if (strncmp(real, "/proc/", 6) == 0 && real[6] >= '1' && real[6] <= '9') {
			if (ends_with(real, len, "/mounts"))
				return VIEW_MOUNTS;
			if (ends_with(real, len, "/mountinfo"))
				return VIEW_MOUNTINFO;
		}
	}
	if (!sv->num_cpus)
		return VIEW_NONE;
	if (fs.f_type == PROC_SUPER_MAGIC)
		return ends_with(real, len, "/cpuinfo") && !ends_with(real, len, "/net/cpuinfo")
			       ? VIEW_CPUINFO
			       : VIEW_NONE;
	return ends_with(real, len, "/devices/system/cpu/online")     ? VIEW_CPU_ONLINE
	       : ends_with(real, len, "/devices/system/cpu/possible") ? VIEW_CPU_POSSIBLE
	       : ends_with(real, len, "/devices/system/cpu/present")  ? VIEW_CPU_PRESENT
								      : VIEW_NONE;
}

/* The text of view @v. */
static int view_text(struct supervisor *sv, enum view v, char **ret, size_t *len)
{
	switch (v) {
	case VIEW_TCP4:
	case VIEW_TCP6:
		return proc_net_table(sv, v == VIEW_TCP6, ret, len);
	case VIEW_CPUINFO:
		return cpus_cpuinfo(sv->num_cpus, ret, len);
	case VIEW_MEMINFO:
		return memory_meminfo(sv, ret, len);
	case VIEW_LOADAVG:
		return view_loadavg(sv, ret, len);
	case VIEW_UPTIME:
		return view_uptime(sv, ret, len);
	case VIEW_MOUNTS:
	case VIEW_MOUNTINFO:
		return view_mounts(sv, v == VIEW_MOUNTINFO, ret, len);
	case VIEW_HOSTNAME:
		return view_hostname(sv, ret, len);
	default: {
		int n = sv->num_cpus > 1 ? asprintf(ret, "0-%u\n", sv->num_cpus - 1)
					 : asprintf(ret, "0\n");
		if (n < 0)
			return -ENOMEM;
		*len = (size_t)n;
		return 0;
	}
	}
}

/* Answer the open with view @v, read-only. */
static int serve_view(struct supervisor *sv, const struct seccomp_notif *req, enum view v,
		      uint64_t flags)
{
	char *text = NULL;
	size_t len = 0;

	if ((flags & O_ACCMODE) != O_RDONLY)
		return -EACCES; /* served read-only */
	if (v == VIEW_RANDOM)
		return random_serve_open(sv, req, flags);
	int r = view_text(sv, v, &text, &len);
	if (r == 0)
		r = answer_file(sv, req, "view", text, len, flags);
	free(text);
	return r;
}

struct view_job {
	struct supervisor *sv;
	struct seccomp_notif req;
	enum view view;
	uint64_t flags;
};

/* On a worker: the view's text (for a TCP table, a scan of the sandbox's processes), then the
 * answer. */
static void view_worker(int listener, int sock, void *arg)
{
	struct view_job *job = arg;
	struct seccomp_notif_resp resp = { .id = job->req.id };
	char *text = NULL;
	size_t len = 0;

	(void)sock;
	if (listener >= 0 && notif_id_valid(listener, job->req.id)) {
		int r = view_text(job->sv, job->view, &text, &len);
		if (r == 0) {
			_cleanup_close_ int fd = memfd_sealed_readonly("view", text, len);
			r = fd < 0 ? fd
				   : notif_addfd_send(listener, &job->req, fd,
						      (job->flags & O_CLOEXEC) != 0);
		}
		if (r != NOTIF_DEFERRED && r != NOTIF_GONE) {
			notif_answer_errno(&resp, r < 0 ? r : -EIO);
			(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp); /* ENOENT: gone */
		}
	}
	free(text);
	free(job);
}

/* Whether @path may name a view: its last component is one of a view's names ("tcp" and
 * "tcp6" under port_remap; "cpuinfo", "online", "possible", "present" under num_cpus;
 * "urandom", "random" under random_seed), or it is
 * a descriptor's own name ("/proc/self/fd/N", "/dev/fd/N": a reopen). Only those are
 * resolved; another name through a symlink to a view's file is not followed
 * (docs/decisions.md). */
static int may_be_view(struct supervisor *sv, const char *path)
{
	static const char *const tcp[] = { "tcp", "tcp6" };
	static const char *const cpu[] = { "cpuinfo", "online", "possible", "present" };
	const char *rest;
	int n;

	if (own_fd_name(path, &n, &rest) && !rest[strspn(rest, "/")])
		return 1;
	for (size_t i = 0; sv->plan->net.port_remap && i < ELEMENTSOF(tcp); i++)
		if (path_last_is(path, tcp[i]))
			return 1;
	if (sv->max_memory && path_last_is(path, "meminfo"))
		return 1;
	if (sv->random.seeded && (path_last_is(path, "urandom") || path_last_is(path, "random")))
		return 1;
	for (size_t i = 0; sv->num_cpus && i < ELEMENTSOF(cpu); i++)
		if (path_last_is(path, cpu[i]))
			return 1;
	return 0;
}

/* ---- /proc, served by the supervisor (plan.proc.served) ---------------------------------- */

/* The files of /proc no grant reaches. */
static const char *const proc_denied[] = { "kcore", "kmsg",	 "kallsyms",
					   "keys",  "key-users", "sysrq-trigger" };
/* The files of a process's /proc directory no grant reaches: every mount of the host. */
static const char *const pid_denied[] = { "mountstats" };

/* EACCES for @req's open of @real, refused @why, told as a denial event. */
static int proc_refused(struct supervisor *sv, const struct seccomp_notif *req, const char *real,
			uint64_t flags, enum proc_refusal why)
{
	proc_refused_event(sv, req, real, flags, why);
	return -EACCES;
}

/* The open of a procfs file @fd (O_PATH, resolved from the child's name) asked with @flags,
 * decided on the file reached: another process's /proc/<pid> (not one of the sandbox's) and
 * the denied files are refused (EACCES), a view is served, anything else is opened again here
 * with what the grants allow and installed in the child. Landlock leaves /proc out of every
 * grant (LANDLOCK_BUILD_MEDIATE_PROC), so the CONTINUE of any other open reaches nothing of
 * /proc, whatever the name says by then. */
static int proc_open(struct supervisor *sv, const struct seccomp_notif *req, int fd, uint64_t flags,
		     int dirfd, const char *name, uint64_t resolve)
{
	char real[PATH_MAX], sub[PATH_MAX + 64];
	_cleanup_close_ int again = -1;

	if (fd_real_path(fd, real, sizeof(real)) <= 0)
		return -EACCES;
	/* "self" and "thread-self" resolved here named the supervisor: the child's. */
	char svdir[32];
	int svlen = snprintf(svdir, sizeof(svdir), "/proc/%d", (int)getpid());
	if (path_is_beneath(real, svdir)) {
		/* Named without a symlink on the way: the supervisor's own, outside the sandbox.
		 * Through one ("self", "thread-self", /etc/mtab, /dev/stdin...): the child's. */
		_cleanup_close_ int plain =
			child_path_open(sv, req, dirfd, name, resolve | RESOLVE_NO_SYMLINKS, 0);
		if (plain >= 0) {
			proc_refused_event(sv, req, real, flags, PROC_REFUSED_OTHER);
			return -EACCES;
		}
		char task[48];
		int tlen = snprintf(task, sizeof(task), "%s/task/%d", svdir, (int)gettid());
		int in_task = path_is_beneath(real, task);
		int r = child_proc_path(req, in_task, real + (in_task ? tlen : svlen), sub,
					sizeof(sub));
		if (r < 0)
			return r;
		struct open_how how = { .flags = O_PATH | O_CLOEXEC,
					.resolve = RESOLVE_NO_MAGICLINKS };
		again = (int)syscall(SYS_openat2, AT_FDCWD, sub, &how, sizeof(how));
		if (again < 0)
			return negative_errno();
		fd = again;
		if (fd_real_path(fd, real, sizeof(real)) <= 0)
			return -EACCES;
	}
	/* Only the /proc the supervisor serves: another procfs mounted elsewhere is refused
	 * whole (and left out of the grants: landlock.c). */
	struct stat st;
	if (!path_is_beneath(real, "/proc") || fstat(fd, &st) < 0 || !sv->proc_dev ||
	    st.st_dev != sv->proc_dev) {
		proc_refused_event(sv, req, real, flags, PROC_REFUSED_ELSEWHERE);
		return -EACCES;
	}
	/* Another process's directory, or a denied file. */
	long pid;
	char *end;
	if (strncmp(real, "/proc/", 6) == 0 && (pid = strtol(real + 6, &end, 10)) > 0 &&
	    (*end == '\0' || *end == '/') && !sandbox_owns_pid(sv, (pid_t)pid))
		return proc_refused(sv, req, real, flags, PROC_REFUSED_OTHER);
	for (size_t i = 0; i < ELEMENTSOF(proc_denied); i++) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%s", proc_denied[i]);
		if (path_is_beneath(real, path))
			return proc_refused(sv, req, real, flags, PROC_REFUSED_NEVER);
	}
	for (size_t i = 0; i < ELEMENTSOF(pid_denied); i++)
		if (strncmp(real, "/proc/", 6) == 0 && real[6] >= '1' && real[6] <= '9' &&
		    ends_with(real, strlen(real), pid_denied[i]) &&
		    real[strlen(real) - strlen(pid_denied[i]) - 1] == '/')
			return proc_refused(sv, req, real, flags, PROC_REFUSED_NEVER);
	/* /proc/<pid>/net: the socket tables, not the host's interfaces (dev, if_inet6 with
	 * addresses derived from MACs, arp, route...): the route socket shows only lo. */
	const char *net = strstr(real, "/net/");
	if (net && (pid = strtol(real + 6, &end, 10)) > 0 && *end == '/' &&
	    (end == net || (strncmp(end, "/task/", 6) == 0 && strchr(end + 6, '/') == net))) {
		static const char *const tables[] = { "tcp",	   "tcp6",	"udp",
						      "udp6",	   "unix",	"sockstat",
						      "sockstat6", "protocols", "netstat",
						      "snmp" };
		int ok = 0;
		for (size_t i = 0; i < ELEMENTSOF(tables) && !ok; i++)
			ok = strcmp(net + 5, tables[i]) == 0;
		if (!ok)
			return proc_refused(sv, req, real, flags, PROC_REFUSED_NET);
	}
	/* What the grants allow (Landlock would have decided this). */
	int acc = (int)(flags & O_ACCMODE);
	if (!(flags & O_PATH) &&
	    ((acc != O_WRONLY && !path_is_beneath_any(real, sv->plan->fs.granted)) ||
	     ((acc != O_RDONLY || (flags & O_TRUNC)) &&
	      !path_is_beneath_any(real, sv->plan->fs.write_grants))))
		return proc_refused(sv, req, real, flags, PROC_REFUSED_GRANT);
	enum view view = view_of(sv, fd);
	if (view != VIEW_NONE && !(flags & O_PATH))
		return serve_view(sv, req, view, flags);
	_cleanup_close_ int opened = -1;
	if (flags & O_PATH) {
		opened = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	} else {
		char self[64];
		snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
		/* Opened again through the resolved file, as this process: what the kernel
		 * checks then (permissions, ptrace access to another's files) is what it checks
		 * for the child, which has the same ids. Never a terminal of the supervisor's. */
		opened = open(self, (int)(flags & ~(uint64_t)(O_CREAT | O_EXCL | O_NOFOLLOW)) |
					    O_NOCTTY | O_CLOEXEC);
	}
	if (opened < 0)
		return negative_errno();
	return notif_addfd_send(sv->listener, req, opened, (flags & O_CLOEXEC) != 0);
}

/* Whether @path (relative to the child's @dirfd or cwd) may reach /proc: an absolute name
 * under /proc or one of the system's symlinks into it (/etc/mtab, /dev/fd, /dev/std*), or a
 * relative name from a directory on procfs. */
static int may_reach_proc(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
			  const char *path)
{
	static const char *const links[] = { "/etc/mtab", "/dev/fd", "/dev/stdin", "/dev/stdout",
					     "/dev/stderr" };

	if (path[0] == '/') {
		const char *p = path;
		while (p[0] == '/' && p[1] == '/')
			p++; /* "//proc" */
		if (strncmp(p, "/proc", 5) == 0 && (p[5] == '/' || !p[5]))
			return 1;
		for (size_t i = 0; i < ELEMENTSOF(links); i++)
			if (path_is_beneath(p, links[i]))
				return 1;
		/* ".." on the way ("/usr/../proc") may lead anywhere. */
		return strstr(path, "..") != NULL;
	}
	/* Relative: where the directory is, by its name (one readlink; not a decision: a
	 * directory that is procfs under another name is the kernel's, which refuses it). */
	char dir[PATH_MAX];
	if (proc_fd_path((pid_t)req->pid, dirfd, dir, sizeof(dir)) <= 0)
		return 1; /* cannot tell: resolve */
	(void)sv;
	return path_is_beneath(dir, "/proc") || strstr(path, "..");
}

/* landlock_restrict_self(2) while /proc is served: a process that confines itself further
 * (a sandbox inside this one) must not be served /proc with the supervisor's rights, and
 * which processes inherit that domain cannot be told: /proc is served to nobody from now on
 * (the kernel then refuses it, Landlock having left it out). CONTINUE: the call itself is the
 * kernel's, and only narrows what the caller may do. */
int handle_landlock_restrict(struct supervisor *sv, const struct seccomp_notif *req,
			     struct seccomp_notif_resp *resp)
{
	/* deny_path's opens are made by a thread under the sandbox's own domain, not the nested
	 * one: no nesting while a deny is in force (and no deny after it). */
	int r = sv->pfn ? policy_fn_nest(sv, req) : 0;
	if (r < 0)
		return r;
	sv->proc_nested = 1;
	return notif_answer_continue(resp);
}

/* An open as the call gives it (open's and openat's flags narrowed to the int the kernel takes;
 * openat2's from its struct open_how), and its name once a server read it (the later ones use
 * it). */
struct open_call {
	struct path_args pa;
	int have_path;
	char path[PATH_MAX];
};

/* The open of a sandbox whose /proc the supervisor serves (plan.proc.served). */
static int open_mediated(struct supervisor *sv, const struct seccomp_notif *req,
			 struct seccomp_notif_resp *resp, const struct open_call *c)
{
	const int dirfd = c->pa.dirfd;
	const uint64_t flags = c->pa.flags, resolve = c->pa.resolve;
	char path[PATH_MAX];
	int r;

	/* O_PATH: the kernel's. It grants nothing to read or write (Landlock does not see
	 * it, and every open made through it later, /proc/self/fd/N or a dirfd, is trapped
	 * and decided here), so CONTINUE is safe whatever the name reads by then. */
	if ((flags & O_PATH) || sv->proc_nested) {
		/* proc_nested: a process of the sandbox confined itself further: /proc is
		 * no longer served, and Landlock refuses it (CONTINUE, as above). */
		return notif_answer_continue(resp);
	}
	/* The name, read already where a server before asked (fs-write.c). */
	r = c->have_path ? (snprintf(path, sizeof(path), "%s", c->path), 0)
			 : child_read_path(sv, req, c->pa.path, path, sizeof(path));
	/* "/proc/self" and "/proc/thread-self" named outright are the caller's (resolved
	 * here they would be the supervisor's, which only a symlink's way is mapped back
	 * from: proc_open). */
	int n_fd;
	const char *rest;
	int own = r == 0 && own_fd_name(path, &n_fd, &rest); /* the caller's fd N */
	if (r == 0 && !own) {
		int k = child_proc_self_name(req, path, sizeof(path));
		if (k < 0)
			return k;
	}
	/* Only names that may reach /proc or a view are resolved (the rest CONTINUE at
	 * once, as below). A symlink of another name into /proc (a user's own) is then
	 * the kernel's, which refuses it: functionality lost, nothing reached. */
	if (r == 0 && !own && !may_reach_proc(sv, req, dirfd, path) && !may_be_view(sv, path) &&
	    !path_last_is(path, "hostname")) {
		return notif_answer_continue(resp);
	}
	_cleanup_close_ int fd =
		r == 0 ? child_path_open(sv, req, dirfd, path, resolve, (flags & O_NOFOLLOW) != 0)
		       : r;
	if (fd == NOTIF_GONE)
		return fd;
	struct statfs fs;
	if (fd >= 0 && fstatfs(fd, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC) {
		/* Served with the supervisor's ids: only to a thread that still has the
		 * sandbox's (a process that dropped them, or stacked a seccomp filter of a
		 * sandbox of its own, is left to the kernel, which refuses /proc). */
		r = proc_same_ids(sv, (pid_t)req->pid);
		if (r < 0)
			return r;
		if (!r) {
			return notif_answer_continue(resp);
		}
		return proc_open(sv, req, fd, flags, dirfd, path, resolve);
	}
	/* The sysfs views (num_cpus) and /etc/hostname. */
	enum view view = fd >= 0 && !(flags & (O_PATH | O_DIRECTORY | O_CREAT)) ? view_of(sv, fd)
										: VIEW_NONE;
	if (view != VIEW_NONE)
		return serve_view(sv, req, view, flags);
	/* Not procfs (or not resolved here: a magic link on the way): the kernel's. Safe
	 * whatever the name reads by then: Landlock leaves /proc out of every grant, so
	 * nothing of /proc is reached that way. */
	return notif_answer_continue(resp);
}

/* Whether the open of @path reaches the host's /etc/hosts, by identity: every spelling of it
 * ("/etc/./hosts", "//etc//hosts", "/usr/../etc/hosts"), a name relative to a descriptor of
 * /etc, a symlink named "hosts" or a symlinked directory on the way, a reopen through
 * "/proc/self/fd/N". Only names ending in "hosts" (and reopens) are resolved, as for the /proc
 * views: resolving every open would cost each one a lookup. 1, 0, NOTIF_GONE. Not a decision
 * the confinement rests on: an open the check and the kernel resolve differently (a name
 * swapped meanwhile, a symlink of another name) reads the real file, which Landlock allows or
 * refuses like any other. */
static int is_hosts(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		    const char *path, uint64_t flags, uint64_t resolve)
{
	const struct file_id *id = &sv->plan->net.hosts_id;
	const char *rest;
	struct stat st;
	int n;

	if (!id->dev && !id->ino) /* the host has none: the name alone */
		return strcmp(path, "/etc/hosts") == 0;
	int reopen = own_fd_name(path, &n, &rest) && !rest[strspn(rest, "/")];
	if (!reopen && !path_last_is(path, "hosts"))
		return 0;
	_cleanup_close_ int fd =
		child_path_open(sv, req, dirfd, path, resolve, (flags & O_NOFOLLOW) != 0);
	if (fd == NOTIF_GONE)
		return fd;
	return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == id->dev && st.st_ino == id->ino;
}

/* A server of opens: whether it may answer the call (@matches: the sandbox's configuration and
 * the flags, no memory read), and its answer (@serve: a verdict or -errno; NOTIF_NOT_MINE hands
 * the call to the next). */
struct open_server {
	int (*matches)(const struct supervisor *sv, const struct open_call *c);
	int (*serve)(struct supervisor *sv, const struct seccomp_notif *req,
		     struct seccomp_notif_resp *resp, struct open_call *c);
};

/* Only a plain read-only open of /etc/hosts is answered: anything else (O_PATH, O_DIRECTORY,
 * O_CREAT, O_TRUNC, a write...) is the kernel's, which gives its own answer. */
static int hosts_matches(const struct supervisor *sv, const struct open_call *c)
{
	const uint64_t plain =
		O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_LARGEFILE | O_NOFOLLOW | O_NOATIME;
	return sv->plan->net.hosts && (c->pa.flags & O_ACCMODE) == O_RDONLY &&
	       (c->pa.flags & ~(uint64_t)(plain | O_ACCMODE)) == 0;
}

static int hosts_serve(struct supervisor *sv, const struct seccomp_notif *req,
		       struct seccomp_notif_resp *resp, struct open_call *c)
{
	int r = child_read_path(sv, req, c->pa.path, c->path, sizeof(c->path));
	c->have_path = r == 0;
	r = c->have_path ? is_hosts(sv, req, c->pa.dirfd, c->path, c->pa.flags, c->pa.resolve) : 0;
	if (r == NOTIF_GONE)
		return r;
	if (!r)
		return NOTIF_NOT_MINE;
	return answer_file(sv, req, "hosts", sv->plan->net.hosts, strlen(sv->plan->net.hosts),
			   c->pa.flags);
}

/* A name given: /etc/hostname is it, read-only (hostname.c). */
static int hostname_matches(const struct supervisor *sv, const struct open_call *c)
{
	return sv->hostname_served;
}

static int hostname_serve(struct supervisor *sv, const struct seccomp_notif *req,
			  struct seccomp_notif_resp *resp, struct open_call *c)
{
	return hostname_open(sv, req, c->pa.dirfd, c->pa.path, c->path, sizeof(c->path),
			     &c->have_path, c->pa.flags, c->pa.resolve);
}

/* http_inject_ca: a bundle is served with the CA appended, read-only (http-trust.c). */
static int trust_matches(const struct supervisor *sv, const struct open_call *c)
{
	return http_trust_matches(sv, c->pa.flags);
}

static int trust_serve(struct supervisor *sv, const struct seccomp_notif *req,
		       struct seccomp_notif_resp *resp, struct open_call *c)
{
	return http_trust_open(sv, req, &c->pa, c->path, sizeof(c->path), &c->have_path);
}

/* Beneath a writable grant holding a denied path: the supervisor's (fs-write.c). The name read
 * there serves the servers below too. */
static int write_matches(const struct supervisor *sv, const struct open_call *c)
{
	return sv->plan->fs.write_roots && !(c->pa.flags & O_PATH);
}

static int write_serve(struct supervisor *sv, const struct seccomp_notif *req,
		       struct seccomp_notif_resp *resp, struct open_call *c)
{
	int r = c->have_path ? 0 : child_read_path(sv, req, c->pa.path, c->path, sizeof(c->path));
	c->have_path = r == 0;
	if (r == 0)
		r = fs_write_open(sv, req, resp, &c->pa, c->path);
	return r == -ENAMETOOLONG || r == -EFAULT ? NOTIF_NOT_MINE : r;
}

/* /proc served by the supervisor: every open is resolved as the child would (a symlink of any
 * name may lead there); one that reaches procfs is decided on the file reached. */
static int proc_matches(const struct supervisor *sv, const struct open_call *c)
{
	return sv->plan->proc.served;
}

static int proc_serve(struct supervisor *sv, const struct seccomp_notif *req,
		      struct seccomp_notif_resp *resp, struct open_call *c)
{
	return open_mediated(sv, req, resp, c);
}

/* Under port_remap, num_cpus, max_memory or random_seed, an open that can read, of a name that
 * may be a view (the TCP tables, the CPU and memory views, the random devices). */
static int views_matches(const struct supervisor *sv, const struct open_call *c)
{
	return (sv->plan->net.port_remap || sv->num_cpus || sv->max_memory || sv->random.seeded) &&
	       (c->pa.flags & O_ACCMODE) != O_WRONLY &&
	       !(c->pa.flags & (O_PATH | O_DIRECTORY | O_CREAT));
}

static int views_serve(struct supervisor *sv, const struct seccomp_notif *req,
		       struct seccomp_notif_resp *resp, struct open_call *c)
{
	/* Most names cannot be one: a first look (unchecked, a short name's first 256 bytes:
	 * what it finds only chooses between the kernel's open and a checked read) spares their
	 * ID_VALID. */
	char peek[257] = "";
	if (!c->have_path && notif_mem_peek(req, c->pa.path, peek, sizeof(peek) - 1) == 0 &&
	    memchr(peek, '\0', sizeof(peek) - 1) && !may_be_view(sv, peek))
		return NOTIF_NOT_MINE;
	int r = c->have_path ? 0 : child_read_path(sv, req, c->pa.path, c->path, sizeof(c->path));
	_cleanup_close_ int fd =
		r == 0 && may_be_view(sv, c->path)
			? child_path_open(sv, req, c->pa.dirfd, c->path, c->pa.resolve,
					  (c->pa.flags & O_NOFOLLOW) != 0)
			: -ENOENT;
	if (fd == NOTIF_GONE)
		return fd;
	enum view view = fd >= 0 ? view_of(sv, fd) : VIEW_NONE;
	if (view == VIEW_NONE)
		return NOTIF_NOT_MINE;
	if ((c->pa.flags & O_ACCMODE) != O_RDONLY)
		return -EACCES; /* served read-only */
	/* /proc/meminfo reads the supervisor's own state (memory.c), which only the loop may
	 * touch: served here; a random stream takes its place in the seed's order here, and a
	 * worker of its own. */
	if (view == VIEW_MEMINFO || view == VIEW_RANDOM)
		return serve_view(sv, req, view, c->pa.flags);
	struct view_job *job = malloc(sizeof(*job));
	if (!job)
		return -ENOMEM;
	*job = (struct view_job){ .sv = sv, .req = *req, .view = view, .flags = c->pa.flags };
	r = supervisor_run_worker(sv, -1, view_worker, job);
	if (r < 0) {
		free(job);
		return r;
	}
	return NOTIF_DEFERRED;
}

/* In this order: the first that answers (anything but NOTIF_NOT_MINE) decides. */
static const struct open_server open_servers[] = {
	{ hosts_matches, hosts_serve }, { hostname_matches, hostname_serve },
	{ trust_matches, trust_serve }, { write_matches, write_serve },
	{ proc_matches, proc_serve },	{ views_matches, views_serve },
};

int handle_open(struct supervisor *sv, const struct seccomp_notif *req,
		struct seccomp_notif_resp *resp)
{
	/* The resolve flags a resolution here can honour as the kernel would. */
	const uint64_t resolve_known =
		RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS;
	struct open_call c = { .have_path = 0 };
	struct path_args *pa = &c.pa;
	int r = path_args_decode(&req->data, pa);

	if (r < 0)
		return r;
	/* open's and openat's flags: an int for the kernel */
	pa->flags = (uint32_t)pa->flags;
	if (pa->flags_in_mem) { /* openat2 */
		struct open_how how;
		/* A struct shorter or longer than version 0 (the kernel checks a longer one's
		 * tail), unreadable, or asking what cannot be honoured here (RESOLVE_BENEATH,
		 * RESOLVE_IN_ROOT, RESOLVE_CACHED, a mode): the kernel's, as asked (CONTINUE;
		 * nothing is decided, see the end). */
		if (pa->mem_size != sizeof(how) ||
		    notif_mem_read(sv->listener, req, pa->mem, &how, sizeof(how)) < 0 ||
		    (how.resolve & ~resolve_known) ||
		    (how.mode && !(how.flags & (O_CREAT | O_TMPFILE))))
			return notif_answer_continue(resp);
		path_args_set_how(pa, how.flags, how.mode, how.resolve);
	}

	for (size_t i = 0, checked = 0; i < ELEMENTSOF(open_servers); i++) {
		if (!open_servers[i].matches(sv, &c))
			continue;
		/* deny_path: the file is checked before a server answers with its own descriptor
		 * (what the chain lets go is made on the child's behalf: policy_fn_path_gate). */
		if (!checked++ && (r = policy_fn_path_precheck(sv, req)) < 0)
			return r;
		r = open_servers[i].serve(sv, req, resp, &c);
		if (r != NOTIF_NOT_MINE)
			return r;
	}
	/* Any other file, or a write: the kernel opens it as asked, under the Landlock rules.
	 * CONTINUE is safe whatever the path memory says by the time the kernel reads it
	 * again: Landlock decides on the path the kernel resolves. At worst, a thread that
	 * rewrites the name after this check, or a name this check does not follow (a symlink
	 * of another name, a magic link such as /proc/<pid>/cwd/...), opens the real
	 * /etc/hosts or the real TCP table, which Landlock allows or refuses like any file:
	 * both are views, not the confinement (docs/decisions.md). Beneath a writable grant
	 * holding a denied path, Landlock's carve keeps the kernel off the denied paths and out
	 * of what the spine does not grant (fs-write.c). */
	return notif_answer_continue(resp);
}
