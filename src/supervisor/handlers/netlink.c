/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/netlink: a virtual NETLINK_ROUTE socket, whose link and address dumps show only the
 * loopback interface (lo, 127.0.0.1/8, ::1/128), so `ip addr`, getifaddrs() and if_nameindex()
 * in a sandbox see no host interface. No namespace is involved: socket(AF_NETLINK,
 * NETLINK_ROUTE) is answered with one end of a SOCK_SEQPACKET socketpair (installed with
 * SECCOMP_ADDFD_FLAG_SEND), whose other end a worker thread serves as rtnetlink would.
 *
 * What makes the fake pass for netlink: bind() and getsockname() are trapped and answered for
 * it (AF_NETLINK, a port id of its own), a connect or an addressed send to the kernel is taken
 * as such (a SEQPACKET socket ignores the address of an untrapped sendmsg), and the serving end
 * is bound to an abstract name laid out so that the sender address a recvmsg() reports reads as
 * a sockaddr_nl of port id 0, the kernel's: 12 bytes, "\0", one byte of its own, eight zeros.
 * Requests other than dumps of links, addresses, routes, neighbours and rules, and gets of lo,
 * are answered EPERM (no change to the host's network is possible from here anyway).
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_arp.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "fd-util.h"
#include "handlers.h"
#include "macro.h"
#include "netlink.h"
#include "supervisor/child.h"
#include "supervisor/supervisor.h"

#define NL_BUF 8192

/* ---- the table of virtual sockets ------------------------------------------------------ */

static int fake_find_locked(struct supervisor *sv, const struct stat *st)
{
	for (int i = 0; i < SUPERVISOR_MAX_NETLINK; i++)
		if (sv->netlink[i].used && sv->netlink[i].dev == st->st_dev &&
		    sv->netlink[i].ino == st->st_ino)
			return i;
	return -1;
}

int netlink_fake_portid(struct supervisor *sv, int sock, uint32_t *portid)
{
	struct stat st;

	if (fstat(sock, &st) < 0)
		return 0;
	pthread_mutex_lock(&sv->netlink_lock);
	int i = fake_find_locked(sv, &st);
	if (i >= 0 && portid)
		*portid = sv->netlink[i].portid;
	pthread_mutex_unlock(&sv->netlink_lock);
	return i >= 0;
}

static int fake_add(struct supervisor *sv, const struct stat *st, uint32_t *portid)
{
	int slot = -1;

	pthread_mutex_lock(&sv->netlink_lock);
	for (int i = 0; i < SUPERVISOR_MAX_NETLINK && slot < 0; i++)
		if (!sv->netlink[i].used)
			slot = i;
	if (slot >= 0) {
		*portid = 0x80000000u | ++sv->netlink_serial;
		sv->netlink[slot] = (struct netlink_fake){
			.used = 1, .dev = st->st_dev, .ino = st->st_ino, .portid = *portid
		};
	}
	pthread_mutex_unlock(&sv->netlink_lock);
	return slot;
}

static void fake_remove(struct supervisor *sv, int slot)
{
	pthread_mutex_lock(&sv->netlink_lock);
	sv->netlink[slot].used = 0;
	pthread_mutex_unlock(&sv->netlink_lock);
}

/* ---- answers --------------------------------------------------------------------------- */

struct nlbuf {
	char data[NL_BUF];
	size_t len;
	size_t msg; /* where the message being built starts */
};

static void *put(struct nlbuf *b, size_t n)
{
	size_t at = NLMSG_ALIGN(b->len);
	if (at + n > sizeof(b->data))
		return NULL;
	memset(b->data + b->len, 0, at + n - b->len);
	b->len = at + n;
	return b->data + at;
}

static struct nlmsghdr *msg_begin(struct nlbuf *b, const struct nlmsghdr *req, uint16_t type,
				  uint16_t flags, uint32_t portid)
{
	b->msg = NLMSG_ALIGN(b->len);
	struct nlmsghdr *h = put(b, sizeof(*h));
	if (h)
		*h = (struct nlmsghdr){ .nlmsg_type = type,
					.nlmsg_flags = flags,
					.nlmsg_seq = req->nlmsg_seq,
					.nlmsg_pid = portid };
	return h;
}

static void msg_end(struct nlbuf *b)
{
	struct nlmsghdr *h = (struct nlmsghdr *)(b->data + b->msg);
	h->nlmsg_len = (uint32_t)(b->len - b->msg);
}

static void attr(struct nlbuf *b, uint16_t type, const void *v, size_t n)
{
	struct nlattr *a = put(b, NLA_ALIGN(NLA_HDRLEN + n)); /* padded, as the kernel */
	if (!a)
		return;
	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + n);
	memcpy((char *)a + NLA_HDRLEN, v, n);
}

