/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-cow-anchor: the stand-in links an exec goes through (cow_anchor_file, cow_anchor_alias).
 * A branch file at a new name is linked at that name; one that replaces a workdir file is
 * linked beside it under another name of the same length, which resolves but is not listed,
 * is reused for the same file, and is gone, with the workdir's own file untouched, once the
 * branch is aborted. Refused (EACCES, the control): an alias for a name the branch does not
 * hold as a file.
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

static char root[] = "/tmp/test-cow-anchor-XXXXXX";

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static int listed(struct cow *c, const char *dir, const char *name)
{
	char **names = NULL;
	int found = 0;

	if (cow_list(c, dir, NULL, &names) < 0)
		return -1;
	for (size_t i = 0; names && names[i]; i++) {
		found |= strcmp(names[i], name) == 0;
		free(names[i]);
	}
	free(names);
	return found;
}

int main(void)
{
	char work[PATH_MAX], store[PATH_MAX], p[2 * PATH_MAX], alias[PATH_MAX], again[PATH_MAX];
	struct cow c;
	struct cow_node n;
	struct stat st, up;

	if (!mkdtemp(root))
		return 1;
	snprintf(work, sizeof(work), "%s/work", root);
	snprintf(store, sizeof(store), "%s/store", root);
	ok(mkdir(work, 0755) == 0 && mkdir(store, 0755) == 0, "workdir and storage made");
	snprintf(p, sizeof(p), "%s/sub", work);
	ok(mkdir(p, 0755) == 0, "a subdirectory");
	snprintf(p, sizeof(p), "%s/sub/prog", work);
	put(p, "old\n");
	ok(cow_open(&c, work, store, "t", 0, NULL) == 0, "branch opened");

	/* The run replaces sub/prog. */
	ok(cow_copy_up(&c, "sub/prog", 1) == 0, "sub/prog copied up (truncated)");
	snprintf(p, sizeof(p), "%s/sub/prog", c.upper);
	put(p, "new\n");
	ok(stat(p, &up) == 0, "  and written");
	ok(cow_anchor_file(&c, "sub/prog") == -EACCES,
	   "cow_anchor_file: the workdir holds sub/prog (EACCES)");
	ok(cow_anchor_alias(&c, "sub/prog", alias, sizeof(alias)) == 0, "cow_anchor_alias");
	ok(strncmp(alias, "sub/", 4) == 0 && strlen(alias) == strlen("sub/prog") &&
		   strcmp(alias, "sub/prog") != 0 && alias[4] == '.',
	   "  beside it, another name of the same length, hidden on the host");
	snprintf(p, sizeof(p), "%s/%s", work, alias);
	ok(stat(p, &st) == 0 && st.st_ino == up.st_ino, "  a link to the branch's file");
	ok(cow_lookup(&c, alias, &n) == 0 && n.layer == COW_LOWER && n.st.st_ino == up.st_ino,
	   "  it resolves in the merged view (an interpreter opens it)");
	ok(listed(&c, "sub", alias + 4) == 0 && listed(&c, "sub", "prog") == 1,
	   "  not listed; the program is");
	ok(cow_anchor_alias(&c, "sub/prog", again, sizeof(again)) == 0 && strcmp(again, alias) == 0,
	   "  asked again for the same file: the same link");

	/* Control: no file of the branch at that name. */
	ok(cow_anchor_alias(&c, "sub/none", again, sizeof(again)) == -EACCES,
	   "control: no branch file there: EACCES");

	struct cow_change *ch = NULL;
	size_t n_ch = 0;
	ok(cow_changes(&c, &ch, &n_ch) == 0 && n_ch == 1 && strcmp(ch[0].path, "sub/prog") == 0,
	   "the change set holds sub/prog alone (the link is no change)");
	cow_changes_free(ch, n_ch);

	ok(cow_abort(&c) == 0, "aborted");
	snprintf(p, sizeof(p), "%s/%s", work, alias);
	ok(lstat(p, &st) < 0 && errno == ENOENT, "  the link is gone");
	char buf[16] = { 0 };
	snprintf(p, sizeof(p), "%s/sub/prog", work);
	FILE *f = fopen(p, "r");
	ok(f && fgets(buf, sizeof(buf), f) && strcmp(buf, "old\n") == 0,
	   "  the workdir's program is untouched");
	if (f)
		fclose(f);
	cow_done(&c);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	(void)!system(cmd);
	return done_testing();
}
