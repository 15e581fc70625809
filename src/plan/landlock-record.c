/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plan/landlock-record: the ruleset as the kernel got it, recorded in logging mode for the
 * supervisor's judge (supervisor/judge.c), which tells from it which path call Landlock refuses
 * and why. Every rule goes through add_fd_rule (landlock.c), which hands it here while a record
 * is open on this thread: the plan is built on one thread, and the ruleset build's helpers stay
 * free of a recorder argument they would only pass along. Recording never fails the build: a
 * rule that cannot be recorded (no memory) marks the record incomplete, and the judge then says
 * nothing rather than something wrong.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "landlock.h"
#include "landlock-internal.h"
#include "plan/plan.h"
#include "strv.h"

static _Thread_local struct plan_ll *recording;

void landlock_record(struct plan_ll *ll)
{
	recording = ll;
}

void ll_record_rule(int fd, uint64_t access)
{
	struct plan_ll *ll = recording;
	char self[64], real[4096];
	struct stat st;

	if (!ll || !access)
		return;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(self, real, sizeof(real) - 1);
	if (fstat(fd, &st) < 0 || n <= 0) {
		ll->active = 0; /* incomplete: judge nothing */
		return;
	}
	real[n] = '\0';
	if (ll->n == ll->cap) {
		size_t cap = ll->cap ? 2 * ll->cap : 64;
		struct ll_rule *v = realloc(ll->rules, cap * sizeof(*v));
		if (!v) {
			ll->active = 0;
			return;
		}
		ll->rules = v;
		ll->cap = cap;
	}
	char *path = strdup(real);
	if (!path) {
		ll->active = 0;
		return;
	}
	ll->rules[ll->n++] = (struct ll_rule){
		.dev = st.st_dev, .ino = st.st_ino, .access = access, .path = path
	};
}

int landlock_record_denied(const struct sandlock_policy *p, struct plan_ll *ll)
{
	for (size_t i = 0; p->fs_deny && p->fs_deny[i]; i++) {
		char *real = landlock_resolve_partly(p->fs_deny[i]);
		if (!real) {
			if (errno == ENOMEM)
				return -ENOMEM;
			continue; /* a dangling symlink: refused elsewhere, nothing to name */
		}
		if (strv_push(&ll->denied, real) < 0) {
			free(real);
			return -ENOMEM;
		}
		if (strv_extend(&ll->denied_as_written, p->fs_deny[i]) < 0)
			return -ENOMEM;
	}
	return 0;
}

void plan_ll_done(struct plan_ll *ll)
{
	for (size_t i = 0; i < ll->n; i++)
		free(ll->rules[i].path);
	free(ll->rules);
	strv_free(ll->denied);
	strv_free(ll->denied_as_written);
	*ll = (struct plan_ll){ 0 };
}
