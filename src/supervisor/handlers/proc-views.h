/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/proc-views: the texts of the /proc files served while /proc is (proc-views.c).
 */
#pragma once

#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>

struct supervisor;

/* Why the supervisor serving /proc refused an open (open.c's proc_open, EACCES). */
enum proc_refusal {
	PROC_REFUSED_OTHER,	/* another process's directory, outside the sandbox */
	PROC_REFUSED_NEVER,	/* a file no grant reaches (kcore, kmsg, mountstats...) */
	PROC_REFUSED_NET,	/* a file of /proc/PID/net other than the socket tables */
	PROC_REFUSED_GRANT,	/* the read (or write) grant the access needs */
	PROC_REFUSED_ELSEWHERE, /* a procfs mounted elsewhere than /proc */
};
/* The denial event of @req's open of @real (the file reached) with @flags, refused @why. */
void proc_refused_event(struct supervisor *sv, const struct seccomp_notif *req, const char *real,
			uint64_t flags, enum proc_refusal why);

/* /proc/loadavg (the sandbox's processes), /proc/uptime (since it started), /proc/mounts or
 * (@info) mountinfo (the mounts it reaches), /etc/hostname (its name). Text malloc'd in *@ret.
 * -errno. */
int view_loadavg(struct supervisor *sv, char **ret, size_t *ret_len);
int view_uptime(struct supervisor *sv, char **ret, size_t *ret_len);
int view_mounts(struct supervisor *sv, int info, char **ret, size_t *ret_len);
int view_hostname(struct supervisor *sv, char **ret, size_t *ret_len);
