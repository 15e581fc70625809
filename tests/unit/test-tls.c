/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-tls: the proxy's CA and leaves (src/http/tls*.c) and its streams (src/http/stream.c).
 * Real handshakes over socketpairs, the server side in a thread: a leaf minted for the SNI
 * name verifies against the CA trusted through SSL_CERT_FILE, an untrusted CA or a wrong name
 * does not, and the failure reasons are the ones a 502 reports.
 */
#include <errno.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http/stream.h"
#include "http/tls-internal.h"
#include "http/tls.h"
#include "macro.h"
#include "tap.h"

static char tmpdir[256];

/* What the server's choose callback does, and what it saw. */
enum { CHOOSE_SNI, CHOOSE_FIXED, CHOOSE_DENY };
static int choose_mode;
static char choose_fixed[64];
static char seen_sni[256];
static int seen_calls;

static int choose(SSL *ssl, const char *sni, char *name, size_t namelen)
{
	seen_calls++;
	snprintf(seen_sni, sizeof(seen_sni), "%s", sni ? sni : "(none)");
	if (choose_mode == CHOOSE_DENY)
		return -EPERM;
	if (choose_mode == CHOOSE_FIXED || !sni)
		snprintf(name, namelen, "%s", choose_fixed);
	else
		snprintf(name, namelen, "%s", sni);
	return 0;
}

struct server {
	pthread_t thread;
	struct stream s;
	SSL_CTX *ctx;
	int r;
	char why[256];
	size_t sink; /* > 0: read this many bytes after the handshake, then answer "ok" */
	int echo;    /* read a line, answer it */
	int idle_ms; /* > 0: stay silent this long after the handshake */
};

static void *server_main(void *arg)
{
	struct server *sv = arg;
	char buf[65536];

	sv->r = stream_tls_accept(&sv->s, sv->ctx, sv, sv->why, sizeof(sv->why));
	if (sv->r < 0)
		goto out;
	if (sv->idle_ms > 0)
		usleep(sv->idle_ms * 1000);
	while (sv->sink > 0) {
		ssize_t n = stream_read(&sv->s, buf, MIN(sizeof(buf), sv->sink));

		if (n <= 0) {
			sv->r = n < 0 ? (int)n : -EPIPE;
			goto out;
		}
		sv->sink -= n;
	}
	if (sv->echo) {
		ssize_t n = stream_read(&sv->s, buf, sizeof(buf));

		if (n > 0)
			sv->r = stream_write_all(&sv->s, buf, n);
		/* Half-close: the client's end of the stream, then one more answer. */
		n = stream_read(&sv->s, buf, sizeof(buf));
		if (n == 0)
			sv->r = stream_write_all(&sv->s, "bye", 3);
		else
			sv->r = -EPROTO;
	}
out:
	stream_close(&sv->s);
	return NULL;
}

struct pair {
	struct server sv;
	struct stream cli;
	int r;
	char why[256];
};

/* A handshake between @sctx (the server, in a thread, doing what @p->sv asks after it) and
 * @cctx expecting @host. p->sv's sink/echo/idle_ms are set by the caller before. */
static int pair_connect(struct pair *p, SSL_CTX *sctx, SSL_CTX *cctx, const char *host)
{
	int fds[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0)
		abort();
	p->sv.s = (struct stream){ .fd = fds[0], .timeout_ms = 5000 };
	p->sv.ctx = sctx;
	p->sv.r = 0;
	p->sv.why[0] = '\0';
	p->cli = (struct stream){ .fd = fds[1], .timeout_ms = 5000 };
	p->why[0] = '\0';
	if (pthread_create(&p->sv.thread, NULL, server_main, &p->sv) != 0)
		abort();
	p->r = stream_tls_connect(&p->cli, cctx, host, p->why, sizeof(p->why));
	return p->r;
}

static void pair_end(struct pair *p)
{
	stream_close(&p->cli);
	pthread_join(p->sv.thread, NULL);
}

