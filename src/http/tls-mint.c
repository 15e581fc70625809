/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tls-mint: the leaf certificates the proxy shows the sandbox (one per name, minted from the
 * CA with the CA's one leaf key, cached), and the server side's context: its client-hello
 * callback reads the SNI, asks the proxy which name the leaf is for, and installs that leaf
 * before OpenSSL picks a certificate; its ALPN callback accepts http/1.1 only.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http/tls.h"
#include "http/tls-internal.h"
#include "macro.h"

/* The longest DNS name (RFC 1035), and the longest a certificate's CN may be (RFC 5280). */
#define NAME_MAX_LEN 253
#define CN_MAX_LEN 64

struct server_arg {
	struct tls_ca *ca;
	tls_choose_fn choose;
};

static pthread_once_t ex_once = PTHREAD_ONCE_INIT;
static int ex_index = -1;

static void server_arg_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl,
			    void *argp)
{
	free(ptr);
}

static void ex_index_once(void)
{
	ex_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, server_arg_free);
}

static unsigned cache_hash(const char *name)
{
	unsigned h = 2166136261u;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	return h % TLS_CACHE_BUCKETS;
}

void tls_cache_clear(struct tls_ca *ca)
{
	for (size_t i = 0; i < TLS_CACHE_BUCKETS; i++) {
		while (ca->buckets[i]) {
			struct tls_leaf *l = ca->buckets[i];

			ca->buckets[i] = l->next;
			X509_free(l->cert);
			free(l);
		}
	}
	ca->n_leaves = 0;
}

/* A DNS name made of letters, digits, '-', '_' and dots, not starting or ending with a dot:
 * what may go into a dNSName SAN. */
static int dns_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > NAME_MAX_LEN || name[0] == '.' || name[n - 1] == '.')
		return 0;
	for (const char *p = name; *p; p++) {
		char c = *p;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_' || c == '.'))
			return 0;
		if (c == '.' && p[1] == '.')
			return 0;
	}
	return 1;
}

static int ip_literal_ok(const char *name)
{
	unsigned char addr[16];

	return inet_pton(AF_INET, name, addr) == 1 || inet_pton(AF_INET6, name, addr) == 1;
}

/* The one SAN of a leaf for @name: an IP address for an address literal, else a DNS name. */
static int add_san(X509 *x, const char *name, int critical)
{
	GENERAL_NAMES *gens = sk_GENERAL_NAME_new_null();
	GENERAL_NAME *gen = GENERAL_NAME_new();
	ASN1_OCTET_STRING *ip = ip_literal_ok(name) ? a2i_IPADDRESS(name) : NULL;
	ASN1_IA5STRING *dns = NULL;
	int ok = 0;

	if (!gens || !gen)
		goto out;
	if (ip) {
		GENERAL_NAME_set0_value(gen, GEN_IPADD, TAKE_PTR(ip));
	} else {
		dns = ASN1_IA5STRING_new();
		if (!dns || !ASN1_STRING_set(dns, name, -1))
			goto out;
		GENERAL_NAME_set0_value(gen, GEN_DNS, TAKE_PTR(dns));
	}
	if (!sk_GENERAL_NAME_push(gens, gen))
		goto out;
	gen = NULL;
	ok = X509_add1_ext_i2d(x, NID_subject_alt_name, gens, critical, X509V3_ADD_DEFAULT) == 1;
out:
	ASN1_IA5STRING_free(dns);
	ASN1_OCTET_STRING_free(ip);
	GENERAL_NAME_free(gen);
	sk_GENERAL_NAME_pop_free(gens, GENERAL_NAME_free);
	return ok ? 0 : -ENOMEM;
}

