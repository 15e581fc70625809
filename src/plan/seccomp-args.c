/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plan/seccomp-args: the argument filters' denials as data, for logging mode. There each rule of
 * add_arg_filters (seccomp.c) that refuses some calls of a syscall by their arguments hands those
 * calls to the supervisor (SCMP_ACT_NOTIFY) instead of answering them, and is kept here with its
 * comparisons and errno; the supervisor matches a call's registers against the same comparisons
 * (seccomp_arg_rule_match) and answers the same errno, with an event (supervisor/judge.c). The
 * arguments compared are register values, copied by the kernel into the notification: nothing
 * another thread can change. Pure: no syscalls.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "seccomp.h"
#include "traps.h"

int seccomp_arg_rules_add(struct seccomp_arg_rules *rules, const char *what, int nr, int err,
			  unsigned n, const struct scmp_arg_cmp *cmp)
{
	if (n > ELEMENTSOF(rules->v[0].cmp))
		return -E2BIG;
	if (rules->n == rules->cap) {
		size_t cap = rules->cap ? rules->cap * 2 : 32;
		struct seccomp_arg_rule *v = realloc(rules->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		rules->v = v;
		rules->cap = cap;
	}
	struct seccomp_arg_rule *r = &rules->v[rules->n++];
	*r = (struct seccomp_arg_rule){ .nr = nr, .err = err, .what = what, .n = n };
	if (n)
		memcpy(r->cmp, cmp, n * sizeof(*cmp));
	return 0;
}

/* One comparison as libseccomp compiles it for a 64-bit architecture: on the whole register. */
static int cmp_holds(const struct scmp_arg_cmp *c, const uint64_t *args)
{
	uint64_t v = c->arg < 6 ? args[c->arg] : 0;

	switch (c->op) {
	case SCMP_CMP_NE:
		return v != c->datum_a;
	case SCMP_CMP_LT:
		return v < c->datum_a;
	case SCMP_CMP_LE:
		return v <= c->datum_a;
	case SCMP_CMP_EQ:
		return v == c->datum_a;
	case SCMP_CMP_GE:
		return v >= c->datum_a;
	case SCMP_CMP_GT:
		return v > c->datum_a;
	case SCMP_CMP_MASKED_EQ:
		return (v & c->datum_a) == c->datum_b;
	default:
		return 0; /* none is added (seccomp.c): never a match */
	}
}

int seccomp_arg_rules_traps(struct seccomp_arg_rules *rules, const struct trap *traps, size_t n)
{
	free(rules->traps);
	rules->traps = n ? malloc(n * sizeof(*traps)) : NULL;
	rules->n_traps = rules->traps ? n : 0;
	if (n && !rules->traps)
		return -ENOMEM;
	if (n)
		memcpy(rules->traps, traps, n * sizeof(*traps));
	return 0;
}

const struct seccomp_arg_rule *seccomp_arg_rule_match(const struct seccomp_arg_rules *rules,
						      const struct seccomp_data *d)
{
	const uint64_t *args = (const uint64_t *)d->args;

	if (!rules || !rules->n || trap_set_matches(rules->traps, rules->n_traps, d))
		return NULL;
	for (size_t i = 0; i < rules->n; i++) {
		const struct seccomp_arg_rule *r = &rules->v[i];
		unsigned k = 0;
		if (r->nr != d->nr)
			continue;
		while (k < r->n && cmp_holds(&r->cmp[k], args))
			k++;
		if (k == r->n)
			return r;
	}
	return NULL;
}

void seccomp_arg_rules_done(struct seccomp_arg_rules *rules)
{
	free(rules->v);
	free(rules->traps);
	*rules = (struct seccomp_arg_rules){ 0 };
}
