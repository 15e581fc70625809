/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-seccomp: the default blocklist, the syscall groups, the name checks, and the compiled BPF
 * program. The program is checked by what it does, not by its bytes: a small classic-BPF
 * interpreter (the subset the kernel's seccomp accepts) runs it over a struct seccomp_data and
 * the returned action is compared, each time with a control that differs in one field. A
 * forked child then loads the program into the kernel and shows the same verdicts for real.
 */
#include <errno.h>
#include <linux/fs.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <netinet/in.h>
#include <linux/sockios.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plan/seccomp.h"
#include "policy/policy.h"
#include "strv.h"
#include "supervisor/dispatch.h"
#include "tap.h"
#include "bpf-vm.h"

#define X32_SYSCALL_BIT 0x40000000U

#define RET_EPERM (SECCOMP_RET_ERRNO | EPERM)
#define RET_ENOSYS (SECCOMP_RET_ERRNO | ENOSYS)

static const char *const want_blocklist[] = {
	"mount",
	"umount2",
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

static const char *const want_sysv_ipc[] = {
	"shmget", "shmat",  "shmdt", "shmctl", "msgget",     "msgsnd", "msgrcv",
	"msgctl", "semget", "semop", "semctl", "semtimedop", NULL,
};

/* The interpreter refuses what it does not know, so a new opcode cannot pass silently. */
static void test_interpreter(void)
{
	struct sock_filter good[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 7, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 7),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter bad_load[] = {
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter bad_op[] = {
		{ 0x07 | 0x08, 0, 0, 0 }, /* MISC with an unknown op */
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter no_ret[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
	};
	struct sock_fprog p1 = { 4, good }, p2 = { 2, bad_load }, p3 = { 2, bad_op },
			  p4 = { 1, no_ret };
	struct seccomp_data d = { .nr = 7 };

	struct bpf_outcome o = bpf_run(&p1, &d);
	ok(o.ok && o.ret == (SECCOMP_RET_ERRNO | 7), "interpreter: a matching JEQ takes jt");
	d.nr = 8;
	o = bpf_run(&p1, &d);
	ok(o.ok && o.ret == SECCOMP_RET_ALLOW, "interpreter: a non-matching JEQ takes jf");
	ok(!bpf_run(&p2, &d).ok, "interpreter: a byte load is refused (seccomp allows W only)");
	ok(!bpf_run(&p3, &d).ok, "interpreter: an unknown opcode is refused");
	ok(!bpf_run(&p4, &d).ok, "interpreter: falling off the end is refused");
}

/* ---- tables and names -------------------------------------------------------------------- */

static size_t names_len(const char *const *v)
{
	size_t n = 0;
	while (v[n])
		n++;
	return n;
}

static void test_tables(void)
{
	size_t n = names_len(seccomp_default_blocklist), want = names_len(want_blocklist);
	is_int(n, want, "the default blocklist has %zu entries", want);
	int same = n == want;
	for (size_t i = 0; same && i < n; i++)
		if (strcmp(seccomp_default_blocklist[i], want_blocklist[i]) != 0) {
			diag("  entry %zu: '%s', expected '%s'", i, seccomp_default_blocklist[i],
			     want_blocklist[i]);
			same = 0;
		}
	ok(same, "the default blocklist is exactly the specified list, in order");

	for (size_t i = 0; want_blocklist[i]; i++)
		ok(seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, want_blocklist[i]) >= 0,
		   "blocklist entry %s is a syscall on x86_64", want_blocklist[i]);

	const struct syscall_group *g = seccomp_group_find("sysv_ipc");
	ok(g != NULL, "seccomp_group_find(\"sysv_ipc\") finds the group");
	ok(seccomp_group_find("sysv") == NULL, "seccomp_group_find(\"sysv\") finds nothing");
	ok(seccomp_group_find("shmget") == NULL, "a member name is not a group name");
	ok(seccomp_groups[0].name && seccomp_groups[1].name == NULL, "sysv_ipc is the only group");
	if (g) {
		n = names_len(g->members);
		want = names_len(want_sysv_ipc);
		is_int(n, want, "sysv_ipc has %zu members", want);
		same = n == want;
		for (size_t i = 0; same && i < n; i++)
			same = strcmp(g->members[i], want_sysv_ipc[i]) == 0;
		ok(same, "sysv_ipc's members are exactly the specified list, in order");
	}
	/* The groups are not also in the always-on list, or re-allowing them would be a no-op. */
	int overlap = 0;
	for (size_t i = 0; want_sysv_ipc[i]; i++)
		for (size_t j = 0; seccomp_default_blocklist[j]; j++)
			overlap |= strcmp(want_sysv_ipc[i], seccomp_default_blocklist[j]) == 0;
	ok(!overlap, "no sysv_ipc member is in the default blocklist itself");
}

static void check_names(char **allow, char **deny, int want_r, const char *want_msg,
			const char *name)
{
	struct sandlock_policy p = { .extra_allow = allow, .extra_deny = deny };
	struct sandlock_error *e = NULL;

	is_int(seccomp_check_names(&p, &e), want_r, "check_names: %s", name);
	if (want_msg)
		is_str(e ? e->message : NULL, want_msg, "  message");
	else
		ok(e == NULL, "  no error object on success");
	if (e)
		is_int(e->code, want_r, "  the error object carries the same code");
	error_free(e);
}

#define V(...) ((char **)(const char *[]){ __VA_ARGS__, NULL })

static void test_check_names(void)
{
	check_names(NULL, NULL, 0, NULL, "an empty policy is fine");
	check_names(V("sysv_ipc"), NULL, 0, NULL, "re-allowing sysv_ipc is fine");
	check_names(NULL, V("sysv_ipc", "uname", "getcwd"), 0, NULL,
		    "denying a group and syscalls is fine");
	check_names(NULL, V("shmget"), 0, NULL,
		    "denying a member of a group not re-allowed is fine");
	check_names(NULL, V("nosuchcall"), -EINVAL,
		    "extra_deny_syscalls: unknown syscall nosuchcall",
		    "unknown syscall in extra_deny");
	check_names(V("shmget"), NULL, -EINVAL,
		    "extra_allow_syscalls: shmget is a syscall, only groups can be re-allowed "
		    "(groups: sysv_ipc)",
		    "a syscall in extra_allow");
	check_names(V("nosuchgroup"), NULL, -EINVAL,
		    "extra_allow_syscalls: unknown group nosuchgroup (groups: sysv_ipc)",
		    "an unknown group in extra_allow");
	check_names(V("sysv_ipc"), V("sysv_ipc"), -EINVAL,
		    "extra_deny_syscalls: syscall group sysv_ipc is both allowed and denied",
		    "a group both allowed and denied");
	check_names(V("sysv_ipc"), V("uname", "sysv_ipc"), -EINVAL,
		    "extra_deny_syscalls: syscall group sysv_ipc is both allowed and denied",
		    "a group both ways, after another deny");
	check_names(
		V("sysv_ipc"), V("semop"), -EINVAL,
		"extra_deny_syscalls: semop is a member of sysv_ipc, which extra_allow_syscalls "
		"re-allows",
		"a denied member of an allowed group");
	check_names(V("mount"), NULL, -EINVAL,
		    "extra_allow_syscalls: mount is a syscall, only groups can be re-allowed "
		    "(groups: sysv_ipc)",
		    "the blocklist cannot be re-allowed by name");
}

static void test_is_denied(void)
{
	struct sandlock_policy p = { 0 };

	for (size_t i = 0; want_blocklist[i]; i++) {
		int nr = seccomp_syscall_resolve_name(want_blocklist[i]);
		ok(seccomp_is_denied(&p, nr), "is_denied: %s", want_blocklist[i]);
	}
	ok(!seccomp_is_denied(&p, __NR_read), "is_denied: read is not");
	ok(!seccomp_is_denied(&p, __NR_uname), "is_denied: uname is not");
	ok(seccomp_is_denied(&p, __NR_shmget), "is_denied: shmget (sysv_ipc blocked by default)");
	ok(seccomp_is_denied(&p, __NR_semtimedop), "is_denied: semtimedop");

	p.extra_allow = V("sysv_ipc");
	ok(!seccomp_is_denied(&p, __NR_shmget), "is_denied: shmget not once sysv_ipc is allowed");
	ok(!seccomp_is_denied(&p, __NR_msgrcv), "is_denied: msgrcv not once sysv_ipc is allowed");
	ok(seccomp_is_denied(&p, __NR_mount), "is_denied: mount still");

	p.extra_allow = NULL;
	p.extra_deny = V("uname");
	ok(seccomp_is_denied(&p, __NR_uname), "is_denied: uname once extra-denied");
	ok(!seccomp_is_denied(&p, __NR_getcwd), "is_denied: getcwd not (control)");
}

/* ---- the program ------------------------------------------------------------------------- */

static int build(const struct sandlock_policy *p, int supervised, struct sock_fprog *prog)
{
	struct trap traps[DISPATCH_MAX_TRAPS];
	size_t n = dispatch_trap_set(p, traps, DISPATCH_MAX_TRAPS);
	struct sandlock_error *e = NULL;
	int r = seccomp_program_build(p, supervised, traps, n, prog, &e);

	if (r < 0)
		diag("seccomp_program_build: %d %s", r, e ? e->message : "");
	error_free(e);
	return r;
}

/* The default program's lists: the blocklist and sysv_ipc denied, ordinary calls allowed. */
static void default_lists(const struct sock_fprog *prog)
{
	for (size_t i = 0; want_blocklist[i]; i++) {
		int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, want_blocklist[i]);
		EXPECT(prog, X86, nr, 0, 0, 0, RET_EPERM, "%s -> EPERM", want_blocklist[i]);
	}
	EXPECT(prog, X86, 467, 0, 0, 0, RET_EPERM, "open_tree_attr (by number) -> EPERM");
	EXPECT(prog, X86, __NR_read, 0, 0, 0, SECCOMP_RET_ALLOW, "read -> ALLOW");
	EXPECT(prog, X86, __NR_write, 1, 0, 0, SECCOMP_RET_ALLOW, "write -> ALLOW");
	EXPECT(prog, X86, __NR_getpid, 0, 0, 0, SECCOMP_RET_ALLOW, "getpid -> ALLOW");
	for (size_t i = 0; want_sysv_ipc[i]; i++) {
		int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, want_sysv_ipc[i]);
		EXPECT(prog, X86, nr, 0, 0, 0, RET_EPERM, "%s -> EPERM (sysv_ipc by default)",
		       want_sysv_ipc[i]);
	}
}

/* clone: namespace flags denied, a thread or a fork allowed. */
static void default_clone(const struct sock_fprog *prog)
{
	EXPECT(prog, X86, __NR_clone, SIGCHLD, 0, 0, SECCOMP_RET_ALLOW, "clone(SIGCHLD) -> ALLOW");
	EXPECT(prog, X86, __NR_clone,
	       CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM, 0,
	       0, SECCOMP_RET_ALLOW, "clone(thread flags) -> ALLOW");
	EXPECT(prog, X86, __NR_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, RET_EPERM,
	       "clone(CLONE_NEWUSER) -> EPERM");
	EXPECT(prog, X86, __NR_clone, CLONE_PARENT | SIGCHLD, 0, 0, RET_EPERM,
	       "clone(CLONE_PARENT) -> EPERM");
	static const struct {
		uint64_t flag;
		const char *name;
	} ns[] = {
		{ CLONE_NEWNS, "CLONE_NEWNS" },	  { CLONE_NEWCGROUP, "CLONE_NEWCGROUP" },
		{ CLONE_NEWUTS, "CLONE_NEWUTS" }, { CLONE_NEWIPC, "CLONE_NEWIPC" },
		{ CLONE_NEWPID, "CLONE_NEWPID" }, { CLONE_NEWNET, "CLONE_NEWNET" },
	};
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
		EXPECT(prog, X86, __NR_clone, ns[i].flag | SIGCHLD, 0, 0, RET_EPERM,
		       "clone(%s) -> EPERM", ns[i].name);
	EXPECT(prog, X86, __NR_clone, 0xffffffff00000000ULL | CLONE_NEWUSER, 0, 0, RET_EPERM,
	       "clone(CLONE_NEWUSER with upper bits set) -> EPERM");
	/* 0x80 (CLONE_NEWTIME) is the exit-signal byte for clone(2); only clone3 (ENOSYS) and
	 * unshare (blocked) accept it, so the filter leaves it alone. */
	EXPECT(prog, X86, __NR_clone, 0x80, 0, 0, SECCOMP_RET_ALLOW,
	       "clone(0x80: an exit signal, not CLONE_NEWTIME) -> ALLOW");
	EXPECT(prog, X86, __NR_clone3, 0, 88, 0, RET_ENOSYS, "clone3 -> ENOSYS");
	EXPECT(prog, X86, __NR_fork, 0, 0, 0, SECCOMP_RET_ALLOW, "fork -> ALLOW");
}

static void default_ioctl_prctl(const struct sock_fprog *prog)
{
	/* ioctl: the cmd is an int, so only its low 32 bits count. */
	EXPECT(prog, X86, __NR_ioctl, 0, TIOCSTI, 0, RET_EPERM, "ioctl(TIOCSTI) -> EPERM");
	EXPECT(prog, X86, __NR_ioctl, 0, 0xdeadbeef00000000ULL | TIOCSTI, 0, RET_EPERM,
	       "ioctl(TIOCSTI | garbage << 32) -> EPERM");
	EXPECT(prog, X86, __NR_ioctl, 0, TIOCLINUX, 0, RET_EPERM, "ioctl(TIOCLINUX) -> EPERM");
	EXPECT(prog, X86, __NR_ioctl, 0, SIOCGIFVLAN, 0, RET_EPERM, "ioctl(SIOCGIFVLAN) -> EPERM");
	EXPECT(prog, X86, __NR_ioctl, 0, TIOCGWINSZ, 0, SECCOMP_RET_ALLOW,
	       "ioctl(TIOCGWINSZ) -> ALLOW");
	EXPECT(prog, X86, __NR_ioctl, 0, FIONREAD, 0, SECCOMP_RET_ALLOW,
	       "ioctl(FIONREAD) -> ALLOW");
	EXPECT(prog, X86, __NR_ioctl, 0, 0x100000000ULL, 0, SECCOMP_RET_ALLOW,
	       "ioctl(cmd 0 with garbage << 32) -> ALLOW");

	/* prctl */
	EXPECT(prog, X86, __NR_prctl, PR_SET_SECUREBITS, 0, 0, RET_EPERM,
	       "prctl(PR_SET_SECUREBITS) -> EPERM");
	EXPECT(prog, X86, __NR_prctl, PR_SET_PTRACER, 0, 0, RET_EPERM,
	       "prctl(PR_SET_PTRACER) -> EPERM");
	EXPECT(prog, X86, __NR_prctl, 0xffffffff00000000ULL | PR_SET_SECUREBITS, 0, 0, RET_EPERM,
	       "prctl(PR_SET_SECUREBITS | garbage << 32) -> EPERM");
	EXPECT(prog, X86, __NR_prctl, PR_SET_NAME, 0, 0, SECCOMP_RET_ALLOW,
	       "prctl(PR_SET_NAME) -> ALLOW");
	EXPECT(prog, X86, __NR_prctl, PR_GET_SECUREBITS, 0, 0, SECCOMP_RET_ALLOW,
	       "prctl(PR_GET_SECUREBITS) -> ALLOW");
}

static void default_socket(const struct sock_fprog *prog)
{
	/* socket families other than UNIX, INET, INET6, NETLINK: EAFNOSUPPORT. */
	EXPECT(prog, X86, __NR_socket, AF_PACKET, SOCK_RAW, 0, SECCOMP_RET_ERRNO | EAFNOSUPPORT,
	       "socket(AF_PACKET, SOCK_RAW) -> EAFNOSUPPORT");
	EXPECT(prog, X86, __NR_socket, AF_VSOCK, SOCK_STREAM, 0, SECCOMP_RET_ERRNO | EAFNOSUPPORT,
	       "socket(AF_VSOCK) -> EAFNOSUPPORT");
	EXPECT(prog, X86, __NR_socket, 0x100000000ULL | AF_UNIX, SOCK_STREAM, 0,
	       SECCOMP_RET_ERRNO | EAFNOSUPPORT,
	       "socket(AF_UNIX with garbage << 32) -> EAFNOSUPPORT (fail closed)");
	EXPECT(prog, X86, __NR_socket, AF_NETLINK, SOCK_RAW, 0, SECCOMP_RET_ALLOW,
	       "socket(AF_NETLINK) -> ALLOW");

	/* socket: raw and datagram IP sockets are the supervisor's (or nobody's). */
	EXPECT(prog, X86, __NR_socket, AF_INET, SOCK_RAW | SOCK_CLOEXEC, 0, RET_EPERM,
	       "socket(AF_INET, SOCK_RAW|SOCK_CLOEXEC) -> EPERM");
	EXPECT(prog, X86, __NR_socket, AF_INET6, SOCK_RAW, 0, RET_EPERM,
	       "socket(AF_INET6, SOCK_RAW) -> EPERM");
	EXPECT(prog, X86, __NR_socket, AF_INET6, SOCK_DGRAM, 0, RET_EPERM,
	       "socket(AF_INET6, SOCK_DGRAM) -> EPERM");
	EXPECT(prog, X86, __NR_socket, AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0, RET_EPERM,
	       "socket(AF_INET, SOCK_DGRAM|SOCK_NONBLOCK) -> EPERM");
	EXPECT(prog, X86, __NR_socket, 0xffffffff00000000ULL | AF_INET, SOCK_RAW, 0, RET_EPERM,
	       "socket(AF_INET | garbage << 32, SOCK_RAW) -> EPERM");
	EXPECT(prog, X86, __NR_socket, AF_UNIX, SOCK_DGRAM, 0, SECCOMP_RET_ALLOW,
	       "socket(AF_UNIX, SOCK_DGRAM) -> ALLOW");
	EXPECT(prog, X86, __NR_socket, AF_INET, SOCK_STREAM, 0, SECCOMP_RET_ALLOW,
	       "socket(AF_INET, SOCK_STREAM) -> ALLOW");
	EXPECT(prog, X86, __NR_socket, AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0, SECCOMP_RET_ALLOW,
	       "socket(AF_INET6, SOCK_STREAM|SOCK_CLOEXEC) -> ALLOW");

	/* Only TCP among the IP stream protocols: Landlock's NetTcp covers nothing else. */
	EXPECT(prog, X86, __NR_socket, AF_INET, SOCK_STREAM, IPPROTO_TCP, SECCOMP_RET_ALLOW,
	       "socket(AF_INET, SOCK_STREAM, IPPROTO_TCP) -> ALLOW");
	EXPECT(prog, X86, __NR_socket, AF_INET, SOCK_STREAM, 262 /* IPPROTO_MPTCP */, RET_EPERM,
	       "socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP) -> EPERM");
	EXPECT(prog, X86, __NR_socket, AF_INET6, SOCK_STREAM | SOCK_NONBLOCK, 262, RET_EPERM,
	       "socket(AF_INET6, SOCK_STREAM|SOCK_NONBLOCK, IPPROTO_MPTCP) -> EPERM");
	EXPECT(prog, X86, __NR_socket, AF_INET, SOCK_STREAM, IPPROTO_SCTP, RET_EPERM,
	       "socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP) -> EPERM");
	EXPECT(prog, X86, __NR_socket, AF_INET, SOCK_STREAM, 0xffffffff00000006ULL, RET_EPERM,
	       "socket(AF_INET, SOCK_STREAM, TCP | garbage << 32) -> EPERM (fail closed)");
	EXPECT(prog, X86, __NR_socket, AF_INET, SOCK_SEQPACKET, IPPROTO_SCTP, RET_EPERM,
	       "socket(AF_INET, SOCK_SEQPACKET, IPPROTO_SCTP) -> EPERM");
	EXPECT(prog, X86, __NR_socket, AF_INET, SOCK_PACKET, 0x300, RET_EPERM,
	       "socket(AF_INET, SOCK_PACKET) (the kernel's AF_PACKET alias) -> EPERM");
	EXPECT(prog, X86, __NR_socket, AF_INET6, SOCK_DCCP, 0, RET_EPERM,
	       "socket(AF_INET6, SOCK_DCCP) -> EPERM");
	EXPECT(prog, X86, __NR_socket, AF_UNIX, SOCK_SEQPACKET, 0, SECCOMP_RET_ALLOW,
	       "socket(AF_UNIX, SOCK_SEQPACKET) -> ALLOW (control)");
}

/* A foreign ABI is killed. */
static void default_foreign_abi(const struct sock_fprog *prog)
{
	EXPECT(prog, AUDIT_ARCH_I386, 20 /* getpid on i386 */, 0, 0, 0, SECCOMP_RET_KILL_PROCESS,
	       "i386 arch -> KILL_PROCESS");
	EXPECT(prog, AUDIT_ARCH_I386, __NR_read, 0, 0, 0, SECCOMP_RET_KILL_PROCESS,
	       "i386 arch, any nr -> KILL_PROCESS");
	EXPECT(prog, AUDIT_ARCH_AARCH64, __NR_read, 0, 0, 0, SECCOMP_RET_KILL_PROCESS,
	       "aarch64 arch -> KILL_PROCESS");
	uint32_t x32 = eval(prog, X86, (int)(X32_SYSCALL_BIT | __NR_getpid), 0, 0, 0);
	char b[48];
	if (!ok(x32 == SECCOMP_RET_KILL_PROCESS || x32 == SECCOMP_RET_KILL_THREAD,
		"x32 (nr | 0x40000000, x86_64 arch) -> a kill action (got %s)",
		action_name(x32, b, sizeof(b))))
		diag("BUG: x32 syscalls are not killed by the filter");
	else
		is_int(x32, SECCOMP_RET_KILL_PROCESS, "x32 -> KILL_PROCESS precisely");
	x32 = eval(prog, X86, (int)(X32_SYSCALL_BIT | 165 /* mount */), 0, 0, 0);
	ok(x32 == SECCOMP_RET_KILL_PROCESS || x32 == SECCOMP_RET_KILL_THREAD,
	   "x32 mount -> a kill action (got %s)", action_name(x32, b, sizeof(b)));
}

static void test_program_default(void)
{
	struct sandlock_policy p = { 0 };
	struct sock_fprog prog = { 0 };

	if (!ok(build(&p, 0, &prog) == 0, "build the default unsupervised program"))
		return;
	ok(prog.len > 0 && prog.len <= BPF_MAXINSNS, "  program length %u is sane", prog.len);

	default_lists(&prog);
	default_clone(&prog);
	default_ioctl_prctl(&prog);
	default_socket(&prog);
	default_foreign_abi(&prog);

	/* Unsupervised: the trap set runs at kernel speed. */
	EXPECT(&prog, X86, __NR_uname, 0, 0, 0, SECCOMP_RET_ALLOW, "unsupervised: uname -> ALLOW");
	EXPECT(&prog, X86, __NR_setsid, 0, 0, 0, SECCOMP_RET_ALLOW,
	       "unsupervised: setsid -> ALLOW");
	EXPECT(&prog, X86, __NR_setpgid, 0, 0, 0, SECCOMP_RET_ALLOW,
	       "unsupervised: setpgid -> ALLOW");
	seccomp_program_done(&prog);
	ok(prog.filter == NULL && prog.len == 0, "seccomp_program_done clears the program");
}

/* sysv_ipc re-allowed, and extra-denied as a group. */
static void policies_sysv_ipc(void)
{
	struct sock_fprog prog = { 0 };

	struct sandlock_policy p = { .extra_allow = V("sysv_ipc") };
	if (ok(build(&p, 0, &prog) == 0, "build with extra_allow sysv_ipc")) {
		for (size_t i = 0; want_sysv_ipc[i]; i++) {
			int nr = seccomp_syscall_resolve_name(want_sysv_ipc[i]);
			EXPECT(&prog, X86, nr, 0, 0, 0, SECCOMP_RET_ALLOW,
			       "  %s -> ALLOW once sysv_ipc is re-allowed", want_sysv_ipc[i]);
		}
		EXPECT(&prog, X86, __NR_mount, 0, 0, 0, RET_EPERM, "  mount -> EPERM still");
		EXPECT(&prog, X86, __NR_personality, 0, 0, 0, RET_EPERM,
		       "  personality -> EPERM still");
		seccomp_program_done(&prog);
	}

	/* extra_deny of the group: stays denied (and the name is not taken as a syscall). */
	p = (struct sandlock_policy){ .extra_deny = V("sysv_ipc") };
	if (ok(build(&p, 0, &prog) == 0, "build with extra_deny sysv_ipc")) {
		for (size_t i = 0; want_sysv_ipc[i]; i++) {
			int nr = seccomp_syscall_resolve_name(want_sysv_ipc[i]);
			EXPECT(&prog, X86, nr, 0, 0, 0, RET_EPERM, "  %s -> EPERM (group expanded)",
			       want_sysv_ipc[i]);
		}
		EXPECT(&prog, X86, __NR_read, 0, 0, 0, SECCOMP_RET_ALLOW, "  read -> ALLOW");
		seccomp_program_done(&prog);
	}
}

/* Supervised programs: extra denials win over the trap set, which goes to the supervisor. */
static void policies_supervised(void)
{
	struct sock_fprog prog = { 0 };

	/* extra_deny of plain syscalls, with a control. */
	struct sandlock_policy p = { .extra_deny = V("getcwd", "uname") };
	if (ok(build(&p, 1, &prog) == 0, "build supervised with extra_deny getcwd, uname")) {
		EXPECT(&prog, X86, __NR_getcwd, 0, 0, 0, RET_EPERM, "  getcwd -> EPERM");
		EXPECT(&prog, X86, __NR_uname, 0, 0, 0, RET_EPERM,
		       "  an extra-denied uname stays EPERM although supervised");
		EXPECT(&prog, X86, __NR_setsid, 0, 0, 0, SECCOMP_RET_USER_NOTIF,
		       "  setsid -> USER_NOTIF (still trapped)");
		EXPECT(&prog, X86, __NR_getcwd + 1, 0, 0, 0, SECCOMP_RET_ALLOW,
		       "  the syscall after getcwd (chdir) -> ALLOW");
		seccomp_program_done(&prog);
	}

	/* Supervised default: the trap set goes to the supervisor. */
	p = (struct sandlock_policy){ 0 };
	if (ok(build(&p, 1, &prog) == 0, "build the default supervised program")) {
		EXPECT(&prog, X86, __NR_uname, 0, 0, 0, SECCOMP_RET_USER_NOTIF,
		       "  supervised: uname -> USER_NOTIF");
		EXPECT(&prog, X86, __NR_setsid, 0, 0, 0, SECCOMP_RET_USER_NOTIF,
		       "  supervised: setsid -> USER_NOTIF");
		EXPECT(&prog, X86, __NR_setpgid, 0, 0, 0, SECCOMP_RET_USER_NOTIF,
		       "  supervised: setpgid -> USER_NOTIF");
		EXPECT(&prog, X86, __NR_getpgid, 0, 0, 0, SECCOMP_RET_ALLOW,
		       "  supervised: getpgid -> ALLOW (not trapped)");
		EXPECT(&prog, X86, __NR_read, 0, 0, 0, SECCOMP_RET_ALLOW,
		       "  supervised: read -> ALLOW");
		EXPECT(&prog, X86, __NR_mount, 0, 0, 0, RET_EPERM, "  supervised: mount -> EPERM");
		EXPECT(&prog, AUDIT_ARCH_I386, __NR_uname, 0, 0, 0, SECCOMP_RET_KILL_PROCESS,
		       "  supervised: i386 -> KILL_PROCESS");
		seccomp_program_done(&prog);
	}
}

static void test_program_policies(void)
{
	policies_sysv_ipc();
	policies_supervised();

	/* A build with bad names fails before compiling anything. */
	struct sandlock_policy p = { .extra_deny = V("nosuchcall") };
	struct sandlock_error *e = NULL;
	struct sock_fprog prog = { 0 };
	is_int(seccomp_program_build(&p, 0, NULL, 0, &prog, &e), -EINVAL,
	       "build with an unknown syscall is -EINVAL");
	is_str(e ? e->message : NULL, "extra_deny_syscalls: unknown syscall nosuchcall",
	       "  with the check_names message");
	ok(prog.filter == NULL, "  and no program");
	error_free(e);
}

/* ---- the kernel agrees ------------------------------------------------------------------- */

struct child_report {
	long pers_before, pers_after;
	int pers_errno;
	int load_r, load_errno;
	long pid_raw;
	int pid_libc;
	long name_r;
	int shm_r, shm_errno;
};

static int load(const struct sock_fprog *prog)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog);
}

