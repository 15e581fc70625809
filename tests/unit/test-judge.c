/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-judge: the pure parts of the kernel's denials judged for the log (supervisor/judge.c):
 * the access a call needs, Landlock's union over the hierarchy, the reasons and hints, the
 * open flags' text; the logging mode's extra traps (plan/traps.c), the blocked syscalls' table
 * (plan/seccomp.c) and the ruleset recorded by plan_build (plan/landlock-record.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "landlock-compat.h"
#include "macro.h"
#include "plan/plan.h"
#include "plan/seccomp.h"
#include "plan/traps.h"
#include "policy/policy.h"
#include "sandlock.h"
#include "supervisor/judge.h"
#include "tap.h"

#define RF LANDLOCK_ACCESS_FS_READ_FILE
#define RD LANDLOCK_ACCESS_FS_READ_DIR
#define WF LANDLOCK_ACCESS_FS_WRITE_FILE
#define TR LANDLOCK_ACCESS_FS_TRUNCATE
#define EX LANDLOCK_ACCESS_FS_EXECUTE
#define MR LANDLOCK_ACCESS_FS_MAKE_REG
#define MD LANDLOCK_ACCESS_FS_MAKE_DIR
#define RFILE LANDLOCK_ACCESS_FS_REMOVE_FILE
#define REFER LANDLOCK_ACCESS_FS_REFER

static void test_open_access(void)
{
	is_int(judge_open_access(O_RDONLY, 0, 1), RF, "open O_RDONLY of a file: READ_FILE");
	is_int(judge_open_access(O_WRONLY, 0, 1), WF, "O_WRONLY: WRITE_FILE");
	is_int(judge_open_access(O_RDWR, 0, 1), RF | WF, "O_RDWR: both");
	is_int(judge_open_access(O_WRONLY | O_TRUNC, 0, 1), WF | TR,
	       "O_TRUNC of an existing file: TRUNCATE too");
	is_int(judge_open_access(O_WRONLY | O_CREAT | O_TRUNC, 0, 0), WF | MR,
	       "a create: MAKE_REG and the open's rights on the directory, no TRUNCATE");
	is_int(judge_open_access(O_RDONLY, 1, 1), RD, "a directory: READ_DIR");
	is_int(judge_open_access(O_RDONLY | O_DIRECTORY, 1, 1), RD, "O_DIRECTORY: READ_DIR");
	is_int(judge_open_access(O_PATH, 0, 1), 0, "O_PATH: nothing Landlock checks");
	is_int(judge_open_access(O_RDONLY, 0, 0), 0, "a name missing without O_CREAT: ENOENT");
	is_int(judge_open_access(O_CREAT | O_EXCL | O_WRONLY, 0, 1), 0,
	       "O_CREAT|O_EXCL of an existing name: EEXIST first");
	is_int(judge_open_access(O_WRONLY, 1, 1), 0, "a directory for writing: EISDIR first");
	is_int(judge_open_access(O_RDONLY | O_DIRECTORY, 0, 1), 0,
	       "O_DIRECTORY on a file: ENOTDIR first");
	is_int(judge_make_access(S_IFDIR), MD, "make: a directory");
	is_int(judge_make_access(0), MR, "make: mknod's 0 is a regular file");
	is_int(judge_make_access(S_IFIFO), LANDLOCK_ACCESS_FS_MAKE_FIFO, "make: a FIFO");
	is_int(judge_make_access(S_IFLNK), LANDLOCK_ACCESS_FS_MAKE_SYM, "make: a symlink");
	is_int(judge_remove_access(S_IFREG), RFILE, "remove: a file");
	is_int(judge_remove_access(S_IFDIR), LANDLOCK_ACCESS_FS_REMOVE_DIR, "remove: a directory");
}

static void test_missing(void)
{
	/* /a/b/f: ids f=3, b=2, a=1, /=0 (the walk's order: the object first). */
	struct file_id chain[] = { { 9, 3 }, { 9, 2 }, { 9, 1 }, { 9, 0 } };
	struct ll_rule rules[] = {
		{ .dev = 9, .ino = 1, .access = RF | RD | EX }, /* -r /a */
		{ .dev = 9, .ino = 2, .access = WF },		/* a write right on /a/b */
		{ .dev = 8, .ino = 3, .access = TR },		/* another filesystem's inode 3 */
	};
	struct plan_ll ll = { .active = 1,
			      .handled = RF | RD | EX | WF | TR | MR | RFILE,
			      .rules = rules,
			      .n = ELEMENTSOF(rules) };

	is_int(judge_missing(&ll, chain, 4, RF), 0, "a read right above the file grants it");
	is_int(judge_missing(&ll, chain, 4, RF | WF), 0, "the union of the rules above");
	is_int(judge_missing(&ll, chain, 4, WF | TR), TR,
	       "TRUNCATE missing: the rule on the same inode number elsewhere does not count");
	is_int(judge_missing(&ll, chain + 2, 2, WF), WF,
	       "the write right on /a/b does not reach /a (rules hold beneath, not above)");
	is_int(judge_missing(&ll, chain, 4, LANDLOCK_ACCESS_FS_MAKE_SOCK), 0,
	       "an access the ruleset does not handle is never missing");
	is_int(judge_missing(&ll, chain, 4, REFER), REFER,
	       "REFER is missing without a rule even when not handled (always denied)");
	is_int(judge_missing(&ll, chain, 0, RF), RF, "no chain: nothing grants");
}

static void test_texts(void)
{
	char d0[] = "/srv/secret", w0[] = "/srv/./secret";
	char *denied[] = { d0, NULL }, *written[] = { w0, NULL };
	struct plan_ll ll = { .active = 1, .denied = denied, .denied_as_written = written };
	char reason[256], hint[256], text[128];

	judge_texts(&ll, "/etc/gitconfig", "/etc", RF, reason, sizeof(reason), hint, sizeof(hint));
	is_str(reason, "no read grant covers /etc", "read: the reason");
	is_str(hint, "add -r /etc", "read: the hint");
	judge_texts(&ll, "/x/y", "/x", EX | RF, reason, sizeof(reason), hint, sizeof(hint));
	is_str(hint, "add -r /x", "exec: a read grant");
	judge_texts(&ll, "/x/new", "/x", MR | WF, reason, sizeof(reason), hint, sizeof(hint));
	is_str(reason, "no write grant covers /x", "write: the reason");
	is_str(hint, "add -w /x", "write: the hint");
	judge_texts(&ll, "/x/f", "/x", REFER, reason, sizeof(reason), hint, sizeof(hint));
	is_str(hint, "add -w /x", "a rename's REFER: a write grant");
	judge_texts(&ll, "/srv/secret/k", "/srv/secret", RF, reason, sizeof(reason), hint,
		    sizeof(hint));
	is_str(reason, "fs_denied covers /srv/./secret", "fs_denied: the entry as written");
	is_str(hint, "remove --fs-deny /srv/./secret", "fs_denied: the hint");
	judge_texts(&ll, "/srv/secretive", "/srv", RF, reason, sizeof(reason), hint, sizeof(hint));
	is_str(hint, "add -r /srv", "a sibling whose name starts alike is no denied path");

	judge_texts(&ll, "/proc/4242/mounts", "/proc/4242", RF, reason, sizeof(reason), hint,
		    sizeof(hint));
	is_str(hint, "add -r /proc", "a process's /proc directory: the grant is /proc's");
	judge_texts(&ll, "/proc/sys/x", "/proc/sys", RF, reason, sizeof(reason), hint,
		    sizeof(hint));
	is_str(hint, "add -r /proc/sys", "another /proc directory stays as it is");

	judge_open_text(O_RDONLY | O_CLOEXEC, text, sizeof(text));
	is_str(text, "O_RDONLY", "open text: O_RDONLY (O_CLOEXEC left out)");
	judge_open_text(O_WRONLY | O_CREAT | O_TRUNC, text, sizeof(text));
	is_str(text, "O_WRONLY|O_CREAT|O_TRUNC", "open text: a create");
	judge_open_text(O_RDONLY | O_DIRECTORY, text, sizeof(text));
	is_str(text, "O_RDONLY|O_DIRECTORY", "open text: a listing");
}

/* Whether @nr is among @traps. */
static int has(const struct trap *traps, size_t n, int nr)
{
	for (size_t i = 0; i < n; i++)
		if (traps[i].nr == nr)
			return 1;
	return 0;
}

static void test_traps(void)
{
	static const int logged[] = {
		SYS_open,   SYS_openat,	  SYS_openat2,	SYS_creat,   SYS_execve,   SYS_execveat,
		SYS_mkdir,  SYS_mkdirat,  SYS_mknod,	SYS_mknodat, SYS_symlink,  SYS_symlinkat,
		SYS_unlink, SYS_unlinkat, SYS_rmdir,	SYS_rename,  SYS_renameat, SYS_renameat2,
		SYS_link,   SYS_linkat,	  SYS_truncate,
	};
	struct trap plain[DISPATCH_MAX_TRAPS], logging[DISPATCH_MAX_TRAPS];
	struct plan_needs needs = { .supervised = 1 };

	size_t n_plain = trap_set_of(&needs, plain, DISPATCH_MAX_TRAPS);
	needs.events = SANDLOCK_EVENTS_DENIALS;
	size_t n_log = trap_set_of(&needs, logging, DISPATCH_MAX_TRAPS);
	is_int(n_log, n_plain + ELEMENTSOF(logged),
	       "logging mode traps %zu calls more (%zu, plain %zu)", ELEMENTSOF(logged), n_log,
	       n_plain);
	int all = 1, none = 1;
	for (size_t i = 0; i < ELEMENTSOF(logged); i++) {
		all &= has(logging, n_log, logged[i]);
		none &= !has(plain, n_plain, logged[i]);
	}
	ok(all && none, "the path calls Landlock may refuse, trapped in logging mode only");
	ok(!has(logging, n_log, SYS_umask), "umask stays untrapped (no mediation)");
	needs.events = SANDLOCK_EVENTS_ALLOWED;
	is_int(trap_set_of(&needs, logging, DISPATCH_MAX_TRAPS), n_plain,
	       "ALLOWED alone traps nothing more");
	needs = (struct plan_needs){ .supervised = 0, .events = SANDLOCK_EVENTS_DENIALS };
	struct plan_needs unsup = { 0 };
	is_int(trap_set_of(&needs, logging, DISPATCH_MAX_TRAPS),
	       trap_set_of(&unsup, plain, DISPATCH_MAX_TRAPS),
	       "without a supervisor the logging mode traps nothing");
}

static struct sandlock_policy *policy_of(const char *const *set)
{
	struct sandlock_policy *p = policy_new();

	if (p && sandlock_policy_set(p, "allow_degraded", "all", NULL) < 0)
		p = (policy_free(p), NULL);
	for (size_t i = 0; p && set[i]; i += 2)
		if (sandlock_policy_set(p, set[i], set[i + 1], NULL) < 0) {
			diag("%s = %s refused", set[i], set[i + 1]);
			p = (policy_free(p), NULL);
		}
	return p;
}

static void test_blocked(void)
{
	struct seccomp_block t[SECCOMP_BLOCK_NR];
	struct sandlock_policy *p = policy_of((const char *const[]){
		"extra_deny_syscalls", "getcwd", "extra_deny_syscalls", "clone3", NULL });

	if (!ok(p != NULL, "a policy with extra denials"))
		return;
	memset(t, 0, sizeof(t));
	seccomp_blocked_table(p, t);
	is_int(t[SYS_mount].kind, SECCOMP_BLOCK_DEFAULT, "mount: the default blocklist");
	is_int(t[SYS_mount].err, EPERM, "  EPERM");
	is_int(t[SYS_shmget].kind, SECCOMP_BLOCK_GROUP, "shmget: its group");
	is_str(seccomp_groups[t[SYS_shmget].index].name, "sysv_ipc", "  sysv_ipc");
	is_int(t[SYS_getcwd].kind, SECCOMP_BLOCK_EXTRA, "getcwd: extra_deny_syscalls");
	is_str(p->extra_deny[t[SYS_getcwd].index], "getcwd", "  its entry");
	is_int(t[SYS_clone3].err, ENOSYS, "clone3 extra-denied: ENOSYS, as the filter gives it");
	is_int(t[SYS_read].kind, SECCOMP_BLOCK_NONE, "read: not blocked (control)");
	policy_free(p);

	p = policy_of((const char *const[]){ "extra_allow_syscalls", "sysv_ipc", NULL });
	memset(t, 0, sizeof(t));
	if (p)
		seccomp_blocked_table(p, t);
	ok(p && t[SYS_shmget].kind == SECCOMP_BLOCK_NONE, "shmget allowed with its group");
	policy_free(p);
	p = policy_of((const char *const[]){ "extra_deny_syscalls", "sysv_ipc", NULL });
	memset(t, 0, sizeof(t));
	if (p)
		seccomp_blocked_table(p, t);
	ok(p && t[SYS_semop].kind == SECCOMP_BLOCK_EXTRA,
	   "a group named by extra_deny_syscalls: its entry's");
	policy_free(p);
}

static int rule_on(const struct plan_ll *ll, const char *path, uint64_t *access)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return 0;
	for (size_t i = 0; i < ll->n; i++)
		if (ll->rules[i].dev == st.st_dev && ll->rules[i].ino == st.st_ino) {
			*access = ll->rules[i].access;
			return 1;
		}
	return 0;
}

