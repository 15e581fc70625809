/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-seccomp-log: the argument filters in logging mode. Every call the plain supervised
 * program refuses by its arguments goes to the supervisor in the logging program, and the rule
 * table the build fills (plan.arg_denied) gives it the same errno; every call the plain program
 * allows or traps is unchanged, and no rule of the table matches it. Run on the BPF interpreter,
 * with a list of calls, then with calls made from each rule of the table (matching it, with
 * random bits where it compares none, and missing each of its comparisons), under the trap set
 * of the policy and under every trap there is.
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
#include "plan/traps.h"
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
	{ "socket(AF_NETLINK | garbage << 32, NETLINK_SOCK_DIAG)",
	  __NR_socket,
	  { 0x100000000ULL | AF_NETLINK, SOCK_RAW, 4 } },
	{ "socket(AF_INET | garbage << 32, SOCK_DGRAM)",
	  __NR_socket,
	  { 0x100000000ULL | AF_INET, SOCK_DGRAM, 0 } },
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

/* ---- every rule of the table, with calls made to match it and calls around it ----------- */

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A value of an argument for which @c holds (@variant 0: the plainest one; others: bits the
 * comparison does not look at set at random, or the next value up), or, with @miss, one for
 * which it does not. */
static uint64_t value_for(const struct scmp_arg_cmp *c, unsigned variant, int miss)
{
	uint64_t r = variant ? next_random() : 0, a = c->datum_a;

	switch (c->op) {
	case SCMP_CMP_EQ:
		return miss ? a ^ (variant ? r | 1 : 1) : a;
	case SCMP_CMP_NE:
		return miss ? a : a ^ (variant ? r | 1 : 1);
	case SCMP_CMP_GT:
		return miss ? a - (r % (a + 1)) : a + 1 + (variant ? r % (UINT64_MAX - a) : 0);
	case SCMP_CMP_GE:
		return miss ? (a ? a - 1 - r % a : a) : a + (variant ? r % (UINT64_MAX - a + 1) : 0);
	case SCMP_CMP_LT:
		return miss ? a + (variant ? r % (UINT64_MAX - a + 1) : 0) : (a ? r % a : 0);
	case SCMP_CMP_LE:
		return miss ? a + 1 : (variant ? r % (a + 1) : a);
	case SCMP_CMP_MASKED_EQ:
		/* The value's own bits, anything outside the mask; a miss flips one masked bit. */
		if (miss && c->datum_a)
			return (c->datum_b ^ (c->datum_a & -c->datum_a)) | (r & ~c->datum_a);
		return c->datum_b | (r & ~c->datum_a);
	default:
		return 0;
	}
}

/* The plain program's answer to @d against the logging program's and the supervisor's (the
 * rule table): the same errno for a refused call, the same action and no rule for the others. */
