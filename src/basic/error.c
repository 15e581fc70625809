/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * error: formatted one-line error messages with an errno code.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

/* Control characters of the input (a key or value quoted in a message) written as \n, \t or
 * \xNN, so that every message is one line. Returns the length; writes when @out is set. */
static size_t escape_controls(const char *in, char *out)
{
	size_t n = 0;

	for (const unsigned char *c = (const unsigned char *)in; *c; c++) {
		char buf[5];
		if (*c >= 0x20 && *c != 0x7f) {
			buf[0] = (char)*c;
			buf[1] = '\0';
		} else if (*c == '\n' || *c == '\t' || *c == '\r') {
			buf[0] = '\\';
			buf[1] = *c == '\n' ? 'n' : *c == '\t' ? 't' : 'r';
			buf[2] = '\0';
		} else {
			snprintf(buf, sizeof(buf), "\\x%02x", *c);
		}
		size_t len = strlen(buf);
		if (out)
			memcpy(out + n, buf, len);
		n += len;
	}
	if (out)
		out[n] = '\0';
	return n;
}

static int error_vset(struct sandlock_error **reterr, int code, const char *step, const char *fmt,
		      va_list ap)
{
	if (!reterr || *reterr)
		return code;

	char *raw = NULL;
	if (vasprintf(&raw, fmt, ap) < 0)
		return code;
	size_t n = escape_controls(raw, NULL);
	struct sandlock_error *e = calloc(1, sizeof(*e) + n + 1);
	if (!e) {
		free(raw);
		return code;
	}
	escape_controls(raw, e->message);
	free(raw);
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
