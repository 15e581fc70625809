/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-policy-fn: the policy_fn C ABI through the public header only. The sandboxed command is
 * this program again (a helper mode: connect, mmap, fork, exec, exec while a thread rewrites the
 * argument), against a TCP server the test starts on 127.0.0.1. Each behaviour has its control:
 * the same command without the callback's rule succeeds.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandlock.h"
#include "spawn-helpers.h"
#include "tap.h"

/* ---- the helper modes (run inside the sandbox) ------------------------------------------- */

static int do_connect(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int s = socket(AF_INET, SOCK_STREAM, 0);

	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	if (s < 0)
		return errno;
	int r = connect(s, (struct sockaddr *)&a, sizeof(a)) < 0 ? errno : 0;
	close(s);
	return r;
}

static char race_buf[64] = "allowed";
static atomic_int race_stop;

static void *racer(void *arg)
{
	(void)arg;
	while (!atomic_load(&race_stop)) {
		memcpy(race_buf, "forbidden", 10);
		memcpy(race_buf, "allowed\0\0", 10);
	}
	return NULL;
}

static struct sockaddr_in swap_addr = { .sin_family = AF_INET };
static uint16_t swap_to;

static void *swapper(void *arg)
{
	(void)arg;
	usleep(100 * 1000); /* while the callback (300 ms) decides */
	swap_addr.sin_port = htons(swap_to);
	return NULL;
}

/* The address a bind race's binds use, its port flipped by bind_flipper. */
static struct sockaddr_in bind_addr = { .sin_family = AF_INET };
static _Atomic uint16_t bind_ports[2];

static void *bind_flipper(void *arg)
{
	volatile uint16_t *port = &bind_addr.sin_port;

	(void)arg;
	while (!atomic_load(&race_stop)) {
		*port = htons(atomic_load(&bind_ports[1]));
		*port = htons(atomic_load(&bind_ports[0]));
	}
	return NULL;
}

/* A socket of @proto ("tcp", "udp") bound to 127.0.0.1 and bind_addr's port: the port it is
 * bound to, or -errno. */
static int do_bind(const char *proto)
{
	struct sockaddr_in got = { 0 };
	socklen_t len = sizeof(got);
	int s = socket(AF_INET, strcmp(proto, "udp") == 0 ? SOCK_DGRAM : SOCK_STREAM, 0);

	if (s < 0)
		return -errno;
	int r = bind(s, (struct sockaddr *)&bind_addr, sizeof(bind_addr)) < 0 ? -errno : 0;
	if (r == 0)
		r = getsockname(s, (struct sockaddr *)&got, &len) < 0 ? -errno
								      : ntohs(got.sin_port);
	close(s);
	return r;
}

/* connect PORT N: the errno of each, one a line */
static int mode_connect(char **argv)
{
	for (int i = 0; i < atoi(argv[3]); i++)
		printf("%d\n", do_connect(atoi(argv[2])));
	return 0;
}

/* mmap MIB */
static int mode_mmap(char **argv)
{
	size_t len = (size_t)atoi(argv[2]) << 20;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	printf("%d\n", p == MAP_FAILED ? errno : 0);
	return 0;
}

static int mode_fork(char **argv)
{
	(void)argv;
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	printf("%d\n", pid < 0 ? errno : 0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return 0;
}

/* exec WORD: /bin/echo WORD */
static int mode_exec(char **argv)
{
	char echo[] = "/bin/echo";
	char *const v[] = { echo, argv[2], NULL };
	execv(v[0], v);
	printf("%d\n", errno);
	return 0;
}

/* swap SHOWN TO: connect, the port changed meanwhile */
static int mode_swap(char **argv)
{
	pthread_t t;
	int s = socket(AF_INET, SOCK_STREAM, 0);
	swap_addr.sin_port = htons((uint16_t)atoi(argv[2]));
	swap_to = (uint16_t)atoi(argv[3]);
	inet_pton(AF_INET, "127.0.0.1", &swap_addr.sin_addr);
	pthread_create(&t, NULL, swapper, NULL);
	int r = connect(s, (struct sockaddr *)&swap_addr, sizeof(swap_addr)) < 0 ? errno : 0;
	pthread_join(t, NULL);
	printf("%d\n", r);
	return 0;
}

/* connect6 PORT: to ::ffff:127.0.0.1 */
static int mode_connect6(char **argv)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6,
				  .sin6_port = htons((uint16_t)atoi(argv[2])) };
	int s = socket(AF_INET6, SOCK_STREAM, 0);
	inet_pton(AF_INET6, "::ffff:127.0.0.1", &a.sin6_addr);
	printf("%d\n", s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) < 0 ? errno : 0);
	return 0;
}

