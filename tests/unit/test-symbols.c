/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-symbols: the ABI surface agrees with itself. Three sets must be equal: the functions
 * declared in include/sandlock.h, the names in src/libsandlock.sym, and the dynamic symbols the
 * built libsandlock.so defines. Run from the source root (prove does); the shared library is
 * found next to this binary's directory: <build>/tests/test-symbols -> <build>/libsandlock.so.
 */
#include <ctype.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"

struct names {
	char *v[256];
	size_t n;
};

static int names_has(const struct names *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], name) == 0)
			return 1;
	return 0;
}

static void names_add(struct names *s, const char *name, size_t len)
{
	char *c = strndup(name, len);
	if (!c || names_has(s, c) || s->n >= sizeof(s->v) / sizeof(s->v[0])) {
		free(c);
		return;
	}
	s->v[s->n++] = c;
}

static void names_free(struct names *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	s->n = 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	FILE *m = open_memstream(&buf, &len);
	int c;
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(m);
	fclose(f);
	return buf;
}

/* Functions declared in the header: identifiers sandlock_[a-z_]* followed by '(' outside
 * comments and preprocessor lines. */
static int header_names(const char *path, struct names *out)
{
	char *src = slurp(path);
	if (!src)
		return -errno;
	/* Blank out comments and preprocessor lines, so prose and macros do not count. */
	for (char *p = src; *p;) {
		if (p[0] == '/' && p[1] == '*') {
			char *end = strstr(p + 2, "*/");
			end = end ? end + 2 : p + strlen(p);
			memset(p, ' ', (size_t)(end - p));
			p = end;
		} else if (p[0] == '/' && p[1] == '/') {
			while (*p && *p != '\n')
				*p++ = ' ';
		} else if (*p == '#' && (p == src || p[-1] == '\n')) {
			char prev = 0;
			while (*p && !(*p == '\n' && prev != '\\')) {
				prev = *p;
				*p++ = ' ';
			}
		} else
			p++;
	}
	for (char *p = src; (p = strstr(p, "sandlock_"));) {
		if (p > src && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) {
			p++;
			continue;
		}
		size_t len = strlen("sandlock_");
		while ((p[len] >= 'a' && p[len] <= 'z') || p[len] == '_' ||
		       (p[len] >= '0' && p[len] <= '9'))
			len++;
		const char *q = p + len;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q == '(')
			names_add(out, p, len);
		p += len;
	}
	free(src);
	return 0;
}

/* Names in the version script's global: section. */
static int symfile_names(const char *path, struct names *out)
{
	char *src = slurp(path);
	if (!src)
		return -errno;
	char *g = strstr(src, "global:");
	char *l = g ? strstr(g, "local:") : NULL;
	if (!g || !l) {
		free(src);
		return -EINVAL;
	}
	*l = 0;
	for (char *tok = strtok(g + strlen("global:"), " \t\n;"); tok; tok = strtok(NULL, " \t\n;"))
		names_add(out, tok, strlen(tok));
	free(src);
	return 0;
}

/* Defined dynamic symbols of the library, except the version node itself (an absolute
 * symbol). */
static int library_names(const char *lib, struct names *out, struct names *other)
{
	char cmd[4400];
	snprintf(cmd, sizeof(cmd), "nm -D --defined-only '%s' 2>/dev/null", lib);
	FILE *f = popen(cmd, "r");
	if (!f)
		return -errno;
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		char addr[64], type[8], name[400];
		if (sscanf(line, "%63s %7s %399s", addr, type, name) != 3)
			continue;
		char *at = strchr(name, '@'); /* "name@@SANDLOCK_0.1" on newer binutils */
		if (at)
			*at = 0;
		if (strcmp(type, "A") == 0 && strncmp(name, "SANDLOCK_", 9) == 0)
			continue;
		if (strncmp(name, "sandlock_", 9) == 0)
			names_add(out, name, strlen(name));
		else
			names_add(other, name, strlen(name));
	}
	return pclose(f) == 0 ? 0 : -EIO;
}

