/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-policy-fn-path: deny_path and allow_path through the public header. The callback denies
 * (and allows) on the first call it sees, before the helper's own opens; the helper (this
 * program again, in a mode) then opens, creates, renames and execs, one errno a line. Each
 * behaviour has its control: the same run with nothing denied succeeds.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandlock.h"
#include "spawn-helpers.h"
#include "tap.h"

/* ---- the helper modes (run inside the sandbox) ------------------------------------------- */

/* 0, or the errno of opening and reading @path; its first byte in *@c. */
static int read_one(const char *path, char *c)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	int r = read(fd, c, 1) == 1 ? 0 : EIO;
	close(fd);
	return r;
}

static const char *swap_dir;
static atomic_int swap_stop;

/* Swap the symlink "ln" between "ok" and "secret", as fast as it can. */
static void *swapper(void *arg)
{
	char ln[PATH_MAX], tmp[PATH_MAX];

	(void)arg;
	snprintf(ln, sizeof(ln), "%s/ln", swap_dir);
	snprintf(tmp, sizeof(tmp), "%s/ln.tmp", swap_dir);
	for (int i = 0; !atomic_load(&swap_stop); i++) {
		unlink(tmp);
		if (symlink(i % 2 ? "secret" : "ok", tmp) == 0)
			rename(tmp, ln);
	}
	return NULL;
}

