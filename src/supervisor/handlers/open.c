/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/open: open(2), openat(2), openat2(2), trapped only where a file is served from the
 * supervisor's view instead of the host's:
 *  - /etc/hosts, when a rule names a host: the names resolved at start (plan.net.hosts);
 *  - /proc/net/tcp and tcp6 under port_remap: the sandbox's own sockets, with their virtual
 *    ports (proc-net.c), whatever name reaches the file (/proc/net/tcp, /proc/self/net/tcp,
 *    /proc/<pid>/task/<tid>/net/tcp, a name relative to a descriptor of /proc/net);
 *  - /proc/cpuinfo and /sys/devices/system/cpu/{online,possible,present} under num_cpus
 *    (cpus.c), under the same kinds of names.
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
#include <sys/syscall.h>
#include <unistd.h>

#include "fd-util.h"
#include "handlers.h"
#include "macro.h"
#include "net-internal.h"
#include "plan/plan.h"
#include "supervisor/notif.h"
#include "supervisor/supervisor.h"

/* "/proc/self/fd/N", "/proc/thread-self/fd/N" and "/dev/fd/N", alone or followed by "/...":
 * names of the caller's descriptor N, which resolving from here would take for the
 * supervisor's. Sets *@n and *@rest (what follows N) and returns 1; 0 for another name. */
static int own_fd_name(const char *path, int *n, const char **rest)
{
	static const char *const prefixes[] = { "/proc/self/fd/", "/proc/thread-self/fd/",
						"/dev/fd/" };
	char *end;

	for (size_t i = 0; i < ELEMENTSOF(prefixes); i++) {
		size_t k = strlen(prefixes[i]);
		if (strncmp(path, prefixes[i], k) != 0)
			continue;
		const char *num = path + k;
		errno = 0;
		long v = strtol(num, &end, 10);
		if (*num < '0' || *num > '9' || (*end && *end != '/') || errno || v > INT_MAX)
			return 0;
		*n = (int)v;
		*rest = end;
		return 1;
	}
	return 0;
}

int child_path_open(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		    const char *path, uint64_t resolve, int nofollow)
{
	int abs = path[0] == '/', n;
	const char *rest;
	_cleanup_close_ int dfd = -1;

	if (own_fd_name(path, &n, &rest)) {
		dfd = notif_get_fd(sv->listener, req, n);
		if (dfd < 0)
			return dfd;
		while (*rest == '/')
			rest++;
		if (!*rest)
			return TAKE_FD(dfd);
		path = rest;
		abs = 0;
	} else if (abs || dirfd == AT_FDCWD) {
		char dir[64];
		snprintf(dir, sizeof(dir), "/proc/%u/%s", req->pid, abs ? "root" : "cwd");
		dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			return errno == ENOENT || errno == ESRCH ? NOTIF_GONE : negative_errno();
		/* The pid named the trapped thread when the directory was opened: the
		 * descriptor now pins that thread's directory whatever happens to the pid. */
		if (!notif_id_valid(sv->listener, req->id))
			return NOTIF_GONE;
	} else {
		dfd = notif_get_fd(sv->listener, req, dirfd);
		if (dfd < 0)
			return dfd;
	}
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0),
		.resolve = RESOLVE_NO_MAGICLINKS | (abs ? RESOLVE_IN_ROOT : 0) | resolve,
	};
	int fd = (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));
	return fd < 0 ? negative_errno() : fd;
}

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

/* The path the child named, NUL-terminated in @buf. */
static int read_path(struct supervisor *sv, const struct seccomp_notif *req, uint64_t addr,
		     char *buf, size_t size)
{
	size_t off = 0;

	/* Page by page: the string may end just before an unmapped page; the first read short,
	 * since most names are. */
	while (off < size) {
		size_t chunk = MIN(size - off, 4096 - ((addr + off) & 4095));
		if (off == 0)
			chunk = MIN(chunk, 256);
		int r = notif_mem_read(sv->listener, req, addr + off, buf + off, chunk);
		if (r < 0)
			return r;
		if (memchr(buf + off, '\0', chunk))
			return 0;
		off += chunk;
	}
	return -ENAMETOOLONG;
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
	char self[64], real[PATH_MAX];
	struct statfs fs;

	if (fstatfs(fd, &fs) < 0 || (fs.f_type != PROC_SUPER_MAGIC && fs.f_type != SYSFS_MAGIC))
		return VIEW_NONE;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	ssize_t k = readlink(self, real, sizeof(real) - 1);
	if (k <= 0)
		return VIEW_NONE;
	real[k] = '\0';
	size_t len = (size_t)k;
	/* Served only where the policy grants reading the file: the views hold the host's data
	 * too (its CPUs), and without a grant Landlock refuses the real file (CONTINUE). */
	int granted = 0;
	for (size_t i = 0; sv->net->granted && sv->net->granted[i] && !granted; i++) {
		size_t n = strlen(sv->net->granted[i]);
		granted = (n == 1 && sv->net->granted[i][0] == '/') ||
			  (strncmp(real, sv->net->granted[i], n) == 0 &&
			   (real[n] == '\0' || real[n] == '/'));
	}
	if (!granted)
		return VIEW_NONE;
	if (fs.f_type == PROC_SUPER_MAGIC && sv->net->port_remap) {
		if (ends_with(real, len, "/net/tcp"))
			return VIEW_TCP4;
		if (ends_with(real, len, "/net/tcp6"))
			return VIEW_TCP6;
	}
	if (fs.f_type == PROC_SUPER_MAGIC && sv->max_memory && strcmp(real, "/proc/meminfo") == 0)
		return VIEW_MEMINFO;
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
 * "tcp6" under port_remap; "cpuinfo", "online", "possible", "present" under num_cpus), or it is
 * a descriptor's own name ("/proc/self/fd/N", "/dev/fd/N": a reopen). Only those are
 * resolved; another name through a symlink to a view's file is not followed
 * (docs/decisions.md). */
