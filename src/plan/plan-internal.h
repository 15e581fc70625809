/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plan-internal: what the files of plan/ that build the plan share (plan.c, plan-http.c,
 * plan-traps.c).
 */
#pragma once

#include <stddef.h>

#include "policy/rules.h"

struct plan;
struct sandlock_error;
struct sandlock_policy;

/* Append @r to the vector *@v of *@n rules, taking it over (released on -ENOMEM too). */
int plan_net_rules_push(struct net_rule **v, size_t *n, struct net_rule *r);
/* Whether @text (lines, may be NULL) holds the line @line ("...\n") whole. */
int plan_hosts_has_line(const char *text, const char *line);
/* Append the line @entry ("ADDR\tNAME\n") to the synthetic /etc/hosts *@hosts (NULL: empty),
 * unless it holds it already. 0 or -ENOMEM. */
int plan_hosts_append(char **hosts, const char *entry);
/* The plan's trap set and seccomp program, from the answers plan_build resolved before it
 * (plan->proc.served, plan->fs.write_roots), with the @n_user syscalls @user_nrs of extension
 * handlers trapped whole. */
int plan_seccomp(const struct sandlock_policy *p, struct plan *plan, const int *user_nrs,
		 size_t n_user, struct sandlock_error **reterr);
