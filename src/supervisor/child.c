/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * child: the toolkit through which handlers reach the trapped process (see child.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "child.h"
#include "fd-util.h"
#include "macro.h"
#include "path-util.h"
#include "policy/rules.h"
#include "supervisor.h"

int own_fd_name(const char *path, int *n, const char **rest)
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

int child_path_base(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		    const char **path, int *abs)
{
	const char *rest;
	int n;
	_cleanup_close_ int dfd = -1;

	*abs = (*path)[0] == '/';
	if (own_fd_name(*path, &n, &rest)) {
		dfd = notif_get_fd(sv->listener, req, n);
		if (dfd < 0)
			return dfd;
		while (*rest == '/')
			rest++;
		*path = *rest ? rest : NULL; /* NULL: the descriptor itself */
		*abs = 0;
	} else if (*abs || dirfd == AT_FDCWD) {
		char dir[64];
		snprintf(dir, sizeof(dir), "/proc/%u/%s", req->pid, *abs ? "root" : "cwd");
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
	return TAKE_FD(dfd);
}

int child_path_at(int base, const char *path, int abs, uint64_t resolve, int nofollow)
{
	if (!path) { /* the descriptor itself ("/proc/self/fd/N") */
		int fd = fcntl(base, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? negative_errno() : fd;
	}
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0),
		.resolve = RESOLVE_NO_MAGICLINKS | (abs ? RESOLVE_IN_ROOT : 0) | resolve,
	};
	int fd = (int)syscall(SYS_openat2, base, path, &how, sizeof(how));
	return fd < 0 ? negative_errno() : fd;
}

int child_path_open(struct supervisor *sv, const struct seccomp_notif *req, int dirfd,
		    const char *path, uint64_t resolve, int nofollow)
{
	int abs;
	_cleanup_close_ int base = child_path_base(sv, req, dirfd, &path, &abs);

	if (base < 0)
		return base;
	if (!path)
		return TAKE_FD(base);
	return child_path_at(base, path, abs, resolve, nofollow);
}

/* The path the child named, NUL-terminated in @buf. */
int child_read_path(struct supervisor *sv, const struct seccomp_notif *req, uint64_t addr,
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

/* The path the kernel gives descriptor @fd (its readlink in /proc/self/fd). */
ssize_t fd_real_path(int fd, char *buf, size_t size)
{
	char self[64];

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	ssize_t k = readlink(self, buf, size - 1);
	if (k > 0)
		buf[k] = '\0';
	return k;
}

/* The lines of a task's status that say what it may do: its ids, its capabilities, its
 * seccomp filters, no_new_privs. */
static int ids_of(pid_t tid, char *out, size_t size)
{
	static const char *const keys[] = {
		"\nUid:",    "\nGid:",	      "\nGroups:",	   "\nCapEff:",
		"\nCapPrm:", "\nNoNewPrivs:", "\nSeccomp_filters:"
	};
	char buf[8192];
	size_t n = 0;

	if (proc_read(tid, "status", buf, sizeof(buf)) < 0)
		return -ESRCH;
	out[0] = '\0';
	for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
		const char *p = strstr(buf, keys[i]);
		const char *e = p ? strchr(p + 1, '\n') : NULL;
		size_t len = p ? (e ? (size_t)(e - p) : strlen(p)) : 0;
		if (n + len + 1 >= size)
			return -EPERM; /* cannot tell: fail closed */
		memcpy(out + n, p ? p : "", len);
		n += len;
		out[n] = '\0';
	}
	return 0;
}

/* The snapshot's filter count made @filters, the count the child ends its launch with: it
 * reads @filters or, before its last filter (launch.c: close_launch_flag), one less. Anything
 * else: -EPERM (the snapshot then matches nobody). */
static int ids_final_filters(char *ids, size_t size, long filters)
{
	static const char key[] = "\nSeccomp_filters:\t";
	char *p = strstr(ids, key);
	if (!p || filters < 1)
		return -EPERM;
	p += strlen(key);
	char *end;
	long n = strtol(p, &end, 10);
	char tail[64];
	if (end == p || (n != filters && n != filters - 1) || strlen(end) >= sizeof(tail))
		return -EPERM;
	strcpy(tail, end);
	size_t room = size - (size_t)(p - ids);
	int k = snprintf(p, room, "%ld%s", filters, tail);
	return k < 0 || (size_t)k >= room ? -EPERM : 0;
}

void proc_ids_snapshot(struct supervisor *sv, pid_t pid, long filters)
{
	if (ids_of(pid, sv->proc_ids, sizeof(sv->proc_ids)) < 0 ||
	    ids_final_filters(sv->proc_ids, sizeof(sv->proc_ids), filters) < 0)
		sv->proc_ids[0] = '\0'; /* then /proc is served to nobody: fail closed */
	sv->proc_no_caps = strstr(sv->proc_ids, "\nCapEff:\t0000000000000000\n") &&
			   strstr(sv->proc_ids, "\nCapPrm:\t0000000000000000\n");
}

/* Whether thread @tid has the ids the sandbox started with (proc_ids_snapshot): 1, 0, or
 * NOTIF_GONE. */
int proc_same_ids(struct supervisor *sv, pid_t tid)
{
	char ids[sizeof(sv->proc_ids)];

	int r = ids_of(tid, ids, sizeof(ids));
	if (r == -ESRCH)
		return NOTIF_GONE;
	return r == 0 && sv->proc_ids[0] && strcmp(ids, sv->proc_ids) == 0;
}

int proc_same_creds(struct supervisor *sv, pid_t tid)
{
	char ids[sizeof(sv->proc_ids)];

	int r = ids_of(tid, ids, sizeof(ids));
	if (r == -ESRCH)
		return NOTIF_GONE;
	/* The keys up to the effective capabilities (ids_of's order): not the filters. */
	const char *a = strstr(ids, "\nCapPrm:"), *b = strstr(sv->proc_ids, "\nCapPrm:");
	return r == 0 && a && b && a - ids == b - sv->proc_ids &&
	       strncmp(ids, sv->proc_ids, (size_t)(a - ids)) == 0;
}

int net_take_socket(struct supervisor *sv, const struct seccomp_notif *req, int *domain)
{
	socklen_t optlen = sizeof(*domain);

	int sock = notif_get_fd(sv->listener, req, (int)req->data.args[0]);
	if (sock < 0)
		return sock;
	if (getsockopt(sock, SOL_SOCKET, SO_DOMAIN, domain, &optlen) < 0) {
		int r = errno == ENOTSOCK ? -ENOTSOCK : negative_errno();
		close(sock);
		return r;
	}
	return sock;
}

int net_sock_proto(int sock, uint32_t *proto, int *type)
{
	int protocol = 0;
	socklen_t optlen = sizeof(int);

	if (getsockopt(sock, SOL_SOCKET, SO_TYPE, type, &optlen) < 0)
		return negative_errno();
	optlen = sizeof(int);
	if (getsockopt(sock, SOL_SOCKET, SO_PROTOCOL, &protocol, &optlen) < 0)
		return negative_errno();
	if (*type == SOCK_STREAM && protocol == IPPROTO_TCP)
		*proto = NET_PROTO_TCP;
	else if (*type == SOCK_DGRAM && protocol == IPPROTO_UDP)
		*proto = NET_PROTO_UDP;
	else if (*type == SOCK_DGRAM && (protocol == IPPROTO_ICMP || protocol == IPPROTO_ICMPV6))
		*proto = NET_PROTO_ICMP;
	else
		return -EPERM; /* cannot exist (seccomp socket rules): fail closed */
	return 0;
}

int notif_answer_sockaddr(struct supervisor *sv, const struct seccomp_notif *req,
			  struct seccomp_notif_resp *resp, const void *addr, socklen_t klen)
{
	int len;

	/* As the kernel's move_addr_to_user: the buffer's length, then at most that many bytes
	 * of the address, then the address's full length. */
	int r = notif_mem_read(sv->listener, req, req->data.args[2], &len, sizeof(len));
	if (r < 0)
		return r;
	if (len < 0)
		return -EINVAL;
	if (len > 0)
		r = notif_mem_write(sv->listener, req, req->data.args[1], addr,
				    (size_t)MIN((socklen_t)len, klen));
	int full = (int)klen;
	if (r == 0)
		r = notif_mem_write(sv->listener, req, req->data.args[2], &full, sizeof(full));
	if (r < 0)
		return r;
	notif_answer_value(resp, 0);
	return 0;
}

int proc_syscall_nr(pid_t tid, long *nr)
{
	char path[64], buf[256];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)tid, (int)tid);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? -ESRCH : -EPERM;
	ssize_t k = read(fd, buf, sizeof(buf) - 1);
	if (k < 0)
		return errno == ESRCH ? -ESRCH : -EPERM;
	buf[k] = '\0';
	/* "NR args...", "running", or "-1 ..." (blocked outside a syscall: a stop). */
	char *end;
	long v = strtol(buf, &end, 10);
	*nr = end == buf || v < 0 ? -1 : v;
	return 0;
}

