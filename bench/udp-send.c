/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/udp-send: a sendmsg-heavy UDP client for bench/net: CALLS sendmsg(2) of 64 bytes to
 * 127.0.0.1:PORT from an unconnected socket, in batches; prints the median of the batches'
 * mean microseconds per call (and p10, p90). With --floor, the same loop with sendmsg trapped
 * by a filter of its own whose notifications a thread of this process answers with nothing
 * but NOTIF_RECV + NOTIF_SEND CONTINUE (SYNC_WAKE_UP, as sandlock's listener): the seccomp
 * floor of a trapped sendmsg, which no supervisor can go below. Run bare, under that floor,
 * and inside sandlock, the three say what the supervisor's own work on each call costs.
 *
 *   udp-send [--floor] PORT CALLS [BATCH]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench.h"
#include "syscall-util.h"

#if defined(__x86_64__)
#define BENCH_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define BENCH_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

static int listener_fd = -1;
static int ready[2];

/* The answering thread: created before the filter, so it runs unfiltered (a filter installed
 * without TSYNC applies to the installing thread and the threads it creates afterwards). */
static void *floor_thread(void *arg)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	char c;

	(void)arg;
	if (read(ready[0], &c, 1) != 1)
		return NULL;
	for (;;) {
		memset(&req, 0, sizeof(req));
		if (ioctl(listener_fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
			if (errno == EINTR || errno == ENOENT)
				continue;
			return NULL;
		}
		resp = (struct seccomp_notif_resp){ .id = req.id,
						    .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE };
		if (ioctl(listener_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
			return NULL;
	}
}

static int install_floor(void)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, BENCH_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_sendmsg, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(insns) / sizeof(insns[0]), .filter = insns };
	pthread_t t;

	if (pipe(ready) < 0 || pthread_create(&t, NULL, floor_thread, NULL) != 0)
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	listener_fd = (int)syscall(
		SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
	if (listener_fd < 0)
		return -1;
	(void)ioctl(listener_fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS,
		    (uint64_t)SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
	return write(ready[1], "g", 1) == 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
	int floor = argc > 1 && strcmp(argv[1], "--floor") == 0;

	if (argc - floor < 3) {
		fprintf(stderr, "usage: udp-send [--floor] PORT CALLS [BATCH]\n");
		return 2;
	}
	int port = atoi(argv[1 + floor]);
	long calls = atol(argv[2 + floor]);
	long batch = argc - floor > 3 ? atol(argv[3 + floor]) : 1000;
	if (batch <= 0 || calls < batch)
		return 2;
	if (floor && install_floor() < 0) {
		perror("udp-send: the floor's filter");
		return 1;
	}
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	char payload[64] = { 0 };
	struct iovec iov = { .iov_base = payload, .iov_len = sizeof(payload) };
	struct msghdr m = {
		.msg_name = &to, .msg_namelen = sizeof(to), .msg_iov = &iov, .msg_iovlen = 1
	};
	size_t n = (size_t)(calls / batch);
	double *us = calloc(n, sizeof(double));
	if (s < 0 || !us)
		return 1;
	for (size_t b = 0; b < n; b++) {
		int64_t t0 = bench_now_ns();
		for (long i = 0; i < batch; i++)
			if (sendmsg(s, &m, 0) != (ssize_t)sizeof(payload)) {
				perror("udp-send: sendmsg");
				return 1;
			}
		us[b] = (double)(bench_now_ns() - t0) / 1000.0 / (double)batch;
	}
	struct bench_stats st = bench_stats_of(us, n);
	printf("%.3f %.3f %.3f\n", st.median, st.p10, st.p90);
	return 0;
}
