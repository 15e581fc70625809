/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plan/seccomp: blocklist, argument filters and trap set compiled with libseccomp into a BPF
 * program held in memory. Runs in the parent only.
 */
#include <errno.h>
#include <linux/sockios.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <netinet/in.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fd-util.h"
#include "policy/rules.h"
#include "seccomp.h"
#include "strv.h"

const char *const seccomp_default_blocklist[] = {
	"mount",
	"umount2",
	/* The new mount API (5.2, mount_setattr 5.12): detached trees, moves, attribute changes
	 * of a mount the sandbox can see (a host bind mount made read-only, for one, by a
	 * sandbox started as root). */
	"open_tree",
	"move_mount",
	"fsopen",
	"fsconfig",
	"fsmount",
	"fspick",
	"mount_setattr",
	"pivot_root",
	"swapon",
	"swapoff",
	"reboot",
	"sethostname",
	"setdomainname",
	"kexec_load",
	"kexec_file_load",
	"init_module",
	"finit_module",
	"delete_module",
	"unshare",
	"setns",
	"perf_event_open",
	"bpf",
	"userfaultfd",
	"keyctl",
	"add_key",
	"request_key",
	"ptrace",
	"process_vm_readv",
	"process_vm_writev",
	"open_by_handle_at",
	"name_to_handle_at",
	"ioperm",
	"iopl",
	"quotactl",
	"acct",
	"lookup_dcookie",
	"nfsservctl",
	"io_uring_setup",
	"io_uring_enter",
	"io_uring_register",
	"personality",
	NULL,
};

static const char *const sysv_ipc_members[] = {
	"shmget", "shmat",  "shmdt", "shmctl", "msgget",     "msgsnd", "msgrcv",
	"msgctl", "semget", "semop", "semctl", "semtimedop", NULL,
};

/* Groups of the default blocklist that extra_allow_syscalls may re-allow and extra_deny_syscalls
 * may name. Blocked unless allowed. */
const struct syscall_group seccomp_groups[] = {
	{ "sysv_ipc", sysv_ipc_members },
	{ NULL, NULL },
};

const struct syscall_group *seccomp_group_find(const char *name)
{
	for (const struct syscall_group *g = seccomp_groups; g->name; g++)
		if (strcmp(g->name, name) == 0)
			return g;
	return NULL;
}

static int names_contain(const char *const *names, const char *s)
{
	for (size_t i = 0; names[i]; i++)
		if (strcmp(names[i], s) == 0)
			return 1;
	return 0;
}

static const struct syscall_group *group_of(const char *syscall)
{
	for (const struct syscall_group *g = seccomp_groups; g->name; g++)
		if (names_contain(g->members, syscall))
			return g;
	return NULL;
}

int seccomp_check_names(const struct sandlock_policy *p, struct sandlock_error **reterr)
{
	for (size_t i = 0; p->extra_allow && p->extra_allow[i]; i++) {
		const char *n = p->extra_allow[i];

		if (seccomp_group_find(n))
			continue;
		if (seccomp_syscall_resolve_name(n) != __NR_SCMP_ERROR)
			return error_set(
				reterr, -EINVAL,
				"extra_allow_syscalls: %s is a syscall, only groups can be "
				"re-allowed (groups: sysv_ipc)",
				n);
		return error_set(reterr, -EINVAL,
				 "extra_allow_syscalls: unknown group %s (groups: sysv_ipc)", n);
	}
	for (size_t i = 0; p->extra_deny && p->extra_deny[i]; i++) {
		const char *n = p->extra_deny[i];
		const struct syscall_group *g = seccomp_group_find(n);

		if (g && strv_contains(p->extra_allow, n))
			return error_set(
				reterr, -EINVAL,
				"extra_deny_syscalls: syscall group %s is both allowed and denied",
				n);
		if (g)
			continue;
		int nr = seccomp_syscall_resolve_name(n);
		if (nr == __NR_SCMP_ERROR)
			return error_set(reterr, -EINVAL, "extra_deny_syscalls: unknown syscall %s",
					 n);
		/* libseccomp knows every architecture's names and gives the ones this
		 * architecture lacks (socketcall, ipc on x86_64) negative pseudo numbers, which
		 * would deny nothing. */
		if (nr < 0)
			return error_set(
				reterr, -EINVAL,
				"extra_deny_syscalls: %s does not exist on this architecture", n);
		g = group_of(n);
		if (g && strv_contains(p->extra_allow, g->name))
			return error_set(reterr, -EINVAL,
					 "extra_deny_syscalls: %s is a member of %s, which "
					 "extra_allow_syscalls re-allows",
					 n, g->name);
	}
	return 0;
}

