/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/net-send: sendto(2) with an address, sendmsg(2) and sendmmsg(2) (all trapped in
 * every supervised sandbox: a UNIX datagram socket honours an address even when connected, and
 * the type of a socket learnt here says nothing of what the number names when the kernel looks
 * again, so none is CONTINUEd), made on the child's behalf. The supervisor copies everything the
 * call names (the address, the iovecs and their bytes, the control messages, whose SCM_RIGHTS
 * descriptors it takes from the caller's table), checks each destination (net_route: the rules of
 * the socket's protocol, a write grant for a named UNIX socket), and sends the copies on the
 * child's socket from a worker thread, which answers when the send ends. The child's memory is not
 * read again, so nothing it changes after the check reaches the kernel. sendmmsg stops at the first
 * refused entry: the ones before it are sent and counted (their msg_len written back), as the
 * kernel reports a failure after at least one message.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fd-util.h"
#include "handlers.h"
#include "macro.h"
#include "net.h"
#include "netlink.h"
#include "plan/plan.h"
#include "supervisor/child.h"
#include "supervisor/events.h"
#include "supervisor/supervisor.h"
#include "supervisor/policy-fn.h"

#define SEND_MAX (1u << 20)	  /* bytes copied for one message; a stream send is partial */
#define SEND_TOTAL_MAX (8u << 20) /* for one sendmmsg, whose later entries wait a next call */
#define CONTROL_MAX 65536	  /* more control data than any optmem_max: ENOBUFS */
#define IOV_MAX_KERNEL 1024	  /* UIO_MAXIOV */

struct send_msg {
	struct msghdr m;
	struct sockaddr_storage ss;
	struct iovec iov;  /* the payload, in one piece: its length set when checked, its bytes
			    * copied by the worker (send_msg_fill) */
	struct iovec *src; /* the caller's iovecs (their addresses in the caller) */
	size_t n_src;
	int pin;  /* the O_PATH descriptor of a named UNIX destination, or -1 */
	int *fds; /* the SCM_RIGHTS descriptors taken from the caller */
	size_t n_fds;
};

struct send_job {
	uint64_t id;
	uint32_t pid;
	int flags;
	int mmsg;     /* sendmmsg: answer a count, write each msg_len back */
	uint64_t vec; /* sendmmsg: the child's array */
	size_t n;
	struct send_msg msgs[];
};

static void send_msg_done(struct send_msg *s)
{
	free(s->iov.iov_base);
	free(s->src);
	free(s->m.msg_control);
	for (size_t i = 0; i < s->n_fds; i++)
		safe_close(s->fds[i]);
	free(s->fds);
	safe_close(s->pin);
}

static void send_job_free(struct send_job *job)
{
	for (size_t i = 0; i < job->n; i++)
		send_msg_done(&job->msgs[i]);
	free(job);
}

/* Whether a control message may be passed on: SCM_RIGHTS (translated below) and the options
 * that set how a datagram leaves (source address, TTL, class, GSO, timestamps), nothing that
 * changes where it goes. Refused: SCM_CREDENTIALS (the kernel would check it against the
 * supervisor, which could then vouch for any pid it may claim), IP_RETOPTS and IPv6 routing
 * headers (source routing: the datagram would go to the first hop, not the checked
 * destination), and anything not listed. */
static int cmsg_allowed(const struct cmsghdr *c)
{
	switch (c->cmsg_level) {
	case SOL_SOCKET:
		return c->cmsg_type == SCM_RIGHTS || c->cmsg_type == SO_TIMESTAMPING_OLD ||
		       c->cmsg_type == SO_MARK || c->cmsg_type == SO_PRIORITY ||
		       c->cmsg_type == SO_TXTIME;
	case IPPROTO_IP:
		return c->cmsg_type == IP_PKTINFO || c->cmsg_type == IP_TTL ||
		       c->cmsg_type == IP_TOS;
	case IPPROTO_IPV6:
		return c->cmsg_type == IPV6_PKTINFO || c->cmsg_type == IPV6_HOPLIMIT ||
		       c->cmsg_type == IPV6_TCLASS || c->cmsg_type == IPV6_DONTFRAG;
	case IPPROTO_UDP:
		return c->cmsg_type == 103 /* UDP_SEGMENT */;
	default:
		return 0;
	}
}

/* The denial of control message @c (cmsg_allowed), on the socket's destination. */
static void cmsg_refused_event(struct supervisor *sv, const struct seccomp_notif *req,
			       const struct cmsghdr *c)
{
	char reason[96];
	struct event ev = {
		.nr = (int)req->data.nr,
		.category = EVENT_NETWORK,
		.pid = (pid_t)req->pid,
		.verdict = SANDLOCK_VERDICT_DENY,
		.error = EPERM,
		.reason = reason,
	};

	snprintf(reason, sizeof(reason), "control message level %d type %d is not passed on",
		 c->cmsg_level, c->cmsg_type);
	events_emit(sv, &ev);
}

#define SCM_MAX_FD 253 /* the kernel's limit per message */

/* Check the copied control data @s->m as the kernel's __scm_send would (every header within
 * the buffer), refuse what may not pass (cmsg_allowed), and replace the SCM_RIGHTS descriptors
 * by copies taken from the caller's table (the kernel would have taken them from there).
 * -EINVAL (malformed, or too many descriptors), -EPERM, -EBADF (a descriptor the caller lacks). */
static int translate_control(struct supervisor *sv, const struct seccomp_notif *req,
			     struct send_msg *s)
{
	const char *base = s->m.msg_control;
	size_t total = s->m.msg_controllen;

	for (size_t off = 0; off + sizeof(struct cmsghdr) <= total;) {
		struct cmsghdr *c = (struct cmsghdr *)(base + off);
		if (c->cmsg_len < sizeof(struct cmsghdr) || c->cmsg_len > total - off)
			return -EINVAL;
		if (!cmsg_allowed(c)) {
			cmsg_refused_event(sv, req, c);
			return -EPERM;
		}
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			if (c->cmsg_len < CMSG_LEN(0) || n > SCM_MAX_FD ||
			    s->n_fds + n > SCM_MAX_FD)
				return -EINVAL;
			int *grown = realloc(s->fds, (s->n_fds + n + 1) * sizeof(int));
			if (!grown)
				return -ENOMEM;
			s->fds = grown;
			unsigned char *data = CMSG_DATA(c);
			for (size_t i = 0; i < n; i++) {
				int theirs, ours;
				memcpy(&theirs, data + i * sizeof(int), sizeof(int));
				ours = notif_get_fd(sv->listener, req, theirs);
				if (ours < 0)
					return ours;
				s->fds[s->n_fds++] = ours;
				memcpy(data + i * sizeof(int), &ours, sizeof(int));
			}
		}
		off += CMSG_ALIGN(c->cmsg_len);
	}
	return 0;
}

