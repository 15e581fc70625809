/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * error: the message object behind the public sandlock_error_t. A failing internal function
 * returns -errno and, when given a reterr slot, fills it with a one-line message. Nothing here
 * prints.
 */
#pragma once

#include "macro.h"

struct sandlock_error {
	int code;   /* negative errno */
	char *step; /* the child's failed step, or NULL */
	char message[];
};

/* Fill *@reterr (if @reterr is not NULL and *@reterr is still empty) with a new error of @code
 * and the formatted message. Returns @code, so callers can "return error_set(...)". When the
 * message cannot be allocated the slot stays empty; the code is still returned. */
int error_set(struct sandlock_error **reterr, int code, const char *fmt, ...) _printf_(3, 4);
/* Same, naming the child's @step. */
int error_set_step(struct sandlock_error **reterr, int code, const char *step, const char *fmt, ...)
	_printf_(4, 5);
void error_free(struct sandlock_error *e);