/* Calls @fn for the number of every syscall denied under @p (duplicates possible). */
static int for_each_denied(const struct sandlock_policy *p, int (*fn)(int nr, void *u), void *u)
{
	const char *const *lists[4] = { seccomp_default_blocklist, NULL, NULL, NULL };
	size_t n = 1;
	int r;

	for (const struct syscall_group *g = seccomp_groups; g->name; g++)
		if (!strv_contains(p->extra_allow, g->name) ||
		    strv_contains(p->extra_deny, g->name))
			lists[n++] = g->members;
	for (size_t l = 0; l < n; l++)
		for (size_t i = 0; lists[l][i]; i++) {
			int nr = seccomp_syscall_resolve_name(lists[l][i]);
			if (nr != __NR_SCMP_ERROR && (r = fn(nr, u)) != 0)
				return r;
		}
	for (size_t i = 0; p->extra_deny && p->extra_deny[i]; i++) {
		if (seccomp_group_find(p->extra_deny[i]))
			continue; /* expanded above */
		int nr = seccomp_syscall_resolve_name(p->extra_deny[i]);
		if (nr != __NR_SCMP_ERROR && (r = fn(nr, u)) != 0)
			return r;
	}
	return 0;
}

static int match_nr(int nr, void *u)
{
	return nr == *(int *)u;
}

int seccomp_is_denied(const struct sandlock_policy *p, int nr)
{
	return for_each_denied(p, match_nr, &nr);
}

struct deny_ctx {
	scmp_filter_ctx ctx;
	int log; /* logging mode: the supervisor answers them (SCMP_ACT_NOTIFY) */
	uint8_t seen[SECCOMP_BLOCK_NR];
};

static int add_deny(int nr, void *u)
{
	struct deny_ctx *d = u;

	if (nr >= 0 && nr < (int)sizeof(d->seen)) {
		if (d->seen[nr])
			return 0;
		d->seen[nr] = 1;
	}
	/* clone3 stays ENOSYS even when denied: with EPERM, glibc would not fall back to
	 * clone(2) and could not create threads. */
	int err = nr == SCMP_SYS(clone3) ? ENOSYS : EPERM;
	/* Logging mode: the supervisor answers the same errno (plan.blocked) and logs it. A
	 * number past the table is the kernel's to refuse, unlogged. sendmsg too: the launch
	 * hands the listener over with it, so nobody could answer it then (the launch fails
	 * at that step instead, as without the log). */
	int notify = d->log && nr >= 0 && nr < SECCOMP_BLOCK_NR && nr != SCMP_SYS(sendmsg);
	int r = seccomp_rule_add(d->ctx, notify ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO((uint32_t)err),
				 nr, 0);
	return r == -EEXIST ? 0 : r;
}

static int block_nr(struct seccomp_block *tbl, int nr, uint8_t kind, size_t index)
{
	if (nr < 0 || nr >= SECCOMP_BLOCK_NR)
		return -1;
	tbl[nr] = (struct seccomp_block){ .kind = kind,
					  .err = nr == SCMP_SYS(clone3) ? ENOSYS : EPERM,
					  .index = (uint16_t)index };
	return 0;
}

void seccomp_blocked_table(const struct sandlock_policy *p, struct seccomp_block *tbl)
{
	/* Lowest precedence first: each later step overwrites. */
	for (size_t g = 0; seccomp_groups[g].name; g++) {
		if (strv_contains(p->extra_allow, seccomp_groups[g].name))
			continue;
		for (size_t i = 0; seccomp_groups[g].members[i]; i++)
			block_nr(tbl, seccomp_syscall_resolve_name(seccomp_groups[g].members[i]),
				 SECCOMP_BLOCK_GROUP, g);
	}
	for (size_t i = 0; p->extra_deny && p->extra_deny[i]; i++) {
		const struct syscall_group *g = seccomp_group_find(p->extra_deny[i]);
		for (size_t k = 0; g && g->members[k]; k++)
			block_nr(tbl, seccomp_syscall_resolve_name(g->members[k]),
				 SECCOMP_BLOCK_EXTRA, i);
		if (!g)
			block_nr(tbl, seccomp_syscall_resolve_name(p->extra_deny[i]),
				 SECCOMP_BLOCK_EXTRA, i);
	}
	for (size_t i = 0; seccomp_default_blocklist[i]; i++)
		block_nr(tbl, seccomp_syscall_resolve_name(seccomp_default_blocklist[i]),
			 SECCOMP_BLOCK_DEFAULT, 0);
}