/* Read @len bytes at @addr in the caller without asking whether its notification still
 * stands: nothing is sent before a read that asks (send_msg_fill: the payload; send_inline or
 * the worker: once more when it has none), and a notification still standing then proves the
 * caller lived, its pid its own, through every read before it. Where process_vm_readv is
 * refused, notif_mem_read (through /proc/<pid>/mem), which asks. */
static int peek(struct supervisor *sv, const struct seccomp_notif *req, uint64_t addr, void *buf,
		size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };

	if (process_vm_readv((pid_t)req->pid, &local, 1, &remote, 1, 0) == (ssize_t)len)
		return 0;
	return notif_mem_read(sv->listener, req, addr, buf, len);
}

/* Copy the message @um (the child's header, its pointers the child's) into @s for socket
 * @sock: the destination checked and rewritten (net_route), at most @budget payload bytes (a
 * stream send beyond it is cut short; a larger datagram is EMSGSIZE). */
static int send_msg_prepare(struct supervisor *sv, const struct seccomp_notif *req, int sock,
			    int domain, uint32_t proto, int type, const struct msghdr *um,
			    size_t budget, struct send_msg *s)
{
	size_t total = 0;
	int r;

	*s = (struct send_msg){ .pin = -1 };
	/* A virtual netlink socket sends to its server, whatever address names the kernel. */
	int fake = domain == AF_UNIX && um->msg_name && netlink_fake_portid(sv, sock, NULL);
	if (um->msg_name && um->msg_namelen && !fake) {
		socklen_t len = um->msg_namelen;
		if (len > sizeof(s->ss))
			return -EINVAL;
		r = peek(sv, req, (uint64_t)um->msg_name, &s->ss, len);
		if (r == 0) /* a held send: the destination its policy_fn approved, or EPERM */
			r = policy_fn_addr_check(sv, &s->ss, len);
		if (r < 0)
			return r;
		/* A TCP socket ignores an address (Fast Open is refused before). */
		int check = sv->plan->net.onbehalf && proto != NET_PROTO_TCP;
		r = net_route(sv, req, sock, domain, proto, check, &s->ss, &len, &s->pin);
		if (r < 0)
			return r;
		s->m.msg_name = &s->ss;
		s->m.msg_namelen = len;
	} else if (!fake && (r = policy_fn_addr_check(sv, NULL, 0)) < 0) {
		return r; /* no destination where the callback was shown one */
	}
	if (um->msg_iovlen > IOV_MAX_KERNEL)
		return -EMSGSIZE;
	if (um->msg_iovlen) {
		s->src = malloc(um->msg_iovlen * sizeof(struct iovec));
		if (!s->src)
			return -ENOMEM;
		s->n_src = um->msg_iovlen;
		r = peek(sv, req, (uint64_t)um->msg_iov, s->src,
			 um->msg_iovlen * sizeof(struct iovec));
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < s->n_src; i++) {
		if ((ssize_t)s->src[i].iov_len < 0)
			return -EINVAL;
		total += s->src[i].iov_len;
		if ((ssize_t)total < 0)
			return -EINVAL;
	}
	if (total > budget) {
		if (type != SOCK_STREAM)
			return -EMSGSIZE;
		total = budget;
	}
	s->iov.iov_len = total; /* the bytes: send_msg_fill, on the worker */
	if (um->msg_control && um->msg_controllen) {
		if (um->msg_controllen > CONTROL_MAX)
			return -ENOBUFS;
		s->m.msg_control = malloc(um->msg_controllen);
		if (!s->m.msg_control)
			return -ENOMEM;
		s->m.msg_controllen = um->msg_controllen;
		r = notif_mem_read(sv->listener, req, (uint64_t)um->msg_control, s->m.msg_control,
				   um->msg_controllen);
		if (r == 0)
			r = translate_control(sv, req, s);
		if (r < 0)
			return r;
	}
	return 0;
}

