/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proxy: the listeners, the accept thread, the origin table and the connections' list. The
 * accept thread polls the listeners and an eventfd that stop writes; each accepted
 * connection gets a detached thread of its own (proxy-conn.c) with blocking streams bounded
 * by timeouts, up to PROXY_MAX_CONNS at once. The origin table maps the address of the
 * child's socket (what accept reports as the peer) to the destination the child meant; the
 * supervisor's connect workers fill it (http_proxy_expect) right after the child's connect
 * to the proxy returned, so a connection may be accepted first and then waits for its entry.
 * A connection nobody announced is closed. Every descriptor a connection holds is set and
 * closed under p->lock, so that stop can shut them all down and wait for the threads.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "basic/fd-util.h"
#include "basic/macro.h"
#include "http/proxy-internal.h"
#include "http/tls.h"

struct proxy_entry {
	struct proxy_entry *next;
	struct proxy_addr local;
	struct sockaddr_storage orig;
	socklen_t orig_len;
};

void proxy_addr_of(const struct sockaddr_storage *ss, struct proxy_addr *ret)
{
	*ret = (struct proxy_addr){ .family = ss->ss_family };
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
		memcpy(ret->addr, &in->sin_addr, 4);
		ret->port = ntohs(in->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
		ret->port = ntohs(in6->sin6_port);
		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			ret->family = AF_INET;
			memcpy(ret->addr, in6->sin6_addr.s6_addr + 12, 4);
		} else {
			memcpy(ret->addr, &in6->sin6_addr, 16);
		}
	}
}

static int addr_eq(const struct proxy_addr *a, const struct proxy_addr *b)
{
	return a->family == b->family && a->port == b->port &&
	       memcmp(a->addr, b->addr, a->family == AF_INET ? 4 : 16) == 0;
}

static struct proxy_entry **entry_find(struct http_proxy *p, const struct proxy_addr *local)
{
	struct proxy_entry **e = &p->entries;
	while (*e && !addr_eq(&(*e)->local, local))
		e = &(*e)->next;
	return e;
}