/* Where the argument filters' rules go: the filter, and in logging mode (@log set) the table the
 * supervisor matches the calls they hand it against (seccomp-args.c). */
struct arg_sink {
	scmp_filter_ctx ctx;
	struct seccomp_arg_rules *log;
};

/* A rule denying @nr with errno @err where the @n comparisons hold; in logging mode the calls go
 * to the supervisor, which answers @err and logs what was refused (@what, static). The rules
 * that only steer a program to a fallback (clone3, statmount, TCP Fast Open) are not added
 * here: they refuse nothing a user could grant or would ask about. */
static int deny_rule(struct arg_sink *s, const char *what, int nr, int err, unsigned n,
		     const struct scmp_arg_cmp *cmp)
{
	if (!s->log)
		return seccomp_rule_add_array(s->ctx, SCMP_ACT_ERRNO((uint32_t)err), nr, n, cmp);
	int r = seccomp_arg_rules_add(s->log, what, nr, err, n, cmp);
	return r < 0 ? r : seccomp_rule_add_array(s->ctx, SCMP_ACT_NOTIFY, nr, n, cmp);
}

/* One rule per value: @nr with argument @arg masked by @mask equal to a value -> errno @err. */
static int add_masked_rules(scmp_filter_ctx ctx, int nr, int err, unsigned arg, uint64_t mask,
			    const uint64_t *values, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct scmp_arg_cmp cmp = {
			.arg = arg, .op = SCMP_CMP_MASKED_EQ, .datum_a = mask, .datum_b = values[i]
		};
		int r = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO((uint32_t)err), nr, 1, &cmp);
		if (r < 0)
			return r;
	}
	return 0;
}

