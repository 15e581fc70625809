/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-plan-http: the HTTP proxy's section of the plan (plan-http.c): the intercepted ports, the
 * TCP reachability the rules generate (in plan.net.allow only, never in the policy's net_allow),
 * the names resolved into the synthetic /etc/hosts, the credentials loaded from env:, file: and
 * fd: (one trailing newline stripped) and every build error, one line each.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "plan/landlock.h"
#include "plan/plan.h"
#include "plan/traps.h"
#include "policy/policy.h"
#include "sandlock.h"
#include "strv.h"
#include "tap.h"

static char dir[64];

/* A policy from field/value pairs (NULL ends them), set as a user would. */
static struct sandlock_policy *make(const char *const *set)
{
	struct sandlock_policy *p = policy_new();

	if (p && sandlock_policy_set(p, "allow_degraded", "all", NULL) < 0)
		p = (policy_free(p), NULL);
	for (size_t i = 0; p && set[i]; i += 2) {
		struct sandlock_error *e = NULL;
		if (sandlock_policy_set(p, set[i], set[i + 1], &e) < 0) {
			diag("%s = %s: %s", set[i], set[i + 1], e ? e->message : "");
			p = (policy_free(p), NULL);
		}
		error_free(e);
	}
	return p;
}

#define SET(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* plan_build on @set: 0 with *@plan filled, or the error, its message in @msg. */
static int build(const char *const *set, struct plan *plan, char *msg, size_t len)
{
	struct sandlock_policy *p = make(set);
	struct sandlock_error *e = NULL;

	msg[0] = '\0';
	if (!p)
		return -EINVAL;
	int r = plan_build(p, (const char *const[]){ "true", NULL }, 0, plan, &e);
	if (r < 0)
		snprintf(msg, len, "%s", e ? e->message : "");
	/* The policy's net_allow holds the user's rules alone, never what was generated. */
	size_t user = 0;
	for (size_t i = 0; set[i]; i += 2)
		user += strcmp(set[i], "net_allow") == 0;
	if (r == 0 && (p->net.n_allow != user || strv_length(p->net_allow) != user)) {
		plan_done(plan);
		r = -EEXIST;
	}
	error_free(e);
	policy_free(p);
	return r;
}

static int reaches(const struct plan *plan, const char *ip, uint16_t port)
{
	uint8_t addr[16];
	int family = strchr(ip, ':') ? AF_INET6 : AF_INET;

	if (inet_pton(family, ip, addr) != 1)
		return 0;
	for (size_t i = 0; i < plan->net.n_allow; i++)
		if (net_rule_match(&plan->net.allow[i], NET_PROTO_TCP, family, addr, port))
			return 1;
	return 0;
}

static int udp_reaches(const struct plan *plan, const char *ip, uint16_t port)
{
	uint8_t addr[4];

	inet_pton(AF_INET, ip, addr);
	for (size_t i = 0; i < plan->net.n_allow; i++)
		if (net_rule_match(&plan->net.allow[i], NET_PROTO_UDP, AF_INET, addr, port))
			return 1;
	return 0;
}

static int intercepts(const struct plan *plan, uint16_t port)
{
	for (size_t i = 0; i < plan->http.n_ports; i++)
		if (plan->http.ports[i] == port)
			return 1;
	return 0;
}

static void test_ip_default_port(void)
{
	struct plan plan;
	char msg[512];

	int r = build(SET("http_allow", "GET 127.0.0.1/x"), &plan, msg, sizeof(msg));
	if (!ok(r == 0, "an IP rule builds")) {
		diag("  %d %s", r, msg);
		return;
	}
	ok(plan.http.active && plan.http.n_allow == 1 && plan.http.n_deny == 0, "  active");
	ok(plan.http.n_ports == 1 && intercepts(&plan, 80), "  port 80 intercepted (the default)");
	ok(reaches(&plan, "127.0.0.1", 80), "  127.0.0.1:80 reachable");
	ok(!reaches(&plan, "127.0.0.1", 81), "  127.0.0.1:81 not (control)");
	ok(!reaches(&plan, "127.0.0.2", 80), "  127.0.0.2:80 not (control)");
	ok(!udp_reaches(&plan, "127.0.0.1", 80), "  TCP only");
	ok(plan.net.onbehalf, "  connects on the child's behalf");
	ok(plan.net.hosts == NULL && plan.http.n_hosts == 0, "  no name: no /etc/hosts");
	ok(plan.http.ca == NULL && !intercepts(&plan, 443), "  no CA: 443 not intercepted");
	ok(plan.needs.http && !plan.needs.http_files, "  the trap set's needs: http, no files");
	plan_done(&plan);
	ok(plan.http.active == 0 && plan.http.allow == NULL, "plan_done clears the section");
}

static void test_ports(void)
{
	struct plan plan;
	char msg[512];

	int r = build(SET("http_ports", "8080", "http_ports", "80", "http_allow", "* 10.1.2.3/",
			  "http_allow", "GET [::1]:9000/api/*"),
		      &plan, msg, sizeof(msg));
	if (!ok(r == 0, "http_ports and an explicit port build")) {
		diag("  %d %s", r, msg);
		return;
	}
	ok(intercepts(&plan, 80) && intercepts(&plan, 8080) && intercepts(&plan, 9000) &&
		   plan.http.n_ports == 3,
	   "  80, 8080 and the rule's own 9000 intercepted");
	ok(reaches(&plan, "10.1.2.3", 80) && reaches(&plan, "10.1.2.3", 8080) &&
		   reaches(&plan, "10.1.2.3", 9000),
	   "  a rule without a port: every intercepted port");
	ok(reaches(&plan, "::1", 9000) && !reaches(&plan, "::1", 80) &&
		   !reaches(&plan, "::1", 8080),
	   "  a rule with a port: that port only");
	ok(!reaches(&plan, "10.1.2.3", 443), "  443 not (control)");
	plan_done(&plan);
}

static void test_wildcards(void)
{
	struct plan plan;
	char msg[512];

	int r = build(SET("http_allow", "GET */x", "http_deny", "* *:8081/admin"), &plan, msg,
		      sizeof(msg));
	if (!ok(r == 0, "wildcard hosts build")) {
		diag("  %d %s", r, msg);
		return;
	}
	ok(reaches(&plan, "192.0.2.7", 80) && reaches(&plan, "2001:db8::1", 80),
	   "  any IPv4 and IPv6 address on port 80");
	ok(reaches(&plan, "192.0.2.7", 8081), "  and on the deny rule's port, intercepted");
	ok(intercepts(&plan, 8081), "  8081 intercepted");
	ok(!reaches(&plan, "192.0.2.7", 22), "  port 22 not (control)");
	plan_done(&plan);
	r = build(SET("http_allow", "GET *.example.com/x"), &plan, msg, sizeof(msg));
	ok(r == 0 && reaches(&plan, "192.0.2.7", 80) && plan.http.n_hosts == 0 && !plan.net.hosts,
	   "*.example.com: any IP on port 80, nothing resolved");
	if (r == 0)
		plan_done(&plan);
	else
		diag("  %s", msg);
}

static void test_names(void)
{
	struct plan plan;
	char msg[512];

	int r = build(SET("http_allow", "GET localhost/", "net_allow", "tcp://127.0.0.1:22"), &plan,
		      msg, sizeof(msg));
	if (!ok(r == 0, "a name beside a net rule builds (the policy keeps its one rule)")) {
		diag("  %d %s", r, msg);
		return;
	}
	ok(plan.http.n_hosts == 1 && strcmp(plan.http.hosts[0].name, "localhost") == 0 &&
		   plan.http.hosts[0].n >= 1,
	   "  listed for the proxy's host check, with its addresses");
	ok(plan.net.hosts && strstr(plan.net.hosts, "\tlocalhost\n"), "  in the synthetic hosts");
	ok(reaches(&plan, "127.0.0.1", 80), "  its address reachable on port 80");
	ok(reaches(&plan, "127.0.0.1", 22), "  the policy's rule still there");
	ok(!reaches(&plan, "127.0.0.1", 23), "  port 23 not (control)");
	ok(plan.needs.http_files, "  the opens are trapped (/etc/hosts)");
	plan_done(&plan);
	r = build(SET("http_deny", "GET no-such-host.invalid/"), &plan, msg, sizeof(msg));
	ok(r < 0 && strncmp(msg, "http_deny: no-such-host.invalid: cannot resolve: ", 49) == 0,
	   "a name that does not resolve: an error naming it");
	if (r == 0)
		plan_done(&plan);
	else
		diag("  %s", msg);
}

static void test_https(void)
{
	struct plan plan;
	char msg[512], missing[128];

	snprintf(missing, sizeof(missing), "%s/no-bundle.pem", dir);
	int r = build(SET("http_allow", "GET 127.0.0.1/", "http_inject_ca", "/etc/hosts",
			  "http_inject_ca", missing, "http_ca_out", "/tmp/x.pem"),
		      &plan, msg, sizeof(msg));
	if (!ok(r == 0, "http_inject_ca alone builds (an ephemeral CA)")) {
		diag("  %d %s", r, msg);
		return;
	}
	struct stat st;
	ok(plan.http.ca && plan.http.ca_pem && plan.http.ca_pem_len > 0, "  a CA and its PEM");
	ok(intercepts(&plan, 443) && intercepts(&plan, 80), "  443 intercepted beside 80");
	ok(reaches(&plan, "127.0.0.1", 443), "  the rule reaches 443 too");
	ok(plan.http.n_inject == 2 && stat("/etc/hosts", &st) == 0 &&
		   plan.http.inject_ids[0].ino == st.st_ino &&
		   plan.http.inject_ids[0].dev == st.st_dev,
	   "  a bundle's identity");
	ok(plan.http.inject_ids[1].ino == 0 && plan.http.inject_ids[1].dev == 0,
	   "  a missing bundle: 0/0, not an error");
	ok(plan.http.ca_out && strcmp(plan.http.ca_out, "/tmp/x.pem") == 0, "  ca_out");
	ok(plan.needs.http_files, "  the opens are trapped (the bundles)");
	plan_done(&plan);

	r = build(SET("http_allow", "GET 127.0.0.1:443/"), &plan, msg, sizeof(msg));
	ok(r == 0 && reaches(&plan, "127.0.0.1", 443) && !intercepts(&plan, 443) &&
		   !reaches(&plan, "127.0.0.1", 80),
	   "no CA: an allow rule for :443 reaches it uninspected");
	if (r == 0)
		plan_done(&plan);
	r = build(SET("http_allow", "GET 127.0.0.1/", "http_deny", "GET 127.0.0.1:443/x"), &plan,
		  msg, sizeof(msg));
	is_str(msg,
	       "http_deny: \"GET 127.0.0.1:443/x\": port 443 is not intercepted without http_ca "
	       "or http_inject_ca, so the rule could not be enforced",
	       "no CA: a deny rule for :443 is refused");
	if (r == 0)
		plan_done(&plan);
	r = build(SET("http_allow", "GET 127.0.0.1/", "credentials", "k=env:PATH", "http_auth",
		      "GET 127.0.0.1:443/ bearer k"),
		  &plan, msg, sizeof(msg));
	is_str(msg,
	       "http_auth: \"GET 127.0.0.1:443/ bearer k\" needs http_ca or http_inject_ca to "
	       "reach an HTTPS host",
	       "no CA: injection into :443 is refused");
	if (r == 0)
		plan_done(&plan);
	r = build(SET("http_allow", "GET 127.0.0.1/", "http_ca", "/nonexistent/ca.pem", "http_key",
		      "/nonexistent/ca.key"),
		  &plan, msg, sizeof(msg));
	is_str(msg, "http_ca: /nonexistent/ca.pem: No such file or directory",
	       "an unreadable http_ca: one line naming it");
	if (r == 0)
		plan_done(&plan);
}

/* http_ca + http_key: a CA made with openssl, loaded at build. */
static void test_ca_files(void)
{
	struct plan plan;
	char msg[512], cmd[512], ca[128], key[128];

	snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
	snprintf(key, sizeof(key), "%s/ca.key", dir);
	snprintf(cmd, sizeof(cmd),
		 "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 "
		 "-subj /CN=test-plan-http -addext basicConstraints=critical,CA:TRUE "
		 "-keyout %s -out %s >/dev/null 2>&1",
		 key, ca);
	if (system(cmd) != 0) {
		ok(1, "# SKIP no openssl to make a CA");
		return;
	}
	int r = build(SET("http_allow", "GET 127.0.0.1/", "http_ca", ca, "http_key", key), &plan,
		      msg, sizeof(msg));
	ok(r == 0 && plan.http.ca && plan.http.ca_pem && intercepts(&plan, 443) &&
		   reaches(&plan, "127.0.0.1", 443),
	   "http_ca + http_key: loaded, 443 intercepted and reached");
	if (r == 0)
		plan_done(&plan);
	else
		diag("  %s", msg);
	/* The two swapped: one line, naming the file and its field. */
	r = build(SET("http_allow", "GET 127.0.0.1/", "http_ca", key, "http_key", ca), &plan, msg,
		  sizeof(msg));
	ok(r < 0 && strncmp(msg, "http_ca: ", 9) == 0 && strstr(msg, key) && !strchr(msg, '\n'),
	   "a key as http_ca: an error naming it");
	diag("  %s", msg);
	if (r == 0)
		plan_done(&plan);
}

static const struct http_secret *secret(const struct plan *plan, const char *name)
{
	for (size_t i = 0; i < plan->http.n_secrets; i++)
		if (strcmp(plan->http.secrets[i].name, name) == 0)
			return &plan->http.secrets[i];
	return NULL;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_credentials(void)
{
	struct plan plan;
	char msg[512], file[128], two[128], empty[128], spec_file[160], spec_two[160],
		spec_empty[160], spec_fd[32], missing[160];
	int fds[2];

	snprintf(file, sizeof(file), "%s/token", dir);
	snprintf(two, sizeof(two), "%s/two", dir);
	snprintf(empty, sizeof(empty), "%s/empty", dir);
	write_file(file, "file-secret\n");
	write_file(two, "two\n\n");
	write_file(empty, "\n");
	snprintf(spec_file, sizeof(spec_file), "f=file:%s", file);
	snprintf(spec_two, sizeof(spec_two), "t=file:%s", two);
	snprintf(spec_empty, sizeof(spec_empty), "e=file:%s", empty);
	if (!ok(pipe(fds) == 0 && write(fds[1], "fd-secret\n", 10) == 10, "a pipe"))
		return;
	close(fds[1]);
	struct stat pipe_st, after;
	fstat(fds[0], &pipe_st);
	snprintf(spec_fd, sizeof(spec_fd), "d=fd:%d", fds[0]);
	setenv("TEST_PLAN_HTTP_TOKEN", "env-secret", 1);
	int r = build(SET("http_allow", "GET 127.0.0.1/", "credentials",
			  "v=env:TEST_PLAN_HTTP_TOKEN", "credentials", spec_file, "credentials",
			  spec_two, "credentials", spec_fd, "http_auth", "GET 127.0.0.1/ bearer v"),
		      &plan, msg, sizeof(msg));
	if (!ok(r == 0, "credentials load")) {
		diag("  %d %s", r, msg);
		return;
	}
	const struct http_secret *s = secret(&plan, "v");
	ok(s && s->len == 10 && strcmp(s->value, "env-secret") == 0, "  env: the variable's value");
	s = secret(&plan, "f");
	ok(s && s->len == 11 && strcmp(s->value, "file-secret") == 0, "  file: newline stripped");
	s = secret(&plan, "t");
	ok(s && s->len == 4 && strcmp(s->value, "two\n") == 0, "  file: one newline only");
	s = secret(&plan, "d");
	ok(s && s->len == 9 && strcmp(s->value, "fd-secret") == 0, "  fd: read to its end");
	/* The number may be taken again by the plan's own descriptors: by identity. */
	ok(fstat(fds[0], &after) < 0 || after.st_ino != pipe_st.st_ino ||
		   after.st_dev != pipe_st.st_dev,
	   "  fd: closed once read");
	ok(plan.http.n_auth == 1 && strcmp(plan.http.auth[0].credential, "v") == 0, "  http_auth");
	plan_done(&plan);
	ok(plan.http.secrets == NULL && plan.http.n_secrets == 0, "plan_done releases them");

	unsetenv("TEST_PLAN_HTTP_UNSET");
	r = build(SET("http_allow", "GET 127.0.0.1/", "credentials", "k=env:TEST_PLAN_HTTP_UNSET"),
		  &plan, msg, sizeof(msg));
	is_str(msg, "credentials: k: environment variable TEST_PLAN_HTTP_UNSET is not set",
	       "env: unset");
	setenv("TEST_PLAN_HTTP_EMPTY", "", 1);
	r = build(SET("http_allow", "GET 127.0.0.1/", "credentials", "k=env:TEST_PLAN_HTTP_EMPTY"),
		  &plan, msg, sizeof(msg));
	is_str(msg, "credentials: k: environment variable TEST_PLAN_HTTP_EMPTY is not set",
	       "env: empty");
	r = build(SET("http_allow", "GET 127.0.0.1/", "credentials", spec_empty), &plan, msg,
		  sizeof(msg));
	is_str(msg, "credentials: e: the secret is empty", "file: a newline alone is empty");
	snprintf(missing, sizeof(missing), "m=file:%s/missing", dir);
	r = build(SET("http_allow", "GET 127.0.0.1/", "credentials", missing), &plan, msg,
		  sizeof(msg));
	char want[256];
	snprintf(want, sizeof(want), "credentials: m: %s/missing: No such file or directory", dir);
	is_str(msg, want, "file: unreadable, naming the path");
	r = build(SET("http_allow", "GET 127.0.0.1/", "credentials", "b=fd:987654"), &plan, msg,
		  sizeof(msg));
	is_str(msg, "credentials: b: fd 987654: Bad file descriptor", "fd: not open");
	r = build(SET("http_allow", "GET 127.0.0.1/", "credentials", "k=env:TEST_PLAN_HTTP_TOKEN",
		      "credentials", spec_file, "credentials", "k=env:PATH"),
		  &plan, msg, sizeof(msg));
	is_str(msg, "credentials: k: given twice", "a name given twice");
	r = build(SET("http_allow", "GET 127.0.0.1/", "http_auth", "GET 127.0.0.1/ bearer nope"),
		  &plan, msg, sizeof(msg));
	is_str(msg,
	       "http_auth: \"GET 127.0.0.1/ bearer nope\": no credential named nope (give it with "
	       "credentials, NAME=env:VAR, file:PATH or fd:N)",
	       "http_auth naming no credential");
	if (r == 0)
		plan_done(&plan);
}

/* Without HTTP rules nothing of this exists (control). */
static void test_inactive(void)
{
	struct plan plan;
	char msg[512];

	int r = build(SET("fs_readable", "/usr"), &plan, msg, sizeof(msg));
	ok(r == 0 && !plan.http.active && plan.http.n_ports == 0 && plan.net.n_allow == 0 &&
		   !plan.needs.http,
	   "no HTTP rule: no section, no reachability");
	if (r == 0)
		plan_done(&plan);
}

static void test_traps(void)
{
	struct sandlock_policy *ip = make(SET("http_allow", "GET 127.0.0.1/"));
	struct sandlock_policy *name = make(SET("http_allow", "GET localhost/"));
	struct sandlock_policy *none = make(SET("fs_readable", "/usr"));
	struct trap traps[DISPATCH_MAX_TRAPS];

	if (!ok(ip && name && none, "policies")) {
		policy_free(ip);
		policy_free(name);
		policy_free(none);
		return;
	}
	size_t base = dispatch_trap_set(none, traps, DISPATCH_MAX_TRAPS);
	size_t n = dispatch_trap_set(ip, traps, DISPATCH_MAX_TRAPS);
	int peer = 0, opens = 0;
	for (size_t i = 0; i < n; i++)
		peer += traps[i].nr == SYS_getpeername;
	is_int(n, base + 1, "an HTTP rule to an IP: one trap more");
	is_int(peer, 1, "  getpeername (the original destination)");
	n = dispatch_trap_set(name, traps, DISPATCH_MAX_TRAPS);
	for (size_t i = 0; i < n; i++)
		opens += traps[i].nr == SYS_openat || traps[i].nr == SYS_openat2 ||
			 traps[i].nr == SYS_open;
	is_int(opens, base == n ? 0 : (int)(n - base - 1), "a name: the opens too");
	ok(opens >= 2, "  openat and openat2 at least");
	policy_free(ip);
	policy_free(name);
	policy_free(none);
}

int main(void)
{
	if (landlock_abi() < 4)
		skip_all("Landlock ABI 4 (TCP connect rules)");
	if (!ok(tap_mkdtemp(dir, sizeof(dir), "test-plan-http") != NULL, "a scratch directory"))
		return done_testing();
	test_ip_default_port();
	test_ports();
	test_wildcards();
	test_names();
	test_https();
	test_ca_files();
	test_credentials();
	test_inactive();
	test_traps();
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	(void)!system(cmd);
	return done_testing();
}
