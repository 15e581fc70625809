/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/proc-net: the sandbox's view of /proc/net/tcp and tcp6 under port_remap, and which
 * ports its own sockets hold. A socket is the sandbox's when one of its processes (a member of
 * a process group it created) holds a descriptor of it: their /proc/<pid>/fd links name the
 * socket inodes, which the tables list. The view keeps those rows only, numbered again, with
 * every remapped real port shown as its virtual port (local ports, and remote ports on this
 * host). Whether a pair of the port map is still in use is asked of sock_diag instead, which
 * is much cheaper than reading a table.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fd-util.h"
#include "macro.h"
#include "proc-net.h"
#include "procs.h"
#include "supervisor/child.h"
#include "supervisor/groups.h"
#include "supervisor/supervisor.h"

struct inodes {
	unsigned long *v;
	size_t n, cap;
};

static int inodes_add(struct inodes *s, unsigned long ino)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		unsigned long *v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = ino;
	return 0;
}

static int cmp_ulong(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
	return x < y ? -1 : x > y;
}

static int inodes_has(const struct inodes *s, unsigned long ino)
{
	return ino && bsearch(&ino, s->v, s->n, sizeof(*s->v), cmp_ulong) != NULL;
}

/* Add the sockets process @pid holds. A process that is gone, or that made itself
 * non-dumpable (its descriptors are not ours to read), adds none. */
static int add_sockets_of(pid_t pid, struct inodes *s)
{
	char dir[64], link[64];
	int r = 0;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	for (struct dirent *e; r == 0 && (e = readdir(d));) {
		unsigned long ino;
		ssize_t k = readlinkat(dirfd(d), e->d_name, link, sizeof(link) - 1);
		if (k <= 0)
			continue;
		link[k] = '\0';
		if (sscanf(link, "socket:[%lu]", &ino) == 1)
			r = inodes_add(s, ino);
	}
	closedir(d);
	return r;
}

static int add_sockets_cb(const struct proc_info *p, void *arg)
{
	return p->state == 'Z' ? 0 : add_sockets_of(p->pid, arg);
}

/* The socket inodes the sandbox's processes hold, sorted. */
static int sandbox_sockets(struct supervisor *sv, struct inodes *s)
{
	int r = sandbox_processes(sv, add_sockets_cb, s);
	if (r == 0)
		qsort(s->v, s->n, sizeof(*s->v), cmp_ulong);
	return r;
}

/* The whole of /proc/self/net/tcp or tcp6 (the supervisor's network namespace is the
 * sandbox's), NUL-terminated. */
static int read_table(int v6, char **ret)
{
	size_t cap = 16384, len = 0;
	char *buf = NULL;

	_cleanup_close_ int fd =
		open(v6 ? "/proc/self/net/tcp6" : "/proc/self/net/tcp", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	for (;;) {
		if (!buf || cap - len < 4096) {
			char *b = realloc(buf, cap *= 2);
			if (!b) {
				free(buf);
				return -ENOMEM;
			}
			buf = b;
		}
		ssize_t k = read(fd, buf + len, cap - len - 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int r = negative_errno();
			free(buf);
			return r;
		}
		if (k == 0)
			break;
		len += (size_t)k;
	}
	buf[len] = '\0';
	*ret = buf;
	return 0;
}

/* One row of a table: "sl: local rem st tx:rx tr:when retrnsmt uid timeout inode ...". */
struct row {
	char *sl_end;	      /* the ':' after the row number */
	char *local, *remote; /* "ADDR:PORT" (the port: the 4 hex digits before the space) */
	size_t local_len, remote_len;
	unsigned long inode;
};

static int row_parse(char *line, struct row *row)
{
	char *tok[10];
	size_t len[10];
	char *p = line;

	for (int i = 0; i < 10; i++) {
		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			return -EINVAL;
		tok[i] = p;
		while (*p && *p != ' ' && *p != '\n')
			p++;
		len[i] = (size_t)(p - tok[i]);
	}
	if (len[0] < 2 || tok[0][len[0] - 1] != ':' || len[1] < 6 || len[2] < 6 ||
	    tok[1][len[1] - 5] != ':' || tok[2][len[2] - 5] != ':')
		return -EINVAL;
	row->sl_end = tok[0] + len[0] - 1;
	row->local = tok[1];
	row->local_len = len[1];
	row->remote = tok[2];
	row->remote_len = len[2];
	char *end;
	row->inode = strtoul(tok[9], &end, 10);
	return end == tok[9] + len[9] ? 0 : -EINVAL;
}

static unsigned row_port(const char *addr, size_t len)
{
	return (unsigned)strtoul(addr + len - 4, NULL, 16);
}

/* Whether the hex address of a table row is this host's loopback: 127.0.0.0/8 (printed as a
 * native-endian 32-bit word), ::1 or ::ffff:127.x.y.z (four such words). */
static int row_loopback(const char *addr, size_t len)
{
	size_t hex = len - 5;
	if (hex == 8) {
		unsigned long a = strtoul(addr, NULL, 16);
		uint32_t word = (uint32_t)a;
		return ((const uint8_t *)&word)[0] == 127;
	}
	if (hex != 32)
		return 0;
	if (strncmp(addr, "00000000000000000000000001000000", 32) == 0)
		return 1;
	char last[9];
	memcpy(last, addr + 24, 8);
	last[8] = '\0';
	uint32_t word = (uint32_t)strtoul(last, NULL, 16);
	return strncmp(addr, "0000000000000000FFFF0000", 24) == 0 &&
	       ((const uint8_t *)&word)[0] == 127;
}

static void row_set_port(char *addr, size_t len, unsigned port)
{
	char hex[5];
	snprintf(hex, sizeof(hex), "%04X", port & 0xffff);
	memcpy(addr + len - 4, hex, 4);
}

int proc_net_table(struct supervisor *sv, int v6, char **ret, size_t *ret_len)
{
	struct inodes socks = { 0 };
	char *table = NULL;

	int r = sandbox_sockets(sv, &socks);
	if (r == 0)
		r = read_table(v6, &table);
	if (r < 0) {
		free(socks.v);
		return r;
	}
	/* The rows kept are written over the table itself: each is no longer than it was. */
	char *out = table, *line = table;
	size_t kept = 0;
	char *nl = strchr(line, '\n');
	if (nl) { /* the header */
		out = nl + 1;
		line = nl + 1;
	}
	for (; *line; line = nl ? nl + 1 : line + strlen(line)) {
		nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) + 1 : strlen(line);
		struct row row;
		if (row_parse(line, &row) < 0 || !inodes_has(&socks, row.inode))
			continue;
		int virt =
			port_map_virtual(&sv->ports, (uint16_t)row_port(row.local, row.local_len));
		if (virt >= 0)
			row_set_port(row.local, row.local_len, (unsigned)virt);
		if (row_loopback(row.remote, row.remote_len)) {
			virt = port_map_virtual(&sv->ports,
						(uint16_t)row_port(row.remote, row.remote_len));
			if (virt >= 0)
				row_set_port(row.remote, row.remote_len, (unsigned)virt);
		}
		/* The row's number, right-aligned in the width the kernel gave it. */
		char num[16];
		size_t width = (size_t)(row.sl_end - line);
		int k = snprintf(num, sizeof(num), "%*zu", (int)width, kept++);
		if (k > 0 && (size_t)k == width)
			memcpy(line, num, width);
		memmove(out, line, n);
		out += n;
	}
	*out = '\0';
	free(socks.v);
	*ret = table;
	*ret_len = (size_t)(out - table);
	return 0;
}

