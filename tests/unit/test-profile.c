/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-profile: the policy layer through the public API: TOML profiles and JSON documents into
 * policies (every error one line with its exact text, line:column for a profile), ${HOME}
 * expansion case by case, the canonical dumps and their round trips over the corpus in
 * tests/profiles (which together set every field of the schema: checked against schema_fields),
 * the generic setters, and the "not supported yet" refusal at spawn. Run from the source root
 * (prove does, as tests/run does), where tests/profiles lies.
 *
 * A check that fails because of a known bug is printed as a TAP TODO with a "BUG:" diagnostic,
 * so the suite stays green while the bug is open; once it passes it fails, to get the mark
 * removed (the C form of pytest's xfail(strict=True)).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandlock.h"
#include "basic/macro.h"
#include "policy/policy.h"
#include "policy/schema.h"
#include "tap.h"

#define HOME_DIR "/home/tester"
#define PROFILES_DIR "tests/profiles"

/* ---- helpers ------------------------------------------------------------------------------ */

struct loaded {
	int r;
	char msg[1024];
	sandlock_policy_t *p;
};

static void take_error(struct loaded *l, sandlock_error_t *e)
{
	snprintf(l->msg, sizeof(l->msg), "%s", e ? sandlock_error_message(e) : "(no error object)");
	if (e && sandlock_error_code(e) != l->r)
		snprintf(l->msg, sizeof(l->msg), "(error code %d differs from the return %d)",
			 sandlock_error_code(e), l->r);
	sandlock_error_free(e);
}

static struct loaded load_any(const char *text, int json)
{
	struct loaded l = { 0 };
	sandlock_error_t *e = NULL;

	l.r = json ? sandlock_policy_load_json(text, strlen(text), &l.p, &e)
		   : sandlock_policy_load_toml(text, strlen(text), &l.p, &e);
	if (l.r < 0)
		take_error(&l, e);
	else if (e)
		snprintf(l.msg, sizeof(l.msg), "(error object written on success)");
	return l;
}

#define load_toml(text) load_any(text, 0)
#define load_json(text) load_any(text, 1)

static char *dump_toml(const sandlock_policy_t *p)
{
	char *t = NULL;
	return sandlock_policy_dump_toml(p, &t) == 0 ? t : NULL;
}

static char *dump_json(const sandlock_policy_t *p)
{
	char *t = NULL;
	return sandlock_policy_dump_json(p, &t) == 0 ? t : NULL;
}

/* The profile loads, and dumps as @want (TOML). */
static void expect_toml(const char *text, const char *want, const char *name)
{
	struct loaded l = load_toml(text);

	if (!ok(l.r == 0, "%s: loads", name)) {
		diag("  got %d: %s", l.r, l.msg);
		return;
	}
	char *d = dump_toml(l.p);
	is_str(d, want, "%s: dump", name);
	free(d);
	sandlock_policy_free(l.p);
}

/* The profile (or JSON document) fails with @code and exactly @want; no policy handed out. */
static void expect_fail(const char *text, int json, int code, const char *want, const char *name)
{
	struct loaded l = load_any(text, json);

	is_int(l.r, code, "%s: errno", name);
	if (l.r < 0)
		is_str(l.msg, want, "%s: message", name);
	else
		ok(0, "%s: message (it loaded)", name);
	ok(l.r == 0 || l.p == NULL, "%s: no policy handed out", name);
	if (l.r == 0)
		sandlock_policy_free(l.p);
}

#define expect_error(text, code, want, name) expect_fail(text, 0, code, want, name)

static void expect_json_dump(const char *text, const char *want_json, const char *want_toml,
			     const char *name)
{
	struct loaded l = load_json(text);

	if (!ok(l.r == 0, "%s: loads", name)) {
		diag("  got %d: %s", l.r, l.msg);
		return;
	}
	char *j = dump_json(l.p), *t = dump_toml(l.p);
	is_str(j, want_json, "%s: JSON dump", name);
	if (want_toml)
		is_str(t, want_toml, "%s: TOML dump", name);
	free(j);
	free(t);
	sandlock_policy_free(l.p);
}

static char *read_file(const char *path, size_t *ret_len)
{
	FILE *f = fopen(path, "rb");
	long size = f && fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
	char *buf = size >= 0 ? malloc((size_t)size + 1) : NULL;

	if (buf) {
		rewind(f);
		*ret_len = fread(buf, 1, (size_t)size, f);
		buf[*ret_len] = '\0';
	}
	if (f)
		fclose(f);
	return buf;
}

/* ---- 1. profile errors -------------------------------------------------------------------- */

/* One case of tests/profiles/invalid.txt (the format is described at its top). */
struct err_case {
	char name[160], code[16], msg[512], part[160], text[1024];
	int json, trim, has_part;
};

static const struct {
	const char *name;
	int code;
} errnos[] = {
	{ "EINVAL", -EINVAL }, { "ERANGE", -ERANGE }, { "ENOENT", -ENOENT }, { "ENOMEM", -ENOMEM }
};

static void run_case(const struct err_case *c)
{
	int code = 1;

	for (size_t i = 0; i < ELEMENTSOF(errnos); i++)
		if (strcmp(errnos[i].name, c->code) == 0)
			code = errnos[i].code;
	if (!c->has_part) {
		expect_fail(c->text, c->json, code, c->msg, c->name);
		return;
	}
	struct loaded l = load_any(c->text, c->json);
	size_t plen = strlen(c->msg);
	is_int(l.r, code, "%s: errno", c->name);
	if (!ok(l.r < 0 && strncmp(l.msg, c->msg, plen) == 0 && strstr(l.msg + plen, c->part) &&
			!strchr(l.msg, '\n'),
		"%s: one line, \"%s...\" holding %s", c->name, c->msg, c->part))
		diag("  got: %s", l.msg);
	sandlock_policy_free(l.r == 0 ? l.p : NULL);
}

/* Copies the value of "KEY: value" in @line into @dst when @line starts with @key. */
static int header(const char *line, const char *key, char *dst, size_t size)
{
	size_t n = strlen(key);

	if (strncmp(line, key, n) != 0 || line[n] != ':' || line[n + 1] != ' ')
		return 0;
	snprintf(dst, size, "%s", line + n + 2);
	return 1;
}

static int parse_header(struct err_case *c, const char *line)
{
	char v[16];

	if (header(line, "errno", c->code, sizeof(c->code)) ||
	    header(line, "error", c->msg, sizeof(c->msg)) ||
	    header(line, "error-start", c->msg, sizeof(c->msg)))
		return 0;
	if (header(line, "error-holds", c->part, sizeof(c->part)))
		return c->has_part = 1, 0;
	if (header(line, "format", v, sizeof(v)) && strcmp(v, "json") == 0)
		return c->json = 1, 0;
	if (header(line, "trim", v, sizeof(v)) && strcmp(v, "yes") == 0)
		return c->trim = 1, 0;
	return -EINVAL;
}

static void finish_case(struct err_case *c, size_t *ran)
{
	size_t len = strlen(c->text);

	while (len >= 2 && c->text[len - 1] == '\n' && c->text[len - 2] == '\n')
		c->text[--len] = '\0';
	if ((c->trim || c->json) && len && c->text[len - 1] == '\n')
		c->text[--len] = '\0';
	run_case(c);
	(*ran)++;
}

static void test_invalid_file(void)
{
	size_t len = 0, ran = 0, declared = 0;
	char *buf = read_file(PROFILES_DIR "/invalid.txt", &len), *next = buf;
	struct err_case c;
	int in_text = 0;

	if (!ok(buf != NULL, "read %s/invalid.txt (run from the source root)", PROFILES_DIR))
		return;
	for (char *line; (line = strsep(&next, "\n")) && (next || line[0]);) {
		if (strncmp(line, "=== ", 4) == 0) {
			if (declared++)
				finish_case(&c, &ran);
			memset(&c, 0, sizeof(c));
			snprintf(c.name, sizeof(c.name), "%s", line + 4);
			in_text = 0;
		} else if (!declared) {
			continue;
		} else if (in_text) {
			strncat(c.text, line, sizeof(c.text) - strlen(c.text) - 2);
			strcat(c.text, "\n");
		} else if (strcmp(line, "---") == 0) {
			in_text = 1;
		} else if (line[0] != '#' && parse_header(&c, line) < 0) {
			ok(0, "%s: a header line I do not know: %s", c.name, line);
		}
	}
	if (declared)
		finish_case(&c, &ran);
	ok(ran >= 90, "invalid.txt: %zu cases", ran);
	free(buf);
}

static void test_profile_controls(void)
{
	/* Controls: the neighbours of the failing cases load. */
	expect_toml("[limits]\ncpu = 100\nprocesses = 1\nnum_cpus = 4096\n",
		    "[limits]\nprocesses = 1\ncpu = 100\nnum_cpus = 4096\n",
		    "control: limits at the edges of their ranges");
	expect_toml("[limits]\ncpu = 1\n", "[limits]\ncpu = 1\n", "control: limits.cpu = 1");
	expect_toml("[program]\nuid = 4294967294\ngid = 0\n",
		    "[program]\nuid = 4294967294\ngid = 0\n", "control: uid with gid");
	expect_toml("[config]\nhttp_ca = \"/ca.pem\"\nhttp_key = \"/ca.key\"\n",
		    "[config]\nhttp_ca = \"/ca.pem\"\nhttp_key = \"/ca.key\"\n",
		    "control: http_ca with http_key");
	expect_toml("[config]\nhttp_inject_ca = [\"/b.pem\"]\nhttp_ca_out = \"/o.pem\"\n"
		    "[http]\ndeny = [\"* */admin\"]\n",
		    "[config]\nhttp_inject_ca = [\"/b.pem\"]\nhttp_ca_out = \"/o.pem\"\n\n"
		    "[http]\ndeny = [\"* */admin\"]\n",
		    "control: http_inject_ca and http_ca_out with an http rule");
	expect_toml("[filesystem]\nmount = [\"/w:/h:ro\", \"/x:/h\"]\n",
		    "[filesystem]\nmount = [\"/w:/h:ro\", \"/x:/h\"]\n",
		    "control: different virtual paths, one :ro");
	expect_toml("[network]\nallow_bind = [\"*\"]\n", "[network]\nallow_bind = [\"*\"]\n",
		    "control: \"*\" alone in allow_bind");
	expect_toml("[network]\nallow_bind = [80, \"9000-9005\", 0]\n",
		    "[network]\nallow_bind = [\"80\", \"9000-9005\", \"0\"]\n",
		    "control: ports and ranges in allow_bind");
	expect_toml("[determinism]\ntime_start = \"2026-01-01T02:00:00+02:00\"\n",
		    "[determinism]\ntime_start = \"2026-01-01T00:00:00Z\"\n",
		    "control: time_start with an offset, canonical in UTC");
	expect_toml("[determinism]\ntime_start = 2026-01-01T00:00:00-01:30\n",
		    "[determinism]\ntime_start = \"2026-01-01T01:30:00Z\"\n",
		    "control: time_start as a bare TOML offset date-time");
	expect_toml("[limits]\nmemory = \"512M\"\ndisk = 2048\n",
		    "[limits]\nmemory = \"512M\"\ndisk = \"2K\"\n",
		    "control: sizes as a string and as an integer");
	expect_toml("filesystem = { read = [\"/usr\"] }\nlimits.cpu = 5\n",
		    "[filesystem]\nread = [\"/usr\"]\n\n[limits]\ncpu = 5\n",
		    "control: sections as an inline table and a dotted key");
	expect_toml("[http]\nallow = [\"get Example.COM/v1/*\"]\nports = [8080]\n",
		    "[http]\nports = [8080]\nallow = [\"GET example.com/v1/*\"]\n",
		    "control: an http rule in canonical form");
}

#if defined(__SANITIZE_ADDRESS__)
#define HAVE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_ASAN 1
#endif
#endif

/* Bind port lists that fail after a port was parsed. They leak (bind_ports_parse leaves the
 * set's array allocated on failure, and canon.c does not release it), so they run in a child,
 * its stderr on /dev/null: its exit status says whether the errors were right (42 if not) and,
 * under AddressSanitizer (which exits 1 on a leak), whether memory leaked. */
static void test_bind_failures(void)
{
	static const char *const texts[] = { "[network]\ndeny_bind = [0]\n",
					     "[network]\nallow_bind = [\"80x\"]\n",
					     "[network]\nallow_bind = [\"1-9,*\"]\n" };
	static const int codes[] = { -ERANGE, -EINVAL, -EINVAL };
	int status = 0;

	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		int bad = 0, null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null >= 0)
			dup2(null, STDERR_FILENO);
		for (size_t i = 0; i < ELEMENTSOF(texts); i++) {
			struct loaded l = load_toml(texts[i]);
			bad |= l.r != codes[i] || strncmp(l.msg, "2:1", 3) != 0 ||
			       !strstr(l.msg, "_bind: ");
		}
		sandlock_policy_t *p = NULL;
		sandlock_policy_new(&p);
		bad |= sandlock_policy_set(p, "net_allow_bind", "80x", NULL) != -EINVAL;
		sandlock_policy_free(p);
		exit(bad ? 42 : 0); /* not _exit: LeakSanitizer runs at exit */
	}
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) != 42,
	   "bind lists failing after a port: the errnos and messages (child status %d)",
	   WIFEXITED(status) ? WEXITSTATUS(status) : -1);
