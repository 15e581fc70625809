/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * schema-ops: assigning, clearing and testing one field of a policy through the schema. Every
 * value is validated and stored in canonical form (rules re-formatted, sizes in bytes), so two
 * spellings of the same policy are equal. Pure: no syscalls.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse-util.h"
#include "canon.h"
#include "schema.h"
#include "strv.h"

#define VALUE_MAX 4096 /* the longest canonical text of one entry */

static int bad(struct sandlock_error **reterr, int code, const struct field *f, const char *why)
{
	return error_set(reterr, code, "%s: %s", f->name, why);
}

static int want(struct sandlock_error **reterr, const struct field *f, const char *what)
{
	return error_set(reterr, -EINVAL, "%s: expected %s", f->name, what);
}

/* A non-negative number from an integer or a decimal string. */
static int as_u64(const struct fvalue *v, uint64_t *ret)
{
	if (v->kind == FV_INT) {
		if (v->i < 0)
			return -ERANGE;
		*ret = (uint64_t)v->i;
		return 0;
	}
	return v->kind == FV_STR ? parse_uint64(v->s, ret) : -EINVAL;
}

static int set_string(char **slot, const char *s)
{
	char *c = strdup(s);
	if (!c)
		return -ENOMEM;
	free(*slot);
	*slot = c;
	return 0;
}

static int assign_bool(int *slot, int invert, const struct fvalue *v)
{
	static const char *const yes[] = { "true", "yes", "1" }, *const no[] = { "false", "no",
										 "0" };
	int b = -1;

	if (v->kind == FV_BOOL)
		b = !!v->b;
	for (size_t i = 0; v->kind == FV_STR && i < ELEMENTSOF(yes); i++) {
		if (strcmp(v->s, yes[i]) == 0)
			b = 1;
		if (strcmp(v->s, no[i]) == 0)
			b = 0;
	}
	if (b < 0)
		return -EINVAL;
	*slot = invert ? !b : b;
	return 0;
}

static int assign_number(struct sandlock_policy *p, const struct field *f, const struct fvalue *v,
			 struct sandlock_error **reterr)
{
	uint64_t n;
	int r = f->type == FT_SIZE && v->kind == FV_STR ? parse_size(v->s, &n) : as_u64(v, &n);

	if (r == -ERANGE && v->kind == FV_STR) { /* digits that do not fit in 64 bits */
		char why[64];
		snprintf(why, sizeof(why), "too large (max %llu%s)",
			 (unsigned long long)(f->max ? f->max : UINT64_MAX),
			 f->type == FT_SIZE ? " bytes" : "");
		return bad(reterr, -ERANGE, f, why);
	}
	if (r < 0)
		return f->type == FT_SIZE
			       ? want(reterr, f, "a size such as 512M, 1G or a byte count")
			       : want(reterr, f, "a non-negative integer");
	if ((f->type == FT_NZ_U64 || f->type == FT_SIZE) && n == 0 && f->min == 1)
		return bad(reterr, -ERANGE, f, "must be greater than 0");
	if (f->max && (n < f->min || n > f->max)) {
		char why[96];
		snprintf(why, sizeof(why), "%llu is out of range %llu..%llu", (unsigned long long)n,
			 (unsigned long long)f->min, (unsigned long long)f->max);
		return bad(reterr, -ERANGE, f, why);
	}
	if (f->type == FT_NZ_U64) {
		*(uint64_t *)field_ptr(p, f) = n;
		return 0;
	}
	*(struct opt_u64 *)field_ptr(p, f) = (struct opt_u64){ .set = 1, .v = n };
	return 0;
}

/* Lists of numbers go through a bitmap of f->max + 1 bits (at most 65536): duplicates fold and
 * the list comes out sorted, in time linear in the range ("1-65535" is one string). */
struct u32v_add {
	uint8_t *bits;
	const struct field *f;
	struct sandlock_error **reterr;
};

static int u32v_add(struct u32v_add *a, uint64_t n)
{
	const struct field *f = a->f;

	if (n < f->min || n > f->max) {
		char why[96];
		snprintf(why, sizeof(why), "%llu is out of range %llu..%llu", (unsigned long long)n,
			 (unsigned long long)f->min, (unsigned long long)f->max);
		return bad(a->reterr, -ERANGE, f, why);
	}
	a->bits[n / 8] |= (uint8_t)(1u << (n % 8));
	return 0;
}