static char *path_in_tmp(const char *name)
{
	static char bufs[8][512];
	static int next;
	char *b = bufs[next++ % 8];

	snprintf(b, sizeof(bufs[0]), "%s/%s", tmpdir, name);
	return b;
}

static void write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "we");

	if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0)
		abort();
}

/* A self-signed certificate with the extensions given (NULL: none) and its key, as PEM files
 * @cert_name and @key_name in the temporary directory. */
static void make_cert_files_valid(const char *cert_name, const char *key_name, const char *bc,
				  const char *ku, long valid_s)
{
	EVP_PKEY *key = tls_ec_key_new();
	X509 *x = X509_new();
	X509_NAME *n = X509_get_subject_name(x);
	FILE *f;

	if (!key || !x || tls_cert_init(x, key, valid_s) < 0 ||
	    !X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (unsigned char *)"test", -1, -1,
					0) ||
	    !X509_set_issuer_name(x, n) ||
	    (bc && tls_cert_add_ext(x, x, NID_basic_constraints, bc) < 0) ||
	    (ku && tls_cert_add_ext(x, x, NID_key_usage, ku) < 0) || tls_cert_sign(x, key) < 0)
		abort();
	f = fopen(path_in_tmp(cert_name), "we");
	if (!f || !PEM_write_X509(f, x) || fclose(f) != 0)
		abort();
	f = fopen(path_in_tmp(key_name), "we");
	if (!f || !PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL) || fclose(f) != 0)
		abort();
	X509_free(x);
	EVP_PKEY_free(key);
}

static void make_cert_files(const char *cert_name, const char *key_name, const char *bc,
			    const char *ku)
{
	make_cert_files_valid(cert_name, key_name, bc, ku, 86400);
}

/* The certificate's subjectAltName as "DNS:name" or "IP:addr" (the first one), into @buf. */
static const char *san_of(X509 *x, char *buf, size_t len)
{
	GENERAL_NAMES *gens = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
	int n = gens ? sk_GENERAL_NAME_num(gens) : 0;

	snprintf(buf, len, "(none)");
	if (n >= 1) {
		GENERAL_NAME *g = sk_GENERAL_NAME_value(gens, 0);
		const ASN1_STRING *v = g->type == GEN_DNS ? g->d.dNSName : g->d.iPAddress;
		const unsigned char *d = ASN1_STRING_get0_data(v);

		if (g->type == GEN_DNS)
			snprintf(buf, len, "DNS:%.*s%s", ASN1_STRING_length(v), d,
				 n > 1 ? " (and more)" : "");
		else if (g->type == GEN_IPADD && ASN1_STRING_length(v) == 4)
			snprintf(buf, len, "IP:%u.%u.%u.%u%s", d[0], d[1], d[2], d[3],
				 n > 1 ? " (and more)" : "");
		else
			snprintf(buf, len, "type %d", g->type);
	}
	GENERAL_NAMES_free(gens);
	return buf;
}

static int64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void test_ca_generate(struct tls_ca *ca)
{
	char *pem = NULL;
	size_t len = 0;
	X509 *x;
	BIO *b;
	char cn[128] = "";

	is_int(tls_ca_pem(ca, &pem, &len), 0, "tls_ca_pem");
	ok(pem && strlen(pem) == len, "the PEM is NUL-terminated, of the length given");
	ok(pem && strstr(pem, "-----BEGIN CERTIFICATE-----") && !strstr(pem, "PRIVATE"),
	   "the PEM is a certificate and holds no key");
	b = BIO_new_mem_buf(pem, (int)len);
	x = PEM_read_bio_X509(b, NULL, NULL, NULL);
	ok(x != NULL, "PEM_read_bio_X509 parses the CA's PEM");
	if (x) {
		X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, cn, sizeof(cn));
		ok(strncmp(cn, "sandlock ephemeral CA ", 22) == 0, "its subject: %s", cn);
		ok(X509_check_ca(x) == 1, "it is a CA (basicConstraints CA:TRUE)");
		ok(X509_get_key_usage(x) & KU_KEY_CERT_SIGN, "its keyUsage has keyCertSign");
		ok(EVP_PKEY_get_base_id(X509_get0_pubkey(x)) == EVP_PKEY_EC, "its key is EC");
		ok(X509_verify(x, X509_get0_pubkey(x)) == 1, "it is self-signed");
	}
	BIO_free(b);
	X509_free(x);
	free(pem);
}

