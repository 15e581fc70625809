/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy-net: the policy's network rules as typed rules beside their canonical text, and what
 * enforcing them takes. The schema parses each rule once, when it is set, and hands the rule
 * here; the summary (struct net_needs) is decided again only when the rules change, so the plan
 * and the trap set read it without parsing. The bind port lists are kept parsed the same way.
 * Pure: no syscalls.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "strv.h"

/* The summary of @p's rules, after they changed. */
static void net_update(struct sandlock_policy *p)
{
	struct policy_net *n = &p->net;

	net_rules_needs_of(n->allow, n->n_allow, n->deny, n->n_deny, &n->needs);
	n->hosts = 0;
	for (size_t i = 0; i < n->n_allow && !n->hosts; i++)
		n->hosts = n->allow[i].kind == NET_TARGET_HOST;
}

static int net_push(struct sandlock_policy *p, int deny, struct net_rule *r)
{
	struct net_rule **v = deny ? &p->net.deny : &p->net.allow;
	size_t *n = deny ? &p->net.n_deny : &p->net.n_allow;
	struct net_rule *nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv) {
		net_rule_done(r);
		return -ENOMEM;
	}
	nv[(*n)++] = *r;
	*v = nv;
	*r = (struct net_rule){ 0 };
	return 0;
}

int policy_net_add(struct sandlock_policy *p, int deny, struct net_rule *r)
{
	int k = net_push(p, deny, r);

	if (k == 0)
		net_update(p);
	return k;
}

void policy_net_clear(struct sandlock_policy *p, int deny)
{
	struct net_rule **v = deny ? &p->net.deny : &p->net.allow;
	size_t *n = deny ? &p->net.n_deny : &p->net.n_allow;
	char ***text = deny ? &p->net_deny : &p->net_allow;

	for (size_t i = 0; i < *n; i++)
		net_rule_done(&(*v)[i]);
	free(*v);
	*v = NULL;
	*n = 0;
	*text = strv_free(*text);
	net_update(p);
}

int policy_net_copy(struct sandlock_policy *to, const struct sandlock_policy *from, int deny)
{
	const struct net_rule *src = deny ? from->net.deny : from->net.allow;
	size_t n = deny ? from->net.n_deny : from->net.n_allow;

	for (size_t i = 0; i < n; i++) {
		struct net_rule c;
		if (net_rule_copy(&src[i], &c) < 0 || net_push(to, deny, &c) < 0)
			return -ENOMEM;
	}
	/* The same rules: the summary is the original's (copied with the struct). */
	to->net.needs = from->net.needs;
	to->net.hosts = from->net.hosts;
	return 0;
}

void policy_net_needs(const struct sandlock_policy *p, struct net_needs *ret)
{
	*ret = p->net.needs;
}

int policy_net_onbehalf(const struct sandlock_policy *p)
{
	return p->net.needs.onbehalf;
}

int policy_net_sends(const struct sandlock_policy *p)
{
	return p->net.needs.dgram_checked;
}

int policy_net_hosts(const struct sandlock_policy *p)
{
	return p->net.hosts;
}

int policy_http_active(const struct sandlock_policy *p)
{
	return (p->http_allow && p->http_allow[0]) || (p->http_deny && p->http_deny[0]);
}

int policy_http_hosts(const struct sandlock_policy *p)
{
	for (int deny = 0; deny < 2; deny++)
		for (char **t = deny ? p->http_deny : p->http_allow; t && *t; t++) {
			struct http_rule r;
			/* Canonical already (schema): it parses. */
			if (http_rule_parse(*t, &r, NULL, 0) < 0)
				continue;
			int name = r.host_kind == HTTP_HOST_NAME;
			http_rule_done(&r);
			if (name)
				return 1;
		}
	return 0;
}

int policy_bind_add(struct sandlock_policy *p, int deny, struct port_set *set)
{
	struct port_set *to = deny ? &p->bind.deny : &p->bind.allow;
	struct port_range *v =
		set->n ? realloc(to->ranges, (to->n + set->n) * sizeof(*v)) : to->ranges;

	if (set->n && !v) {
		port_set_done(set);
		return -ENOMEM;
	}
	if (set->n)
		memcpy(v + to->n, set->ranges, set->n * sizeof(*v));
	to->ranges = v;
	to->n += set->n;
	to->all |= set->all;
	port_set_done(set);
	return 0;
}

void policy_bind_clear(struct sandlock_policy *p, int deny)
{
	port_set_done(deny ? &p->bind.deny : &p->bind.allow);
}

int policy_bind_copy(struct sandlock_policy *to, const struct sandlock_policy *from, int deny)
{
	const struct port_set *src = deny ? &from->bind.deny : &from->bind.allow;
	struct port_set c = { .all = src->all, .n = src->n };

	if (src->n && !(c.ranges = malloc(src->n * sizeof(*c.ranges))))
		return -ENOMEM;
	if (src->n)
		memcpy(c.ranges, src->ranges, src->n * sizeof(*c.ranges));
	*(deny ? &to->bind.deny : &to->bind.allow) = c;
	return 0;
}
