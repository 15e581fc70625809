/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tls: the proxy's CA (loaded from http_ca/http_key, or generated in memory), its PEM, the
 * client side's context and expectations, and the one-line reasons of failed handshakes.
 * Leaves and the server side are tls-mint.c. OpenSSL is initialised on the first call here,
 * never at start: a sandbox without a proxy runs none of it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/tls.h"
#include "http/tls-internal.h"
#include "macro.h"

static pthread_once_t tls_once = PTHREAD_ONCE_INIT;
static int tls_init_ok;

static void tls_init_once(void)
{
	/* No atexit cleanup: a program embedding libsandlock may exit while a proxy thread still
	 * holds OpenSSL objects, and OpenSSL's cleanup would free them under it. */
	tls_init_ok = OPENSSL_init_ssl(OPENSSL_INIT_NO_ATEXIT | OPENSSL_INIT_LOAD_CONFIG, NULL);
}

int tls_init(void)
{
	pthread_once(&tls_once, tls_init_once);
	return tls_init_ok ? 0 : -ENOMEM;
}

EVP_PKEY *tls_ec_key_new(void)
{
	return EVP_EC_gen("P-256");
}

int tls_cert_stamp(X509 *x, long not_after_s)
{
	unsigned char serial[16];
	BIGNUM *bn;
	int ok;

	/* A random 128-bit serial, positive (top bit clear) and never zero. */
	if (RAND_bytes(serial, sizeof(serial)) != 1)
		return -EIO;
	serial[0] = (serial[0] & 0x7f) | 0x01;
	bn = BN_bin2bn(serial, sizeof(serial), NULL);
	if (!bn)
		return -ENOMEM;
	ok = BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
	BN_free(bn);
	if (!ok)
		return -ENOMEM;
	/* An hour of slack before now: a client whose clock runs a little behind the host's
	 * still accepts the certificate. */
	if (!X509_gmtime_adj(X509_getm_notBefore(x), -3600) ||
	    !X509_gmtime_adj(X509_getm_notAfter(x), not_after_s))
		return -ENOMEM;
	return 0;
}

int tls_cert_init(X509 *x, EVP_PKEY *pubkey, long not_after_s)
{
	if (!X509_set_version(x, X509_VERSION_3) || !X509_set_pubkey(x, pubkey))
		return -ENOMEM;
	return tls_cert_stamp(x, not_after_s);
}

int tls_cert_add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	ext = X509V3_EXT_nconf_nid(NULL, &ctx, nid, value);
	if (!ext)
		return -EINVAL;
	ok = X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	return ok ? 0 : -ENOMEM;
}

int tls_cert_sign(X509 *x, EVP_PKEY *key)
{
	int id = EVP_PKEY_get_base_id(key);
	const EVP_MD *md = id == EVP_PKEY_ED25519 || id == EVP_PKEY_ED448 ? NULL : EVP_sha256();

	return X509_sign(x, key, md) > 0 ? 0 : -EINVAL;
}

static struct tls_ca *ca_new(X509 *cert, EVP_PKEY *key, char *err, size_t errlen)
{
	struct tls_ca *ca = calloc(1, sizeof(*ca));

	if (!ca || !(ca->leaf_key = tls_ec_key_new())) {
		free(ca);
		snprintf(err, errlen, "cannot make the leaf certificates' key: out of memory");
		return NULL;
	}
	ca->cert = cert;
	ca->key = key;
	ca->leaf_template = tls_leaf_template(ca);
	if (!ca->leaf_template) {
		snprintf(err, errlen, "cannot make the leaf certificates' template: %s",
			 ERR_reason_error_string(ERR_peek_error()) ?: "out of memory");
		EVP_PKEY_free(ca->leaf_key);
		free(ca);
		return NULL;
	}
	pthread_mutex_init(&ca->lock, NULL);
	return ca;
}

void tls_ca_free(struct tls_ca *ca)
{
	if (!ca)
		return;
	tls_cache_clear(ca);
	pthread_mutex_destroy(&ca->lock);
	X509_free(ca->cert);
	EVP_PKEY_free(ca->key);
	EVP_PKEY_free(ca->leaf_key);
	X509_free(ca->leaf_template);
	free(ca);
}

static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	*(int *)u = 1;
	return -1;
}