static int u32v_add_cb(uint32_t n, void *userdata)
{
	return u32v_add(userdata, n);
}

/* gpu_devices: "all" is the empty list ([] = every GPU); http_ports, gpu_devices: numbers and
 * comma lists. On a failure the list is left as it was. */
static int assign_u32v(struct sandlock_policy *p, const struct field *f, const struct fvalue *v,
		       struct sandlock_error **reterr)
{
	struct opt_u32v *l = field_ptr(p, f);
	uint64_t n;
	int r;

	if (v->kind == FV_STR && f->type == FT_U32V && strcmp(v->s, "all") == 0) {
		/* Every GPU, whatever was listed before. */
		free(l->v);
		*l = (struct opt_u32v){ .set = 1 };
		return 0;
	}
	if (v->kind != FV_INT && v->kind != FV_STR)
		return want(reterr, f, "a number or a list of numbers");
	_cleanup_free_ uint8_t *bits = calloc(f->max / 8 + 1, 1);
	if (!bits)
		return -ENOMEM;
	struct u32v_add a = { bits, f, reterr };
	for (size_t i = 0; i < l->n; i++)
		a.bits[l->v[i] / 8] |= (uint8_t)(1u << (l->v[i] % 8));
	if (v->kind == FV_INT) {
		if (as_u64(v, &n) < 0)
			return want(reterr, f, "a non-negative integer");
		r = u32v_add(&a, n);
	} else {
		r = parse_cpu_list(v->s, (uint32_t)f->max + 1, u32v_add_cb, &a);
		if (r < 0 && !(reterr && *reterr))
			r = want(reterr, f, "numbers such as 0,2 or 0-3");
	}
	if (r < 0)
		return r;
	size_t count = 0;
	for (uint64_t i = 0; i <= f->max; i++)
		count += (bits[i / 8] >> (i % 8)) & 1;
	uint32_t *nv = count ? malloc(count * sizeof(*nv)) : NULL;
	if (count && !nv)
		return -ENOMEM;
	count = 0;
	for (uint64_t i = 0; i <= f->max; i++)
		if ((bits[i / 8] >> (i % 8)) & 1)
			nv[count++] = (uint32_t)i;
	free(l->v);
	*l = (struct opt_u32v){ .set = 1, .n = count, .v = nv };
	return 0;
}

static int cpu_add_cb(uint32_t cpu, void *userdata)
{
	CPU_SET(cpu, (cpu_set_t *)userdata);
	return 0;
}

static int assign_cpus(struct sandlock_policy *p, const struct field *f, const struct fvalue *v,
		       struct sandlock_error **reterr)
{
	cpu_set_t set;
	uint64_t n;

	if (p->has_cpu_cores)
		set = p->cpu_cores;
	else
		CPU_ZERO(&set);
	if (v->kind == FV_INT) {
		if (as_u64(v, &n) < 0 || n >= CPU_SETSIZE)
			return bad(reterr, -ERANGE, f, "CPU number out of range");
		CPU_SET(n, &set);
	} else if (v->kind != FV_STR || parse_cpu_list(v->s, CPU_SETSIZE, cpu_add_cb, &set) < 0)
		return want(reterr, f, "CPU numbers such as 0,1 or 0-3");
	p->cpu_cores = set;
	p->has_cpu_cores = 1;
	return 0;
}

/* Canonical text of one rule-like entry (net, bind, http, mount, credential, http-auth, time).
 * Returns 0 with @out filled (and, for a network rule, *@ret_net, for a bind list *@ret_bind:
 * the caller's), or -errno with @err filled. */
