/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stream: a proxied connection's side, plain or TLS, with every blocking call bounded by the
 * stream's timeout. Plain sockets are read and written with MSG_DONTWAIT, so their blocking
 * mode does not matter; a TLS stream's descriptor is made non-blocking at its handshake, so
 * that no SSL call can wait past the timeout (a record arriving in pieces, a session ticket
 * read in passing), and its SSL talks to the socket through a BIO of our own that writes with
 * send(MSG_NOSIGNAL): a peer that hung up is -EPIPE, never a SIGPIPE that would kill the
 * supervisor (OpenSSL's socket BIO uses write(), and no thread mask is needed this way).
 * TLS reads ahead, so that one recv takes several records. Between two plain sockets,
 * stream_splice moves bytes through a pipe with splice(2), never through user space.
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "fd-util.h"
#include "http/stream.h"
#include "http/tls.h"
#include "macro.h"

/* The TLS read buffer with read-ahead: four full records. */
#define STREAM_TLS_READ_BUF (4 * (16384 + 256))

/* The BIO: recv/send on the descriptor it holds (as its data), never closing it. */
static int sock_bio_write(BIO *b, const char *buf, int len)
{
	ssize_t n = send((int)(intptr_t)BIO_get_data(b), buf, len, MSG_NOSIGNAL);

	BIO_clear_retry_flags(b);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		BIO_set_retry_write(b);
	return (int)n;
}

static int sock_bio_read(BIO *b, char *buf, int len)
{
	ssize_t n = recv((int)(intptr_t)BIO_get_data(b), buf, len, 0);

	BIO_clear_retry_flags(b);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		BIO_set_retry_read(b);
	/* OpenSSL asks BIO_eof whether a read of nothing was the peer's end (what
	 * SSL_OP_IGNORE_UNEXPECTED_EOF then takes as a close_notify). */
	if (n == 0 && len > 0)
		BIO_set_flags(b, BIO_FLAGS_IN_EOF);
	return (int)n;
}

static long sock_bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	switch (cmd) {
	case BIO_CTRL_FLUSH:
		return 1;
	case BIO_CTRL_EOF:
		return BIO_test_flags(b, BIO_FLAGS_IN_EOF) != 0;
	case BIO_C_GET_FD:
		if (ptr)
			*(int *)ptr = (int)(intptr_t)BIO_get_data(b);
		return (int)(intptr_t)BIO_get_data(b);
	default:
		return 0;
	}
}

static int sock_bio_create(BIO *b)
{
	BIO_set_init(b, 1);
	return 1;
}

static pthread_once_t bio_once = PTHREAD_ONCE_INIT;
static BIO_METHOD *bio_method;

static void bio_method_once(void)
{
	BIO_METHOD *m =
		BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR,
			     "sandlock socket");

	if (m && BIO_meth_set_write(m, sock_bio_write) && BIO_meth_set_read(m, sock_bio_read) &&
	    BIO_meth_set_ctrl(m, sock_bio_ctrl) && BIO_meth_set_create(m, sock_bio_create))
		bio_method = m;
	else
		BIO_meth_free(m);
}

