/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-policy-bind: the bind port lists are kept parsed beside their text (policy.bind), one
 * entry's ranges after another, through set, a second spelling of one entry, a refused entry,
 * copy and clear.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "policy/policy.h"
#include "sandlock.h"
#include "strv.h"
#include "tap.h"

/* "lo-hi,lo-hi" of @set's ranges in order, "*" first when .all. */
static const char *ranges(const struct port_set *set, char *buf, size_t size)
{
	size_t off = 0;

	buf[0] = '\0';
	if (set->all)
		off += (size_t)snprintf(buf, size, "*");
	for (size_t i = 0; i < set->n && off < size; i++)
		off += (size_t)snprintf(buf + off, size - off, "%s%u-%u", off ? "," : "",
					set->ranges[i].lo, set->ranges[i].hi);
	return buf;
}

static int set(struct sandlock_policy *p, const char *field, const char *value, char *msg,
	       size_t size)
{
	sandlock_error_t *e = NULL;
	int r = sandlock_policy_set(p, field, value, &e);

	snprintf(msg, size, "%s", e ? sandlock_error_message(e) : "");
	sandlock_error_free(e);
	return r;
}

int main(void)
{
	struct sandlock_policy *p = policy_new(), *c = NULL;
	char buf[256], msg[256];

	if (!ok(p != NULL, "a policy"))
		return done_testing();
	is_int(set(p, "net_allow_bind", "8080", msg, sizeof(msg)), 0, "allow_bind 8080");
	is_int(set(p, "net_allow_bind", "9000-9002, 80", msg, sizeof(msg)), 0,
	       "allow_bind \"9000-9002, 80\"");
	is_int(set(p, "net_allow_bind", "8080", msg, sizeof(msg)), 0, "allow_bind 8080 again");
	is_str(ranges(&p->bind.allow, buf, sizeof(buf)), "8080-8080,9000-9002,80-80",
	       "  the ranges of each entry once, in order");
	is_int((int)strv_length(p->net_allow_bind), 2, "  two entries of text");
	is_int(set(p, "net_allow_bind", "*", msg, sizeof(msg)), -EINVAL, "allow_bind * refused");
	is_str(msg, "net_allow_bind: \"*\" cannot be mixed with ports", "  the message");
	is_str(ranges(&p->bind.allow, buf, sizeof(buf)), "8080-8080,9000-9002,80-80",
	       "  the ports unchanged");
	is_int(set(p, "net_allow_bind", "80x", msg, sizeof(msg)), -EINVAL, "allow_bind 80x refused");
	is_str(ranges(&p->bind.allow, buf, sizeof(buf)), "8080-8080,9000-9002,80-80",
	       "  the ports unchanged");
	is_int(set(p, "net_deny_bind", "22,23", msg, sizeof(msg)), 0, "deny_bind 22,23");
	is_int(set(p, "net_deny_bind", "0", msg, sizeof(msg)), -ERANGE, "deny_bind 0 refused");
	is_str(ranges(&p->bind.deny, buf, sizeof(buf)), "22-22,23-23", "  the denied ranges");

	c = policy_copy(p);
	if (ok(c != NULL, "a copy")) {
		is_str(ranges(&c->bind.allow, buf, sizeof(buf)), "8080-8080,9000-9002,80-80",
		       "  the copy's allowed ports");
		is_str(ranges(&c->bind.deny, buf, sizeof(buf)), "22-22,23-23",
		       "  the copy's denied ports");
		ok(c->bind.allow.ranges != p->bind.allow.ranges, "  its own memory");
	}
	is_int(sandlock_policy_clear(p, "net_allow_bind"), 0, "clear allow_bind");
	ok(p->bind.allow.n == 0 && !p->bind.allow.all && !p->net_allow_bind,
	   "  no ports and no text");
	is_str(ranges(&c->bind.allow, buf, sizeof(buf)), "8080-8080,9000-9002,80-80",
	       "  the copy's stay");
	is_int(set(p, "net_allow_bind", "*", msg, sizeof(msg)), 0, "allow_bind * after the clear");
	is_str(ranges(&p->bind.allow, buf, sizeof(buf)), "*", "  all ports");
	policy_free(c);
	policy_free(p);
	return done_testing();
}
