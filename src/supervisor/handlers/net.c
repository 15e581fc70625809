/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/net: connect(2) on the child's behalf, trapped when a network rule names an IP or a
 * CIDR or a deny rule exists (policy_net_onbehalf). The supervisor copies the address (longer
 * than a sockaddr_storage: EINVAL), takes the child's socket with pidfd_getfd, and for a TCP
 * socket matches the destination (IPv4-mapped IPv6 as IPv4) against the allow rules, then the
 * deny rules, which win; a refused destination gets ECONNREFUSED. An allowed one is connected
 * here, on the socket the child named, with the address that was checked: the child's memory
 * is never read again. A socket in blocking mode is connected by a worker thread, which
 * answers when the connect ends, so the loop never waits.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fd-util.h"
#include "handlers.h"
#include "plan/plan.h"
#include "supervisor/notif.h"
#include "supervisor/supervisor.h"

/* The destination of @ss as the rules see it. Returns 0, or -EINVAL/-EAFNOSUPPORT as the
 * kernel's connect would for a short or foreign address. */
static int destination(const struct sockaddr_storage *ss, socklen_t len, int *family,
		       uint8_t addr[16], uint16_t *port)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
		if (len < sizeof(*in))
			return -EINVAL;
		*family = AF_INET;
		memcpy(addr, &in->sin_addr, 4);
		*port = ntohs(in->sin_port);
		return 0;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
		if (len < 24) /* SIN6_LEN_RFC2133: the kernel's minimum */
			return -EINVAL;
		*family = AF_INET6;
		memcpy(addr, &in6->sin6_addr, 16);
		*port = ntohs(in6->sin6_port);
		return 0;
	}
	return -EAFNOSUPPORT;
}

static int allowed(const struct net_plan *net, int family, const uint8_t *addr, uint16_t port)
{
	int ok = 0;

	for (size_t i = 0; i < net->n_allow && !ok; i++)
		ok = net_rule_match(&net->allow[i], NET_PROTO_TCP, family, addr, port);
	for (size_t i = 0; i < net->n_deny && ok; i++)
		ok = !net_rule_match(&net->deny[i], NET_PROTO_TCP, family, addr, port);
	return ok;
}

struct connect_job {
	uint64_t id;
	int sock;
	socklen_t len;
	struct sockaddr_storage ss;
};

/* On a worker: the blocking connect, then the answer. */
static void connect_worker(int listener, void *arg)
{
	struct connect_job *job = arg;
	struct seccomp_notif_resp resp = { .id = job->id };

	int r = connect(job->sock, (struct sockaddr *)&job->ss, job->len);
	notif_answer_errno(&resp, r < 0 ? negative_errno() : 0);
	if (r == 0)
		notif_answer_value(&resp, 0);
	(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp); /* ENOENT: the task is gone */
	free(job);
}

int handle_connect(struct supervisor *sv, const struct seccomp_notif *req,
		   struct seccomp_notif_resp *resp)
{
	struct sockaddr_storage ss = { 0 };
	uint64_t len = req->data.args[2] & 0xffffffffu; /* socklen_t */
	int domain = 0, type = 0, family;
	socklen_t optlen = sizeof(int);
	uint8_t addr[16];
	uint16_t port;
	int r;

	if (len > sizeof(ss))
		return -EINVAL;
	if (len < sizeof(ss.ss_family))
		return -EINVAL;
	r = notif_mem_read(sv->listener, req, req->data.args[1], &ss, len);
	if (r < 0)
		return r;
	_cleanup_close_ int sock = notif_get_fd(sv->listener, req, (int)req->data.args[0]);
	if (sock < 0)
		return sock;
	if (getsockopt(sock, SOL_SOCKET, SO_DOMAIN, &domain, &optlen) < 0)
		return errno == ENOTSOCK ? -ENOTSOCK : negative_errno();
	if (domain != AF_INET && domain != AF_INET6) {
		/* A UNIX or netlink socket: the rules are about IP, so the kernel connects it,
		 * which also keeps path resolution and the abstract-socket scope the child's. Safe
		 * although the kernel reads the descriptor and the address again: if another thread
		 * swaps in a TCP socket meanwhile, Landlock refuses it (CONNECT_TCP is handled with
		 * no port allowed whenever this handler is in use, plan/landlock.c), and UDP or raw
		 * sockets cannot be created (the seccomp socket rules). */
		notif_answer_continue(resp);
		return 0;
	}
	optlen = sizeof(int);
	if (getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &optlen) < 0)
		return negative_errno();
	if (type != SOCK_STREAM)
		return -EPERM; /* cannot exist (seccomp socket rules): fail closed */

	if (ss.ss_family == AF_UNSPEC) {
		/* connect(AF_UNSPEC) dissolves an association; it reaches nobody. */
		r = connect(sock, (struct sockaddr *)&ss, (socklen_t)len);
		notif_answer_errno(resp, r < 0 ? negative_errno() : 0);
		return 0;
	}
	r = destination(&ss, (socklen_t)len, &family, addr, &port);
	if (r < 0)
		return r;
	if (!sv->net || !allowed(sv->net, family, addr, port))
		return -ECONNREFUSED;

	int flags = fcntl(sock, F_GETFL);
	if (flags < 0)
		return negative_errno();
	if (flags & O_NONBLOCK) {
		/* Returns at once (0, EINPROGRESS or an error), as it would have for the child. */
		r = connect(sock, (struct sockaddr *)&ss, (socklen_t)len);
		notif_answer_errno(resp, r < 0 ? negative_errno() : 0);
		if (r == 0)
			notif_answer_value(resp, 0);
		return 0;
	}
	struct connect_job *job = malloc(sizeof(*job));
	if (!job)
		return -ENOMEM;
	*job = (struct connect_job){ .id = req->id, .sock = sock, .len = (socklen_t)len, .ss = ss };
	r = supervisor_run_worker(sv, sock, connect_worker, job);
	if (r < 0) {
		free(job);
		return r; /* -EAGAIN: too many connects at once */
	}
	TAKE_FD(sock); /* the worker's now */
	return NOTIF_DEFERRED;
}
