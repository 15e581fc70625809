/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy-fn-event: what a policy_fn is shown of a call: its name and category, the process and
 * its parent, the address of a network call, the argument vector of an exec. Runs on the policy
 * thread, reading the waiting child through the state's copy of the listener (ID_VALID-checked).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "fd-util.h"
#include "macro.h"
#include "notif.h"
#include "policy-fn-internal.h"
#include "supervisor.h"
#include "syscall-util.h"
#include "user-handlers.h"

/* The kernel's limits on an exec's arguments (MAX_ARG_STRLEN, and a bound on the whole). */
#define ARG_STRLEN_MAX (32u * 4096u)
#define ARGV_BYTES_MAX (2u * 1024u * 1024u)
#define ARGV_MAX 65536u

int pfn_kind(int nr)
{
	switch (nr) {
	case SYS_execve:
	case SYS_execveat:
#ifdef SYS_open
	case SYS_open:
#endif
	case SYS_openat:
	case SYS_openat2:
	case SYS_connect:
	case SYS_bind:
	case SYS_sendto:
	case SYS_sendmsg:
	case SYS_sendmmsg:
		return 1;
#ifdef SYS_fork
	case SYS_fork:
	case SYS_vfork:
	case SYS_mkdir:
	case SYS_rmdir:
	case SYS_unlink:
	case SYS_rename:
	case SYS_link:
	case SYS_symlink:
	case SYS_mknod:
	case SYS_creat:
#endif
	case SYS_clone:
	case SYS_mmap:
	case SYS_brk:
	case SYS_mkdirat:
	case SYS_mknodat:
	case SYS_symlinkat:
	case SYS_unlinkat:
	case SYS_renameat:
	case SYS_renameat2:
	case SYS_linkat:
	case SYS_truncate:
		return 2;
	default:
		return 0;
	}
}

const char *pfn_category(int nr)
{
	switch (nr) {
	case SYS_connect:
	case SYS_bind:
	case SYS_sendto:
	case SYS_sendmsg:
	case SYS_sendmmsg:
		return "network";
	case SYS_execve:
	case SYS_execveat:
	case SYS_clone:
#ifdef SYS_fork
	case SYS_fork:
	case SYS_vfork:
#endif
		return "process";
	case SYS_mmap:
	case SYS_brk:
		return "memory";
	default:
		return "file";
	}
}

/* The address of a network call, where it names one: its place and length in the child. */
static int addr_of(struct policy_fn *st, const struct seccomp_notif *req, uint64_t *addr,
		   uint64_t *len)
{
	const __u64 *a = req->data.args;
	struct msghdr mh;

	switch (req->data.nr) {
	case SYS_connect:
	case SYS_bind:
		*addr = a[1];
		*len = a[2] & 0xffffffffu;
		return 0;
	case SYS_sendto:
		*addr = a[4];
		*len = a[5] & 0xffffffffu;
		return 0;
	case SYS_sendmsg:
	case SYS_sendmmsg: /* the first message's: struct mmsghdr starts with its msghdr */
		if (!a[1])
			return -EFAULT;
		int r = notif_mem_read(st->listener, req, a[1], &mh, sizeof(mh));
		if (r < 0)
			return r;
		*addr = (uint64_t)mh.msg_name;
		*len = mh.msg_namelen;
		return 0;
	default:
		*addr = *len = 0;
		return 0;
	}
}

/* A sendmmsg's callback is shown one destination: every message must have it (the same name
 * bytes, or none), else the call is refused. 0, NOTIF_GONE or -EPERM. */
static int mmsg_one_destination(struct policy_fn *st, const struct seccomp_notif *req,
				const struct sockaddr_storage *first, uint64_t first_len)
{
	uint32_t vlen = MIN((uint32_t)req->data.args[2], 1024u); /* UIO_MAXIOV, as the kernel */

	for (uint32_t i = 1; i < vlen; i++) {
		struct mmsghdr mh = { 0 };
		struct sockaddr_storage ss = { 0 };
		uint64_t at = req->data.args[1] + (uint64_t)i * sizeof(mh);
		int r = notif_mem_read(st->listener, req, at, &mh, sizeof(mh));
		uint64_t len = mh.msg_hdr.msg_name ? mh.msg_hdr.msg_namelen : 0;
		if (r == 0 && len && len <= sizeof(ss))
			r = notif_mem_read(st->listener, req, (uint64_t)mh.msg_hdr.msg_name, &ss,
					   len);
		if (r == NOTIF_GONE)
			return r;
		if (r < 0 || len != first_len || (len && memcmp(&ss, first, len) != 0))
			return -EPERM;
	}
	return 0;
}