/* mmsg PORT PORT2: two UDP datagrams, one to each */
static int mode_mmsg(char **argv)
{
	struct sockaddr_in a[2] = { { .sin_family = AF_INET }, { .sin_family = AF_INET } };
	char x = 0x78;
	struct iovec iov = { .iov_base = &x, .iov_len = 1 };
	struct mmsghdr m[2] = { 0 };
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	for (int i = 0; i < 2; i++) {
		a[i].sin_port = htons((uint16_t)atoi(argv[2 + i]));
		inet_pton(AF_INET, "127.0.0.1", &a[i].sin_addr);
		m[i].msg_hdr = (struct msghdr){ .msg_name = &a[i],
						.msg_namelen = sizeof(a[i]),
						.msg_iov = &iov,
						.msg_iovlen = 1 };
	}
	int n = sendmmsg(s, m, 2, 0);
	printf("%d\n", n < 0 ? errno : 1000 + n);
	return 0;
}

/* open PATH with O_NOCTTY, the handler's mark */
static int mode_open(char **argv)
{
	int fd = open(argv[2], O_RDONLY | O_NOCTTY | O_CLOEXEC);
	printf("%d\n", fd < 0 ? errno : 0);
	return 0;
}

/* exec /bin/echo WORD with an AIO context mapped */
static int mode_aio(char **argv)
{
	unsigned long ctx = 0;
	if (syscall(SYS_io_setup, 1, &ctx) < 0) {
		printf("io_setup %d\n", errno);
		return 0;
	}
	char echo[] = "/bin/echo";
	char *const v[] = { echo, argv[2], NULL };
	execv(v[0], v);
	printf("%d\n", errno);
	return 0;
}

/* posix_spawn /bin/echo WORD: a vfork-style clone */
static int mode_spawn(char **argv)
{
	char echo[] = "/bin/echo";
	char *const v[] = { echo, argv[2], NULL };
	pid_t pid;
	int r = posix_spawn(&pid, v[0], NULL, NULL, v, NULL);
	if (r == 0)
		waitpid(pid, &r, 0);
	fflush(stdout);
	return r;
}

/* bind PROTO PORT: the errno */
static int mode_bind(char **argv)
{
	inet_pton(AF_INET, "127.0.0.1", &bind_addr.sin_addr);
	bind_addr.sin_port = htons((uint16_t)atoi(argv[3]));
	int r = do_bind(argv[2]);
	printf("%d\n", r < 0 ? -r : 0);
	return 0;
}

/* capbind PORT: without CAP_NET_BIND_SERVICE */
static int mode_capbind(char **argv)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { 0 };
	if (syscall(SYS_capget, &h, d) < 0)
		return 2;
	d[0].effective &= ~(1u << CAP_NET_BIND_SERVICE);
	if (syscall(SYS_capset, &h, d) < 0)
		return 3;
	inet_pton(AF_INET, "127.0.0.1", &bind_addr.sin_addr);
	bind_addr.sin_port = htons((uint16_t)atoi(argv[2]));
	int r = do_bind("tcp");
	printf("%d\n", r < 0 ? -r : 0);
	return 0;
}

/* unixbind PATH THREADS: bind a UNIX socket there */
static int mode_unixbind(char **argv)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	pthread_t t;
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", argv[2]);
	if (atoi(argv[3]))
		pthread_create(&t, NULL, bind_flipper, NULL); /* a thread sharing the table */
	printf("%d\n", bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 ? errno : 0);
	atomic_store(&race_stop, 1);
	if (atoi(argv[3]))
		pthread_join(t, NULL);
	return 0;
}

/* bindrace PROTO ALLOWED,DENIED: binds, port flipped */
static int mode_bindrace(char **argv)
{
	pthread_t t;
	int bound[2] = { 0, 0 }, other = 0, other_r = 0;
	atomic_store(&bind_ports[0], (uint16_t)atoi(argv[3]));
	atomic_store(&bind_ports[1], (uint16_t)atoi(strchr(argv[3], ',') + 1));
	inet_pton(AF_INET, "127.0.0.1", &bind_addr.sin_addr);
	bind_addr.sin_port = htons(atomic_load(&bind_ports[0]));
	pthread_create(&t, NULL, bind_flipper, NULL);
	for (int i = 0; i < 400; i++) {
		int r = do_bind(argv[2]);
		if (r == atomic_load(&bind_ports[0]) || r == atomic_load(&bind_ports[1]))
			bound[r == atomic_load(&bind_ports[1])]++;
		else if (r != -EPERM)
			other++, other_r = r;
	}
	atomic_store(&race_stop, 1);
	pthread_join(t, NULL);
	printf("allowed %d denied %d other %d (%d)\n", bound[0], bound[1], other, other_r);
	return 0;
}

/* exec /bin/echo with a word another thread rewrites */
static int mode_race(char **argv)
{
	(void)argv;
	pthread_t t;
	char echo[] = "/bin/echo";
	char *const v[] = { echo, race_buf, NULL };
	pthread_create(&t, NULL, racer, NULL);
	usleep(1000);
	execv(v[0], v);
	printf("%d\n", errno);
	atomic_store(&race_stop, 1);
	pthread_join(t, NULL);
	return 0;
}