static BIO *sock_bio_new(int fd)
{
	BIO *b;

	pthread_once(&bio_once, bio_method_once);
	if (!bio_method || !(b = BIO_new(bio_method)))
		return NULL;
	BIO_set_data(b, (void *)(intptr_t)fd);
	return b;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The deadline of a call with @timeout_ms, -1 for none. */
static int64_t deadline_of(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
}

/* Wait for @events on @fd until @deadline: 0 when ready (or hung up: the next call says
 * how), -ETIMEDOUT, -errno. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };

	for (;;) {
		int64_t left = deadline < 0 ? -1 : deadline - now_ms();
		int r;

		if (deadline >= 0 && left < 0)
			left = 0;
		r = poll(&p, 1, left > INT32_MAX ? INT32_MAX : (int)left);
		if (r > 0)
			return 0;
		if (r == 0 && deadline >= 0 && now_ms() >= deadline)
			return -ETIMEDOUT;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

/* What to do after an SSL call on @s failed with @ret: 0 to retry (after waiting until
 * @deadline), 1 at a clean end of the stream, or -errno. */
static int ssl_retry(struct stream *s, int ret, int64_t deadline)
{
	int e = SSL_get_error(s->ssl, ret);

	switch (e) {
	case SSL_ERROR_WANT_READ:
		return wait_fd(s->fd, POLLIN, deadline);
	case SSL_ERROR_WANT_WRITE:
		return wait_fd(s->fd, POLLOUT, deadline);
	case SSL_ERROR_ZERO_RETURN:
		return 1;
	case SSL_ERROR_SYSCALL:
		if (errno == EPIPE || errno == ECONNRESET || errno == ETIMEDOUT)
			return -errno;
		return -ECONNRESET;
	default:
		return -ECONNRESET;
	}
}

static ssize_t plain_read(struct stream *s, void *buf, size_t len)
{
	int64_t deadline = deadline_of(s->timeout_ms);

	for (;;) {
		ssize_t n = recv(s->fd, buf, len, MSG_DONTWAIT);
		int r;

		if (n >= 0)
			return n;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		r = wait_fd(s->fd, POLLIN, deadline);
		if (r < 0)
			return r;
	}
}

/* After a read of @got bytes into @buf: the records already read ahead too, up to @len, with
 * no more reading from the socket. One SSL_read returns one record (16 KiB at most); a relay
 * that writes what it has then sends fewer, larger writes. */
static size_t ssl_read_more(struct stream *s, char *buf, size_t len, size_t got)
{
	size_t n;

	while (got < len && SSL_has_pending(s->ssl) &&
	       SSL_read_ex(s->ssl, buf + got, len - got, &n) == 1)
		got += n;
	/* A record not complete yet (WANT_READ), or the end: the next read says so. */
	ERR_clear_error();
	return got;
}

ssize_t stream_read(struct stream *s, void *buf, size_t len)
{
	int64_t deadline;

	if (s->fd < 0)
		return -EBADF;
	if (len == 0)
		return 0;
	if (!s->ssl)
		return plain_read(s, buf, len);
	deadline = deadline_of(s->timeout_ms);
	for (;;) {
		size_t n;
		int ret, r;

		ERR_clear_error();
		ret = SSL_read_ex(s->ssl, buf, len, &n);
		if (ret == 1)
			return (ssize_t)ssl_read_more(s, buf, len, n);
		r = ssl_retry(s, ret, deadline);
		if (r != 0) {
			ERR_clear_error();
			return r > 0 ? 0 : r;
		}
	}
}

static int plain_write_all(struct stream *s, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = send(s->fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		int r;

		if (n > 0) {
			p += n;
			len -= n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		/* The timeout bounds each wait for room: a slow reader that keeps taking bytes
		 * is not cut off in the middle of a large body. */
		r = wait_fd(s->fd, POLLOUT, deadline_of(s->timeout_ms));
		if (r < 0)
			return r;
	}
	return 0;
}

int stream_write_all(struct stream *s, const void *buf, size_t len)
{
	const char *p = buf;

	if (s->fd < 0)
		return -EBADF;
	if (!s->ssl)
		return plain_write_all(s, p, len);
	while (len > 0) {
		size_t n;
		int ret, r;

		ERR_clear_error();
		ret = SSL_write_ex(s->ssl, p, len, &n);
		if (ret == 1) {
			p += n;
			len -= n;
			continue;
		}
		r = ssl_retry(s, ret, deadline_of(s->timeout_ms));
		if (r != 0) {
			ERR_clear_error();
			return r > 0 ? -EPIPE : r;
		}
	}
	return 0;
}

int stream_wait_readable(struct stream *s, int timeout_ms)
{
	int r;

	if (s->fd < 0)
		return -EBADF;
	if (s->ssl && SSL_has_pending(s->ssl))
		return 1;
	r = wait_fd(s->fd, POLLIN, deadline_of(timeout_ms));
	return r == -ETIMEDOUT ? 0 : r < 0 ? r : 1;
}

int stream_can_splice(const struct stream *from, const struct stream *to)
{
	return from->fd >= 0 && to->fd >= 0 && !from->ssl && !to->ssl;
}

/* The @n bytes the pipe's read end @rfd holds, all to @to. */
static int splice_out(struct stream *to, int rfd, size_t n)
{
	while (n > 0) {
		ssize_t k = splice(rfd, NULL, to->fd, NULL, n, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		int r;

		if (k > 0) {
			n -= (size_t)k;
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		/* Bytes are in the pipe already: a socket that refuses them is an error of this
		 * transfer, never the -EINVAL that makes the caller copy instead. */
		if (k == 0 || errno != EAGAIN)
			return k == 0 || errno == EINVAL ? -EIO : -errno;
		r = wait_fd(to->fd, POLLOUT, deadline_of(to->timeout_ms));
		if (r < 0)
			return r;
	}
	return 0;
}

ssize_t stream_splice(struct stream *from, struct stream *to, const struct stream_pipe *p,
		      size_t max)
{
	int64_t deadline = deadline_of(from->timeout_ms);
	int r;

	if (from->fd < 0 || to->fd < 0)
		return -EBADF;
	/* A splice to a socket whose peer is gone raises SIGPIPE (splice has no MSG_NOSIGNAL):
	 * the proxy's threads block every signal (http_proxy_start), so it stays pending on the
	 * thread and the call returns EPIPE. */
	/* Non-blocking sockets: a splice takes what is there (a blocking one waits until @max
	 * bytes came) and a wait is a poll bounded by the timeout. Plain streams are read and
	 * written with MSG_DONTWAIT, so nothing else depends on the mode. */
	if ((r = fd_set_nonblock(from->fd, 1)) < 0 || (r = fd_set_nonblock(to->fd, 1)) < 0)
		return r;
	for (;;) {
		ssize_t n = splice(from->fd, NULL, p->fd[1], NULL, max,
				   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

		if (n > 0) {
			r = splice_out(to, p->fd[0], (size_t)n);
			return r < 0 ? r : n;
		}
		if (n == 0)
			return 0;
		if (errno == EINTR)
			continue;
		/* The pipe is empty here (every call empties it): EAGAIN is the socket's. */
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		r = wait_fd(from->fd, POLLIN, deadline);
		if (r < 0)
			return r;
	}
}

/* A new SSL of @ctx on s->fd, attached to @s (freed by stream_close from then on). */
static int ssl_attach(struct stream *s, SSL_CTX *ctx)
{
	BIO *bio;
	SSL *ssl;
	int r;

	if (s->fd < 0)
		return -EBADF;
	if (s->ssl)
		return -EALREADY;
	r = fd_set_nonblock(s->fd, 1);
	if (r < 0)
		return r;
	ssl = SSL_new(ctx);
	bio = ssl ? sock_bio_new(s->fd) : NULL;
	if (!bio) {
		SSL_free(ssl);
		return -ENOMEM;
	}
	SSL_set_bio(ssl, bio, bio);
	/* A partial write returns what went out, so the retry after WANT_WRITE is the rest. A
	 * TCP end without close_notify reads as the end of the stream: servers that close right
	 * after a response are common, and the HTTP framing finds a body cut short. */
	SSL_set_mode(ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_set_options(ssl, SSL_OP_IGNORE_UNEXPECTED_EOF);
	/* Read ahead: one recv takes what the socket has (up to the buffer), not a record's
	 * header and then its body. Bytes read ahead count as pending (SSL_has_pending), which
	 * is what stream_wait_readable looks at first. */
	SSL_set_read_ahead(ssl, 1);
	SSL_set_default_read_buffer_len(ssl, STREAM_TLS_READ_BUF);
	s->ssl = ssl;
	return 0;
}

static int handshake(struct stream *s, char *why, size_t whylen)
{
	int64_t deadline = deadline_of(s->timeout_ms);

	for (;;) {
		int ret, r;

		ERR_clear_error();
		ret = SSL_do_handshake(s->ssl);
		if (ret == 1)
			return 0;
		r = ssl_retry(s, ret, deadline);
		if (r == 0)
			continue;
		if (r == -ETIMEDOUT)
			snprintf(why, whylen, "TLS handshake timed out");
		else
			tls_failure_reason(s->ssl, why, whylen);
		ERR_clear_error();
		return r == -ETIMEDOUT ? -ETIMEDOUT : -EPROTO;
	}
}

int stream_tls_accept(struct stream *s, SSL_CTX *ctx, void *app, char *why, size_t whylen)
{
	int r = ssl_attach(s, ctx);

	if (r < 0) {
		snprintf(why, whylen, "cannot start TLS: %s", strerror(-r));
		return r;
	}
	SSL_set_app_data(s->ssl, app);
	SSL_set_accept_state(s->ssl);
	return handshake(s, why, whylen);
}

int stream_tls_connect(struct stream *s, SSL_CTX *ctx, const char *host, char *why, size_t whylen)
{
	int r = ssl_attach(s, ctx);

	if (r == 0 && tls_client_expect(s->ssl, host) < 0)
		r = -EINVAL;
	if (r < 0) {
		snprintf(why, whylen, "cannot start TLS to %s: %s", host ? host : "(null)",
			 strerror(-r));
		return r;
	}
	SSL_set_connect_state(s->ssl);
	return handshake(s, why, whylen);
}

void stream_shutdown_write(struct stream *s)
{
	if (s->fd < 0)
		return;
	if (s->ssl && SSL_is_init_finished(s->ssl)) {
		int64_t deadline = deadline_of(s->timeout_ms);

		/* One close_notify; SSL_shutdown returns 0 once it is sent (the peer's may come
		 * later, and reads go on until it does). */
		for (;;) {
			int ret;

			ERR_clear_error();
			ret = SSL_shutdown(s->ssl);
			if (ret >= 0 || SSL_get_error(s->ssl, ret) != SSL_ERROR_WANT_WRITE ||
			    wait_fd(s->fd, POLLOUT, deadline) < 0)
				break;
		}
		ERR_clear_error();
	}
	(void)shutdown(s->fd, SHUT_WR);
}

void stream_close(struct stream *s)
{
	SSL_free(s->ssl);
	s->ssl = NULL;
	s->fd = safe_close(s->fd);
}
