/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-policy-fn-addr: a held network call whose address the policy_fn could not be shown (its
 * memory unreadable when the callback's event was built) is never made with an address another
 * thread puts there while the callback decides, through the public header only. The sandboxed
 * command is this program again: a bind or a connect whose address lies on a PROT_NONE page,
 * which a second thread makes readable, with a denied port in it, once the callback is deciding.
 * The callback and the thread meet through two directories of a temporary one (mkdir is an observed
 * call: answered before the callback sees it, so it never waits for the bind's verdict). Each case
 * has its control.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sandlock.h"
#include "spawn-helpers.h"
#include "tap.h"

/* ---- the helper (run inside the sandbox) ------------------------------------------------- */

struct mapper {
	char go[PATH_MAX], mapped[PATH_MAX];
	struct sockaddr_in *addr;
	uint16_t port;
	int wait; /* for @go to exist first */
};

/* Whether @path exists within about @ms milliseconds. */
static int wait_for(const char *path, int ms)
{
	const struct timespec tick = { 0, 1000000L };
	struct stat st;

	for (int i = 0; i < ms; i++) {
		if (stat(path, &st) == 0)
			return 1;
		nanosleep(&tick, NULL);
	}
	return 0;
}

/* Make the address readable, with 127.0.0.1 and the port in it, then say so. */
static void *mapper_run(void *arg)
{
	struct mapper *m = arg;

	if (m->wait && !wait_for(m->go, 5000))
		return NULL;
	if (mprotect(m->addr, 4096, PROT_READ | PROT_WRITE) < 0)
		return NULL;
	m->addr->sin_family = AF_INET;
	m->addr->sin_port = htons(m->port);
	inet_pton(AF_INET, "127.0.0.1", &m->addr->sin_addr);
	mkdir(m->mapped, 0700);
	return NULL;
}

/* bind|connect DIR PORT WAIT: bind a TCP socket to an address on a page unreadable at the call
 * (or connect it there); prints the port bound or connected to, or the errno, as "port N" or
 * "errno N". */
static int helper(char **argv)
{
	struct mapper m = { .port = (uint16_t)atoi(argv[3]), .wait = atoi(argv[4]) };
	int bind_it = strcmp(argv[1], "bind") == 0;
	struct sockaddr_in got = { 0 };
	socklen_t len = sizeof(got);
	pthread_t t;

	snprintf(m.go, sizeof(m.go), "%s/go", argv[2]);
	snprintf(m.mapped, sizeof(m.mapped), "%s/mapped", argv[2]);
	m.addr = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	if (m.addr == MAP_FAILED || s < 0)
		return 2;
	pthread_create(&t, NULL, mapper_run, &m);
	if (!m.wait)
		pthread_join(t, NULL); /* the control: readable before the call */
	int r = (bind_it ? bind(s, (struct sockaddr *)m.addr, sizeof(*m.addr))
			 : connect(s, (struct sockaddr *)m.addr, sizeof(*m.addr))) < 0
			? errno
			: 0;
	if (m.wait)
		pthread_join(t, NULL);
	if (r == 0 && (bind_it ? getsockname(s, (struct sockaddr *)&got, &len)
			       : getpeername(s, (struct sockaddr *)&got, &len)) == 0)
		printf("port %u\n", ntohs(got.sin_port));
	else
		printf("errno %d\n", r);
	return 0;
}

/* ---- the callback ------------------------------------------------------------------------ */

static char dir[PATH_MAX];
static uint16_t denied_port;

/* Denies a bind of, or a connect to, denied_port. One shown without an address (its memory
 * unreadable): lets the helper's thread make it readable, waits until it did, and allows it. */
static int32_t policy(const sandlock_policy_event_t *ev, sandlock_policy_ctx_t *ctx, void *ud)
{
	char go[PATH_MAX + 8], mapped[PATH_MAX + 8];

	(void)ctx;
	(void)ud;
	if (strcmp(ev->syscall, "bind") != 0 && strcmp(ev->syscall, "connect") != 0)
		return 0;
	if (ev->port == denied_port)
		return SANDLOCK_POLICY_DENY;
	if (!ev->host) {
		snprintf(go, sizeof(go), "%s/go", dir);
		snprintf(mapped, sizeof(mapped), "%s/mapped", dir);
		mkdir(go, 0700);
		wait_for(mapped, 3000);
	}
	return 0;
}

/* ---- the cases --------------------------------------------------------------------------- */

static char self_path[PATH_MAX], self_dir[PATH_MAX];

static sandlock_policy_t *make_policy(int with_fn, const char *ports)
{
	sandlock_policy_t *p = system_policy();
	char rule[64];

	sandlock_policy_add_fs_read(p, self_dir);
	sandlock_policy_add_fs_write(p, dir);
	sandlock_policy_set(p, "net_allow_bind", ports, NULL);
	for (const char *at = ports; at; at = strchr(at, ',') ? strchr(at, ',') + 1 : NULL) {
		snprintf(rule, sizeof(rule), "127.0.0.1:%.*s", (int)strcspn(at, ","), at);
		sandlock_policy_set(p, "net_allow", rule, NULL);
	}
	if (with_fn)
		sandlock_policy_set_policy_fn(p, policy, NULL, NULL);
	return p;
}

/* Run the helper @mode under @p, its stdout in @out; the signal directories removed first. */
static void run(const sandlock_policy_t *p, const char *mode, const char *port, const char *wait,
		char *out, size_t size)
{
	const char *argv[] = { self_path, mode, dir, port, wait, NULL };
	sandlock_spawn_opts_t o = { .size = sizeof(o), .stdout_mode = SANDLOCK_STDIO_PIPE };
	char go[PATH_MAX + 8], mapped[PATH_MAX + 8];

	snprintf(go, sizeof(go), "%s/go", dir);
	snprintf(mapped, sizeof(mapped), "%s/mapped", dir);
	rmdir(go);
	rmdir(mapped);
	(void)spawn_output(p, argv, &o, out, size, NULL, NULL);
}

/* Two ports, each with a listening socket of this process on 127.0.0.1 (@fds): what the
 * connects reach; the binds take the ports once these are closed (no connection made them
 * linger). */
static void listeners(uint16_t ports[2], int fds[2])
{
	for (int i = 0; i < 2; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET };
		socklen_t len = sizeof(a);
		inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
		fds[i] = socket(AF_INET, SOCK_STREAM, 0);
		bind(fds[i], (struct sockaddr *)&a, sizeof(a));
		listen(fds[i], 8);
		getsockname(fds[i], (struct sockaddr *)&a, &len);
		ports[i] = ntohs(a.sin_port);
	}
}

/* @mode ("bind", "connect") of an address unreadable when the callback is asked. The binds run
 * with the ports free, the connects with them listened on. */
static void unreadable(const char *mode)
{
	char out[256], want[64], allowed[16], denied[16], both[32], mapped[PATH_MAX + 8];
	uint16_t ports[2];
	int fds[2];

	listeners(ports, fds);
	if (strcmp(mode, "bind") == 0) {
		close(fds[0]);
		close(fds[1]);
		fds[0] = fds[1] = -1;
	}
	denied_port = ports[1];
	snprintf(allowed, sizeof(allowed), "%u", ports[0]);
	snprintf(denied, sizeof(denied), "%u", ports[1]);
	snprintf(both, sizeof(both), "%u,%u", ports[0], ports[1]);
	snprintf(mapped, sizeof(mapped), "%s/mapped", dir);

	sandlock_policy_t *p = make_policy(0, both);
	run(p, mode, denied, "0", out, sizeof(out));
	snprintf(want, sizeof(want), "port %s\n", denied);
	is_str(out, want, "%s: control: without the policy_fn the denied port works", mode);
	sandlock_policy_free(p);

	p = make_policy(1, both);
	run(p, mode, allowed, "0", out, sizeof(out));
	snprintf(want, sizeof(want), "port %s\n", allowed);
	is_str(out, want, "%s: control: with it, a readable address of the allowed port works",
	       mode);
	run(p, mode, denied, "0", out, sizeof(out));
	snprintf(want, sizeof(want), "errno %d\n", EPERM);
	is_str(out, want, "%s: control: and one of the denied port is refused (EPERM)", mode);

	run(p, mode, denied, "1", out, sizeof(out));
	ok(access(mapped, F_OK) == 0,
	   "%s: the thread made the address readable while the callback decided", mode);
	snprintf(want, sizeof(want), "errno %d\n", EFAULT);
	is_str(out, want,
	       "%s: the callback was shown no address: EFAULT, not the denied port put there since",
	       mode);
	run(p, mode, allowed, "1", out, sizeof(out));
	is_str(out, want, "%s: the same for the allowed port: the callback saw neither", mode);
	sandlock_policy_free(p);
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		/* _exit: an ASan build's leak check at exit cannot read /proc in the sandbox. */
		int code = argc == 5 ? helper(argv) : 2;
		fflush(stdout);
		_exit(code);
	}
	if (!realpath("/proc/self/exe", self_path))
		return 1;
	snprintf(self_dir, sizeof(self_dir), "%s", self_path);
	*strrchr(self_dir, '/') = '\0';
	if (sandlock_landlock_abi_version() < 4) {
		printf("1..0 # SKIP Landlock ABI 4 (TCP bind rules) is not available\n");
		return 0;
	}
	if (!tap_mkdtemp(dir, sizeof(dir), "test-policy-fn-addr"))
		return 1;
	unreadable("bind");
	unreadable("connect");
	char sub[PATH_MAX + 8];
	snprintf(sub, sizeof(sub), "%s/go", dir);
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/mapped", dir);
	rmdir(sub);
	rmdir(dir);
	return done_testing();
}
