/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proxy-relay: moving bytes between a connection's two streams: reading a head into a
 * connection's buffer, relaying a body as its framing says (Content-Length counted, chunked
 * scanned by http_chunked_scan and passed verbatim, until-close to the end), the tunnel of a
 * websocket or CONNECT, and the upstream connection itself, made to exactly the original
 * destination with a bounded non-blocking connect. Between two plain sockets, bodies and tunnels
 * go through a pipe with splice(2) (socket to pipe to socket: the bytes stay in the kernel);
 * what the head's read buffered goes first, by copy. Chunked bodies are always copied: their
 * framing is scanned as they pass.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "basic/macro.h"
#include "http/proxy-internal.h"

ssize_t proxy_buf_fill(struct stream *s, struct proxy_buf *b)
{
	if (b->off > 0 && b->off + b->len == PROXY_BUF_CAP) {
		memmove(b->data, b->data + b->off, b->len);
		b->off = 0;
	}
	if (b->len == 0)
		b->off = 0;
	size_t room = PROXY_BUF_CAP - b->off - b->len;
	if (room == 0)
		return -ENOBUFS;
	ssize_t n = stream_read(s, b->data + b->off + b->len, room);
	if (n > 0)
		b->len += (size_t)n;
	return n;
}

void proxy_nodelay(int fd)
{
	int one = 1;

	/* Heads and bodies go out in separate writes: Nagle would hold the second one for the
	 * peer's delayed acknowledgement (40 ms a request on a kept-alive connection). */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void buf_take(struct proxy_buf *b, size_t n)
{
	b->off += n;
	b->len -= n;
	if (b->len == 0)
		b->off = 0;
}

int proxy_read_head(struct stream *s, struct proxy_buf *b, int is_request,
		    const struct http_span *method, struct http_head *h, char *err, size_t errlen)
{
	/* A head is parsed from the start of the buffer: move what is left of the last
	 * message's bytes there first. */
	if (b->off > 0) {
		memmove(b->data, b->data + b->off, b->len);
		b->off = 0;
	}
	for (;;) {
		if (b->len > 0) {
			int r = is_request ? http_request_parse(b->data, b->len, h, err, errlen)
					   : http_response_parse(b->data, b->len, method, h, err,
								 errlen);
			if (r != 0)
				return r;
			if (b->len == PROXY_BUF_CAP) {
				snprintf(err, errlen, "header section over %d bytes",
					 HTTP_HEAD_MAX);
				return -EBADMSG;
			}
		}
		ssize_t n = proxy_buf_fill(s, b);
		if (n == 0)
			return b->len == 0 ? -ENODATA : -EPIPE;
		if (n < 0)
			return (int)n;
	}
}

/* Write what @b holds of the body (at most @max bytes) to @to and consume it. */
static int pass(struct proxy_buf *b, size_t n, struct stream *to)
{
	int r = stream_write_all(to, b->data + b->off, n);
	if (r < 0)
		return r;
	buf_take(b, n);
	return 0;
}

/* More of a body whose end is still ahead into @b: 0, -EPIPE when @from ended first (a
 * truncated body), or -errno. */
static int fill_body(struct stream *from, struct proxy_buf *b)
{
	ssize_t n = proxy_buf_fill(from, b);

	return n > 0 ? 0 : n == 0 ? -EPIPE : (int)n;
}

/* The connection's pipe, made on first use: 1 when it is open, 0 when bytes are copied. */
static int conn_pipe(struct proxy_conn *c)
{
	int fd[2];

	if (c->pipe_state != 0)
		return c->pipe_state > 0;
	/* Out of descriptors: this body is copied, the next one tries again. */
	if (pipe2(fd, O_CLOEXEC | O_NONBLOCK) < 0)
		return 0;
	/* Past pipe-max-size or the user's pipe buffer limit the default size stays. */
	(void)fcntl(fd[1], F_SETPIPE_SZ, PROXY_PIPE_SIZE);
	int cap = fcntl(fd[1], F_GETPIPE_SZ);
	c->pipe_cap = cap > 0 ? (size_t)cap : 65536;
	c->pipe = (struct stream_pipe){ .fd = { fd[0], fd[1] } };
	c->pipe_state = 1;
	atomic_fetch_add(&c->p->n_fds, 2);
	return 1;
}

void proxy_pipe_close(struct proxy_conn *c)
{
	if (c->pipe_state <= 0)
		return;
	close(c->pipe.fd[0]);
	close(c->pipe.fd[1]);
	atomic_fetch_sub(&c->p->n_fds, 2);
	c->pipe_state = 0;
}

/* Up to @max bytes from @from to @to through the pipe: > 0 moved, 0 at @from's end,
 * -EOPNOTSUPP when they must be copied (TLS, no pipe, a socket splice refuses), -errno. */
static ssize_t splice_some(struct proxy_conn *c, struct stream *from, struct stream *to,
			   uint64_t max)
{
	if (!stream_can_splice(from, to) || !conn_pipe(c))
		return -EOPNOTSUPP;
	ssize_t n =
		stream_splice(from, to, &c->pipe, max < c->pipe_cap ? (size_t)max : c->pipe_cap);
	if (n == -EINVAL) {
		proxy_pipe_close(c);
		c->pipe_state = -1;
		return -EOPNOTSUPP;
	}
	/* A failed splice may leave bytes in the pipe: they never reach a later message. */
	if (n < 0)
		proxy_pipe_close(c);
	return n;
}

static int relay_length(struct proxy_conn *c, struct stream *from, struct proxy_buf *b,
			struct stream *to, uint64_t left)
{
	while (left > 0) {
		if (b->len == 0) {
			ssize_t n = splice_some(c, from, to, left);
			if (n > 0) {
				left -= (uint64_t)n;
				continue;
			}
			if (n == 0)
				return -EPIPE;
			if (n != -EOPNOTSUPP)
				return (int)n;
			int f = fill_body(from, b);
			if (f < 0)
				return f;
		}
		size_t k = b->len < left ? b->len : (size_t)left;
		int r = pass(b, k, to);
		if (r < 0)
			return r;
		left -= k;
	}
	return 0;
}

static int relay_chunked(struct stream *from, struct proxy_buf *b, struct stream *to, char *err,
			 size_t errlen)
{
	struct http_chunked st = { 0 };

	while (!st.done) {
		int f = b->len == 0 ? fill_body(from, b) : 0;
		if (f < 0)
			return f;
		long k = http_chunked_scan(&st, b->data + b->off, b->len, err, errlen);
		if (k < 0)
			return (int)k;
		int r = pass(b, (size_t)k, to);
		if (r < 0)
			return r;
	}
	return 0;
}

static int relay_until_close(struct proxy_conn *c, struct stream *from, struct proxy_buf *b,
			     struct stream *to)
{
	for (;;) {
		if (b->len > 0) {
			int r = pass(b, b->len, to);
			if (r < 0)
				return r;
		}
		ssize_t n = splice_some(c, from, to, UINT64_MAX);
		if (n > 0)
			continue;
		if (n != -EOPNOTSUPP)
			return (int)n;
		n = proxy_buf_fill(from, b);
		if (n == 0)
			return 0;
		if (n < 0)
			return (int)n;
	}
}

int proxy_relay_body(struct proxy_conn *c, struct stream *from, struct proxy_buf *b,
		     struct stream *to, enum http_body body, uint64_t length, char *err,
		     size_t errlen)
{
	switch (body) {
	case HTTP_BODY_NONE:
		return 0;
	case HTTP_BODY_LENGTH:
		return relay_length(c, from, b, to, length);
	case HTTP_BODY_CHUNKED:
		return relay_chunked(from, b, to, err, errlen);
	case HTTP_BODY_UNTIL_CLOSE:
		return relay_until_close(c, from, b, to);
	}
	return -EINVAL;
}

/* One step of the tunnel: what @from has (buffered first) goes to @to. 0 at @from's end. */
static int tunnel_step(struct proxy_conn *c, struct stream *from, struct proxy_buf *b,
		       struct stream *to)
{
	if (b->len == 0) {
		ssize_t k = splice_some(c, from, to, UINT64_MAX);
		if (k != -EOPNOTSUPP)
			return k > 0 ? 1 : (int)k;
		ssize_t n = proxy_buf_fill(from, b);
		if (n <= 0)
			return n == 0 ? 0 : (int)n;
	}
	int r = pass(b, b->len, to);
	return r < 0 ? r : 1;
}

void proxy_tunnel(struct proxy_conn *c)
{
	struct stream *s[2] = { &c->cli, &c->up };
	struct proxy_buf *b[2] = { &c->cin, &c->uin };
	int ended[2] = { 0, 0 };

	/* Bytes that arrived with the last head are the tunnel's first. */
	for (int i = 0; i < 2; i++)
		if (b[i]->len > 0 && pass(b[i], b[i]->len, s[1 - i]) < 0)
			return;
	/* No timeout: a tunnel may be quiet for long; stop ends it (shutdown). One side's end
	 * is passed on as the end of writing to the other, which may still answer. */
	c->cli.timeout_ms = c->up.timeout_ms = -1;
	while (!ended[0] || !ended[1]) {
		int ready = 0;
		for (int i = 0; i < 2; i++) {
			if (ended[i] || stream_wait_readable(s[i], 0) <= 0)
				continue;
			ready = 1;
			int r = tunnel_step(c, s[i], b[i], s[1 - i]);
			if (r < 0)
				return;
			if (r == 0) {
				ended[i] = 1;
				stream_shutdown_write(s[1 - i]);
			}
		}
		if (ready)
			continue;
		struct pollfd pfd[2] = { { .fd = ended[0] ? -1 : s[0]->fd, .events = POLLIN },
					 { .fd = ended[1] ? -1 : s[1]->fd, .events = POLLIN } };
		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			return;
	}
}

/* Wait for the non-blocking connect of @fd: 0, -ETIMEDOUT, or the connect's -errno. */
static int connect_wait(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	int n, e = 0;
	socklen_t len = sizeof(e);

	do
		n = poll(&pfd, 1, timeout_ms);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return negative_errno();
	if (n == 0)
		return -ETIMEDOUT;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0)
		return negative_errno();
	return e ? -e : 0;
}

int proxy_upstream_open(struct proxy_conn *c, char *why, size_t whylen)
{
	struct http_proxy *p = c->p;
	int fd = socket(c->orig.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return negative_errno();
	int r = proxy_conn_set_fd(c, &c->up, fd);
	if (r < 0)
		return r;
	proxy_nodelay(fd);
	if (connect(fd, (struct sockaddr *)&c->orig, c->orig_len) < 0) {
		r = errno == EINPROGRESS ? connect_wait(fd, p->cfg.upstream_timeout_ms)
					 : negative_errno();
		if (r < 0)
			return r;
	}
	/* The socket stays non-blocking: the streams poll before each call, a TLS stream needs
	 * it, and a splice takes what is there rather than waiting for all it asked. */
	c->up.timeout_ms = p->cfg.upstream_timeout_ms;
	c->uin.off = c->uin.len = 0;
	if (!c->tls)
		return 0;
	return stream_tls_connect(&c->up, p->tls_client, c->tls_name, why, whylen);
}
