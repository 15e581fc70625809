/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rules-net: the outbound endpoint rules ("[scheme://]target[:ports]") and the bind port lists
 * of rules.h, with the containment matcher for literal targets. Parses and compares only: a
 * hostname stays a name here (the resolver pins it later), and nothing touches a socket.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "rules-internal.h"

static const struct {
	const char *name;
	uint32_t protos;
} net_schemes[] = {
	{ "tcp", NET_PROTO_TCP },
	{ "udp", NET_PROTO_UDP },
	{ "icmp", NET_PROTO_ICMP },
};

/* Consume "scheme://" at *@p, if any, into *@protos (TCP|UDP without one). */
static int parse_scheme(const char *s, const char **p, uint32_t *protos, char *err, size_t errlen)
{
	const char *sep = strstr(*p, "://");

	*protos = NET_PROTO_TCP | NET_PROTO_UDP;
	if (!sep)
		return 0;
	size_t n = (size_t)(sep - *p);
	for (size_t i = 0; i < ELEMENTSOF(net_schemes); i++) {
		if (strlen(net_schemes[i].name) == n &&
		    strncasecmp(*p, net_schemes[i].name, n) == 0) {
			*protos = net_schemes[i].protos;
			*p = sep + 3;
			return 0;
		}
	}
	return rules_err(err, errlen, -EINVAL,
			 "unknown scheme \"%.*s://\" in \"%s\" (tcp://, udp:// or icmp://)", Q(n),
			 *p, s);
}

/* Where the target and the port list are in @t (after the scheme). */
struct net_split {
	const char *host;
	size_t hlen;
	int bracketed;
	const char *ports; /* NULL: none given */
};

static int split_target(const char *s, const char *t, struct net_split *sp, char *err,
			size_t errlen)
{
	*sp = (struct net_split){ .host = t, .hlen = strlen(t) };
	if (t[0] == '[') {
		const char *close = strchr(t, ']');
		if (!close)
			return rules_err(err, errlen, -EINVAL, "unclosed '[' in \"%s\"", s);
		sp->host = t + 1;
		sp->hlen = (size_t)(close - t - 1);
		sp->bracketed = 1;
		if (close[1] == ':')
			sp->ports = close + 2;
		else if (close[1])
			return rules_err(err, errlen, -EINVAL,
					 "unexpected \"%s\" after ']' in \"%s\" (expected :ports)",
					 close + 1, s);
		return 0;
	}
	const char *colon = strchr(t, ':');
	/* Two colons or more: an unbracketed IPv6 literal, which takes no port list. */
	if (colon && !strchr(colon + 1, ':')) {
		sp->hlen = (size_t)(colon - t);
		sp->ports = colon + 1;
	}
	return 0;
}

static int parse_prefix(const char *s, const char *p, size_t n, int family, uint8_t *ret, char *err,
			size_t errlen)
{
	unsigned max = family == AF_INET ? 32 : 128, v = 0;

	if (n == 0)
		return rules_err(err, errlen, -EINVAL, "empty prefix length after '/' in \"%s\"",
				 s);
	for (size_t i = 0; i < n; i++) {
		if (!rules_is_digit(p[i]))
			return rules_err(err, errlen, -EINVAL,
					 "invalid prefix length \"%.*s\" in \"%s\"", Q(n), p, s);
		v = v * 10 + (unsigned)(p[i] - '0');
		if (v > max)
			return rules_err(err, errlen, -ERANGE,
					 "prefix length \"%.*s\" in \"%s\" is out of range (0-%u)",
					 Q(n), p, s, max);
	}
	*ret = (uint8_t)v;
	return 0;
}

/* An address or a CIDR: 0 and @r filled, 1 when @p is not an address (nothing written), or a
 * negative errno with the message written. */