static int helper(int argc, char **argv)
{
	const char *mode = argv[1];
	char c;

	if (strcmp(mode, "read") == 0) { /* read PATH...: the errno of each */
		for (int i = 2; i < argc; i++)
			printf("%d\n", read_one(argv[i], &c));
		return 0;
	}
	if (strcmp(mode, "nocaps-read") == 0) { /* nocaps-read PATH: without CAP_DAC_* */
		struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
		struct __user_cap_data_struct d[2];
		if (syscall(SYS_capget, &h, d) < 0)
			return 1;
		d[0].effective &= ~((1U << CAP_DAC_OVERRIDE) | (1U << CAP_DAC_READ_SEARCH));
		if (syscall(SYS_capset, &h, d) < 0)
			return 1;
		printf("%d\n", read_one(argv[2], &c));
		return 0;
	}
	if (strcmp(mode, "nest-read") == 0) { /* nest-read PATH: read it in a Landlock of its own */
		struct landlock_ruleset_attr attr = { .handled_access_fs =
							      LANDLOCK_ACCESS_FS_READ_FILE };
		int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
		int r = rs >= 0 && syscall(SYS_landlock_restrict_self, rs, 0) == 0 ? 0 : errno;
		printf("%d\n%d\n", r, read_one(argv[2], &c));
		return 0;
	}
	if (strcmp(mode, "nest-exec") == 0) { /* nest-exec 0|1 PATH: a domain of its own, exec */
		struct landlock_ruleset_attr attr = { .handled_access_fs =
							      LANDLOCK_ACCESS_FS_MAKE_DIR };
		int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
		if (argv[2][0] == '1' && (rs < 0 || syscall(SYS_landlock_restrict_self, rs, 0) < 0))
			return 1;
		char *const v[] = { argv[3], NULL };
		execv(v[0], v);
		return 1;
	}
	if (strcmp(mode, "chroot-exec") == 0) { /* chroot-exec DIR NAME ARG: exec NAME in DIR */
		char *const v[] = { argv[3], argv[4], NULL };
		if (chroot(argv[2]) == 0 && chdir("/") == 0)
			execv(v[0], v);
		printf("%d\n", errno);
		return 0;
	}
	if (strcmp(mode, "rename") == 0) { /* rename A B, then read B */
		printf("%d\n", rename(argv[2], argv[3]) < 0 ? errno : 0);
		printf("%d\n", read_one(argv[3], &c));
		return 0;
	}
	if (strcmp(mode, "link") == 0) { /* link A B, then read B */
		printf("%d\n", link(argv[2], argv[3]) < 0 ? errno : 0);
		printf("%d\n", read_one(argv[3], &c));
		unlink(argv[3]);
		return 0;
	}
	if (strcmp(mode, "kinds") == 0) { /* kinds PATH: creat, O_PATH, openat2 BENEATH of it */
		int fd = creat(argv[2], 0644);
		printf("%d\n", fd < 0 ? errno : 0);
		fd = open(argv[2], O_PATH | O_CLOEXEC);
		printf("%d\n", fd < 0 ? errno : 0);
		struct open_how how = { .flags = O_RDONLY | O_CLOEXEC, .resolve = RESOLVE_BENEATH };
		int dir = open(argv[3], O_PATH | O_DIRECTORY | O_CLOEXEC);
		fd = (int)syscall(SYS_openat2, dir, argv[4], &how, sizeof(how));
		printf("%d\n", fd < 0 ? errno : 0);
		return 0;
	}
	if (strcmp(mode, "create") == 0) { /* create PATH under umask 027: its mode */
		umask(027);
		int fd = open(argv[2], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0)
			printf("e%d\n", errno);
		else
			printf("%o\n", st.st_mode & 0777);
		return 0;
	}
	if (strcmp(mode, "exec") == 0) { /* exec PATH WORD */
		char *const v[] = { argv[2], argv[3], NULL };
		execv(v[0], v);
		printf("%d\n", errno);
		return 0;
	}
	if (strcmp(mode, "exec-in") == 0) { /* exec-in DIR NAME WORD: chdir, then exec NAME */
		char *const v[] = { argv[3], argv[4], NULL };
		if (chdir(argv[2]) == 0)
			execv(v[0], v);
		printf("%d\n", errno);
		return 0;
	}
	if (strcmp(mode, "fds") == 0) { /* fds PATH: reopen it by /proc/self/fd/N, and /dev/stdin */
		char name[64];
		int fd = open(argv[2], O_RDONLY | O_CLOEXEC);
		snprintf(name, sizeof(name), "/proc/self/fd/%d", fd);
		printf("%d\n", fd < 0 ? errno : read_one(name, &c));
		int in = open("/dev/stdin", O_RDONLY | O_CLOEXEC);
		printf("%d\n", in < 0 ? errno : 0);
		return 0;
	}
	if (strcmp(mode, "race") == 0) { /* race DIR N: read DIR/ln N times while it is swapped */
		pthread_t t;
		char ln[PATH_MAX];
		int secret = 0, ok = 0;
		swap_dir = argv[2];
		snprintf(ln, sizeof(ln), "%s/ln", swap_dir);
		pthread_create(&t, NULL, swapper, NULL);
		for (int i = 0; i < atoi(argv[3]); i++) {
			if (read_one(ln, &c) == 0) {
				secret += c == 'S';
				ok += c == 'o';
			}
		}
		atomic_store(&swap_stop, 1);
		pthread_join(t, NULL);
		printf("%d %d\n", secret, ok);
		return 0;
	}
	return 127;
}

/* ---- the callback ------------------------------------------------------------------------ */

struct ctl {
	const char *deny[4];
	const char *allow; /* allowed again right after the denies */
	const char *allow_unknown;
	int late; /* denied at the first exec event, not the first event */
	atomic_int first, deny_r, allow_r, unknown_r;
};

static int32_t policy(const sandlock_policy_event_t *ev, sandlock_policy_ctx_t *ctx, void *ud)
{
	struct ctl *c = ud;

	if (c->late && strcmp(ev->syscall, "execve") != 0)
		return SANDLOCK_POLICY_ALLOW;
	if (atomic_exchange(&c->first, 1))
		return SANDLOCK_POLICY_ALLOW;
	for (size_t i = 0; i < 4 && c->deny[i]; i++) {
		int r = sandlock_policy_ctx_deny_path(ctx, c->deny[i]);
		if (r < 0)
			atomic_store(&c->deny_r, r);
	}
	if (c->allow)
		atomic_store(&c->allow_r, sandlock_policy_ctx_allow_path(ctx, c->allow));
	if (c->allow_unknown)
		atomic_store(&c->unknown_r, sandlock_policy_ctx_allow_path(ctx, c->allow_unknown));
	return SANDLOCK_POLICY_ALLOW;
}