static void attr_u32(struct nlbuf *b, uint16_t type, uint32_t v)
{
	attr(b, type, &v, sizeof(v));
}

static void attr_u8(struct nlbuf *b, uint16_t type, uint8_t v)
{
	attr(b, type, &v, sizeof(v));
}

static void link_lo(struct nlbuf *b, const struct nlmsghdr *req, uint16_t flags, uint32_t portid)
{
	static const uint8_t zero_mac[6] = { 0 };

	if (!msg_begin(b, req, RTM_NEWLINK, flags, portid))
		return;
	struct ifinfomsg *ifi = put(b, sizeof(*ifi));
	if (!ifi)
		return;
	*ifi = (struct ifinfomsg){ .ifi_family = AF_UNSPEC,
				   .ifi_type = ARPHRD_LOOPBACK,
				   .ifi_index = 1,
				   .ifi_flags =
					   IFF_UP | IFF_LOOPBACK | IFF_RUNNING | IFF_LOWER_UP };
	attr(b, IFLA_IFNAME, "lo", 3);
	attr_u32(b, IFLA_TXQLEN, 1000);
	attr_u8(b, IFLA_OPERSTATE, 0 /* IF_OPER_UNKNOWN, as lo */);
	attr_u8(b, IFLA_LINKMODE, 0);
	attr_u32(b, IFLA_MTU, 65536);
	attr_u32(b, IFLA_GROUP, 0);
	attr(b, IFLA_QDISC, "noqueue", 8);
	attr_u8(b, IFLA_CARRIER, 1);
	attr(b, IFLA_ADDRESS, zero_mac, sizeof(zero_mac));
	attr(b, IFLA_BROADCAST, zero_mac, sizeof(zero_mac));
	msg_end(b);
}

static void addr_lo(struct nlbuf *b, const struct nlmsghdr *req, int family, uint32_t portid)
{
	static const uint8_t v4[4] = { 127, 0, 0, 1 };
	static const uint8_t v6[16] = { [15] = 1 };
	struct ifa_cacheinfo ci = { .ifa_prefered = 0xffffffffu, .ifa_valid = 0xffffffffu };

	if (!msg_begin(b, req, RTM_NEWADDR, NLM_F_MULTI, portid))
		return;
	struct ifaddrmsg *ifa = put(b, sizeof(*ifa));
	if (!ifa)
		return;
	*ifa = (struct ifaddrmsg){ .ifa_family = (uint8_t)family,
				   .ifa_prefixlen = family == AF_INET ? 8 : 128,
				   .ifa_flags = IFA_F_PERMANENT,
				   .ifa_scope = RT_SCOPE_HOST,
				   .ifa_index = 1 };
	const uint8_t *a = family == AF_INET ? v4 : v6;
	size_t n = family == AF_INET ? sizeof(v4) : sizeof(v6);
	attr(b, IFA_ADDRESS, a, n);
	if (family == AF_INET) {
		attr(b, IFA_LOCAL, a, n);
		attr(b, IFA_LABEL, "lo", 3);
	}
	attr_u32(b, IFA_FLAGS, IFA_F_PERMANENT);
	attr(b, IFA_CACHEINFO, &ci, sizeof(ci));
	msg_end(b);
}