static int parse_ip_target(const char *s, const char *p, size_t n, struct net_rule *r, char *err,
			   size_t errlen)
{
	const char *slash = memchr(p, '/', n);
	size_t alen = slash ? (size_t)(slash - p) : n;
	int family;
	uint8_t addr[16];

	if (rules_ip_parse(p, alen, &family, addr) < 0)
		return slash ? rules_err(err, errlen, -EINVAL,
					 "\"%.*s\" in \"%s\" is not an IP address (a CIDR is "
					 "ADDR/LEN)",
					 Q(alen), p, s)
			     : 1;
	uint8_t prefix = family == AF_INET ? 32 : 128;
	if (slash) {
		int k = parse_prefix(s, slash + 1, n - alen - 1, family, &prefix, err, errlen);
		if (k < 0)
			return k;
	}
	r->kind = NET_TARGET_IP;
	r->family = family;
	memcpy(r->addr, addr, sizeof(r->addr));
	r->prefix = prefix;
	return 0;
}

static int parse_target(const char *s, const struct net_split *sp, int mode, struct net_rule *r,
			char *err, size_t errlen)
{
	const char *why;

	if (sp->hlen == 0 && !sp->bracketed) {
		if (!sp->ports)
			return rules_err(err, errlen, -EINVAL, "missing target in \"%s\"", s);
		r->kind = NET_TARGET_ANY; /* ":443": any host, as "*:443" */
		return 0;
	}
	if (sp->hlen == 1 && sp->host[0] == '*' && !sp->bracketed) {
		r->kind = NET_TARGET_ANY;
		return 0;
	}
	int k = parse_ip_target(s, sp->host, sp->hlen, r, err, errlen);
	if (k <= 0) {
		if (k == 0 && sp->bracketed && r->family != AF_INET6)
			return rules_err(err, errlen, -EINVAL,
					 "brackets hold an IPv6 address, not \"%.*s\", in \"%s\"",
					 Q(sp->hlen), sp->host, s);
		return k;
	}
	if (sp->bracketed || memchr(sp->host, ':', sp->hlen))
		return rules_err(err, errlen, -EINVAL,
				 "\"%.*s\" in \"%s\" is not an IPv6 address (ports after an IPv6 "
				 "address need brackets: [ADDR]:PORTS)",
				 Q(sp->hlen), sp->host, s);
	if (mode == NET_RULE_DENY)
		return rules_err(
			err, errlen, -EINVAL,
			"a deny rule takes literal IPs or CIDRs, not hostnames: \"%.*s\" in \"%s\"",
			Q(sp->hlen), sp->host, s);
	if (rules_hostname_parse(sp->host, sp->hlen, r->host, &why) < 0)
		return rules_err(err, errlen, -EINVAL, "invalid hostname \"%.*s\" (%s) in \"%s\"",
				 Q(sp->hlen), sp->host, why, s);
	r->kind = NET_TARGET_HOST;
	return 0;
}

static int parse_net_ports(const char *s, const char *ports, struct net_rule *r, char *err,
			   size_t errlen)
{
	if (!ports || strcmp(ports, "*") == 0) {
		r->ports.all = 1;
		return 0;
	}
	int k = parse_ports(ports, &r->ports);
	if (k == -ENOMEM)
		return rules_err(err, errlen, k, "out of memory");
	if (k == -ERANGE)
		return rules_err(err, errlen, k,
				 "port list \"%s\" in \"%s\" is out of range (1-65535)", ports, s);
	if (k < 0)
		return rules_err(
			err, errlen, k,
			"invalid port list \"%s\" in \"%s\" (PORT, LO-HI, a comma-separated "
			"list of those, or *)",
			ports, s);
	for (size_t i = 0; i < r->ports.n; i++)
		if (r->ports.ranges[i].lo == 0)
			return rules_err(err, errlen, -ERANGE,
					 "port 0 in \"%s\": an outbound rule takes ports 1-65535",
					 s);
	return 0;
}

int net_rule_parse(const char *s, int mode, struct net_rule *ret, char *err, size_t errlen)
{
	struct net_rule r = { 0 };
	struct net_split sp;
	const char *p = s;
	int k;

	if (!s)
		return rules_err(err, errlen, -EINVAL, "missing network rule");
	for (const char *c = s; *c; c++)
		if ((unsigned char)*c <= ' ' || (unsigned char)*c >= 0x7f)
			return rules_err(
				err, errlen, -EINVAL,
				"network rule \"%s\" holds a space or a non-printable byte", s);
	k = parse_scheme(s, &p, &r.protos, err, errlen);
	if (k >= 0)
		k = split_target(s, p, &sp, err, errlen);
	if (k >= 0)
		k = parse_target(s, &sp, mode, &r, err, errlen);
	if (k >= 0 && sp.ports && r.protos == NET_PROTO_ICMP)
		k = rules_err(err, errlen, -EINVAL, "icmp:// takes no port: \"%s\"", s);
	if (k >= 0)
		k = parse_net_ports(s, sp.ports, &r, err, errlen);
	if (k < 0) {
		net_rule_done(&r);
		return k;
	}
	*ret = r;
	return 0;
}