static void test_leaf(struct tls_ca *ca)
{
	X509 *a = tls_leaf_get(ca, "leaf.example"), *b = tls_leaf_get(ca, "leaf.example");
	X509 *c = tls_leaf_get(ca, "other.example"), *ip = tls_leaf_get(ca, "127.0.0.1");
	char buf[128], cn[128] = "";
	time_t now = time(NULL), t;

	ok(a && a == b, "one name twice: the cached leaf");
	ok(c && c != a, "another name: another leaf");
	if (a && c) {
		ok(ASN1_INTEGER_cmp(X509_get0_serialNumber(a), X509_get0_serialNumber(c)) != 0,
		   "the two have different serials");
		ok(EVP_PKEY_eq(X509_get0_pubkey(a), X509_get0_pubkey(c)) == 1,
		   "and the one leaf key of the CA");
		is_str(san_of(a, buf, sizeof(buf)), "DNS:leaf.example", "SAN = the name");
		X509_NAME_get_text_by_NID(X509_get_subject_name(a), NID_commonName, cn, sizeof(cn));
		is_str(cn, "leaf.example", "CN = the name");
		is_int(X509_check_ca(a), 0, "a leaf is no CA");
		is_int(X509_check_purpose(a, X509_PURPOSE_SSL_SERVER, 0), 1,
		       "serverAuth, digitalSignature");
		is_int(X509_verify(a, X509_get0_pubkey(ca->cert)), 1, "signed by the CA");
		{
			/* What OpenSSL caches of a certificate (its hash, which X509_cmp
			 * compares) is the leaf's, not the template's it was copied from. */
			X509 *fresh = X509_dup(a);

			is_int(X509_cmp(a, fresh), 0, "the leaf's cached hash is its own");
			is_int(X509_cmp(a, ca->leaf_template) != 0, 1, "not the template's");
			X509_free(fresh);
		}
		t = now + 24 * 3600;
		ok(X509_cmp_time(X509_get0_notAfter(a), &t) <= 0 &&
			   (t -= 120, X509_cmp_time(X509_get0_notAfter(a), &t) > 0),
		   "valid for 24 hours");
		t = now - 3600 + 120;
		ok(X509_cmp_time(X509_get0_notBefore(a), &t) < 0, "from an hour ago");
		ok(X509_get0_subject_key_id(a) && X509_get0_authority_key_id(a),
		   "subject and authority key ids");
	}
	ok(ip != NULL, "an IP literal gets a leaf");
	if (ip)
		is_str(san_of(ip, buf, sizeof(buf)), "IP:127.0.0.1", "with an IP SAN");
	ok(!tls_leaf_get(ca, "bad name") && !tls_leaf_get(ca, "a..b") && !tls_leaf_get(ca, "") &&
		   !tls_leaf_get(ca, ".x") && !tls_leaf_get(ca, "a,DNS:evil"),
	   "names that are neither a DNS name nor an address: no leaf");
	X509_free(a);
	X509_free(b);
	X509_free(c);
	X509_free(ip);
}

static void test_cache_age(struct tls_ca *ca)
{
	X509 *a = tls_leaf_get(ca, "aging.example"), *b;
	struct tls_leaf *l;
	int found = 0;

	pthread_mutex_lock(&ca->lock);
	for (size_t i = 0; i < TLS_CACHE_BUCKETS; i++)
		for (l = ca->buckets[i]; l; l = l->next)
			if (strcmp(l->name, "aging.example") == 0) {
				l->minted -= TLS_LEAF_REUSE_S + 1;
				found = 1;
			}
	pthread_mutex_unlock(&ca->lock);
	ok(found, "the leaf is in the cache");
	b = tls_leaf_get(ca, "aging.example");
	ok(a && b && a != b, "a leaf served for more than %ld s is minted again", TLS_LEAF_REUSE_S);
	X509_free(a);
	X509_free(b);
	a = tls_leaf_get(ca, "aging.example");
	ok(a && a == b, "and the new one is cached");
	X509_free(a);
}

