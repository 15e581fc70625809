/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tls-internal: what tls.c (the CA, the client side) and tls-mint.c (the leaves, their cache,
 * the server side) share. Nothing outside src/http/tls*.c includes it.
 */
#pragma once

#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <pthread.h>
#include <stddef.h>
#include <time.h>

#define TLS_CACHE_BUCKETS 256
/* The most names whose leaves are kept; the cache is emptied when one more is minted. A
 * sandbox that connects to more names than this pays a mint (about 0.2 ms) per new one. */
#define TLS_CACHE_MAX 1024
/* A leaf is valid for a day (from an hour before it is minted) and served for half of that:
 * a sandbox running for days gets fresh ones. */
#define TLS_LEAF_VALID_S (24L * 3600)
#define TLS_LEAF_REUSE_S (12L * 3600)

struct tls_leaf {
	struct tls_leaf *next;
	X509 *cert; /* one reference owned by the cache */
	time_t minted;
	char name[];
};

struct tls_ca {
	X509 *cert;
	EVP_PKEY *key;
	/* The key of every leaf this CA mints (EC P-256), made once: a leaf then costs one
	 * signature, not a key generation. It never leaves this process either. */
	EVP_PKEY *leaf_key;
	/* What every leaf shares (version, key, issuer, the extensions but the SAN), copied for
	 * each: setting a key on a certificate costs OpenSSL 3.0 an encoding and a decoding
	 * through its provider machinery (0.2 to 0.4 ms), a copy one decoding (0.15 ms). */
	X509 *leaf_template;
	pthread_mutex_t lock; /* guards the cache */
	struct tls_leaf *buckets[TLS_CACHE_BUCKETS];
	size_t n_leaves;
};

/* A random serial, and validity from an hour ago to @not_after_s from now. */
int tls_cert_stamp(X509 *x, long not_after_s);
/* Version 3, @pubkey, and tls_cert_stamp. */
int tls_cert_init(X509 *x, EVP_PKEY *pubkey, long not_after_s);
/* Add extension @nid from its OpenSSL config-string form @value, @issuer giving the authority
 * key id. */
int tls_cert_add_ext(X509 *x, X509 *issuer, int nid, const char *value);
/* Sign @x with @key: SHA-256, or the key's own digest for Ed25519/Ed448. */
int tls_cert_sign(X509 *x, EVP_PKEY *key);

/* A new EC P-256 key, or NULL. */
EVP_PKEY *tls_ec_key_new(void);

/* The template of @ca's leaves (ca->cert and ca->leaf_key set), or NULL. */
X509 *tls_leaf_template(const struct tls_ca *ca);

/* The leaf for @name (a DNS name or an address literal), from the cache or minted now, with
 * a reference the caller owns (X509_free); NULL for an invalid name or out of memory. */
X509 *tls_leaf_get(struct tls_ca *ca, const char *name);

/* Free every cached leaf (the lock held, or the CA no longer shared). */
void tls_cache_clear(struct tls_ca *ca);

/* tls-resume.c: the client context's cache of upstream sessions (set up once per context),
 * and on each new connection's @ssl, connected and about to handshake, the session kept for
 * @name (the expected SNI name or IP literal) and the socket's peer, if any. 0 or -ENOMEM. */
int tls_resume_setup(SSL_CTX *ctx);
int tls_resume_prepare(SSL *ssl, const char *name);

/* Make OpenSSL ready (once): nothing of it runs before the first CA or context is made. */
int tls_init(void);