/* Why @cert cannot sign leaves, or NULL when it can. */
static const char *ca_unfit(X509 *cert)
{
	uint32_t flags = X509_get_extension_flags(cert);

	if (flags & EXFLAG_INVALID)
		return "has invalid extensions";
	if (!(flags & EXFLAG_CA))
		return "is not a CA certificate (basicConstraints CA:TRUE is missing)";
	if ((flags & EXFLAG_KUSAGE) && !(X509_get_key_usage(cert) & KU_KEY_CERT_SIGN))
		return "is not a CA certificate (its keyUsage lacks keyCertSign)";
	if (X509_cmp_current_time(X509_get0_notAfter(cert)) <= 0)
		return "has expired";
	if (X509_cmp_current_time(X509_get0_notBefore(cert)) > 0)
		return "is not valid yet (its notBefore is in the future)";
	return NULL;
}

static X509 *read_cert(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	X509 *cert;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	cert = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	if (!cert)
		snprintf(err, errlen,
			 "%s: not a PEM certificate (expected -----BEGIN CERTIFICATE-----)", path);
	return cert;
}

static EVP_PKEY *read_key(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	EVP_PKEY *key;
	int asked = 0;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	key = PEM_read_PrivateKey(f, NULL, no_passphrase, &asked);
	fclose(f);
	if (!key && asked)
		snprintf(err, errlen,
			 "%s: the private key is encrypted (decrypt it: openssl pkey -in %s -out "
			 "KEY)",
			 path, path);
	else if (!key)
		snprintf(err, errlen,
			 "%s: not a PEM private key (expected -----BEGIN PRIVATE KEY-----)", path);
	return key;
}

int tls_ca_load(const char *cert_path, const char *key_path, struct tls_ca **ret, char *err,
		size_t errlen)
{
	const char *why;
	struct tls_ca *ca;
	EVP_PKEY *key;
	X509 *cert;

	if (tls_init() < 0) {
		snprintf(err, errlen, "cannot initialise OpenSSL");
		return -ENOMEM;
	}
	cert = read_cert(cert_path, err, errlen);
	if (!cert)
		goto fail;
	why = ca_unfit(cert);
	if (why) {
		snprintf(err, errlen, "%s: %s", cert_path, why);
		X509_free(cert);
		goto fail;
	}
	key = read_key(key_path, err, errlen);
	if (!key) {
		X509_free(cert);
		goto fail;
	}
	if (X509_check_private_key(cert, key) != 1) {
		snprintf(err, errlen, "%s: not the private key of the certificate %s", key_path,
			 cert_path);
		X509_free(cert);
		EVP_PKEY_free(key);
		goto fail;
	}
	ca = ca_new(cert, key, err, errlen);
	if (!ca) {
		X509_free(cert);
		EVP_PKEY_free(key);
		ERR_clear_error();
		return -ENOMEM;
	}
	*ret = ca;
	return 0;
fail:
	ERR_clear_error();
	return -EINVAL;
}

static int ca_self_sign(X509 *x, EVP_PKEY *key)
{
	unsigned char rnd[4];
	char cn[64];
	X509_NAME *name = X509_get_subject_name(x);
	int r;

	if (RAND_bytes(rnd, sizeof(rnd)) != 1)
		return -EIO;
	snprintf(cn, sizeof(cn), "sandlock ephemeral CA %02x%02x%02x%02x", rnd[0], rnd[1], rnd[2],
		 rnd[3]);
	r = tls_cert_init(x, key, 30L * 24 * 3600);
	if (r < 0)
		return r;
	if (!X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (unsigned char *)cn, -1, -1, 0) ||
	    !X509_set_issuer_name(x, name))
		return -ENOMEM;
	/* pathlen:0: this CA signs leaves only, never another CA. */
	if ((r = tls_cert_add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE,pathlen:0")) < 0 ||
	    (r = tls_cert_add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign")) < 0 ||
	    (r = tls_cert_add_ext(x, x, NID_subject_key_identifier, "hash")) < 0 ||
	    (r = tls_cert_add_ext(x, x, NID_authority_key_identifier, "keyid:always")) < 0)
		return r;
	return tls_cert_sign(x, key);
}

int tls_ca_generate(struct tls_ca **ret, char *err, size_t errlen)
{
	struct tls_ca *ca;
	EVP_PKEY *key;
	X509 *x;

	if (tls_init() < 0) {
		snprintf(err, errlen, "cannot initialise OpenSSL");
		return -ENOMEM;
	}
	key = tls_ec_key_new();
	x = X509_new();
	if (!key || !x || ca_self_sign(x, key) < 0) {
		snprintf(err, errlen, "cannot generate the ephemeral CA: %s",
			 ERR_reason_error_string(ERR_peek_error()) ?: "out of memory");
		X509_free(x);
		EVP_PKEY_free(key);
		ERR_clear_error();
		return -ENOMEM;
	}
	ca = ca_new(x, key, err, errlen);
	if (!ca) {
		X509_free(x);
		EVP_PKEY_free(key);
		return -ENOMEM;
	}
	*ret = ca;
	return 0;
}

int tls_ca_pem(const struct tls_ca *ca, char **ret, size_t *len)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *data, *copy;
	long n;

	if (!bio)
		return -ENOMEM;
	if (!PEM_write_bio_X509(bio, ca->cert)) {
		BIO_free(bio);
		ERR_clear_error();
		return -ENOMEM;
	}
	n = BIO_get_mem_data(bio, &data);
	copy = n > 0 ? malloc(n + 1) : NULL;
	if (copy) {
		memcpy(copy, data, n);
		copy[n] = '\0';
	}
	BIO_free(bio);
	if (!copy)
		return -ENOMEM;
	*ret = copy;
	*len = n;
	return 0;
}

