/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-learn: the grants `sandlock learn` makes of the paths it saw (cli/learn-paths.c): the
 * places never granted and those granted whole only with a warning, a file read granted as its
 * directory, a new file as its nearest existing directory, siblings merged into their parent
 * but never into /, $HOME or a directory above it, reads beneath a write dropped, the ${HOME}
 * form of a path.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "learn.h"
#include "tap.h"

static char root[200];

static const char *at(const char *rel)
{
	static char buf[8][512];
	static int k;

	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", root, rel);
	return buf[k];
}

static void touch(const char *rel)
{
	char path[512], *slash;

	snprintf(path, sizeof(path), "%s", at(rel));
	for (slash = path + strlen(root) + 1; (slash = strchr(slash, '/')); slash++) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	if (rel[strlen(rel) - 1] != '/')
		close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
}

/* The set as one string, "a b c" relative to root, for comparing. */
static char *show(const struct learn_set *s)
{
	static char out[4096];
	const char **v = learn_set_sorted(s);

	out[0] = '\0';
	for (size_t i = 0; v && v[i]; i++) {
		const char *p =
			strncmp(v[i], root, strlen(root)) == 0 ? v[i] + strlen(root) + 1 : v[i];
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", i ? " " : "", p);
	}
	free(v);
	return out;
}

static void test_class(void)
{
	const char *home = "/h/u";

	is_int(learn_path_class(home, "/"), LEARN_NEVER, "/ is never granted");
	is_int(learn_path_class(home, "/h/u/.ssh"), LEARN_NEVER, "~/.ssh is never granted");
	is_int(learn_path_class(home, "/h/u/.ssh/id_rsa"), LEARN_NEVER, "nor a file in it");
	is_int(learn_path_class(home, "/h/u/.aws"), LEARN_NEVER, "~/.aws");
	is_int(learn_path_class(home, "/h/u/.gnupg/x"), LEARN_NEVER, "~/.gnupg/x");
	is_int(learn_path_class(home, "/h/u/.kube/config"), LEARN_NEVER, "~/.kube/config");
	is_int(learn_path_class(home, "/h"), LEARN_NEVER, "a directory above $HOME holds its keys");
	is_int(learn_path_class(home, "/h/u"), LEARN_WARN, "$HOME whole: a warning");
	is_int(learn_path_class(home, "/h/u/.sshx"), LEARN_PLAIN, "~/.sshx is no ~/.ssh");
	is_int(learn_path_class(home, "/etc"), LEARN_WARN, "/etc whole: a warning");
	is_int(learn_path_class(home, "/proc"), LEARN_WARN, "/proc");
	is_int(learn_path_class(home, "/sys"), LEARN_WARN, "/sys");
	is_int(learn_path_class(home, "/dev"), LEARN_WARN, "/dev");
	is_int(learn_path_class(home, "/etc/ssl"), LEARN_PLAIN, "/etc/ssl is plain");
	is_int(learn_path_class(NULL, "/h/u/.ssh"), LEARN_PLAIN, "no $HOME: no ~/.ssh");
}

static void test_home_form(void)
{
	char *s;

	is_str(s = learn_home_form("/h/u", "/h/u/src"), "${HOME}/src", "beneath $HOME");
	free(s);
	is_str(s = learn_home_form("/h/u", "/h/u"), "${HOME}", "$HOME itself");
	free(s);
	is_str(s = learn_home_form("/h/u", "/h/ux/src"), "/h/ux/src", "a sibling is no child");
	free(s);
	is_str(s = learn_home_form(NULL, "/h/u/src"), "/h/u/src", "no $HOME");
	free(s);
	ok(learn_beneath("/a/b", "/a") && learn_beneath("/a", "/a") &&
		   !learn_beneath("/ab", "/a") && learn_beneath("/x", "/"),
	   "learn_beneath");
}