static char self_path[PATH_MAX], self_dir[PATH_MAX], tmp[PATH_MAX / 2], out[4096];
static atomic_int deny_events;
static char want_reason[PATH_MAX + 128];
static char last_reason[PATH_MAX + 128], last_path[PATH_MAX], last_category[16];

static void on_event(const sandlock_event_t *ev, void *user_data)
{
	(void)user_data;
	if (ev->verdict != SANDLOCK_VERDICT_DENY || !ev->reason)
		return;
	if (strstr(ev->reason, "denied by the policy_fn (deny_path "))
		atomic_fetch_add(&deny_events, 1);
	snprintf(last_reason, sizeof(last_reason), "%s", ev->reason);
	snprintf(last_path, sizeof(last_path), "%s", ev->path ? ev->path : "");
	snprintf(last_category, sizeof(last_category), "%s", ev->category ? ev->category : "");
}

/* Deny many files at the first call: the 65th is refused. */
static int32_t many(const sandlock_policy_event_t *ev, sandlock_policy_ctx_t *ctx, void *ud);

/* Run the helper (@args, NULL-terminated) under a policy_fn of @c: its stdout in out. */
static int run_num_cpus; /* the next runs serve /proc/cpuinfo (num_cpus 1, /proc readable) */
static int run_workdir;	 /* the next runs have the workdir wd, stored in store */
static char store[PATH_MAX], wd[PATH_MAX];
static char ro[PATH_MAX / 2];	   /* readable, never writable: scripts and binaries to exec */
static char ro_writable[PATH_MAX]; /* a file in ro the next runs may write, "" none */

static void run(struct ctl *c, const char *const *args)
{
	const char *argv[12] = { self_path };
	sandlock_policy_t *p = system_policy();
	size_t n = 1;

	for (; args[n - 1] && n < 11; n++)
		argv[n] = args[n - 1];
	argv[n] = NULL;
	sandlock_policy_add_fs_read(p, self_dir);
	sandlock_policy_add_fs_write(p, tmp);
	sandlock_policy_add_fs_read(p, ro);
	if (ro_writable[0])
		sandlock_policy_add_fs_write(p, ro_writable);
	if (run_workdir) {
		sandlock_policy_set(p, "workdir", wd, NULL);
		sandlock_policy_set(p, "fs_storage", store, NULL);
	}
	if (run_num_cpus) {
		sandlock_policy_set(p, "num_cpus", "1", NULL);
		sandlock_policy_add_fs_read(p, "/proc");
	}
	if (c)
		sandlock_policy_set_policy_fn(p, policy, c, NULL);
	sandlock_spawn_opts_t o = { .size = sizeof(o), .on_event = on_event };
	(void)spawn_output(p, argv, &o, out, sizeof(out), NULL, NULL);
	sandlock_policy_free(p);
}

static void write_file(const char *name, const char *text)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static char *at(const char *name)
{
	static char bufs[8][PATH_MAX];
	static int i;
	char *b = bufs[i++ % 8];
	snprintf(b, PATH_MAX, "%s/%s", tmp, name);
	return b;
}

#define EXPECT(s, name, ...)                                                                       \
	do {                                                                                       \
		char want_[256];                                                                   \
		snprintf(want_, sizeof(want_), __VA_ARGS__);                                       \
		is_str(s, want_, name);                                                            \
	} while (0)