static void test_cache_bound(struct tls_ca *ca)
{
	X509 *first = tls_leaf_get(ca, "n0.example"), *again;
	char name[32];
	int fails = 0;

	for (int i = 1; i <= TLS_CACHE_MAX; i++) {
		X509 *x;

		snprintf(name, sizeof(name), "n%d.example", i);
		x = tls_leaf_get(ca, name);
		fails += !x;
		X509_free(x);
	}
	is_int(fails, 0, "%d more names minted", TLS_CACHE_MAX);
	ok(ca->n_leaves <= TLS_CACHE_MAX, "the cache holds at most %d (%zu)", TLS_CACHE_MAX,
	   ca->n_leaves);
	again = tls_leaf_get(ca, "n0.example");
	ok(again && again != first, "a name dropped when the cache filled gets a new leaf");
	X509_free(first);
	X509_free(again);
}

static void *mint_worker(void *arg)
{
	struct tls_ca *ca = arg;
	char name[32];

	for (int i = 0; i < 200; i++) {
		X509 *x;

		snprintf(name, sizeof(name), "t%d.example", i % 50);
		x = tls_leaf_get(ca, name);
		if (!x)
			return (void *)1;
		X509_free(x);
	}
	return NULL;
}

static void test_cache_threads(struct tls_ca *ca)
{
	pthread_t t[4];
	int bad = 0;

	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, mint_worker, ca);
	for (int i = 0; i < 4; i++) {
		void *r;

		pthread_join(t[i], &r);
		bad += r != NULL;
	}
	is_int(bad, 0, "four threads minting and reusing the same 50 names");
}

static void test_handshake(SSL_CTX *sctx, SSL_CTX *cctx)
{
	struct pair p = { .sv = { .echo = 1 } };
	const unsigned char *alpn = NULL;
	unsigned alpn_len = 0;
	char buf[128] = "";
	ssize_t n;
	X509 *peer;
	ASN1_INTEGER *serial = NULL;

	choose_mode = CHOOSE_SNI;
	seen_calls = 0;
	is_int(pair_connect(&p, sctx, cctx, "Web.Example"), 0, "handshake to a name (%s)", p.why);
	is_str(seen_sni, "web.example", "choose got the SNI, lower-cased");
	SSL_get0_alpn_selected(p.cli.ssl, &alpn, &alpn_len);
	ok(alpn_len == 8 && memcmp(alpn, "http/1.1", 8) == 0, "ALPN: http/1.1");
	peer = SSL_get1_peer_certificate(p.cli.ssl);
	ok(peer != NULL, "the client got a certificate");
	if (peer) {
		is_str(san_of(peer, buf, sizeof(buf)), "DNS:web.example", "its SAN is the name");
		serial = ASN1_INTEGER_dup(X509_get0_serialNumber(peer));
		X509_free(peer);
	}
	is_int(stream_write_all(&p.cli, "ping", 4), 0, "write through TLS");
	n = stream_read(&p.cli, buf, sizeof(buf));
	ok(n == 4 && memcmp(buf, "ping", 4) == 0, "the server answered through TLS");
	stream_shutdown_write(&p.cli);
	n = stream_read(&p.cli, buf, sizeof(buf));
	ok(n == 3 && memcmp(buf, "bye", 3) == 0,
	   "after close_notify the server saw the end and could still answer");
	n = stream_read(&p.cli, buf, sizeof(buf));
	is_int(n, 0, "then the end of the stream");
	pair_end(&p);
	is_int(p.sv.r, 0, "the server's side went well (%s)", p.sv.why);

	/* The same name again: the cached leaf, so the same serial. */
	p = (struct pair){ 0 };
	is_int(pair_connect(&p, sctx, cctx, "web.example"), 0, "a second handshake (%s)", p.why);
	peer = p.r == 0 ? SSL_get1_peer_certificate(p.cli.ssl) : NULL;
	ok(peer && serial && ASN1_INTEGER_cmp(X509_get0_serialNumber(peer), serial) == 0,
	   "the same name twice: the cached leaf (same serial)");
	X509_free(peer);
	ASN1_INTEGER_free(serial);
	pair_end(&p);
}