#ifdef HAVE_ASAN
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "bind lists failing after a port: nothing leaks");
#else
	ok(1, "# SKIP the leak check needs a LeakSanitizer build (make SANITIZE=1)");
#endif
}

/* sandlock_policy_load_toml_file: "path:line:column: ", missing files, the size cap. */
static void test_profile_file(void)
{
	char dir[] = "/tmp/test-profile-XXXXXX", path[256];
	sandlock_policy_t *p = NULL;
	sandlock_error_t *e = NULL;

	if (!ok(mkdtemp(dir) != NULL, "mkdtemp"))
		return;
	snprintf(path, sizeof(path), "%s/bad.toml", dir);
	FILE *f = fopen(path, "w");
	fputs("# a comment\n[limits]\ncpu = 150\n", f);
	fclose(f);
	is_int(sandlock_policy_load_toml_file(path, &p, &e), -ERANGE, "file: errno");
	char want[512];
	snprintf(want, sizeof(want), "%s:3:7: max_cpu: 150 is out of range 1..100", path);
	is_str(e ? sandlock_error_message(e) : NULL, want, "file: the message is path:line:col");
	sandlock_error_free(e);
	e = NULL;
	unlink(path);

	is_int(sandlock_policy_load_toml_file(path, &p, &e), -ENOENT, "missing file: -ENOENT");
	snprintf(want, sizeof(want), "%s: No such file or directory", path);
	is_str(e ? sandlock_error_message(e) : NULL, want, "missing file: message");
	sandlock_error_free(e);
	e = NULL;

	/* The cap: "-EFBIG (a file over 1 MiB)". */
	static const size_t sizes[] = { (1u << 20) - 1, 1u << 20, (1u << 20) + 1 };
	for (size_t i = 0; i < ELEMENTSOF(sizes); i++) {
		char *buf = malloc(sizes[i]);
		memset(buf, '#', sizes[i]);
		buf[sizes[i] - 1] = '\n';
		f = fopen(path, "w");
		fwrite(buf, 1, sizes[i], f);
		fclose(f);
		free(buf);
		p = NULL;
		int r = sandlock_policy_load_toml_file(path, &p, &e);
		if (sizes[i] > (1u << 20))
			is_int(r, -EFBIG, "a file of %zu bytes (over 1 MiB): -EFBIG", sizes[i]);
		else
			is_int(r, 0, "a file of %zu bytes (a comment) loads", sizes[i]);
		sandlock_policy_free(p);
		sandlock_error_free(e);
		e = NULL;
	}
	unlink(path);
	rmdir(dir);

	is_int(sandlock_policy_load_toml_file(NULL, &p, NULL), -EINVAL, "load_toml_file(NULL)");
	is_int(sandlock_policy_load_toml("x", 1, NULL, NULL), -EINVAL, "load_toml(ret NULL)");
	is_int(sandlock_policy_load_toml(NULL, 3, &p, NULL), -EINVAL, "load_toml(NULL, 3)");
	p = NULL;
	is_int(sandlock_policy_load_toml(NULL, 0, &p, NULL), 0, "load_toml(NULL, 0): empty");
	sandlock_policy_free(p);
}

/* The parser reads exactly @len bytes: the input ends against a PROT_NONE page. */
static void test_guard_page(void)
{
	static const char *const texts[] = {
		"[limits]\ncpu = 50",
		"[filesystem]\nread = [\"/usr\"]",
		"[program]\nexec = \"/bin/true\"\nargs = [\"a\", \"b",
		"[filesystem]\nread = [\"${HOME",
	};
	long pg = sysconf(_SC_PAGESIZE);
	char *map = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);

	if (!ok(map != MAP_FAILED, "mmap two pages"))
		return;
	mprotect(map + pg, (size_t)pg, PROT_NONE);
	for (size_t i = 0; i < ELEMENTSOF(texts); i++) {
		size_t len = strlen(texts[i]);
		char *at = map + pg - len;
		memcpy(at, texts[i], len);
		sandlock_policy_t *p = NULL;
		int r = sandlock_policy_load_toml(at, len, &p, NULL);
		ok(r == (i < 2 ? 0 : -EINVAL), "guard page: input %zu gives %d", i, r);
		sandlock_policy_free(p);
	}
	const char *j = "{\"limits\":{\"cpu\":50}}";
	memcpy(map + pg - strlen(j), j, strlen(j));
	sandlock_policy_t *p = NULL;
	is_int(sandlock_policy_load_json(map + pg - strlen(j), strlen(j), &p, NULL), 0,
	       "guard page: JSON");
	sandlock_policy_free(p);
	munmap(map, 2 * (size_t)pg);
}