static void files(void)
{
	struct ctl c = { .deny = { at("secret") } };
	struct ctl none = { 0 };

	write_file("secret", "SECRET");
	write_file("ok", "ok");
	mkdir(at("dir"), 0755);
	write_file("dir/inner", "inner");
	ok(link(at("secret"), at("hard")) == 0, "a hard link made before the deny");
	ok(symlink(at("dir/inner"), at("to-inner")) == 0, "a symlink to the inner file");

	run(&none, (const char *[]){ "read", at("secret"), at("hard"), NULL });
	is_str(out, "0\n0\n", "control: nothing denied, the file and its hard link read");
	atomic_store(&deny_events, 0);
	run(&c, (const char *[]){ "read", at("secret"), at("ok"), at("hard"), NULL });
	EXPECT(out, "denied file EACCES, another file reads, a hard link made before: EACCES",
	       "%d\n0\n%d\n", EACCES, EACCES);
	ok(atomic_load(&deny_events) >= 2, "denial events, reason deny_path (%d)",
	   atomic_load(&deny_events));
	char want[PATH_MAX + 64];
	snprintf(want, sizeof(want), "denied by the policy_fn (deny_path %s)", at("secret"));
	is_str(last_reason, want, "the event's reason names the deny");
	is_str(last_path, at("hard"), "the event's path is the name the child opened");
	is_str(last_category, "file", "category file");
	is_int(atomic_load(&c.deny_r), 0, "deny_path returned 0");

	run(&none, (const char *[]){ "kinds", at("secret"), tmp, "ok", NULL });
	is_str(out, "0\n0\n0\n", "control: creat, O_PATH, openat2 RESOLVE_BENEATH");
	write_file("secret", "SECRET");
	c = (struct ctl){ .deny = { at("secret") } };
	run(&c, (const char *[]){ "kinds", at("secret"), tmp, "ok", NULL });
	EXPECT(out, "creat and O_PATH of the denied file, an openat2 BENEATH: EACCES",
	       "%d\n%d\n%d\n", EACCES, EACCES, EACCES);
	char buf[16] = "";
	FILE *f = fopen(at("secret"), "r");
	ok(f && fgets(buf, sizeof(buf), f) && strcmp(buf, "SECRET") == 0,
	   "the denied file was not truncated");
	if (f)
		fclose(f);

	c = (struct ctl){ .deny = { at("secret") } };
	run(&c, (const char *[]){ "rename", at("secret"), at("moved"), NULL });
	EXPECT(out, "renamed after the deny: still EACCES", "0\n%d\n", EACCES);
	rename(at("moved"), at("secret"));

	c = (struct ctl){ .deny = { at("dir") } };
	run(&none, (const char *[]){ "read", at("dir/inner"), at("to-inner"), NULL });
	is_str(out, "0\n0\n", "control: the file beneath the directory, and through a symlink");
	run(&c, (const char *[]){ "read", at("dir/inner"), at("to-inner"), at("ok"), NULL });
	EXPECT(out, "a directory denied: beneath it and through a symlink EACCES", "%d\n%d\n0\n",
	       EACCES, EACCES);

	/* Out from under a denied directory: a link or rename made after the deny is refused. */
	run(&none, (const char *[]){ "link", at("dir/inner"), at("out"), NULL });
	is_str(out, "0\n0\n", "control: a link out of the directory, nothing denied");
	c = (struct ctl){ .deny = { at("dir") } };
	run(&c, (const char *[]){ "link", at("dir/inner"), at("out"), NULL });
	EXPECT(out, "a link out of a denied directory: EACCES", "%d\n%d\n", EACCES, ENOENT);
	c = (struct ctl){ .deny = { at("dir") } };
	run(&c, (const char *[]){ "rename", at("dir/inner"), at("out"), NULL });
	EXPECT(out, "a rename out of a denied directory: EACCES", "%d\n%d\n", EACCES, ENOENT);
	c = (struct ctl){ .deny = { at("dir") } };
	run(&c, (const char *[]){ "link", at("ok"), at("ok2"), NULL });
	is_str(out, "0\n0\n", "a link elsewhere while a deny is in force: made on behalf");

	c = (struct ctl){ .deny = { at("dir") } };
	run(&c, (const char *[]){ "create", at("made"), NULL });
	is_str(out, "640\n", "O_CREAT while a deny is in force: made with the child's umask");

	c = (struct ctl){ .deny = { at("secret") },
			  .allow = at("secret"),
			  .allow_unknown = at("ok") };
	run(&c, (const char *[]){ "read", at("secret"), NULL });
	is_str(out, "0\n", "allow_path restores access");
	is_int(atomic_load(&c.allow_r), 0, "allow_path of a denied path: 0");
	is_int(atomic_load(&c.unknown_r), -ENOENT, "allow_path of a path never denied: -ENOENT");

	c = (struct ctl){ .deny = { at("secret") } };
	run(&c, (const char *[]){ "fds", at("ok"), NULL });
	is_str(out, "0\n0\n", "/proc/self/fd/N and /dev/stdin open while a deny is in force");

	c = (struct ctl){ .deny = { at("nothing-here") } };
	run(&c, (const char *[]){ "read", at("ok"), NULL });
	is_int(atomic_load(&c.deny_r), -ENOENT, "deny_path of a missing path: -ENOENT");
}

