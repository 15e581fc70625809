/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/proc-net: the sandbox's view of /proc/net/tcp and tcp6 under port_remap, and which
 * ports its own sockets hold. A socket is the sandbox's when one of its processes (a member of
 * a process group it created) holds a descriptor of it: their /proc/<pid>/fd links name the
 * socket inodes, which the tables list. The view keeps those rows only, numbered again, with
 * every remapped real port shown as its virtual port (local ports, and remote ports on this
 * host).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fd-util.h"
#include "macro.h"
#include "net-internal.h"
#include "sandbox/groups.h"
#include "supervisor/notif.h"
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

/* The process group of process @pid, or -1. */
static pid_t group_of(pid_t pid)
{
	char buf[1024];
	int pgrp;

	if (proc_read(pid, "stat", buf, sizeof(buf)) < 0)
		return -1;
	/* "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses. */
	const char *p = strrchr(buf, ')');
	return p && sscanf(p + 1, " %*c %*d %d", &pgrp) == 1 ? pgrp : -1;
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

/* The socket inodes the sandbox's processes hold, sorted. */
static int sandbox_sockets(struct supervisor *sv, struct inodes *s)
{
	pid_t owned[16], foreign[16]; /* the last groups seen: most processes share a few */
	size_t n_owned = 0, n_foreign = 0;
	int r = 0;

	DIR *d = opendir("/proc");
	if (!d)
		return negative_errno();
	for (struct dirent *e; r == 0 && (e = readdir(d));) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		pid_t g = group_of((pid_t)pid);
		if (g <= 0)
			continue;
		int ours = -1;
		for (size_t i = 0; i < n_owned && ours < 0; i++)
			if (owned[i] == g)
				ours = 1;
		for (size_t i = 0; i < n_foreign && ours < 0; i++)
			if (foreign[i] == g)
				ours = 0;
		if (ours < 0) {
			ours = groups_owns(sv->groups, g);
			if (ours)
				owned[n_owned++ % ELEMENTSOF(owned)] = g;
			else
				foreign[n_foreign++ % ELEMENTSOF(foreign)] = g;
			n_owned = MIN(n_owned, ELEMENTSOF(owned));
			n_foreign = MIN(n_foreign, ELEMENTSOF(foreign));
		}
		if (ours)
			r = add_sockets_of((pid_t)pid, s);
	}
	closedir(d);
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

int proc_net_port_held(struct supervisor *sv, uint16_t port)
{
	struct inodes socks = { 0 };
	int held = 0, scanned = 0, r = 0;

	for (int v6 = 0; v6 < 2 && !held && r == 0; v6++) {
		char *table = NULL;
		r = read_table(v6, &table);
		if (r == -ENOENT && v6) { /* no IPv6 */
			r = 0;
			break;
		}
		for (char *line = table ? strchr(table, '\n') : NULL; r == 0 && line && !held;
		     line = strchr(line + 1, '\n')) {
			struct row row;
			if (row_parse(line + 1, &row) < 0 || row.inode == 0 ||
			    row_port(row.local, row.local_len) != port)
				continue;
			if (!scanned) { /* only when some socket has the port */
				r = sandbox_sockets(sv, &socks);
				scanned = 1;
			}
			held = r == 0 && inodes_has(&socks, row.inode);
		}
		free(table);
	}
	free(socks.v);
	return r < 0 ? r : held;
}