static int check_subset(const struct names *a, const char *aname, const struct names *b,
			const char *bname)
{
	int good = 1;
	for (size_t i = 0; i < a->n; i++)
		if (!names_has(b, a->v[i])) {
			diag("  %s is in %s but not in %s", a->v[i], aname, bname);
			good = 0;
		}
	return good;
}

int main(int argc, char **argv)
{
	struct names hdr = { 0 }, sym = { 0 }, lib = { 0 }, other = { 0 };
	char self[4096], libpath[4200];

	snprintf(self, sizeof(self), "%s", argv[0]);
	char *testsdir = dirname(self);	    /* <build>/tests */
	char *builddir = dirname(testsdir); /* <build> */
	snprintf(libpath, sizeof(libpath), "%s/libsandlock.so", builddir);

	is_int(header_names("include/sandlock.h", &hdr), 0, "read include/sandlock.h");
	is_int(symfile_names("src/libsandlock.sym", &sym), 0, "read src/libsandlock.sym");
	if (access(libpath, R_OK) != 0) {
		ok(0, "the shared library %s exists", libpath);
		return done_testing();
	}
	is_int(library_names(libpath, &lib, &other), 0, "nm -D --defined-only %s", libpath);

	ok(hdr.n >= 40, "the header declares %zu functions", hdr.n);
	ok(check_subset(&hdr, "sandlock.h", &sym, "libsandlock.sym"),
	   "every function of the header is in the version script");
	ok(check_subset(&sym, "libsandlock.sym", &hdr, "sandlock.h"),
	   "every name of the version script is declared in the header");
	ok(check_subset(&hdr, "sandlock.h", &lib, "libsandlock.so"),
	   "every function of the header is exported by the library");
	ok(check_subset(&lib, "libsandlock.so", &hdr, "sandlock.h"),
	   "the library exports no sandlock_ symbol the header lacks");
	if (!ok(other.n == 0, "the library exports nothing outside the sandlock_ namespace"))
		for (size_t i = 0; i < other.n; i++)
			diag("  also exported: %s", other.v[i]);
	is_int(sym.n, hdr.n, "as many names in the version script as in the header");
	is_int(lib.n, hdr.n, "as many exported functions as in the header");

	/* Controls: the parsers see what they must, and do not see what they must not. */
	ok(names_has(&hdr, "sandlock_spawn") && names_has(&hdr, "sandlock_policy_set_name"),
	   "control: the header parser finds sandlock_spawn and sandlock_policy_set_name");
	ok(!names_has(&hdr, "sandlock_spawn_opts") && !names_has(&hdr, "sandlock_policy_t"),
	   "control: type names are not taken as functions");
	ok(names_has(&lib, "sandlock_version") && !names_has(&lib, "plan_build") &&
		   !names_has(&other, "plan_build") && !names_has(&other, "strv_extend"),
	   "control: internal functions (plan_build, strv_extend) are not exported");

	/* Control: a synthetic header whose only real declaration is sandlock_real(). */
	char tmp[] = "/tmp/sl-symbols-XXXXXX";
	int fd = mkstemp(tmp);
	if (fd >= 0) {
		static const char text[] =
			"/* sandlock_in_comment() */\n"
			"#define SANDLOCK_X(a) sandlock_in_macro(a) \\\n  sandlock_continued(a)\n"
			"// sandlock_line_comment(x)\n"
			"int sandlock_real (int x); typedef struct sandlock_t sandlock_t;\n"
			"int my_sandlock_prefixed(void);\n";
		struct names t = { 0 };
		(void)!write(fd, text, sizeof(text) - 1);
		close(fd);
		header_names(tmp, &t);
		ok(t.n == 1 && names_has(&t, "sandlock_real"),
		   "control: comments, macros, continuations and prefixed names are skipped");
		for (size_t i = 0; t.n != 1 && i < t.n; i++)
			diag("  parsed: %s", t.v[i]);
		names_free(&t);
		unlink(tmp);
	}

	names_free(&hdr);
	names_free(&sym);
	names_free(&lib);
	names_free(&other);
	(void)argc;
	return done_testing();
}