/* A file a server of the supervisor's answers (a view): checked before it is served. */
static void served(void)
{
	struct ctl none = { 0 };
	struct ctl c = { .deny = { "/proc/cpuinfo" } };

	run_num_cpus = 1;
	run(&none, (const char *[]){ "read", "/proc/cpuinfo", NULL });
	is_str(out, "0\n", "control: /proc/cpuinfo served under num_cpus");
	run(&c, (const char *[]){ "read", "/proc/cpuinfo", NULL });
	EXPECT(out, "a served view denied: EACCES", "%d\n", EACCES);
	run_num_cpus = 0;
}

/* A workdir's names are the supervisor's own opens: deny_path is refused there. */
static void with_workdir(void)
{
	struct ctl c = { .deny = { at("ok") } };

	run_workdir = 1;
	run(&c, (const char *[]){ "read", at("ok"), NULL });
	is_int(atomic_load(&c.deny_r), -EOPNOTSUPP, "deny_path with a workdir: -EOPNOTSUPP");
	is_str(out, "0\n", "  and nothing is denied");
	run_workdir = 0;
}

static void execs(void)
{
	char echo[PATH_MAX], truebin[PATH_MAX];
	struct ctl none = { 0 };
	struct ctl c;

	if (!realpath("/bin/true", truebin) || !realpath("/bin/echo", echo)) {
		skip_all("/bin/true or /bin/echo");
	}
	c = (struct ctl){ .deny = { truebin } };
	run(&c, (const char *[]){ "exec", truebin, "x", NULL });
	EXPECT(out, "exec of a denied binary: EACCES", "%d\n", EACCES);
	c = (struct ctl){ .deny = { truebin } };
	run(&c, (const char *[]){ "exec", echo, "hello", NULL });
	is_str(out, "hello\n", "exec of another binary while a deny is in force");

	/* A copy of echo in the writable directory. */
	char cmd[PATH_MAX * 2 + 16];
	snprintf(cmd, sizeof(cmd), "cp %s %s", echo, at("echo"));
	ok(system(cmd) == 0, "copied echo");
	run(&none, (const char *[]){ "exec", at("echo"), "hi", NULL });
	is_str(out, "hi\n", "control: exec from the writable directory, nothing denied");
	c = (struct ctl){ .deny = { at("secret") } };
	run(&c, (const char *[]){ "exec", at("echo"), "hi", NULL });
	EXPECT(out, "exec from a writable directory while a deny is in force: EACCES", "%d\n",
	       EACCES);
	is_str(last_reason,
	       "an exec from a directory the sandbox can change is refused while deny_path is in "
	       "force",
	       "  its event says why");

	/* Through a /proc link: the kernel jumps where the link's text may not lead. */
	run(&none, (const char *[]){ "exec", "/proc/self/exe", "read", NULL });
	is_str(out, "", "control: an exec of /proc/self/exe runs (the helper, reading nothing)");
	c = (struct ctl){ .deny = { at("secret") } };
	run(&c, (const char *[]){ "exec", "/proc/self/exe", "read", NULL });
	EXPECT(out, "an exec through /proc/self/exe while a deny is in force: EACCES", "%d\n",
	       EACCES);

	/* A relative name: the working directory may be another process's too (CLONE_FS). */
	run(&none, (const char *[]){ "exec-in", "/usr/bin", "./echo", "rel", NULL });
	is_str(out, "rel\n", "control: an exec by a relative name, nothing denied");
	c = (struct ctl){ .deny = { at("secret") } };
	run(&c, (const char *[]){ "exec-in", "/usr/bin", "./echo", "rel", NULL });
	EXPECT(out, "an exec by a relative name while a deny is in force: EACCES", "%d\n", EACCES);
}