static void test_handshake_ip(SSL_CTX *sctx, SSL_CTX *cctx)
{
	struct pair p = { 0 };
	char buf[128] = "";
	X509 *peer;

	choose_mode = CHOOSE_SNI;
	snprintf(choose_fixed, sizeof(choose_fixed), "127.0.0.1");
	is_int(pair_connect(&p, sctx, cctx, "127.0.0.1"), 0, "handshake to an IP literal (%s)",
	       p.why);
	is_str(seen_sni, "(none)", "no SNI for an address");
	peer = p.r == 0 ? SSL_get1_peer_certificate(p.cli.ssl) : NULL;
	ok(peer != NULL, "a certificate");
	if (peer)
		is_str(san_of(peer, buf, sizeof(buf)), "IP:127.0.0.1", "with an IP SAN");
	X509_free(peer);
	pair_end(&p);

	/* Negative control: the leaf for another address does not verify. */
	snprintf(choose_fixed, sizeof(choose_fixed), "127.0.0.2");
	p = (struct pair){ 0 };
	is_int(pair_connect(&p, sctx, cctx, "127.0.0.1"), -EPROTO, "a leaf for another address");
	ok(strstr(p.why, "IP address mismatch") != NULL, "reason: %s", p.why);
	pair_end(&p);
}

static void test_handshake_failures(struct tls_ca *other, SSL_CTX *sctx, SSL_CTX *cctx)
{
	struct pair p = { 0 };
	SSL_CTX *untrusted = NULL, *h2 = NULL;
	char err[256];
	const unsigned char *alpn = NULL;
	unsigned alpn_len = 1;

	choose_mode = CHOOSE_FIXED;
	snprintf(choose_fixed, sizeof(choose_fixed), "other.example");
	is_int(pair_connect(&p, sctx, cctx, "web.example"), -EPROTO,
	       "a leaf for another name fails");
	ok(strstr(p.why, "hostname mismatch") != NULL, "reason: %s", p.why);
	pair_end(&p);

	choose_mode = CHOOSE_SNI;
	is_int(tls_server_ctx(other, choose, &untrusted, err, sizeof(err)), 0, "an untrusted CA");
	p = (struct pair){ 0 };
	is_int(pair_connect(&p, untrusted, cctx, "web.example"), -EPROTO,
	       "a leaf of an untrusted CA fails");
	ok(strstr(p.why, "unable to get local issuer certificate") != NULL, "reason: %s", p.why);
	pair_end(&p);
	SSL_CTX_free(untrusted);

	choose_mode = CHOOSE_DENY;
	p = (struct pair){ 0 };
	is_int(pair_connect(&p, sctx, cctx, "denied.example"), -EPROTO,
	       "choose -EPERM: the handshake fails");
	ok(strstr(p.why, "access denied") != NULL, "the client's reason: %s", p.why);
	pair_end(&p);
	is_int(p.sv.r, -EPROTO, "and the server's accept says so (%s)", p.sv.why);

	/* A client that offers h2 only gets no ALPN, not h2. */
	choose_mode = CHOOSE_SNI;
	if (tls_client_ctx(&h2, err, sizeof(err)) == 0)
		SSL_CTX_set_alpn_protos(h2, (const unsigned char *)"\x02h2", 3);
	p = (struct pair){ 0 };
	is_int(pair_connect(&p, sctx, h2, "web.example"), 0, "a client offering h2 only (%s)",
	       p.why);
	if (p.r == 0)
		SSL_get0_alpn_selected(p.cli.ssl, &alpn, &alpn_len);
	is_int(alpn_len, 0, "gets no ALPN");
	pair_end(&p);
	SSL_CTX_free(h2);
}