/* add_masked_rules for the denials, each named (@names[i], static). */
static int deny_masked(struct arg_sink *s, int nr, int err, unsigned arg, uint64_t mask,
		       const uint64_t *values, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct scmp_arg_cmp cmp = {
			.arg = arg, .op = SCMP_CMP_MASKED_EQ, .datum_a = mask, .datum_b = values[i]
		};
		int r = deny_rule(s, names[i], nr, err, 1, &cmp);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Datagram sockets of @family (IPv4 or IPv6) whose protocol (argument 2, compared on all 64
 * bits, so garbage in the upper half is refused too) is not one of @allowed (@n, ascending):
 * EPERM. libseccomp takes one comparison per argument and rule, so the refused values below
 * the highest allowed one are listed one by one, and everything above it in one rule. */
static int add_dgram_rules(struct arg_sink *s, uint64_t family, const uint64_t *allowed, size_t n)
{
	const uint64_t low32 = 0xffffffffu, sock_type_mask = 0xf;
	struct scmp_arg_cmp cmp[3] = {
		SCMP_A0(SCMP_CMP_MASKED_EQ, low32, family),
		SCMP_A1(SCMP_CMP_MASKED_EQ, sock_type_mask, SOCK_DGRAM),
	};
	int r = 0;

	if (n == 0)
		return deny_rule(s, NULL, SCMP_SYS(socket), EPERM, 2, cmp);
	for (uint64_t v = 0, i = 0; r == 0 && v < allowed[n - 1]; v++) {
		if (i < n && allowed[i] == v) {
			i++;
			continue;
		}
		cmp[2] = (struct scmp_arg_cmp)SCMP_A2(SCMP_CMP_EQ, v);
		r = deny_rule(s, NULL, SCMP_SYS(socket), EPERM, 3, cmp);
	}
	cmp[2] = (struct scmp_arg_cmp)SCMP_A2(SCMP_CMP_GT, allowed[n - 1]);
	return r ? r : deny_rule(s, NULL, SCMP_SYS(socket), EPERM, 3, cmp);
}

/* socket(2) on IPv4/IPv6: TCP (SOCK_STREAM with protocol 0 or IPPROTO_TCP), which Landlock's
 * NetTcp rules cover, and the datagram sockets the rules name (@sockets, NET_PROTO_*): UDP
 * (SOCK_DGRAM with 0 or IPPROTO_UDP) with a udp:// or bare rule, kernel ping sockets
 * (SOCK_DGRAM with IPPROTO_ICMP, IPPROTO_ICMPV6) with an icmp:// rule; the supervisor checks
 * where they send. Other datagram protocols (UDP-Lite) and raw sockets are EPERM; so are
 * SOCK_SEQPACKET/SOCK_RDM/SOCK_DCCP, SOCK_PACKET (which the kernel turns into an AF_PACKET
 * socket) and SOCK_STREAM with another protocol (MPTCP, SCTP), which Landlock does not restrict.
 * Other types the kernel rejects itself. Families other than UNIX, IPv4, IPv6 and netlink are
 * EAFNOSUPPORT, so AF_PACKET and friends stay closed even to a sandbox running as root. */
static int add_socket_rules(struct arg_sink *s, uint32_t sockets)
{
	static const uint64_t ip_families[] = { AF_INET, AF_INET6 };
	static const uint64_t denied_types[] = {
		SOCK_RAW, SOCK_RDM, SOCK_SEQPACKET, SOCK_DCCP, SOCK_PACKET,
	};
	const uint64_t low32 = 0xffffffffu, sock_type_mask = 0xf;
	uint64_t families[AF_NETLINK];
	size_t n = 0;
	int r;

	for (size_t f = 0; f < ELEMENTSOF(ip_families); f++) {
		uint64_t dgram[3];
		size_t nd = 0;
		if (sockets & NET_PROTO_UDP)
			dgram[nd++] = 0;
		if ((sockets & NET_PROTO_ICMP) && ip_families[f] == AF_INET)
			dgram[nd++] = IPPROTO_ICMP;
		if (sockets & NET_PROTO_UDP)
			dgram[nd++] = IPPROTO_UDP;
		if ((sockets & NET_PROTO_ICMP) && ip_families[f] == AF_INET6)
			dgram[nd++] = IPPROTO_ICMPV6;
		r = add_dgram_rules(s, ip_families[f], dgram, nd);
		if (r < 0)
			return r;
		for (size_t t = 0; t < ELEMENTSOF(denied_types); t++) {
			const struct scmp_arg_cmp c[] = {
				SCMP_A0(SCMP_CMP_MASKED_EQ, low32, ip_families[f]),
				SCMP_A1(SCMP_CMP_MASKED_EQ, sock_type_mask, denied_types[t]),
			};
			r = deny_rule(s, NULL, SCMP_SYS(socket), EPERM, 2, c);
			if (r < 0)
				return r;
		}
		/* A protocol above IPPROTO_TCP, compared on 64 bits: a negative protocol or
		 * garbage in the upper half is refused too; 1..5 the kernel rejects. */
		const struct scmp_arg_cmp c[] = {
			SCMP_A0(SCMP_CMP_MASKED_EQ, low32, ip_families[f]),
			SCMP_A1(SCMP_CMP_MASKED_EQ, sock_type_mask, SOCK_STREAM),
			SCMP_A2(SCMP_CMP_GT, IPPROTO_TCP, 0),
		};
		r = deny_rule(s, NULL, SCMP_SYS(socket), EPERM, 3, c);
		if (r < 0)
			return r;
	}
	/* Netlink: NETLINK_ROUTE (0) only. The others show the host (SOCK_DIAG lists its
	 * sockets, KOBJECT_UEVENT its devices, AUDIT, NETFILTER, GENERIC families...):
	 * EPROTONOSUPPORT, as for a protocol the kernel lacks. The protocol is compared on all
	 * 64 bits, so garbage in the upper half is refused too. Added before the families' rule
	 * below, which a netlink family with garbage in its upper half matches as well: the filter
	 * answers such a call with this rule's errno, and the logging mode's table, matched in
	 * order (seccomp_arg_rule_match), must name the same rule first. */
	const struct scmp_arg_cmp netlink[] = {
		SCMP_A0(SCMP_CMP_MASKED_EQ, low32, AF_NETLINK),
		SCMP_A2(SCMP_CMP_NE, NETLINK_ROUTE, 0),
	};
	r = deny_rule(s, NULL, SCMP_SYS(socket), EPROTONOSUPPORT, 2, netlink);
	if (r < 0)
		return r;
	/* The families below AF_NETLINK one by one; everything above it in one comparison, which
	 * is on the full 64 bits, so garbage in the upper half is refused too. */
	for (uint64_t f = 0; f < AF_NETLINK; f++)
		if (f != AF_UNIX && f != AF_INET && f != AF_INET6)
			families[n++] = f;
	for (size_t i = 0; i < n; i++) {
		const struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, low32, families[i]);
		if ((r = deny_rule(s, NULL, SCMP_SYS(socket), EAFNOSUPPORT, 1, &c)) < 0)
			return r;
	}
	const struct scmp_arg_cmp above = SCMP_A0(SCMP_CMP_GT, AF_NETLINK, 0);
	return deny_rule(s, NULL, SCMP_SYS(socket), EAFNOSUPPORT, 1, &above);
}