static int may_be_view(struct supervisor *sv, const char *path)
{
	static const char *const tcp[] = { "tcp", "tcp6" };
	static const char *const cpu[] = { "cpuinfo", "online", "possible", "present" };
	static const char meminfo[] = "meminfo";
	const char *rest;
	int n;

	if (own_fd_name(path, &n, &rest) && !rest[strspn(rest, "/")])
		return 1;
	size_t len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--;
	size_t start = len;
	while (start > 0 && path[start - 1] != '/')
		start--;
	for (size_t i = 0; sv->net->port_remap && i < ELEMENTSOF(tcp); i++)
		if (len - start == strlen(tcp[i]) &&
		    strncmp(path + start, tcp[i], len - start) == 0)
			return 1;
	if (sv->max_memory && len - start == strlen(meminfo) &&
	    strncmp(path + start, meminfo, len - start) == 0)
		return 1;
	for (size_t i = 0; sv->num_cpus && i < ELEMENTSOF(cpu); i++)
		if (len - start == strlen(cpu[i]) &&
		    strncmp(path + start, cpu[i], len - start) == 0)
			return 1;
	return 0;
}

int handle_open(struct supervisor *sv, const struct seccomp_notif *req,
		struct seccomp_notif_resp *resp)
{
	static const char hosts[] = "/etc/hosts";
	/* The resolve flags a resolution here can honour as the kernel would. */
	const uint64_t resolve_known =
		RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS;
	int dirfd = AT_FDCWD, r;
	uint64_t path_addr, flags, resolve = 0;

	switch (req->data.nr) {
	case SYS_openat:
		dirfd = (int)req->data.args[0];
		path_addr = req->data.args[1];
		flags = (uint32_t)req->data.args[2]; /* an int for the kernel */
		break;
	case SYS_openat2: {
		struct open_how how;
		/* A struct shorter or longer than version 0 (the kernel checks a longer one's
		 * tail), unreadable, or asking what cannot be honoured here (RESOLVE_BENEATH,
		 * RESOLVE_IN_ROOT, RESOLVE_CACHED, a mode): the kernel's, as asked (CONTINUE;
		 * nothing is decided, see the end). */
		if (req->data.args[3] != sizeof(how) ||
		    notif_mem_read(sv->listener, req, req->data.args[2], &how, sizeof(how)) < 0 ||
		    (how.resolve & ~resolve_known) || how.mode) {
			notif_answer_continue(resp);
			return 0;
		}
		dirfd = (int)req->data.args[0];
		path_addr = req->data.args[1];
		flags = how.flags;
		resolve = how.resolve;
		break;
	}
	default: /* open */
		path_addr = req->data.args[0];
		flags = (uint32_t)req->data.args[1];
		break;
	}

	/* Only a plain read-only open of /etc/hosts is answered: anything else (O_PATH,
	 * O_DIRECTORY, O_CREAT, O_TRUNC, a write...) is the kernel's, which gives its own
	 * answer. */
	const uint64_t plain =
		O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_LARGEFILE | O_NOFOLLOW | O_NOATIME;
	char name[sizeof(hosts)];
	if (sv->net->hosts && (flags & O_ACCMODE) == O_RDONLY &&
	    (flags & ~(uint64_t)(plain | O_ACCMODE)) == 0 &&
	    notif_mem_read(sv->listener, req, path_addr, name, sizeof(name)) == 0 &&
	    memcmp(name, hosts, sizeof(hosts)) == 0)
		return answer_file(sv, req, "hosts", sv->net->hosts, strlen(sv->net->hosts), flags);

	/* Under port_remap or num_cpus, an open that can read, of a name that may be a view. */
	if ((sv->net->port_remap || sv->num_cpus || sv->max_memory) &&
	    (flags & O_ACCMODE) != O_WRONLY && !(flags & (O_PATH | O_DIRECTORY | O_CREAT))) {
		char path[PATH_MAX];
		r = read_path(sv, req, path_addr, path, sizeof(path));
		_cleanup_close_ int fd = r == 0 && may_be_view(sv, path)
						 ? child_path_open(sv, req, dirfd, path, resolve,
								   (flags & O_NOFOLLOW) != 0)
						 : -ENOENT;
		if (fd == NOTIF_GONE)
			return fd;
		enum view view = fd >= 0 ? view_of(sv, fd) : VIEW_NONE;
		if (view != VIEW_NONE && (flags & O_ACCMODE) != O_RDONLY)
			return -EACCES; /* served read-only */
		if (view != VIEW_NONE) {
			struct view_job *job = malloc(sizeof(*job));
			if (!job)
				return -ENOMEM;
			*job = (struct view_job){
				.sv = sv, .req = *req, .view = view, .flags = flags
			};
			r = supervisor_run_worker(sv, -1, view_worker, job);
			if (r < 0) {
				free(job);
				return r;
			}
			return NOTIF_DEFERRED;
		}
	}
	/* Any other file, or a write: the kernel opens it as asked, under the Landlock rules.
	 * CONTINUE is safe whatever the path memory says by the time the kernel reads it
	 * again: Landlock decides on the path the kernel resolves. At worst, a thread that
	 * rewrites the name after this check, or a name this check does not follow (a symlink
	 * of another name, a magic link such as /proc/<pid>/cwd/...), opens the real
	 * /etc/hosts or the real TCP table, which Landlock allows or refuses like any file:
	 * both are views, not the confinement (docs/decisions.md). */
	notif_answer_continue(resp);
	return 0;
}
