/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tls-resume: the upstream side's TLS sessions, kept so that the next connection to the same
 * server resumes instead of doing a full handshake (no certificate sent, none verified, no
 * signature by the server): what a browser or curl does. A session is kept per name and
 * address (the SNI name or IP literal the proxy expects, and the original destination the
 * socket is connected to), only from a handshake that verified the server for that name, so
 * that resuming it is what verifying again would give. The cache is the client context's
 * (ex data), bounded, its oldest entry replaced when full. A TLS 1.3 session is taken out when
 * used (its tickets are single use, RFC 8446 appendix C.4: the resumed connection brings new
 * ones); a TLS 1.2 one stays.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "http/tls-internal.h"

#define RESUME_MAX 64
#define KEY_MAX (253 + INET6_ADDRSTRLEN + 16)

struct resume_entry {
	char key[KEY_MAX];
	SSL_SESSION *sess; /* owned; NULL: a free slot */
	unsigned long stamp;
};

struct resume_cache {
	pthread_mutex_t lock;
	unsigned long clock;
	struct resume_entry e[RESUME_MAX];
};

static pthread_once_t idx_once = PTHREAD_ONCE_INIT;
static int ctx_idx = -1, ssl_idx = -1;

static void cache_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp)
{
	struct resume_cache *rc = ptr;

	if (!rc)
		return;
	for (size_t i = 0; i < RESUME_MAX; i++)
		SSL_SESSION_free(rc->e[i].sess);
	pthread_mutex_destroy(&rc->lock);
	free(rc);
}

static void key_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp)
{
	free(ptr);
}

static void idx_init(void)
{
	ctx_idx = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, cache_free);
	ssl_idx = SSL_get_ex_new_index(0, NULL, NULL, NULL, key_free);
}

/* The new session of a handshake (TLS 1.3: each ticket as it arrives). A copy is kept: the
 * connection's own session is marked not resumable when the SSL is freed without a
 * close_notify sent, which is how the proxy ends an upstream connection. 0: the connection
 * keeps its reference. */
static int new_session(SSL *ssl, SSL_SESSION *sess)
{
	struct resume_cache *rc = SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), ctx_idx);
	const char *key = SSL_get_ex_data(ssl, ssl_idx);
	struct resume_entry *slot = NULL;

	if (!rc || !key || !SSL_SESSION_is_resumable(sess) ||
	    SSL_get_verify_result(ssl) != X509_V_OK)
		return 0;
	SSL_SESSION *copy = SSL_SESSION_dup(sess);
	if (!copy)
		return 0;
	pthread_mutex_lock(&rc->lock);
	for (size_t i = 0; i < RESUME_MAX; i++) {
		struct resume_entry *e = &rc->e[i];

		if (e->sess && strcmp(e->key, key) == 0) {
			slot = e;
			break;
		}
		if (!slot || (slot->sess && (!e->sess || e->stamp < slot->stamp)))
			slot = e;
	}
	SSL_SESSION_free(slot->sess);
	snprintf(slot->key, sizeof(slot->key), "%s", key);
	slot->sess = copy;
	slot->stamp = ++rc->clock;
	pthread_mutex_unlock(&rc->lock);
	return 0;
}

int tls_resume_setup(SSL_CTX *ctx)
{
	struct resume_cache *rc;

	pthread_once(&idx_once, idx_init);
	if (ctx_idx < 0 || ssl_idx < 0 || !(rc = calloc(1, sizeof(*rc))))
		return -ENOMEM;
	pthread_mutex_init(&rc->lock, NULL);
	if (!SSL_CTX_set_ex_data(ctx, ctx_idx, rc)) {
		cache_free(NULL, rc, NULL, 0, 0, NULL);
		return -ENOMEM;
	}
	/* Sessions go to new_session only: OpenSSL's own store is a server's, by session id. */
	SSL_CTX_set_session_cache_mode(ctx,
				       SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
	SSL_CTX_sess_set_new_cb(ctx, new_session);
	return 0;
}

/* "name address port" of @ssl's connected socket into @key, or -errno. */
static int key_of(SSL *ssl, const char *name, char *key, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char ip[INET6_ADDRSTRLEN];
	int port;

	if (getpeername(SSL_get_fd(ssl), (struct sockaddr *)&ss, &sl) < 0)
		return -errno;
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;
		inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
		port = ntohs(a->sin_port);
	} else if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
		inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
		port = ntohs(a->sin6_port);
	} else {
		return -EAFNOSUPPORT;
	}
	int n = snprintf(key, len, "%s %s %d", name, ip, port);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int tls_resume_prepare(SSL *ssl, const char *name)
{
	struct resume_cache *rc = SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), ctx_idx);
	char key[KEY_MAX];
	SSL_SESSION *sess = NULL;

	/* No cache or no key: a full handshake, which is always correct. */
	if (!rc || key_of(ssl, name, key, sizeof(key)) < 0)
		return 0;
	char *k = strdup(key);
	if (!k || !SSL_set_ex_data(ssl, ssl_idx, k)) {
		free(k);
		return 0;
	}
	pthread_mutex_lock(&rc->lock);
	for (size_t i = 0; i < RESUME_MAX; i++) {
		struct resume_entry *e = &rc->e[i];

		if (!e->sess || strcmp(e->key, key) != 0)
			continue;
		sess = e->sess;
		if (SSL_SESSION_get_protocol_version(sess) == TLS1_3_VERSION)
			e->sess = NULL;
		else
			SSL_SESSION_up_ref(sess);
		break;
	}
	pthread_mutex_unlock(&rc->lock);
	if (sess) {
		/* A session the server no longer takes costs nothing more than a full handshake,
		 * which OpenSSL then does. */
		(void)SSL_set_session(ssl, sess);
		SSL_SESSION_free(sess);
	}
	return 0;
}