static int canon(const struct sandlock_policy *p, const struct field *f, const char *in, char *out,
		 size_t size, struct net_rule *ret_net, struct port_set *ret_bind, char *err,
		 size_t errlen)
{
	switch (f->type) {
	case FT_NETV:
		return net_rule_canon(in, 0, out, size, ret_net, err, errlen);
	case FT_NETDENYV:
		return net_rule_canon(in, NET_CANON_DENY, out, size, ret_net, err, errlen);
	case FT_HTTPV:
		return http_rule_canon(in, out, size, err, errlen);
	case FT_MOUNTV:
		return mount_entry_canon(in, out, size, err, errlen);
	case FT_CREDV:
		return credential_canon(in, out, size, err, errlen);
	case FT_AUTHV:
		return http_auth_canon(in, out, size, err, errlen);
	case FT_BINDV:
		return bind_ports_canon(
			in, f->offset == offsetof(struct sandlock_policy, net_allow_bind), out,
			size, ret_bind, err, errlen);
	case FT_TIME:
		return time_canon(in, out, size, err, errlen);
	default:
		return -EINVAL;
	}
}

/* A network rule: its text in the list, the rule parsed from it beside (policy-net.c). */
static int assign_net_rule(struct sandlock_policy *p, const struct field *f, const char *text,
			   struct net_rule *rule)
{
	char ***list = field_ptr(p, f);

	if (strv_contains(*list, text)) {
		net_rule_done(rule);
		return 0;
	}
	int r = strv_extend(list, text);
	if (r < 0) {
		net_rule_done(rule);
		return r;
	}
	r = policy_net_add(p, f->type == FT_NETDENYV, rule);
	if (r < 0) { /* the text goes too: the two lists stay one for one */
		size_t n = strv_length(*list);
		free((*list)[n - 1]);
		(*list)[n - 1] = NULL;
		if (n == 1)
			*list = strv_free(*list);
	}
	return r;
}

/* A bind list's entry: its text in the list, its ports parsed from it beside (policy-net.c). */
static int assign_bind(struct sandlock_policy *p, const struct field *f, const char *text,
		       struct port_set *set)
{
	char ***list = field_ptr(p, f);
	int deny = f->offset == offsetof(struct sandlock_policy, net_deny_bind);

	if (strv_contains(*list, text)) {
		port_set_done(set);
		return 0;
	}
	int r = strv_extend(list, text);
	if (r < 0) {
		port_set_done(set);
		return r;
	}
	r = policy_bind_add(p, deny, set);
	if (r < 0) { /* the text goes too: the text and the ports stay one */
		size_t n = strv_length(*list);
		free((*list)[n - 1]);
		(*list)[n - 1] = NULL;
		if (n == 1)
			*list = strv_free(*list);
	}
	return r;
}

/* Append a canonical entry to a rule list (bind lists: "*" never mixed with ports). */
static int assign_rule(struct sandlock_policy *p, const struct field *f, const struct fvalue *v,
		       struct sandlock_error **reterr)
{
	char text[VALUE_MAX], err[256] = "";
	char ***list = field_ptr(p, f);
	char num[24];
	const char *in = v->s;

	/* Integers: a port of a bind list, Unix seconds for a time. */
	if (v->kind == FV_INT && (f->type == FT_BINDV || f->type == FT_TIME)) {
		snprintf(num, sizeof(num), "%lld", (long long)v->i);
		in = num;
	} else if (v->kind != FV_STR)
		return want(reterr, f, "a string");
	int net = f->type == FT_NETV || f->type == FT_NETDENYV;
	struct net_rule rule = { 0 };
	struct port_set ports = { 0 };
	int r = canon(p, f, in, text, sizeof(text), &rule, &ports, err, sizeof(err));
	if (r < 0)
		return error_set(reterr, r, "%s: %s", f->name, err[0] ? err : strerror(-r));
	if (net)
		return assign_net_rule(p, f, text, &rule);
	if (f->type == FT_BINDV && *list && !strv_contains(*list, text) &&
	    (strcmp(text, "*") == 0 || strv_contains(*list, "*"))) {
		port_set_done(&ports);
		return bad(reterr, -EINVAL, f, "\"*\" cannot be mixed with ports");
	}
	if (f->type == FT_BINDV)
		return assign_bind(p, f, text, &ports);
	if (f->type == FT_TIME)
		return set_string(field_ptr(p, f), text);
	if (strv_contains(*list, text))
		return 0;
	return strv_extend(list, text);
}

static int assign_env(struct sandlock_policy *p, const struct field *f, const struct fvalue *v,
		      struct sandlock_error **reterr)
{
	const char *eq = v->kind == FV_STR ? strchr(v->s, '=') : NULL;

