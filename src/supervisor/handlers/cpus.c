/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/cpus: num_cpus, the number of CPUs the sandbox sees. /proc/cpuinfo shows N
 * processors numbered 0..N-1 (the host's blocks, repeated when N is more than the host has),
 * /sys/devices/system/cpu/{online,possible,present} say 0-(N-1) (open.c serves them), and
 * sched_getaffinity(2) of the caller reports CPUs 0..N-1. Where N is less than the host has,
 * the sandbox also runs on N CPUs only (its affinity, set at launch: plan.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "cpus.h"
#include "fd-util.h"
#include "handlers.h"
#include "macro.h"
#include "supervisor/child.h"
#include "supervisor/supervisor.h"

/* The fields of a processor block that number it, and those that count the processors. */
static const char *const numbered[] = { "processor", "core id", "apicid", "initial apicid" };
static const char *const counted[] = { "siblings", "cpu cores" };

static int key_is(const char *line, size_t keylen, const char *const *keys, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(keys[i]) == keylen && strncmp(line, keys[i], keylen) == 0)
			return 1;
	return 0;
}

/* Append @len bytes of @s to the buffer *@out (*@n used, *@cap allocated). */
static int append(char **out, size_t *n, size_t *cap, const char *s, size_t len)
{
	if (*n + len + 1 > *cap) {
		size_t c = MAX(*cap * 2, *n + len + 1024);
		char *b = realloc(*out, c);
		if (!b)
			return -ENOMEM;
		*out = b;
		*cap = c;
	}
	memcpy(*out + *n, s, len);
	*n += len;
	(*out)[*n] = '\0';
	return 0;
}

int cpus_cpuinfo(unsigned ncpus, char **ret, size_t *ret_len)
{
	size_t len = 0, bufcap = 0, n = 0, cap = 0, nb = 0;
	_cleanup_free_ char *buf = NULL;
	_cleanup_free_ const char **blocks = NULL;
	char *out = NULL;
	ssize_t k;

	/* Read whole (on a worker's small stack: on the heap). */
	_cleanup_close_ int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	do {
		if (bufcap - len < 4096) {
			char *b = realloc(buf, bufcap = bufcap ? 2 * bufcap : 65536);
			if (!b)
				return -ENOMEM;
			buf = b;
		}
		k = read(fd, buf + len, bufcap - len - 1);
		if (k > 0)
			len += (size_t)k;
	} while (k > 0 || (k < 0 && errno == EINTR));
	if (k < 0)
		return negative_errno();
	buf[len] = '\0';
	/* The host's blocks, each ending with an empty line. */
	for (const char *p = buf; *p;) {
		const char **v = realloc(blocks, (nb + 1) * sizeof(*blocks));
		if (!v)
			return -ENOMEM;
		blocks = v;
		blocks[nb++] = p;
		const char *end = strstr(p, "\n\n");
		if (!end)
			break;
		p = end + 2;
	}
	if (!nb)
		return -EIO;
	for (unsigned cpu = 0; cpu < ncpus; cpu++) {
		const char *p = blocks[cpu % nb];
		int r = 0;
		while (r == 0 && *p && *p != '\n') {
			const char *eol = strchr(p, '\n');
			size_t linelen = eol ? (size_t)(eol - p) + 1 : strlen(p);
			const char *colon = memchr(p, ':', linelen);
			size_t keylen = 0;
			if (colon) {
				keylen = (size_t)(colon - p);
				while (keylen && (p[keylen - 1] == '\t' || p[keylen - 1] == ' '))
					keylen--;
			}
			unsigned value = 0;
			int replace = 0;
			if (colon && key_is(p, keylen, numbered, ELEMENTSOF(numbered)))
				value = cpu, replace = 1;
			else if (colon && key_is(p, keylen, counted, ELEMENTSOF(counted)))
				value = ncpus, replace = 1;
			if (replace) {
				char v[24];
				int m = snprintf(v, sizeof(v), ": %u\n", value);
				r = append(&out, &n, &cap, p, (size_t)(colon - p));
				if (r == 0)
					r = append(&out, &n, &cap, v, (size_t)m);
			} else {
				r = append(&out, &n, &cap, p, linelen);
			}
			p += linelen;
		}
		if (r == 0)
			r = append(&out, &n, &cap, "\n", 1);
		if (r < 0) {
			free(out);
			return r;
		}
	}
	*ret = out;
	*ret_len = n;
	return 0;
}

/* sched_getaffinity(pid, len, mask) for the caller itself (pid 0 or its own id): CPUs
 * 0..N-1, in the kernel's terms (len: a multiple of a long, at least the kernel's mask size;
 * the result: the bytes written). Another process: CONTINUE, which is safe whatever is read
 * again: the arguments are integers and a buffer the kernel only writes, and the answer is a
 * view, decided nothing. */
int handle_sched_getaffinity(struct supervisor *sv, const struct seccomp_notif *req,
			     struct seccomp_notif_resp *resp)
{
	pid_t pid = (pid_t)req->data.args[0];
	uint64_t len = (uint32_t)req->data.args[1];
	unsigned n = sv->num_cpus;

	if (pid != 0 && pid != (pid_t)req->pid) {
		return notif_answer_continue(resp);
	}
	/* The kernel's cpumask_size(): nr_cpu_ids bits in longs; room for N bits too. */
	unsigned bits = MAX((unsigned)get_nprocs_conf(), n);
	size_t size = (bits + 63) / 64 * 8;
	if (len * 8 < bits || (len & (sizeof(long) - 1)))
		return -EINVAL;
	size_t out = MIN(len, size);
	uint8_t *mask = calloc(1, out);
	if (!mask)
		return -ENOMEM;
	for (unsigned cpu = 0; cpu < n && cpu / 8 < out; cpu++)
		mask[cpu / 8] |= (uint8_t)(1u << (cpu % 8));
	int r = notif_mem_write(sv->listener, req, req->data.args[2], mask, out);
	free(mask);
	if (r < 0)
		return r;
	notif_answer_value(resp, (int64_t)out);
	return 0;
}
