/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-cow-ops: the calls the workdir's handlers make into the engine (cow/layer.c, cow/ops.c,
 * cow/xattr.c). What they make lands in the upper layer with exactly the mode asked whatever
 * the umask, the workdir untouched (each checked in both layers); reads are of the layer
 * named; max_disk refuses a symlink or an attribute past the quota, leaving nothing; a
 * workdir's kernel object is handed out only while it is the one named.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cow/cow.h"
#include "tap.h"

static char root[256];

static mode_t mode_in(struct cow *c, enum cow_layer layer, const char *rel)
{
	struct stat st;
	return cow_layer_stat(c, layer, rel, &st) == 0 ? st.st_mode & 07777 : (mode_t)-1;
}

static void makes(struct cow *c)
{
	struct stat st;
	char buf[16];

	umask(077);
	int fd = cow_create(c, "n.txt", NULL, O_WRONLY, 0644);
	ok(fd >= 0 && fstat(fd, &st) == 0 && (st.st_mode & 07777) == 0644,
	   "create: 0644 exactly under umask 077");
	if (fd >= 0)
		close(fd);
	is_int(mode_in(c, COW_UPPER, "n.txt"), 0644, "  in the upper layer");
	is_int(cow_layer_stat(c, COW_LOWER, "n.txt", &st), -ENOENT, "  not in the workdir");
	is_int(cow_create(c, "n.txt", NULL, O_WRONLY, 0644), -EEXIST, "  made once (O_EXCL)");
	is_int(cow_mkdir(c, "m", 0750), 0, "mkdir");
	is_int(mode_in(c, COW_UPPER, "m"), 0750, "  0750 exactly under umask 077");
	is_int(cow_mknod(c, "d/k", NULL, 0604), 0, "mknod beneath a workdir directory");
	ok(cow_layer_stat(c, COW_UPPER, "d/k", &st) == 0 && S_ISREG(st.st_mode) &&
		   (st.st_mode & 07777) == 0604,
	   "  a regular file, 0604, its parent made in the branch");
	is_int(cow_symlink(c, "a.txt", "s", NULL), 0, "symlink");
	memset(buf, 0, sizeof(buf));
	is_int(cow_layer_readlink(c, COW_UPPER, "s", buf, sizeof(buf)), 5, "  its target's length");
	is_str(buf, "a.txt", "  its target");
	umask(022);
}

static void changes(struct cow *c)
{
	struct stat st;
	char buf[16] = "";

	is_int(cow_copy_up(c, "a.txt", 0), 0, "a.txt copied up");
	is_int(cow_link(c, "a.txt", "b.txt"), 0, "link");
	ok(cow_layer_stat(c, COW_UPPER, "b.txt", &st) == 0 && st.st_nlink == 2,
	   "  two names of one file in the branch");
	is_int(cow_chmod(c, "a.txt", 0600), 0, "chmod");
	is_int(mode_in(c, COW_UPPER, "a.txt"), 0600, "  the branch's file 0600");
	is_int(mode_in(c, COW_LOWER, "a.txt"), 0644, "  the workdir's still 0644");
	struct timespec ts[2] = { { 1000, 0 }, { 2000, 0 } };
	is_int(cow_utimens(c, "a.txt", ts), 0, "utimens");
	ok(cow_layer_stat(c, COW_UPPER, "a.txt", &st) == 0 && st.st_mtime == 2000,
	   "  the branch's file's mtime");
	is_int(cow_truncate(c, "a.txt", 2), 0, "truncate");
	ok(cow_layer_stat(c, COW_UPPER, "a.txt", &st) == 0 && st.st_size == 2, "  2 bytes");
	int fd = cow_layer_open(c, COW_LOWER, "a.txt", O_RDONLY);
	ok(fd >= 0 && read(fd, buf, sizeof(buf) - 1) == 6 && strcmp(buf, "hello\n") == 0,
	   "  the workdir's file read whole from the lower layer");
	if (fd >= 0)
		close(fd);
	is_int(cow_layer_open(c, COW_NONE, "a.txt", O_RDONLY), -EBADF, "no layer: EBADF");
	is_int(cow_layer_access(c, COW_UPPER, "a.txt", R_OK, 0), 0, "access in the branch");
	is_int(cow_layer_access(c, COW_UPPER, "gone", R_OK, 0), -ENOENT, "  absent: ENOENT");
}