/* The helper modes, by their first argument. */
static const struct {
	const char *name;
	int (*run)(char **argv);
} modes[] = {
	{ "connect", mode_connect },   { "mmap", mode_mmap },	      { "fork", mode_fork },
	{ "exec", mode_exec },	       { "swap", mode_swap },	      { "connect6", mode_connect6 },
	{ "mmsg", mode_mmsg },	       { "open", mode_open },	      { "aio", mode_aio },
	{ "spawn", mode_spawn },       { "bind", mode_bind },	      { "capbind", mode_capbind },
	{ "unixbind", mode_unixbind }, { "bindrace", mode_bindrace }, { "race", mode_race },
};

static int helper(int argc, char **argv)
{
	(void)argc;
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(argv[1], modes[i].name) == 0)
			return modes[i].run(argv);
	return 127;
}

/* ---- the server and the spawn ------------------------------------------------------------ */

static int srv_fd = -1, srv_port;

static void *acceptor(void *arg)
{
	(void)arg;
	for (;;) {
		int c = accept(srv_fd, NULL, NULL);
		if (c < 0)
			return NULL;
		close(c);
	}
}

static void server_start(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	pthread_t t;

	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	srv_fd = socket(AF_INET, SOCK_STREAM, 0);
	bind(srv_fd, (struct sockaddr *)&a, sizeof(a));
	listen(srv_fd, 64);
	getsockname(srv_fd, (struct sockaddr *)&a, &len);
	srv_port = ntohs(a.sin_port);
	pthread_create(&t, NULL, acceptor, NULL);
	pthread_detach(t);
}

static char self_path[PATH_MAX], self_dir[PATH_MAX];

static sandlock_policy_t *base_policy(void)
{
	sandlock_policy_t *p = system_policy();
	char rule[64];

	sandlock_policy_add_fs_read(p, self_dir);
	snprintf(rule, sizeof(rule), "127.0.0.1:%d", srv_port);
	sandlock_policy_set(p, "net_allow", rule, NULL);
	return p;
}

struct audit_seen {
	atomic_int audits, denials;
};

static void on_event(const sandlock_event_t *ev, void *user_data)
{
	struct audit_seen *s = user_data;

	if (ev->verdict == SANDLOCK_VERDICT_AUDIT)
		atomic_fetch_add(&s->audits, 1);
	if (ev->verdict == SANDLOCK_VERDICT_DENY && ev->reason && strstr(ev->reason, "policy_fn"))
		atomic_fetch_add(&s->denials, 1);
}

static const sandlock_handler_reg_t *run_regs; /* extension handlers of the next runs */
static uint32_t run_n_regs;
static uint32_t run_events; /* SANDLOCK_EVENTS_* of the next runs */
static int last_signal;	    /* the signal that ended the last run, 0: it exited */

/* Run the helper @mode (@a1, @a2) under @p: its stdout in @out. Returns the spawn's result. */
static int run(const sandlock_policy_t *p, const char *mode, const char *a1, const char *a2,
	       char *out, size_t size, struct audit_seen *seen)
{
	const char *argv[] = { self_path, mode, a1, a2, NULL };
	sandlock_spawn_opts_t o = { .size = sizeof(o),
				    .stdout_mode = SANDLOCK_STDIO_PIPE,
				    .on_event = seen ? on_event : NULL,
				    .event_user_data = seen,
				    .events = run_events,
				    .handlers = run_regs,
				    .n_handlers = run_n_regs };
	return spawn_output(p, argv, &o, out, size, NULL, &last_signal);
}

/* ---- the callbacks ----------------------------------------------------------------------- */

enum rule {
	DENY_HOST,
	RESTRICT_LIVE, /* the 2nd connect restricts to 127.0.0.2, the 3rd grants 127.0.0.1 back */
	AUDIT,
	PID_OVERRIDE,
	PID_OVERRIDE_OTHER,
	MEMORY,
	PROCESSES,
	WEIRD,
	SLOW,
	SLOW_DENY_HOST, /* DENY_HOST, deciding in 300 ms */
	DENY_ARGV,
	DENY_BIND, /* a bind of port bind_denied */
	PATH,
	NONE,
};

static uint32_t bind_denied; /* DENY_BIND's port */

struct ctl {
	enum rule rule;
	atomic_int connects, calls, drops, path_r, raise_r, bad_ip_r, pid_r;
	atomic_int forks_observed, forks_held, execs_seen;
};