/* The argument filters of the default policy. Integer arguments the kernel reads as int are
 * compared on their low 32 bits only (MASKED_EQ with 0xffffffff), so garbage in the upper half
 * of the register cannot slip a request past the filter. */
int seccomp_arg_filtered(int nr)
{
	/* Every syscall add_arg_filters gives a rule, and sendmsg's launch flag. */
	static const int filtered[] = {
		SCMP_SYS(clone),       SCMP_SYS(clone3),	 457 /* statmount */,
		458 /* listmount */,   467 /* open_tree_attr */, SCMP_SYS(ioctl),
		SCMP_SYS(prctl),       SCMP_SYS(socket),	 SCMP_SYS(sendto),
		SCMP_SYS(sendmsg),     SCMP_SYS(sendmmsg),	 SCMP_SYS(setsockopt),
		SCMP_SYS(setpriority), SCMP_SYS(ioprio_set),
	};
	for (size_t i = 0; i < ELEMENTSOF(filtered); i++)
		if (filtered[i] == nr)
			return 1;
	return 0;
}

/* The argument filters of the sends (TCP Fast Open), of setsockopt (source routing) and of the
 * calls that reach every process of the user (setpriority, ioprio_set). */
static int add_send_and_user_filters(struct arg_sink *s, const uint8_t *denied)
{
	const uint64_t low32 = 0xffffffffu;
	int r = 0;

	/* TCP Fast Open connects from sendto/sendmsg/sendmmsg (MSG_FASTOPEN) without connect(),
	 * so past Landlock's CONNECT_TCP check, whose hook is security_socket_connect. Refused
	 * with EOPNOTSUPP, what the kernel says where client TFO is off (net.ipv4.tcp_fastopen),
	 * so clients fall back to connect(). The flags are a register value: no TOCTOU. */
	static const struct {
		int nr;
		unsigned flags_arg;
	} sends[] = { { SCMP_SYS(sendto), 3 },
		      { SCMP_SYS(sendmsg), 2 },
		      { SCMP_SYS(sendmmsg), 3 } };
	for (size_t i = 0; r == 0 && i < ELEMENTSOF(sends); i++) {
		const uint64_t fastopen = MSG_FASTOPEN;
		if (sends[i].nr < 0 || denied[sends[i].nr])
			continue;
		r = add_masked_rules(s->ctx, sends[i].nr, EOPNOTSUPP, sends[i].flags_arg, fastopen,
				     &fastopen, 1);
	}
	/* Source routing: IPv4 options (LSRR/SSRR) and IPv6 routing headers send a packet to a
	 * first hop other than its destination, so a connect or send to an allowed address would
	 * reach another one (IPv4 needs CAP_NET_RAW, which a sandbox run as root keeps). EPERM,
	 * in every sandbox (the control messages that do the same are refused by the
	 * supervisor, handlers/net-send.c). */
	static const struct {
		uint64_t level, name;
		const char *what;
	} routing[] = {
		{ IPPROTO_IP, IP_OPTIONS, "IP_OPTIONS" },
		{ IPPROTO_IPV6, IPV6_RTHDR, "IPV6_RTHDR" },
		{ IPPROTO_IPV6, 5, "IPV6_2292RTHDR" },
		{ IPPROTO_IPV6, 6, "IPV6_2292PKTOPTIONS" },
	};
	for (size_t i = 0; r == 0 && !denied[SCMP_SYS(setsockopt)] && i < ELEMENTSOF(routing);
	     i++) {
		const struct scmp_arg_cmp c[] = {
			SCMP_A1(SCMP_CMP_MASKED_EQ, low32, routing[i].level),
			SCMP_A2(SCMP_CMP_MASKED_EQ, low32, routing[i].name),
		};
		r = deny_rule(s, routing[i].what, SCMP_SYS(setsockopt), EPERM, 2, c);
	}
	/* Every process of the user, inside the sandbox or not: never, whatever "who" says.
	 * (Written without a condition on "who" on purpose: libseccomp 2.5 drops a rule
	 * "which == X && who == 0" when the same action also has "who != 0", which the
	 * unsupervised trap set adds; tests/unit/test-seccomp.c checks both modes.) */
	const struct scmp_arg_cmp prio_user = SCMP_A0(SCMP_CMP_MASKED_EQ, low32, PRIO_USER);
	if (r == 0 && !denied[SCMP_SYS(setpriority)])
		r = deny_rule(s, "PRIO_USER", SCMP_SYS(setpriority), EPERM, 1, &prio_user);
	const struct scmp_arg_cmp ioprio_user =
		SCMP_A0(SCMP_CMP_MASKED_EQ, low32, 3 /* IOPRIO_WHO_USER */);
	if (r == 0 && !denied[SCMP_SYS(ioprio_set)])
		r = deny_rule(s, "IOPRIO_WHO_USER", SCMP_SYS(ioprio_set), EPERM, 1, &ioprio_user);
	return r;
}

