/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-seccomp-log: the argument filters in logging mode. Every call the plain supervised
 * program refuses by its arguments goes to the supervisor in the logging program, and the rule
 * table the build fills (plan.arg_denied) gives it the same errno; every call the plain program
 * allows or traps is unchanged, and no rule of the table matches it. Run on the BPF interpreter.
 */
#include <errno.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "plan/seccomp.h"
#include "policy/policy.h"
#include "policy/rules.h"
#include "supervisor/dispatch.h"
#include "tap.h"
#include "bpf-vm.h"

struct probe {
	const char *name;
	int nr;
	uint64_t a[3];
};

static const struct probe probes[] = {
	{ "clone(SIGCHLD)", __NR_clone, { SIGCHLD } },
	{ "clone(CLONE_NEWUSER)", __NR_clone, { CLONE_NEWUSER | SIGCHLD } },
	{ "clone(CLONE_NEWNET | CLONE_NEWNS)", __NR_clone, { CLONE_NEWNET | CLONE_NEWNS } },
	{ "clone(CLONE_PARENT)", __NR_clone, { CLONE_PARENT | SIGCHLD } },
	{ "clone(thread)",
	  __NR_clone,
	  { CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD } },
	{ "clone3", __NR_clone3, { 0, 88 } },
	{ "ioctl(TIOCSTI)", __NR_ioctl, { 0, TIOCSTI } },
	{ "ioctl(TIOCSTI | garbage << 32)", __NR_ioctl, { 0, 0xdeadbeef00000000ULL | TIOCSTI } },
	{ "ioctl(SIOCGIFVLAN)", __NR_ioctl, { 0, SIOCGIFVLAN } },
	{ "ioctl(TIOCGWINSZ)", __NR_ioctl, { 0, TIOCGWINSZ } },
	{ "ioctl(FS_IOC_SETFLAGS)", __NR_ioctl, { 0, 0x40086602 } },
	{ "prctl(PR_SET_SECUREBITS)", __NR_prctl, { PR_SET_SECUREBITS } },
	{ "prctl(PR_SET_PTRACER)", __NR_prctl, { PR_SET_PTRACER } },
	{ "prctl(PR_SET_NAME)", __NR_prctl, { PR_SET_NAME } },
	{ "prctl(PR_CAPBSET_DROP)", __NR_prctl, { PR_CAPBSET_DROP } },
	{ "socket(AF_INET, SOCK_DGRAM)", __NR_socket, { AF_INET, SOCK_DGRAM } },
	{ "socket(AF_INET6, SOCK_DGRAM, IPPROTO_UDP)",
	  __NR_socket,
	  { AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP } },
	{ "socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP)",
	  __NR_socket,
	  { AF_INET, SOCK_DGRAM, IPPROTO_ICMP } },
	{ "socket(AF_INET, SOCK_RAW)", __NR_socket, { AF_INET, SOCK_RAW } },
	{ "socket(AF_INET, SOCK_STREAM)", __NR_socket, { AF_INET, SOCK_STREAM } },
	{ "socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP)",
	  __NR_socket,
	  { AF_INET, SOCK_STREAM, IPPROTO_SCTP } },
	{ "socket(AF_PACKET)", __NR_socket, { AF_PACKET, SOCK_RAW } },
	{ "socket(AF_VSOCK)", __NR_socket, { AF_VSOCK, SOCK_STREAM } },
	{ "socket(AF_UNIX)", __NR_socket, { AF_UNIX, SOCK_STREAM } },
	{ "socket(AF_NETLINK, NETLINK_ROUTE)", __NR_socket, { AF_NETLINK, SOCK_RAW, 0 } },
	{ "socket(AF_NETLINK, NETLINK_SOCK_DIAG)", __NR_socket, { AF_NETLINK, SOCK_RAW, 4 } },
	{ "setsockopt(IP_OPTIONS)", __NR_setsockopt, { 3, IPPROTO_IP, IP_OPTIONS } },
	{ "setsockopt(IPV6_RTHDR)", __NR_setsockopt, { 3, IPPROTO_IPV6, IPV6_RTHDR } },
	{ "setsockopt(SO_REUSEADDR)", __NR_setsockopt, { 3, SOL_SOCKET, SO_REUSEADDR } },
	{ "setpriority(PRIO_USER, 0)", __NR_setpriority, { PRIO_USER, 0 } },
	{ "setpriority(PRIO_PROCESS, 0)", __NR_setpriority, { PRIO_PROCESS, 0 } },
	{ "setpriority(PRIO_USER, 5)", __NR_setpriority, { PRIO_USER, 5 } },
	{ "setpriority(PRIO_PROCESS, 5)", __NR_setpriority, { PRIO_PROCESS, 5 } },
	{ "ioprio_set(IOPRIO_WHO_USER)", __NR_ioprio_set, { 3 } },
	{ "open_tree_attr", 467, { 0 } },
	{ "mount", __NR_mount, { 0 } },
	{ "getpid", __NR_getpid, { 0 } },
};