static int leaf_fill(struct tls_ca *ca, X509 *x, const char *name)
{
	X509_NAME *subject = X509_get_subject_name(x);
	size_t n = strlen(name);
	int r;

	r = tls_cert_init(x, ca->leaf_key, TLS_LEAF_VALID_S);
	if (r < 0)
		return r;
	/* Never past the CA's own end: a client would refuse the chain then anyway, and the
	 * error would name the leaf. */
	if (ASN1_TIME_compare(X509_get0_notAfter(x), X509_get0_notAfter(ca->cert)) > 0 &&
	    !X509_set1_notAfter(x, X509_get0_notAfter(ca->cert)))
		return -ENOMEM;
	/* A name too long for a CN leaves the subject empty, and the SAN is then critical (RFC
	 * 5280 4.2.1.6): clients match the SAN only anyway. */
	if (n <= CN_MAX_LEN && !X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
							   (const unsigned char *)name, -1, -1, 0))
		return -ENOMEM;
	if (!X509_set_issuer_name(x, X509_get_subject_name(ca->cert)))
		return -ENOMEM;
	if ((r = add_san(x, name, n > CN_MAX_LEN)) < 0 ||
	    (r = tls_cert_add_ext(x, ca->cert, NID_basic_constraints, "critical,CA:FALSE")) < 0 ||
	    (r = tls_cert_add_ext(x, ca->cert, NID_key_usage, "critical,digitalSignature")) < 0 ||
	    (r = tls_cert_add_ext(x, ca->cert, NID_ext_key_usage, "serverAuth")) < 0 ||
	    (r = tls_cert_add_ext(x, ca->cert, NID_subject_key_identifier, "hash")) < 0)
		return r;
	/* The authority key id repeats the CA's subject key id; a CA without one (a user's
	 * may lack it) gets leaves without it, which path building does without. */
	if (X509_get0_subject_key_id(ca->cert) &&
	    (r = tls_cert_add_ext(x, ca->cert, NID_authority_key_identifier, "keyid")) < 0)
		return r;
	return tls_cert_sign(x, ca->key);
}

static X509 *leaf_mint(struct tls_ca *ca, const char *name)
{
	X509 *x = X509_new();

	if (x && leaf_fill(ca, x, name) < 0) {
		X509_free(x);
		x = NULL;
	}
	return x;
}

/* The cached leaf of @name with one more reference, or NULL. A leaf minted more than
 * TLS_LEAF_REUSE_S ago (or in the future: the clock went back) is dropped instead, so that no
 * leaf handed out is close to its end. Called with the lock held. */
static X509 *cache_get(struct tls_ca *ca, const char *name, unsigned h, time_t now)
{
	for (struct tls_leaf **lp = &ca->buckets[h]; *lp; lp = &(*lp)->next) {
		struct tls_leaf *l = *lp;

		if (strcmp(l->name, name) != 0)
			continue;
		if (now - l->minted <= TLS_LEAF_REUSE_S && l->minted - now <= 60)
			return X509_up_ref(l->cert) ? l->cert : NULL;
		*lp = l->next;
		X509_free(l->cert);
		free(l);
		ca->n_leaves--;
		return NULL;
	}
	return NULL;
}

/* Minting happens outside the lock, so two threads asking for one new name at once may both
 * mint; the first stored wins. */
X509 *tls_leaf_get(struct tls_ca *ca, const char *name)
{
	size_t n = strlen(name);
	unsigned h = cache_hash(name);
	struct tls_leaf *l;
	time_t now = time(NULL);
	X509 *x, *had;

	if (n > NAME_MAX_LEN || (!dns_name_ok(name) && !ip_literal_ok(name)))
		return NULL;
	pthread_mutex_lock(&ca->lock);
	x = cache_get(ca, name, h, now);
	pthread_mutex_unlock(&ca->lock);
	if (x)
		return x;
	x = leaf_mint(ca, name);
	l = x ? malloc(sizeof(*l) + n + 1) : NULL;
	if (!l) {
		X509_free(x);
		return NULL;
	}
	memcpy(l->name, name, n + 1);
	pthread_mutex_lock(&ca->lock);
	had = cache_get(ca, name, h, now);
	if (!had) {
		/* Full: start over rather than track recency; a sandbox rarely talks to more
		 * than a few hundred names, and a dropped leaf costs one mint. */
		if (ca->n_leaves >= TLS_CACHE_MAX)
			tls_cache_clear(ca);
		l->cert = x;
		l->minted = now;
		l->next = ca->buckets[h];
		ca->buckets[h] = l;
		ca->n_leaves++;
		x = X509_up_ref(x) ? x : NULL;
		l = NULL;
	}
	pthread_mutex_unlock(&ca->lock);
	if (had) {
		X509_free(x);
		free(l);
		return had;
	}
	return x;
}

/* The host_name of a server_name extension (RFC 6066 3), lower-cased into @buf: 1, 0 when
 * there is none, -EINVAL when it is malformed or not a DNS name. */