static void objects(struct cow *c, const char *work)
{
	char p[2 * PATH_MAX];
	struct stat fifo, file;

	snprintf(p, sizeof(p), "%s/fifo", work);
	ok(stat(p, &fifo) == 0, "a FIFO in the workdir");
	snprintf(p, sizeof(p), "%s/a.txt", work);
	ok(stat(p, &file) == 0, "a file in the workdir");
	int fd = cow_lower_object(c, "fifo", &fifo);
	ok(fd >= 0, "the FIFO handed out");
	if (fd >= 0)
		close(fd);
	is_int(cow_lower_object(c, "fifo", &file), -EPERM, "  not for another inode");
	is_int(cow_lower_object(c, "a.txt", &file), -EPERM, "a regular file: never (EPERM)");
}

static void quota(const char *work, const char *store)
{
	struct cow q;
	struct stat st;
	char buf[8];

	ok(cow_open(&q, work, store, "q", 10, NULL) == 0, "a branch of max_disk 10 bytes");
	is_int(cow_symlink(&q, "0123456789a", "long", NULL), -ENOSPC, "an 11-byte symlink: ENOSPC");
	is_int(cow_layer_stat(&q, COW_UPPER, "long", &st), -ENOENT, "  nothing made");
	is_int(cow_symlink(&q, "abc", "s", NULL), 0, "a 3-byte one fits");
	int fd = cow_create(&q, "f", NULL, O_WRONLY, 0644);
	ok(fd >= 0, "an empty file (charged nothing)");
	if (fd >= 0)
		close(fd);
	int r = cow_setxattr(&q, "f", "user.k", "v", 1, 0);
	if (r == -EOPNOTSUPP) {
		diag("skip: no user.* attributes on %s", store);
	} else {
		is_int(r, 0, "user.k set (7 bytes: 10 in all)");
		is_int(cow_layer_getxattr(&q, COW_UPPER, "f", "user.k", buf, sizeof(buf)), 1,
		       "  read back from the branch");
		is_int(cow_layer_getxattr(&q, COW_LOWER, "a.txt", "user.k", buf, sizeof(buf)),
		       -ENODATA, "  the workdir's file has none");
		is_int(cow_setxattr(&q, "f", "user.k", "w", 1, 0), -ENOSPC,
		       "  set again past the quota: ENOSPC");
		is_int(cow_layer_getxattr(&q, COW_UPPER, "f", "user.k", buf, sizeof(buf)), 1,
		       "  the value as it was");
		is_int(buf[0], 'v', "  'v'");
		is_int(cow_removexattr(&q, "f", "user.k"), 0, "removed");
		is_int(cow_layer_getxattr(&q, COW_UPPER, "f", "user.k", NULL, 0), -ENODATA,
		       "  gone");
	}
	ok(cow_abort(&q) == 0, "aborted");
	cow_done(&q);
}

int main(void)
{
	char work[PATH_MAX], store[PATH_MAX], p[2 * PATH_MAX];
	struct cow c;

	if (!tap_mkdtemp(root, sizeof(root), "test-cow-ops"))
		return 1;
	snprintf(work, sizeof(work), "%s/work", root);
	snprintf(store, sizeof(store), "%s/store", root);
	ok(mkdir(work, 0755) == 0 && mkdir(store, 0755) == 0, "workdir and storage made");
	snprintf(p, sizeof(p), "%s/a.txt", work);
	FILE *f = fopen(p, "w");
	ok(f && fputs("hello\n", f) >= 0 && fclose(f) == 0 && chmod(p, 0644) == 0, "a.txt");
	snprintf(p, sizeof(p), "%s/d", work);
	ok(mkdir(p, 0755) == 0, "d/");
	snprintf(p, sizeof(p), "%s/fifo", work);
	ok(mkfifo(p, 0644) == 0, "fifo");

	ok(cow_open(&c, work, store, "t", 0, NULL) == 0, "a branch");
	makes(&c);
	changes(&c);
	objects(&c, work);
	ok(cow_abort(&c) == 0, "aborted");
	cow_done(&c);
	quota(work, store);

	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	(void)!system(cmd);
	return done_testing();
}
