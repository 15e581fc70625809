/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/http-trust: the trust bundles of http_inject_ca. A read-only open that reaches one of
 * them (by identity: the dev/ino the plan recorded, whatever name, symlink or bind mount leads
 * there) is answered with a sealed memfd holding the host file's bytes, read now, followed by
 * the active CA's certificate (a newline between them where the file does not end with one).
 * So curl, OpenSSL, Python's ssl and the like trust the proxy's certificates with nothing
 * installed, and the host's file never changes. Opens for writing, O_PATH and the rest are the
 * kernel's, which decides them on the host's file under the Landlock rules.
 *
 * Like the other views this is not a protection: an open the check does not follow (a name of
 * another shape through a symlink, a name swapped after the check) reads the host's file
 * itself, which Landlock allows or refuses as any other; the workload then does not trust the
 * proxy, and its TLS handshakes fail. A stat by name shows the host file's size; fstat of the
 * descriptor served shows the memfd's, which is what a reader of st_size bytes reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd-util.h"
#include "handlers.h"
#include "http-trust.h"
#include "macro.h"
#include "path-util.h"
#include "plan/plan.h"
#include "supervisor/args.h"
#include "supervisor/child.h"
#include "supervisor/supervisor.h"
#include "supervisor/workers.h"

/* A bundle bigger than this is not served (the host's is a few hundred KiB). */
#define TRUST_BUNDLE_MAX (64u << 20)

/* The suffixes of trust files, which a symlink to a bundle usually has (OpenSSL's
 * /usr/lib/ssl/cert.pem leads to /etc/ssl/certs/ca-certificates.crt). */
static const char *const trust_suffixes[] = { ".pem", ".crt", ".cer", ".bundle" };

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

/* Whether @path may name a bundle: a reopen of a descriptor ("/proc/self/fd/N"), a name whose
 * last component is that of a bundle, or one with a trust file's suffix. Only those are
 * resolved: resolving every open would cost each one a lookup. */
static int may_be_bundle(const struct supervisor *sv, const char *path)
{
	const struct plan_http *h = &sv->plan->http;
	const char *rest;
	int n;

	if (own_fd_name(path, &n, &rest) && !rest[strspn(rest, "/")])
		return 1;
	for (size_t i = 0; i < h->n_inject; i++) {
		const char *base = strrchr(h->inject_paths[i], '/');
		if (path_last_is(path, base ? base + 1 : h->inject_paths[i]))
			return 1;
	}
	size_t len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--;
	if (len && path[len] == '/')
		return 0; /* "name.pem/": a directory, never a bundle */
	for (size_t i = 0; i < ELEMENTSOF(trust_suffixes); i++)
		if (has_suffix(path, trust_suffixes[i]))
			return 1;
	return 0;
}

/* Whether @fd (O_PATH) is one of the bundles, and one the grants let the sandbox read. */
static int is_bundle(const struct supervisor *sv, int fd)
{
	const struct plan_http *h = &sv->plan->http;
	char real[PATH_MAX];
	struct stat st;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	int found = 0;
	for (size_t i = 0; i < h->n_inject && !found; i++)
		found = (h->inject_ids[i].dev || h->inject_ids[i].ino) &&
			st.st_dev == h->inject_ids[i].dev && st.st_ino == h->inject_ids[i].ino;
	/* Read with the supervisor's rights: only where a grant lets the sandbox read it, as
	 * Landlock would (without one, the kernel refuses the open: CONTINUE). */
	return found && fd_real_path(fd, real, sizeof(real)) > 0 &&
	       path_is_beneath_any(real, sv->plan->fs.granted);
}

/* The bundle @fd (O_PATH) as served: its bytes, a newline where they do not end with one, the
 * CA's certificate. In *@ret (freed by the caller), its length in *@len. */