static int sni_parse(const unsigned char *p, size_t len, char *buf, size_t buflen)
{
	size_t list;

	if (len < 2)
		return -EINVAL;
	list = (size_t)p[0] << 8 | p[1];
	if (list != len - 2)
		return -EINVAL;
	p += 2;
	len -= 2;
	while (len >= 3) {
		size_t n = (size_t)p[1] << 8 | p[2];

		if (n > len - 3)
			return -EINVAL;
		if (p[0] == TLSEXT_NAMETYPE_host_name) {
			if (n == 0 || n >= buflen || memchr(p + 3, '\0', n))
				return -EINVAL;
			for (size_t i = 0; i < n; i++) {
				unsigned char c = p[3 + i];

				buf[i] = c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
			}
			buf[n] = '\0';
			return dns_name_ok(buf) ? 1 : -EINVAL;
		}
		p += 3 + n;
		len -= 3 + n;
	}
	return len == 0 ? 0 : -EINVAL;
}

static int client_hello_cb(SSL *ssl, int *al, void *arg)
{
	const struct server_arg *sa = arg;
	char sni[NAME_MAX_LEN + 1], name[NAME_MAX_LEN + 1] = "";
	const unsigned char *ext;
	size_t len;
	X509 *leaf;
	int r = 0, ok;

	if (SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_server_name, &ext, &len))
		r = sni_parse(ext, len, sni, sizeof(sni));
	if (r < 0) {
		*al = SSL_AD_UNRECOGNIZED_NAME;
		return SSL_CLIENT_HELLO_ERROR;
	}
	if (sa->choose(ssl, r ? sni : NULL, name, sizeof(name)) < 0) {
		*al = SSL_AD_ACCESS_DENIED;
		return SSL_CLIENT_HELLO_ERROR;
	}
	name[sizeof(name) - 1] = '\0';
	leaf = tls_leaf_get(sa->ca, name);
	if (!leaf) {
		*al = SSL_AD_INTERNAL_ERROR;
		return SSL_CLIENT_HELLO_ERROR;
	}
	ok = SSL_use_certificate(ssl, leaf) == 1 && SSL_use_PrivateKey(ssl, sa->ca->leaf_key) == 1;
	X509_free(leaf);
	if (!ok) {
		*al = SSL_AD_INTERNAL_ERROR;
		return SSL_CLIENT_HELLO_ERROR;
	}
	return SSL_CLIENT_HELLO_SUCCESS;
}

/* http/1.1 when the client offers it; else no ALPN at all, rather than a protocol the proxy
 * does not speak (h2 would pass the ACL by unparsed). */
static int alpn_cb(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		   const unsigned char *in, unsigned int inlen, void *arg)
{
	static const char want[] = "http/1.1";
	unsigned int i = 0;

	while (i < inlen) {
		unsigned int n = in[i];

		if (n > inlen - i - 1)
			break;
		if (n == sizeof(want) - 1 && memcmp(in + i + 1, want, n) == 0) {
			*out = in + i + 1;
			*outlen = n;
			return SSL_TLSEXT_ERR_OK;
		}
		i += 1 + n;
	}
	return SSL_TLSEXT_ERR_NOACK;
}

int tls_server_ctx(struct tls_ca *ca, tls_choose_fn choose, SSL_CTX **ret, char *err, size_t errlen)
{
	struct server_arg *sa;
	SSL_CTX *ctx;

	if (tls_init() < 0)
		goto oom;
	pthread_once(&ex_once, ex_index_once);
	if (ex_index < 0)
		goto oom;
	ctx = SSL_CTX_new(TLS_server_method());
	if (!ctx)
		goto oom;
	sa = malloc(sizeof(*sa));
	if (!sa || !SSL_CTX_set_ex_data(ctx, ex_index, sa)) {
		free(sa);
		SSL_CTX_free(ctx);
		goto oom;
	}
	*sa = (struct server_arg){ .ca = ca, .choose = choose };
	if (!SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION)) {
		SSL_CTX_free(ctx);
		goto oom;
	}
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
	SSL_CTX_set_client_hello_cb(ctx, client_hello_cb, sa);
	SSL_CTX_set_alpn_select_cb(ctx, alpn_cb, NULL);
	*ret = ctx;
	return 0;
oom:
	snprintf(err, errlen, "cannot make the proxy's TLS context: out of memory");
	ERR_clear_error();
	return -ENOMEM;
}
