/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * notices: the bounded list of lines a run leaves for its user (notices.h). Written by the
 * sandbox's loop only, read once the sandbox has ended: no lock.
 */
#include <stdarg.h>
#include <stdio.h>

#include "notices.h"

void notices_add(struct notices *ns, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	if (ns->closed)
		return;
	va_start(ap, fmt);
	int k = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (k < 0)
		return;
	size_t n = (size_t)k < sizeof(line) ? (size_t)k : sizeof(line) - 1;
	if (ns->n >= NOTICES_MAX || ns->len + n + 1 > NOTICES_BYTES) {
		ns->dropped++;
		return;
	}
	snprintf(ns->text + ns->len, sizeof(ns->text) - ns->len, "%s\n", line);
	ns->len += n + 1;
	ns->n++;
}

const char *notices_close(struct notices *ns)
{
	if (!ns->closed && ns->dropped)
		snprintf(ns->text + ns->len, sizeof(ns->text) - ns->len,
			 "%u more notice%s left out\n", ns->dropped, ns->dropped == 1 ? "" : "s");
	ns->closed = 1;
	return ns->text;
}
