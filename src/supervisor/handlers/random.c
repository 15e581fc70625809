/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/random: random_seed. The sandbox's randomness is ChaCha20 keystream (RFC 8439)
 * under key = the seed as 8 little-endian bytes followed by 24 zero bytes, and nonce = a
 * stream number as 4 little-endian bytes followed by "sandlock", counter from 0:
 *  - stream 0: getrandom(2), made here: the bytes asked for, in the order the calls come;
 *  - stream k (k >= 1): the k-th open of /dev/urandom or /dev/random (the character devices
 *    1:9 and 1:8, by whatever name the supervisor resolves: open.c), answered with one end of
 *    a socket pair whose other end a worker fills with the stream until it is closed.
 * A single-threaded program, and its descendants one at a time, thus reads the same bytes in
 * every run with the same seed.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/random.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "chacha20.h"
#include "fd-util.h"
#include "handlers.h"
#include "macro.h"
#include "random.h"
#include "supervisor/child.h"
#include "supervisor/supervisor.h"

/* The most bytes one getrandom answers (it may answer fewer than asked, as the kernel does for
 * a large request interrupted by a signal; callers loop). */
#define RANDOM_MAX_CALL (1 << 20)
/* The most /dev/urandom streams open at once: each holds a worker. */
#define RANDOM_MAX_STREAMS 16

static void stream_init(struct chacha20 *c, uint64_t seed, uint32_t stream)
{
	uint8_t key[32] = { 0 }, nonce[12] = { 0 };

	for (int i = 0; i < 8; i++)
		key[i] = (uint8_t)(seed >> (8 * i));
	for (int i = 0; i < 4; i++)
		nonce[i] = (uint8_t)(stream >> (8 * i));
	memcpy(nonce + 4, "sandlock", 8);
	chacha20_init(c, key, nonce, 0);
}

void random_init(struct supervisor *sv, uint64_t seed)
{
	sv->random.seeded = 1;
	sv->random.seed = seed;
	stream_init(&sv->random.getrandom, seed, 0);
}

/* getrandom(buf, len, flags): the next bytes of stream 0, written into the caller. */
int handle_getrandom(struct supervisor *sv, const struct seccomp_notif *req,
		     struct seccomp_notif_resp *resp)
{
	unsigned flags = (unsigned)req->data.args[2];
	size_t len = MIN((size_t)req->data.args[1], (size_t)RANDOM_MAX_CALL);

	/* The kernel's checks first: unknown flags, or GRND_INSECURE with GRND_RANDOM. */
	if ((flags & ~(unsigned)(GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE)) ||
	    ((flags & GRND_INSECURE) && (flags & GRND_RANDOM)))
		return -EINVAL;
	if (len == 0) {
		notif_answer_value(resp, 0);
		return 0;
	}
	_cleanup_free_ uint8_t *buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	/* Taken from the stream before the write: a caller whose buffer is unwritable (EFAULT)
	 * still moves the stream on, as the same program does in every run. */
	chacha20_stream(&sv->random.getrandom, buf, len);
	int r = notif_mem_write(sv->listener, req, req->data.args[0], buf, len);
	if (r < 0)
		return r;
	notif_answer_value(resp, (int64_t)len);
	return 0;
}

/* What an open of a random device finds there at once (reads up to this size are answered
 * whole, O_NONBLOCK or not). */
#define RANDOM_PREFILL 65536

struct stream_job {
	struct chacha20 c;
	atomic_int *live;
	size_t left, off; /* prefill bytes the socket did not take yet */
	uint8_t pre[RANDOM_PREFILL];
};

/* On a worker: fill @sock with the stream until the sandbox's end is closed (or the sandbox
 * ends: the pool shuts the socket down). */
static void stream_worker(int listener, int sock, void *arg)
{
	struct stream_job *job = arg;
	uint8_t buf[16384];

	while (listener >= 0 && job->left) {
		ssize_t k = send(sock, job->pre + job->off, job->left, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			goto done;
		job->off += (size_t)k;
		job->left -= (size_t)k;
	}
	for (;;) {
		if (listener < 0)
			break;
		chacha20_stream(&job->c, buf, sizeof(buf));
		size_t off = 0;
		while (off < sizeof(buf)) {
			ssize_t k = send(sock, buf + off, sizeof(buf) - off, MSG_NOSIGNAL);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				goto done;
			off += (size_t)k;
		}
	}
done:
	atomic_fetch_sub(job->live, 1);
	free(job);
}

int random_serve_open(struct supervisor *sv, const struct seccomp_notif *req, uint64_t flags)
{
	int pair[2];

	if (atomic_load(&sv->random.live) >= RANDOM_MAX_STREAMS)
		return -EMFILE;
	struct stream_job *job = malloc(sizeof(*job));
	if (!job)
		return -ENOMEM;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0) {
		free(job);
		return negative_errno();
	}
	_cleanup_close_ int theirs = pair[1];
	/* The sandbox's end reads only. */
	(void)shutdown(theirs, SHUT_WR);
	stream_init(&job->c, sv->random.seed, ++sv->random.opens);
	job->live = &sv->random.live;
	/* The first bytes there before the open returns: a read of up to RANDOM_PREFILL bytes
	 * gets them all at once, in every run (the socket's buffer holds more than that). */
	int sndbuf = 4 * RANDOM_PREFILL;
	(void)setsockopt(pair[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	chacha20_stream(&job->c, job->pre, sizeof(job->pre));
	ssize_t sent = send(pair[0], job->pre, sizeof(job->pre), MSG_DONTWAIT | MSG_NOSIGNAL);
	job->off = sent > 0 ? (size_t)sent : 0;
	job->left = sizeof(job->pre) - job->off;
	atomic_fetch_add(&sv->random.live, 1);
	int r = supervisor_run_worker(sv, pair[0], stream_worker, job);
	if (r < 0) {
		atomic_fetch_sub(&sv->random.live, 1);
		close(pair[0]);
		free(job);
		return r;
	}
	/* O_NONBLOCK is not passed on: the device never makes a reader wait, and a reader of
	 * this socket waits at most for the worker to write the next bytes. */
	return notif_addfd_send(sv->listener, req, theirs, (flags & O_CLOEXEC) != 0);
}