static void test_recorded(void)
{
	char dir[64], sub[96], secret[128], lonely[128];
	struct sandlock_error *e = NULL;
	struct plan plain, logging;

	if (!tap_mkdtemp(dir, sizeof(dir), "test-judge"))
		return;
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	snprintf(secret, sizeof(secret), "%s/secret", sub);
	snprintf(lonely, sizeof(lonely), "%s/lonely", sub);
	mkdir(sub, 0700);
	close(open(secret, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
	close(open(lonely, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
	struct sandlock_policy *p =
		policy_of((const char *const[]){ "fs_readable", dir, "fs_denied", secret, NULL });
	if (!ok(p != NULL, "a policy: a read grant holding a denied file"))
		return;
	const char *const argv[] = { "true", NULL };
	int r = plan_build(p, argv, SANDLOCK_EVENTS_DENIALS, &logging, &e);
	if (!ok(r == 0, "plan_build in logging mode")) {
		diag("%d %s", r, e ? e->message : "");
		error_free(e);
		policy_free(p);
		return;
	}
	ok(logging.fs.ll.active && logging.fs.ll.n > 0, "the ruleset's %zu rules recorded",
	   logging.fs.ll.n);
	uint64_t a = 0;
	ok(rule_on(&logging.fs.ll, dir, &a) && a == (a & RD), "the carved grant %s: READ_DIR only",
	   dir);
	ok(rule_on(&logging.fs.ll, sub, &a) && a == (a & RD), "%s: READ_DIR only (the carve)", sub);
	ok(rule_on(&logging.fs.ll, lonely, &a) && (a & RF), "%s: granted one by one", lonely);
	ok(!rule_on(&logging.fs.ll, secret, &a), "the denied file: no rule");
	ok(rule_on(&logging.fs.ll, "/dev/null", &a) && (a & WF), "the default devices recorded");
	ok(logging.fs.ll.denied && strcmp(logging.fs.ll.denied[0], secret) == 0 &&
		   strcmp(logging.fs.ll.denied_as_written[0], secret) == 0,
	   "the user's fs_denied recorded");
	ok(logging.blocked && logging.blocked[SYS_mount].kind == SECCOMP_BLOCK_DEFAULT,
	   "the blocked table made");
	r = plan_build(p, argv, 0, &plain, NULL);
	if (ok(r == 0, "plan_build without events")) {
		ok(!plain.fs.ll.active && plain.fs.ll.n == 0 && !plain.blocked,
		   "  nothing recorded, no table");
		ok(plain.prog.len != logging.prog.len ||
			   memcmp(plain.prog.filter, logging.prog.filter,
				  plain.prog.len * sizeof(*plain.prog.filter)) != 0,
		   "  the logging mode's program is another one (not the precompiled)");
		plan_done(&plain);
	}
	plan_done(&logging);
	policy_free(p);
	unlink(secret);
	unlink(lonely);
	rmdir(sub);
	rmdir(dir);
}

int main(void)
{
	test_open_access();
	test_missing();
	test_texts();
	test_traps();
	test_blocked();
	test_recorded();
	return done_testing();
}