static int32_t policy(const sandlock_policy_event_t *ev, sandlock_policy_ctx_t *ctx, void *ud)
{
	struct ctl *c = ud;
	const char *lo = "127.0.0.1", *lo2 = "127.0.0.2";
	int net = strcmp(ev->category, "network") == 0 && ev->held;

	atomic_fetch_add(&c->calls, 1);
	if (strcmp(ev->category, "process") == 0 && ev->argv == NULL)
		atomic_fetch_add(ev->held ? &c->forks_held : &c->forks_observed, 1);
	if (ev->argv && ev->argc == 2 && strcmp(ev->argv[0], "/bin/echo") == 0 &&
	    strcmp(ev->syscall, "execve") == 0 && ev->held && ev->pid > 0 && ev->ppid > 0)
		atomic_fetch_add(&c->execs_seen, 1);
	if (net && ev->host && strcmp(ev->syscall, "connect") == 0)
		atomic_fetch_add(&c->connects, 1);
	switch (c->rule) {
	case SLOW_DENY_HOST:
		if (net)
			usleep(300 * 1000);
		/* fallthrough */
	case DENY_HOST:
		return net && ev->host && strcmp(ev->host, lo) == 0 &&
				       ev->port == (uint32_t)srv_port
			       ? SANDLOCK_POLICY_DENY
			       : 0;
	case RESTRICT_LIVE:
		if (net && atomic_load(&c->connects) == 2) {
			atomic_store(&c->bad_ip_r, sandlock_policy_ctx_restrict_network(
							   ctx, (const char *[]){ "x" }, 1));
			sandlock_policy_ctx_restrict_network(ctx, &lo2, 1);
		}
		if (net && atomic_load(&c->connects) == 3)
			sandlock_policy_ctx_grant_network(ctx, &lo, 1);
		return 0;
	case AUDIT:
		return net ? SANDLOCK_POLICY_AUDIT : 0;
	case PID_OVERRIDE:
	case PID_OVERRIDE_OTHER:
		if (net)
			atomic_store(&c->pid_r,
				     sandlock_policy_ctx_restrict_pid_network(
					     ctx,
					     c->rule == PID_OVERRIDE ? ev->pid : ev->pid + 1000000,
					     &lo2, 1));
		return 0;
	case MEMORY:
		if (ev->held && strcmp(ev->category, "file") == 0) {
			sandlock_policy_ctx_restrict_max_memory(ctx, 64u << 20);
			atomic_store(&c->raise_r,
				     sandlock_policy_ctx_restrict_max_memory(ctx, 128u << 20));
		}
		return 0;
	case PROCESSES:
		if (ev->held && strcmp(ev->category, "file") == 0)
			sandlock_policy_ctx_restrict_max_processes(ctx, 1);
		return 0;
	case WEIRD:
		return net ? 123456 : 0;
	case SLOW:
		if (net)
			usleep(1500 * 1000);
		return 0;
	case DENY_ARGV:
		for (uint32_t i = 0; ev->argv && i < ev->argc; i++)
			if (strstr(ev->argv[i], "forbidden"))
				return SANDLOCK_POLICY_DENY;
		return 0;
	case DENY_BIND:
		return strcmp(ev->syscall, "bind") == 0 && ev->port == bind_denied
			       ? SANDLOCK_POLICY_DENY
			       : 0;
	case PATH:
		atomic_store(&c->path_r, sandlock_policy_ctx_deny_path(ctx, "/etc/hostname"));
		return 0;
	case NONE:
		return 0;
	}
	return 0;
}

static void drop(void *ud)
{
	struct ctl *c = ud;

	atomic_fetch_add(&c->drops, 1);
}

static sandlock_policy_t *with_fn(struct ctl *c, enum rule rule)
{
	sandlock_policy_t *p = base_policy();

	c->rule = rule;
	sandlock_policy_set_policy_fn(p, policy, c, drop);
	return p;
}

static char out[4096];

static void lifetime(void)
{
	struct ctl c = { 0 };
	sandlock_policy_t *p = with_fn(&c, NONE);
	char *dump = NULL;

	is_int(run(p, "connect", "0", "0", out, sizeof(out), NULL), 0, "spawn with a policy_fn");
	ok(atomic_load(&c.calls) > 0, "the callback was called (%d)", atomic_load(&c.calls));
	is_int(atomic_load(&c.drops), 0, "drop not called while the policy holds it");
	is_int(sandlock_policy_dump_json(p, &dump), 0, "dump a policy with a policy_fn");
	ok(dump && !strstr(dump, "policy_fn"), "the dump leaves the policy_fn out");
	sandlock_free(dump);
	sandlock_policy_free(p);
	is_int(atomic_load(&c.drops), 1, "drop runs once, with the last holder");

	struct ctl c2 = { 0 };
	p = with_fn(&c2, NONE);
	sandlock_policy_set_policy_fn(p, NULL, NULL, NULL);
	is_int(atomic_load(&c2.drops), 1, "clearing it drops the old one");
	is_int(sandlock_policy_set_policy_fn_timeout(p, 0), -EINVAL, "a timeout of 0 is -EINVAL");
	sandlock_policy_free(p);

	struct ctl c4 = { 0 };
	p = with_fn(&c4, NONE);
	sandlock_policy_add_fs_write(p, "/proc");
	is_int(run(p, "connect", "0", "0", out, sizeof(out), NULL), -EINVAL,
	       "a policy_fn with a writable grant covering /proc is refused");
	sandlock_policy_free(p);

	struct ctl c3 = { 0 };
	p = with_fn(&c3, NONE);
	sandlock_policy_clear(p, "net_allow");
	sandlock_policy_set(p, "no_supervisor", "true", NULL);
	is_int(run(p, "connect", "0", "0", out, sizeof(out), NULL), -EINVAL,
	       "a policy_fn without a supervisor is refused");
	sandlock_policy_free(p);
}

