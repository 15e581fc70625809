/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-sdk-api: what the SDKs need of the library beyond spawning: descriptors passed to the
 * command (pass_fds, renumbered from 3 or not), the port-list parser (parse_ports), and the profile
 * directory. Each behaviour has a control.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandlock.h"
#include "spawn-helpers.h"
#include "tap.h"

/* Run `sh -c SCRIPT` with @pass (may be NULL) and return its stdout, or NULL. @flags:
 * SANDLOCK_SPAWN_PARKED runs it through the fork launch (parked, then started). */
static char *run_sh_flags(sandlock_policy_t *p, const char *script, const int32_t *pass, uint32_t n,
			  uint32_t flags, int *ret_r)
{
	sandlock_spawn_opts_t o = { .size = sizeof(o),
				    .flags = flags,
				    .stdout_mode = SANDLOCK_STDIO_PIPE,
				    .stderr_mode = SANDLOCK_STDIO_PIPE };
	sandlock_sandbox_t *sb = NULL;
	sandlock_error_t *e = NULL;
	size_t len = 0;

	o.pass_fds = pass;
	o.n_pass_fds = n;
	*ret_r = sandlock_spawn(p, (const char *const[]){ "/bin/sh", "-c", script, NULL }, &o, &sb,
				&e);
	if (*ret_r < 0) {
		diag("spawn: %s", e ? sandlock_error_message(e) : strerror(-*ret_r));
		sandlock_error_free(e);
		return NULL;
	}
	if ((flags & SANDLOCK_SPAWN_PARKED) && (*ret_r = sandlock_sandbox_start(sb, NULL)) < 0) {
		sandlock_sandbox_free(sb);
		return NULL;
	}
	sandlock_sandbox_wait(sb, 10000);
	const uint8_t *out = sandlock_sandbox_stdout(sb, &len);
	char *s = strndup(out ? (const char *)out : "", len);
	sandlock_sandbox_free(sb);
	return s;
}

static char *run_sh(sandlock_policy_t *p, const char *script, const int32_t *pass, uint32_t n,
		    int *ret_r)
{
	return run_sh_flags(p, script, pass, n, 0, ret_r);
}

static void test_pass_fds(void)
{
	sandlock_policy_t *p = system_policy();
	int pipefd[2], r;

	if (!ok(pipe2(pipefd, O_CLOEXEC) == 0 && write(pipefd[1], "secret-from-host\n", 17) == 17,
		"a pipe holding a line"))
		return;
	close(pipefd[1]);
	char script[128];
	snprintf(script, sizeof(script), "read line <&%d && echo \"got $line\"", pipefd[0]);

	char *out = run_sh(p, script, NULL, 0, &r);
	ok(r == 0 && out && !strstr(out, "got secret"),
	   "without pass_fds, a host descriptor does not reach the command (control)");
	free(out);

	int32_t pass[] = { pipefd[0] };
	out = run_sh(p, script, pass, 1, &r);
	is_str(out, "got secret-from-host\n", "with pass_fds, the command reads the pipe at fd %d",
	       pipefd[0]);
	free(out);
	ok(fcntl(pipefd[0], F_GETFD) == FD_CLOEXEC, "the caller's descriptor keeps FD_CLOEXEC");

	/* Another descriptor of the host is still closed when one is passed. */
	int other = open("/dev/null", O_RDONLY | O_CLOEXEC);
	snprintf(script, sizeof(script), "[ -e /proc/self/fd/%d ] && echo open || echo closed",
		 other);
	out = run_sh(p, script, pass, 1, &r);
	is_str(out, "closed\n", "a descriptor not passed is closed before exec");
	free(out);
	int32_t both[] = { pipefd[0], other };
	out = run_sh(p, script, both, 2, &r);
	is_str(out, "open\n", "the same descriptor, passed, is open (control)");
	free(out);
	/* The fork launch (parked, then started) closes and keeps the same descriptors. */
	int32_t just_other[] = { other };
	out = run_sh_flags(p, script, just_other, 1, SANDLOCK_SPAWN_PARKED, &r);
	is_str(out, "open\n", "parked launch: a passed descriptor is open");
	free(out);
	out = run_sh_flags(p, script, NULL, 0, SANDLOCK_SPAWN_PARKED, &r);
	is_str(out, "closed\n", "parked launch: without pass_fds it is closed (control)");
	free(out);

	int32_t low[] = { 1 }, dup[] = { other, other }, bad[] = { 9999 };
	run_sh(p, "true", low, 1, &r);
	is_int(r, -EBADF, "pass_fds: a descriptor below 3 is -EBADF");
	run_sh(p, "true", bad, 1, &r);
	is_int(r, -EBADF, "pass_fds: a closed descriptor is -EBADF");
	run_sh(p, "true", dup, 2, &r);
	is_int(r, -EINVAL, "pass_fds: a descriptor given twice is -EINVAL");
	run_sh(p, "true", pass, SANDLOCK_PASS_FDS_MAX + 1, &r);
	is_int(r, -EINVAL, "pass_fds: more than SANDLOCK_PASS_FDS_MAX is -EINVAL");
	close(other);
	close(pipefd[0]);
	sandlock_policy_free(p);
}

