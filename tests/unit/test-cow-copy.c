/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-cow-copy: the engine's copy-up made off the loop (cow_copy_up_start, cow_copy_run,
 * cow_copy_land): a large workdir file is begun (charged, its copy beside the upper layer, not
 * in it), copied, landed with its bytes, mode and times; a cancelled copy is taken back
 * (uncharged, nothing left); a small file, or none asked, is copied at once (the control).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cow/cow.h"
#include "tap.h"

static char root[] = "/tmp/test-cow-copy-XXXXXX";

static void put(const char *rel, size_t size, mode_t mode)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/work/%s", root, rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	char buf[4096];
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (char)('a' + i % 26);
	for (size_t off = 0; fd >= 0 && off < size; off += sizeof(buf))
		if (write(fd, buf, size - off < sizeof(buf) ? size - off : sizeof(buf)) < 0)
			break;
	if (fd >= 0) {
		(void)fchmod(fd, mode);
		struct timespec ts[2] = { { 1000000, 0 }, { 2000000, 0 } };
		(void)futimens(fd, ts);
		close(fd);
	}
}

/* Whether files @a and @b hold the same bytes. */
static int same_bytes(const char *a, const char *b)
{
	char cmd[2 * PATH_MAX + 32];
	snprintf(cmd, sizeof(cmd), "cmp -s '%s' '%s'", a, b);
	return system(cmd) == 0;
}

static int exists_at(int dirfd, const char *name)
{
	struct stat st;
	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

int main(void)
{
	char work[PATH_MAX], store[PATH_MAX], lower[PATH_MAX + 8], upper[PATH_MAX + 8];
	struct cow c;
	struct cow_copy cp;
	struct stat st;
	atomic_int cancel = 0;
	size_t big = 3 * COW_COPY_INLINE_MAX + 123;

	if (!mkdtemp(root))
		return 1;
	snprintf(work, sizeof(work), "%s/work", root);
	snprintf(store, sizeof(store), "%s/store", root);
	ok(mkdir(work, 0755) == 0 && mkdir(store, 0755) == 0, "workdir and storage made");
	put("big", big, 0640);
	put("big2", big, 0600);
	put("small", 100, 0644);
	ok(cow_open(&c, work, store, "t", 64ull << 20, NULL) == 0, "branch opened (max_disk 64M)");

	/* A large file: begun, not yet in the upper layer, charged. */
	ok(cow_copy_up_start(&c, "big", 0, &cp) == 1, "a large file's copy is begun (1)");
	ok(!exists_at(c.upper_fd, "big"), "  not in the upper layer before it lands");
	ok(c.used == big, "  its size is charged at once");
	ok(cow_copy_run(&cp, &cancel) == 0, "  its bytes copied");
	ok(cow_copy_land(&c, &cp, 0) == 0, "  landed");
	snprintf(lower, sizeof(lower), "%s/big", work);
	snprintf(upper, sizeof(upper), "%s/big", c.upper);
	ok(same_bytes(lower, upper), "  the upper file holds the workdir file's bytes");
	ok(stat(upper, &st) == 0 && (st.st_mode & 07777) == 0640 && st.st_mtime == 2000000,
	   "  with its mode and times");
	ok(c.used == big, "  charged once");
	ok(cp.in < 0 && cp.out < 0 && cp.dir < 0, "  nothing left open");
	ok(!exists_at(c.upper_fd, "../copy-up"), "  no copy left beside the upper layer");
	ok(cow_copy_up_start(&c, "big", 0, &cp) == 0, "  a second copy-up finds it there (0)");

	/* Cancelled: taken back. */
	ok(cow_copy_up_start(&c, "big2", 0, &cp) == 1, "another large copy begun");
	ok(c.used == 2 * big, "  charged");
	cancel = 1;
	ok(cow_copy_run(&cp, &cancel) == -ECANCELED, "  cancelled: -ECANCELED");
	ok(cow_copy_land(&c, &cp, -ECANCELED) == -ECANCELED, "  landing a cancelled copy fails");
	ok(!exists_at(c.upper_fd, "big2") && !exists_at(c.upper_fd, "../copy-up"),
	   "  nothing in the upper layer, no copy left");
	ok(c.used == big, "  uncharged");

	/* Over the quota: refused before anything is copied. */
	struct cow q;
	ok(cow_open(&q, work, store, "q", big / 2, NULL) == 0, "a branch with a smaller quota");
	ok(cow_copy_up_start(&q, "big2", 0, &cp) == -ENOSPC, "  a large copy beyond it: ENOSPC");
	ok(!exists_at(q.upper_fd, "../copy-up") && q.used == 0, "  nothing begun");
	(void)cow_abort(&q);
	cow_done(&q);

	/* Controls: a small file, a truncating open, or no copy asked for: done at once. */
	ok(cow_copy_up_start(&c, "small", 0, &cp) == 0 && exists_at(c.upper_fd, "small"),
	   "control: a small file is copied at once (0)");
	snprintf(upper, sizeof(upper), "%s/big2", c.upper);
	ok(cow_copy_up_start(&c, "big2", 1, &cp) == 0 && stat(upper, &st) == 0,
	   "control: a truncating copy-up of a large file is at once (0)");
	ok(st.st_size == 0, "  and empty");
	put("big3", big, 0644);
	ok(cow_copy_up_start(&c, "big3", 0, NULL) == 0 && exists_at(c.upper_fd, "big3"),
	   "control: without a copy to begin (NULL), a large file is copied at once");

	(void)cow_abort(&c);
	cow_done(&c);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	(void)!system(cmd);
	return done_testing();
}
