/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/cow-look: the calls that look at a name under the workdir without changing it
 * (stat, lstat, newfstatat, statx; access, faccessat, faccessat2; readlink, readlinkat) and the
 * listing of a workdir directory (getdents, getdents64): answered from the layer that holds the
 * entry, or from the merged listing (cow_list, kept in the branch while it has not changed),
 * written into the caller's buffer. The name is resolved by cow.c (cow_resolve_arg).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cow/cow.h"
#include "fd-util.h"
#include "cow-internal.h"
#include "handlers.h"
#include "macro.h"
#include "supervisor/args.h"
#include "supervisor/child.h"
#include "supervisor/notif.h"
#include "supervisor/supervisor.h"

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* ---- stat, access, readlink -------------------------------------------------------------- */

int cow_stat(struct supervisor *sv, const struct seccomp_notif *req,
	     struct seccomp_notif_resp *resp)
{
	struct cow_res res;
	struct path_args pa;
	int r = cow_resolve_call(sv, req, &pa, &res);
	if (r != 0)
		return r;
	if (res.n.layer == COW_NONE)
		return -ENOENT;
	if (pa.call->nr == SYS_statx) {
		struct statx stx;
		if ((r = cow_layer_statx(sv->cow, res.n.layer, res.rel,
					 (int)pa.flags & AT_STATX_SYNC_TYPE, (unsigned)pa.mask,
					 &stx)) < 0)
			return r;
		r = notif_mem_write(sv->listener, req, pa.buf, &stx, sizeof(stx));
	} else {
		struct stat st;
		if ((r = cow_layer_stat(sv->cow, res.n.layer, res.rel, &st)) < 0)
			return r;
		r = notif_mem_write(sv->listener, req, pa.buf, &st, sizeof(st));
	}
	if (r < 0)
		return r;
	notif_answer_value(resp, 0);
	return 0;
}

int cow_access(struct supervisor *sv, const struct seccomp_notif *req,
	       struct seccomp_notif_resp *resp)
{
	struct cow_res res;
	struct path_args pa;
	int r = cow_resolve_call(sv, req, &pa, &res);
	if (r != 0)
		return r;
	if (res.n.layer == COW_NONE)
		return -ENOENT;
	if ((r = cow_layer_access(sv->cow, res.n.layer, res.rel, (int)pa.mode,
				  (int)pa.flags & AT_EACCESS)) < 0)
		return r;
	notif_answer_value(resp, 0);
	return 0;
}

int cow_readlink(struct supervisor *sv, const struct seccomp_notif *req,
		 struct seccomp_notif_resp *resp)
{
	struct cow_res res;
	struct path_args pa;
	char target[PATH_MAX];

	int r = cow_resolve_call(sv, req, &pa, &res);
	if (r != 0)
		return r;
	uint64_t buf = pa.buf;
	size_t size = (size_t)pa.size;
	if (res.n.layer == COW_NONE && !res.magic)
		return -ENOENT;
	if (!res.magic && !S_ISLNK(res.n.st.st_mode))
		return -EINVAL;
	if ((int)size <= 0)
		return -EINVAL;
	ssize_t k;
	if (res.magic) /* /proc/self/fd/N: the descriptor's file by its name in the workdir */
		k = snprintf(target, sizeof(target), "%s%s%s%s", sv->cow->lower,
			     *res.rel ? "/" : "", res.rel,
			     res.n.layer == COW_NONE && !ends_with(res.rel, " (deleted)")
				     ? " (deleted)"
				     : "");
	else if ((k = cow_layer_readlink(sv->cow, res.n.layer, res.rel, target, sizeof(target))) <
		 0)
		return (int)k;
	k = MIN((size_t)k, MIN(size, sizeof(target) - 1)); /* no NUL, as the kernel's */
	if ((r = notif_mem_write(sv->listener, req, buf, target, (size_t)k)) < 0)
		return r;
	notif_answer_value(resp, k);
	return 0;
}

