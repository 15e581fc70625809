/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tls: the proxy's certificates and TLS contexts (OpenSSL). A CA, loaded from http_ca and
 * http_key or generated for the sandbox (its key only ever in this process's memory), mints
 * one leaf certificate per name the sandbox connects to (cached); the server side terminates
 * the sandbox's TLS with them, offering only http/1.1 in ALPN; the client side speaks TLS to
 * the real server and verifies it against the host's trust store (OpenSSL's default paths:
 * SSL_CERT_FILE and SSL_CERT_DIR are honoured) and the name. Nothing here reads a socket: the
 * proxy drives the SSL objects.
 *
 * Thread safety: a tls_ca is used by the proxy's thread only after tls_ca_load/generate
 * returned; tls_ca_pem may be called from any thread.
 */
#pragma once

#include <netinet/in.h>
#include <openssl/ssl.h>
#include <stddef.h>
#include <stdint.h>

struct tls_ca;

/* Load the CA certificate @cert_path and its private key @key_path (PEM). A one-line error
 * naming the file in @err for an unreadable file, a file that is not PEM, a certificate that
 * is not a CA (basicConstraints CA:TRUE and, when present, keyCertSign), a key that is not the
 * certificate's. *@ret owned by the caller (tls_ca_free). */
int tls_ca_load(const char *cert_path, const char *key_path, struct tls_ca **ret, char *err,
		size_t errlen);

/* A new CA (ECDSA P-256, self-signed, valid from an hour ago for 30 days, subject
 * "CN=sandlock ephemeral CA <random>"): the key exists in memory only. */
int tls_ca_generate(struct tls_ca **ret, char *err, size_t errlen);

void tls_ca_free(struct tls_ca *ca);

/* The CA's certificate as PEM (never the key). *@ret malloc'd and NUL-terminated, owned by the
 * caller; *@len its length without the NUL. */
int tls_ca_pem(const struct tls_ca *ca, char **ret, size_t *len);

/* The server side: a context whose client-hello callback asks @choose which name the
 * connection's leaf is for, then mints (or takes from the cache) that leaf and uses it.
 * @choose gets the SNI name (lower case, NULL when the client sent none) and the SSL (its
 * app data is the proxy's connection); it fills @name (a DNS name, or an IP address literal,
 * which gets an IP SAN) and returns 0, or -EPERM to refuse the handshake. ALPN: "http/1.1"
 * when the client offers it, no ALPN otherwise. TLS 1.2 and 1.3. *@ret owned by the caller
 * (SSL_CTX_free); it holds a reference to @ca, which must outlive it. */
typedef int (*tls_choose_fn)(SSL *ssl, const char *sni, char *name, size_t namelen);
int tls_server_ctx(struct tls_ca *ca, tls_choose_fn choose, SSL_CTX **ret, char *err,
		   size_t errlen);

/* The client side: TLS 1.2 and 1.3, peer verification against OpenSSL's default trust paths,
 * ALPN "http/1.1". *@ret owned by the caller (SSL_CTX_free). */
int tls_client_ctx(SSL_CTX **ret, char *err, size_t errlen);

/* Prepare @ssl (from tls_client_ctx, its socket connected) to connect to @host: SNI when @host
 * is a name, the verification of @host (SSL_set1_host or the IP address) against the
 * certificate, and the session kept from an earlier connection to @host at that address. */
int tls_client_expect(SSL *ssl, const char *host);

/* Why the last handshake of @ssl failed, for a 502's one-line body ("certificate verify
 * failed: unable to get local issuer certificate", "hostname mismatch", ...), into @buf. */
void tls_failure_reason(SSL *ssl, char *buf, size_t len);
