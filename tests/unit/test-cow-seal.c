/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-cow-seal: a commit lands only what the run made (cow_seal, cow_seal_check). A branch
 * left as sealed passes the check (the control) and commits; an entry put in its upper layer by
 * anyone else, before the seal or after it, and a file of the run changed after it, are
 * refused (-EPERM), named, with the workdir untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cow/cow.h"
#include "error.h"
#include "tap.h"

static char root[] = "/tmp/test-cow-seal-XXXXXX";

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "a");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* cow_seal_check's result, and whether its message names @name. */
static int check_names(struct cow *c, const char *name)
{
	struct sandlock_error *err = NULL;
	int r = cow_seal_check(c, &err);
	const char *msg = err ? err->message : "";
	int named = name && strstr(msg, name) != NULL;
	error_free(err);
	return r == -EPERM && (named || !name) ? 1 : r;
}

/* A branch of @work in @store whose run made "n.txt" and "d/x". */
static int open_run(struct cow *c, const char *work, const char *store)
{
	char p[2 * PATH_MAX];

	if (cow_open(c, work, store, "t", 0, NULL) < 0 || cow_mkdir(c, "d", 0755) < 0 ||
	    cow_touch(c, "n.txt") < 0 || cow_touch(c, "d/x") < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/n.txt", c->upper);
	put(p, "new\n");
	snprintf(p, sizeof(p), "%s/d/x", c->upper);
	put(p, "x\n");
	return 0;
}

int main(void)
{
	char work[PATH_MAX], store[PATH_MAX], p[2 * PATH_MAX];
	struct cow c;
	struct stat st;

	if (!mkdtemp(root))
		return 1;
	snprintf(work, sizeof(work), "%s/work", root);
	snprintf(store, sizeof(store), "%s/store", root);
	ok(mkdir(work, 0755) == 0 && mkdir(store, 0755) == 0, "workdir and storage made");

	/* Someone else's entry, there before the seal. */
	ok(open_run(&c, work, store) == 0, "a run made n.txt and d/x");
	snprintf(p, sizeof(p), "%s/d/evil", c.upper);
	put(p, "evil\n");
	ok(cow_seal(&c) == 0, "sealed");
	ok(check_names(&c, "d/evil") == 1, "an entry the supervisor did not make: EPERM, named");
	ok(cow_commit(&c, 0, NULL) == -EPERM, "  the commit is refused");
	snprintf(p, sizeof(p), "%s/n.txt", work);
	ok(stat(p, &st) < 0 && errno == ENOENT, "  the workdir untouched");
	ok(cow_abort(&c) == 0, "  aborted");
	cow_done(&c);

	/* Changed after the seal: a file added, a file of the run written. */
	ok(open_run(&c, work, store) == 0 && cow_seal(&c) == 0, "a run sealed");
	snprintf(p, sizeof(p), "%s/late", c.upper);
	put(p, "late\n");
	ok(check_names(&c, "late") == 1, "an entry added since: EPERM, named");
	ok(unlink(p) == 0 && check_names(&c, ".") == 1,
	   "  taken away: the directory it was in changed since all the same (EPERM)");
	snprintf(p, sizeof(p), "%s/d/x", c.upper);
	put(p, "more\n");
	ok(check_names(&c, "d/x") == 1, "a file of the run changed since: EPERM, named");
	ok(cow_abort(&c) == 0, "  aborted");
	cow_done(&c);

	/* Control: as sealed, it commits. */
	ok(open_run(&c, work, store) == 0 && cow_seal(&c) == 0, "a run sealed");
	ok(check_names(&c, NULL) == 0, "control: the branch as sealed passes");
	ok(cow_commit(&c, 0, NULL) == 0, "  and commits");
	snprintf(p, sizeof(p), "%s/d/x", work);
	ok(stat(p, &st) == 0 && st.st_size == 2, "  what the run made landed");
	cow_done(&c);

	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	(void)!system(cmd);
	return done_testing();
}