void net_rule_done(struct net_rule *r)
{
	if (!r)
		return;
	port_set_done(&r->ports);
	*r = (struct net_rule){ 0 };
}

static const char *scheme_prefix(uint32_t protos)
{
	if (protos == (NET_PROTO_TCP | NET_PROTO_UDP))
		return "";
	for (size_t i = 0; i < ELEMENTSOF(net_schemes); i++)
		if (protos == net_schemes[i].protos)
			return net_schemes[i].name;
	return NULL;
}

static int format_target(struct rules_buf *b, const struct net_rule *r)
{
	switch (r->kind) {
	case NET_TARGET_ANY:
		rules_buf_printf(b, "*");
		return 0;
	case NET_TARGET_HOST:
		if (!r->host[0] || memchr(r->host, '\0', sizeof(r->host)) == NULL)
			return -EINVAL;
		rules_buf_printf(b, "%s", r->host);
		return 0;
	case NET_TARGET_IP:
		break;
	default:
		return -EINVAL;
	}
	unsigned full = r->family == AF_INET ? 32 : 128;
	if ((r->family != AF_INET && r->family != AF_INET6) || r->prefix > full)
		return -EINVAL;
	int brackets = r->family == AF_INET6 && !r->ports.all;
	rules_buf_printf(b, "%s", brackets ? "[" : "");
	rules_ip_format(b, r->family, r->addr);
	if (r->prefix != full)
		rules_buf_printf(b, "/%u", r->prefix);
	rules_buf_printf(b, "%s", brackets ? "]" : "");
	return 0;
}

int net_rule_format(const struct net_rule *r, char **ret)
{
	struct rules_buf b = { 0 };
	const char *scheme = scheme_prefix(r->protos);

	if (!scheme || (!r->ports.all && (r->ports.n == 0 || r->protos == NET_PROTO_ICMP)))
		return -EINVAL;
	if (*scheme)
		rules_buf_printf(&b, "%s://", scheme);
	int k = format_target(&b, r);
	if (k < 0) {
		free(b.s);
		return k;
	}
	if (!r->ports.all) {
		rules_buf_printf(&b, ":");
		rules_ports_format(&b, &r->ports);
	}
	return rules_buf_finish(&b, ret);
}

int net_rule_equal(const struct net_rule *a, const struct net_rule *b)
{
	if (a->protos != b->protos || a->kind != b->kind ||
	    !rules_ports_equal(&a->ports, &b->ports))
		return 0;
	if (a->kind == NET_TARGET_HOST)
		return strcmp(a->host, b->host) == 0;
	if (a->kind == NET_TARGET_IP)
		return a->family == b->family && a->prefix == b->prefix &&
		       memcmp(a->addr, b->addr, sizeof(a->addr)) == 0;
	return 1;
}

static int prefix_contains(const uint8_t *net, const uint8_t *a, unsigned prefix)
{
	unsigned full = prefix / 8, rest = prefix % 8;

	if (memcmp(net, a, full) != 0)
		return 0;
	if (rest == 0)
		return 1;
	uint8_t mask = (uint8_t)(0xff << (8 - rest));
	return ((net[full] ^ a[full]) & mask) == 0;
}

static int ports_contain(const struct port_set *set, uint16_t port)
{
	if (set->all)
		return 1;
	for (size_t i = 0; i < set->n; i++)
		if (port >= set->ranges[i].lo && port <= set->ranges[i].hi)
			return 1;
	return 0;
}