int http_proxy_expect(struct http_proxy *p, const struct sockaddr_storage *local,
		      socklen_t local_len, const struct sockaddr_storage *orig, socklen_t orig_len)
{
	if (!p || !local || !orig || orig_len > sizeof(*orig) ||
	    (orig->ss_family != AF_INET && orig->ss_family != AF_INET6))
		return -EINVAL;
	struct proxy_entry *n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	proxy_addr_of(local, &n->local);
	memcpy(&n->orig, orig, orig_len);
	n->orig_len = orig_len;
	pthread_mutex_lock(&p->lock);
	if (*entry_find(p, &n->local)) {
		pthread_mutex_unlock(&p->lock);
		free(n);
		return -EEXIST;
	}
	n->next = p->entries;
	p->entries = n;
	pthread_cond_broadcast(&p->changed);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

int http_proxy_original(struct http_proxy *p, const struct sockaddr_storage *local,
			socklen_t local_len, struct sockaddr_storage *ret, socklen_t *len)
{
	struct proxy_addr key;
	int r = -ENOENT;

	if (!p || !local)
		return -ENOENT;
	proxy_addr_of(local, &key);
	pthread_mutex_lock(&p->lock);
	struct proxy_entry *e = *entry_find(p, &key);
	if (e) {
		memcpy(ret, &e->orig, e->orig_len);
		*len = e->orig_len;
		r = 0;
	}
	pthread_mutex_unlock(&p->lock);
	return r;
}

int proxy_conn_claim(struct proxy_conn *c)
{
	struct http_proxy *p = c->p;
	struct timespec until;
	int r = 0;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += PROXY_EXPECT_WAIT_MS / 1000;
	until.tv_nsec += (PROXY_EXPECT_WAIT_MS % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct proxy_entry *e = *entry_find(p, &c->peer);
		if (p->stopping) {
			r = -ECANCELED;
			break;
		}
		if (e) {
			memcpy(&c->orig, &e->orig, e->orig_len);
			c->orig_len = e->orig_len;
			break;
		}
		if (pthread_cond_timedwait(&p->changed, &p->lock, &until) == ETIMEDOUT) {
			r = -ENOENT;
			break;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return r;
}

int proxy_conn_set_fd(struct proxy_conn *c, struct stream *s, int fd)
{
	struct http_proxy *p = c->p;
	int r = 0;

	pthread_mutex_lock(&p->lock);
	if (s->fd >= 0) {
		stream_close(s);
		atomic_fetch_sub(&p->n_fds, 1);
	}
	if (s->ssl) {
		SSL_free(s->ssl);
		s->ssl = NULL;
	}
	s->fd = -1;
	if (fd >= 0 && p->stopping) {
		close(fd);
		r = -ECANCELED;
	} else if (fd >= 0) {
		s->fd = fd;
		atomic_fetch_add(&p->n_fds, 1);
	}
	pthread_mutex_unlock(&p->lock);
	return r;
}

static void conn_free(struct proxy_conn *c)
{
	free(c->cin.data);
	free(c->uin.data);
	free(c);
}

void proxy_conn_finish(struct proxy_conn *c)
{
	struct http_proxy *p = c->p;

	/* The entry goes before the client's socket closes: once it is closed, the child's
	 * address may be reused for a new connection, which needs an entry of its own. */
	pthread_mutex_lock(&p->lock);
	struct proxy_entry **e = entry_find(p, &c->peer);
	if (*e) {
		struct proxy_entry *dead = *e;
		*e = dead->next;
		free(dead);
	}
	pthread_mutex_unlock(&p->lock);
	proxy_conn_set_fd(c, &c->up, -1);
	proxy_conn_set_fd(c, &c->cli, -1);
	pthread_mutex_lock(&p->lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		p->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	p->n_conns--;
	pthread_cond_broadcast(&p->changed);
	pthread_mutex_unlock(&p->lock);
	conn_free(c);
}

static struct proxy_conn *conn_new(struct http_proxy *p, const struct sockaddr_storage *peer)
{
	struct proxy_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->p = p;
	c->cli = (struct stream){ .fd = -1, .timeout_ms = p->cfg.idle_timeout_ms };
	c->up = (struct stream){ .fd = -1, .timeout_ms = p->cfg.upstream_timeout_ms };
	c->cin.data = malloc(PROXY_BUF_CAP);
	c->uin.data = malloc(PROXY_BUF_CAP);
	if (!c->cin.data || !c->uin.data) {
		conn_free(c);
		return NULL;
	}
	proxy_addr_of(peer, &c->peer);
	return c;
}

/* Start the connection's thread; the caller holds p->lock and has the room. */
static int conn_start(struct http_proxy *p, int fd, const struct sockaddr_storage *peer)
{
	pthread_attr_t attr;
	pthread_t t;
	struct proxy_conn *c = conn_new(p, peer);

	if (!c)
		return -ENOMEM;
	c->cli.fd = fd;
	atomic_fetch_add(&p->n_fds, 1);
	c->next = p->conns;
	if (p->conns)
		p->conns->prev = c;
	p->conns = c;
	p->n_conns++;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 512 * 1024);
	int r = pthread_create(&t, &attr, proxy_conn_main, c);
	pthread_attr_destroy(&attr);
	if (r == 0)
		return 0;
	p->conns = c->next;
	if (c->next)
		c->next->prev = NULL;
	p->n_conns--;
	atomic_fetch_sub(&p->n_fds, 1);
	conn_free(c);
	return -r;
}

static void accept_one(struct http_proxy *p, int lfd)
{
	struct sockaddr_storage peer;
	socklen_t len = sizeof(peer);
	int fd = accept4(lfd, (struct sockaddr *)&peer, &len, SOCK_CLOEXEC);

	if (fd < 0)
		return;
	pthread_mutex_lock(&p->lock);
	int r = -EBUSY;
	if (!p->stopping && p->n_conns < PROXY_MAX_CONNS)
		r = conn_start(p, fd, &peer);
	pthread_mutex_unlock(&p->lock);
	if (r < 0)
		close(fd);
}

static void *accept_main(void *arg)
{
	struct http_proxy *p = arg;
	struct pollfd pfd[3] = {
		{ .fd = p->stop_fd, .events = POLLIN },
		{ .fd = p->lfd4, .events = POLLIN },
		{ .fd = p->lfd6, .events = POLLIN },
	};

	for (;;) {
		int n = poll(pfd, 3, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || pfd[0].revents)
			break;
		for (int i = 1; i < 3; i++)
			if (pfd[i].fd >= 0 && (pfd[i].revents & POLLIN))
				accept_one(p, pfd[i].fd);
	}
	return NULL;
}

/* A loopback listener of @family on an ephemeral port; -EADDRNOTAVAIL or -EAFNOSUPPORT when
 * the host has no such loopback. */
static int listener_open(struct http_proxy *p, int family, struct sockaddr_storage *ss,
			 socklen_t *len)
{
	_cleanup_close_ int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int one = 1;

	if (fd < 0)
		return negative_errno();
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;
		in->sin_family = AF_INET;
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
		in6->sin6_family = AF_INET6;
		in6->sin6_addr = in6addr_loopback;
		*len = sizeof(*in6);
		if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0)
			return negative_errno();
	}
	if (bind(fd, (struct sockaddr *)ss, *len) < 0 || listen(fd, 512) < 0 ||
	    getsockname(fd, (struct sockaddr *)ss, len) < 0)
		return negative_errno();
	atomic_fetch_add(&p->n_fds, 1);
	return TAKE_FD(fd);
}

static int tls_setup(struct http_proxy *p, char *err, size_t errlen)
{
	if (!p->cfg.ca)
		return 0;
	int r = tls_server_ctx(p->cfg.ca, proxy_tls_choose, &p->tls_server, err, errlen);
	if (r < 0)
		return r;
	return tls_client_ctx(&p->tls_client, err, errlen);
}

static int proxy_open(struct http_proxy *p, char *err, size_t errlen)
{
	int r;

	p->lfd4 = listener_open(p, AF_INET, &p->addr4, &p->addr4_len);
	if (p->lfd4 < 0) {
		r = p->lfd4;
		p->lfd4 = -1;
		snprintf(err, errlen, "the HTTP proxy cannot listen on 127.0.0.1: %s",
			 strerror(-r));
		return r;
	}
	p->lfd6 = listener_open(p, AF_INET6, &p->addr6, &p->addr6_len);
	if (p->lfd6 < 0 && p->lfd6 != -EADDRNOTAVAIL && p->lfd6 != -EAFNOSUPPORT) {
		r = p->lfd6;
		p->lfd6 = -1;
		snprintf(err, errlen, "the HTTP proxy cannot listen on [::1]: %s", strerror(-r));
		return r;
	}
	if (p->lfd6 < 0)
		p->lfd6 = -1;
	p->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (p->stop_fd < 0) {
		r = negative_errno();
		snprintf(err, errlen, "the HTTP proxy: eventfd: %s", strerror(-r));
		return r;
	}
	atomic_fetch_add(&p->n_fds, 1);
	return tls_setup(p, err, errlen);
}

int http_proxy_start(const struct http_proxy_config *cfg, struct http_proxy **ret, char *err,
		     size_t errlen)
{
	struct http_proxy *p = calloc(1, sizeof(*p));
	sigset_t all, old;
	int r;

	if (!p)
		return -ENOMEM;
	p->cfg = *cfg;
	if (p->cfg.upstream_timeout_ms <= 0)
		p->cfg.upstream_timeout_ms = 30000;
	if (p->cfg.idle_timeout_ms <= 0)
		p->cfg.idle_timeout_ms = 120000;
	p->lfd4 = p->lfd6 = p->stop_fd = -1;
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->changed, &ca);
	pthread_condattr_destroy(&ca);
	r = proxy_open(p, err, errlen);
	if (r < 0) {
		http_proxy_stop(p);
		return r;
	}
	/* The proxy's threads (this one and the connections' it starts) take no signal: a
	 * write to a closed socket gives EPIPE instead of SIGPIPE, and the caller's signals
	 * stay with the caller's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&p->accept_thread, NULL, accept_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		snprintf(err, errlen, "the HTTP proxy: cannot start its thread: %s", strerror(r));
		http_proxy_stop(p);
		return -r;
	}
	p->thread_started = 1;
	*ret = p;
	return 0;
}

int http_proxy_address(const struct http_proxy *p, int family, struct sockaddr_storage *ret,
		       socklen_t *len)
{
	if (family == AF_INET) {
		memcpy(ret, &p->addr4, p->addr4_len);
		*len = p->addr4_len;
		return 0;
	}
	if (family != AF_INET6)
		return -EAFNOSUPPORT;
	if (p->lfd6 >= 0) {
		memcpy(ret, &p->addr6, p->addr6_len);
		*len = p->addr6_len;
		return 0;
	}
	/* No ::1: an IPv6 socket reaches the IPv4 listener through its mapped address. */
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ret;
	const struct sockaddr_in *in = (const struct sockaddr_in *)&p->addr4;
	memset(ret, 0, sizeof(*ret));
	in6->sin6_family = AF_INET6;
	in6->sin6_port = in->sin_port;
	in6->sin6_addr.s6_addr[10] = in6->sin6_addr.s6_addr[11] = 0xff;
	memcpy(in6->sin6_addr.s6_addr + 12, &in->sin_addr, 4);
	*len = sizeof(*in6);
	return 0;
}

