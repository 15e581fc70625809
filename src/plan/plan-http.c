/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plan-http: the HTTP ACL proxy's section of the plan (struct plan_http), built from the policy
 * when it has an http_allow or http_deny rule, before the sandbox starts, so that every mistake
 * is a build error: the rules parsed, the credentials loaded (env:, file:, fd:), the CA loaded
 * (http_ca + http_key) or generated (http_inject_ca alone), the intercepted ports, the rules'
 * host names resolved once (for the proxy's host check, and into the synthetic /etc/hosts), and
 * the TCP reachability the rules imply, merged into plan.net.allow only: the policy's net_allow
 * never holds it, so nothing shows it as one of the user's rules.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd-util.h"
#include "http/tls.h"
#include "plan-internal.h"
#include "plan.h"
#include "strv.h"

#define HTTP_DEFAULT_PORT 80
#define HTTPS_PORT 443
#define SECRET_MAX (1u << 20) /* a credential larger than this is not a credential */

static int rules_parse(char *const *texts, const char *field, struct http_rule **ret, size_t *ret_n,
		       struct sandlock_error **reterr)
{
	size_t n = strv_length((char **)texts);
	char err[512];

	if (!n)
		return 0;
	if (!(*ret = calloc(n, sizeof(**ret))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		/* Canonical already (schema): a failure here is the parser's, told as is. */
		int r = http_rule_parse(texts[i], &(*ret)[i], err, sizeof(err));
		if (r < 0)
			return error_set(reterr, r, "%s: %s", field, err);
		*ret_n = i + 1;
	}
	return 0;
}

static int auth_parse(char *const *texts, struct plan_http *h, struct sandlock_error **reterr)
{
	size_t n = strv_length((char **)texts);
	char err[512];

	if (!n)
		return 0;
	if (!(h->auth = calloc(n, sizeof(*h->auth))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int r = http_auth_parse(texts[i], &h->auth[i], err, sizeof(err));
		if (r < 0)
			return error_set(reterr, r, "http_auth: %s", err);
		h->n_auth = i + 1;
	}
	return 0;
}

/* Read @fd to its end into *@ret (NUL-terminated, *@len bytes), at most SECRET_MAX bytes. Every
 * buffer given up on the way is wiped: a secret leaves no copy in freed memory. */
static int read_all(int fd, char **ret, size_t *len)
{
	size_t size = 256, n = 0;
	char *buf = malloc(size);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (n + 1 == size) {
			char *grown = size >= SECRET_MAX + 1 ? NULL : malloc(size * 2);
			if (!grown) {
				explicit_bzero(buf, n);
				free(buf);
				return size >= SECRET_MAX + 1 ? -EFBIG : -ENOMEM;
			}
			memcpy(grown, buf, n);
			explicit_bzero(buf, n);
			free(buf);
			buf = grown;
			size *= 2;
		}
		ssize_t k = read(fd, buf + n, size - n - 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int e = negative_errno();
			explicit_bzero(buf, n);
			free(buf);
			return e;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	buf[n] = '\0';
	*ret = buf;
	*len = n;
	return 0;
}

static void secret_wipe(struct http_secret *s)
{
	if (s->value) {
		explicit_bzero(s->value, s->len);
		free(s->value);
	}
	free(s->name);
	*s = (struct http_secret){ 0 };
}

/* The secret of @c, from the caller's environment, a file or a descriptor (read to its end,
 * then closed: it was handed over for this). */
static int secret_load(const struct credential_spec *c, struct http_secret *s,
		       struct sandlock_error **reterr)
{
	int r = 0;

	if (!(s->name = strdup(c->name)))
		return -ENOMEM;
	if (c->source == CRED_SOURCE_ENV) {
		const char *v = getenv(c->ref);
		if (!v || !*v)
			return error_set(reterr, -ENOENT,
					 "credentials: %s: environment variable %s is not set",
					 c->name, c->ref);
		s->len = strlen(v);
		if (!(s->value = strdup(v)))
			return -ENOMEM;
		return 0;
	}
	if (c->source == CRED_SOURCE_FILE) {
		_cleanup_close_ int fd = open(c->ref, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		r = fd < 0 ? negative_errno() : read_all(fd, &s->value, &s->len);
		if (r < 0)
			return error_set(reterr, r, "credentials: %s: %s: %s", c->name, c->ref,
					 r == -EFBIG ? "larger than 1 MiB" : strerror(-r));
	} else {
		if (fcntl(c->fd, F_GETFD) < 0)
			return error_set(reterr, -EBADF, "credentials: %s: fd %d: %s", c->name,
					 c->fd, strerror(errno));
		r = read_all(c->fd, &s->value, &s->len);
		close(c->fd);
		if (r < 0)
			return error_set(reterr, r, "credentials: %s: fd %d: %s", c->name, c->fd,
					 r == -EFBIG ? "larger than 1 MiB" : strerror(-r));
	}
	/* A file or a pipe ends with the newline echo or an editor put there. */
	if (s->len && s->value[s->len - 1] == '\n')
		s->value[--s->len] = '\0';
	return 0;
}

static int credentials_load(const struct sandlock_policy *p, struct plan_http *h,
			    struct sandlock_error **reterr)
{
	size_t n = strv_length(p->credentials);
	char err[512];

	if (!n)
		return 0;
	if (!(h->secrets = calloc(n, sizeof(*h->secrets))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct credential_spec c;
		int r = credential_spec_parse(p->credentials[i], &c, err, sizeof(err));
		if (r < 0)
			return error_set(reterr, r, "credentials: %s", err);
		for (size_t j = 0; j < h->n_secrets && r == 0; j++)
			if (strcmp(h->secrets[j].name, c.name) == 0)
				r = error_set(reterr, -EINVAL, "credentials: %s: given twice",
					      c.name);
		if (r == 0) {
			h->n_secrets = i + 1; /* what it holds is freed with the rest */
			r = secret_load(&c, &h->secrets[i], reterr);
		}
		if (r == 0 && h->secrets[i].len == 0)
			r = error_set(reterr, -EINVAL, "credentials: %s: the secret is empty",
				      c.name);
		credential_spec_done(&c);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Every http_auth names a loaded credential; one for an HTTPS host needs a CA to be applied. */
static int auth_check(const struct plan_http *h, struct sandlock_error **reterr)
{
	for (size_t i = 0; i < h->n_auth; i++) {
		const struct http_auth *a = &h->auth[i];
		_cleanup_free_ char *text = NULL;
		int found = 0;
		if (http_auth_format(a, &text) < 0)
			return -ENOMEM;
		for (size_t j = 0; j < h->n_secrets && !found; j++)
			found = strcmp(h->secrets[j].name, a->credential) == 0;
		if (!found)
			return error_set(reterr, -EINVAL,
					 "http_auth: \"%s\": no credential named %s (give it with "
					 "credentials, NAME=env:VAR, file:PATH or fd:N)",
					 text, a->credential);
		if (a->rule.port == HTTPS_PORT && !h->ca)
			return error_set(
				reterr, -EINVAL,
				"http_auth: \"%s\" needs http_ca or http_inject_ca to reach "
				"an HTTPS host",
				text);
	}
	return 0;
}

/* The CA: http_ca + http_key, or one made now for http_inject_ca; and its certificate. */
static int ca_setup(const struct sandlock_policy *p, struct plan_http *h,
		    struct sandlock_error **reterr)
{
	const char *field = "http_inject_ca";
	char err[512] = "";
	int r;

	if (p->http_ca && p->http_key) {
		r = tls_ca_load(p->http_ca, p->http_key, &h->ca, err, sizeof(err));
		/* The message starts with the file it is about. */
		field = strncmp(err, p->http_key, strlen(p->http_key)) == 0 ? "http_key"
									    : "http_ca";
	} else if (p->http_inject_ca && p->http_inject_ca[0]) {
		r = tls_ca_generate(&h->ca, err, sizeof(err));
	} else {
		return 0;
	}
	if (r < 0)
		return error_set(reterr, r, "%s: %s", field, err[0] ? err : strerror(-r));
	r = tls_ca_pem(h->ca, &h->ca_pem, &h->ca_pem_len);
	return r < 0 ? error_set(reterr, r, "http_ca: %s", strerror(-r)) : 0;
}

static int port_add(struct plan_http *h, uint16_t port)
{
	for (size_t i = 0; i < h->n_ports; i++)
		if (h->ports[i] == port)
			return 0;
	uint16_t *v = realloc(h->ports, (h->n_ports + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	v[h->n_ports++] = port;
	h->ports = v;
	return 0;
}

/* The intercepted ports: http_ports (default 80), 443 with a CA, and the explicit port of every
 * rule, whose methods and paths can only be judged if its connections reach the proxy. Port
 * 443 without a CA is the exception the reference makes: an allow rule for it permits TLS to
 * its host uninspected; a deny rule for it could not be enforced, so it is refused. */
static int ports_setup(const struct sandlock_policy *p, struct plan_http *h,
		       struct sandlock_error **reterr)
{
	int r = 0;

	for (size_t i = 0; r == 0 && i < p->http_ports.n; i++)
		r = port_add(h, (uint16_t)p->http_ports.v[i]);
	if (r == 0 && !h->n_ports)
		r = port_add(h, HTTP_DEFAULT_PORT);
	if (r == 0 && h->ca)
		r = port_add(h, HTTPS_PORT);
	for (size_t i = 0; r == 0 && i < h->n_deny; i++) {
		_cleanup_free_ char *text = NULL;
		if (h->deny[i].port == HTTPS_PORT && !h->ca)
			return http_rule_format(&h->deny[i], &text) < 0
				       ? -ENOMEM
				       : error_set(reterr, -EINVAL,
						   "http_deny: \"%s\": port 443 is not intercepted "
						   "without http_ca or http_inject_ca, so the rule "
						   "could not be enforced",
						   text);
		if (h->deny[i].port)
			r = port_add(h, h->deny[i].port);
	}
	for (size_t i = 0; r == 0 && i < h->n_allow; i++)
		if (h->allow[i].port && (h->allow[i].port != HTTPS_PORT || h->ca))
			r = port_add(h, h->allow[i].port);
	return r;
}

static struct http_host_addrs *host_find(const struct plan_http *h, const char *name)
{
	for (size_t i = 0; i < h->n_hosts; i++)
		if (strcmp(h->hosts[i].name, name) == 0)
			return &h->hosts[i];
	return NULL;
}

static int host_addr_add(struct http_host_addrs *e, int family, const void *ip)
{
	size_t n = family == AF_INET ? 4 : 16;

	for (size_t i = 0; i < e->n; i++)
		if (e->family[i] == family && memcmp(e->addr[i], ip, n) == 0)
			return 0;
	int *f = realloc(e->family, (e->n + 1) * sizeof(*f));
	if (!f)
		return -ENOMEM;
	e->family = f;
	uint8_t(*a)[16] = realloc(e->addr, (e->n + 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	e->addr = a;
	memset(a[e->n], 0, sizeof(a[e->n]));
	memcpy(a[e->n], ip, n);
	f[e->n++] = family;
	return 0;
}

/* Resolve @name once, now (as net_allow's hosts are): its addresses for the proxy's host check,
 * and a line per address in the synthetic /etc/hosts. */
static int host_resolve(const char *field, const char *name, struct plan *plan,
			struct sandlock_error **reterr)
{
	struct plan_http *h = &plan->http;
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;

	if (host_find(h, name))
		return 0;
	int k = getaddrinfo(name, NULL, &hints, &res);
	if (k != 0)
		return error_set(reterr, -EHOSTUNREACH, "%s: %s: cannot resolve: %s", field, name,
				 k == EAI_SYSTEM ? strerror(errno) : gai_strerror(k));
	struct http_host_addrs *v = realloc(h->hosts, (h->n_hosts + 1) * sizeof(*v));
	if (!v) {
		freeaddrinfo(res);
		return -ENOMEM;
	}
	h->hosts = v;
	struct http_host_addrs *e = &v[h->n_hosts++];
	*e = (struct http_host_addrs){ .name = strdup(name) };
	k = e->name ? 0 : -ENOMEM;
	for (struct addrinfo *a = res; a && k == 0; a = a->ai_next) {
		const void *ip =
			a->ai_family == AF_INET
				? (const void *)&((struct sockaddr_in *)a->ai_addr)->sin_addr
				: (const void *)&((struct sockaddr_in6 *)a->ai_addr)->sin6_addr;
		char text[INET6_ADDRSTRLEN], entry[INET6_ADDRSTRLEN + NET_HOST_MAX + 4];
		if ((a->ai_family != AF_INET && a->ai_family != AF_INET6) ||
		    !inet_ntop(a->ai_family, ip, text, sizeof(text)))
			continue;
		snprintf(entry, sizeof(entry), "%s\t%s\n", text, name);
		k = host_addr_add(e, a->ai_family, ip);
		if (k == 0)
			k = plan_hosts_append(&plan->net.hosts, entry);
	}
	freeaddrinfo(res);
	if (k < 0)
		return k;
	return e->n ? 0
		    : error_set(reterr, -EHOSTUNREACH, "%s: %s: no IPv4 or IPv6 address", field,
				name);
}

/* One generated TCP allow rule, "tcp://TARGET:PORTS", into plan.net.allow (once). */
static int reach_add(struct plan_net *net, const char *target, const char *ports)
{
	_cleanup_free_ char *text = NULL;
	struct net_rule r;

	if (asprintf(&text, "tcp://%s:%s", target, ports) < 0)
		return -ENOMEM;
	int k = net_rule_parse(text, NET_RULE_ALLOW, &r, NULL, 0);
	if (k < 0)
		return k == -ENOMEM ? k : -EINVAL; /* built here from parsed parts: never */
	for (size_t i = 0; i < net->n_allow; i++)
		if (net_rule_equal(&net->allow[i], &r)) {
			net_rule_done(&r);
			return 0;
		}
	return plan_net_rules_push(&net->allow, &net->n_allow, &r);
}

static int reach_ip(struct plan_net *net, int family, const uint8_t *addr, const char *ports)
{
	char text[INET6_ADDRSTRLEN], target[INET6_ADDRSTRLEN + 2];

	if (!inet_ntop(family, addr, text, sizeof(text)))
		return -EINVAL;
	snprintf(target, sizeof(target), family == AF_INET6 ? "[%s]" : "%s", text);
	return reach_add(net, target, ports);
}

/* The reachability of one rule: its host (each address of a name, its IP, or any IP for "*" and
 * "*.example.com") on its port, else on every intercepted port (@all). */
static int rule_reach(const char *field, const struct http_rule *rule, const char *all,
		      struct plan *plan, struct sandlock_error **reterr)
{
	char one[8];
	const char *ports = all;

	if (rule->port) {
		snprintf(one, sizeof(one), "%u", rule->port);
		ports = one;
	}
	if (rule->host_kind == HTTP_HOST_IP)
		return reach_ip(&plan->net, rule->family, rule->addr, ports);
	if (rule->host_kind != HTTP_HOST_NAME)
		return reach_add(&plan->net, "", ports);
	int r = host_resolve(field, rule->host, plan, reterr);
	const struct http_host_addrs *e = r < 0 ? NULL : host_find(&plan->http, rule->host);
	for (size_t i = 0; e && r == 0 && i < e->n; i++)
		r = reach_ip(&plan->net, e->family[i], e->addr[i], ports);
	return r;
}

static int reach_setup(struct plan *plan, struct sandlock_error **reterr)
{
	struct plan_http *h = &plan->http;
	_cleanup_free_ char *all = NULL;

	for (size_t i = 0; i < h->n_ports; i++) {
		char *grown = NULL;
		if (asprintf(&grown, "%s%s%u", all ? all : "", all ? "," : "", h->ports[i]) < 0)
			return -ENOMEM;
		free(all);
		all = grown;
	}
	int r = 0;
	for (size_t i = 0; r == 0 && i < h->n_allow; i++)
		r = rule_reach("http_allow", &h->allow[i], all, plan, reterr);
	for (size_t i = 0; r == 0 && i < h->n_deny; i++)
		r = rule_reach("http_deny", &h->deny[i], all, plan, reterr);
	return r;
}

/* The trust bundles named by http_inject_ca, with their identities now (0/0: missing, which is
 * not an error: a bundle may not exist on every host). */
static int inject_setup(const struct sandlock_policy *p, struct plan_http *h)
{
	size_t n = strv_length(p->http_inject_ca);

	if (!n)
		return 0;
	if (!(h->inject_paths = strv_copy(p->http_inject_ca)) ||
	    !(h->inject_ids = calloc(n, sizeof(*h->inject_ids))))
		return -ENOMEM;
	h->n_inject = n;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (stat(h->inject_paths[i], &st) == 0)
			h->inject_ids[i] = (struct file_id){ .dev = st.st_dev, .ino = st.st_ino };
	}
	return 0;
}

int plan_http_build(const struct sandlock_policy *p, struct plan *plan,
		    struct sandlock_error **reterr)
{
	struct plan_http *h = &plan->http;

	h->active = 1;
	int r = rules_parse(p->http_allow, "http_allow", &h->allow, &h->n_allow, reterr);
	if (r == 0)
		r = rules_parse(p->http_deny, "http_deny", &h->deny, &h->n_deny, reterr);
	if (r == 0)
		r = auth_parse(p->http_auth, h, reterr);
	if (r == 0)
		r = ca_setup(p, h, reterr);
	if (r == 0)
		r = ports_setup(p, h, reterr);
	if (r == 0)
		r = credentials_load(p, h, reterr);
	if (r == 0)
		r = auth_check(h, reterr);
	if (r == 0)
		r = reach_setup(plan, reterr);
	if (r == 0)
		r = inject_setup(p, h);
	if (r == 0 && p->http_ca_out && !(h->ca_out = strdup(p->http_ca_out)))
		r = -ENOMEM;
	return r == -ENOMEM ? error_set(reterr, r, "out of memory") : r;
}

void plan_http_done(struct plan_http *h)
{
	for (size_t i = 0; i < h->n_allow; i++)
		http_rule_done(&h->allow[i]);
	for (size_t i = 0; i < h->n_deny; i++)
		http_rule_done(&h->deny[i]);
	for (size_t i = 0; i < h->n_auth; i++)
		http_auth_done(&h->auth[i]);
	for (size_t i = 0; i < h->n_secrets; i++)
		secret_wipe(&h->secrets[i]);
	for (size_t i = 0; i < h->n_hosts; i++) {
		free(h->hosts[i].name);
		free(h->hosts[i].family);
		free(h->hosts[i].addr);
	}
	free(h->allow);
	free(h->deny);
	free(h->auth);
	free(h->secrets);
	free(h->hosts);
	free(h->ports);
	if (h->ca)
		tls_ca_free(h->ca);
	free(h->ca_pem);
	strv_free(h->inject_paths);
	free(h->inject_ids);
	free((char *)h->ca_out); /* a copy: the policy may go before the plan */
	*h = (struct plan_http){ 0 };
}