	if (!eq || eq == v->s)
		return want(reterr, f, "NAME=VALUE");
	char *name = strndup(v->s, (size_t)(eq - v->s));
	if (!name)
		return -ENOMEM;
	int r = strv_env_set(&p->env, name, eq + 1);
	free(name);
	return r;
}

/* One protection name, or "all" (every protection) where @all_ok; sets bits in *@set. */
static int protection_word(const char *w, size_t n, int all_ok, uint32_t *set)
{
	char name[64];

	if (n == 0 || n >= sizeof(name))
		return -EINVAL;
	memcpy(name, w, n);
	name[n] = '\0';
	if (all_ok && strcmp(name, "all") == 0) {
		*set |= (1u << SANDLOCK_PROTECTION_COUNT) - 1;
		return 0;
	}
	int prot = policy_protection_from_name(name);
	if (prot < 0)
		return prot;
	*set |= 1u << prot;
	return 0;
}

/* A protection name, a comma list of them ("fs-refer,net-tcp"), and for allow_degraded "all":
 * degrading every protection the kernel lacks is one word for a user on an older kernel.
 * disable takes no "all": turning every protection off is spelled out. */
static int assign_protection(struct sandlock_policy *p, const struct field *f,
			     const struct fvalue *v, struct sandlock_error **reterr)
{
	int disable = strcmp(f->key, "disable") == 0, r = v->kind == FV_STR ? 0 : -EINVAL;
	uint32_t set = 0;

	for (const char *s = v->s; r == 0 && s;) {
		size_t n = strcspn(s, ",");
		r = protection_word(s, n, !disable, &set);
		s = s[n] ? s + n + 1 : NULL;
	}
	if (r < 0)
		return want(
			reterr, f,
			disable ? "fs-refer, fs-truncate, net-tcp, fs-ioctl-dev, signal-scope or "
				  "abstract-unix-socket-scope"
				: "all, fs-refer, fs-truncate, net-tcp, fs-ioctl-dev, "
				  "signal-scope or abstract-unix-socket-scope");
	/* The last word wins for a protection, whichever of the two lists says it. */
	for (uint32_t i = 0; i < SANDLOCK_PROTECTION_COUNT; i++)
		if (set & (1u << i))
			p->protection[i] = disable ? SANDLOCK_PROTECTION_DISABLED
						   : SANDLOCK_PROTECTION_DEGRADED;
	return 0;
}

static uint8_t default_action(const struct field *f)
{
	return strcmp(f->key, "on_error") == 0 ? BRANCH_ABORT : BRANCH_COMMIT;
}

static int assign_action(struct sandlock_policy *p, const struct field *f, const struct fvalue *v,
			 struct sandlock_error **reterr)
{
	for (unsigned a = 0; v->kind == FV_STR && a <= BRANCH_DEFER; a++)
		if (strcmp(v->s, schema_action_name(a)) == 0) {
			/* 0 is the default, so a policy at its defaults stays all zero. */
			*(uint8_t *)field_ptr(p, f) = a == default_action(f) ? 0 : (uint8_t)(a + 1);
			return 0;
		}
	return want(reterr, f, "commit, abort, keep or defer");
}

static int assign_text(struct sandlock_policy *p, const struct field *f, const struct fvalue *v,
		       struct sandlock_error **reterr)
{
	if (v->kind != FV_STR)
		return want(reterr, f, "a string");
	/* An empty argument is a real one (`printf ''`); nothing else may be empty. */
	if (!v->s[0] && strcmp(f->name, "args") != 0)
		return bad(reterr, -EINVAL, f, "must not be empty");
	if (f->type == FT_NAME) {
		int r = policy_check_name(v->s, reterr);
		if (r < 0)
			return r;
	}
	if (f->type == FT_GRANTV && v->s[0] != '/')
		return bad(reterr, -EINVAL, f, "the path must be absolute");
	if (f->type == FT_PATH || f->type == FT_STR || f->type == FT_NAME)
		return set_string(field_ptr(p, f), v->s);
	char ***list = field_ptr(p, f);
	if (f->type != FT_STRV && strv_contains(*list, v->s))
		return 0;
	return strv_extend(list, v->s);
}