/* ---- 2. ${HOME} --------------------------------------------------------------------------- */

static void test_home_expansion(void)
{
	setenv("HOME", HOME_DIR, 1);

	/* Every field that expands it, both halves of a mount. */
	expect_toml("[filesystem]\nread = [\"${HOME}/a\", \"${HOME}\"]\nwrite = [\"${HOME}/w\"]\n"
		    "deny = [\"${HOME}/.ssh\"]\nmount = [\"${HOME}/v:${HOME}/h:ro\"]\n",
		    "[filesystem]\nread = [\"" HOME_DIR "/a\", \"" HOME_DIR "\"]\n"
		    "write = [\"" HOME_DIR "/w\"]\ndeny = [\"" HOME_DIR "/.ssh\"]\n"
		    "mount = [\"" HOME_DIR "/v:" HOME_DIR "/h:ro\"]\n",
		    "${HOME} in read, write, deny, both halves of mount");
	expect_toml("[program]\ncwd = \"${HOME}\"\nexec = \"${HOME}/bin/x\"\n",
		    "[program]\nexec = \"" HOME_DIR "/bin/x\"\ncwd = \"" HOME_DIR "\"\n",
		    "${HOME} in cwd and exec");
	expect_toml("[config]\nworkdir = \"${HOME}/wd\"\nfs_storage = \"${HOME}/st\"\n",
		    "[config]\nfs_storage = \"" HOME_DIR "/st\"\nworkdir = \"" HOME_DIR "/wd\"\n",
		    "${HOME} in workdir and fs_storage");
	expect_toml("[config]\nhttp_ca = \"${HOME}/ca\"\nhttp_key = \"${HOME}/key\"\n"
		    "http_inject_ca = [\"${HOME}/b\"]\nhttp_ca_out = \"${HOME}/out\"\n"
		    "[http]\nallow = [\"GET a.com/*\"]\n",
		    "[config]\nhttp_ca = \"" HOME_DIR "/ca\"\nhttp_key = \"" HOME_DIR
		    "/key\"\nhttp_inject_ca = [\"" HOME_DIR "/b\"]\nhttp_ca_out = \"" HOME_DIR
		    "/out\"\n\n[http]\nallow = [\"GET a.com/*\"]\n",
		    "${HOME} in http_ca, http_key, http_inject_ca, http_ca_out");
	expect_toml("[filesystem]\nread = [\"/x/${HOME}/y${HOME}\"]\n",
		    "[filesystem]\nread = [\"/x/" HOME_DIR "/y" HOME_DIR "\"]\n",
		    "${HOME} twice and in the middle");

	/* Kept literally where the $ belongs to the program (the control for expansion). */
	expect_toml("[program]\nargs = [\"${HOME}\", \"$X\", \"~\"]\nenv = { A = \"${HOME}\", "
		    "B = \"${OTHER}$\" }\n",
		    "[program]\nargs = [\"${HOME}\", \"$X\", \"~\"]\nenv = { A = \"${HOME}\", "
		    "B = \"${OTHER}$\" }\n",
		    "no expansion in [program] args and env");
	/* Not expanded: refused as the name it literally is. */
	expect_error("[syscalls]\nextra_deny = [\"$x\"]\n", -EINVAL,
		     "2:1: extra_deny_syscalls: unknown syscall $x",
		     "no expansion in syscall names");
	expect_toml("[filesystem]\nread = [\"/a/~b\"]\n[program]\ncwd = \"./~c\"\n",
		    "[program]\ncwd = \"./~c\"\n\n[filesystem]\nread = [\"/a/~b\"]\n",
		    "a ~ that is not leading is literal");
}

/* The strict grammar: every other use of '$' and a leading '~' are errors. */
static void test_home_grammar(void)
{
	static const struct {
		const char *path, *msg;
	} bad[] = {
		{ "${OTHER}", "unknown variable '${OTHER}' (the only one is ${HOME})" },
		{ "/x/${USER}", "unknown variable '${USER}' (the only one is ${HOME})" },
		{ "${home}", "unknown variable '${home}' (the only one is ${HOME})" },
		{ "${}", "malformed variable name '${}'" },
		{ "${HO-ME}", "malformed variable name '${HO-ME}'" },
		{ "${1HOME}", "malformed variable name '${1HOME}'" },
		{ "${HOME", "unterminated '${'" },
		{ "/a/${", "unterminated '${'" },
		{ "/a$b", "a '$' can only start ${HOME}" },
		{ "/a/$", "a '$' can only start ${HOME}" },
		{ "$HOME", "a '$' can only start ${HOME}" },
		{ "${HOME}/$", "a '$' can only start ${HOME}" },
		{ "~", "a leading '~' is not expanded: write ${HOME}" },
		{ "~/x", "a leading '~' is not expanded: write ${HOME}" },
		{ "~user/x", "a leading '~' is not expanded: write ${HOME}" },
	};
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		char text[256], want[256];
		snprintf(text, sizeof(text), "[filesystem]\nread = [\"%s\"]\n", bad[i].path);
		snprintf(want, sizeof(want), "2:9: [filesystem] read: %s", bad[i].msg);
		expect_error(text, -EINVAL, want, bad[i].path);
	}
	/* The same in the other kinds of field. */
	expect_error("[program]\nexec = \"${OTHER}/x\"\n", -EINVAL,
		     "2:8: [program] exec: unknown variable '${OTHER}' (the only one is ${HOME})",
		     "unknown variable in exec");
	expect_error("[config]\nfs_storage = \"~/.cache\"\n", -EINVAL,
		     "2:14: [config] fs_storage: a leading '~' is not expanded: write ${HOME}",
		     "leading ~ in fs_storage");
	expect_error("[filesystem]\nmount = [\"/v:${HOME\"]\n", -EINVAL,
		     "2:10: [filesystem] mount: unterminated '${'", "unterminated in a mount");
	expect_error("[filesystem]\nmount = [\"/v:~/x\"]\n", -EINVAL,
		     "2:10: [filesystem] mount: a leading '~' is not expanded: write ${HOME}",
		     "leading ~ in the host half of a mount");
}

static void test_home_chroot(void)
{
	static const char *const jail[][3] = {
		{ "[filesystem]\nchroot = \"/jail\"\nread = [\"${HOME}/a\"]\n", "3:9",
		  "[filesystem] read" },
		{ "[filesystem]\nchroot = \"/jail\"\nwrite = [\"${HOME}\"]\n", "3:10",
		  "[filesystem] write" },
		{ "[filesystem]\nchroot = \"/jail\"\ndeny = [\"${HOME}/.ssh\"]\n", "3:9",
		  "[filesystem] deny" },
		{ "[program]\ncwd = \"${HOME}\"\n[filesystem]\nchroot = \"/jail\"\n", "2:7",
		  "[program] cwd" },
		{ "[program]\nexec = \"${HOME}/x\"\n[filesystem]\nchroot = \"/jail\"\n", "2:8",
		  "[program] exec" },
		{ "[filesystem]\nchroot = \"/jail\"\nmount = [\"${HOME}/v:/h\"]\n", "3:10",
		  "[filesystem] mount" },
		{ "[config]\nworkdir = \"${HOME}\"\n[filesystem]\nchroot = \"/jail\"\n", "2:11",
		  "[config] workdir" },
	};
	for (size_t i = 0; i < ELEMENTSOF(jail); i++) {
		char want[256];
		snprintf(want, sizeof(want),
			 "%s: %s: ${HOME} is an error in a profile with a chroot: write the path "
			 "in full",
			 jail[i][1], jail[i][2]);
		expect_error(jail[i][0], -EINVAL, want, jail[i][2]);
	}
	/* "Under [filesystem].chroot, ${HOME} in a path field is an error": host paths too. */
	static const char *const host[][3] = {
		{ "[filesystem]\nchroot = \"/jail\"\nmount = [\"/v:${HOME}/h\"]\n", "3:10",
		  "[filesystem] mount" },
		{ "[config]\nfs_storage = \"${HOME}/st\"\n[filesystem]\nchroot = \"/jail\"\n",
		  "2:14", "[config] fs_storage" },
		{ "[filesystem]\nchroot = \"${HOME}/rootfs\"\n", "2:10", "[filesystem] chroot" },
	};
	for (size_t i = 0; i < ELEMENTSOF(host); i++) {
		char want[256];
		snprintf(want, sizeof(want),
			 "%s: %s: ${HOME} is an error in a profile with a chroot: write the path "
			 "in full",
			 host[i][1], host[i][2]);
		expect_error(host[i][0], -EINVAL, want, host[i][2]);
	}
	/* Controls: the same host paths written out load. */
	expect_toml("[filesystem]\nchroot = \"/jail\"\nmount = [\"/v:" HOME_DIR "/h\", "
		    "\"/r:" HOME_DIR "/r:ro\"]\nread = [\"/usr\"]\n",
		    "[filesystem]\nread = [\"/usr\"]\nchroot = \"/jail\"\nmount = [\"/v:" HOME_DIR
		    "/h\", \"/r:" HOME_DIR "/r:ro\"]\n",
		    "a mount under chroot, written out");
	expect_toml("[config]\nfs_storage = \"" HOME_DIR
		    "/st\"\n[filesystem]\nchroot = \"/jail\"\n",
		    "[config]\nfs_storage = \"" HOME_DIR "/st\"\n\n"
		    "[filesystem]\nchroot = \"/jail\"\n",
		    "fs_storage under chroot, written out");
	expect_toml("[program]\ncwd = \"/home/u\"\n[filesystem]\nchroot = \"/jail\"\n",
		    "[program]\ncwd = \"/home/u\"\n\n[filesystem]\nchroot = \"/jail\"\n",
		    "a jail path without ${HOME} under chroot");
	expect_toml("[filesystem]\nread = [\"${HOME}/a\"]\n",
		    "[filesystem]\nread = [\"" HOME_DIR "/a\"]\n",
		    "control: the same read without a chroot expands");
}