int net_rule_match(const struct net_rule *r, uint32_t proto, int family, const uint8_t *addr,
		   uint16_t port)
{
	uint8_t ra[16], qa[16] = { 0 };
	unsigned rp = r->prefix, qp = family == AF_INET ? 32 : 128;
	int rf = r->family, qf = family;

	if (proto != NET_PROTO_TCP && proto != NET_PROTO_UDP && proto != NET_PROTO_ICMP)
		return 0;
	if (!(r->protos & proto) || (family != AF_INET && family != AF_INET6) || !addr)
		return 0;
	if (proto != NET_PROTO_ICMP && !ports_contain(&r->ports, port))
		return 0;
	if (r->kind == NET_TARGET_ANY)
		return 1;
	if (r->kind != NET_TARGET_IP)
		return 0;
	memcpy(ra, r->addr, sizeof(ra));
	memcpy(qa, addr, family == AF_INET ? 4 : 16);
	rules_ip_unmap(&rf, ra, &rp);
	rules_ip_unmap(&qf, qa, &qp);
	if (rf != qf || rp > (rf == AF_INET ? 32u : 128u))
		return 0;
	return prefix_contains(ra, qa, rp);
}

int bind_ports_parse(const char *s, int mode, struct port_set *set, char *err, size_t errlen)
{
	size_t before = set->n;

	if (!s)
		return rules_err(err, errlen, -EINVAL, "missing port list");
	if (mode == NET_BIND_DENY && strchr(s, '*'))
		return rules_err(err, errlen, -EINVAL, "a deny list takes ports, not \"*\": \"%s\"",
				 s);
	int k = parse_ports(s, set);
	if (k == -ENOMEM)
		return rules_err(err, errlen, k, "out of memory");
	if (k == -ERANGE)
		return rules_err(err, errlen, k, "port out of range (0-65535) in \"%s\"", s);
	if (k < 0 && (set->all || strchr(s, '*')))
		return rules_err(err, errlen, k, "\"*\" cannot be mixed with ports (\"%s\")", s);
	if (k < 0)
		return rules_err(err, errlen, k,
				 "invalid port list \"%s\" (PORT, LO-HI, or a comma-separated "
				 "list of those)",
				 s);
	for (size_t i = before; mode == NET_BIND_DENY && i < set->n; i++) {
		if (set->ranges[i].lo == 0) {
			set->n = before;
			return rules_err(err, errlen, -ERANGE,
					 "port 0 in \"%s\": net_deny_bind takes ports 1-65535 (0 "
					 "only means something in net_allow_bind, as bind(0))",
					 s);
		}
	}
	return 0;
}

int net_rule_copy(const struct net_rule *r, struct net_rule *ret)
{
	struct net_rule c = *r;

	c.ports.ranges = NULL;
	if (r->ports.n) {
		c.ports.ranges = malloc(r->ports.n * sizeof(*c.ports.ranges));
		if (!c.ports.ranges)
			return -ENOMEM;
		memcpy(c.ports.ranges, r->ports.ranges, r->ports.n * sizeof(*c.ports.ranges));
	}
	*ret = c;
	return 0;
}

void net_rule_everything(struct net_rule *ret)
{
	*ret = (struct net_rule){ .protos = NET_PROTO_TCP | NET_PROTO_UDP,
				  .kind = NET_TARGET_ANY,
				  .ports = { .all = 1 } };
}

int net_rule_pinned(const struct net_rule *r, int family, const uint8_t *addr, struct net_rule *ret)
{
	struct net_rule c;

	if (net_rule_copy(r, &c) < 0)
		return -ENOMEM;
	c.kind = NET_TARGET_IP;
	c.family = family;
	memset(c.addr, 0, sizeof(c.addr));
	memcpy(c.addr, addr, family == AF_INET ? 4 : 16);
	c.prefix = family == AF_INET ? 32 : 128;
	*ret = c;
	return 0;
}

/* The rules of a list folded into what they ask of the sandbox. */
static void needs_add(const struct net_rule *rules, size_t n_rules, int mode, struct net_needs *n,
		      int *tcp_direct, int *udp_open, int *icmp_open)
{
	for (size_t i = 0; mode == NET_RULE_ALLOW && i < n_rules; i++) {
		const struct net_rule *r = &rules[i];
		int any = r->kind == NET_TARGET_ANY;
		n->sockets |= r->protos & (NET_PROTO_UDP | NET_PROTO_ICMP);
		if ((r->protos & NET_PROTO_TCP) && !any)
			*tcp_direct = 0;
		*udp_open |= (r->protos & NET_PROTO_UDP) && any && r->ports.all;
		*icmp_open |= (r->protos & NET_PROTO_ICMP) && any;
	}
}