int tls_client_ctx(SSL_CTX **ret, char *err, size_t errlen)
{
	static const unsigned char alpn[] = "\x08http/1.1";
	SSL_CTX *ctx;

	if (tls_init() < 0 || !(ctx = SSL_CTX_new(TLS_client_method()))) {
		snprintf(err, errlen, "cannot make the upstream TLS context: out of memory");
		ERR_clear_error();
		return -ENOMEM;
	}
	/* The host's trust store: SSL_CERT_FILE and SSL_CERT_DIR when set, else OpenSSL's
	 * directory. A store that cannot be read leaves every verification failing, which is
	 * what a 502 then says. */
	if (!SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
	    !SSL_CTX_set_default_verify_paths(ctx) ||
	    SSL_CTX_set_alpn_protos(ctx, alpn, sizeof(alpn) - 1) != 0) {
		snprintf(err, errlen, "cannot set up the upstream TLS context: %s",
			 ERR_reason_error_string(ERR_peek_error()) ?: "out of memory");
		SSL_CTX_free(ctx);
		ERR_clear_error();
		return -ENOMEM;
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
	if (tls_resume_setup(ctx) < 0) {
		snprintf(err, errlen, "cannot set up the upstream TLS context: out of memory");
		SSL_CTX_free(ctx);
		return -ENOMEM;
	}
	*ret = ctx;
	return 0;
}

/* @host as a bare address literal (an IPv6 one may come in brackets) into @buf, or 0 when it
 * is a name. */
static int ip_literal(const char *host, char *buf, size_t len)
{
	unsigned char addr[16];
	size_t n = strlen(host);

	if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
		host++;
		n -= 2;
	}
	if (n >= len)
		return 0;
	memcpy(buf, host, n);
	buf[n] = '\0';
	return inet_pton(AF_INET, buf, addr) == 1 || inet_pton(AF_INET6, buf, addr) == 1;
}

int tls_client_expect(SSL *ssl, const char *host)
{
	char ip[INET6_ADDRSTRLEN];

	if (!host || !*host)
		return -EINVAL;
	/* An address gets no SNI (RFC 6066 allows names only) and is checked against the
	 * certificate's IP SANs. */
	if (ip_literal(host, ip, sizeof(ip))) {
		if (!X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), ip))
			return -EINVAL;
		return tls_resume_prepare(ssl, ip);
	}
	SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	if (!SSL_set_tlsext_host_name(ssl, host) || !SSL_set1_host(ssl, host)) {
		ERR_clear_error();
		return -EINVAL;
	}
	return tls_resume_prepare(ssl, host);
}

void tls_failure_reason(SSL *ssl, char *buf, size_t len)
{
	long v = ssl ? SSL_get_verify_result(ssl) : X509_V_OK;
	unsigned long e;
	const char *why;

	if (v != X509_V_OK) {
		snprintf(buf, len, "certificate verify failed: %s",
			 X509_verify_cert_error_string(v));
		return;
	}
	e = ERR_peek_error();
	why = e ? ERR_reason_error_string(e) : NULL;
	if (why)
		snprintf(buf, len, "%s", why);
	else if (e)
		snprintf(buf, len, "TLS error %lx", e);
	else
		snprintf(buf, len, "the connection closed during the TLS handshake");
}