/* What ${HOME} expands to with @home in the environment (NULL: unset). */
static struct loaded home_with(const char *home)
{
	if (home)
		setenv("HOME", home, 1);
	else
		unsetenv("HOME");
	struct loaded l = load_toml("[filesystem]\nread = [\"${HOME}/x\"]\n");
	if (l.r == 0) {
		char *d = dump_toml(l.p);
		snprintf(l.msg, sizeof(l.msg), "%s", d ? d : "");
		free(d);
		sandlock_policy_free(l.p);
	}
	return l;
}

/* In a child that runs as @uid with HOME unset: the load's errno and message, through a pipe. */
static int home_in_child(uid_t uid, gid_t gid, struct loaded *out)
{
	int fds[2];

	if (pipe(fds) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		if (setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
			_exit(3);
		struct loaded l = home_with(NULL);
		struct loaded c = load_toml("[filesystem]\nread = [\"/usr\"]\n");
		char buf[1200];
		int n = snprintf(buf, sizeof(buf), "%d %d %s", l.r, c.r, l.msg);
		if (write(fds[1], buf, (size_t)n) != n)
			_exit(4);
		_exit(0);
	}
	close(fds[1]);
	char buf[1200] = "";
	ssize_t n = read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	int status = 0;
	waitpid(pid, &status, 0);
	if (n <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -EIO;
	buf[n] = '\0';
	int control = -1, used = 0;
	if (sscanf(buf, "%d %d %n", &out->r, &control, &used) < 2)
		return -EIO;
	snprintf(out->msg, sizeof(out->msg), "%s", buf + used);
	return control;
}

static void test_home_rule(void)
{
	static const char *const unusable[] = { "/", "relative/home", "", NULL };
	static const char *const root_aliases[] = { "//", "/.", "/tmp/..", "/./" };
	struct passwd *pw = getpwuid(getuid());
	int pw_usable = pw && pw->pw_dir[0] == '/' && strcmp(pw->pw_dir, "/") != 0;
	char want[1200];

	struct loaded l = home_with("/srv/me");
	is_str(l.msg, "[filesystem]\nread = [\"/srv/me/x\"]\n", "HOME=/srv/me: $HOME wins");
	snprintf(want, sizeof(want), "[filesystem]\nread = [\"%s/x\"]\n", pw ? pw->pw_dir : "?");
	for (size_t i = 0; i < ELEMENTSOF(unusable); i++) {
		const char *label = unusable[i] ? unusable[i] : "(unset)";
		l = home_with(unusable[i]);
		is_int(l.r, pw_usable ? 0 : -ENOENT, "HOME=%s: falls back to the passwd entry",
		       label);
		if (pw_usable)
			is_str(l.msg, want, "  expands to getpwuid(getuid())->pw_dir (%s)",
			       pw->pw_dir);
	}
	/* The root under another spelling is the root: ${HOME} would grant everything. */
	for (size_t i = 0; i < ELEMENTSOF(root_aliases) && pw_usable; i++) {
		l = home_with(root_aliases[i]);
		is_str(l.r == 0 ? l.msg : NULL, want,
		       "HOME=%s (the root) falls back to the passwd entry", root_aliases[i]);
	}
	setenv("HOME", HOME_DIR, 1);
}

/* Neither source usable: a child with HOME unset, as a uid whose passwd home is "/" and as a
 * uid with no passwd entry; the control, a uid with a home under /home. Needs root. */
static void test_home_none(void)
{
	struct {
		uid_t uid;
		int code;
		char what[300];
	} v[3] = { { (uid_t)-1, -ENOENT, "no passwd entry" },
		   { (uid_t)-1, -ENOENT, "passwd home \"/\"" },
		   { (uid_t)-1, 0, "" } };
	char want[1200];

	if (geteuid() != 0) {
		ok(1, "# SKIP no usable home: changing uid needs root (euid %d)", (int)geteuid());
		return;
	}
	for (uid_t u = 61000; u < 62000 && v[0].uid == (uid_t)-1; u++)
		if (!getpwuid(u))
			v[0].uid = u;
	setpwent();
	for (struct passwd *e; (e = getpwent());) {
		if (e->pw_uid != 0 && v[1].uid == (uid_t)-1 && strcmp(e->pw_dir, "/") == 0)
			v[1].uid = e->pw_uid;
		if (e->pw_uid != 0 && !v[2].what[0] && strncmp(e->pw_dir, "/home/", 6) == 0) {
			v[2].uid = e->pw_uid;
			snprintf(v[2].what, sizeof(v[2].what), "%s", e->pw_dir);
		}
	}
	endpwent();
	for (size_t i = 0; i < ELEMENTSOF(v); i++) {
		struct loaded c;
		if (v[i].uid == (uid_t)-1) {
			ok(1, "# SKIP no uid with %s on this system", v[i].what);
			continue;
		}
		int ctl = home_in_child(v[i].uid, v[i].uid, &c);
		if (v[i].code)
			snprintf(want, sizeof(want),
				 "2:9: [filesystem] read: ${HOME}: no usable home directory "
				 "($HOME and the passwd entry)");
		else
			snprintf(want, sizeof(want), "[filesystem]\nread = [\"%s/x\"]\n",
				 v[i].what);
		is_int(c.r, v[i].code, "uid %d (%s), HOME unset: %d", (int)v[i].uid, v[i].what,
		       v[i].code);
		is_str(c.msg, want, "  the message (or the dump)");
		is_int(ctl, 0, "  control: a profile without ${HOME} loads in the same child");
	}
}

/* ---- 3. round trips over the corpus ------------------------------------------------------- */

static int has_runtime_fields(const sandlock_policy_t *p)
{
	for (size_t i = 0; i < schema_n_fields; i++)
		if ((schema_fields[i].flags & F_RUNTIME) && schema_is_set(p, &schema_fields[i]))
			return 1;
	return 0;
}

/* load -> dump -> load -> dump is stable in each format, and the formats agree. */
static void roundtrip(const char *name, const sandlock_policy_t *p)
{
	char *t1 = dump_toml(p), *j1 = dump_json(p), *t2 = NULL, *j2 = NULL, *t3 = NULL;
	char *j3 = NULL;

	if (!ok(t1 && j1, "%s: dumps", name))
		goto out;
	struct loaded a = load_toml(t1);
	if (ok(a.r == 0, "%s: the TOML dump loads", name)) {
		t2 = dump_toml(a.p);
		is_str(t2, t1, "%s: TOML load -> dump -> load -> dump is identical", name);
		if (!has_runtime_fields(p)) {
			j3 = dump_json(a.p);
			is_str(j3, j1, "%s: the JSON of the reloaded TOML is the first JSON", name);
		}
		sandlock_policy_free(a.p);
	} else {
		diag("  %s\n%s", a.msg, t1);
	}
	struct loaded b = load_json(j1);
	if (ok(b.r == 0, "%s: the JSON dump loads", name)) {
		j2 = dump_json(b.p);
		is_str(j2, j1, "%s: JSON load -> dump -> load -> dump is identical", name);
		t3 = dump_toml(b.p);
		is_str(t3, t1, "%s: TOML -> JSON -> policy -> TOML is the first TOML dump", name);
		sandlock_policy_free(b.p);
	} else {
		diag("  %s\n%s", b.msg, j1);
	}
out:
	free(t1);
	free(j1);
	free(t2);
	free(j2);
	free(t3);
	free(j3);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_corpus(void)
{
	int covered[64] = { 0 };
	char *names[128];
	size_t n = 0, n_toml = 0;
	DIR *d = opendir(PROFILES_DIR);

	setenv("HOME", HOME_DIR, 1);
	_Static_assert(ELEMENTSOF(covered) >= 50, "covered[] too small");
	if (!ok(d != NULL, "open %s (run from the source root)", PROFILES_DIR))
		return;
	ok(schema_n_fields <= ELEMENTSOF(covered), "schema has %zu fields", schema_n_fields);
	for (struct dirent *de; (de = readdir(d)) && n < ELEMENTSOF(names);) {
		size_t len = strlen(de->d_name);
		if (de->d_name[0] != '.' && len > 5 &&
		    (strcmp(de->d_name + len - 5, ".toml") == 0 ||
		     strcmp(de->d_name + len - 5, ".json") == 0))
			names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		char path[512];
		int is_toml = strstr(names[i], ".toml") != NULL;
		sandlock_policy_t *p = NULL;
		sandlock_error_t *e = NULL;
		int r;

		snprintf(path, sizeof(path), "%s/%s", PROFILES_DIR, names[i]);
		if (is_toml) {
			n_toml++;
			r = sandlock_policy_load_toml_file(path, &p, &e);
		} else {
			size_t len = 0;
			char *text = read_file(path, &len);
			r = text ? sandlock_policy_load_json(text, len, &p, &e) : -errno;
			free(text);
		}
		if (!ok(r == 0, "%s loads", names[i])) {
			diag("  %d: %s", r, e ? sandlock_error_message(e) : "");
			sandlock_error_free(e);
			free(names[i]);
			continue;
		}
		for (size_t f = 0; f < schema_n_fields && f < ELEMENTSOF(covered); f++)
			if (schema_is_set(p, &schema_fields[f]))
				covered[f] = 1;
		roundtrip(names[i], p);
		sandlock_policy_free(p);
		free(names[i]);
	}
	ok(n_toml >= 8, "at least 8 TOML profiles in the corpus (%zu)", n_toml);
	for (size_t f = 0; f < schema_n_fields && f < ELEMENTSOF(covered); f++)
		ok(covered[f], "the corpus sets %s.%s (%s)", schema_fields[f].section,
		   schema_fields[f].key, schema_fields[f].name);
}

static void test_defaults(void)
{
	sandlock_policy_t *p = NULL;

	expect_toml("[protections]\nallow_degraded = [\"fs-refer\"]\ndisable = [\"FsRefer\"]\n",
		    "[protections]\ndisable = [\"fs-refer\"]\n",
		    "a protection in both lists: the last word wins");
	expect_toml("[limits]\ngpu_devices = [3, 1, 3]\n", "[limits]\ngpu_devices = [1, 3]\n",
		    "gpu_devices: duplicates dropped, sorted");
	expect_toml("[http]\nports = [\"1-65535\", 80]\n[limits]\ngpu_devices = [\"0-1023\"]\n",
		    "[http]\nports = [\"1-65535\"]\n\n[limits]\ngpu_devices = [\"0-1023\"]\n",
		    "the widest ranges load (in linear time) and dump as ranges");
	expect_toml("[http]\nports = [80, 81, 82, 443, 444, 8080]\n",
		    "[http]\nports = [\"80-82\", 443, 444, 8080]\n",
		    "three or more consecutive ports dump as a range");
	is_int(sandlock_policy_new(&p), 0, "policy_new");
	char *t = dump_toml(p), *j = dump_json(p);
	is_str(t, "", "a fresh policy dumps as empty TOML");
	is_str(j, "{}", "a fresh policy dumps as {}");
	free(t);
	free(j);
	sandlock_policy_free(p);

	expect_toml("", "", "an empty profile dumps as empty");
	expect_toml("# only a comment\n[filesystem]\n[limits]\n", "",
		    "empty sections dump as nothing");
	expect_toml("[filesystem]\non_exit = \"commit\"\non_error = \"abort\"\n", "",
		    "on_exit = commit and on_error = abort (the defaults) dump as nothing");
	expect_toml("[program]\nclean_env = false\nno_supervisor = false\n[network]\n"
		    "port_remap = false\nallow = []\n[syscalls]\nextra_deny = []\n",
		    "", "false booleans and empty string lists dump as nothing");
	expect_toml("[filesystem]\non_exit = \"abort\"\non_error = \"commit\"\n",
		    "[filesystem]\non_exit = \"abort\"\non_error = \"commit\"\n",
		    "control: swapped actions are not defaults");
	expect_toml("[filesystem]\non_exit = \"defer\"\n", "[filesystem]\non_exit = \"defer\"\n",
		    "on_exit = defer");

	struct loaded l = load_json("{\"runtime\":{\"control_socket\":true}}");
	char *jj = l.r == 0 ? dump_json(l.p) : NULL;
	is_str(jj, "{}", "control_socket = true (the default) dumps as nothing");
	free(jj);
	sandlock_policy_free(l.p);
}

/* ---- 4. JSON documents -------------------------------------------------------------------- */

static void test_json(void)
{
	expect_json_dump("{\"runtime\":{\"name\":\"box\",\"control_socket\":false,\"credentials\":"
			 "[\"tok=env:TOKEN\",\"f=file:/run/s\",\"d=fd:3\"],\"http_auth\":"
			 "[\"get A.com/* bearer tok\",\"* b.com/x header:X-Key f add-only\"]},"
			 "\"http\":{\"allow\":[\"GET a.com/*\"]}}",
			 "{\"http\":{\"allow\":[\"GET a.com/*\"]},\"runtime\":{\"name\":\"box\","
			 "\"control_socket\":false,\"credentials\":[\"tok=env:TOKEN\","
			 "\"f=file:/run/s\",\"d=fd:3\"],\"http_auth\":[\"GET a.com/* bearer tok\","
			 "\"* b.com/x header:X-Key f add-only\"]}}",
			 "[http]\nallow = [\"GET a.com/*\"]\n",
			 "the runtime section (TOML leaves it out)");
	expect_json_dump("{\"limits\":{\"memory\":null,\"gpu_devices\":null,\"cpu_cores\":null},"
			 "\"program\":{\"exec\":null,\"env\":null,\"uid\":null},\"runtime\":"
			 "{\"name\":null}}",
			 "{}", "", "null is unset");
	expect_json_dump("{\"limits\":{\"gpu_devices\":[]}}", "{\"limits\":{\"gpu_devices\":[]}}",
			 "[limits]\ngpu_devices = []\n", "gpu_devices: [] differs from unset");
	expect_json_dump("{\"limits\":{}}", "{}", "", "control: gpu_devices unset");
	expect_json_dump("{\"http\":{\"ports\":[]}}", "{}", "",
			 "http ports: [] is the default, as the SDK's () (unlike gpu_devices)");
	expect_json_dump("{\"http\":{\"ports\":[8080]}}", "{\"http\":{\"ports\":[8080]}}",
			 "[http]\nports = [8080]\n", "control: a port list is kept");
	expect_json_dump("{\"limits\":{\"memory\":536870912,\"disk\":\"2G\",\"cpu_cores\":"
			 "[2,0]},\"program\":{\"env\":{\"B\":\"2\",\"A\":\"1\"}}}",
			 "{\"program\":{\"env\":{\"B\":\"2\",\"A\":\"1\"}},\"limits\":{\"memory\":"
			 "\"512M\",\"disk\":\"2G\",\"cpu_cores\":[0,2]}}",
			 NULL, "values in canonical form, sections in schema order");
	expect_json_dump("{}", "{}", "", "an empty document");
}

/* ---- 5. setters --------------------------------------------------------------------------- */

struct set_case {
	const char *field, *value, *toml, *json;
};

/* One field on a fresh policy: by section.key or by Python name, each type of the schema. */
static const struct set_case set_cases[] = {
	{ "config.workdir", "/srv", "[config]\nworkdir = \"/srv\"\n", NULL },
	{ "http_ca", "/ca.pem", "[config]\nhttp_ca = \"/ca.pem\"\n", NULL },
	{ "config.http_key", "/ca.key", "[config]\nhttp_key = \"/ca.key\"\n", NULL },
	{ "http_inject_ca", "/b.pem", "[config]\nhttp_inject_ca = [\"/b.pem\"]\n", NULL },
	{ "http_ca_out", "/o.pem", "[config]\nhttp_ca_out = \"/o.pem\"\n", NULL },
	{ "fs_storage", "/var/st", "[config]\nfs_storage = \"/var/st\"\n", NULL },
	{ "filesystem.read", "/usr", "[filesystem]\nread = [\"/usr\"]\n", NULL },
	{ "fs_writable", "/tmp", "[filesystem]\nwrite = [\"/tmp\"]\n", NULL },
	{ "fs_denied", "/etc/shadow", "[filesystem]\ndeny = [\"/etc/shadow\"]\n", NULL },
	{ "args", "-l", "[program]\nargs = [\"-l\"]\n", NULL },
	{ "program.cwd", "/srv", "[program]\ncwd = \"/srv\"\n", NULL },
	{ "uid", "0", "[program]\nuid = 0\n", NULL },
	{ "program.gid", "4294967294", "[program]\ngid = 4294967294\n", NULL },
	{ "syscalls.extra_deny", "ptrace", "[syscalls]\nextra_deny = [\"ptrace\"]\n", NULL },
	{ "extra_allow_syscalls", "sysv_ipc", "[syscalls]\nextra_allow = [\"sysv_ipc\"]\n", NULL },
	{ "clean_env", "true", "[program]\nclean_env = true\n", NULL },
	{ "program.no_coredump", "yes", "[program]\nno_coredump = true\n", NULL },
	{ "no_huge_pages", "1", "[program]\nno_huge_pages = true\n", NULL },
	{ "no_supervisor", "true", "[program]\nno_supervisor = true\n", NULL },
	{ "deterministic_dirs", "true", "[determinism]\ndeterministic_dirs = true\n", NULL },
	{ "no_randomize_memory", "yes", "[determinism]\nno_randomize_memory = true\n", NULL },
	{ "port_remap", "1", "[network]\nport_remap = true\n", NULL },
	{ "clean_env", "false", "", NULL },
	{ "control_socket", "false", "", "{\"runtime\":{\"control_socket\":false}}" },
	{ "runtime.control_socket", "true", "", "{}" },
	{ "max_processes", "64", "[limits]\nprocesses = 64\n", NULL },
	{ "limits.cpu", "50", "[limits]\ncpu = 50\n", NULL },
	{ "num_cpus", "4096", "[limits]\nnum_cpus = 4096\n", NULL },
	{ "determinism.random_seed", "0", "[determinism]\nrandom_seed = 0\n", NULL },
	{ "limits.memory", "512M", "[limits]\nmemory = \"512M\"\n", NULL },
	{ "max_disk", "1048576", "[limits]\ndisk = \"1M\"\n", NULL },
	{ "max_open_files", "256", "[limits]\nopen_files = 256\n", NULL },
	{ "time_start", "2026-01-01T01:00:00+01:00",
	  "[determinism]\ntime_start = \"2026-01-01T00:00:00Z\"\n", NULL },
	{ "determinism.time_start", "2025-12-31T19:00:00-05:00",
	  "[determinism]\ntime_start = \"2026-01-01T00:00:00Z\"\n", NULL },
	{ "on_exit", "keep", "[filesystem]\non_exit = \"keep\"\n", NULL },
	{ "on_error", "defer", "[filesystem]\non_error = \"defer\"\n", NULL },
	{ "filesystem.on_error", "abort", "", NULL },
	{ "private_tmp", "true", "[filesystem]\nprivate_tmp = true\n", NULL },
	{ "env", "K=V", "[program]\nenv = { K = \"V\" }\n", NULL },
	{ "program.env", "K=a=b", "[program]\nenv = { K = \"a=b\" }\n", NULL },
	{ "fs_mount", "/w:/h:rw", "[filesystem]\nmount = [\"/w:/h\"]\n", NULL },
	{ "filesystem.mount", "/w:/h:ro", "[filesystem]\nmount = [\"/w:/h:ro\"]\n", NULL },
	{ "net_allow", "Example.COM:443", "[network]\nallow = [\"example.com:443\"]\n", NULL },
	{ "network.deny", "10.0.0.0/8", "[network]\ndeny = [\"10.0.0.0/8\"]\n", NULL },
	{ "net_allow_bind", "8080", "[network]\nallow_bind = [\"8080\"]\n", NULL },
	{ "network.allow_bind", "*", "[network]\nallow_bind = [\"*\"]\n", NULL },
	{ "net_deny_bind", "22,23", "[network]\ndeny_bind = [\"22,23\"]\n", NULL },
	{ "http_allow", "get a.com/x", "[http]\nallow = [\"GET a.com/x\"]\n", NULL },
	{ "http.deny", "* */admin/*", "[http]\ndeny = [\"* */admin/*\"]\n", NULL },
	{ "http_ports", "80,8080", "[http]\nports = [80, 8080]\n", NULL },
	{ "gpu_devices", "0,2", "[limits]\ngpu_devices = [0, 2]\n", NULL },
	{ "limits.gpu_devices", "all", "[limits]\ngpu_devices = []\n", NULL },
	{ "cpu_cores", "0-2", "[limits]\ncpu_cores = [0, 1, 2]\n", NULL },
	{ "allow_degraded", "FsRefer", "[protections]\nallow_degraded = [\"fs-refer\"]\n", NULL },
	{ "protections.disable", "net-tcp", "[protections]\ndisable = [\"net-tcp\"]\n", NULL },
	{ "allow_degraded", "all",
	  "[protections]\nallow_degraded = [\"fs-refer\", \"fs-truncate\", \"net-tcp\", "
	  "\"fs-ioctl-dev\", \"signal-scope\", \"abstract-unix-socket-scope\"]\n",
	  NULL },
	{ "allow_degraded", "signal-scope,FsRefer",
	  "[protections]\nallow_degraded = [\"fs-refer\", \"signal-scope\"]\n", NULL },
	{ "name", "box", "", "{\"runtime\":{\"name\":\"box\"}}" },
	{ "credentials", "tok=env:TOKEN", "",
	  "{\"runtime\":{\"credentials\":[\"tok=env:TOKEN\"]}}" },
	{ "runtime.http_auth", "get a.com/* bearer tok", "",
	  "{\"runtime\":{\"http_auth\":[\"GET a.com/* bearer tok\"]}}" },
	{ "image", "docker://alpine", "", "{\"runtime\":{\"image\":\"docker://alpine\"}}" },
	{ "exec", "/bin/ls", "[program]\nexec = \"/bin/ls\"\n", NULL },
	{ "chroot", "/jail", "[filesystem]\nchroot = \"/jail\"\n", NULL },
};

/* The first case above that sets @f (for the "not supported yet" checks). */
static const struct set_case *case_for(const struct field *f)
{
	for (size_t i = 0; i < ELEMENTSOF(set_cases); i++)
		if (schema_find(set_cases[i].field) == f &&
		    (set_cases[i].toml[0] || strcmp(set_cases[i].json, "{}") != 0))
			return &set_cases[i];
	return NULL;
}

static int set(sandlock_policy_t *p, const char *field, const char *value, char *msg, size_t n)
{
	sandlock_error_t *e = NULL;
	int r = sandlock_policy_set(p, field, value, &e);

	if (msg)
		snprintf(msg, n, "%s", r < 0 && e ? sandlock_error_message(e) : "");
	if (r < 0 && e && sandlock_error_code(e) != r && msg)
		snprintf(msg, n, "(error code %d differs from %d)", sandlock_error_code(e), r);
	sandlock_error_free(e);
	return r;
}

static void test_set_types(void)
{
	for (size_t i = 0; i < ELEMENTSOF(set_cases); i++) {
		const struct set_case *c = &set_cases[i];
		sandlock_policy_t *p = NULL;
		char msg[512];

		sandlock_policy_new(&p);
		int r = set(p, c->field, c->value, msg, sizeof(msg));
		if (!ok(r == 0, "set %s = \"%s\"", c->field, c->value)) {
			diag("  %d: %s", r, msg);
			sandlock_policy_free(p);
			continue;
		}
		char *t = dump_toml(p), *j = dump_json(p);
		is_str(t, c->toml, "  TOML dump");
		if (c->json)
			is_str(j, c->json, "  JSON dump");
		free(t);
		free(j);
		sandlock_policy_free(p);
	}
	/* Every field of the schema went through a setter above. */
	for (size_t i = 0; i < schema_n_fields; i++)
		if (!case_for(&schema_fields[i]))
			ok(0, "%s has a setter case that sets it", schema_fields[i].name);
	ok(1, "every field has a setter case");
}

static void test_set_semantics(void)
{
	sandlock_policy_t *p = NULL;
	char cwd[4096];

	sandlock_policy_new(&p);
	/* Scalars are replaced, lists appended (duplicates once), env by name. */
	set(p, "max_memory", "512M", NULL, 0);
	set(p, "limits.memory", "1G", NULL, 0);
	set(p, "fs_readable", "/usr", NULL, 0);
	set(p, "filesystem.read", "/lib", NULL, 0);
	set(p, "fs_readable", "/usr", NULL, 0);
	set(p, "env", "A=1", NULL, 0);
	set(p, "env", "B=2", NULL, 0);
	set(p, "program.env", "A=3", NULL, 0);
	set(p, "gpu_devices", "0,2", NULL, 0);
	set(p, "gpu_devices", "3", NULL, 0);
	set(p, "cpu_cores", "1", NULL, 0);
	set(p, "cpu_cores", "0", NULL, 0);
	set(p, "args", "-a", NULL, 0);
	set(p, "args", "-a", NULL, 0);
	char *t = dump_toml(p);
	is_str(t,
	       "[program]\nargs = [\"-a\", \"-a\"]\nenv = { A = \"3\", B = \"2\" }\n\n"
	       "[filesystem]\nread = [\"/usr\", \"/lib\"]\n\n"
	       "[limits]\nmemory = \"1G\"\ngpu_devices = [0, 2, 3]\ncpu_cores = [0, 1]\n",
	       "scalar replaced, lists appended, a grant once, args kept twice, env by name");
	free(t);
	sandlock_policy_free(p);

	/* A relative grant is made absolute against the cwd at the call. */
	sandlock_policy_new(&p);
	if (getcwd(cwd, sizeof(cwd)) && chdir("/tmp") == 0) {
		set(p, "fs_readable", "rel/dir", NULL, 0);
		set(p, "filesystem.write", "w", NULL, 0);
		set(p, "fs_denied", "./d", NULL, 0);
		if (chdir(cwd) < 0)
			abort();
		t = dump_toml(p);
		is_str(t,
		       "[filesystem]\nread = [\"/tmp/rel/dir\"]\nwrite = [\"/tmp/w\"]\ndeny = "
		       "[\"/tmp/./d\"]\n",
		       "relative grants made absolute against the cwd");
		free(t);
	}
	sandlock_policy_free(p);
}

static void test_set_errors(void)
{
	sandlock_policy_t *p = NULL;
	char msg[512];

	/* "all" appended to a list of GPUs: every GPU. */
	sandlock_policy_new(&p);
	set(p, "gpu_devices", "0,2", NULL, 0);
	is_int(set(p, "gpu_devices", "all", NULL, 0), 0, "gpu_devices \"all\" after \"0,2\"");
	char *t = dump_toml(p);
	is_str(t, "[limits]\ngpu_devices = []\n", "\"all\" after a list exposes every GPU");
	free(t);

	/* Every accepted value survives a round trip: 2^63 would dump as a negative JSON number
	 * and a TOML integer beyond 64 bits signed. */
	is_int(set(p, "max_open_files", "9223372036854775808", msg, sizeof(msg)), -ERANGE,
	       "max_open_files 2^63: -ERANGE");
	is_str(msg, "max_open_files: 9223372036854775808 is out of range 1..9223372036854775807",
	       "  the message");
	sandlock_policy_free(p);
	expect_toml("[limits]\nopen_files = 9223372036854775807\n",
		    "[limits]\nopen_files = 9223372036854775807\n",
		    "control: max_open_files 2^63 - 1 from a profile");

	/* Errors: -EINVAL naming the field; NULL arguments. */
	sandlock_policy_new(&p);
	is_int(set(p, "nonsense", "1", msg, sizeof(msg)), -EINVAL, "unknown field: -EINVAL");
	is_str(msg, "unknown field 'nonsense'", "  the message names it");
	is_int(set(p, "limits.nonsense", "1", msg, sizeof(msg)), -EINVAL,
	       "unknown section.key: -EINVAL");
	is_str(msg, "unknown field 'limits.nonsense'", "  the message names it");
	is_int(set(p, "memory", "1G", msg, sizeof(msg)), -EINVAL,
	       "a TOML key without its section is not a field");
	is_int(set(p, "max_cpu", "150", msg, sizeof(msg)), -ERANGE, "max_cpu 150: -ERANGE");
	is_str(msg, "max_cpu: 150 is out of range 1..100", "  the message");
	is_int(set(p, "env", "=x", msg, sizeof(msg)), -EINVAL, "env \"=x\": -EINVAL");
	is_str(msg, "env: expected NAME=VALUE", "  the message");
	is_int(sandlock_policy_set(NULL, "env", "A=B", NULL), -EINVAL, "set(NULL policy)");
	is_int(sandlock_policy_set(p, NULL, "x", NULL), -EINVAL, "set(NULL field)");
	is_int(sandlock_policy_set(p, "env", NULL, NULL), -EINVAL, "set(NULL value)");
	sandlock_policy_free(p);
}

/* The policy is unchanged after a failed set: the dumps (JSON has the runtime fields) before
 * and after are equal. */
static void test_set_failure_unchanged(void)
{
	static const char *const fill[][2] = {
		{ "fs_readable", "/usr" },
		{ "max_memory", "1G" },
		{ "gpu_devices", "1,3" },
		{ "cpu_cores", "0" },
		{ "net_allow_bind", "8080" },
		{ "env", "A=1" },
		{ "http_ports", "80" },
		{ "time_start", "1970-01-01T00:00:00Z" },
		{ "name", "box" },
		{ "on_exit", "keep" },
		{ "credentials", "t=env:T" },
		{ "allow_degraded", "fs-refer" },
		{ "net_allow", "a.com:443" },
		{ "uid", "1" },
		{ "max_cpu", "10" },
		{ "exec", "/bin/true" },
	};
	static const char *const bad[][3] = {
		{ "max_cpu", "150", "-ERANGE" },
		{ "max_cpu", "ten", "" },
		{ "gpu_devices", "0,2000", "" },
		{ "gpu_devices", "5,x", "" },
		{ "cpu_cores", "2,99999", "" },
		{ "http_ports", "8080,0", "" },
		{ "net_allow_bind", "*", "" },
		{ "net_allow", "bad host", "" },
		{ "env", "=x", "" },
		{ "env", "noequals", "" },
		{ "time_start", "2026-01-01T00:00:00", "" },
		{ "on_exit", "sometimes", "" },
		{ "name", "a/b", "" },
		{ "name", "", "" },
		{ "uid", "-1", "" },
		{ "uid", "4294967295", "" },
		{ "allow_degraded", "nope", "" },
		{ "fs_readable", "", "" },
		{ "exec", "", "" },
		{ "max_memory", "12Q", "" },
		{ "max_open_files", "0", "" },
		{ "clean_env", "maybe", "" },
		{ "credentials", "t=nope:x", "" },
		{ "http_allow", "GET", "" },
		{ "fs_mount", "rel:/h", "" },
		{ "nonsense", "1", "" },
	};
	sandlock_policy_t *p = NULL;

	sandlock_policy_new(&p);
	for (size_t i = 0; i < ELEMENTSOF(fill); i++)
		if (set(p, fill[i][0], fill[i][1], NULL, 0) < 0)
			ok(0, "fill %s", fill[i][0]);
	char *before = dump_json(p);
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		char msg[512];
		int r = set(p, bad[i][0], bad[i][1], msg, sizeof(msg));
		char *after = dump_json(p);
		ok(r < 0, "set %s = \"%s\" fails (%d: %s)", bad[i][0], bad[i][1], r, msg);
		ok(msg[0] && !strchr(msg, '\n'), "  with a one-line message");
		is_str(after, before, "  the policy is unchanged");
		free(after);
	}
	free(before);
	sandlock_policy_free(p);
}

static void test_clear(void)
{
	static const char *const fill[][2] = {
		{ "max_memory", "1G" },
		{ "fs_readable", "/usr" },
		{ "gpu_devices", "all" },
		{ "disable", "net-tcp" },
		{ "allow_degraded", "fs-refer" },
		{ "name", "box" },
		{ "on_exit", "keep" },
	};
	static const char *const first[] = { "limits.memory", "fs_readable", "gpu_devices",
					     "protections.disable" };
	static const char *const rest[] = { "on_exit", "runtime.name", "allow_degraded" };
	sandlock_policy_t *p = NULL;

	sandlock_policy_new(&p);
	for (size_t i = 0; i < ELEMENTSOF(fill); i++)
		set(p, fill[i][0], fill[i][1], NULL, 0);
	for (size_t i = 0; i < ELEMENTSOF(first); i++)
		is_int(sandlock_policy_clear(p, first[i]), 0, "clear %s", first[i]);
	is_int(sandlock_policy_clear(p, "nonsense"), -EINVAL, "clear nonsense: -EINVAL");
	is_int(sandlock_policy_clear(NULL, "name"), -EINVAL, "clear(NULL policy)");
	is_int(sandlock_policy_clear(p, NULL), -EINVAL, "clear(NULL field)");
	char *j = dump_json(p);
	is_str(j,
	       "{\"filesystem\":{\"on_exit\":\"keep\"},\"protections\":{\"allow_degraded\":"
	       "[\"fs-refer\"]},\"runtime\":{\"name\":\"box\"}}",
	       "cleared fields are gone, the others stay (disable cleared, allow_degraded kept)");
	free(j);
	for (size_t i = 0; i < ELEMENTSOF(rest); i++)
		is_int(sandlock_policy_clear(p, rest[i]), 0, "clear %s", rest[i]);
	j = dump_json(p);
	is_str(j, "{}", "all cleared");
	free(j);
	sandlock_policy_free(p);
}

static void test_field_supported(void)
{
	static const struct {
		const char *field;
		int want;
	} v[] = { { "fs_readable", 1 },	  { "filesystem.read", 1 }, { "max_disk", 1 },
		  { "limits.disk", 1 },	  { "nonsense", -EINVAL },  { "", -EINVAL },
		  { "limits.", -EINVAL }, { ".memory", -EINVAL },   { "memory", -EINVAL },
		  { "runtime.name", 1 },  { "chroot", 0 },	    { "filesystem.chroot", 0 },
		  { NULL, -EINVAL } };
	int agree = 1, unique = 1;

	for (size_t i = 0; i < ELEMENTSOF(v); i++)
		is_int(sandlock_field_supported(v[i].field), v[i].want, "field_supported(%s)",
		       v[i].field ? v[i].field : "NULL");
	for (size_t i = 0; i < schema_n_fields; i++) {
		const struct field *f = &schema_fields[i];
		char sk[128];
		snprintf(sk, sizeof(sk), "%s.%s", f->section, f->key);
		int want = !!(f->flags & F_SUPPORTED);
		if (sandlock_field_supported(f->name) != want ||
		    sandlock_field_supported(sk) != want)
			agree = 0, diag("  disagrees: %s", f->name);
		for (size_t k = 0; k < i; k++)
			if (strcmp(schema_fields[k].name, f->name) == 0 ||
			    (strcmp(schema_fields[k].section, f->section) == 0 &&
			     strcmp(schema_fields[k].key, f->key) == 0))
				unique = 0, diag("  not unique: %s", f->name);
	}
	ok(agree, "sandlock_field_supported agrees with the schema for every field");
	ok(unique, "Python names and section.key pairs are unique");
}

static int argv_is(char **argv, const char *const *want)
{
	size_t i = 0;

	for (; want[i]; i++)
		if (!argv[i] || strcmp(argv[i], want[i]) != 0)
			return 0;
	return argv[i] == NULL;
}

static void test_command(void)
{
	sandlock_policy_t *p = NULL;
	char **argv = NULL;

	sandlock_policy_new(&p);
	is_int(sandlock_policy_command(p, &argv), -ENOENT, "command without exec: -ENOENT");
	set(p, "args", "-c", NULL, 0);
	is_int(sandlock_policy_command(p, &argv), -ENOENT, "args without exec: -ENOENT");
	set(p, "exec", "/bin/sh", NULL, 0);
	set(p, "args", "exit 3", NULL, 0);
	if (ok(sandlock_policy_command(p, &argv) == 0, "command with exec and args")) {
		ok(argv_is(argv, (const char *const[]){ "/bin/sh", "-c", "exit 3", NULL }),
		   "  exec, then args, NULL-terminated");
		sandlock_strv_free(argv);
	}
	is_int(sandlock_policy_command(NULL, &argv), -EINVAL, "command(NULL policy)");
	is_int(sandlock_policy_command(p, NULL), -EINVAL, "command(NULL ret)");
	sandlock_policy_free(p);

	struct loaded l =
		load_toml("[program]\nexec = \"/usr/bin/make\"\nargs = [\"-j4\", \"all\"]\n");
	if (ok(l.r == 0 && sandlock_policy_command(l.p, &argv) == 0, "command of a profile")) {
		ok(argv_is(argv, (const char *const[]){ "/usr/bin/make", "-j4", "all", NULL }),
		   "  make -j4 all");
		sandlock_strv_free(argv);
	}
	sandlock_policy_free(l.p);

	/* An empty argument is an argument ("sh -c ''", "grep '' file"). */
	l = load_toml("[program]\nexec = \"/bin/sh\"\nargs = [\"-c\", \"\"]\n");
	if (ok(l.r == 0 && sandlock_policy_command(l.p, &argv) == 0, "args = [\"-c\", \"\"]")) {
		ok(argv_is(argv, (const char *const[]){ "/bin/sh", "-c", "", NULL }),
		   "  sh -c \"\"");
		sandlock_strv_free(argv);
	}
	sandlock_policy_free(l.r == 0 ? l.p : NULL);
	sandlock_policy_new(&p);
	is_int(set(p, "args", "", NULL, 0), 0, "an empty argument through the setter");
	is_int(set(p, "exec", "", NULL, 0), -EINVAL, "control: an empty exec is refused");
	sandlock_policy_free(p);
}

/* ---- 6. not supported yet ----------------------------------------------------------------- */

static sandlock_policy_t *base_policy(void)
{
	static const char *const dirs[] = { "/usr", "/lib", "/lib64", "/bin" };
	sandlock_policy_t *p = NULL;

	sandlock_policy_new(&p);
	for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
		if (access(dirs[i], F_OK) == 0)
			sandlock_policy_add_fs_read(p, dirs[i]);
	return p;
}

static int spawn_true(const sandlock_policy_t *p, char *msg, size_t n)
{
	static const char *const argv[] = { "/bin/true", NULL };
	sandlock_spawn_opts_t o = { .size = sizeof(o) };
	sandlock_sandbox_t *sb = NULL;
	sandlock_error_t *e = NULL;

	o.stdout_mode = o.stderr_mode = o.stdin_mode = SANDLOCK_STDIO_NULL;
	int r = sandlock_spawn(p, argv, &o, &sb, &e);
	snprintf(msg, n, "%s", e ? sandlock_error_message(e) : "");
	sandlock_error_free(e);
	if (r < 0)
		return r;
	r = sandlock_sandbox_wait(sb, 30000);
	if (r == 0)
		r = sandlock_sandbox_exit_kind(sb) == SANDLOCK_EXIT_CODE
			    ? sandlock_sandbox_exit_code(sb)
			    : 1000;
	sandlock_sandbox_free(sb);
	return r;
}

/* What a field needs beside it to make a valid policy (schema_validate), so that the refusal
 * tested is "not supported yet" and not the pairing rule. */
static const struct {
	const char *field, *other, *value;
} companions[] = {
	{ "http_ca", "http_key", "/ca.key" },
	{ "http_key", "http_ca", "/ca.pem" },
	{ "http_inject_ca", "http_allow", "GET a/*" },
	{ "http_ca_out", "http_allow", "GET a/*" },
	{ "http_auth", "http_allow", "GET a/*" },
	{ "uid", "gid", "0" },
	{ "gid", "uid", "0" },
};

static const char *companion_of(const char *name, const char **value)
{
	for (size_t i = 0; i < ELEMENTSOF(companions); i++)
		if (strcmp(companions[i].field, name) == 0) {
			*value = companions[i].value;
			return companions[i].other;
		}
	return NULL;
}

/* Whether @msg is "not supported yet: A, B, ..." naming @name. */
static int names_unsupported(const char *msg, const char *name)
{
	const char *prefix = "not supported yet: ";
	size_t n = strlen(name);

	if (strncmp(msg, prefix, strlen(prefix)) != 0)
		return 0;
	for (const char *c = msg + strlen(prefix); *c;) {
		size_t len = strcspn(c, ",");
		if (len == n && strncmp(c, name, n) == 0)
			return 1;
		c += len;
		while (*c == ',' || *c == ' ')
			c++;
	}
	return 0;
}

static void test_not_supported(void)
{
	char msg[512];

	if (sandlock_landlock_abi_version() < sandlock_min_landlock_abi()) {
		ok(1, "# SKIP spawning: Landlock ABI %d < %d", sandlock_landlock_abi_version(),
		   sandlock_min_landlock_abi());
		return;
	}
	sandlock_policy_t *p = base_policy();
	is_int(spawn_true(p, msg, sizeof(msg)), 0, "control: /bin/true runs without them (%s)",
	       msg);
	sandlock_policy_free(p);

	for (size_t i = 0; i < schema_n_fields; i++) {
		const struct field *f = &schema_fields[i];
		const struct set_case *c = case_for(f);
		sandlock_error_t *e = NULL;

		p = base_policy();
		if (!c || set(p, c->field, c->value, msg, sizeof(msg)) < 0) {
			ok(0, "set %s: %s", f->name, msg);
			sandlock_policy_free(p);
			continue;
		}
		const char *other_value = NULL, *other = companion_of(f->name, &other_value);
		if (other && set(p, other, other_value, msg, sizeof(msg)) < 0) {
			ok(0, "set %s beside %s: %s", other, f->name, msg);
			sandlock_policy_free(p);
			continue;
		}
		int r = sandlock_policy_check(p, &e);
		if (f->flags & F_SUPPORTED) {
			/* The control: enforced fields are never refused as unsupported. */
			ok(r == 0 || !strstr(sandlock_error_message(e), "not supported yet"),
			   "%s is enforced: policy_check does not refuse it (%d)", f->name, r);
			sandlock_error_free(e);
			sandlock_policy_free(p);
			continue;
		}
		is_int(r, -EOPNOTSUPP, "policy_check with %s: -EOPNOTSUPP", f->name);
		sandlock_error_free(e);
		is_int(spawn_true(p, msg, sizeof(msg)), -EOPNOTSUPP, "spawn with %s: -EOPNOTSUPP",
		       f->name);
		ok(names_unsupported(msg, f->name), "  message names %s: %s", f->name, msg);
		/* The control: cleared again (with what it needed), it runs. */
		sandlock_policy_clear(p, f->name);
		if (other)
			sandlock_policy_clear(p, other);
		is_int(spawn_true(p, msg, sizeof(msg)), 0, "  control: cleared, it runs");
		sandlock_policy_free(p);
	}
}

int main(void)
{
	setenv("HOME", HOME_DIR, 1);
	test_invalid_file();
	test_profile_controls();
	test_bind_failures();
	test_profile_file();
	test_guard_page();
	test_home_expansion();
	test_home_grammar();
	test_home_chroot();
	test_home_rule();
	test_home_none();
	test_corpus();
	test_defaults();
	test_json();
	test_set_types();
	test_set_semantics();
	test_set_errors();
	test_set_failure_unchanged();
	test_clear();
	test_field_supported();
	test_command();
	test_not_supported();
	return done_testing();
}
