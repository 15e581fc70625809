/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/proc-views: /proc files as the sandbox sees them while the supervisor serves /proc
 * (open.c): /proc/loadavg from the sandbox's own processes, /proc/uptime since the sandbox
 * started, /proc/mounts and mountinfo with the mounts the sandbox can reach (those at or above
 * a grant, or beneath one), and /etc/hostname, the sandbox's name; and the denial events of
 * the opens of /proc the supervisor refuses.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "macro.h"
#include "path-util.h"
#include "plan/plan.h"
#include "proc-views.h"
#include "procs.h"
#include "supervisor/child.h"
#include "supervisor/events.h"
#include "supervisor/judge.h"
#include "supervisor/supervisor.h"

struct load {
	unsigned running, total;
	pid_t last;
};

static int load_cb(const struct proc_info *p, void *arg)
{
	struct load *l = arg;

	if (!proc_live_task(p))
		return 0;
	l->total++;
	l->running += p->state == 'R';
	l->last = MAX(l->last, p->pid);
	return 0;
}

int view_loadavg(struct supervisor *sv, char **ret, size_t *ret_len)
{
	struct load l = { 0 };

	int r = sandbox_processes(sv, load_cb, &l);
	if (r < 0)
		return r;
	/* The kernel's averages decay over minutes; the sandbox's is what runs now, the same
	 * in the three columns. */
	int n = asprintf(ret, "%u.00 %u.00 %u.00 %u/%u %d\n", l.running, l.running, l.running,
			 l.running, l.total, (int)l.last);
	if (n < 0)
		return -ENOMEM;
	*ret_len = (size_t)n;
	return 0;
}

int view_uptime(struct supervisor *sv, char **ret, size_t *ret_len)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	int64_t ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec - sv->started_ns;
	double up = (double)MAX(ns, (int64_t)0) / 1e9;
	/* Idle: the CPUs' time the sandbox did not use is not known without a scan; none. */
	int n = asprintf(ret, "%.2f %.2f\n", up, 0.0);
	if (n < 0)
		return -ENOMEM;
	*ret_len = (size_t)n;
	return 0;
}

/* Whether mount point @mnt is one the sandbox reaches: at or above a grant, or beneath one. */
static int reachable(struct supervisor *sv, const char *mnt)
{
	for (size_t i = 0; sv->plan->fs.granted && sv->plan->fs.granted[i]; i++)
		if (path_is_beneath(mnt, sv->plan->fs.granted[i]) ||
		    path_is_beneath(sv->plan->fs.granted[i], mnt))
			return 1;
	return 0;
}

int view_mounts(struct supervisor *sv, int info, char **ret, size_t *ret_len)
{
	char *text = NULL;
	size_t cap = 0, n = 0;

	FILE *f = fopen(info ? "/proc/self/mountinfo" : "/proc/self/mounts", "re");
	if (!f)
		return negative_errno();
	char *line = NULL;
	size_t lcap = 0;
	ssize_t len;
	int r = 0;
	while (r == 0 && (len = getline(&line, &lcap, f)) > 0) {
		/* The mount point: field 2 of mounts, field 5 of mountinfo. */
		const char *p = line;
		for (int field = 1; field < (info ? 5 : 2) && p; field++)
			p = (p = strchr(p, ' ')) ? p + 1 : NULL;
		const char *end = p ? strchr(p, ' ') : NULL;
		char mnt[4096];
		if (!p || !end)
			continue;
		path_unescape_mount(p, (size_t)(end - p), mnt, sizeof(mnt));
		if (!reachable(sv, mnt))
			continue;
		if (n + (size_t)len + 1 > cap) {
			char *t = realloc(text, cap = MAX(2 * cap, n + (size_t)len + 4096));
			if (!t) {
				r = -ENOMEM;
				break;
			}
			text = t;
		}
		memcpy(text + n, line, (size_t)len);
		n += (size_t)len;
	}
	free(line);
	fclose(f);
	if (r == 0 && !text && !(text = strdup("")))
		r = -ENOMEM;
	if (r < 0) {
		free(text);
		return r;
	}
	text[n] = '\0';
	*ret = text;
	*ret_len = n;
	return 0;
}

int view_hostname(struct supervisor *sv, char **ret, size_t *ret_len)
{
	int n = asprintf(ret, "%s\n", sv->name ? sv->name : "sandbox");
	if (n < 0)
		return -ENOMEM;
	*ret_len = (size_t)n;
	return 0;
}

void proc_refused_event(struct supervisor *sv, const struct seccomp_notif *req, const char *real,
			uint64_t flags, enum proc_refusal why)
{
	char access[128], reason[PATH_MAX + 64], hint[64] = "", dir[PATH_MAX];
	int acc = (int)(flags & O_ACCMODE);

	if (!events_flags(sv->events))
		return;
	judge_open_text(flags, access, sizeof(access));
	switch (why) {
	case PROC_REFUSED_OTHER: {
		/* "/proc/PID" of the path: the process the sandbox does not hold. */
		size_t n = strcspn(real + 6, "/");
		snprintf(dir, sizeof(dir), "%.*s", (int)MIN(n + 6, sizeof(dir) - 1), real);
		snprintf(reason, sizeof(reason), "%s is not a process of the sandbox", dir);
		break;
	}
	case PROC_REFUSED_NEVER:
		snprintf(reason, sizeof(reason), "%s is never served in a sandbox", real);
		break;
	case PROC_REFUSED_NET:
		snprintf(reason, sizeof(reason),
			 "only the socket tables of /proc/PID/net are served");
		break;
	case PROC_REFUSED_ELSEWHERE:
		snprintf(reason, sizeof(reason), "only the procfs at /proc is served");
		break;
	case PROC_REFUSED_GRANT: {
		/* The grant that reaches /proc/PID is /proc's: the next run's pids differ. */
		int read = acc != O_WRONLY && !path_is_beneath_any(real, sv->plan->fs.granted);
		snprintf(reason, sizeof(reason), "no %s grant covers /proc",
			 read ? "read" : "write");
		snprintf(hint, sizeof(hint), "add %s /proc", read ? "-r" : "-w");
		break;
	}
	}
	struct event ev = {
		.nr = (int)req->data.nr,
		.category = EVENT_FILE,
		.pid = (pid_t)req->pid,
		.verdict = SANDLOCK_VERDICT_DENY,
		.error = EACCES,
		.path = real,
		.access = access,
		.reason = reason,
		.hint = hint[0] ? hint : NULL,
	};
	events_emit(sv, &ev);
}
