/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rules-mount: the "VIRTUAL:HOST[:ro|:rw]" entries of --fs-mount and [filesystem].mount. Text
 * only: the paths are kept as written (${HOME} expansion and every lookup happen elsewhere, on
 * file descriptors), and ':' is the separator, so neither path may hold one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rules-internal.h"

static int check_path(const char *s, const char *what, const char *p, size_t n, char *err,
		      size_t errlen)
{
	if (n == 0)
		return rules_err(err, errlen, -EINVAL,
				 "empty %s path in mount entry \"%s\" (VIRTUAL:HOST[:ro|:rw])",
				 what, s);
	if (p[0] != '/')
		return rules_err(err, errlen, -EINVAL,
				 "%s path \"%.*s\" in mount entry \"%s\" is not absolute", what,
				 Q(n), p, s);
	return 0;
}

int mount_entry_parse(const char *s, struct mount_entry *ret, char *err, size_t errlen)
{
	if (!s)
		return rules_err(err, errlen, -EINVAL, "missing mount entry");
	const char *c1 = strchr(s, ':');
	if (!c1)
		return rules_err(err, errlen, -EINVAL,
				 "mount entry \"%s\" is not VIRTUAL:HOST[:ro|:rw]", s);
	const char *host = c1 + 1, *c2 = strchr(host, ':');
	size_t hlen = c2 ? (size_t)(c2 - host) : strlen(host);
	int ro = 0;

	if (c2 && strcmp(c2 + 1, "ro") == 0)
		ro = 1;
	else if (c2 && strcmp(c2 + 1, "rw") != 0)
		return rules_err(
			err, errlen, -EINVAL,
			"mount entry \"%s\" ends in \"%s\", not :ro or :rw (paths cannot hold "
			"':')",
			s, c2 + 1);
	int k = check_path(s, "virtual", s, (size_t)(c1 - s), err, errlen);
	if (k >= 0)
		k = check_path(s, "host", host, hlen, err, errlen);
	if (k < 0)
		return k;

	_cleanup_free_ char *v = strndup(s, (size_t)(c1 - s));
	_cleanup_free_ char *h = strndup(host, hlen);
	if (!v || !h)
		return rules_err(err, errlen, -ENOMEM, "out of memory");
	*ret = (struct mount_entry){ .virt = TAKE_PTR(v), .host = TAKE_PTR(h), .ro = ro };
	return 0;
}

void mount_entry_done(struct mount_entry *m)
{
	if (!m)
		return;
	free(m->virt);
	free(m->host);
	*m = (struct mount_entry){ 0 };
}

int mount_entry_format(const struct mount_entry *m, char **ret)
{
	struct rules_buf b = { 0 };

	if (!m->virt || !m->host || m->virt[0] != '/' || m->host[0] != '/' ||
	    strchr(m->virt, ':') || strchr(m->host, ':'))
		return -EINVAL;
	rules_buf_printf(&b, "%s:%s%s", m->virt, m->host, m->ro ? ":ro" : "");
	return rules_buf_finish(&b, ret);
}