/* A close-on-exec pipe holding @text, its read end at @at or above; -1 on failure. */
static int pipe_with(const char *text, int at)
{
	int fds[2];

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	ssize_t n = write(fds[1], text, strlen(text));
	close(fds[1]);
	int fd = fcntl(fds[0], F_DUPFD_CLOEXEC, at);
	close(fds[0]);
	return n == (ssize_t)strlen(text) ? fd : -1;
}

/* SANDLOCK_SPAWN_FDS_FROM_3: pass_fds[i] is the command's descriptor 3 + i, whatever its
 * number here, on both launches; the error pipe still reports a failed exec. */
static void test_fds_from_3(void)
{
	sandlock_policy_t *p = system_policy();
	const char *script = "read a <&3; read b <&4; echo \"$a$b\"; [ -e /dev/fd/5 ] || echo ok";
	int a = pipe_with("A\n", 40), b = pipe_with("B\n", 50), r;
	uint32_t flag = SANDLOCK_SPAWN_FDS_FROM_3;

	if (!ok(a >= 40 && b >= 50, "two pipes at %d and %d", a, b))
		return;
	int32_t ab[] = { a, b };
	char *out = run_sh_flags(p, script, ab, 2, flag, &r);
	is_str(out, "AB\nok\n", "pass_fds {%d, %d} are the command's 3 and 4, nothing at 5", a, b);
	free(out);
	ok(fcntl(a, F_GETFD) == FD_CLOEXEC, "the caller's descriptors stay as they were");
	close(a);
	close(b);

	a = pipe_with("A\n", 40);
	b = pipe_with("B\n", 50);
	int32_t ba[] = { b, a };
	out = run_sh_flags(p, script, ba, 2, flag | SANDLOCK_SPAWN_PARKED, &r);
	is_str(out, "BA\nok\n", "in their order, on the parked launch too");
	free(out);

	close(a);
	close(b);
	/* The lowest free numbers: a source on another's target (3 -> 4, 4 -> 3). */
	a = pipe_with("A\n", 3);
	b = pipe_with("B\n", 3);
	int32_t low_ba[] = { b, a };
	out = run_sh_flags(p, script, low_ba, 2, flag, &r);
	is_str(out, "BA\nok\n", "{%d, %d}: sources among the targets' own numbers", b, a);
	free(out);
	close(a);
	close(b);

	a = pipe_with("A\n", 40);
	b = pipe_with("B\n", 50);
	out = run_sh_flags(p, "read a <&3 && echo \"$a\" || echo none", ab, 2, 0, &r);
	is_str(out, "none\n", "without the flag, 3 is not the first of them (control)");
	free(out);

	sandlock_spawn_opts_t o = {
		.size = sizeof(o), .flags = flag, .pass_fds = ab, .n_pass_fds = 2
	};
	sandlock_sandbox_t *sb = NULL;
	sandlock_error_t *e = NULL;
	r = sandlock_spawn(p, (const char *const[]){ "/nonexistent/cmd", NULL }, &o, &sb, &e);
	is_int(r, -ENOENT, "a failed exec after the renumbering is still reported");
	is_str(e ? sandlock_error_step(e) : NULL, "execve", "  at its step");
	sandlock_error_free(e);
	e = NULL;
	o.flags = 1u << 31;
	r = sandlock_spawn(p, (const char *const[]){ "/bin/true", NULL }, &o, &sb, &e);
	is_int(r, -E2BIG, "an unknown spawn flag is -E2BIG, never ignored");
	is_str(e ? sandlock_error_message(e) : NULL,
	       "sandlock_spawn: flags 0x80000000 unknown to this library", "  saying which");
	sandlock_error_free(e);
	close(a);
	close(b);
	sandlock_policy_free(p);
}

