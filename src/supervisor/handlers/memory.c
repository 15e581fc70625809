/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/memory: max_memory, the most memory the sandbox's processes may hold together:
 * their resident anonymous memory and the shared memory they touched (RssAnon + RssShmem of
 * each). The calls that grow an address space are trapped (a writable anonymous mmap, brk,
 * mremap, an mprotect that makes memory writable: a reservation committed), and each is checked
 * with what it asks on top of what the kernel counts now; the
 * numbers are the kernel's, read at each check, so no ledger of our own can be laundered by
 * mapping and unmapping files. Before anything is killed the count is taken again, precisely:
 * each process's proportional share (Pss_Anon + Pss_Shmem of smaps_rollup), so memory shared
 * after a fork (copy-on-write) or mapped by several processes is counted once. A call that
 * would take the sandbox past the limit kills the calling process (SIGKILL: its parent
 * survives and sees it killed). What no trapped call shows (memory made writable later, pages
 * touched) is caught by a check every 100 ms (memory_check), which kills the largest processes
 * until the sandbox is back under.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fd-util.h"
#include "handlers.h"
#include "macro.h"
#include "memory.h"
#include "parse-util.h"
#include "procs.h"
#include "sandlock.h"
#include "supervisor/child.h"
#include "supervisor/events.h"
#include "supervisor/groups.h"
#include "supervisor/supervisor.h"
#include "syscall-util.h"

static uint64_t field_kb(const char *buf, const char *key)
{
	const char *p = strstr(buf, key);
	unsigned long long kb;

	return p && sscanf(p + strlen(key), "%llu", &kb) == 1 ? (uint64_t)kb * 1024 : 0;
}

static int read_task(const struct proc_info *p, pid_t task, const char *file, char *buf,
		     size_t size)
{
	char name[64];

	if (task == p->pid)
		snprintf(name, sizeof(name), "%s", file);
	else
		snprintf(name, sizeof(name), "task/%d/%s", (int)task, file);
	return proc_read(p->pid, name, buf, size);
}

/* The bytes process @p counts for: RssAnon + RssShmem + VmPTE of its status, or with @precise
 * Pss_Anon + Pss_Shmem of its smaps_rollup + VmPTE; read through a live task (a process whose
 * leader exited lives in its other threads). The status is readable for every process of the
 * user; smaps_rollup is refused for a non-dumpable one (prctl(PR_SET_DUMPABLE, 0), an
 * execute-only program) to a supervisor without CAP_SYS_PTRACE: its resident numbers then
 * stand for the proportional ones, which they bound from above. 0 for a zombie or a process
 * gone; -1 when the numbers cannot be read (fail closed: counted as over the limit). */
static int64_t process_bytes(const struct proc_info *p, int precise)
{
	char buf[8192];
	pid_t task = proc_live_task(p);

	if (task <= 0)
		return task < 0 ? -1 : 0;
	int r = read_task(p, task, "status", buf, sizeof(buf));
	if (r < 0)
		return r == -ESRCH ? 0 : -1;
	if (!strstr(buf, "\nRssAnon:"))
		return strstr(buf, "\nVmRSS:") ? -1 : 0; /* no mm (exiting): none */
	/* Page tables: read faults over a large read-only mapping build them (the zero page is
	 * mapped, nothing resident) at a rate no smaller than touching memory. */
	uint64_t pte = field_kb(buf, "\nVmPTE:");
	uint64_t rss = field_kb(buf, "\nRssAnon:") + field_kb(buf, "\nRssShmem:") + pte;
	if (!precise || read_task(p, task, "smaps_rollup", buf, sizeof(buf)) < 0 ||
	    !strstr(buf, "\nPss_Anon:"))
		return (int64_t)rss;
	return (int64_t)(field_kb(buf, "\nPss_Anon:") + field_kb(buf, "\nPss_Shmem:") + pte);
}

struct usage {
	struct supervisor *sv;
	int precise;
	uint64_t total;
	int unknown; /* a process whose numbers could not be read */
	struct proc_info *procs;
	int64_t *bytes;
	size_t n, cap;
};

static int usage_add(struct usage *u, const struct proc_info *p)
{
	int64_t b = process_bytes(p, u->precise);
	u->unknown |= b < 0;
	u->total += (uint64_t)MAX(b, 0);
	if (u->n == u->cap) {
		size_t cap = u->cap ? 2 * u->cap : 16;
		struct proc_info *v = realloc(u->procs, cap * sizeof(*v));
		int64_t *w = v ? realloc(u->bytes, cap * sizeof(*w)) : NULL;
		if (v)
			u->procs = v;
		if (!v || !w)
			return -ENOMEM;
		u->bytes = w;
		u->cap = cap;
	}
	u->procs[u->n] = *p;
	u->bytes[u->n++] = b;
	return 0;
}