int proc_heap_end(pid_t tid, uint64_t *end)
{
	char path[64], line[512];
	int r = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return errno == ENOENT || errno == ESRCH ? -ESRCH : -EPERM;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, stop;
		if (strstr(line, "[heap]") && sscanf(line, "%llx-%llx", &start, &stop) == 2) {
			*end = stop;
			r = 0;
			break;
		}
	}
	fclose(f);
	return r;
}

int proc_userns_is_ours(pid_t tid)
{
	char path[64];
	struct stat theirs, mine;

	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)tid);
	if (stat(path, &theirs) < 0 || stat("/proc/self/ns/user", &mine) < 0)
		return -EPERM;
	return theirs.st_ino == mine.st_ino && theirs.st_dev == mine.st_dev;
}

int proc_auxv(pid_t pid, uint64_t type, uint64_t *val)
{
	char path[64], auxv[4096];
	int r = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? -ESRCH : -EPERM;
	/* One read: the vector is a few hundred bytes, pairs of 64-bit words. */
	ssize_t n = read(fd, auxv, sizeof(auxv));
	for (ssize_t off = 0; off + 16 <= n; off += 16) {
		uint64_t key, v;
		memcpy(&key, auxv + off, 8);
		memcpy(&v, auxv + off + 8, 8);
		if (key == type) {
			*val = v;
			r = 0;
		}
	}
	return r;
}