static void test_parse_ports(void)
{
	uint16_t ports[16];
	sandlock_error_t *e = NULL;

	int n = sandlock_ports_parse("443, 80,8000-8005", ports, 16, NULL);
	is_int(n, 8, "parse_ports: 8 ports");
	ok(n == 8 && ports[0] == 80 && ports[1] == 443 && ports[2] == 8000 && ports[7] == 8005,
	   "  sorted: 80 443 8000..8005");
	is_int(sandlock_ports_parse("0", ports, 16, NULL), 1, "parse_ports: 0 is a port");
	is_int(sandlock_ports_parse("80,80", ports, 16, NULL), 1, "parse_ports: duplicates merge");
	is_int(sandlock_ports_parse("0-65535", NULL, 0, NULL), 65536,
	       "parse_ports: the count without a buffer");
	is_int(sandlock_ports_parse("*", ports, 16, &e), -EINVAL, "parse_ports: '*' is -EINVAL");
	is_str(e ? sandlock_error_message(e) : NULL, "'*' is not a list of ports", "  message");
	sandlock_error_free(e);
	e = NULL;
	ok(sandlock_ports_parse("70000", ports, 16, &e) < 0 && e, "parse_ports: 70000 refused");
	sandlock_error_free(e);
	ok(sandlock_ports_parse("9-1", ports, 16, NULL) < 0, "parse_ports: 9-1 refused");
	ok(sandlock_ports_parse("http", ports, 16, NULL) < 0, "parse_ports: a name refused");
	is_int(sandlock_ports_parse(NULL, ports, 16, NULL), -EINVAL, "parse_ports(NULL)");
}

static void test_profiles(void)
{
	char tmpl[] = "/tmp/sandlock-profiles.XXXXXX", path[256];
	char *s = NULL, **names = NULL;
	sandlock_policy_t *p = NULL;
	sandlock_error_t *e = NULL;

	if (!ok(mkdtemp(tmpl) != NULL, "a temporary directory"))
		return;
	setenv("XDG_CONFIG_HOME", tmpl, 1);
	is_int(sandlock_profile_dir(&s, NULL), 0, "profile_dir with XDG_CONFIG_HOME");
	snprintf(path, sizeof(path), "%s/sandlock/profiles", tmpl);
	is_str(s, path, "  is $XDG_CONFIG_HOME/sandlock/profiles");
	sandlock_free(s);
	is_int(sandlock_profile_list(&names, NULL), 0, "profile_list: no directory yet");
	ok(names && !names[0], "  is empty");
	sandlock_strv_free(names);

	snprintf(path, sizeof(path), "%s/sandlock", tmpl);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/sandlock/profiles", tmpl);
	mkdir(path, 0700);
	const char *files[] = { "web.toml", "a.toml", ".hidden.toml", "notes.txt" };
	for (size_t i = 0; i < 4; i++) {
		char f[300];
		snprintf(f, sizeof(f), "%s/%s", path, files[i]);
		FILE *fp = fopen(f, "w");
		fputs("[filesystem]\nread = [\"/usr\"]\n", fp);
		fclose(fp);
	}
	is_int(sandlock_profile_list(&names, NULL), 0, "profile_list");
	ok(names && names[0] && names[1] && !names[2] && strcmp(names[0], "a") == 0 &&
		   strcmp(names[1], "web") == 0,
	   "  lists a, web (sorted; no hidden file, no non-.toml)");
	sandlock_strv_free(names);

	is_int(sandlock_policy_load_profile("web", &p, NULL), 0, "load_profile(web)");
	ok(sandlock_policy_dump_toml(p, &s) == 0 && strstr(s, "\"/usr\""), "  holds its grant");
	sandlock_free(s);
	sandlock_policy_free(p);
	is_int(sandlock_policy_load_profile("nope", &p, &e), -ENOENT,
	       "load_profile(nope): -ENOENT");
	sandlock_error_free(e);
	e = NULL;
	is_int(sandlock_policy_load_profile("../x", &p, &e), -EINVAL,
	       "load_profile(../x): -EINVAL");
	is_str(e ? sandlock_error_message(e) : NULL, "../x: not a profile name", "  message");
	sandlock_error_free(e);
	is_int(sandlock_profile_path(".hidden", &s, NULL), -EINVAL, "profile_path(.hidden)");

	unsetenv("XDG_CONFIG_HOME");
	setenv("HOME", "/home/someone", 1);
	is_int(sandlock_profile_path("x", &s, NULL), 0, "profile_path with HOME only");
	is_str(s, "/home/someone/.config/sandlock/profiles/x.toml", "  under ~/.config");
	sandlock_free(s);
	setenv("XDG_CONFIG_HOME", "relative", 1);
	is_int(sandlock_profile_path("x", &s, NULL), 0, "a relative XDG_CONFIG_HOME is ignored");
	is_str(s, "/home/someone/.config/sandlock/profiles/x.toml", "  so ~/.config is used");
	sandlock_free(s);
	unsetenv("HOME");
	is_int(sandlock_profile_dir(&s, NULL), -ENOENT, "neither variable: -ENOENT");

	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpl);
	ok(system(cmd) == 0, "cleanup");
}

