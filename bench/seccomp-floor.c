/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/seccomp-floor: run a command under the smallest seccomp filter there is (one
 * instruction: allow), for bench/net to show what any seccomp filter costs a syscall-heavy
 * program, whatever the filter says: every syscall then enters the kernel's slow path, even
 * when the filter cache answers it.
 *
 *   seccomp-floor COMMAND [ARG...]
 */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { .len = 1, .filter = &allow };

	if (argc < 2) {
		fprintf(stderr, "usage: seccomp-floor COMMAND [ARG...]\n");
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) {
		perror("seccomp-floor: seccomp");
		return 1;
	}
	execvp(argv[1], argv + 1);
	perror("seccomp-floor: exec");
	return 127;
}
