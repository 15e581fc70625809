/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * port-map: port_remap's table, the sandbox's virtual TCP ports and the real ones behind them,
 * with the inodes of the sockets bound through each pair (what tells a pair in use from one
 * whose sockets are gone: handlers/proc-net.c). The supervisor loop and its workers change it;
 * workers, the control socket and the API read it, so every access takes the lock.
 */
#pragma once

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* The sockets remembered per pair: a server seldom binds one port with more than a few
 * SO_REUSEPORT sockets; beyond, the oldest is forgotten. */
#define PORT_MAP_INODES 4

struct port_pair {
	uint16_t virt, real;
};

struct port_entry {
	uint16_t virt, real;
	unsigned n_ino;
	unsigned long ino[PORT_MAP_INODES];
};

struct port_map {
	pthread_mutex_t lock;
	struct port_entry *v;
	size_t n, cap;
};

void port_map_init(struct port_map *m);
/* Record that socket @ino is bound to real port @real for virtual port @virt (the same port
 * when it was free on the host). An earlier pair of @virt to another real port is replaced
 * (its sockets forgotten), and any other pair with real port @real is dropped: the kernel gave
 * that port to this socket, so the old pair's sockets are gone. -ENOMEM. */
int port_map_set(struct port_map *m, uint16_t virt, uint16_t real, unsigned long ino);
/* Drop the pairs whose real port is @real (a socket not bound through the map has it now). */
void port_map_forget_real(struct port_map *m, uint16_t real);
/* The real port behind @virt, or -1 if the sandbox never bound it. */
int port_map_real(struct port_map *m, uint16_t virt);
/* The pair of virtual port @virt in *@ret: 1, or 0 if there is none. */
int port_map_entry(struct port_map *m, uint16_t virt, struct port_entry *ret);
/* The virtual port that real port @real stands for, or -1 if @real is no remapped port. */
int port_map_virtual(struct port_map *m, uint16_t real);
/* Copy the pairs, sorted by virtual port, into @ret (up to @n); @remapped_only leaves out the
 * ports bound as they were asked for. Returns how many pairs there are. */
size_t port_map_copy(struct port_map *m, struct port_pair *ret, size_t n, int remapped_only);
/* Forget every pair (the sandbox ended). */
void port_map_clear(struct port_map *m);
void port_map_done(struct port_map *m);
