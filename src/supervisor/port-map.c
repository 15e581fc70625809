/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * port-map: see port-map.h. A sandbox binds few ports: a sorted array, searched linearly.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "port-map.h"

void port_map_init(struct port_map *m)
{
	*m = (struct port_map){ 0 };
	pthread_mutex_init(&m->lock, NULL);
}

/* Drop the entries with real port @real, but virtual port @except's (-1: none). Called with
 * the lock held. */
static void drop_real(struct port_map *m, uint16_t real, int except)
{
	size_t k = 0;

	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].real != real || m->v[i].virt == except)
			m->v[k++] = m->v[i];
	m->n = k;
}

int port_map_set(struct port_map *m, uint16_t virt, uint16_t real, unsigned long ino)
{
	int r = 0;
	size_t i;

	pthread_mutex_lock(&m->lock);
	drop_real(m, real, virt);
	for (i = 0; i < m->n && m->v[i].virt < virt; i++)
		;
	if (i == m->n || m->v[i].virt != virt) {
		if (m->n == m->cap) {
			size_t cap = m->cap ? 2 * m->cap : 16;
			struct port_entry *v = realloc(m->v, cap * sizeof(*v));
			if (!v) {
				r = -ENOMEM;
				goto out;
			}
			m->v = v;
			m->cap = cap;
		}
		memmove(&m->v[i + 1], &m->v[i], (m->n - i) * sizeof(*m->v));
		m->v[i] = (struct port_entry){ .virt = virt, .real = real };
		m->n++;
	}
	struct port_entry *e = &m->v[i];
	if (e->real != real) /* moved: the sockets of the old real port are not this pair's */
		*e = (struct port_entry){ .virt = virt, .real = real };
	if (ino) {
		if (e->n_ino == PORT_MAP_INODES) {
			memmove(&e->ino[0], &e->ino[1], (PORT_MAP_INODES - 1) * sizeof(e->ino[0]));
			e->n_ino--;
		}
		e->ino[e->n_ino++] = ino;
	}
out:
	pthread_mutex_unlock(&m->lock);
	return r;
}

void port_map_forget_real(struct port_map *m, uint16_t real)
{
	pthread_mutex_lock(&m->lock);
	drop_real(m, real, -1);
	pthread_mutex_unlock(&m->lock);
}

int port_map_real(struct port_map *m, uint16_t virt)
{
	struct port_entry e;

	return port_map_entry(m, virt, &e) ? e.real : -1;
}

int port_map_entry(struct port_map *m, uint16_t virt, struct port_entry *ret)
{
	int found = 0;

	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < m->n && !found; i++)
		if (m->v[i].virt == virt) {
			*ret = m->v[i];
			found = 1;
		}
	pthread_mutex_unlock(&m->lock);
	return found;
}

int port_map_virtual(struct port_map *m, uint16_t real)
{
	int virt = -1;

	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < m->n && virt < 0; i++)
		if (m->v[i].real == real && m->v[i].virt != real)
			virt = m->v[i].virt;
	pthread_mutex_unlock(&m->lock);
	return virt;
}

size_t port_map_copy(struct port_map *m, struct port_pair *ret, size_t n, int remapped_only)
{
	size_t k = 0;

	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < m->n; i++) {
		if (remapped_only && m->v[i].virt == m->v[i].real)
			continue;
		if (k < n)
			ret[k] = (struct port_pair){ .virt = m->v[i].virt, .real = m->v[i].real };
		k++;
	}
	pthread_mutex_unlock(&m->lock);
	return k;
}

void port_map_clear(struct port_map *m)
{
	pthread_mutex_lock(&m->lock);
	free(m->v);
	m->v = NULL;
	m->n = m->cap = 0;
	pthread_mutex_unlock(&m->lock);
}

void port_map_done(struct port_map *m)
{
	port_map_clear(m);
	pthread_mutex_destroy(&m->lock);
}