static int read_host(struct policy_fn *st, struct pfn_item *item, struct pfn_event *e)
{
	const struct seccomp_notif *req = &item->req;
	struct sockaddr_storage ss = { 0 };
	uint64_t addr, len;
	int r = addr_of(st, req, &addr, &len);

	if (r == NOTIF_GONE)
		return r;
	/* Unreadable (no message, or no address): the callback is shown none. Another thread may
	 * map the memory before the chain reads it again, so the chain answers EFAULT, as the
	 * kernel would have then, whatever it finds (policy_fn_addr_check). */
	if (r < 0) {
		item->addr_fault = 1;
		return 0;
	}
	if (!addr)
		len = 0;
	if (len > sizeof(ss))
		return -EINVAL; /* as the chain answers it */
	r = len ? notif_mem_read(st->listener, req, addr, &ss, len) : 0;
	if (r == NOTIF_GONE)
		return r;
	if (r < 0) {
		item->addr_fault = 1;
		return 0;
	}
	/* What the chain reads again must be this (policy_fn_addr_check). */
	item->addr_set = 1;
	item->addr_len = (uint32_t)len;
	memcpy(&item->addr, &ss, sizeof(ss));
	if (req->data.nr == SYS_sendmmsg && (r = mmsg_one_destination(st, req, &ss, len)) < 0)
		return r;
	if (len < sizeof(sa_family_t))
		return 0;
	if (ss.ss_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const void *)&ss;
		inet_ntop(AF_INET, &in->sin_addr, e->host, sizeof(e->host));
		e->ev.port = ntohs(in->sin_port);
		e->ev.host = e->host;
	} else if (ss.ss_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const void *)&ss;
		/* ::ffff:a.b.c.d reaches a.b.c.d: shown as the IPv4 address a rule would name. */
		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr))
			inet_ntop(AF_INET, &in6->sin6_addr.s6_addr[12], e->host, sizeof(e->host));
		else
			inet_ntop(AF_INET6, &in6->sin6_addr, e->host, sizeof(e->host));
		e->ev.port = ntohs(in6->sin6_port);
		e->ev.host = e->host;
	}
	return 0;
}

/* The string at @addr of the child, up to its NUL, in *@ret (owned): its length, or -errno. */
static long read_cstr(struct policy_fn *st, const struct seccomp_notif *req, uint64_t addr,
		      char **ret)
{
	size_t cap = 256, len = 0;
	char *buf = malloc(cap);

	for (;;) {
		if (!buf)
			return -ENOMEM;
		/* A page at a time: the string may end just before an unmapped page. */
		size_t chunk = MIN(cap - len, 4096 - ((addr + len) & 4095));
		int r = notif_mem_read(st->listener, req, addr + len, buf + len, chunk);
		if (r < 0) {
			free(buf);
			return r;
		}
		char *nul = memchr(buf + len, '\0', chunk);
		if (nul) {
			*ret = buf;
			return nul - buf;
		}
		len += chunk;
		if (len >= ARG_STRLEN_MAX) {
			free(buf);
			return -E2BIG;
		}
		if (len == cap) {
			char *n = realloc(buf, cap *= 2);
			if (!n)
				free(buf);
			buf = n;
		}
	}
}

/* The argument vector of an exec, read once, and the memory it was read from (@ranges: the
 * pointer array, then each string with its NUL). */
static int read_argv(struct policy_fn *st, const struct seccomp_notif *req, struct pfn_event *e,
		     uint64_t (**ranges)[2], size_t *n_ranges)
{
	uint64_t arr = req->data.args[req->data.nr == SYS_execveat ? 2 : 1], total = 0;
	size_t n = 0;
	uint64_t(*rg)[2] = NULL;

	for (;; n++) {
		uint64_t p = 0;
		if (n >= ARGV_MAX || total > ARGV_BYTES_MAX)
			return -E2BIG;
		int r = arr ? notif_mem_read(st->listener, req, arr + 8 * n, &p, sizeof(p)) : 0;
		if (r < 0)
			return r;
		char **v = realloc(e->argv, (n + 2) * sizeof(*v));
		uint64_t(*g)[2] = realloc(rg, (n + 2) * sizeof(*g));
		if (g)
			rg = g;
		if (v)
			e->argv = v;
		if (!v || !g) {
			free(rg);
			return -ENOMEM;
		}
		e->argv[n] = NULL;
		if (!p)
			break;
		long len = read_cstr(st, req, p, &e->argv[n]);
		if (len < 0) {
			free(rg);
			return (int)len;
		}
		e->argv[n + 1] = NULL;
		rg[n + 1][0] = p;
		rg[n + 1][1] = p + (uint64_t)len + 1;
		total += (uint64_t)len + 1;
	}
	rg[0][0] = arr;
	rg[0][1] = arr + 8 * (n + 1);
	e->ev.argc = (uint32_t)n;
	*ranges = rg;
	*n_ranges = arr ? n + 1 : 0;
	return 0;
}

/* Whether an allowed exec is answered by the policy thread (CONTINUE) rather than the chain:
 * only then can the freeze hold its peers until the exec is over. */
static int exec_direct(struct policy_fn *st, int nr)
{
	return nr < POLICY_FN_NAMES && st->direct[nr] && !user_handlers_traps(st->sv->user, nr) &&
	       !policy_fn_denies_paths(st->sv);
}