static void test_access(void)
{
	is_int(learn_access_of("O_RDONLY"), LEARN_READ, "O_RDONLY reads");
	is_int(learn_access_of("O_RDONLY|O_DIRECTORY"), LEARN_READ, "a listing reads");
	is_int(learn_access_of("exec"), LEARN_READ, "an exec reads");
	is_int(learn_access_of("O_WRONLY|O_CREAT|O_TRUNC"), LEARN_WRITE, "a create writes");
	is_int(learn_access_of("O_RDWR"), LEARN_WRITE, "O_RDWR writes");
	is_int(learn_access_of("O_RDONLY|O_TRUNC"), LEARN_WRITE, "O_TRUNC writes");
	is_int(learn_access_of("truncate"), LEARN_WRITE, "truncate writes");
	is_int(learn_access_of("chmod"), LEARN_WRITE, "chmod writes the file");
	is_int(learn_access_of("utimes"), LEARN_WRITE, "utimes writes the file");
	is_int(learn_access_of("mkdir"), LEARN_ENTRY, "mkdir changes the directory");
	is_int(learn_access_of("unlink"), LEARN_ENTRY, "unlink");
	is_int(learn_access_of("rename"), LEARN_ENTRY, "rename");
	is_int(learn_access_of("O_PATH"), -1, "O_PATH needs no grant");
	is_int(learn_access_of("stat"), -1, "stat needs no grant");
	is_int(learn_access_of(NULL), -1, "no access");
}

static void test_grants(void)
{
	char home[512], store[512];
	struct learn_paths lp = { 0 };

	touch("a/f1");
	touch("a/f2");
	touch("c/old");
	touch("m/s1/f");
	touch("m/s2/f");
	touch("m/s3/f");
	touch("home/.bashrc");
	touch("home/.ssh/id_rsa");
	touch("home/x/f");
	touch("home/y/f");
	touch("home/z/f");
	touch("store/tmp/f");
	snprintf(home, sizeof(home), "%s", at("home"));
	lp.home = home;
	snprintf(store, sizeof(store), "%s", at("store"));
	lp.skip_under = store;

	learn_paths_add(&lp, at("a/f1"), LEARN_READ);
	learn_paths_add(&lp, at("a/f2"), LEARN_READ);
	learn_paths_add(&lp, at("nope/x"), LEARN_READ);
	learn_paths_add(&lp, at("c/new/deeper"), LEARN_WRITE);
	learn_paths_add(&lp, at("c/sub"), LEARN_ENTRY);
	learn_paths_add(&lp, at("c/old"), LEARN_READ);
	learn_paths_add(&lp, at("m/s1/f"), LEARN_READ);
	learn_paths_add(&lp, at("m/s2/f"), LEARN_READ);
	learn_paths_add(&lp, at("m/s3/f"), LEARN_READ);
	learn_paths_add(&lp, at("home/.bashrc"), LEARN_READ);
	learn_paths_add(&lp, at("home/.ssh/id_rsa"), LEARN_READ);
	learn_paths_add(&lp, at("home/x/f"), LEARN_READ);
	learn_paths_add(&lp, at("home/y/f"), LEARN_READ);
	learn_paths_add(&lp, at("home/z/f"), LEARN_READ);
	learn_paths_add(&lp, at("store/tmp/f"), LEARN_WRITE);
	learn_paths_add(&lp, "/dev/null", LEARN_WRITE);
	learn_paths_add(&lp, "/proc/12345/status", LEARN_READ);
	is_str(show(&lp.write), "c", "a new file: its nearest existing directory, once");
	ok(learn_set_has(&lp.read, at("a")) && learn_set_has(&lp.read, at("m/s1")),
	   "a file read: its directory");
	ok(!learn_set_has(&lp.read, at("nope")) && !learn_set_has(&lp.read, root),
	   "a missing file read needs no grant");
	ok(learn_set_has(&lp.read, at("home/.bashrc")), "a file directly in $HOME: the file alone");
	ok(learn_set_has(&lp.read, "/proc") && learn_set_has(&lp.warned, "/proc"),
	   "/proc/PID: /proc whole, with a warning");
	is_int(lp.refused.n, 1, "~/.ssh/id_rsa refused");
	is_int(learn_paths_collapse(&lp, 3), 0, "collapse");
	is_str(show(&lp.read), "/proc a home/.bashrc home/x home/y home/z m",
	       "siblings merged into their parent, never into $HOME; reads in a write dropped");
	is_str(show(&lp.write), "c", "the write stays");
	learn_paths_free(&lp);
}

int main(void)
{
	char cmd[256];

	if (!tap_mkdtemp(root, sizeof(root), "test-learn"))
		return 1;
	test_class();
	test_home_form();
	test_access();
	test_grants();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd) != 0)
		diag("could not remove %s", root);
	return done_testing();
}