/* ---- getdents ---------------------------------------------------------------------------- */

struct list_ctx {
	struct dent *v;
	size_t n, cap;
	int r;
};

static int list_add(struct list_ctx *l, const char *name, unsigned char type, uint64_t ino)
{
	if (l->n == l->cap) {
		struct dent *nv = realloc(l->v, (l->cap = l->cap ? 2 * l->cap : 64) * sizeof(*nv));
		if (!nv)
			return l->r = -ENOMEM;
		l->v = nv;
	}
	if (!(l->v[l->n].name = strdup(name)))
		return l->r = -ENOMEM;
	l->v[l->n].type = type;
	l->v[l->n++].ino = ino;
	return 0;
}

static void dents_free_all(void *p, size_t n)
{
	struct dent *v = p;
	for (size_t i = 0; v && i < n; i++)
		free(v[i].name);
	free(v);
}

static int list_cb(const char *name, unsigned char type, uint64_t ino, void *arg)
{
	return list_add(arg, name, type, ino) < 0;
}

int cow_getdents(struct supervisor *sv, const struct seccomp_notif *req,
		 struct seccomp_notif_resp *resp)
{
	struct cow *c = sv->cow;
	char real[PATH_MAX], virt[PATH_MAX];
	size_t count = MIN((size_t)(uint32_t)req->data.args[2], (size_t)(1 << 20));

	if (proc_fd_path((pid_t)req->pid, (int)req->data.args[0], real, sizeof(real)) <= 0)
		return NOTIF_NOT_MINE;
	cow_virtual_of(c, real, virt, sizeof(virt));
	const char *rel = cow_rel_to(c->lower, virt);
	if (!rel)
		return NOTIF_NOT_MINE;
	_cleanup_close_ int fd = notif_get_fd(sv->listener, req, (int)req->data.args[0]);
	if (fd < 0)
		return fd;
	/* The descriptor the child holds now is the one named above (or the answer is for
	 * another directory it holds, which it may list as well). */
	char again[PATH_MAX];
	struct stat st;
	if (fd_real_path(fd, again, sizeof(again)) <= 0 || strcmp(again, real) != 0 ||
	    fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode))
		return NOTIF_NOT_MINE;
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || (fl & O_PATH))
		return -EBADF;
	struct cow_node n;
	struct list_ctx l = { 0 };
	int r = cow_lookup(c, rel, &n);
	if (r == 0 && n.layer == COW_NONE)
		r = -ENOENT; /* a directory deleted in the run, still open: empty */
	if (r == -ENOENT) {
		notif_answer_value(resp, 0);
		return 0;
	}
	if (r < 0)
		return r;
	/* The listing made for the first call of a directory's reading is reused by the next
	 * ones while the branch has not changed (else each call would list it all again). */
	off_t pos = lseek(fd, 0, SEEK_CUR);
	struct cow_listing *cache = &c->listing;
	if (pos <= 0 || !cache->v || cache->gen != c->gen || !cache->rel ||
	    strcmp(cache->rel, rel) != 0) {
		list_add(&l, ".", DT_DIR, (uint64_t)n.st.st_ino);
		list_add(&l, "..", DT_DIR, 1);
		if (l.r == 0)
			r = cow_list(c, rel, list_cb, &l);
		char *krel = r == 0 && l.r == 0 ? strdup(rel) : NULL;
		if (!krel) {
			dents_free_all(l.v, l.n);
			return r < 0 ? r : l.r < 0 ? l.r : -ENOMEM;
		}
		if (cache->v)
			dents_free_all(cache->v, cache->n);
		free(cache->rel);
		*cache = (struct cow_listing){ krel, c->gen, l.v, l.n };
		c->listing_free = dents_free_all;
	}
	int64_t got = getdents_answer(sv->listener, req, fd, count, req->data.nr != SYS_getdents64,
				      cache->v, cache->n);
	if (got < 0)
		return (int)got;
	notif_answer_value(resp, got);
	return 0;
}