static void network(void)
{
	char port[16], *expect = NULL;
	struct ctl c = { 0 };
	struct audit_seen seen = { 0 };

	snprintf(port, sizeof(port), "%d", srv_port);
	sandlock_policy_t *p = base_policy();
	run(p, "connect", port, "1", out, sizeof(out), NULL);
	is_str(out, "0\n", "control: the connect without a policy_fn succeeds");
	sandlock_policy_free(p);

	p = with_fn(&c, NONE);
	run(p, "connect", port, "1", out, sizeof(out), NULL);
	is_str(out, "0\n", "control: an allowing policy_fn lets it through");
	sandlock_policy_free(p);

	p = with_fn(&c, DENY_HOST);
	run(p, "connect", port, "1", out, sizeof(out), &seen);
	is_str(out, "1\n", "a connect denied by host: EPERM");
	ok(atomic_load(&seen.denials) >= 1, "the denial is an event (reason policy_fn)");
	sandlock_policy_free(p);

	struct ctl c2 = { 0 };
	p = with_fn(&c2, RESTRICT_LIVE);
	run(p, "connect", port, "3", out, sizeof(out), NULL);
	if (asprintf(&expect, "0\n%d\n0\n", ECONNREFUSED) < 0)
		expect = NULL;
	is_str(out, expect, "restrict_network mid-run refuses, grant_network lets back");
	is_int(atomic_load(&c2.bad_ip_r), -EINVAL, "a bad address is -EINVAL");
	free(expect);
	sandlock_policy_free(p);

	struct ctl c3 = { 0 };
	struct audit_seen seen3 = { 0 };
	p = with_fn(&c3, AUDIT);
	run(p, "connect", port, "1", out, sizeof(out), &seen3);
	is_str(out, "0\n", "audit allows");
	ok(atomic_load(&seen3.audits) >= 1, "and is reported (SANDLOCK_VERDICT_AUDIT)");
	sandlock_policy_free(p);

	struct ctl c4 = { 0 };
	p = with_fn(&c4, PID_OVERRIDE);
	run(p, "connect", port, "1", out, sizeof(out), NULL);
	if (asprintf(&expect, "%d\n", ECONNREFUSED) < 0)
		expect = NULL;
	is_str(out, expect, "a per-pid override without the address refuses that process");
	free(expect);
	sandlock_policy_free(p);
	struct ctl c5 = { 0 };
	p = with_fn(&c5, PID_OVERRIDE_OTHER);
	run(p, "connect", port, "1", out, sizeof(out), NULL);
	is_str(out, "0\n", "control: another pid's override leaves it allowed");
	is_int(atomic_load(&c5.pid_r), -ESRCH, "an override for a pid with no process: -ESRCH");
	is_int(atomic_load(&c4.pid_r), 0, "control: the caller's own pid is taken");
	sandlock_policy_free(p);

	struct ctl c6 = { 0 };
	p = with_fn(&c6, WEIRD);
	run(p, "connect", port, "1", out, sizeof(out), NULL);
	is_str(out, "1\n", "an unrecognised verdict denies (EPERM)");
	sandlock_policy_free(p);

	struct ctl c7 = { 0 };
	p = with_fn(&c7, SLOW);
	sandlock_policy_set_policy_fn_timeout(p, 200);
	run(p, "connect", port, "1", out, sizeof(out), NULL);
	is_str(out, "1\n", "a callback slower than the timeout denies (EPERM)");
	sandlock_policy_free(p);
}

/* The callback is shown an IPv4-mapped address as IPv4; a sendmmsg, one destination for all. */
static void addresses(void)
{
	char port[16], port2[16], expect[16];
	struct ctl c = { 0 };
	sandlock_policy_t *p = with_fn(&c, NONE);

	snprintf(port, sizeof(port), "%d", srv_port);
	snprintf(port2, sizeof(port2), "%d", srv_port + 1);
	run(p, "connect6", port, "", out, sizeof(out), NULL);
	is_str(out, "0\n", "control: a connect to ::ffff:127.0.0.1 an allowing policy_fn passes");
	run(p, "mmsg", port, port, out, sizeof(out), NULL);
	is_str(out, "1002\n", "control: a sendmmsg of two datagrams to one destination: sent");
	run(p, "mmsg", port, port2, out, sizeof(out), NULL);
	snprintf(expect, sizeof(expect), "%d\n", EPERM);
	is_str(out, expect, "a sendmmsg naming two destinations: EPERM");
	sandlock_policy_free(p);
	p = with_fn(&c, DENY_HOST);
	run(p, "connect6", port, "", out, sizeof(out), NULL);
	is_str(out, expect, "::ffff:127.0.0.1 is shown as 127.0.0.1: its denial applies (EPERM)");
	sandlock_policy_free(p);
	p = with_fn(&c, SLOW_DENY_HOST);
	run(p, "swap", port2, port2, out, sizeof(out), NULL);
	snprintf(expect, sizeof(expect), "%d\n", ECONNREFUSED);
	is_str(out, expect, "control: the allowed address unchanged reaches the chain (refused)");
	run(p, "swap", port2, port, out, sizeof(out), NULL);
	snprintf(expect, sizeof(expect), "%d\n", EPERM);
	is_str(out, expect, "the address swapped after the callback's read: EPERM");
	sandlock_policy_free(p);
}

