/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * notices: what sandlock would tell a user about a run (a process it killed for max_memory, a
 * fork max_processes refused), kept as text lines for the caller to print: the library never
 * prints. Bounded: past NOTICES_MAX lines or the buffer's size, a notice is only counted, and
 * one last line says how many were left out.
 */
#pragma once

#include <stddef.h>

#define NOTICES_MAX 16
#define NOTICES_BYTES 2048

struct notices {
	char text[NOTICES_BYTES + 64]; /* the lines, and room for the last one */
	size_t len;
	unsigned n, dropped;
	int fork_refused; /* reported already: once per run */
	int closed;	  /* notices_close() ran */
};

/* Add one line (printf format, no newline: one is added). Dropped when full. */
void notices_add(struct notices *ns, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The lines, with "N more notices left out" when some were; called once the run ended. */
const char *notices_close(struct notices *ns);
