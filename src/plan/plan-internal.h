/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plan-internal: what the files of plan/ that build the plan's network section share (plan.c,
 * plan-http.c).
 */
#pragma once

#include <stddef.h>

#include "policy/rules.h"

/* Append @r to the vector *@v of *@n rules, taking it over (released on -ENOMEM too). */
int plan_net_rules_push(struct net_rule **v, size_t *n, struct net_rule *r);
/* Whether @text (lines, may be NULL) holds the line @line ("...\n") whole. */
int plan_hosts_has_line(const char *text, const char *line);
/* Append the line @entry ("ADDR\tNAME\n") to the synthetic /etc/hosts *@hosts (NULL: empty),
 * unless it holds it already. 0 or -ENOMEM. */
int plan_hosts_append(char **hosts, const char *entry);