static void limits(void)
{
	struct ctl c = { 0 };
	sandlock_policy_t *p = with_fn(&c, NONE);

	run(p, "mmap", "256", "", out, sizeof(out), NULL);
	is_str(out, "0\n", "control: a 256 MiB mmap without a limit succeeds");
	run(p, "fork", "", "", out, sizeof(out), NULL);
	is_str(out, "0\n", "control: a fork without a limit succeeds");
	ok(atomic_load(&c.forks_observed) >= 1 && atomic_load(&c.forks_held) == 0,
	   "the fork is observed, not held (%d observed)", atomic_load(&c.forks_observed));
	sandlock_policy_free(p);

	struct ctl c2 = { 0 };
	p = with_fn(&c2, MEMORY);
	char expect[16];
	run(p, "mmap", "256", "", out, sizeof(out), NULL);
	/* Over max_memory, the process that asks is killed (handlers/memory.c). */
	ok(!out[0] && last_signal == SIGKILL,
	   "restrict_max_memory(64 MiB): the 256 MiB mmap kills it (out '%s', signal %d)", out,
	   last_signal);
	is_int(atomic_load(&c2.raise_r), -EPERM, "a limit is never raised (-EPERM)");
	sandlock_policy_free(p);

	struct ctl c3 = { 0 };
	p = with_fn(&c3, PROCESSES);
	snprintf(expect, sizeof(expect), "%d\n", EAGAIN);
	run(p, "fork", "", "", out, sizeof(out), NULL);
	is_str(out, expect, "restrict_max_processes(1): the fork is EAGAIN");
	sandlock_policy_free(p);
}

static void exec_argv(void)
{
	struct ctl c = { 0 };
	sandlock_policy_t *p = with_fn(&c, DENY_ARGV);

	run(p, "exec", "allowed", "", out, sizeof(out), NULL);
	is_str(out, "allowed\n", "control: an exec the callback allows runs");
	ok(atomic_load(&c.execs_seen) == 1, "its event: execve, held, argv, pid and parent");
	run(p, "exec", "forbidden", "", out, sizeof(out), NULL);
	is_str(out, "1\n", "an exec denied by its argv: EPERM, the program never ran");
	run(p, "aio", "allowed", "", out, sizeof(out), NULL);
	is_str(out, "1\n", "an exec with an AIO context mapped (it may write later): EPERM");
	run(p, "spawn", "allowed", "", out, sizeof(out), NULL);
	is_str(out, "allowed\n", "control: posix_spawn (its parent waits in the vfork) runs");
	run(p, "spawn", "forbidden", "", out, sizeof(out), NULL);
	is_str(out, "", "posix_spawn of a denied argv: nothing ran");
	int ran = 0;
	for (int i = 0; i < 5; i++) {
		run(p, "race", "", "", out, sizeof(out), NULL);
		if (strstr(out, "forbidden"))
			ran = 1;
	}
	ok(!ran, "a thread rewriting the argv never gets the denied program run (last: %s)", out);
	ok(strcmp(out, "allowed\n") == 0 || strcmp(out, "1\n") == 0,
	   "it runs with the argv shown, or is refused (EPERM)");
	sandlock_policy_free(p);

	struct ctl c2 = { 0 };
	p = with_fn(&c2, PATH);
	run(p, "exec", "x", "", out, sizeof(out), NULL);
	is_int(atomic_load(&c2.path_r), 0, "deny_path of an existing file: 0");
	is_str(out, "x\n", "an exec of another file while a deny is in force runs");
	sandlock_policy_free(p);
}

/* Two ports no socket holds now. */
static void free_ports(uint16_t ports[2])
{
	int s[2];

	for (int i = 0; i < 2; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET };
		socklen_t len = sizeof(a);
		inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
		s[i] = socket(AF_INET, SOCK_STREAM, 0);
		bind(s[i], (struct sockaddr *)&a, sizeof(a));
		getsockname(s[i], (struct sockaddr *)&a, &len);
		ports[i] = ntohs(a.sin_port);
	}
	close(s[0]);
	close(s[1]);
}