static int trust_text(const struct plan_http *h, int fd, char **ret, size_t *len)
{
	char self[sizeof("/proc/self/fd/") + 12];
	struct stat st;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	_cleanup_close_ int file = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (file < 0)
		return negative_errno();
	if (fstat(file, &st) < 0)
		return negative_errno();
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > TRUST_BUNDLE_MAX)
		return -EFBIG;
	size_t cap = (size_t)st.st_size + 1 + h->ca_pem_len, n = 0;
	_cleanup_free_ char *text = malloc(cap + 1);
	if (!text)
		return -ENOMEM;
	/* The size read may change meanwhile: what is read up to the room left counts. */
	for (;;) {
		ssize_t k = read(file, text + n, (size_t)st.st_size - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return negative_errno();
		n += (size_t)k;
		if (k == 0 || n == (size_t)st.st_size)
			break;
	}
	if (n && text[n - 1] != '\n')
		text[n++] = '\n';
	memcpy(text + n, h->ca_pem, h->ca_pem_len);
	*len = n + h->ca_pem_len;
	*ret = TAKE_PTR(text);
	return 0;
}

struct trust_job {
	struct supervisor *sv;
	struct seccomp_notif req;
	int fd; /* the bundle, O_PATH, the job's */
	uint64_t flags;
};

/* On a worker: the file read (a slow filesystem never holds up the loop), then the answer. */
static void trust_worker(int listener, int sock, void *arg)
{
	struct trust_job *job = arg;
	struct seccomp_notif_resp resp = { .id = job->req.id };
	char *text = NULL;
	size_t len = 0;

	(void)sock;
	if (listener >= 0 && notif_id_valid(listener, job->req.id)) {
		int r = trust_text(&job->sv->plan->http, job->fd, &text, &len);
		if (r == 0) {
			_cleanup_close_ int mem = memfd_sealed_readonly("trust", text, len);
			r = mem < 0 ? mem
				    : notif_addfd_send(listener, &job->req, mem,
						       (job->flags & O_CLOEXEC) != 0);
		}
		if (r != NOTIF_DEFERRED && r != NOTIF_GONE) {
			notif_answer_errno(&resp, r < 0 ? r : -EIO);
			(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp); /* ENOENT: gone */
		}
	}
	free(text);
	safe_close(job->fd);
	free(job);
}

int http_trust_matches(const struct supervisor *sv, uint64_t flags)
{
	const uint64_t plain =
		O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_LARGEFILE | O_NOFOLLOW | O_NOATIME;
	return sv->plan->http.n_inject && sv->plan->http.ca_pem &&
	       (flags & O_ACCMODE) == O_RDONLY && (flags & ~(plain | O_ACCMODE)) == 0;
}

int http_trust_open(struct supervisor *sv, const struct seccomp_notif *req,
		    const struct path_args *pa, char *path, size_t size, int *have_path)
{
	char peek[257] = "";

	/* Most names cannot be one: a first look (unchecked: it only chooses between going on
	 * and a checked read) spares their ID_VALID. */
	if (!*have_path && notif_mem_peek(req, pa->path, peek, sizeof(peek) - 1) == 0 &&
	    memchr(peek, '\0', sizeof(peek) - 1) && !may_be_bundle(sv, peek))
		return NOTIF_NOT_MINE;
	if (!*have_path) {
		int r = child_read_path(sv, req, pa->path, path, size);
		if (r == NOTIF_GONE)
			return r;
		if (r < 0)
			return NOTIF_NOT_MINE; /* the kernel's answer to the bad name */
		*have_path = 1;
	}
	if (!may_be_bundle(sv, path))
		return NOTIF_NOT_MINE;
	int fd = child_path_open(sv, req, pa->dirfd, path, pa->resolve,
				 (pa->flags & O_NOFOLLOW) != 0);
	if (fd == NOTIF_GONE)
		return fd;
	if (fd < 0 || !is_bundle(sv, fd)) {
		safe_close(fd);
		return NOTIF_NOT_MINE;
	}
	struct trust_job *job = malloc(sizeof(*job));
	if (!job) {
		safe_close(fd);
		return -ENOMEM;
	}
	*job = (struct trust_job){ .sv = sv, .req = *req, .fd = fd, .flags = pa->flags };
	int r = supervisor_run_worker(sv, -1, trust_worker, job);
	if (r < 0) {
		safe_close(fd);
		free(job);
		return r;
	}
	return NOTIF_DEFERRED;
}