void net_rules_needs_of(const struct net_rule *allow, size_t n_allow, const struct net_rule *deny,
			size_t n_deny, struct net_needs *ret)
{
	struct net_rule everything;
	struct net_needs n = { 0 };
	int tcp_direct = 1, udp_open = 0, icmp_open = 0;

	/* A deny list alone: everything else is allowed (TCP and UDP; ICMP needs icmp://). */
	if (n_deny && !n_allow) {
		net_rule_everything(&everything);
		allow = &everything;
		n_allow = 1;
	}
	needs_add(allow, n_allow, NET_RULE_ALLOW, &n, &tcp_direct, &udp_open, &icmp_open);
	/* A datagram socket whose destinations are restricted: Landlock knows nothing of UDP
	 * or ping sockets, so the supervisor checks every connect and send of one. */
	n.dgram_checked = ((n.sockets & NET_PROTO_UDP) && (!udp_open || n_deny)) ||
			  ((n.sockets & NET_PROTO_ICMP) && (!icmp_open || n_deny));
	n.onbehalf = n_deny || !tcp_direct || n.dgram_checked;
	*ret = n;
}

/* Parse the rules of @texts (NULL: none) into a new vector *@ret of *@ret_n. */
static int rules_parse_all(char *const *texts, int mode, struct net_rule **ret, size_t *ret_n)
{
	char err[128];
	size_t n = 0;

	while (texts && texts[n])
		n++;
	struct net_rule *v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (net_rule_parse(texts[i], mode, &v[i], err, sizeof(err)) < 0) {
			for (size_t k = 0; k < i; k++)
				net_rule_done(&v[k]);
			free(v);
			return -EINVAL;
		}
	*ret = v;
	*ret_n = n;
	return 0;
}

static void rules_free_all(struct net_rule *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		net_rule_done(&v[i]);
	free(v);
}

int net_rules_needs(char *const *allow, char *const *deny, struct net_needs *ret)
{
	struct net_rule *a = NULL, *d = NULL;
	size_t n_a = 0, n_d = 0;
	int r = rules_parse_all(allow, NET_RULE_ALLOW, &a, &n_a);

	if (r == 0 && (r = rules_parse_all(deny, NET_RULE_DENY, &d, &n_d)) < 0)
		rules_free_all(a, n_a);
	if (r < 0)
		return r;
	net_rules_needs_of(a, n_a, d, n_d, ret);
	rules_free_all(a, n_a);
	rules_free_all(d, n_d);
	return 0;
}

int bind_ports_expand(const char *s, uint16_t *ports, size_t n, char *err, size_t errlen)
{
	struct port_set set = { 0 };
	uint8_t seen[65536 / 8] = { 0 };
	size_t count = 0;

	int r = bind_ports_parse(s, NET_BIND_ALLOW, &set, err, errlen);
	if (r == 0 && set.all)
		r = -EINVAL, snprintf(err, errlen, "'*' is not a list of ports");
	for (size_t i = 0; r == 0 && i < set.n; i++)
		for (uint32_t p = set.ranges[i].lo; p <= set.ranges[i].hi; p++)
			seen[p / 8] |= (uint8_t)(1u << (p % 8));
	port_set_done(&set);
	if (r < 0)
		return r;
	for (uint32_t p = 0; p < 65536; p++)
		if (seen[p / 8] & (1u << (p % 8))) {
			if (count < n)
				ports[count] = (uint16_t)p;
			count++;
		}
	return (int)count;
}

int bind_ports_format(const struct port_set *set, char **ret)
{
	struct rules_buf b = { 0 };

	if (set->all && set->n)
		return -EINVAL;
	if (set->all)
		rules_buf_printf(&b, "*");
	else
		rules_ports_format(&b, set);
	return rules_buf_finish(&b, ret);
}