/* A client whose key share the server does not take gets a HelloRetryRequest: the second
 * ClientHello runs the callback again, and the handshake still ends with the leaf. */
static void test_hello_retry(struct tls_ca *ca)
{
	SSL_CTX *sctx = NULL, *cctx = NULL;
	struct pair p = { 0 };
	char err[256], buf[128] = "";
	X509 *peer;

	if (tls_server_ctx(ca, choose, &sctx, err, sizeof(err)) < 0 ||
	    tls_client_ctx(&cctx, err, sizeof(err)) < 0 ||
	    !SSL_CTX_set1_groups_list(sctx, "X25519") ||
	    !SSL_CTX_set1_groups_list(cctx, "P-384:X25519"))
		abort();
	choose_mode = CHOOSE_SNI;
	seen_calls = 0;
	is_int(pair_connect(&p, sctx, cctx, "retry.example"), 0,
	       "handshake with a HelloRetryRequest (%s)", p.why);
	is_int(seen_calls, 2, "choose ran for both ClientHellos");
	peer = p.r == 0 ? SSL_get1_peer_certificate(p.cli.ssl) : NULL;
	ok(peer && strcmp(san_of(peer, buf, sizeof(buf)), "DNS:retry.example") == 0,
	   "and the leaf is for the name (%s)", buf);
	X509_free(peer);
	pair_end(&p);
	SSL_CTX_free(sctx);
	SSL_CTX_free(cctx);
}

static void test_tls_stream(SSL_CTX *sctx, SSL_CTX *cctx)
{
	size_t big = 4u << 20;
	char *data = malloc(big);
	struct pair p = { .sv = { .sink = big } };
	int small = 4096;
	char buf[16];
	int64_t t0;

	choose_mode = CHOOSE_SNI;
	for (size_t i = 0; i < big; i++)
		data[i] = (char)(i * 7);
	is_int(pair_connect(&p, sctx, cctx, "bulk.example"), 0, "handshake for a bulk write");
	/* Small buffers: many WANT_WRITE rounds on the non-blocking socket. */
	setsockopt(p.cli.fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	is_int(stream_write_all(&p.cli, data, big), 0, "4 MiB through TLS");
	p.cli.timeout_ms = 5000;
	pair_end(&p);
	is_int(p.sv.r, 0, "the server read all of it");
	free(data);

	p = (struct pair){ .sv = { .idle_ms = 600 } };
	is_int(pair_connect(&p, sctx, cctx, "idle.example"), 0, "handshake to a silent server");
	p.cli.timeout_ms = 150;
	t0 = ms_now();
	is_int(stream_read(&p.cli, buf, sizeof(buf)), -ETIMEDOUT, "TLS read: -ETIMEDOUT");
	ok(ms_now() - t0 >= 140 && ms_now() - t0 < 2000, "after the timeout (%lld ms)",
	   (long long)(ms_now() - t0));
	is_int(stream_wait_readable(&p.cli, 50), 0, "wait_readable: nothing");
	is_int(stream_read(&p.cli, buf, sizeof(buf)), -ETIMEDOUT, "TLS read: still nothing");
	pair_end(&p);

	/* A peer that is gone: -EPIPE (or a reset), and no SIGPIPE (which would end this
	 * program: its disposition is the default). */
	p = (struct pair){ 0 };
	is_int(pair_connect(&p, sctx, cctx, "gone.example"), 0, "handshake, then the server goes");
	pthread_join(p.sv.thread, NULL);
	{
		int r = 0;

		for (int i = 0; i < 100 && r == 0; i++)
			r = stream_write_all(&p.cli, "xxxxxxxxxxxxxxxx", 16);
		ok(r == -EPIPE || r == -ECONNRESET, "TLS write to a closed peer: %d, no SIGPIPE",
		   r);
	}
	stream_close(&p.cli);
	stream_close(&p.cli);
	ok(p.cli.fd == -1 && p.cli.ssl == NULL, "stream_close twice");
}

static void test_plain_stream(void)
{
	int fds[2];
	struct stream a, b;
	char buf[16];
	int64_t t0;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0)
		abort();
	a = (struct stream){ .fd = fds[0], .timeout_ms = 120 };
	b = (struct stream){ .fd = fds[1], .timeout_ms = 120 };
	is_int(stream_wait_readable(&b, 30), 0, "plain: nothing to read yet");
	is_int(stream_write_all(&a, "hello", 5), 0, "plain write");
	is_int(stream_wait_readable(&b, 30), 1, "then readable");
	is_int(stream_read(&b, buf, sizeof(buf)), 5, "plain read");
	ok(memcmp(buf, "hello", 5) == 0, "the bytes");
	t0 = ms_now();
	is_int(stream_read(&b, buf, sizeof(buf)), -ETIMEDOUT, "plain read: -ETIMEDOUT");
	ok(ms_now() - t0 >= 110, "after the timeout (%lld ms)", (long long)(ms_now() - t0));
	stream_shutdown_write(&a);
	is_int(stream_read(&b, buf, sizeof(buf)), 0, "shutdown_write: the peer reads the end");
	is_int(stream_write_all(&b, "back", 4), 0, "and can still answer");
	is_int(stream_read(&a, buf, sizeof(buf)), 4, "which arrives");
	stream_close(&a);
	is_int(stream_write_all(&b, "x", 1), -EPIPE, "plain write to a closed peer: -EPIPE");
	stream_close(&b);
	is_int(stream_read(&b, buf, sizeof(buf)), -EBADF, "a closed stream: -EBADF");
}