/* A bind the callback allowed is made with the address it was shown: a thread flipping the port
 * to a denied one between the callback's read and the bind never gets it bound. */
static void bind_binding(void)
{
	static const char *const protos[] = { "tcp", "udp" };
	uint16_t ports[2];
	char allowed[16], denied[16], both[32], expect[16];
	struct ctl c = { 0 };

	free_ports(ports);
	snprintf(allowed, sizeof(allowed), "%u", ports[0]);
	snprintf(denied, sizeof(denied), "%u", ports[1]);
	snprintf(both, sizeof(both), "%u,%u", ports[0], ports[1]);
	bind_denied = ports[1];
	snprintf(expect, sizeof(expect), "%d\n", EPERM);
	for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++) {
		const char *proto = protos[i];
		sandlock_policy_t *p = base_policy();
		sandlock_policy_set(p, "net_allow_bind", both, NULL);
		run(p, "bind", proto, denied, out, sizeof(out), NULL);
		is_str(out, "0\n", "%s: control: without the policy_fn the denied port binds",
		       proto);
		run(p, "bind", proto, allowed, out, sizeof(out), NULL);
		is_str(out, "0\n", "%s: control: and so does the allowed one", proto);
		sandlock_policy_free(p);

		p = with_fn(&c, DENY_BIND);
		sandlock_policy_set(p, "net_allow_bind", both, NULL);
		run(p, "bind", proto, allowed, out, sizeof(out), NULL);
		is_str(out, "0\n", "%s: control: the port the callback allows binds", proto);
		run(p, "bind", proto, denied, out, sizeof(out), NULL);
		is_str(out, expect, "%s: the port the callback denies: EPERM", proto);
		run(p, "bindrace", proto, both, out, sizeof(out), NULL);
		int a = -1, d = -1, o = -1;
		sscanf(out, "allowed %d denied %d other %d", &a, &d, &o);
		is_int(d, 0, "%s: a thread flipping the port never gets the denied one bound (%s)",
		       proto, strtok(out, "\n") ? out : "");
		ok(a > 0 && o == 0,
		   "%s: the binds of the allowed port went through, no other answer", proto);
		sandlock_policy_free(p);
	}

	/* Made by the supervisor, the bind still answers to the static bind rules. */
	char eacces[16];
	sandlock_policy_t *p = with_fn(&c, NONE);
	sandlock_policy_set(p, "net_allow_bind", allowed, NULL);
	run(p, "bind", "tcp", allowed, out, sizeof(out), NULL);
	is_str(out, "0\n", "control: a TCP port of net_allow_bind binds with an allowing callback");
	run(p, "bind", "tcp", denied, out, sizeof(out), NULL);
	snprintf(eacces, sizeof(eacces), "%d\n", EACCES);
	is_str(out, eacces, "a TCP port outside net_allow_bind: EACCES, as Landlock answers");
	sandlock_policy_free(p);
}

/* A port below the unprivileged ones, bound by the supervisor: only for a caller that could
 * bind it itself (CAP_NET_BIND_SERVICE); a root caller that dropped it gets EACCES as from the
 * kernel. */
static void bind_privileged(void)
{
	char port[16], rule[16], expect[16];
	struct ctl c = { 0 };
	int free_port = 0;

	if (geteuid() != 0) {
		ok(1, "# SKIP a capability to drop needs root (euid %d)", (int)geteuid());
		return;
	}
	for (int i = 1023; i > 900 && !free_port; i--) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)i) };
		int s = socket(AF_INET, SOCK_STREAM, 0);
		inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
		if (bind(s, (struct sockaddr *)&a, sizeof(a)) == 0)
			free_port = i;
		close(s);
	}
	snprintf(port, sizeof(port), "%d", free_port);
	snprintf(rule, sizeof(rule), "%d", free_port);
	snprintf(expect, sizeof(expect), "%d\n", EACCES);
	sandlock_policy_t *p = base_policy();
	sandlock_policy_set(p, "net_allow_bind", rule, NULL);
	run(p, "bind", "tcp", port, out, sizeof(out), NULL);
	is_str(out, "0\n", "control: root binds port %s with its capabilities", port);
	run(p, "capbind", port, "", out, sizeof(out), NULL);
	is_str(out, expect, "control: without CAP_NET_BIND_SERVICE, the kernel's EACCES");
	sandlock_policy_free(p);
	p = with_fn(&c, NONE);
	sandlock_policy_set(p, "net_allow_bind", rule, NULL);
	run(p, "capbind", port, "", out, sizeof(out), NULL);
	is_str(out, expect, "a bind made by the supervisor keeps that EACCES");
	sandlock_policy_free(p);
}

/* A UNIX socket's bind the callback allowed is the kernel's, but only where no other thread could
 * swap an IP socket in under its number before the kernel reads it again. */