static int agree(const struct sock_fprog *plain, const struct sock_fprog *logged,
		 const struct seccomp_arg_rules *rules, const struct seccomp_data *d, char *why,
		 size_t size)
{
	struct bpf_outcome pa = bpf_run(plain, d), pb = bpf_run(logged, d);
	const struct seccomp_arg_rule *m = seccomp_arg_rule_match(rules, d);
	char ba[48], bb[48];

	if (!pa.ok || !pb.ok) {
		snprintf(why, size, "interpreter: %.100s", !pa.ok ? pa.err : pb.err);
		return 0;
	}
	uint32_t a = pa.ret, b = pb.ret;
	int same = (a & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO
			   ? a == b ? !m
				    : b == SECCOMP_RET_USER_NOTIF && m && (uint32_t)m->err == (a & 0xffff)
			   : a == b && !m;
	if (!same)
		snprintf(why, size, "plain %s, logging %s, rule %s (errno %d)",
			 action_name(a, ba, sizeof(ba)), action_name(b, bb, sizeof(bb)),
			 m ? (m->what ? m->what : "socket") : "none", m ? m->err : 0);
	return same;
}

/* For each rule of the logging build's table: calls that match it (plain and with random bits
 * the rule does not compare) and calls that miss one of its comparisons, each answered alike by
 * both programs (agree). Built with the trap set @traps, so the routes that overlap a rule's
 * syscall are in both programs. */
static void every_rule(const char *label, const struct sandlock_policy *p, const struct trap *traps,
		       size_t n_traps)
{
	struct sock_fprog plain = { 0 }, logged = { 0 };
	struct seccomp_arg_rules rules = { 0 };
	struct sandlock_error *e = NULL;
	size_t calls = 0, bad = 0;
	char why[160] = "";

	int r = seccomp_program_build_log(p, 1, 0, traps, n_traps, NULL, &plain, &e);
	if (r == 0)
		r = seccomp_program_build_log(p, 1, 1, traps, n_traps, &rules, &logged, &e);
	if (!ok(r == 0 && rules.n > 0, "%s: both programs built, %zu rules", label, rules.n)) {
		diag("%s", e ? e->message : "");
		error_free(e);
		return;
	}
	for (size_t i = 0; i < rules.n; i++) {
		const struct seccomp_arg_rule *rule = &rules.v[i];
		for (unsigned variant = 0; variant < 64; variant++) {
			for (int miss = -1; miss < (int)rule->n; miss++) {
				struct seccomp_data d = { .nr = rule->nr,
							  .arch = X86,
							  .instruction_pointer = 0x7f0000001000ULL };
				for (unsigned k = 0; variant && k < 6; k++)
					d.args[k] = next_random() >> (next_random() % 64);
				for (unsigned k = 0; k < rule->n; k++)
					if (rule->cmp[k].arg < 6)
						d.args[rule->cmp[k].arg] = value_for(
							&rule->cmp[k], variant, (int)k == miss);
				calls++;
				if (!agree(&plain, &logged, &rules, &d, why, sizeof(why)) &&
				    bad++ == 0)
					diag("%s: rule %zu (nr %d, %s), args %#llx %#llx %#llx: %s",
					     label, i, rule->nr, rule->what ? rule->what : "socket",
					     (unsigned long long)d.args[0],
					     (unsigned long long)d.args[1],
					     (unsigned long long)d.args[2], why);
			}
		}
	}
	ok(bad == 0, "%s: every rule: %zu calls around the rules, %zu answered otherwise", label,
	   calls, bad);
	seccomp_arg_rules_done(&rules);
	seccomp_program_done(&plain);
	seccomp_program_done(&logged);
}

/* The trap set of a sandbox that needs everything (logging mode included): every route that
 * can share a syscall with a rule (clone under max_processes, ioctl under a workdir, prctl,
 * setpriority, socket, the sends). */
static size_t all_traps(struct trap *traps)
{
	struct plan_needs n = { 0 };

	memset(&n, 0xff, sizeof(n));
	n.events = SANDLOCK_EVENTS_DENIALS;
	return trap_set_of(&n, traps, DISPATCH_MAX_TRAPS);
}

static void rules_everywhere(void)
{
	static const uint32_t sockets[] = { 0, NET_PROTO_UDP, NET_PROTO_ICMP,
					    NET_PROTO_UDP | NET_PROTO_ICMP };
	struct trap traps[DISPATCH_MAX_TRAPS];
	char label[64];

	for (size_t i = 0; i < ELEMENTSOF(sockets); i++) {
		struct sandlock_policy p = { .net.needs.sockets = sockets[i] };
		size_t n = dispatch_trap_set(&p, traps, DISPATCH_MAX_TRAPS);
		snprintf(label, sizeof(label), "sockets %#x, its own traps", sockets[i]);
		every_rule(label, &p, traps, n);
		n = all_traps(traps);
		snprintf(label, sizeof(label), "sockets %#x, every trap", sockets[i]);
		every_rule(label, &p, traps, n);
	}
}

int main(void)
{
	struct sandlock_policy p = { 0 };

	compare("default", &p);
	/* What a udp:// rule leaves the policy needing (policy-net.c): UDP sockets. */
	struct sandlock_policy udp = { .net.needs.sockets = NET_PROTO_UDP };
	compare("UDP sockets", &udp);
	rules_everywhere();
	return done_testing();
}