/* On the worker: the payload's bytes, copied from the caller's iovecs (@s->src) now rather
 * than on the loop, which a read of the caller's memory could hold up (a page to fault in from
 * a slow file). The payload decides nothing: the checks were made on the address and the
 * descriptors. -EFAULT as the kernel, NOTIF_GONE. */
static int send_msg_fill(int listener, const struct seccomp_notif *req, struct send_msg *s)
{
	size_t total = s->iov.iov_len;

	if (s->m.msg_iov)
		return 0; /* copied on the loop already (send_inline) */
	s->iov.iov_base = malloc(total ? total : 1);
	if (!s->iov.iov_base)
		return -ENOMEM;
	for (size_t i = 0, off = 0; i < s->n_src && off < total; i++) {
		size_t n = MIN(s->src[i].iov_len, total - off);
		if (n) {
			int r = notif_mem_read(listener, req, (uint64_t)s->src[i].iov_base,
					       (char *)s->iov.iov_base + off, n);
			if (r < 0)
				return r;
		}
		off += n;
	}
	s->m.msg_iov = &s->iov;
	s->m.msg_iovlen = 1;
	return 0;
}

/* One send as the caller's would go, never blocking for good: the caller's flags but
 * MSG_ZEROCOPY (the kernel would send from supervisor memory freed right after the call) and
 * signals (the worker thread is not the caller); a blocking caller's send that would wait is
 * tried again when the socket is writable, and given up when the caller is gone, so no worker
 * outlives its sandbox (a UNIX datagram send waiting for a full peer is not woken by
 * shutdown). Returns the bytes sent or -errno. */
