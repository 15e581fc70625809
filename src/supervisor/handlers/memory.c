/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/memory: max_memory, the most anonymous memory the sandbox's processes may hold
 * together. The calls that grow an address space are trapped (a writable anonymous mmap,
 * brk, mremap); at each the sandbox's use is read from the kernel (for every process of its
 * groups, VmData: private writable memory, heap and anonymous mappings, reset by exec, gone with
 * the process; plus RssShmem: the shared memory it touched), so no ledger of our own can be
 * laundered by mapping and unmapping files. A call
 * that would take the sandbox past the limit kills the calling process (SIGKILL: its parent
 * survives and sees it killed) instead of returning. Memory made writable later (mprotect of a
 * reservation) or touched without a call is caught by a check every 100 ms (memory_check),
 * which kills the largest process while the sandbox is over.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fd-util.h"
#include "handlers.h"
#include "macro.h"
#include "net-internal.h"
#include "sandbox/groups.h"
#include "supervisor/notif.h"
#include "supervisor/supervisor.h"
#include "syscall-util.h"

struct usage {
	struct supervisor *sv;
	uint64_t total;
	pid_t biggest;
	uint64_t biggest_bytes;
};

/* The bytes process @pid counts for (VmData + RssShmem), or 0 (gone, a kernel thread). */
static uint64_t process_bytes(pid_t pid)
{
	char buf[2048];

	if (proc_read(pid, "status", buf, sizeof(buf)) < 0)
		return 0;
	const char *line = strstr(buf, "\nVmData:");
	unsigned long long kb, shmem = 0;
	if (!line || sscanf(line + 8, "%llu", &kb) != 1)
		return 0;
	/* Shared memory it touched (shared anonymous mappings, tmpfs files mapped): not in
	 * VmData. Counted in every process that maps it: the sum errs on the side of over. */
	line = strstr(buf, "\nRssShmem:");
	if (line && sscanf(line + 10, "%llu", &shmem) != 1)
		shmem = 0;
	return ((uint64_t)kb + shmem) * 1024;
}

static void count(struct usage *u, pid_t pid, uint64_t bytes)
{
	u->total += bytes;
	if (bytes > u->biggest_bytes) {
		u->biggest_bytes = bytes;
		u->biggest = pid;
	}
}

static int remember(struct mem_pids *m, pid_t pid)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 16;
		pid_t *v = realloc(m->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		m->v = v;
		m->cap = cap;
	}
	m->v[m->n++] = pid;
	return 0;
}

static int scan_cb(const struct proc_info *p, void *arg)
{
	struct usage *u = arg;

	if (p->state == 'Z' || p->state == 'X')
		return 0;
	count(u, p->pid, process_bytes(p->pid));
	return remember(&u->sv->mem_pids, p->pid);
}

/* The sandbox's use. Its processes are found by a scan of /proc while a fork (which the
 * supervisor traps under max_memory too) may have made one since the last scan, else the ones
 * found last are read again: a process is made only by a trapped fork, and one that is gone, a
 * zombie or (its number reused) no longer in the sandbox's groups is dropped. */
static int usage_of(struct supervisor *sv, struct usage *u)
{
	struct mem_pids *m = &sv->mem_pids;

	*u = (struct usage){ .sv = sv };
	/* A fork not seen past yet may make its child after a scan: scan again each time until
	 * none is pending (fork.c). */
	size_t pending = forks_settle(sv, 0);
	if (m->dirty || pending || !m->n) {
		m->n = 0;
		int r = sandbox_processes(sv, scan_cb, u);
		if (r < 0)
			return r;
		m->dirty = pending > 0;
		return 0;
	}
	size_t k = 0;
	for (size_t i = 0; i < m->n; i++) {
		char buf[1024];
		char state;
		int ppid, pgrp;
		if (proc_read(m->v[i], "stat", buf, sizeof(buf)) < 0)
			continue;
		const char *close = strrchr(buf, ')');
		if (!close || sscanf(close + 1, " %c %d %d", &state, &ppid, &pgrp) != 3 ||
		    state == 'Z' || state == 'X' || !groups_owns(sv->groups, pgrp))
			continue;
		count(u, m->v[i], process_bytes(m->v[i]));
		m->v[k++] = m->v[i];
	}
	m->n = k;
	return 0;
}

int memory_usage(struct supervisor *sv, uint64_t *ret_total)
{
	struct usage u;
	int r = usage_of(sv, &u);
	if (r < 0)
		return r;
	*ret_total = u.total;
	return 0;
}

/* SIGKILL process @pid through a pidfd (never a later process with its number). */
static void kill_process(pid_t pid)
{
	_cleanup_close_ int fd = sys_pidfd_open(pid, 0);
	if (fd >= 0)
		(void)sys_pidfd_send_signal(fd, SIGKILL, NULL, 0);
}

void memory_check(struct supervisor *sv)
{
	struct usage u;

	if (!sv->max_memory || usage_of(sv, &u) < 0)
		return;
	if (u.total > sv->max_memory && u.biggest > 0)
		kill_process(u.biggest);
}

/* mmap (writable, anonymous), brk, mremap. CONTINUE when within the limit: the decision is on
 * integer arguments (a length, flags) the kernel uses unchanged. */
int handle_memory(struct supervisor *sv, const struct seccomp_notif *req,
		  struct seccomp_notif_resp *resp)
{
	uint64_t asked = 0, total = 0;
	pid_t tgid;

	if (req->data.nr == SYS_mmap)
		asked = req->data.args[1];
	else if (req->data.nr == SYS_mremap && req->data.args[2] > req->data.args[1])
		asked = req->data.args[2] - req->data.args[1];
	/* brk: the heap's growth is in VmData once made; checked as it stands. */
	int r = memory_usage(sv, &total);
	if (r < 0)
		return r;
	if (asked <= sv->max_memory && total <= sv->max_memory - asked) {
		notif_answer_continue(resp);
		return 0;
	}
	/* Over: the process that asks is killed; it never sees the answer. Its pidfd is taken
	 * before ID_VALID proves the number was still the trapped task's. */
	r = proc_status_field((pid_t)req->pid, "Tgid", &tgid);
	if (r == -ESRCH)
		return NOTIF_GONE;
	_cleanup_close_ int fd = r == 0 ? sys_pidfd_open(tgid, 0) : -1;
	if (fd >= 0 && notif_id_valid(sv->listener, req->id))
		(void)sys_pidfd_send_signal(fd, SIGKILL, NULL, 0);
	return -ENOMEM;
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