static int scan_cb(const struct proc_info *p, void *arg)
{
	return usage_add(arg, p);
}

static void usage_done(struct usage *u)
{
	free(u->procs);
	free(u->bytes);
	u->procs = NULL;
	u->bytes = NULL;
}

/* The sandbox's use. Its processes are found by a scan of /proc while a fork (trapped under
 * max_memory too) may have made one since the last scan, else the ones found last are read
 * again: a process is made only by a trapped fork, and one that is gone, a zombie indeed or
 * (its number reused) no longer in the sandbox's groups is dropped. Called on the loop only:
 * it keeps the list and settles the pending forks. */
static int usage_of(struct supervisor *sv, int precise, struct usage *u)
{
	struct mem_pids *m = &sv->mem_pids;
	int r = 0;

	*u = (struct usage){ .sv = sv, .precise = precise };
	size_t pending = forks_settle(sv, 0);
	if (m->dirty || pending || !m->n) {
		r = sandbox_processes(sv, scan_cb, u);
		if (r == 0)
			m->dirty = pending > 0;
	} else {
		for (size_t i = 0; r == 0 && i < m->n; i++) {
			struct proc_info p;
			r = proc_info_of(m->v[i], &p);
			if (r == 0 && p.pgrp > 0 && groups_owns(sv->groups, p.pgrp))
				r = usage_add(u, &p);
			else if (r == -ESRCH)
				r = 0; /* gone */
		}
	}
	/* The processes found, for the next time. */
	m->n = 0;
	for (size_t i = 0; r == 0 && i < u->n; i++) {
		if (m->n == m->cap) {
			size_t cap = m->cap ? 2 * m->cap : 16;
			pid_t *v = realloc(m->v, cap * sizeof(*v));
			if (!v) {
				r = -ENOMEM;
				break;
			}
			m->v = v;
			m->cap = cap;
		}
		m->v[m->n++] = u->procs[i].pid;
	}
	if (r < 0) {
		m->dirty = 1;
		usage_done(u);
	}
	return r;
}

int memory_usage(struct supervisor *sv, uint64_t *ret_total)
{
	struct usage u;
	int r = usage_of(sv, 0, &u);
	if (r < 0)
		return r;
	*ret_total = u.total;
	usage_done(&u);
	return 0;
}

/* The command's own process is killed for the limit: the sandbox's cause, unless another
 * (a kill asked for) came first. */
static void note_main_killed(struct supervisor *sv)
{
	uint32_t none = SANDLOCK_CAUSE_NONE;

	if (sv->kill_cause)
		(void)atomic_compare_exchange_strong(sv->kill_cause, &none, SANDLOCK_CAUSE_MEMORY);
}

/* The name of process @pid, read before it is killed (its parent may reap it at once). It is
 * the task's own (prctl(PR_SET_NAME) sets any bytes): what could pass for a line of sandlock's
 * or a terminal's escape is shown as '?'. */