/* The interpreter (PT_INTERP) of ELF file @path into @buf: 0, or -1 when it has none. */
static int elf_interp_of(const char *path, char *buf, size_t size)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd = open(path, O_RDONLY | O_CLOEXEC), r = -1;

	if (fd < 0)
		return -1;
	if (pread(fd, &eh, sizeof(eh), 0) == sizeof(eh) && eh.e_ident[EI_CLASS] == ELFCLASS64)
		for (int i = 0; i < eh.e_phnum && r < 0; i++)
			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) ==
				    sizeof(ph) &&
			    ph.p_type == PT_INTERP && ph.p_filesz < size &&
			    pread(fd, buf, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz)
				r = 0;
	close(fd);
	return r;
}

/* What an exec makes the kernel load with no call of its own: a script's interpreter, an ELF's
 * loader. Each is checked as the file execed is; and a file whose first bytes name them must
 * be one the sandbox cannot rewrite meanwhile. */
static void interpreters(void)
{
	char sh[PATH_MAX], echo[PATH_MAX], loader[PATH_MAX], real_loader[PATH_MAX];
	char script[PATH_MAX], text[PATH_MAX + 64], cmd[3 * PATH_MAX];
	struct ctl none = { 0 };
	struct ctl c;

	if (!realpath("/bin/sh", sh) || !realpath("/bin/echo", echo))
		skip_all("/bin/sh or /bin/echo");
	snprintf(script, sizeof(script), "%s/script", ro);
	snprintf(text, sizeof(text), "#!%s\necho script-ran\n", sh);
	FILE *f = fopen(script, "w");
	ok(f && fputs(text, f) >= 0 && fclose(f) == 0 && chmod(script, 0755) == 0,
	   "a script in a directory the sandbox cannot change");
	run(&none, (const char *[]){ "exec", script, "x", NULL });
	is_str(out, "script-ran\n", "control: the script runs, nothing denied");
	c = (struct ctl){ .deny = { at("secret") } };
	run(&c, (const char *[]){ "exec", script, "x", NULL });
	is_str(out, "script-ran\n", "control: the script runs while another file is denied");
	c = (struct ctl){ .deny = { sh } };
	run(&c, (const char *[]){ "exec", script, "x", NULL });
	EXPECT(out, "its interpreter denied: the script's exec EACCES", "%d\n", EACCES);
	snprintf(want_reason, sizeof(want_reason), "denied by the policy_fn (deny_path %s)", sh);
	is_str(last_reason, want_reason, "  the event names the interpreter's deny");

	if (elf_interp_of(echo, loader, sizeof(loader)) < 0 || !realpath(loader, real_loader)) {
		diag("echo has no ELF interpreter: its loader's deny not tried");
	} else {
		c = (struct ctl){ .deny = { real_loader } };
		run(&c, (const char *[]){ "exec", echo, "hi", NULL });
		EXPECT(out, "the ELF loader denied: a dynamic binary's exec EACCES", "%d\n",
		       EACCES);
	}

	/* A binary the sandbox may write, in a directory it cannot change. */
	snprintf(ro_writable, sizeof(ro_writable), "%s/wecho", ro);
	snprintf(cmd, sizeof(cmd), "cp %s %s", echo, ro_writable);
	ok(system(cmd) == 0, "a copy of echo the sandbox may write");
	run(&none, (const char *[]){ "exec", ro_writable, "w", NULL });
	is_str(out, "w\n", "control: a writable binary runs, nothing denied");
	c = (struct ctl){ .deny = { at("secret") } };
	run(&c, (const char *[]){ "exec", ro_writable, "w", NULL });
	EXPECT(out, "a writable binary while a deny is in force: EACCES", "%d\n", EACCES);
	is_str(last_reason,
	       "an exec of a file the sandbox can write is refused while deny_path is in force",
	       "  its event says why");
	ro_writable[0] = '\0';
}