static void bind_unix(void)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], expect[16];
	struct ctl c = { 0 };

	if (!tap_mkdtemp(dir, sizeof(dir), "test-policy-fn")) {
		ok(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	sandlock_policy_t *p = base_policy();
	sandlock_policy_add_fs_write(p, dir);
	snprintf(path, sizeof(path), "%s/a.sock", dir);
	run(p, "unixbind", path, "1", out, sizeof(out), NULL);
	is_str(out, "0\n", "control: without the policy_fn a threaded process binds a UNIX socket");
	unlink(path);
	sandlock_policy_free(p);

	p = with_fn(&c, NONE);
	sandlock_policy_add_fs_write(p, dir);
	run(p, "unixbind", path, "0", out, sizeof(out), NULL);
	is_str(out, "0\n", "control: with it, a UNIX socket's bind in a single-threaded process");
	unlink(path);
	run(p, "unixbind", path, "1", out, sizeof(out), NULL);
	snprintf(expect, sizeof(expect), "%d\n", EPERM);
	is_str(out, expect, "a UNIX socket's bind by a thread sharing its descriptors: EPERM");
	ok(access(path, F_OK) < 0, "  nothing was bound");
	unlink(path);
	rmdir(dir);
	sandlock_policy_free(p);
}

/* An extension handler refusing the opens marked O_NOCTTY with EACCES. */
static int h_eacces(const sandlock_notif_t *n, sandlock_mem_t *m, sandlock_action_t *a, void *u)
{
	(void)m, (void)u;
	if (n->args[2] & O_NOCTTY)
		return sandlock_action_errno(a, EACCES);
	return sandlock_action_continue(a);
}

/* A call the callback allows still goes through the extension handlers of its syscall. */
static void with_handlers(void)
{
	struct ctl c = { 0 };
	sandlock_policy_t *p = with_fn(&c, NONE);
	sandlock_handler_t *h = sandlock_handler_new(h_eacces, NULL, NULL, 0);
	sandlock_handler_reg_t reg = { .syscall = "openat", .handler = h };
	char expect[16];

	run(p, "open", self_path, "", out, sizeof(out), NULL);
	is_str(out, "0\n", "control: an open the policy_fn allows, no handler: opened");
	run_regs = &reg;
	run_n_regs = 1;
	run(p, "open", self_path, "", out, sizeof(out), NULL);
	snprintf(expect, sizeof(expect), "%d\n", EACCES);
	is_str(out, expect, "an allowed open with an EACCES handler on openat: EACCES");
	run_regs = NULL;
	run_n_regs = 0;
	sandlock_handler_free(h);
	sandlock_policy_free(p);
}

/* Logging mode: a syscall the filter denies whole is the judge's, never shown to the callback. */
static void blocked_unseen(void)
{
	struct ctl c = { 0 };
	struct audit_seen seen = { 0 };
	sandlock_policy_t *p = with_fn(&c, NONE);
	char port[16];

	snprintf(port, sizeof(port), "%d", srv_port);
	run_events = SANDLOCK_EVENTS_DENIALS;
	run(p, "connect", port, "1", out, sizeof(out), &seen);
	is_str(out, "0\n", "control: logging mode, connect allowed and shown");
	ok(atomic_load(&c.connects) == 1, "control: the callback saw it");
	sandlock_policy_set(p, "extra_deny_syscalls", "connect", NULL);
	atomic_store(&c.connects, 0);
	run(p, "connect", port, "1", out, sizeof(out), &seen);
	is_str(out, "1\n", "a blocked connect in logging mode: EPERM");
	is_int(atomic_load(&c.connects), 0, "the callback never saw the blocked connect");
	run_events = 0;
	sandlock_policy_free(p);
}

static void confine_refused(void)
{
	struct ctl c = { 0 };
	sandlock_policy_t *p = system_policy();
	sandlock_error_t *err = NULL;

	sandlock_policy_set_policy_fn(p, policy, &c, NULL);
	is_int(sandlock_confine(p, &err), -EINVAL, "sandlock_confine refuses a policy_fn");
	ok(err && strstr(sandlock_error_message(err), "policy_fn"), "naming it: %s",
	   err ? sandlock_error_message(err) : "(none)");
	sandlock_error_free(err);
	sandlock_policy_free(p);
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		/* _exit: an ASan build's leak check at exit cannot read /proc in the sandbox. */
		int code = helper(argc, argv);
		fflush(stdout);
		_exit(code);
	}
	if (!realpath("/proc/self/exe", self_path))
		return 1;
	snprintf(self_dir, sizeof(self_dir), "%s", self_path);
	*strrchr(self_dir, '/') = '\0';
	if (sandlock_landlock_abi_version() < 1) {
		printf("1..0 # SKIP Landlock is not available\n");
		return 0;
	}
	server_start();
	lifetime();
	network();
	addresses();
	limits();
	exec_argv();
	bind_binding();
	bind_unix();
	bind_privileged();
	with_handlers();
	blocked_unseen();
	confine_refused(); /* last: were it applied, it would confine this process */
	return done_testing();
}