static void test_ca_load(void)
{
	struct tls_ca *ca = NULL;
	char err[512] = "";
	char *c, *k;

	make_cert_files("ca.pem", "ca.key", "critical,CA:TRUE", "critical,keyCertSign,cRLSign");
	make_cert_files("noku.pem", "noku.key", "critical,CA:TRUE", NULL);
	make_cert_files("leaf.pem", "leaf.key", "critical,CA:FALSE", "critical,digitalSignature");
	make_cert_files("nobc.pem", "nobc.key", NULL, NULL);
	make_cert_files("badku.pem", "badku.key", "critical,CA:TRUE", "critical,digitalSignature");
	make_cert_files_valid("old.pem", "old.key", "critical,CA:TRUE", NULL, -60);
	write_file(path_in_tmp("junk"), "hello\n", 6);

	c = path_in_tmp("ca.pem");
	k = path_in_tmp("ca.key");
	is_int(tls_ca_load(c, k, &ca, err, sizeof(err)), 0, "load a CA and its key (%s)", err);
	if (ca) {
		X509 *leaf = tls_leaf_get(ca, "user.example");

		ok(leaf && X509_verify(leaf, X509_get0_pubkey(ca->cert)) == 1,
		   "a loaded CA mints leaves");
		ok(leaf && ASN1_TIME_compare(X509_get0_notAfter(leaf),
					     X509_get0_notAfter(ca->cert)) == 0,
		   "a leaf never outlives its CA (this one ends in a day, with the CA)");
		X509_free(leaf);
	}
	tls_ca_free(ca);
	ca = NULL;
	is_int(tls_ca_load(path_in_tmp("noku.pem"), path_in_tmp("noku.key"), &ca, err, sizeof(err)),
	       0, "a CA without keyUsage loads");
	tls_ca_free(ca);
	ca = NULL;

	struct {
		const char *cert, *key, *want, *named;
	} bad[] = {
		{ "missing.pem", "ca.key", "missing.pem: No such file or directory",
		  "missing.pem" },
		{ "ca.pem", "missing.key", "missing.key: No such file or directory",
		  "missing.key" },
		{ "junk", "ca.key", "not a PEM certificate", "junk" },
		{ "ca.pem", "junk", "not a PEM private key", "junk" },
		{ "leaf.pem", "leaf.key", "basicConstraints CA:TRUE is missing", "leaf.pem" },
		{ "nobc.pem", "nobc.key", "basicConstraints CA:TRUE is missing", "nobc.pem" },
		{ "badku.pem", "badku.key", "keyUsage lacks keyCertSign", "badku.pem" },
		{ "ca.pem", "leaf.key", "not the private key of the certificate", "leaf.key" },
		{ "old.pem", "old.key", "has expired", "old.pem" },
	};
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		int r;

		err[0] = '\0';
		r = tls_ca_load(path_in_tmp(bad[i].cert), path_in_tmp(bad[i].key), &ca, err,
				sizeof(err));
		ok(r == -EINVAL && ca == NULL && strstr(err, bad[i].want) &&
			   strstr(err, path_in_tmp(bad[i].named)) && !strchr(err, '\n'),
		   "tls_ca_load %s %s: one line naming the file: %s", bad[i].cert, bad[i].key, err);
	}
	is_int(ERR_peek_error(), 0, "the OpenSSL error queue is left empty");
}