static int build_exec(struct policy_fn *st, const struct pfn_item *item, struct pfn_event *e)
{
	uint64_t(*ranges)[2] = NULL;
	size_t n = 0;
	pid_t tid = (pid_t)item->req.pid, tgid = e->ev.pid;

	/* The kernel reads the vector again when the call goes on: it is shown only when no
	 * other task can change it meanwhile (policy-fn-argv.c): none runs on the memory, or
	 * those that do are frozen first (policy-fn-freeze.c); else the exec is refused. */
	e->why = "policy_fn: the exec's arguments could change before the exec";
	if (!pfn_argv_alone(tgid)) {
		if (!exec_direct(st, (int)item->req.data.nr)) {
			e->why = "policy_fn: an exec from a task sharing its memory, with another "
				 "handler on exec (a workdir, --log-denials, an extension handler, "
				 "deny_path)";
			return -EPERM;
		}
		const char *why = NULL;
		if (pfn_freeze_start(st, tid, tgid, item->req.id, item->deadline_ns, &e->freeze,
				     &why) < 0) {
			snprintf(e->reason, sizeof(e->reason),
				 "policy_fn: the tasks sharing the exec's memory were not frozen: "
				 "%s",
				 why);
			e->why = e->reason;
			return -EPERM;
		}
	}
	int r = read_argv(st, &item->req, e, &ranges, &n);
	if (r == 0) {
		e->ev.argv = (const char *const *)e->argv;
		if (!pfn_argv_private(tgid, (const uint64_t(*)[2])ranges, n))
			r = -EPERM;
		else if (!notif_id_valid(st->listener, item->req.id))
			r = NOTIF_GONE;
	}
	free(ranges);
	return r;
}

/* The process and parent of thread @tid, from one read of its status (a thread's PPid is its
 * process's). */
static void ids_read(pid_t tid, pid_t *tgid, pid_t *ppid)
{
	char buf[2048];

	if (proc_read(tid, "status", buf, sizeof(buf)) < 0)
		return;
	const char *t = strstr(buf, "\nTgid:"), *p = strstr(buf, "\nPPid:");
	if (t)
		*tgid = (pid_t)strtol(t + 6, NULL, 10);
	if (p)
		*ppid = (pid_t)strtol(p + 6, NULL, 10);
}

/* The same, kept per thread while its process lives (a pidfd of the process, polled: a status
 * read costs more than the rest of the event). The parent is the one seen first. */
static void ids_of(struct policy_fn *st, pid_t tid, pid_t *tgid, pid_t *ppid)
{
	struct pfn_ids *c = NULL;

	for (size_t i = 0; i < POLICY_FN_IDS; i++)
		if (st->ids[i].tid == tid)
			c = &st->ids[i];
	struct pollfd pfd = { .fd = c ? c->pidfd : -1, .events = POLLIN };
	if (c && poll(&pfd, 1, 0) == 0) {
		*tgid = c->tgid;
		*ppid = c->ppid;
		return;
	}
	ids_read(tid, tgid, ppid);
	if (!c)
		c = &st->ids[st->ids_next++ % POLICY_FN_IDS];
	safe_close(c->pidfd);
	c->pidfd = sys_pidfd_open(*tgid, 0);
	c->tid = c->pidfd >= 0 ? tid : 0;
	c->tgid = *tgid;
	c->ppid = *ppid;
}

/* The syscall's name, looked up once per number (the policy thread alone uses the cache). */
static const char *name_of(struct policy_fn *st, int nr)
{
	if (nr < 0 || nr >= POLICY_FN_NAMES)
		return "unknown";
	if (!st->names[nr][0]) {
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
		snprintf(st->names[nr], sizeof(st->names[nr]), "%s", name ? name : "unknown");
		free(name);
	}
	return st->names[nr];
}

int pfn_event_build(struct policy_fn *st, struct pfn_item *item, struct pfn_event *e)
{
	const struct seccomp_notif *req = &item->req;
	pid_t tgid = (pid_t)req->pid, ppid = 0;
	int nr = req->data.nr;

	memset(e, 0, sizeof(*e));
	ids_of(st, (pid_t)req->pid, &tgid, &ppid);
	snprintf(e->name, sizeof(e->name), "%s", name_of(st, nr));
	uint64_t seq = ++st->seq; /* the policy thread's own */
	e->ev = (sandlock_policy_event_t){
		.size = sizeof(e->ev),
		.seq = seq,
		.syscall = e->name,
		.category = pfn_category(nr),
		.pid = tgid,
		.ppid = ppid,
		.held = (uint32_t)item->held,
		.denied = item->error != 0,
	};
	if (!item->held)
		return 0;
	if (strcmp(e->ev.category, "network") == 0)
		return read_host(st, item, e);
	if (nr == SYS_execve || nr == SYS_execveat)
		return build_exec(st, item, e);
	return 0;
}

void pfn_event_done(struct pfn_event *e)
{
	pfn_event_end_freeze(e);
	for (size_t i = 0; e->argv && e->argv[i]; i++)
		free(e->argv[i]);
	free(e->argv);
	e->argv = NULL;
}

void pfn_event_end_freeze(struct pfn_event *e)
{
	pfn_freeze_end(e->freeze);
	e->freeze = NULL;
}
