/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stream: one side of a proxied connection, a socket spoken to directly or through TLS, with
 * blocking calls bounded by a timeout (poll before each read and write; SSL_pending first).
 * Each of the proxy's connection threads owns its two streams.
 */
#pragma once

#include <openssl/ssl.h>
#include <stddef.h>
#include <sys/types.h>

struct stream {
	int fd;		/* owned; -1: closed */
	SSL *ssl;	/* owned; NULL: plain */
	int timeout_ms; /* for each read and write; < 0: none */
};

/* Up to @len bytes: > 0, 0 at the end of the stream (a TLS close_notify or EOF), -ETIMEDOUT,
 * or -errno (-ECONNRESET for a TLS error). */
ssize_t stream_read(struct stream *s, void *buf, size_t len);
/* All @len bytes, or -ETIMEDOUT / -EPIPE / -errno. */
int stream_write_all(struct stream *s, const void *buf, size_t len);
/* 1 when bytes are buffered (SSL_pending) or readable within @timeout_ms, 0 when not, -errno. */
int stream_wait_readable(struct stream *s, int timeout_ms);

/* A pipe carrying bytes from one plain socket to another with splice(2), so that a body never
 * passes through user space: fd[0] the read end, fd[1] the write end. */
struct stream_pipe {
	int fd[2];
};

/* 1 when bytes can go from @from to @to by stream_splice: both plain sockets. */
int stream_can_splice(const struct stream *from, const struct stream *to);
/* Move up to @max bytes of what @from has (waiting for some within its timeout) through @p to
 * @to, all of them written before it returns (each wait for room within @to's timeout): > 0
 * bytes moved, 0 at @from's end, -EINVAL when a socket cannot be spliced and nothing moved
 * (copy instead), -ETIMEDOUT, or -errno. After an error the pipe may hold bytes: it is closed
 * then, never used again. */
ssize_t stream_splice(struct stream *from, struct stream *to, const struct stream_pipe *p,
		      size_t max);

/* The server-side handshake on s->fd with @ctx (tls_server_ctx); @app is set as the SSL's app
 * data before it starts (what the context's choose callback gets). -EPROTO with @why filled
 * when it fails. */
int stream_tls_accept(struct stream *s, SSL_CTX *ctx, void *app, char *why, size_t whylen);
/* The client-side handshake on s->fd with @ctx (tls_client_ctx), expecting @host
 * (tls_client_expect). -EPROTO with the verification failure in @why. */
int stream_tls_connect(struct stream *s, SSL_CTX *ctx, const char *host, char *why, size_t whylen);

/* Close the write side: TLS close_notify, then shutdown(SHUT_WR). */
void stream_shutdown_write(struct stream *s);
/* Free the SSL, close the descriptor. Idempotent. */
void stream_close(struct stream *s);