static ssize_t send_one(int listener, uint64_t id, int sock, struct msghdr *m, int flags)
{
	int fl = fcntl(sock, F_GETFL);
	int blocking = !(flags & MSG_DONTWAIT) && fl >= 0 && !(fl & O_NONBLOCK);
	flags &= ~MSG_ZEROCOPY;

	for (;;) {
		ssize_t r = sendmsg(sock, m, flags | MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r >= 0)
			return r;
		if (!blocking || (errno != EAGAIN && errno != EWOULDBLOCK))
			return negative_errno();
		struct pollfd p = { .fd = sock, .events = POLLOUT };
		if (poll(&p, 1, 100) > 0)
			usleep(1000); /* writable, yet the peer is full: do not spin */
		if (!notif_id_valid(listener, id))
			return -ECANCELED; /* nobody to answer */
	}
}

/* SIGPIPE to the thread @tid, as the kernel sends it to a writer on a broken stream. */
static void signal_pipe(uint32_t tid)
{
	pid_t tgid;

	if (proc_status_field((pid_t)tid, "Tgid", &tgid) == 0)
		(void)syscall(SYS_tgkill, tgid, (pid_t)tid, SIGPIPE);
}

/* On a worker: the sends, the msg_len write-back, the answer. Run with listener -1 when the
 * sandbox ended first: only releases. */
static void send_worker(int listener, int sock, void *arg)
{
	struct send_job *job = arg;
	struct seccomp_notif_resp resp = { .id = job->id };
	struct seccomp_notif req = { .id = job->id, .pid = job->pid };
	size_t sent = 0;
	ssize_t r = 0;

	if (listener < 0 || !notif_id_valid(listener, job->id)) {
		send_job_free(job);
		return;
	}
	for (; sent < job->n; sent++) {
		r = send_msg_fill(listener, &req, &job->msgs[sent]);
		if (r == NOTIF_GONE)
			r = -ECANCELED;
		if (r == 0)
			r = send_one(listener, job->id, sock, &job->msgs[sent].m, job->flags);
		if (r == -EPIPE && !(job->flags & MSG_NOSIGNAL))
			signal_pipe(job->pid); /* what the kernel does to the sender */
		if (r < 0)
			break;
		if (job->mmsg) {
			/* msg_len of entry @sent: after its msghdr in struct mmsghdr. */
			unsigned len = (unsigned)r;
			uint64_t at = job->vec + sent * sizeof(struct mmsghdr) +
				      offsetof(struct mmsghdr, msg_len);
			(void)notif_mem_write(listener, &req, at, &len, sizeof(len));
		}
		if (!job->mmsg)
			break;
	}
	if (job->mmsg && sent > 0)
		notif_answer_value(&resp, (int64_t)sent);
	else if (r < 0)
		notif_answer_errno(&resp, (int)r);
	else
		notif_answer_value(&resp, r);
	(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp); /* ENOENT: the task is gone */
	send_job_free(job);
}