/* The name is resolved by the supervisor: a directory only its capabilities let it search
 * (CAP_DAC_READ_SEARCH, CAP_DAC_OVERRIDE) is never searched for a child without them. */
static void capabilities(void)
{
	struct ctl none = { 0 };
	struct ctl c = { .deny = { at("secret") } };

	if (geteuid() != 0) {
		diag("not root: a child without the supervisor's CAP_DAC_* not tried");
		return;
	}
	ok(mkdir(at("locked"), 0700) == 0 && chown(at("locked"), 65534, 65534) == 0,
	   "a directory only its owner (not root's uid) may search");
	write_file("locked/f", "L");
	run(&c, (const char *[]){ "read", at("locked/f"), NULL });
	is_str(out, "0\n", "control: with its capabilities root reads beneath it, deny in force");
	run(&none, (const char *[]){ "nocaps-read", at("locked/f"), NULL });
	EXPECT(out, "control: without CAP_DAC_* the kernel refuses it", "%d\n", EACCES);
	c = (struct ctl){ .deny = { at("secret") } };
	run(&c, (const char *[]){ "nocaps-read", at("locked/f"), NULL });
	EXPECT(out, "without CAP_DAC_*, while a deny is in force: EACCES", "%d\n", EACCES);
	is_str(last_reason,
	       "a call by a thread whose ids or capabilities differ from the supervisor's is "
	       "refused while deny_path is in force",
	       "  its event says why");
}

/* A process that confines itself further (a Landlock domain of its own) is more restricted
 * than the thread that opens for the child: no such domain is made while a deny is in force,
 * and no deny is made once one was. */
static void nested(void)
{
	struct ctl none = { 0 };
	struct ctl c = { .deny = { at("secret") } };

	run(&none, (const char *[]){ "nest-read", at("ok"), NULL });
	EXPECT(out, "control: a domain of its own, nothing denied: its reads EACCES", "0\n%d\n",
	       EACCES);
	run(&c, (const char *[]){ "nest-read", at("ok"), NULL });
	EXPECT(out,
	       "while a deny is in force the domain is refused (EPERM), the read the sandbox's",
	       "%d\n0\n", EPERM);
	is_str(last_reason,
	       "a Landlock domain of the sandbox's own is refused while deny_path is in force",
	       "  its event says why");

	c = (struct ctl){ .deny = { at("secret") }, .late = 1 };
	run(&c, (const char *[]){ "nest-exec", "0", "/bin/true", NULL });
	is_int(atomic_load(&c.deny_r), 0, "control: a deny at an exec, no domain of its own: 0");
	c = (struct ctl){ .deny = { at("secret") }, .late = 1 };
	run(&c, (const char *[]){ "nest-exec", "1", "/bin/true", NULL });
	is_int(atomic_load(&c.deny_r), -EOPNOTSUPP,
	       "a deny after a process made a domain of its own: -EOPNOTSUPP");
}

/* A process's own root (chroot) holds ".." at its top, as the kernel's walk of an exec's name
 * does. */
static void chrooted(void)
{
	char jail[PATH_MAX], prog[PATH_MAX + 8], loader[PATH_MAX], cmd[3 * PATH_MAX];
	struct ctl none = { 0 };
	struct ctl c;

	if (geteuid() != 0 || access("/sbin/ldconfig", X_OK) < 0 ||
	    elf_interp_of("/sbin/ldconfig", loader, sizeof(loader)) == 0) {
		diag("not root, or no static /sbin/ldconfig: an exec in a chroot not tried");
		return;
	}
	snprintf(jail, sizeof(jail), "%s/jail", ro);
	snprintf(prog, sizeof(prog), "%s/prog", jail);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s && cp /sbin/ldconfig %s", jail, prog);
	ok(system(cmd) == 0, "a static program in a directory to chroot to");
	run(&none, (const char *[]){ "chroot-exec", jail, "/../prog", "--version", NULL });
	ok(strncmp(out, "ldconfig", 8) == 0, "control: \"/../prog\" in the chroot runs it");
	c = (struct ctl){ .deny = { prog } };
	run(&c, (const char *[]){ "chroot-exec", jail, "/../prog", "--version", NULL });
	EXPECT(out, "denied: \"/../prog\" in the chroot EACCES", "%d\n", EACCES);
}