/* sandlock_confine applies grants and protections only: every other field set is refused, by
 * name, before anything is applied (the process stays unconfined: the checks run in order). */
static void test_confine_refuses(void)
{
	sandlock_policy_t *p = system_policy();
	sandlock_error_t *e = NULL;

	ok(sandlock_policy_set(p, "max_memory", "1G", NULL) == 0 &&
		   sandlock_policy_set(p, "net_allow", "127.0.0.1:80", NULL) == 0 &&
		   sandlock_policy_set(p, "workdir", "/tmp", NULL) == 0,
	   "a policy with limits, network and COW fields");
	is_int(sandlock_confine(p, &e), -EINVAL, "confine refuses it");
	is_str(e ? sandlock_error_message(e) : NULL,
	       "confine applies filesystem rules only; also set: workdir, net_allow, max_memory",
	       "  naming every such field");
	sandlock_error_free(e);
	e = NULL;
	sandlock_policy_clear(p, "max_memory");
	sandlock_policy_clear(p, "net_allow");
	sandlock_policy_clear(p, "workdir");
	is_int(sandlock_policy_check(p, NULL), 0,
	       "without them the policy is a plain one (control; confine itself is tested in "
	       "test-api)");
	sandlock_policy_free(p);
}

/* sandlock_policy_check refuses what spawning refuses (plan_check), network rules included. */
static void test_check_like_spawn(void)
{
	sandlock_policy_t *p = system_policy();
	sandlock_error_t *e = NULL;

	sandlock_policy_set(p, "net_allow", "tcp://127.0.0.1:80", NULL);
	sandlock_policy_set_protection(p, SANDLOCK_PROTECTION_NET_TCP, SANDLOCK_PROTECTION_STRICT);
	is_int(sandlock_policy_check(p, NULL), 0,
	       "an on-behalf rule with net-tcp in force (control)");
	sandlock_policy_set_protection(p, SANDLOCK_PROTECTION_NET_TCP,
				       SANDLOCK_PROTECTION_DISABLED);
	is_int(sandlock_policy_check(p, &e), -EOPNOTSUPP, "with net-tcp disabled: -EOPNOTSUPP");
	ok(e && strstr(sandlock_error_message(e), "need the net-tcp protection"), "  saying why");
	sandlock_error_free(e);
	sandlock_policy_free(p);
}

int main(void)
{
	if (sandlock_landlock_abi_version() < 0)
		skip_all("Landlock");
	test_pass_fds();
	test_fds_from_3();
	test_parse_ports();
	test_profiles();
	test_confine_refuses();
	test_check_like_spawn();
	return done_testing();
}