/* The socket of a trapped send, its family and protocol; flags with MSG_FASTOPEN refused. */
static int send_socket(struct supervisor *sv, const struct seccomp_notif *req, uint64_t flags,
		       int *domain, uint32_t *proto, int *type)
{
	/* TCP Fast Open connects past Landlock's connect hook; EOPNOTSUPP, what the kernel says
	 * where client TFO is off (the seccomp rule says the same for untrapped sends). */
	if (flags & MSG_FASTOPEN)
		return -EOPNOTSUPP;
	int sock = net_take_socket(sv, req, domain);
	if (sock < 0)
		return sock;
	int r = 0;
	*proto = 0;
	*type = 0;
	socklen_t optlen = sizeof(int);
	if (*domain == AF_INET || *domain == AF_INET6)
		r = net_sock_proto(sock, proto, type);
	else if (getsockopt(sock, SOL_SOCKET, SO_TYPE, type, &optlen) < 0)
		r = negative_errno();
	if (r < 0) {
		close(sock);
		return r;
	}
	return sock;
}

/* A send of at most SEND_INLINE_MAX bytes is tried on the loop first, without waiting
 * (MSG_DONTWAIT): most never would (a datagram to loopback, a socket with room), and the hop
 * to a worker thread and back would cost more than the send. Its bytes are read on the loop
 * then, as the header, the address and the iovecs always are. */
#define SEND_INLINE_MAX 65536u

/* The single send of @job made here: 0 with @resp answered, 1 when it would wait for a
 * blocking caller (then the worker sends the copy made here), or NOTIF_GONE. */
static int send_inline(struct supervisor *sv, const struct seccomp_notif *req,
		       struct seccomp_notif_resp *resp, int sock, struct send_job *job)
{
	struct send_msg *s = &job->msgs[0];
	int r = send_msg_fill(sv->listener, req, s);
	if (r == NOTIF_GONE)
		return r;
	if (r < 0) {
		notif_answer_errno(resp, r);
		return 0;
	}
	/* The payload's read asked whether the notification stands only when it had bytes. */
	if (!s->iov.iov_len && !notif_id_valid(sv->listener, req->id))
		return NOTIF_GONE;
	int fl = job->flags & ~MSG_ZEROCOPY;
	ssize_t n = sendmsg(sock, &s->m, fl | MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && !(fl & MSG_DONTWAIT)) {
		int st = fcntl(sock, F_GETFL);
		if (st >= 0 && !(st & O_NONBLOCK))
			return 1; /* a blocking caller waits: on a worker */
		errno = EAGAIN;
	}
	if (n < 0 && errno == EPIPE && !(fl & MSG_NOSIGNAL))
		signal_pipe(req->pid); /* what the kernel does to the sender */
	if (n < 0)
		notif_answer_errno(resp, negative_errno());
	else
		notif_answer_value(resp, n);
	return 0;
}

static int send_submit(struct supervisor *sv, int sock, struct send_job *job)
{
	int r = supervisor_run_worker(sv, sock, send_worker, job);
	if (r < 0) {
		send_job_free(job);
		return r; /* -EAGAIN: too many sends waiting already */
	}
	return NOTIF_DEFERRED;
}

/* sendto(fd, buf, len, flags, addr, addrlen) and sendmsg(fd, msg, flags). */
int handle_sendmsg(struct supervisor *sv, const struct seccomp_notif *req,
		   struct seccomp_notif_resp *resp)
{
	int is_sendto = req->data.nr == __NR_sendto;
	uint64_t flags = req->data.args[is_sendto ? 3 : 2];
	struct msghdr um = { 0 };
	struct iovec iov = { 0 };
	int domain, type;
	uint32_t proto;
	int r;