static int build(const struct sandlock_policy *p, int log, struct seccomp_arg_rules *rules,
		 struct sock_fprog *prog)
{
	struct trap traps[DISPATCH_MAX_TRAPS];
	size_t n = dispatch_trap_set(p, traps, DISPATCH_MAX_TRAPS);
	struct sandlock_error *e = NULL;
	int r = seccomp_program_build_log(p, 1, log, traps, n, rules, prog, &e);

	if (r < 0)
		diag("seccomp_program_build_log: %d %s", r, e ? e->message : "");
	error_free(e);
	return r;
}

/* Each probe, under the plain program and the logging one. */
static void compare(const char *label, const struct sandlock_policy *p)
{
	struct sock_fprog plain = { 0 }, logged = { 0 };
	struct seccomp_arg_rules rules = { 0 };

	if (!ok(build(p, 0, NULL, &plain) == 0 && build(p, 1, &rules, &logged) == 0,
		"%s: both programs built", label))
		return;
	ok(rules.n > 0, "%s: the logging build kept %zu argument rules", label, rules.n);
	for (size_t i = 0; i < ELEMENTSOF(probes); i++) {
		const struct probe *pr = &probes[i];
		struct seccomp_data d = { .nr = pr->nr,
					  .arch = X86,
					  .args = { pr->a[0], pr->a[1], pr->a[2] } };
		uint32_t a = eval(&plain, X86, pr->nr, pr->a[0], pr->a[1], pr->a[2]);
		uint32_t b = eval(&logged, X86, pr->nr, pr->a[0], pr->a[1], pr->a[2]);
		const struct seccomp_arg_rule *m = seccomp_arg_rule_match(&rules, &d);
		char ba[48], bb[48];
		/* A whole-syscall denial (the blocklist) goes to the supervisor too, by
		 * plan.blocked, not by this table; clone3 stays ENOSYS, a fallback and no denial.
		 */
		int whole = pr->nr == __NR_mount;
		if ((a & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO && !whole &&
		    pr->nr != __NR_clone3)
			ok(b == SECCOMP_RET_USER_NOTIF && m && (uint32_t)m->err == (a & 0xffff),
			   "%s: %s: %s -> the supervisor, errno %d (got %s, rule errno %d)", label,
			   pr->name, action_name(a, ba, sizeof(ba)), (int)(a & 0xffff),
			   action_name(b, bb, sizeof(bb)), m ? m->err : 0);
		else if (!whole)
			ok(a == b && !m, "%s: %s: %s either way, no rule (got %s%s)", label,
			   pr->name, action_name(a, ba, sizeof(ba)), action_name(b, bb, sizeof(bb)),
			   m ? ", a rule matched" : "");
	}
	seccomp_arg_rules_done(&rules);
	seccomp_program_done(&plain);
	seccomp_program_done(&logged);
}

int main(void)
{
	struct sandlock_policy p = { 0 };

	compare("default", &p);
	/* What a udp:// rule leaves the policy needing (policy-net.c): UDP sockets. */
	struct sandlock_policy udp = { .net.needs.sockets = NET_PROTO_UDP };
	compare("UDP sockets", &udp);
	return done_testing();
}
