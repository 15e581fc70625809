/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * port-map: port_remap's table, the sandbox's virtual TCP ports and the real ones behind them.
 * The supervisor loop adds pairs (handlers/ports.c); workers, the control socket and the API
 * read them, so every access takes the lock.
 */
#pragma once

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct port_pair {
	uint16_t virt, real;
};

struct port_map {
	pthread_mutex_t lock;
	struct port_pair *v;
	size_t n, cap;
};

void port_map_init(struct port_map *m);
/* Record that virtual port @virt is bound as @real (the same port when it was free on the
 * host), replacing an earlier pair for @virt. -ENOMEM. */
int port_map_set(struct port_map *m, uint16_t virt, uint16_t real);
/* The real port behind @virt, or -1 if the sandbox never bound it. */
int port_map_real(struct port_map *m, uint16_t virt);
/* The virtual port that real port @real stands for, or -1 if @real is no remapped port. */
int port_map_virtual(struct port_map *m, uint16_t real);
/* Copy the pairs, sorted by virtual port, into @ret (up to @n); @remapped_only leaves out the
 * ports bound as they were asked for. Returns how many pairs there are. */
size_t port_map_copy(struct port_map *m, struct port_pair *ret, size_t n, int remapped_only);
/* Forget every pair (the sandbox ended). */
void port_map_clear(struct port_map *m);
void port_map_done(struct port_map *m);