int schema_assign(struct sandlock_policy *p, const struct field *f, const struct fvalue *v,
		  struct sandlock_error **reterr)
{
	switch (f->type) {
	case FT_STR:
	case FT_PATH:
	case FT_NAME:
	case FT_PATHV:
	case FT_GRANTV:
	case FT_STRV:
		return assign_text(p, f, v, reterr);
	case FT_BOOL:
	case FT_NOBOOL:
		return assign_bool(field_ptr(p, f), f->type == FT_NOBOOL, v) < 0
			       ? want(reterr, f, "true or false")
			       : 0;
	case FT_OPT_U64:
	case FT_SIZE:
	case FT_NZ_U64:
		return assign_number(p, f, v, reterr);
	case FT_ACTION:
		return assign_action(p, f, v, reterr);
	case FT_ENV:
		return assign_env(p, f, v, reterr);
	case FT_PORTV:
	case FT_U32V:
		return assign_u32v(p, f, v, reterr);
	case FT_CPUSET:
		return assign_cpus(p, f, v, reterr);
	case FT_PROTV:
		return assign_protection(p, f, v, reterr);
	default:
		return assign_rule(p, f, v, reterr);
	}
}

void schema_clear(struct sandlock_policy *p, const struct field *f)
{
	void *slot = field_ptr(p, f);

	switch (f->type) {
	case FT_STR:
	case FT_PATH:
	case FT_NAME:
	case FT_TIME:
		free(*(char **)slot);
		*(char **)slot = NULL;
		break;
	case FT_BOOL:
	case FT_NOBOOL:
		*(int *)slot = 0;
		break;
	case FT_OPT_U64:
	case FT_SIZE:
		*(struct opt_u64 *)slot = (struct opt_u64){ 0 };
		break;
	case FT_NZ_U64:
		*(uint64_t *)slot = 0;
		break;
	case FT_ACTION:
		*(uint8_t *)slot = 0;
		break;
	case FT_PORTV:
	case FT_U32V:
		free(((struct opt_u32v *)slot)->v);
		*(struct opt_u32v *)slot = (struct opt_u32v){ 0 };
		break;
	case FT_CPUSET:
		p->has_cpu_cores = 0;
		break;
	case FT_PROTV:
		for (size_t i = 0; i < SANDLOCK_PROTECTION_COUNT; i++)
			if (p->protection[i] == (strcmp(f->key, "disable") == 0
							 ? SANDLOCK_PROTECTION_DISABLED
							 : SANDLOCK_PROTECTION_DEGRADED))
				p->protection[i] = SANDLOCK_PROTECTION_STRICT;
		break;
	case FT_NETV:
	case FT_NETDENYV:
		policy_net_clear(p, f->type == FT_NETDENYV);
		break;
	case FT_BINDV:
		*(char ***)slot = strv_free(*(char ***)slot);
		policy_bind_clear(p, f->offset == offsetof(struct sandlock_policy, net_deny_bind));
		break;
	default: /* the string lists */
		*(char ***)slot = strv_free(*(char ***)slot);
		break;
	}
}

int schema_is_set(const struct sandlock_policy *p, const struct field *f)
{
	const void *slot = field_ptr(p, f);

	switch (f->type) {
	case FT_STR:
	case FT_PATH:
	case FT_NAME:
	case FT_TIME:
		return *(char *const *)slot != NULL;
	case FT_BOOL:
	case FT_NOBOOL:
		return *(const int *)slot != 0;
	case FT_OPT_U64:
	case FT_SIZE:
		return ((const struct opt_u64 *)slot)->set;
	case FT_NZ_U64:
		return *(const uint64_t *)slot != 0;
	case FT_ACTION:
		return *(const uint8_t *)slot != 0;
	case FT_PORTV:
	case FT_U32V:
		return ((const struct opt_u32v *)slot)->set;
	case FT_CPUSET:
		return p->has_cpu_cores;
	case FT_PROTV:
		for (size_t i = 0; i < SANDLOCK_PROTECTION_COUNT; i++)
			if (p->protection[i] == (strcmp(f->key, "disable") == 0
							 ? SANDLOCK_PROTECTION_DISABLED
							 : SANDLOCK_PROTECTION_DEGRADED))
				return 1;
		return 0;
	default:
		return strv_length(*(char **const *)slot) > 0;
	}
}

