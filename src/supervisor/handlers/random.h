/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/random: random_seed's state (random.c), held by the supervisor as sv->random.
 */
#pragma once

#include <stdatomic.h>
#include <stdint.h>

#include "chacha20.h"

struct random_state {
	int seeded;
	uint64_t seed;
	struct chacha20 getrandom; /* stream 0 */
	uint32_t opens;		   /* the streams of /dev/urandom opened so far */
	atomic_int live;	   /* and still open (each holds a worker) */
};