static void done(struct nlbuf *b, const struct nlmsghdr *req, uint32_t portid)
{
	if (!msg_begin(b, req, NLMSG_DONE, NLM_F_MULTI, portid))
		return;
	int32_t zero = 0;
	int32_t *v = put(b, sizeof(zero));
	if (v)
		memcpy(v, &zero, sizeof(zero));
	msg_end(b);
}

/* NLMSG_ERROR carrying @err and the whole request, as the kernel answers without extended
 * acknowledgements. */
static void error_msg(struct nlbuf *b, const struct nlmsghdr *req, int err, uint32_t portid)
{
	if (!msg_begin(b, req, NLMSG_ERROR, 0, portid))
		return;
	int32_t *e = put(b, sizeof(*e));
	void *copy = e ? put(b, req->nlmsg_len) : NULL;
	if (!copy)
		return;
	*e = err;
	memcpy(copy, req, req->nlmsg_len);
	msg_end(b);
}

/* A get of one link: lo by index 1 or by name. */
static int is_lo_request(const struct nlmsghdr *h)
{
	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifinfomsg)))
		return 0;
	const struct ifinfomsg *ifi = NLMSG_DATA(h);
	if (ifi->ifi_index == 1)
		return 1;
	if (ifi->ifi_index != 0)
		return 0;
	size_t off = NLMSG_LENGTH(sizeof(*ifi));
	off = NLMSG_ALIGN(off);
	while (off + NLA_HDRLEN <= h->nlmsg_len) {
		const struct nlattr *a = (const struct nlattr *)((const char *)h + off);
		if (a->nla_len < NLA_HDRLEN || off + a->nla_len > h->nlmsg_len)
			return 0;
		if ((a->nla_type & NLA_TYPE_MASK) == IFLA_IFNAME)
			return a->nla_len - NLA_HDRLEN >= 2 &&
			       memcmp((const char *)a + NLA_HDRLEN, "lo", 3) == 0;
		off += NLA_ALIGN(a->nla_len);
	}
	return 0;
}

/* The answer to one request, appended to @b. */
static void answer(struct nlbuf *b, const struct nlmsghdr *h, uint32_t portid)
{
	int dump = (h->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP;
	int family = AF_UNSPEC;

	if (h->nlmsg_len >= NLMSG_LENGTH(1))
		family = *(const uint8_t *)NLMSG_DATA(h);
	switch (h->nlmsg_type) {
	case RTM_GETLINK:
		if (dump) {
			link_lo(b, h, NLM_F_MULTI, portid);
			done(b, h, portid);
		} else if (is_lo_request(h)) {
			link_lo(b, h, 0, portid);
		} else {
			error_msg(b, h, -ENODEV, portid);
		}
		return;
	case RTM_GETADDR:
		if (!dump) {
			error_msg(b, h, -EOPNOTSUPP, portid);
			return;
		}
		if (family == AF_UNSPEC || family == AF_INET)
			addr_lo(b, h, AF_INET, portid);
		if (family == AF_UNSPEC || family == AF_INET6)
			addr_lo(b, h, AF_INET6, portid);
		done(b, h, portid);
		return;
	case RTM_GETROUTE:
	case RTM_GETNEIGH:
	case RTM_GETRULE:
	case RTM_GETNETCONF:
	case RTM_GETNSID:
		if (dump) {
			done(b, h, portid); /* nothing of the host's to show */
			return;
		}
		error_msg(b, h, -ENODEV, portid);
		return;
	default:
		/* Changes and everything else: what an unprivileged caller gets. */
		error_msg(b, h, -EPERM, portid);
		return;
	}
}

struct netlink_job {
	struct supervisor *sv;
	int slot;
	uint32_t portid;
};

/* On a worker: serve the fake until the child's end is closed or the sandbox ends (the pool
 * shuts @sock down then). */
static void netlink_worker(int listener, int sock, void *arg)
{
	struct netlink_job *job = arg;
	struct nlbuf *out = malloc(sizeof(*out));
	char *in = malloc(NL_BUF);

	while (listener >= 0 && out && in) {
		ssize_t n = recv(sock, in, NL_BUF, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		out->len = 0;
		for (struct nlmsghdr *h = (struct nlmsghdr *)in; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n))
			if (h->nlmsg_flags & NLM_F_REQUEST)
				answer(out, h, job->portid);
		if (out->len && send(sock, out->data, out->len, MSG_NOSIGNAL) < 0)
			break;
	}
	free(out);
	free(in);
	fake_remove(job->sv, job->slot);
	free(job);
}

/* ---- the handlers -------------------------------------------------------------------- */

/* The serving end's name: reads as the kernel's sockaddr_nl (see the top of this file). */
static int bind_kernel_name(int sock)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 10);

	for (int x = 0; x < 256; x++) {
		sun.sun_path[1] = (char)x;
		if (bind(sock, (struct sockaddr *)&sun, len) == 0)
			return 0;
		if (errno != EADDRINUSE)
			return negative_errno();
	}
	return -EADDRINUSE; /* all taken: recvmsg then reports no sender address */
}

