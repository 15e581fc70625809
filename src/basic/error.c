/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * error: formatted one-line error messages with an errno code.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

static int error_vset(struct sandlock_error **reterr, int code, const char *step, const char *fmt,
		      va_list ap)
{
	if (!reterr || *reterr)
		return code;

	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		return code;

	struct sandlock_error *e = calloc(1, sizeof(*e) + (size_t)n + 1);
	if (!e)
		return code;
	vsnprintf(e->message, (size_t)n + 1, fmt, ap);
	e->code = code;
	if (step) {
		e->step = strdup(step);
		if (!e->step) {
			free(e);
			return code;
		}
	}
	*reterr = e;
	return code;
}

int error_set(struct sandlock_error **reterr, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	error_vset(reterr, code, NULL, fmt, ap);
	va_end(ap);
	return code;
}

int error_set_step(struct sandlock_error **reterr, int code, const char *step, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	error_vset(reterr, code, step, fmt, ap);
	va_end(ap);
	return code;
}

void error_free(struct sandlock_error *e)
{
	if (!e)
		return;
	free(e->step);
	free(e);
}