static void test_ca_load_encrypted(void)
{
	EVP_PKEY *key = tls_ec_key_new();
	struct tls_ca *ca = NULL;
	char err[512] = "";
	FILE *f = fopen(path_in_tmp("enc.key"), "we");

	if (!f ||
	    !PEM_write_PKCS8PrivateKey(f, key, EVP_aes_256_cbc(), NULL, 0, NULL,
				       (void *)"secret") ||
	    fclose(f) != 0)
		abort();
	EVP_PKEY_free(key);
	is_int(tls_ca_load(path_in_tmp("ca.pem"), path_in_tmp("enc.key"), &ca, err, sizeof(err)),
	       -EINVAL, "an encrypted key is refused, no prompt");
	ok(strstr(err, "encrypted") != NULL, "reason: %s", err);
}

int main(void)
{
	struct tls_ca *ca = NULL, *other = NULL;
	SSL_CTX *sctx = NULL, *cctx = NULL;
	char err[256] = "";
	char *pem;
	size_t len;

	if (!tap_mkdtemp(tmpdir, sizeof(tmpdir), "test-tls"))
		abort();

	test_plain_stream();
	test_ca_load();
	test_ca_load_encrypted();

	is_int(tls_ca_generate(&ca, err, sizeof(err)), 0, "tls_ca_generate (%s)", err);
	is_int(tls_ca_generate(&other, err, sizeof(err)), 0, "a second CA");
	if (!ca || !other)
		return done_testing();
	test_ca_generate(ca);
	test_leaf(ca);

	/* Trust the first CA, and only it: the client context reads SSL_CERT_FILE when made. */
	if (tls_ca_pem(ca, &pem, &len) < 0)
		abort();
	write_file(path_in_tmp("trust.pem"), pem, len);
	free(pem);
	setenv("SSL_CERT_FILE", path_in_tmp("trust.pem"), 1);
	setenv("SSL_CERT_DIR", tmpdir, 1);
	is_int(tls_server_ctx(ca, choose, &sctx, err, sizeof(err)), 0, "tls_server_ctx");
	is_int(tls_client_ctx(&cctx, err, sizeof(err)), 0, "tls_client_ctx");
	if (sctx && cctx) {
		test_handshake(sctx, cctx);
		test_handshake_ip(sctx, cctx);
		test_handshake_failures(other, sctx, cctx);
		test_hello_retry(ca);
		test_tls_stream(sctx, cctx);
	}
	test_cache_threads(ca);
	test_cache_age(ca);
	test_cache_bound(ca);

	SSL_CTX_free(sctx);
	SSL_CTX_free(cctx);
	tls_ca_free(ca);
	tls_ca_free(other);
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		(void)!system(cmd);
	}
	return done_testing();
}
