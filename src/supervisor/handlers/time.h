/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/time: time_start's state (time.c), held by the supervisor as sv->vtime.
 */
#pragma once

#include <stdint.h>
#include <time.h>

#define VTIME_FUNCS 3 /* clock_gettime, gettimeofday, time */

struct vtime {
	int64_t off_sec;     /* the sandbox's wall clock minus the host's */
	int64_t off_nsec;    /* 0 <= off_nsec < 1e9 */
	struct vtime_moved { /* deadlines moved in the child's memory */
		uint64_t addr;
		struct timespec host;
	} moved[64];
	unsigned n_moved;
	uintptr_t vdso_off[VTIME_FUNCS]; /* the vDSO functions replaced, 0: absent */
};