/* Whether a listener of @family on port @e->real is one of @e's sockets and, with @dest, takes
 * a connect to that address (bound to it, or to its family's wildcard). Asked of the kernel
 * through sock_diag, for listening sockets of that port only: the dump then walks the listening
 * hash alone, where reading /proc/net/tcp formats every established socket of the host too
 * (milliseconds). 1, 0 or -errno. */
static int diag_alive(int family, const struct port_entry *e, const uint8_t *addr, size_t alen)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} q = {
		.nlh = { .nlmsg_len = sizeof(q),
			 .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.req = { .sdiag_family = (uint8_t)family,
			 .sdiag_protocol = IPPROTO_TCP,
			 .idiag_states = 1u << 10 /* TCP_LISTEN */,
			 .id = { .idiag_sport = htons(e->real) } },
	};
	static const uint8_t zero[16] = { 0 };
	uint8_t buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
	int alive = 0, done = 0;

	_cleanup_close_ int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return negative_errno();
	if (send(fd, &q, sizeof(q), 0) < 0)
		return negative_errno();
	while (!done) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? negative_errno() : -EIO;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE) {
				done = 1;
				break;
			}
			if (h->nlmsg_type == NLMSG_ERROR)
				return -EIO;
			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
				continue;
			const struct inet_diag_msg *m = NLMSG_DATA(h);
			const uint8_t *src = (const uint8_t *)m->id.idiag_src;
			if (ntohs(m->id.idiag_sport) != e->real ||
			    (addr && memcmp(src, addr, alen) != 0 && memcmp(src, zero, alen) != 0))
				continue;
			for (unsigned i = 0; i < e->n_ino && !alive; i++)
				alive = e->ino[i] == m->idiag_inode;
		}
	}
	return alive;
}

int proc_net_entry_alive(const struct port_entry *e, const struct sockaddr_storage *dest)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const uint8_t zero[16] = { 0 };
	uint8_t v4[4], v6[16];
	int is_v4 = 0;

	if (!dest) {
		int r = diag_alive(AF_INET, e, NULL, 4);
		return r != 0 ? r : diag_alive(AF_INET6, e, NULL, 16);
	}
	/* Where a connect to @dest goes: the unspecified addresses are this host's loopback. */
	if (dest->ss_family == AF_INET) {
		memcpy(v4, &((const struct sockaddr_in *)dest)->sin_addr, 4);
		is_v4 = 1;
	} else {
		memcpy(v6, &((const struct sockaddr_in6 *)dest)->sin6_addr, 16);
		if (memcmp(v6, mapped, 12) == 0) {
			memcpy(v4, v6 + 12, 4);
			is_v4 = 1;
		}
	}
	if (is_v4) {
		if (memcmp(v4, zero, 4) == 0)
			v4[0] = 127, v4[3] = 1;
		int r = diag_alive(AF_INET, e, v4, 4);
		if (r != 0)
			return r;
		/* An IPv6 listener on :: (or ::ffff:a.b.c.d) takes IPv4 too. */
		memcpy(v6, mapped, 12);
		memcpy(v6 + 12, v4, 4);
		return diag_alive(AF_INET6, e, v6, 16);
	}
	if (memcmp(v6, zero, 16) == 0)
		v6[15] = 1;
	return diag_alive(AF_INET6, e, v6, 16);
}