void schema_free_all(struct sandlock_policy *p)
{
	for (size_t i = 0; i < schema_n_fields; i++)
		schema_clear(p, &schema_fields[i]);
}

/* A deep copy through the schema (the sandbox keeps one for `sandlock inspect`). */
static int copy_field(struct sandlock_policy *to, const struct sandlock_policy *from,
		      const struct field *f)
{
	const void *src = field_ptr(from, f);
	void *dst = field_ptr(to, f);

	switch (f->type) {
	case FT_STR:
	case FT_PATH:
	case FT_NAME:
	case FT_TIME:
		if (*(char *const *)src && !(*(char **)dst = strdup(*(char *const *)src)))
			return -ENOMEM;
		return 0;
	case FT_PORTV:
	case FT_U32V: {
		const struct opt_u32v *s = src;
		struct opt_u32v *d = dst;
		if (s->n && !(d->v = malloc(s->n * sizeof(uint32_t))))
			return -ENOMEM;
		if (s->n)
			memcpy(d->v, s->v, s->n * sizeof(uint32_t));
		d->n = s->n;
		return 0;
	}
	case FT_NETV:
	case FT_NETDENYV:
		if (*(char **const *)src && !(*(char ***)dst = strv_copy(*(char **const *)src)))
			return -ENOMEM;
		return policy_net_copy(to, from, f->type == FT_NETDENYV);
	case FT_BINDV:
		if (*(char **const *)src && !(*(char ***)dst = strv_copy(*(char **const *)src)))
			return -ENOMEM;
		return policy_bind_copy(
			to, from, f->offset == offsetof(struct sandlock_policy, net_deny_bind));
	case FT_PATHV:
	case FT_GRANTV:
	case FT_STRV:
	case FT_ENV:
	case FT_MOUNTV:
	case FT_HTTPV:
	case FT_CREDV:
	case FT_AUTHV:
		if (*(char **const *)src && !(*(char ***)dst = strv_copy(*(char **const *)src)))
			return -ENOMEM;
		return 0;
	default: /* plain values, copied with the struct */
		return 0;
	}
}

/* Forget (without freeing) what a field of @p points to: after a struct copy the pointers are
 * the original's. */
static void forget_pointers(struct sandlock_policy *p, const struct field *f)
{
	void *slot = field_ptr(p, f);

	switch (f->type) {
	case FT_BOOL:
	case FT_NOBOOL:
	case FT_OPT_U64:
	case FT_SIZE:
	case FT_NZ_U64:
	case FT_ACTION:
	case FT_CPUSET:
	case FT_PROTV:
		return; /* values, no memory */
	case FT_PORTV:
	case FT_U32V:
		((struct opt_u32v *)slot)->v = NULL;
		((struct opt_u32v *)slot)->n = 0;
		return;
	case FT_NETV:
		*(void **)slot = NULL;
		p->net.allow = NULL;
		p->net.n_allow = 0;
		return;
	case FT_NETDENYV:
		*(void **)slot = NULL;
		p->net.deny = NULL;
		p->net.n_deny = 0;
		return;
	case FT_BINDV:
		*(void **)slot = NULL;
		*(f->offset == offsetof(struct sandlock_policy, net_deny_bind) ? &p->bind.deny
									       : &p->bind.allow) =
			(struct port_set){ 0 };
		return;
	default:
		*(void **)slot = NULL;
		return;
	}
}

struct sandlock_policy *policy_copy(const struct sandlock_policy *p)
{
	struct sandlock_policy *c = policy_new();

	if (!c)
		return NULL;
	*c = *p;
	for (size_t i = 0; i < schema_n_fields; i++)
		forget_pointers(c, &schema_fields[i]);
	policy_fn_ref(c->policy_fn); /* shared, counted: released by policy_free */
	if (policy_labels_copy(c, p) < 0) {
		policy_free(c);
		return NULL;
	}
	for (size_t i = 0; i < schema_n_fields; i++)
		if (copy_field(c, p, &schema_fields[i]) < 0) {
			policy_free(c);
			return NULL;
		}
	return c;
}