int http_proxy_is_listener(const struct http_proxy *p, const struct sockaddr_storage *ss,
			   socklen_t len)
{
	struct proxy_addr a, l;

	if (!p || !ss || len < sizeof(sa_family_t))
		return 0;
	proxy_addr_of(ss, &a);
	proxy_addr_of(&p->addr4, &l);
	if (addr_eq(&a, &l))
		return 1;
	if (p->lfd6 < 0)
		return 0;
	proxy_addr_of(&p->addr6, &l);
	return addr_eq(&a, &l);
}

unsigned http_proxy_fds(const struct http_proxy *p)
{
	return p ? atomic_load(&((struct http_proxy *)p)->n_fds) : 0;
}

/* Wake every connection's thread out of its reads and writes and wait until all ended. */
static void conns_stop(struct http_proxy *p)
{
	pthread_mutex_lock(&p->lock);
	p->stopping = 1;
	for (struct proxy_conn *c = p->conns; c; c = c->next) {
		if (c->cli.fd >= 0)
			shutdown(c->cli.fd, SHUT_RDWR);
		if (c->up.fd >= 0)
			shutdown(c->up.fd, SHUT_RDWR);
	}
	pthread_cond_broadcast(&p->changed);
	while (p->n_conns > 0)
		pthread_cond_wait(&p->changed, &p->lock);
	pthread_mutex_unlock(&p->lock);
}

void http_proxy_stop(struct http_proxy *p)
{
	if (!p)
		return;
	if (p->thread_started) {
		uint64_t one = 1;
		if (write(p->stop_fd, &one, sizeof(one)) < 0) {
			/* An eventfd write fails only on overflow, which still wakes the poll. */
		}
		pthread_join(p->accept_thread, NULL);
	}
	conns_stop(p);
	safe_close(p->lfd4);
	safe_close(p->lfd6);
	safe_close(p->stop_fd);
	while (p->entries) {
		struct proxy_entry *e = p->entries;
		p->entries = e->next;
		free(e);
	}
	SSL_CTX_free(p->tls_server);
	SSL_CTX_free(p->tls_client);
	pthread_cond_destroy(&p->changed);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