/* Denying clone3 explicitly keeps it ENOSYS: with EPERM glibc would not fall back to clone(2). */
static void test_deny_clone3(void)
{
	char *deny[] = { (char *)"clone3", (char *)"getcwd", NULL };
	struct sandlock_policy p = { .extra_deny = deny };
	struct sock_fprog prog;

	if (!ok(build(&p, 0, &prog) == 0, "build with extra_deny clone3, getcwd"))
		return;
	EXPECT(&prog, X86, __NR_clone3, 0, 88, 0, RET_ENOSYS, "  clone3 -> ENOSYS, not EPERM");
	EXPECT(&prog, X86, __NR_getcwd, 0, 0, 0, RET_EPERM, "  getcwd -> EPERM (control)");
	seccomp_program_done(&prog);
}

/* Calls that change another process: trapped (supervised) or denied (unsupervised) only when
 * they name another process; PRIO_USER / IOPRIO_WHO_USER never. */
static void test_other_process(void)
{
	struct sandlock_policy p = { 0 };
	struct sock_fprog sup, unsup;
	const uint32_t NOTIF = SECCOMP_RET_USER_NOTIF, ALLOW = SECCOMP_RET_ALLOW;

	if (!ok(build(&p, 1, &sup) == 0 && build(&p, 0, &unsup) == 0,
		"build both programs for the other-process checks"))
		return;
	static const struct {
		int nr;
		uint64_t a0, a1, a2;
		uint32_t supervised, unsupervised;
		const char *what;
	} cases[] = {
		{ __NR_prlimit64, 0, RLIMIT_NOFILE, 0x1000, ALLOW, ALLOW, "prlimit64(0, set)" },
		{ __NR_prlimit64, 1234, RLIMIT_NOFILE, 0x1000, NOTIF, RET_EPERM,
		  "prlimit64(pid, set)" },
		{ __NR_prlimit64, 1234, RLIMIT_NOFILE, 0, ALLOW, ALLOW,
		  "prlimit64(pid, get only)" },
		{ __NR_setpriority, PRIO_PROCESS, 0, 5, ALLOW, ALLOW, "setpriority(PROCESS, 0)" },
		{ __NR_setpriority, PRIO_PROCESS, 1234, 5, NOTIF, RET_EPERM,
		  "setpriority(PROCESS, pid)" },
		{ __NR_setpriority, PRIO_PGRP, 0, 5, ALLOW, ALLOW, "setpriority(PGRP, 0)" },
		{ __NR_setpriority, PRIO_PGRP, 1234, 5, NOTIF, RET_EPERM,
		  "setpriority(PGRP, pgid)" },
		{ __NR_setpriority, PRIO_USER, 0, 5, RET_EPERM, RET_EPERM, "setpriority(USER, 0)" },
		{ __NR_setpriority, 0xffffffff00000000ULL | PRIO_USER, 0, 5, RET_EPERM, RET_EPERM,
		  "setpriority(USER | garbage << 32, 0)" },
		{ __NR_ioprio_set, 3, 0, 0, RET_EPERM, RET_EPERM, "ioprio_set(WHO_USER, 0)" },
		{ __NR_ioprio_set, 1, 0, 0, ALLOW, ALLOW, "ioprio_set(WHO_PROCESS, 0)" },
		{ __NR_ioprio_set, 1, 1234, 0, NOTIF, RET_EPERM, "ioprio_set(WHO_PROCESS, pid)" },
		{ __NR_sched_setaffinity, 0, 128, 0x1000, ALLOW, ALLOW, "sched_setaffinity(0)" },
		{ __NR_sched_setaffinity, 1234, 128, 0x1000, NOTIF, RET_EPERM,
		  "sched_setaffinity(pid)" },
		{ __NR_sched_setscheduler, 1234, 0, 0x1000, NOTIF, RET_EPERM,
		  "sched_setscheduler(pid)" },
		{ __NR_sched_setparam, 1234, 0x1000, 0, NOTIF, RET_EPERM, "sched_setparam(pid)" },
		{ __NR_sched_setattr, 1234, 0x1000, 0, NOTIF, RET_EPERM, "sched_setattr(pid)" },
		{ __NR_sched_setattr, 0, 0x1000, 0, ALLOW, ALLOW, "sched_setattr(0)" },
		{ __NR_sched_getaffinity, 1234, 128, 0x1000, ALLOW, ALLOW,
		  "sched_getaffinity(pid) (reading is not trapped)" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		EXPECT(&sup, X86, cases[i].nr, cases[i].a0, cases[i].a1, cases[i].a2,
		       cases[i].supervised, "supervised: %s", cases[i].what);
		EXPECT(&unsup, X86, cases[i].nr, cases[i].a0, cases[i].a1, cases[i].a2,
		       cases[i].unsupervised, "unsupervised: %s", cases[i].what);
	}
	seccomp_program_done(&sup);
	seccomp_program_done(&unsup);
}

/* The new mount API: denied everywhere (open_tree_attr by number). The calls that name another
 * process by a pidfd, and the file watches: trapped in every supervised sandbox, denied (EPERM)
 * without a supervisor; their neighbours (pidfd_open, inotify_init1, fanotify_init) are not. */
static void test_mount_api_and_watches(void)
{
	struct sandlock_policy p = { 0 };
	struct sock_fprog sup, unsup;
	const uint32_t NOTIF = SECCOMP_RET_USER_NOTIF, ALLOW = SECCOMP_RET_ALLOW;

	if (!ok(build(&p, 1, &sup) == 0 && build(&p, 0, &unsup) == 0,
		"build both programs for the mount API and watch checks"))
		return;
	static const struct {
		int nr;
		uint32_t supervised, unsupervised;
		const char *what;
	} cases[] = {
		{ 428, RET_EPERM, RET_EPERM, "open_tree" },
		{ 429, RET_EPERM, RET_EPERM, "move_mount" },
		{ 430, RET_EPERM, RET_EPERM, "fsopen" },
		{ 431, RET_EPERM, RET_EPERM, "fsconfig" },
		{ 432, RET_EPERM, RET_EPERM, "fsmount" },
		{ 433, RET_EPERM, RET_EPERM, "fspick" },
		{ 442, RET_EPERM, RET_EPERM, "mount_setattr" },
		{ 467, RET_EPERM, RET_EPERM, "open_tree_attr" },
		{ 440, NOTIF, RET_EPERM, "process_madvise" },
		{ 448, NOTIF, RET_EPERM, "process_mrelease" },
		{ __NR_inotify_add_watch, NOTIF, RET_EPERM, "inotify_add_watch" },
		{ __NR_fanotify_mark, NOTIF, RET_EPERM, "fanotify_mark" },
		{ 434, ALLOW, ALLOW, "pidfd_open (control)" },
		{ 424, ALLOW, ALLOW, "pidfd_send_signal (control: Landlock's signal scope)" },
		{ __NR_inotify_init1, ALLOW, ALLOW, "inotify_init1 (control)" },
		{ __NR_inotify_rm_watch, ALLOW, ALLOW, "inotify_rm_watch (control)" },
		{ __NR_fanotify_init, ALLOW, ALLOW, "fanotify_init (control)" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		EXPECT(&sup, X86, cases[i].nr, 0, 0, 0, cases[i].supervised, "supervised: %s",
		       cases[i].what);
		EXPECT(&unsup, X86, cases[i].nr, 0, 0, 0, cases[i].unsupervised,
		       "unsupervised: %s", cases[i].what);
	}
	seccomp_program_done(&sup);
	seccomp_program_done(&unsup);
}

/* max_processes: a clone making a process, fork and vfork are trapped; a thread's clone is not,
 * and the namespace flags stay refused by the filter (the trap rule never overlaps them). */
static void test_fork_traps(void)
{
	struct sandlock_policy p = { .max_processes = { .set = 1, .v = 3 } };
	struct sandlock_policy none = { 0 };
	struct sock_fprog prog, control;
	const uint32_t NOTIF = SECCOMP_RET_USER_NOTIF, ALLOW = SECCOMP_RET_ALLOW;
	const uint64_t thread = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
				CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PARENT_SETTID |
				CLONE_CHILD_CLEARTID;

	if (!ok(build(&p, 1, &prog) == 0 && build(&none, 1, &control) == 0,
		"build with max_processes, and without (control)"))
		return;
	EXPECT(&prog, X86, __NR_clone, SIGCHLD, 0, 0, NOTIF, "  clone(SIGCHLD) -> notify");
	EXPECT(&prog, X86, __NR_clone, CLONE_VM | CLONE_VFORK | SIGCHLD, 0, 0, NOTIF,
	       "  clone(CLONE_VM | CLONE_VFORK) (posix_spawn) -> notify");
	EXPECT(&prog, X86, __NR_fork, 0, 0, 0, NOTIF, "  fork -> notify");
	EXPECT(&prog, X86, __NR_vfork, 0, 0, 0, NOTIF, "  vfork -> notify");
	EXPECT(&prog, X86, __NR_clone, thread, 0, 0, ALLOW, "  a thread's clone -> allowed");
	EXPECT(&prog, X86, __NR_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, RET_EPERM,
	       "  clone(CLONE_NEWUSER) -> still EPERM");
	EXPECT(&prog, X86, __NR_clone, CLONE_PARENT | SIGCHLD, 0, 0, RET_EPERM,
	       "  clone(CLONE_PARENT) -> still EPERM");
	EXPECT(&control, X86, __NR_clone, SIGCHLD, 0, 0, ALLOW,
	       "  control: without max_processes, clone(SIGCHLD) is allowed");
	EXPECT(&control, X86, __NR_fork, 0, 0, 0, ALLOW, "  control: fork is allowed");
	seccomp_program_done(&prog);
	seccomp_program_done(&control);
}

/* The metadata calls: trapped in every supervised sandbox, refused without a supervisor (nothing
 * could check the file); the inode ioctls on the low 32 bits of the request, other ioctls not. */
static void test_metadata_traps(void)
{
	struct sandlock_policy p = { 0 };
	struct sock_fprog sup, unsup;
	const uint32_t NOTIF = SECCOMP_RET_USER_NOTIF, ALLOW = SECCOMP_RET_ALLOW;

	if (!ok(build(&p, 1, &sup) == 0 && build(&p, 0, &unsup) == 0,
		"build supervised and unsupervised"))
		return;
	EXPECT(&sup, X86, __NR_chmod, 0, 0644, 0, NOTIF, "  chmod -> notify");
	EXPECT(&sup, X86, __NR_fchownat, 3, 0, 0, NOTIF, "  fchownat -> notify");
	EXPECT(&sup, X86, __NR_utimensat, 3, 0, 0, NOTIF, "  utimensat -> notify");
	EXPECT(&sup, X86, __NR_fsetxattr, 3, 0, 0, NOTIF, "  fsetxattr -> notify");
	EXPECT(&sup, X86, __NR_ioctl, 3, 0xffffffff00000000ULL | FS_IOC_SETFLAGS, 0, NOTIF,
	       "  ioctl(FS_IOC_SETFLAGS), high half set -> notify");
	EXPECT(&sup, X86, __NR_ioctl, 3, FS_IOC_GETFLAGS, 0, ALLOW,
	       "  ioctl(FS_IOC_GETFLAGS) -> allowed (control)");
	EXPECT(&sup, X86, __NR_fgetxattr, 3, 0, 0, ALLOW, "  fgetxattr -> allowed (control)");
	EXPECT(&sup, X86, __NR_setuid, 0, 0, 0, NOTIF, "  setuid -> notify (credentials)");
	EXPECT(&unsup, X86, __NR_chmod, 0, 0644, 0, RET_EPERM, "  unsupervised: chmod -> EPERM");
	EXPECT(&unsup, X86, __NR_fchmod, 3, 0644, 0, RET_EPERM, "  unsupervised: fchmod -> EPERM");
	EXPECT(&unsup, X86, __NR_ioctl, 3, FS_IOC_SETFLAGS, 0, RET_EPERM,
	       "  unsupervised: ioctl(FS_IOC_SETFLAGS) -> EPERM");
	EXPECT(&unsup, X86, __NR_setuid, 0, 0, 0, ALLOW, "  unsupervised: setuid -> allowed");
	seccomp_program_done(&sup);
	seccomp_program_done(&unsup);
}

/* The programs compiled at build time must be exactly what libseccomp compiles now for the same
 * policy shape; and a policy outside those shapes must not get one. */
static void test_prebuilt(void)
{
	char *allow[] = { (char *)"sysv_ipc", NULL };
	char *deny[] = { (char *)"getcwd", NULL };
	struct trap traps[DISPATCH_MAX_TRAPS];
	struct sandlock_policy none = { 0 };
	size_t n = dispatch_trap_set(&none, traps, DISPATCH_MAX_TRAPS);

	is_int(seccomp_prebuilt_count, 4, "four precompiled shapes");
	/* The precompiled shapes are built from the default policy's trap set: an unsupervised
	 * policy must compute the same one (its traps are then denied or left out by the
	 * compile), or it pays libseccomp's compile at every start. */
	struct trap unsup_traps[DISPATCH_MAX_TRAPS];
	struct sandlock_policy unsup = { .no_supervisor = 1 };
	size_t n_unsup = dispatch_trap_set(&unsup, unsup_traps, DISPATCH_MAX_TRAPS);
	ok(n_unsup == n && memcmp(unsup_traps, traps, n * sizeof(*traps)) == 0,
	   "no_supervisor: the default trap set (the precompiled program applies)");
	for (int key = 0; key < 4; key++) {
		struct sandlock_policy p = { 0 };
		struct sock_fprog built, fresh;
		if (key & 1)
			p.extra_allow = allow;
		int r1 = seccomp_program_build(&p, key & 2, traps, n, &built, NULL);
		int r2 = seccomp_program_compile(&p, key & 2, traps, n, &fresh, NULL);
		ok(r1 == 0 && r2 == 0 && built.len == fresh.len &&
			   memcmp(built.filter, fresh.filter, fresh.len * sizeof(*fresh.filter)) ==
				   0,
		   "precompiled program %d (supervised=%d sysv_ipc=%d) equals a fresh compile", key,
		   !!(key & 2), key & 1);
		seccomp_program_done(&built);
		seccomp_program_done(&fresh);
	}

	/* Control: an extra denial changes the program, and build must compile it. */
	struct sandlock_policy p = { .extra_deny = deny };
	struct sock_fprog built, plain;
	struct sandlock_policy d = { 0 };
	seccomp_program_build(&p, 1, traps, n, &built, NULL);
	seccomp_program_build(&d, 1, traps, n, &plain, NULL);
	ok(built.len != plain.len ||
		   memcmp(built.filter, plain.filter, plain.len * sizeof(*plain.filter)) != 0,
	   "a policy with extra_deny gets its own program, not a precompiled one");
	struct seccomp_data data = { .nr = __NR_getcwd, .arch = AUDIT_ARCH_X86_64 };
	is_int(bpf_run(&built, &data).ret, RET_EPERM, "... and it denies getcwd");
	is_int(bpf_run(&plain, &data).ret, SECCOMP_RET_ALLOW, "... the default one allows getcwd");
	seccomp_program_done(&built);
	seccomp_program_done(&plain);

	/* Control: a trap set other than the default is compiled, not looked up. */
	struct trap one[] = { { .nr = __NR_getcwd } };
	seccomp_program_build(&d, 1, one, 1, &built, NULL);
	is_int(bpf_run(&built, &data).ret, SECCOMP_RET_USER_NOTIF, "a custom trap set is honoured");
	seccomp_program_done(&built);
}

/* In the forked child: load @prog, try the calls, report on @wfd. */
static void kernel_child(const struct sock_fprog *prog, int wfd)
{
	struct child_report rep = { 0 };

	rep.pers_before = syscall(SYS_personality, 0xffffffffUL);
	rep.load_r = load(prog);
	rep.load_errno = errno;
	errno = 0;
	rep.pers_after = syscall(SYS_personality, 0xffffffffUL);
	rep.pers_errno = errno;
	rep.pid_raw = syscall(SYS_getpid);
	rep.pid_libc = getpid();
	rep.name_r = prctl(PR_SET_NAME, "sl-test", 0, 0, 0);
	errno = 0;
	rep.shm_r = (int)syscall(SYS_shmget, 0 /* IPC_PRIVATE */, 4096, 0600);
	rep.shm_errno = errno;
	(void)!write(wfd, &rep, sizeof(rep));
	_exit(0);
}

/* x32: without the filter the call does not kill (it runs, or ENOSYS without x32). */
static void kernel_x32(const struct sock_fprog *prog)
{
	int st = 0;
	pid_t pid = fork();
	if (pid == 0) {
		long r = syscall(X32_SYSCALL_BIT | __NR_getpid);
		(void)r;
		_exit(0);
	}
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "kernel: control: a raw x32 getpid without the filter does not kill");

	pid = fork();
	if (pid == 0) {
		if (load(prog) != 0)
			_exit(3);
		syscall(X32_SYSCALL_BIT | __NR_getpid);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	if (!ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
		"kernel: a raw x32 getpid under the filter kills the child with SIGSYS"))
		diag("  status 0x%x (exited %d, code %d)", st, WIFEXITED(st), WEXITSTATUS(st));
}

static void test_kernel(void)
{
	struct sandlock_policy p = { 0 };
	struct sock_fprog prog = { 0 };

	if (!ok(build(&p, 0, &prog) == 0, "kernel: build the unsupervised program"))
		return;

	int fds[2];
	if (pipe(fds) < 0) {
		ok(0, "pipe");
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		kernel_child(&prog, fds[1]);
	}
	close(fds[1]);
	struct child_report rep = { 0 };
	ssize_t n = read(fds[0], &rep, sizeof(rep));
	close(fds[0]);
	int st = 0;
	waitpid(pid, &st, 0);
	if (!ok(n == (ssize_t)sizeof(rep), "kernel: the child reported")) {
		seccomp_program_done(&prog);
		return;
	}
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "kernel: the child exited 0");
	ok(rep.pers_before >= 0,
	   "kernel: control: personality(0xffffffff) works before the filter");
	if (!ok(rep.load_r == 0, "kernel: seccomp(SET_MODE_FILTER) loads the program"))
		diag("  returned %d, errno %d", rep.load_r, rep.load_errno);
	is_int(rep.pers_after, -1, "kernel: personality(0xffffffff) fails under the filter");
	is_int(rep.pers_errno, EPERM, "kernel:   with EPERM");
	is_int(rep.pid_raw, pid, "kernel: getpid works under the filter");
	is_int(rep.pid_libc, pid, "kernel: libc getpid too");
	is_int(rep.name_r, 0, "kernel: prctl(PR_SET_NAME) works under the filter");
	is_int(rep.shm_r, -1, "kernel: shmget fails under the filter");
	is_int(rep.shm_errno, EPERM, "kernel:   with EPERM");

	kernel_x32(&prog);
	seccomp_program_done(&prog);
}

int main(void)
{
#if !defined(__x86_64__)
	skip_all("these checks evaluate the x86_64 program");
#endif
	test_interpreter();
	test_tables();
	test_check_names();
	test_is_denied();
	test_program_default();
	test_program_policies();
	test_other_process();
	test_mount_api_and_watches();
	test_fork_traps();
	test_metadata_traps();
	test_deny_clone3();
	test_prebuilt();
	test_kernel();
	return done_testing();
}