/* socket(AF_NETLINK, type, NETLINK_ROUTE) */
int handle_netlink_socket(struct supervisor *sv, const struct seccomp_notif *req,
			  struct seccomp_notif_resp *resp)
{
	int type = (int)req->data.args[1];
	int sp[2];
	struct stat st;
	uint32_t portid;

	(void)resp;
	if ((type & 0xf) != SOCK_RAW && (type & 0xf) != SOCK_DGRAM)
		return -ESOCKTNOSUPPORT;
	if (type & ~(0xf | SOCK_NONBLOCK | SOCK_CLOEXEC))
		return -EINVAL;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return negative_errno();
	_cleanup_close_ int ours = sp[0];
	_cleanup_close_ int theirs = sp[1];
	(void)bind_kernel_name(ours);
	if ((type & SOCK_NONBLOCK) && fcntl(theirs, F_SETFL, O_NONBLOCK) < 0)
		return negative_errno();
	if (fstat(theirs, &st) < 0)
		return negative_errno();
	int slot = fake_add(sv, &st, &portid);
	if (slot < 0)
		return -ENOBUFS; /* SUPERVISOR_MAX_NETLINK open already */
	struct netlink_job *job = malloc(sizeof(*job));
	if (!job) {
		fake_remove(sv, slot);
		return -ENOMEM;
	}
	*job = (struct netlink_job){ .sv = sv, .slot = slot, .portid = portid };
	int r = supervisor_run_worker(sv, ours, netlink_worker, job);
	if (r < 0) {
		free(job);
		fake_remove(sv, slot);
		return r;
	}
	TAKE_FD(ours); /* the worker's now; it ends when the child's end is closed */
	/* Answered: the new descriptor is the syscall's result. */
	return notif_addfd_send(sv->listener, req, theirs, (type & SOCK_CLOEXEC) != 0);
}

/* bind(2) on a virtual netlink socket: a netlink bind (accepted, nothing to do). */
int netlink_bind(struct supervisor *sv, const struct seccomp_notif *req,
		 struct seccomp_notif_resp *resp)
{
	uint64_t len = req->data.args[2] & 0xffffffffu;
	struct sockaddr_nl nl;
	if (len < sizeof(nl))
		return -EINVAL;
	int r = notif_mem_read(sv->listener, req, req->data.args[1], &nl, sizeof(nl));
	if (r < 0)
		return r;
	if (nl.nl_family != AF_NETLINK)
		return -EINVAL;
	notif_answer_value(resp, 0);
	return 0;
}

/* getsockname(2) on a virtual netlink socket: its address, port id @portid. */
int netlink_getsockname(struct supervisor *sv, const struct seccomp_notif *req,
			struct seccomp_notif_resp *resp, uint32_t portid)
{
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK, .nl_pid = portid };
	return notif_answer_sockaddr(sv, req, resp, &nl, sizeof(nl));
}