int proc_read_all(pid_t pid, const char *name, char **ret, size_t *ret_len)
{
	char path[64];
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 0;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? -ESRCH : -EPERM;
	/* To its end, or 1 MiB, or the first error: what was read by then. */
	for (ssize_t n = 1; n > 0 && len < (1u << 20);) {
		if (len + 4096 + 1 > cap) {
			char *nb = realloc(buf, cap = cap ? 2 * cap : 8192);
			if (!nb)
				return -ENOMEM;
			buf = nb;
		}
		n = read(fd, buf + len, cap - len - 1);
		len += n > 0 ? (size_t)n : 0;
	}
	buf[len] = '\0';
	*ret = TAKE_PTR(buf);
	if (ret_len)
		*ret_len = len;
	return 0;
}

int child_proc_self_name(const struct seccomp_notif *req, char *path, size_t size)
{
	int self = path_is_beneath(path, "/proc/self");
	int tself = !self && path_is_beneath(path, "/proc/thread-self");
	char subst[PATH_MAX];

	if (!self && !tself)
		return 0;
	int r = child_proc_path(req, tself, path + (self ? 10 : 17), subst, sizeof(subst));
	if (r < 0)
		return r;
	snprintf(path, size, "%s", subst);
	return 1;
}

int child_proc_path(const struct seccomp_notif *req, int task, const char *rest, char *buf,
		    size_t size)
{
	pid_t tgid;

	int r = proc_status_field((pid_t)req->pid, "Tgid", &tgid);
	if (r < 0)
		return r == -ESRCH ? NOTIF_GONE : r;
	if (task)
		snprintf(buf, size, "/proc/%d/task/%d%s", (int)tgid, (int)req->pid, rest);
	else
		snprintf(buf, size, "/proc/%d%s", (int)tgid, rest);
	return 0;
}