static int add_arg_filters(struct arg_sink *s, const uint8_t *denied, uint32_t sockets)
{
	scmp_filter_ctx ctx = s->ctx;
	/* CLONE_NEWTIME (0x80) is absent on purpose: clone(2) reads its low byte as the exit
	 * signal and only clone3 and unshare accept that flag; clone3 is ENOSYS below and
	 * unshare is on the blocklist. */
	/* CLONE_PARENT too: its child would be sandlock's, outside the sandbox's process tree,
	 * and a zombie of the host once it exits. */
	static const uint64_t ns_flags[] = {
		CLONE_NEWNS,   CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
		CLONE_NEWUSER, CLONE_NEWPID,	CLONE_NEWNET, CLONE_PARENT,
	};
	static const char *const ns_names[] = {
		"CLONE_NEWNS",	 "CLONE_NEWCGROUP", "CLONE_NEWUTS", "CLONE_NEWIPC",
		"CLONE_NEWUSER", "CLONE_NEWPID",    "CLONE_NEWNET", "CLONE_PARENT",
	};
	static const uint64_t ioctls[] = {
		TIOCSTI,      TIOCLINUX,      SIOCGIFNAME,    SIOCGIFCONF,    SIOCGIFFLAGS,
		SIOCGIFADDR,  SIOCGIFDSTADDR, SIOCGIFBRDADDR, SIOCGIFNETMASK, SIOCGIFMETRIC,
		SIOCGIFMEM,   SIOCGIFMTU,     SIOCGIFENCAP,   SIOCGIFHWADDR,  SIOCGIFSLAVE,
		SIOCGIFINDEX, SIOCGIFPFLAGS,  SIOCGIFCOUNT,   SIOCGIFBR,      SIOCGIFTXQLEN,
		SIOCGIFMAP,   SIOCETHTOOL,    SIOCGIFVLAN,
	};
	static const char *const ioctl_names[] = {
		"TIOCSTI",	  "TIOCLINUX",	   "SIOCGIFNAME",    "SIOCGIFCONF",
		"SIOCGIFFLAGS",	  "SIOCGIFADDR",   "SIOCGIFDSTADDR", "SIOCGIFBRDADDR",
		"SIOCGIFNETMASK", "SIOCGIFMETRIC", "SIOCGIFMEM",     "SIOCGIFMTU",
		"SIOCGIFENCAP",	  "SIOCGIFHWADDR", "SIOCGIFSLAVE",   "SIOCGIFINDEX",
		"SIOCGIFPFLAGS",  "SIOCGIFCOUNT",  "SIOCGIFBR",	     "SIOCGIFTXQLEN",
		"SIOCGIFMAP",	  "SIOCETHTOOL",   "SIOCGIFVLAN",
	};
	static const uint64_t prctls[] = { PR_SET_SECUREBITS, PR_SET_PTRACER };
	static const char *const prctl_names[] = { "PR_SET_SECUREBITS", "PR_SET_PTRACER" };
	_Static_assert(ELEMENTSOF(ns_names) == ELEMENTSOF(ns_flags), "a name per flag");
	_Static_assert(ELEMENTSOF(ioctl_names) == ELEMENTSOF(ioctls), "a name per ioctl");
	_Static_assert(ELEMENTSOF(prctl_names) == ELEMENTSOF(prctls), "a name per prctl");
	const uint64_t low32 = 0xffffffffu;
	int r = 0;

	for (size_t i = 0; r == 0 && !denied[SCMP_SYS(clone)] && i < ELEMENTSOF(ns_flags); i++)
		r = deny_masked(s, SCMP_SYS(clone), EPERM, 0, ns_flags[i], &ns_flags[i],
				&ns_names[i], 1);
	/* clone3 passes its flags in memory the filter cannot read: answer ENOSYS, and libc
	 * falls back to clone(2), whose flags the rules above see. */
	if (r == 0 && !denied[SCMP_SYS(clone3)])
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	/* statmount and listmount (6.8) read the host's mount table, past the sandbox's view of
	 * /proc/mounts and mountinfo (and past a policy without /proc): ENOSYS, what an older
	 * kernel says, so programs fall back to /proc. By number: libseccomp 2.5 names neither. */
	static const int mount_reads[] = { 457 /* statmount */, 458 /* listmount */ };
	for (size_t i = 0; r == 0 && i < ELEMENTSOF(mount_reads); i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), mount_reads[i], 0);
	/* open_tree_attr (6.15), open_tree with mount attributes: EPERM with the rest of the
	 * mount API in the blocklist. By number: libseccomp 2.5 does not name it. */
	if (r == 0)
		r = deny_rule(s, "open_tree_attr", 467 /* open_tree_attr */, EPERM, 0, NULL);
	if (r == 0 && !denied[SCMP_SYS(ioctl)])
		r = deny_masked(s, SCMP_SYS(ioctl), EPERM, 1, low32, ioctls, ioctl_names,
				ELEMENTSOF(ioctls));
	if (r == 0 && !denied[SCMP_SYS(prctl)])
		r = deny_masked(s, SCMP_SYS(prctl), EPERM, 0, low32, prctls, prctl_names,
				ELEMENTSOF(prctls));
	if (r == 0 && !denied[SCMP_SYS(socket)])
		r = add_socket_rules(s, sockets);
	if (r == 0)
		r = add_send_and_user_filters(s, denied);
	return r;
}

