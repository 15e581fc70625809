/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/http-relay: the floor of the HTTP proxy's mechanism, for bench/http. A relay between
 * a client and an origin on loopback that does what the proxy does to every byte and nothing
 * else: no HTTP parsing, no rules, no redirect, no supervisor. A thread per connection (as the
 * proxy), TCP_NODELAY on both sockets, and the proxy's own streams (src/http/stream.c) to move
 * the bytes, both ways, until either side ends:
 *
 *   copy     stream_read into an 80 KiB buffer (the proxy's), stream_write_all
 *   splice   stream_splice through a 1 MiB pipe (socket to pipe to socket)
 *   tls      TLS terminated with CERT and KEY (a plain OpenSSL server context), TLS to the
 *            origin with the proxy's client context (verified against the host's trust
 *            store, SSL_CERT_FILE), and the copy in between
 *
 *   http-relay MODE ORIGIN_PORT [CERT KEY]   listens on 127.0.0.1, prints its port, relays
 *                                            until killed
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include "bench.h"
#include "http/stream.h"
#include "http/tls.h"

#define BUF_CAP (65536 + 16384)
#define PIPE_SIZE (1 << 20)

enum mode { COPY, SPLICE, TLS };

static enum mode mode;
static struct sockaddr_in origin;
static SSL_CTX *server_ctx, *client_ctx;

struct conn {
	struct stream s[2]; /* 0: the client, 1: the origin */
	char *buf;
	struct stream_pipe pipe;
};

static void nodelay(int fd)
{
	int one = 1;

	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Everything @from has now (reads that do not wait) to @to: > 0 moved, 0 when nothing was
 * there, -EPIPE at @from's end, -errno. A TLS side whose socket is readable may hold no
 * application data (a session ticket, a record's first half): a read that waited for some
 * could hold the other direction up until the timeout. */
static ssize_t drain(struct conn *c, struct stream *from, struct stream *to)
{
	ssize_t moved = 0;

	for (;;) {
		ssize_t n;

		from->timeout_ms = 0;
		if (mode == SPLICE)
			n = stream_splice(from, to, &c->pipe, PIPE_SIZE);
		else
			n = stream_read(from, c->buf, BUF_CAP);
		from->timeout_ms = 30000;
		if (n == -ETIMEDOUT)
			return moved;
		if (n == 0)
			return -EPIPE;
		if (n < 0)
			return n;
		if (mode != SPLICE) {
			int r = stream_write_all(to, c->buf, (size_t)n);
			if (r < 0)
				return r;
		}
		moved += n;
	}
}

static void relay(struct conn *c)
{
	int ended[2] = { 0, 0 };

	while (!ended[0] || !ended[1]) {
		int moved = 0;
		for (int i = 0; i < 2; i++) {
			if (ended[i])
				continue;
			ssize_t n = drain(c, &c->s[i], &c->s[1 - i]);
			if (n == -EPIPE) {
				ended[i] = 1;
				stream_shutdown_write(&c->s[1 - i]);
			} else if (n < 0) {
				return;
			}
			moved |= n > 0;
		}
		if (moved)
			continue;
		/* What TLS still buffers is part of a record: the rest comes from the socket. */
		struct pollfd pfd[2] = { { .fd = ended[0] ? -1 : c->s[0].fd, .events = POLLIN },
					 { .fd = ended[1] ? -1 : c->s[1].fd, .events = POLLIN } };
		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			return;
	}
}

static int open_upstream(struct conn *c)
{
	char why[256];
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	c->s[1].fd = fd;
	nodelay(fd);
	if (connect(fd, (struct sockaddr *)&origin, sizeof(origin)) < 0)
		return -errno;
	if (mode != TLS)
		return 0;
	if (stream_tls_accept(&c->s[0], server_ctx, NULL, why, sizeof(why)) < 0 ||
	    stream_tls_connect(&c->s[1], client_ctx, "localhost", why, sizeof(why)) < 0) {
		fprintf(stderr, "http-relay: %s\n", why);
		return -EPROTO;
	}
	return 0;
}

static void *conn_main(void *arg)
{
	struct conn *c = arg;

	c->buf = malloc(BUF_CAP);
	if (c->buf && open_upstream(c) == 0 &&
	    (mode != SPLICE || pipe2(c->pipe.fd, O_CLOEXEC | O_NONBLOCK) == 0)) {
		if (mode == SPLICE)
			(void)fcntl(c->pipe.fd[1], F_SETPIPE_SZ, PIPE_SIZE);
		relay(c);
		if (mode == SPLICE) {
			close(c->pipe.fd[0]);
			close(c->pipe.fd[1]);
		}
	}
	stream_close(&c->s[0]);
	stream_close(&c->s[1]);
	free(c->buf);
	free(c);
	return NULL;
}

static int contexts(const char *cert, const char *key)
{
	char err[256];

	if (tls_client_ctx(&client_ctx, err, sizeof(err)) < 0) {
		fprintf(stderr, "http-relay: %s\n", err);
		return -1;
	}
	server_ctx = SSL_CTX_new(TLS_server_method());
	if (!server_ctx || SSL_CTX_use_certificate_chain_file(server_ctx, cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(server_ctx, key, SSL_FILETYPE_PEM) != 1) {
		fprintf(stderr, "http-relay: cannot load %s and %s\n", cert, key);
		return -1;
	}
	return 0;
}

static int listen_any(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) < 0) {
		perror("http-relay: listen");
		return -1;
	}
	printf("%u\n", ntohs(sin.sin_port));
	fflush(stdout);
	return fd;
}

int main(int argc, char **argv)
{
	sigset_t all;

	if (argc < 3 || (strcmp(argv[1], "tls") == 0 && argc < 5)) {
		fprintf(stderr, "usage: http-relay copy|splice|tls ORIGIN_PORT [CERT KEY]\n");
		return 2;
	}
	mode = strcmp(argv[1], "splice") == 0 ? SPLICE : strcmp(argv[1], "tls") == 0 ? TLS : COPY;
	origin = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(atoi(argv[2])) };
	inet_pton(AF_INET, "127.0.0.1", &origin.sin_addr);
	if (mode == TLS && contexts(argv[3], argv[4]) < 0)
		return 1;
	/* bench/http's child: gone with it, however it ends. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* As the proxy's threads: no signal, so a write to a closed socket is EPIPE. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	int lfd = listen_any();
	if (lfd < 0)
		return 1;
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		struct conn *c = calloc(1, sizeof(*c));
		pthread_t t;
		if (!c) {
			close(fd);
			continue;
		}
		nodelay(fd);
		c->s[0] = (struct stream){ .fd = fd, .timeout_ms = 30000 };
		c->s[1] = (struct stream){ .fd = -1, .timeout_ms = 30000 };
		if (pthread_create(&t, NULL, conn_main, c) != 0) {
			close(fd);
			free(c);
			continue;
		}
		pthread_detach(t);
	}
}
