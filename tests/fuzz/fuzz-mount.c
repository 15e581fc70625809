/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-mount: mount_entry_parse(), credential_spec_parse() and http_auth_parse() over the same
 * arbitrary bytes. Invariants: the errno is a documented one and the message one printable
 * line; a failed parse leaves *ret untouched; an accepted entry has coherent fields, formats,
 * reparses to the same fields, and its canonical text is a fixed point.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_failure(int k, const char *err, const void *ret, size_t n)
{
	if ((k != -EINVAL && k != -ERANGE && k != -ENOMEM) || !err[0] || strchr(err, '\n'))
		abort();
	for (size_t i = 0; i < n; i++)
		if (((const unsigned char *)ret)[i] != 0xa5)
			abort();
}

static void fuzz_mount(const char *s)
{
	struct mount_entry m, again;
	char err[256] = "", *text = NULL, *text2 = NULL;

	memset(&m, 0xa5, sizeof(m));
	int k = mount_entry_parse(s, &m, err, sizeof(err));
	if (k < 0) {
		check_failure(k, err, &m, sizeof(m));
		return;
	}
	if (m.virt[0] != '/' || m.host[0] != '/' || strchr(m.virt, ':') || strchr(m.host, ':'))
		abort();
	if (mount_entry_format(&m, &text) < 0 || mount_entry_parse(text, &again, err, sizeof(err)))
		abort();
	if (strcmp(m.virt, again.virt) || strcmp(m.host, again.host) || m.ro != again.ro)
		abort();
	if (mount_entry_format(&again, &text2) < 0 || strcmp(text, text2))
		abort();
	free(text);
	free(text2);
	mount_entry_done(&m);
	mount_entry_done(&again);
}

static void fuzz_credential(const char *s)
{
	struct credential_spec c, again;
	char err[256] = "", *text = NULL, *text2 = NULL;

	memset(&c, 0xa5, sizeof(c));
	int k = credential_spec_parse(s, &c, err, sizeof(err));
	if (k < 0) {
		check_failure(k, err, &c, sizeof(c));
		return;
	}
	if (!c.name || (c.source == CRED_SOURCE_FD) != !c.ref ||
	    (c.source == CRED_SOURCE_FD) != (c.fd >= 0))
		abort();
	if (credential_spec_format(&c, &text) < 0 ||
	    credential_spec_parse(text, &again, err, sizeof(err)) < 0)
		abort();
	if (strcmp(c.name, again.name) || c.source != again.source || c.fd != again.fd ||
	    (c.ref && strcmp(c.ref, again.ref)))
		abort();
	if (credential_spec_format(&again, &text2) < 0 || strcmp(text, text2))
		abort();
	free(text);
	free(text2);
	credential_spec_done(&c);
	credential_spec_done(&again);
}

static void fuzz_http_auth(const char *s)
{
	struct http_auth a, again;
	char err[256] = "", *text = NULL, *text2 = NULL;

	memset(&a, 0xa5, sizeof(a));
	int k = http_auth_parse(s, &a, err, sizeof(err));
	if (k < 0) {
		check_failure(k, err, &a, sizeof(a));
		return;
	}
	if (!a.credential || (a.kind == HTTP_AUTH_BEARER) != !a.param)
		abort();
	if (http_auth_format(&a, &text) < 0 || http_auth_parse(text, &again, err, sizeof(err)) < 0)
		abort();
	if (!http_rule_equal(&a.rule, &again.rule) || a.kind != again.kind ||
	    a.add_only != again.add_only || strcmp(a.credential, again.credential) ||
	    (a.param && strcmp(a.param, again.param)))
		abort();
	if (http_auth_format(&again, &text2) < 0 || strcmp(text, text2))
		abort();
	free(text);
	free(text2);
	http_auth_done(&a);
	http_auth_done(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	fuzz_mount(s);
	fuzz_credential(s);
	fuzz_http_auth(s);
	free(s);
	return 0;
}