static void task_comm(pid_t pid, char *comm, size_t size)
{
	if (proc_read(pid, "comm", comm, size) < 0)
		snprintf(comm, size, "?");
	comm[strcspn(comm, "\n")] = '\0';
	for (char *c = comm; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
			*c = '?';
}

/* The event of a memory decision (events.h): @nr's refusal (or, with @nr -1, @pid killed:
 * syscall "max_memory", no errno) for @asked bytes, with @reason (NULL: the limit reached, and
 * the hint to raise it). Emitted before a kill, while /proc still shows the process. */
static void memory_event(struct supervisor *sv, int nr, pid_t pid, int err, uint64_t asked,
			 const char *reason)
{
	char limit[32], text[96];
	struct event ev = {
		.nr = nr,
		.syscall = nr < 0 ? "max_memory" : NULL,
		.category = EVENT_MEMORY,
		.pid = pid,
		.verdict = SANDLOCK_VERDICT_DENY,
		.error = err,
		.amount = asked,
		.reason = reason,
	};

	if (!reason) {
		format_size(sv->max_memory, limit, sizeof(limit));
		snprintf(text, sizeof(text), "memory limit %s reached", limit);
		ev.reason = text;
		ev.hint = "raise --max-memory";
	}
	events_emit(sv, &ev);
}

/* Tell the user that process @pid (named @comm) was killed for the limit. */
static void note_killed(struct supervisor *sv, pid_t pid, const char *comm)
{
	char limit[32];

	format_size(sv->max_memory, limit, sizeof(limit));
	notices_add(&sv->notices, "killed %d (%s): memory limit %s reached", (int)pid, comm, limit);
	if (pid == sv->main_pid)
		note_main_killed(sv);
}

/* The whole sandbox: when its use cannot be counted (the scan failed: the supervisor out of
 * descriptors or memory) or a process over the limit cannot be reached, the sandbox counts as
 * over its limit. Each group's pidfd is held already: this needs no descriptor. */
static void kill_sandbox(struct supervisor *sv)
{
	char limit[32];

	format_size(sv->max_memory, limit, sizeof(limit));
	notices_add(&sv->notices,
		    "killed the sandbox: its memory use could not be counted (memory limit %s)",
		    limit);
	note_main_killed(sv);
	char reason[96];
	snprintf(reason, sizeof(reason), "memory use could not be counted (memory limit %s)",
		 limit);
	memory_event(sv, -1, sv->main_pid, 0, 0, reason);
	(void)groups_signal(sv->groups, SIGKILL);
}

/* SIGKILL process @p through a pidfd, once the pidfd is known to name it still (a member of
 * the sandbox's groups: a number reused by a host process meanwhile is not). */
static void kill_process(struct supervisor *sv, const struct proc_info *p)
{
	struct proc_info now;

	_cleanup_close_ int fd = sys_pidfd_open(p->pid, 0);
	if (fd < 0 && errno == ESRCH)
		return;
	int r = fd < 0 ? -EPERM : proc_info_of(p->pid, &now);
	if (r == -ESRCH)
		return;
	if (r < 0)
		return kill_sandbox(sv); /* cannot reach it: fail closed */
	if (now.pgrp != p->pgrp || !groups_owns(sv->groups, now.pgrp))
		return;
	char comm[64];
	task_comm(p->pid, comm, sizeof(comm));
	memory_event(sv, -1, p->pid, 0, 0, NULL);
	if (sys_pidfd_send_signal(fd, SIGKILL, NULL, 0) == 0)
		note_killed(sv, p->pid, comm);
}

/* The processes whose numbers could not be read count as over the limit: killed. */
static void kill_unknown(struct supervisor *sv, struct usage *u)
{
	for (size_t i = 0; i < u->n; i++)
		if (u->bytes[i] < 0) {
			kill_process(sv, &u->procs[i]);
			u->bytes[i] = 0;
		}
	u->unknown = 0;
}

/* Whether @total + @asked passes the limit. */
static int over(const struct supervisor *sv, uint64_t total, uint64_t asked)
{
	return asked > sv->max_memory || total > sv->max_memory - asked;
}

void memory_check(struct supervisor *sv)
{
	struct usage u;

	if (!sv->max_memory)
		return;
	if (usage_of(sv, 0, &u) < 0)
		return kill_sandbox(sv);
	int is_over = over(sv, u.total, 0) || u.unknown;
	usage_done(&u);
	if (!is_over)
		return;
	if (usage_of(sv, 1, &u) < 0)
		return kill_sandbox(sv);
	/* Over, counted precisely: the unreadable processes go, then the largest ones until the
	 * sandbox is under. */
	kill_unknown(sv, &u);
	while (over(sv, u.total, 0)) {
		size_t big = SIZE_MAX;
		for (size_t i = 0; i < u.n; i++)
			if (u.bytes[i] > 0 && (big == SIZE_MAX || u.bytes[i] > u.bytes[big]))
				big = i;
		if (big == SIZE_MAX)
			break;
		kill_process(sv, &u.procs[big]);
		u.total -= (uint64_t)u.bytes[big];
		u.bytes[big] = 0;
	}
	usage_done(&u);
}

/* The bytes a brk(@addr) of task @tid adds: from the end of its [heap] now. */
static uint64_t brk_growth(pid_t tid, uint64_t addr)
{
	uint64_t end;

	return proc_heap_end(tid, &end) == 0 && addr > end ? addr - end : 0;
}

/* mmap (writable, anonymous), brk, mremap, mprotect (writable). CONTINUE when within the limit: the
 * decision is on integer arguments (a length, an address, flags) the kernel uses unchanged. */
int handle_memory(struct supervisor *sv, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp)
{
	uint64_t asked = 0;
	struct usage u;
	pid_t tgid;

	if (req->data.nr == SYS_mmap || req->data.nr == SYS_mprotect)
		asked = req->data.args[1]; /* mprotect: memory already counted, counted again */
	else if (req->data.nr == SYS_mremap && req->data.args[2] > req->data.args[1])
		asked = req->data.args[2] - req->data.args[1];
	else if (req->data.nr == SYS_brk)
		asked = brk_growth((pid_t)req->pid, req->data.args[0]);
	/* A count that cannot be made is over the limit (fail closed). */
	int r = usage_of(sv, 0, &u);
	int is_over = r < 0 || over(sv, u.total, asked) || u.unknown;
	if (r == 0)
		usage_done(&u);
	if (is_over && usage_of(sv, 1, &u) == 0) { /* again, precisely, before anything is killed */
		kill_unknown(sv, &u);
		is_over = over(sv, u.total, asked);
		usage_done(&u);
	}
	if (!is_over) {
		return notif_answer_continue(resp);
	}
	/* Over: the process that asks is killed; it never sees the answer. Its pidfd is taken
	 * before ID_VALID proves the number was still the trapped task's. */
	r = proc_status_field((pid_t)req->pid, "Tgid", &tgid);
	if (r == -ESRCH)
		return NOTIF_GONE;
	_cleanup_close_ int fd = r == 0 ? sys_pidfd_open(tgid, 0) : -1;
	char comm[64];
	if (fd >= 0)
		task_comm(tgid, comm, sizeof(comm));
	memory_event(sv, (int)req->data.nr, (pid_t)req->pid, ENOMEM, asked, NULL);
	if (fd >= 0 && notif_id_valid(sv->listener, req->id)) {
		memory_event(sv, -1, tgid, 0, 0, NULL);
		if (sys_pidfd_send_signal(fd, SIGKILL, NULL, 0) == 0)
			note_killed(sv, tgid, comm);
	}
	return -ENOMEM;
}

/* memfd_create and memfd_secret under max_memory: refused, with what a kernel without them
 * answers (ENOSYS), so programs fall back to a file the policy grants. A memfd's pages are in
 * no process's count until mapped and touched (a write() fills it unseen), and what keeps one
 * alive is not all visible here: a descriptor in flight in a UNIX socket, a mapping whose
 * descriptor was closed, the descriptors of a non-dumpable process. A secret memory's pages
 * are counted as file pages. */
int handle_memfd(struct supervisor *sv, const struct seccomp_notif *req,
		 struct seccomp_notif_resp *resp)
{
	(void)resp;
	memory_event(sv, (int)req->data.nr, (pid_t)req->pid, ENOSYS, 0,
		     "max_memory refuses memory files (their pages are counted by no process)");
	return -ENOSYS;
}

int memory_meminfo(struct supervisor *sv, char **ret, size_t *ret_len)
{
	char buf[8192], *out = NULL;
	uint64_t used = 0;
	size_t n = 0;

	int r = memory_usage(sv, &used);
	if (r < 0)
		return r;
	r = proc_read(0, "../meminfo", buf, sizeof(buf)); /* /proc/self/../meminfo */
	if (r < 0)
		return r;
	uint64_t total_kb = sv->max_memory / 1024;
	uint64_t free_kb = used < sv->max_memory ? (sv->max_memory - used) / 1024 : 0;
	if (!(out = malloc(strlen(buf) + 256)))
		return -ENOMEM;
	for (char *line = buf, *eol; *line; line = eol) {
		eol = strchr(line, '\n');
		eol = eol ? eol + 1 : line + strlen(line);
		const char *key = NULL;
		uint64_t kb = 0;
		if (strncmp(line, "MemTotal:", 9) == 0)
			key = "MemTotal:", kb = total_kb;
		else if (strncmp(line, "MemFree:", 8) == 0)
			key = "MemFree:", kb = free_kb;
		else if (strncmp(line, "MemAvailable:", 13) == 0)
			key = "MemAvailable:", kb = free_kb;
		if (key)
			n += (size_t)sprintf(out + n, "%-15s %8llu kB\n", key,
					     (unsigned long long)kb);
		else {
			memcpy(out + n, line, (size_t)(eol - line));
			n += (size_t)(eol - line);
		}
	}
	out[n] = '\0';
	*ret = out;
	*ret_len = n;
	return 0;
}