static atomic_int many_r;

static int32_t many(const sandlock_policy_event_t *ev, sandlock_policy_ctx_t *ctx, void *ud)
{
	static atomic_int once;

	(void)ev;
	(void)ud;
	if (atomic_exchange(&once, 1))
		return SANDLOCK_POLICY_ALLOW;
	for (int i = 0; i < 65; i++) {
		char name[32];
		snprintf(name, sizeof(name), "many-%d", i);
		int r = sandlock_policy_ctx_deny_path(ctx, at(name));
		if (r < 0) {
			atomic_store(&many_r, i * 1000 - r);
			break;
		}
	}
	return SANDLOCK_POLICY_ALLOW;
}

static void full(void)
{
	sandlock_policy_t *p = system_policy();
	const char *argv[] = { self_path, "read", at("ok"), NULL };
	sandlock_spawn_opts_t o = { .size = sizeof(o), .stdout_mode = SANDLOCK_STDIO_PIPE };
	sandlock_sandbox_t *sb = NULL;

	for (int i = 0; i < 65; i++) {
		char name[32];
		snprintf(name, sizeof(name), "many-%d", i);
		write_file(name, "x");
	}
	sandlock_policy_add_fs_read(p, self_dir);
	sandlock_policy_add_fs_read(p, tmp);
	sandlock_policy_set_policy_fn(p, many, NULL, NULL);
	if (sandlock_spawn(p, argv, &o, &sb, NULL) == 0)
		sandlock_sandbox_wait(sb, -1);
	sandlock_sandbox_free(sb);
	sandlock_policy_free(p);
	is_int(atomic_load(&many_r), 64 * 1000 + ENOSPC, "the 65th deny_path: -ENOSPC");
}

static void race(void)
{
	struct ctl none = { 0 };
	struct ctl c = { .deny = { at("secret") } };
	int secret = -1, okc = -1;

	run(&none, (const char *[]){ "race", tmp, "3000", NULL });
	int n = sscanf(out, "%d %d", &secret, &okc);
	ok(n == 2 && secret > 0,
	   "control: with nothing denied the swapped symlink reads the secret (%d)", secret);
	run(&c, (const char *[]){ "race", tmp, "3000", NULL });
	n = sscanf(out, "%d %d", &secret, &okc);
	ok(n == 2 && secret == 0 && okc > 0,
	   "a racing swap never reads the denied file (secret %d, ok %d)", secret, okc);
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		int code = helper(argc, argv);
		fflush(stdout);
		_exit(code);
	}
	if (!realpath("/proc/self/exe", self_path))
		return 1;
	snprintf(self_dir, sizeof(self_dir), "%s", self_path);
	*strrchr(self_dir, '/') = '\0';
	if (sandlock_landlock_abi_version() < 1) {
		printf("1..0 # SKIP Landlock is not available\n");
		return 0;
	}
	char made[PATH_MAX], real[PATH_MAX];
	if (!tap_mkdtemp(made, sizeof(made), "policy-fn-path") || !realpath(made, real) ||
	    strlen(real) >= sizeof(tmp))
		return 1;
	strcpy(tmp, real);
	if (!tap_mkdtemp(store, sizeof(store), "policy-fn-path-store") ||
	    !tap_mkdtemp(wd, sizeof(wd), "policy-fn-path-wd") ||
	    !tap_mkdtemp(made, sizeof(made), "policy-fn-path-ro") || !realpath(made, real) ||
	    strlen(real) >= sizeof(ro))
		return 1;
	strcpy(ro, real);
	files();
	served();
	with_workdir();
	execs();
	interpreters();
	capabilities();
	nested();
	chrooted();
	full();
	race();
	char cmd[4 * PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s %s %s", tmp, store, wd, ro);
	(void)!system(cmd);
	return done_testing();
}