	_cleanup_close_ int sock = send_socket(sv, req, flags, &domain, &proto, &type);
	if (sock < 0)
		return sock;
	if (is_sendto) {
		iov = (struct iovec){ .iov_base = (void *)req->data.args[1],
				      .iov_len = (size_t)req->data.args[2] };
		um = (struct msghdr){ .msg_name = (void *)req->data.args[4],
				      .msg_namelen = (socklen_t)req->data.args[5] };
		if ((uint32_t)req->data.args[5] > sizeof(struct sockaddr_storage))
			return -EINVAL;
	} else {
		r = peek(sv, req, req->data.args[1], &um, sizeof(um));
		if (r < 0)
			return r;
	}
	struct send_job *job = calloc(1, sizeof(*job) + sizeof(struct send_msg));
	if (!job)
		return -ENOMEM;
	*job = (struct send_job){ .id = req->id, .pid = req->pid, .flags = (int)flags, .n = 1 };
	if (is_sendto) {
		/* The payload as one iovec of the caller's, copied by the worker. */
		struct msghdr flat = um;
		flat.msg_iov = NULL;
		flat.msg_iovlen = 0;
		r = send_msg_prepare(sv, req, sock, domain, proto, type, &flat, SEND_MAX,
				     &job->msgs[0]);
		struct send_msg *s = &job->msgs[0];
		size_t total = iov.iov_len;
		if (r == 0 && (ssize_t)total < 0)
			r = -EINVAL;
		if (r == 0 && total > SEND_MAX)
			r = type == SOCK_STREAM ? (total = SEND_MAX, 0) : -EMSGSIZE;
		if (r == 0 && !(s->src = malloc(sizeof(*s->src))))
			r = -ENOMEM;
		if (r == 0) {
			s->src[0] = iov;
			s->n_src = 1;
			s->iov.iov_len = total;
		}
	} else {
		r = send_msg_prepare(sv, req, sock, domain, proto, type, &um, SEND_MAX,
				     &job->msgs[0]);
	}
	if (r == 0 && job->msgs[0].iov.iov_len <= SEND_INLINE_MAX)
		r = send_inline(sv, req, resp, sock, job);
	else if (r == 0)
		r = 1;
	if (r <= 0) {
		send_job_free(job);
		return r;
	}
	r = send_submit(sv, sock, job);
	if (r == NOTIF_DEFERRED)
		TAKE_FD(sock);
	return r;
}

/* sendmmsg(fd, msgvec, vlen, flags). */
int handle_sendmmsg(struct supervisor *sv, const struct seccomp_notif *req,
		    struct seccomp_notif_resp *resp)
{
	uint64_t flags = req->data.args[3];
	size_t vlen = MIN((uint32_t)req->data.args[2], IOV_MAX_KERNEL); /* as the kernel */
	size_t budget = SEND_TOTAL_MAX;
	int domain, type;
	uint32_t proto;
	int r = 0;

	_cleanup_close_ int sock = send_socket(sv, req, flags, &domain, &proto, &type);
	if (sock < 0)
		return sock;
	if (vlen == 0) {
		notif_answer_value(resp, 0); /* nothing to send: 0 messages */
		return 0;
	}
	_cleanup_free_ struct mmsghdr *vec = malloc(vlen * sizeof(*vec));
	struct send_job *job = calloc(1, sizeof(*job) + vlen * sizeof(struct send_msg));
	if (!vec || !job) {
		free(job);
		return -ENOMEM;
	}
	*job = (struct send_job){ .id = req->id,
				  .pid = req->pid,
				  .flags = (int)flags,
				  .mmsg = 1,
				  .vec = req->data.args[1] };
	r = peek(sv, req, req->data.args[1], vec, vlen * sizeof(*vec));
	/* The entries up to the first that cannot be sent: it and the rest are not. */
	for (size_t i = 0; r == 0 && i < vlen && budget; i++) {
		r = send_msg_prepare(sv, req, sock, domain, proto, type, &vec[i].msg_hdr, budget,
				     &job->msgs[i]);
		if (r < 0) {
			send_msg_done(&job->msgs[i]);
			break;
		}
		budget -= job->msgs[i].iov.iov_len;
		job->n = i + 1;
	}
	if (job->n == 0) {
		send_job_free(job);
		return r < 0 ? r : -ENOMEM;
	}
	r = send_submit(sv, sock, job);
	if (r == NOTIF_DEFERRED)
		TAKE_FD(sock);
	return r;
}