static int export_program(scmp_filter_ctx ctx, struct sock_fprog *ret)
{
	_cleanup_close_ int fd = memfd_create("sandlock-bpf", MFD_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	int r = seccomp_export_bpf(ctx, fd);
	if (r < 0)
		return r;
	off_t size = lseek(fd, 0, SEEK_END);
	if (size <= 0 || size % sizeof(struct sock_filter) != 0 ||
	    size / sizeof(struct sock_filter) > BPF_MAXINSNS)
		return -E2BIG;
	struct sock_filter *insns = malloc((size_t)size);
	if (!insns)
		return -ENOMEM;
	if (pread(fd, insns, (size_t)size, 0) != size) {
		free(insns);
		return -EIO;
	}
	*ret = (struct sock_fprog){
		.len = (unsigned short)(size / sizeof(struct sock_filter)),
		.filter = insns,
	};
	return 0;
}

static void release_ctx(scmp_filter_ctx *ctx)
{
	if (*ctx)
		seccomp_release(*ctx);
}

/* The policy is of the shape the build precompiled (no extra denials; sysv_ipc allowed or
 * not): its key for seccomp_prebuilt_table, or -1. */
static int prebuilt_key(const struct sandlock_policy *p, int supervised)
{
	struct net_needs needs;

	policy_net_needs(p, &needs);
	if (p->extra_deny || needs.sockets)
		return -1; /* datagram sockets open: a program of its own */
	for (size_t i = 0; p->extra_allow && p->extra_allow[i]; i++)
		if (strcmp(p->extra_allow[i], "sysv_ipc") != 0)
			return -1;
	return (supervised ? 2 : 0) | (p->extra_allow ? 1 : 0);
}

/* Copy the precompiled program for @p if there is one built with exactly these traps. */
static int prebuilt_lookup(const struct sandlock_policy *p, int supervised,
			   const struct trap *traps, size_t n_traps, struct sock_fprog *ret)
{
	int key = prebuilt_key(p, supervised);

	for (size_t i = 0; key >= 0 && i < seccomp_prebuilt_count; i++) {
		const struct seccomp_prebuilt *b = &seccomp_prebuilt_table[i];
		if (b->key != key || b->n_traps != n_traps ||
		    memcmp(b->traps, traps, n_traps * sizeof(*traps)) != 0)
			continue;
		struct sock_filter *insns = malloc(b->len * sizeof(*insns));
		if (!insns)
			return -ENOMEM;
		memcpy(insns, b->insns, b->len * sizeof(*insns));
		*ret = (struct sock_fprog){ .len = b->len, .filter = insns };
		return 1;
	}
	return 0;
}

static int program_compile(const struct sandlock_policy *p, int supervised, int log,
			   const struct trap *traps, size_t n_traps,
			   struct seccomp_arg_rules *arg_denied, struct sock_fprog *ret,
			   struct sandlock_error **reterr);

int seccomp_program_build_log(const struct sandlock_policy *p, int supervised, int log_denials,
			      const struct trap *traps, size_t n_traps,
			      struct seccomp_arg_rules *arg_denied, struct sock_fprog *ret,
			      struct sandlock_error **reterr)
{
	int r = seccomp_check_names(p, reterr);
	if (r < 0)
		return r;
	/* The precompiled programs deny with ERRNO: never those in logging mode. */
	r = log_denials ? 0 : prebuilt_lookup(p, supervised, traps, n_traps, ret);
	if (r != 0)
		return r < 0 ? error_set(reterr, r, "out of memory") : 0;
	int log = supervised && log_denials;
	return program_compile(p, supervised, log, traps, n_traps, log ? arg_denied : NULL, ret,
			       reterr);
}

int seccomp_program_build(const struct sandlock_policy *p, int supervised, const struct trap *traps,
			  size_t n_traps, struct sock_fprog *ret, struct sandlock_error **reterr)
{
	return seccomp_program_build_log(p, supervised, 0, traps, n_traps, NULL, ret, reterr);
}

/* Route @t to the supervisor, or deny it when there is none to check it. */
static int add_trap(scmp_filter_ctx ctx, int supervised, const struct trap *t)
{
	struct scmp_arg_cmp cmp[ELEMENTSOF(t->cond)];

	if (!supervised && !t->deny_unsupervised)
		return 0;
	for (uint32_t i = 0; i < t->n_conds && i < ELEMENTSOF(cmp); i++)
		cmp[i] = (struct scmp_arg_cmp){ .arg = t->cond[i].arg,
						.op = (enum scmp_compare)t->cond[i].op,
						.datum_a = t->cond[i].datum,
						.datum_b = t->cond[i].datum_b };
	return seccomp_rule_add_array(ctx, supervised ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(EPERM),
				      t->nr, MIN(t->n_conds, ELEMENTSOF(cmp)), cmp);
}

int seccomp_program_compile(const struct sandlock_policy *p, int supervised,
			    const struct trap *traps, size_t n_traps, struct sock_fprog *ret,
			    struct sandlock_error **reterr)
{
	return program_compile(p, supervised, 0, traps, n_traps, NULL, ret, reterr);
}

static int program_compile(const struct sandlock_policy *p, int supervised, int log,
			   const struct trap *traps, size_t n_traps,
			   struct seccomp_arg_rules *arg_denied, struct sock_fprog *ret,
			   struct sandlock_error **reterr)
{
	int r;

	__attribute__((cleanup(release_ctx))) scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return error_set(reterr, -ENOMEM, "seccomp_init failed");
	/* A foreign ABI (i386 on x86_64, and x32, which libseccomp's x86_64 filter rejects by
	 * its syscall bit) kills the process: its syscall numbers mean other syscalls. */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (r == 0) /* the child sets NO_NEW_PRIVS itself, in its confinement order */
		r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (r == 0) /* binary search over syscall numbers instead of a linear chain */
		r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (r < 0)
		return error_set(reterr, r, "seccomp_attr_set: %s", strerror(-r));

	struct deny_ctx d = { .ctx = ctx, .log = log };
	struct net_needs needs;
	policy_net_needs(p, &needs);
	r = for_each_denied(p, add_deny, &d);
	struct arg_sink sink = { .ctx = ctx, .log = arg_denied };
	if (r == 0 && arg_denied)
		r = seccomp_arg_rules_traps(arg_denied, traps, n_traps);
	if (r == 0)
		r = add_arg_filters(&sink, d.seen, needs.sockets);
	for (size_t i = 0; r == 0 && i < n_traps; i++)
		if (!(traps[i].nr < (int)sizeof(d.seen) && d.seen[traps[i].nr]))
			r = add_trap(ctx, supervised, &traps[i]);
	if (r < 0)
		return error_set(reterr, r, "seccomp_rule_add: %s", strerror(-r));

	r = export_program(ctx, ret);
	if (r < 0)
		return error_set(reterr, r, "seccomp_export_bpf: %s", strerror(-r));
	return 0;
}

void seccomp_program_done(struct sock_fprog *prog)
{
	free(prog->filter);
	prog->filter = NULL;
	prog->len = 0;
}
