/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-http-proxy: the HTTP ACL proxy (src/http/proxy.h) driven directly, without a sandbox.
 * A small origin (threads on 127.0.0.1) records what reaches it; a client socket connects to
 * the proxy's listener and announces itself with http_proxy_expect, as the supervisor's
 * connect does; the responses are checked byte for byte. Every refusal has its control: the
 * same request where a rule allows it reaches the origin.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "http/proxy.h"
#include "http/stream.h"
#include "http/tls.h"
#include <openssl/pem.h>
#include "tap.h"

/* --- the origin ------------------------------------------------------------------------ */

/* Paths it treats specially: "/chunked*" answers in chunks, "/silent*" never answers,
 * "/close*" answers without a length and closes, "/big/N" answers N bytes of big_byte(),
 * "/short*" promises 100 bytes, sends 10 and closes, "/stall*" sends the same 10 and waits;
 * any other answers 200 with the request target as the body. */
struct origin {
	int lfd;
	struct sockaddr_in addr;
	pthread_mutex_t lock;
	unsigned requests;
	char last[65536]; /* the last request, head and body, as received */
	size_t last_len;
};

static struct origin origin;

static ssize_t find(const char *buf, size_t len, const char *needle)
{
	size_t n = strlen(needle);
	for (size_t i = 0; i + n <= len; i++)
		if (memcmp(buf + i, needle, n) == 0)
			return (ssize_t)i;
	return -1;
}

/* The end of a request or response message in @buf (@len bytes), or 0 when incomplete;
 * -1: it ends with the connection. */
static ssize_t message_end(const char *buf, size_t len, int response)
{
	ssize_t he = find(buf, len, "\r\n\r\n");
	if (he < 0)
		return 0;
	size_t head = (size_t)he + 4;
	char h[65536];
	size_t hn = head < sizeof(h) - 1 ? head : sizeof(h) - 1;
	memcpy(h, buf, hn);
	h[hn] = '\0';
	for (char *c = h; *c; c++)
		*c = (char)((*c >= 'A' && *c <= 'Z') ? *c + 32 : *c);
	char *cl = strstr(h, "\r\ncontent-length:");
	if (strstr(h, "\r\ntransfer-encoding: chunked")) {
		ssize_t e = find(buf + head, len - head, "0\r\n\r\n");
		return e < 0 ? 0 : (ssize_t)head + e + 5;
	}
	if (cl) {
		size_t n = strtoul(cl + 17, NULL, 10);
		return len >= head + n ? (ssize_t)(head + n) : 0;
	}
	if (response && strncmp(h, "http/1.1 1", 10) != 0 && strncmp(h, "http/1.1 204", 12) != 0)
		return -1;
	return (ssize_t)head;
}

static char big_byte(size_t i)
{
	return (char)('a' + (i * 7 + i / 4096) % 26);
}

static void origin_big(int fd, size_t n)
{
	char head[128], chunk[65536];
	int k = snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n", n);

	if (send(fd, head, (size_t)k, MSG_NOSIGNAL) < 0)
		return;
	for (size_t off = 0; off < n;) {
		size_t m = n - off < sizeof(chunk) ? n - off : sizeof(chunk);
		for (size_t i = 0; i < m; i++)
			chunk[i] = big_byte(off + i);
		if (send(fd, chunk, m, MSG_NOSIGNAL) != (ssize_t)m)
			return;
		off += m;
	}
}

static void origin_answer(int fd, const char *req, size_t n)
{
	static const char part[] = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789";
	char target[4096] = "", out[8192];
	sscanf(req, "%*s %4095s", target);
	if (strncmp(target, "/silent", 7) == 0) {
		sleep(3);
		return;
	}
	if (strncmp(target, "/big/", 5) == 0) {
		origin_big(fd, (size_t)atol(target + 5));
		return;
	}
	if (strncmp(target, "/short", 6) == 0 || strncmp(target, "/stall", 6) == 0) {
		if (send(fd, part, sizeof(part) - 1, MSG_NOSIGNAL) < 0)
			return;
		if (target[2] == 'h')
			shutdown(fd, SHUT_RDWR);
		else
			sleep(3);
		return;
	}
	int k;
	if (strncmp(target, "/chunked", 8) == 0)
		k = snprintf(out, sizeof(out), "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
						"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n");
	else if (strncmp(target, "/close", 6) == 0)
		k = snprintf(out, sizeof(out), "HTTP/1.1 200 OK\r\n\r\nuntil close");
	else
		k = snprintf(out, sizeof(out), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n%s",
			     strlen(target), target);
	if (send(fd, out, (size_t)k, MSG_NOSIGNAL) < 0)
		return;
	if (strncmp(target, "/close", 6) == 0)
		shutdown(fd, SHUT_RDWR);
}

static void *origin_conn(void *arg)
{
	int fd = (int)(long)arg;
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap);

	for (;;) {
		ssize_t n = buf ? recv(fd, buf + len, cap - len, 0) : -1;
		if (n <= 0)
			break;
		len += (size_t)n;
		ssize_t e;
		while (len > 0 && (e = message_end(buf, len, 0)) > 0) {
			pthread_mutex_lock(&origin.lock);
			origin.requests++;
			origin.last_len = (size_t)e < sizeof(origin.last) ? (size_t)e
									  : sizeof(origin.last) - 1;
			memcpy(origin.last, buf, origin.last_len);
			origin.last[origin.last_len] = '\0';
			pthread_mutex_unlock(&origin.lock);
			origin_answer(fd, buf, (size_t)e);
			memmove(buf, buf + e, len - (size_t)e);
			len -= (size_t)e;
		}
	}
	free(buf);
	close(fd);
	return NULL;
}

static void *origin_main(void *arg)
{
	for (;;) {
		int fd = accept(origin.lfd, NULL, NULL);
		if (fd < 0)
			continue;
		pthread_t t;
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&a, 256 * 1024);
		if (pthread_create(&t, &a, origin_conn, (void *)(long)fd) != 0)
			close(fd);
		pthread_attr_destroy(&a);
	}
	return NULL;
}

static void origin_start(void)
{
	socklen_t len = sizeof(origin.addr);
	pthread_t t;

	pthread_mutex_init(&origin.lock, NULL);
	origin.lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	origin.addr.sin_family = AF_INET;
	origin.addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(origin.lfd, (struct sockaddr *)&origin.addr, sizeof(origin.addr)) < 0 ||
	    listen(origin.lfd, 64) < 0 ||
	    getsockname(origin.lfd, (struct sockaddr *)&origin.addr, &len) < 0) {
		perror("origin");
		exit(1);
	}
	pthread_create(&t, NULL, origin_main, NULL);
	pthread_detach(t);
}

static unsigned origin_requests(void)
{
	pthread_mutex_lock(&origin.lock);
	unsigned n = origin.requests;
	pthread_mutex_unlock(&origin.lock);
	return n;
}

/* The last request the origin received, copied. */
static const char *origin_last(void)
{
	static char copy[sizeof(origin.last)];
	pthread_mutex_lock(&origin.lock);
	memcpy(copy, origin.last, sizeof(copy));
	pthread_mutex_unlock(&origin.lock);
	return copy;
}

/* --- the client ------------------------------------------------------------------------ */

static int port; /* the origin's */

/* A connection to the proxy announced as one to @dest (the origin by default). */
static int client_to(struct http_proxy *p, const struct sockaddr_in *dest, int announce)
{
	struct sockaddr_storage pa, local;
	socklen_t pl, ll = sizeof(local);
	struct timeval tv = { .tv_sec = 10 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || http_proxy_address(p, AF_INET, &pa, &pl) < 0 ||
	    connect(fd, (struct sockaddr *)&pa, pl) < 0 ||
	    getsockname(fd, (struct sockaddr *)&local, &ll) < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (announce && http_proxy_expect(p, &local, ll, (const struct sockaddr_storage *)dest,
					  sizeof(*dest)) < 0)
		return -1;
	return fd;
}

static int client(struct http_proxy *p)
{
	return client_to(p, &origin.addr, 1);
}

static void send_str(int fd, const char *s)
{
	if (send(fd, s, strlen(s), MSG_NOSIGNAL) < 0)
		diag("send: %s", strerror(errno));
}

/* One response into @buf (NUL-terminated); its length, or -1. */
static ssize_t read_response(int fd, char *buf, size_t cap)
{
	size_t len = 0;

	for (;;) {
		ssize_t e = len ? message_end(buf, len, 1) : 0;
		if (e > 0) {
			buf[e] = '\0';
			return e;
		}
		ssize_t n = recv(fd, buf + len, cap - 1 - len, 0);
		if (n <= 0) {
			buf[len] = '\0';
			return e < 0 || len ? (ssize_t)len : -1;
		}
		len += (size_t)n;
	}
}

/* Everything until the proxy closes the connection. */
static ssize_t read_all(int fd, char *buf, size_t cap)
{
	size_t len = 0;
	ssize_t n;

	while (len < cap - 1 && (n = recv(fd, buf + len, cap - 1 - len, 0)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	return n < 0 ? -1 : (ssize_t)len;
}

/* Send @req on a new connection, read until the proxy closes it. */
static const char *exchange(struct http_proxy *p, const char *req)
{
	static char buf[65536];
	int fd = client(p);

	buf[0] = '\0';
	if (fd < 0)
		return "(no connection)";
	send_str(fd, req);
	read_all(fd, buf, sizeof(buf));
	close(fd);
	return buf;
}

/* The proxy's own refusal, as it must read. */
static const char *refusal(int status, const char *text, const char *why)
{
	static char buf[2048];
	snprintf(buf, sizeof(buf),
		 "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
		 "Connection: close\r\n\r\nsandlock: %s\n",
		 status, text, strlen(why) + 11, why);
	return buf;
}

static const char *ok_body(const char *body)
{
	static char buf[8192];
	snprintf(buf, sizeof(buf), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n%s", strlen(body),
		 body);
	return buf;
}

/* "GET @target HTTP/1.1" to the origin with @extra fields, closing after. */
static const char *req(const char *method, const char *target, const char *extra)
{
	static char buf[8192];
	snprintf(buf, sizeof(buf), "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%sConnection: close\r\n\r\n",
		 method, target, port, extra ? extra : "");
	return buf;
}

static unsigned open_fds(void)
{
	unsigned n = 0;
	DIR *d = opendir("/proc/self/fd");
	for (struct dirent *e; d && (e = readdir(d));)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* --- the configuration ------------------------------------------------------------------ */

static struct http_rule *rules(const char *const *texts, size_t *n)
{
	size_t k = 0;
	while (texts[k])
		k++;
	struct http_rule *r = calloc(k + 1, sizeof(*r));
	char err[256];
	for (size_t i = 0; i < k; i++)
		if (http_rule_parse(texts[i], &r[i], err, sizeof(err)) < 0) {
			printf("Bail out! rule %s: %s\n", texts[i], err);
			exit(1);
		}
	*n = k;
	return r;
}

static struct http_auth *auths(const char *const *texts, size_t *n)
{
	size_t k = 0;
	while (texts[k])
		k++;
	struct http_auth *a = calloc(k + 1, sizeof(*a));
	char err[256];
	for (size_t i = 0; i < k; i++)
		if (http_auth_parse(texts[i], &a[i], err, sizeof(err)) < 0) {
			printf("Bail out! auth %s: %s\n", texts[i], err);
			exit(1);
		}
	*n = k;
	return a;
}

static void rules_free(const struct http_rule *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		http_rule_done((struct http_rule *)&r[i]);
	free((void *)r);
}

static void auths_free(const struct http_auth *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		http_auth_done((struct http_auth *)&a[i]);
	free((void *)a);
}

static struct http_proxy *start(struct http_proxy_config *cfg)
{
	struct http_proxy *p = NULL;
	char err[256] = "";
	int r = http_proxy_start(cfg, &p, err, sizeof(err));
	if (r < 0) {
		printf("Bail out! http_proxy_start: %s\n", err);
		exit(1);
	}
	return p;
}

static const char *const acl_allow[] = { "GET 127.0.0.1/*", "POST 127.0.0.1/upload",
					 "GET good.test/*", "GET spoof.test/*", NULL };
static const char *const acl_deny[] = { "GET 127.0.0.1/admin*", "* 127.0.0.1/secret*",
					"* 127.0.0.1/a/secret*", NULL };

static struct http_host_addrs acl_hosts[2];

static void hosts_init(void)
{
	static int fam[2] = { AF_INET, AF_INET };
	static char good[] = "good.test", spoof[] = "spoof.test";
	static uint8_t addr[2][16] = { { 127, 0, 0, 1 }, { 127, 0, 0, 2 } };

	acl_hosts[0] = (struct http_host_addrs){ .name = good, .family = &fam[0],
						 .addr = &addr[0], .n = 1 };
	acl_hosts[1] = (struct http_host_addrs){ .name = spoof, .family = &fam[1],
						 .addr = &addr[1], .n = 1 };
}

static void test_verdicts(struct http_proxy *p)
{
	char r[16384], why[256];
	unsigned before = origin_requests();

	is_str(exchange(p, req("GET", "/hello", NULL)), ok_body("/hello"), "GET allowed: 200");
	is_int(origin_requests(), before + 1, "the origin saw the GET");
	snprintf(r, sizeof(r), "GET /hello HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n",
		 port);
	is_str(origin_last(), r, "the origin got the request as sent (hop-by-hop rewritten)");

	before = origin_requests();
	snprintf(r, sizeof(r), "%sabc", req("POST", "/hello", "Content-Length: 3\r\n"));
	is_str(exchange(p, r), refusal(403, "Forbidden", "no allow rule matched"),
	       "POST to the same path: 403");
	is_int(origin_requests(), before, "the origin saw nothing of the POST");
	snprintf(r, sizeof(r), "%sabc", req("POST", "/upload", "Content-Length: 3\r\n"));
	is_str(exchange(p, r), ok_body("/upload"), "control: POST where a rule allows it: 200");
	ok(strstr(origin_last(), "\r\n\r\nabc") != NULL, "the origin got the POST's body");

	before = origin_requests();
	is_str(exchange(p, req("GET", "/admin/x", NULL)),
	       refusal(403, "Forbidden", "denied by rule \"GET 127.0.0.1/admin*\""),
	       "deny beats allow: 403 naming the rule");
	is_int(origin_requests(), before, "the origin saw nothing of the denied GET");
	is_str(exchange(p, req("GET", "/adm", NULL)), ok_body("/adm"), "control: /adm allowed");

	is_int(http_acl(&(struct http_proxy_config){ 0 }, "GET", "x", 80, "/", why, sizeof(why)),
	       1, "http_acl: no rules allow");
}

static void test_paths(struct http_proxy *p)
{
	static const char *const tricks[][2] = {
		{ "/a/../secret", "* 127.0.0.1/secret*" },
		{ "/%2e%2e/secret", "* 127.0.0.1/secret*" },
		{ "//secret", "* 127.0.0.1/secret*" },
		{ "/a/%2fsecret", "* 127.0.0.1/a/secret*" },
	};
	char why[256];

	for (size_t i = 0; i < 4; i++) {
		unsigned before = origin_requests();
		snprintf(why, sizeof(why), "denied by rule \"%s\"", tricks[i][1]);
		is_str(exchange(p, req("GET", tricks[i][0], NULL)), refusal(403, "Forbidden", why),
		       "path %s judged after normalisation", tricks[i][0]);
		is_int(origin_requests(), before, "the origin saw nothing of %s", tricks[i][0]);
	}
	is_str(exchange(p, req("GET", "/a/./b/../%7Epub//x", NULL)), ok_body("/a/~pub/x"),
	       "control: a normalised path allowed and sent upstream normalised");
}

static void test_smuggling(struct http_proxy *p)
{
	static const char *const shapes[][2] = {
		{ "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n", "CL+TE" },
		{ "Content-Length: 3\r\nContent-Length: 3\r\n", "two Content-Length" },
	};
	char r[16384];

	for (size_t i = 0; i < 2; i++) {
		unsigned before = origin_requests();
		snprintf(r, sizeof(r), "%sabc", req("POST", "/upload", shapes[i][0]));
		const char *got = exchange(p, r);
		ok(strncmp(got, "HTTP/1.1 400 Bad Request\r\n", 26) == 0, "%s: 400", shapes[i][1]);
		if (strncmp(got, "HTTP/1.1 400", 12) != 0)
			diag("got: %s", got);
		is_int(origin_requests(), before, "%s: the origin saw nothing", shapes[i][1]);
	}
}

static void test_authority(struct http_proxy *p)
{
	char r[8192], why[256];
	unsigned before = origin_requests();

	snprintf(r, sizeof(r), "GET / HTTP/1.1\r\nHost: spoof.test:%d\r\n\r\n", port);
	is_str(exchange(p, r),
	       refusal(403, "Forbidden", "host spoof.test is not the connection's destination "
					 "127.0.0.1"),
	       "an allowed name that is not the destination: 403");
	is_int(origin_requests(), before, "the origin saw nothing of the spoofed Host");
	snprintf(r, sizeof(r), "GET /g HTTP/1.1\r\nHost: good.test:%d\r\nConnection: close\r\n\r\n",
		 port);
	is_str(exchange(p, r), ok_body("/g"), "control: a name resolved to the destination");

	snprintf(r, sizeof(r),
		 "GET http://127.0.0.1:%d/abs?x=1 HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
		 "Connection: close\r\n\r\n", port, port);
	is_str(exchange(p, r), ok_body("/abs?x=1"), "absolute-form: sent upstream in origin-form");
	snprintf(r, sizeof(r),
		 "GET http://good.test:%d/abs HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", port, port);
	is_str(exchange(p, r),
	       refusal(400, "Bad Request", "the request target's authority and Host differ"),
	       "absolute-form and Host disagree: 400");
	snprintf(r, sizeof(r), "GET / HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n");
	snprintf(why, sizeof(why), "port 1 is not the connection's destination port %d", port);
	is_str(exchange(p, r), refusal(400, "Bad Request", why), "another port in Host: 400");
	ok(strncmp(exchange(p, "GET / HTTP/1.1\r\n\r\n"), "HTTP/1.1 400 Bad Request\r\n", 26) == 0,
	   "HTTP/1.1 without Host: 400");
	const char *got = exchange(p, "GET http://u@127.0.0.1/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
	ok(strncmp(got, "HTTP/1.1 400 Bad Request\r\n", 26) == 0, "userinfo: 400");
	snprintf(r, sizeof(r), "CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", port,
		 port);
	is_str(exchange(p, r),
	       refusal(405, "Method Not Allowed",
		       "CONNECT to 127.0.0.1 is not allowed by any rule"),
	       "CONNECT without a rule naming it: 405");
}

/* GET /big/@n on @fd: the head, then exactly @n bytes of big_byte(). */
static int big_response(int fd, size_t n)
{
	char head[256], want[128], chunk[65536];
	size_t len = 0, off = 0;
	ssize_t k;

	snprintf(want, sizeof(want), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n", n);
	snprintf(head, sizeof(head), "GET /big/%zu HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", n,
		 port);
	send_str(fd, head);
	while (len < strlen(want) && (k = recv(fd, head + len, strlen(want) - len, 0)) > 0)
		len += (size_t)k;
	if (len != strlen(want) || memcmp(head, want, len) != 0)
		return -1;
	while (off < n && (k = recv(fd, chunk, n - off < sizeof(chunk) ? n - off : sizeof(chunk),
				    0)) > 0) {
		for (ssize_t i = 0; i < k; i++)
			if (chunk[i] != big_byte(off + (size_t)i))
				return -1;
		off += (size_t)k;
	}
	return off == n ? 0 : -1;
}

static void test_big(struct http_proxy *p)
{
	char r[256], buf[8192];
	int fd = client(p);

	/* Larger than the relay buffer and the pipe: spliced in several rounds, and the next
	 * response on the connection starts exactly where the body ends. */
	is_int(big_response(fd, 5000000), 0, "a 5 MB body: every byte, in order");
	is_int(big_response(fd, 1234567), 0, "a second large body on the same connection");
	snprintf(r, sizeof(r), "GET /after-big HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", port);
	send_str(fd, r);
	read_response(fd, buf, sizeof(buf));
	is_str(buf, ok_body("/after-big"), "the response after them: exact");
	close(fd);
}

static void test_keepalive(struct http_proxy *p)
{
	char r[1024], buf[8192];
	int fd = client(p), bad = 0;
	unsigned fds = 0, procfds = 0;

	snprintf(r, sizeof(r), "GET /k HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", port);
	for (int i = 0; i < 1000; i++) {
		send_str(fd, r);
		if (read_response(fd, buf, sizeof(buf)) < 0 || strcmp(buf, ok_body("/k")) != 0)
			bad++;
		if (i == 0) {
			fds = http_proxy_fds(p);
			procfds = open_fds();
		}
	}
	is_int(bad, 0, "1,000 requests on one connection answered");
	is_int(http_proxy_fds(p), fds, "the proxy's descriptors did not grow");
	is_int(open_fds(), procfds, "the process's descriptors did not grow");

	snprintf(r, sizeof(r),
		 "GET /p1 HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\nGET /p2 HTTP/1.1\r\nHost: "
		 "127.0.0.1:%d\r\n\r\n", port, port);
	send_str(fd, r);
	char both[256];
	snprintf(both, sizeof(both), "%s", ok_body("/p1"));
	snprintf(both + strlen(both), sizeof(both) - strlen(both), "%s", ok_body("/p2"));
	size_t got = 0;
	while (got < strlen(both)) {
		ssize_t k = recv(fd, buf + got, sizeof(buf) - 1 - got, 0);
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	buf[got] = '\0';
	is_str(buf, both, "pipelined: both answered, in order");

	snprintf(r, sizeof(r),
		 "POST /upload HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nTransfer-Encoding: chunked\r\n\r\n"
		 "3\r\nabc\r\n0\r\n\r\n", port);
	send_str(fd, r);
	read_response(fd, buf, sizeof(buf));
	is_str(buf, ok_body("/upload"), "chunked request: answered");
	const char *last = origin_last();
	size_t n = strlen(last);
	ok(n > 17 && strcmp(last + n - 17, "\r\n\r\n3\r\nabc\r\n0\r\n\r\n") == 0 &&
		   strstr(last, "\r\nTransfer-Encoding: chunked\r\n"),
	   "chunked request: the origin got the chunks verbatim");
	snprintf(r, sizeof(r), "GET /chunked HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", port);
	send_str(fd, r);
	read_response(fd, buf, sizeof(buf));
	is_str(buf, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n"
		    "0\r\n\r\n", "chunked response: passed verbatim");
	snprintf(r, sizeof(r), "GET /close HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", port);
	send_str(fd, r);
	read_all(fd, buf, sizeof(buf));
	is_str(buf, "HTTP/1.1 200 OK\r\n\r\nuntil close",
	       "a response until close: relayed, then the connection closed");
	close(fd);
}

static void test_table(struct http_proxy *p)
{
	struct sockaddr_storage ss, local, pa;
	socklen_t len = sizeof(ss), ll = sizeof(local), pl;
	char buf[1024];
	int fd = client(p);

	getsockname(fd, (struct sockaddr *)&local, &ll);
	ok(http_proxy_original(p, &local, ll, &ss, &len) == 0 &&
		   len == sizeof(origin.addr) && memcmp(&ss, &origin.addr, len) == 0,
	   "http_proxy_original: the announced destination");
	is_int(http_proxy_expect(p, &local, ll, (struct sockaddr_storage *)&origin.addr,
				 sizeof(origin.addr)),
	       -EEXIST, "a second entry for the same address: -EEXIST");
	close(fd);
	int r = 0;
	for (int i = 0; i < 200 && (r = http_proxy_original(p, &local, ll, &ss, &len)) == 0; i++)
		usleep(10000);
	is_int(r, -ENOENT, "the entry goes with the connection");

	http_proxy_address(p, AF_INET, &pa, &pl);
	is_int(http_proxy_is_listener(p, &pa, pl), 1, "the listener is the proxy's");
	is_int(http_proxy_is_listener(p, (struct sockaddr_storage *)&origin.addr,
				      sizeof(origin.addr)), 0, "the origin is not");

	unsigned before = origin_requests();
	fd = client_to(p, &origin.addr, 0);
	send_str(fd, req("GET", "/hello", NULL));
	ssize_t k = read_all(fd, buf, sizeof(buf));
	ok(k == 0 || (k < 0 && errno == ECONNRESET), "a connection nobody announced: closed");
	is_int(origin_requests(), before, "the origin saw nothing of it");
	close(fd);
}

static void test_upstream_errors(struct http_proxy *p)
{
	struct sockaddr_in dead = origin.addr;
	socklen_t len = sizeof(dead);
	char buf[4096];
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	/* A port nobody listens on: bound, then closed. */
	dead.sin_port = 0;
	bind(s, (struct sockaddr *)&dead, sizeof(dead));
	getsockname(s, (struct sockaddr *)&dead, &len);
	close(s);
	int fd = client_to(p, &dead, 1);
	snprintf(buf, sizeof(buf), "GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n",
		 ntohs(dead.sin_port));
	send_str(fd, buf);
	read_all(fd, buf, sizeof(buf));
	close(fd);
	is_str(buf, refusal(502, "Bad Gateway",
			    "cannot connect to upstream 127.0.0.1: Connection refused"),
	       "upstream refused: 502 with the reason");

	is_str(exchange(p, req("GET", "/silent", NULL)),
	       refusal(504, "Gateway Timeout", "upstream 127.0.0.1 sent no response within 300 ms"),
	       "upstream silent past upstream_timeout_ms: 504");
	is_str(exchange(p, req("GET", "/after", NULL)), ok_body("/after"),
	       "control: the same origin answering: 200");

	/* A body the origin cuts short or stops sending: the client gets what came, never a
	 * byte more, and then the end of the connection (the stall within the timeout). */
	static const char part[] = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789";
	is_str(exchange(p, req("GET", "/short", NULL)), part,
	       "a body cut short by the origin: what came, then the connection closed");
	struct timeval t0, t1;
	gettimeofday(&t0, NULL);
	is_str(exchange(p, req("GET", "/stall", NULL)), part,
	       "a body the origin stops sending: what came, then the connection closed");
	gettimeofday(&t1, NULL);
	long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_usec - t0.tv_usec) / 1000;
	ok(ms >= 250 && ms < 2500, "... after the upstream timeout (300 ms): %ld ms", ms);

	fd = client(p);
	snprintf(buf, sizeof(buf),
		 "CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", port, port);
	send_str(fd, buf);
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	is_str(buf, "HTTP/1.1 200 Connection established\r\n\r\n",
	       "CONNECT where a rule names it: established");
	send_str(fd, req("GET", "/tunnelled", NULL));
	read_response(fd, buf, sizeof(buf));
	is_str(buf, ok_body("/tunnelled"), "CONNECT: the tunnel reaches the destination");
	close(fd);
}

static void test_auth(struct http_proxy *p)
{
	static const struct {
		const char *target, *extra, *line, *field, *absent;
	} cases[] = {
		{ "/bearer", "Authorization: Bearer child\r\n", "GET /bearer HTTP/1.1",
		  "Authorization: Bearer s3/cret\r\n", "child" },
		{ "/basic", NULL, "GET /basic HTTP/1.1", "Authorization: Basic YWxpY2U6czMvY3JldA==\r\n",
		  NULL },
		{ "/hdr", "X-Api-Key: mine\r\n", "GET /hdr HTTP/1.1", "X-Api-Key: s3/cret\r\n",
		  "mine" },
		{ "/hdr-add", "X-Api-Key: mine\r\n", "GET /hdr-add HTTP/1.1", "X-Api-Key: mine\r\n",
		  "s3/cret" },
		{ "/hdr-add", NULL, "GET /hdr-add HTTP/1.1", "X-Api-Key: s3/cret\r\n", NULL },
		{ "/q?a=1&key=child", NULL, "GET /q?a=1&key=s3%2Fcret HTTP/1.1", NULL, "child" },
		{ "/q-add?key=child", NULL, "GET /q-add?key=child HTTP/1.1", NULL, "s3" },
		{ "/q-add?a=1", NULL, "GET /q-add?a=1&key=s3%2Fcret HTTP/1.1", NULL, NULL },
		{ "/plain", "Authorization: Bearer child\r\n", "GET /plain HTTP/1.1",
		  "Authorization: Bearer child\r\n", "s3" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		exchange(p, req("GET", cases[i].target, cases[i].extra));
		const char *last = origin_last();
		ok(strncmp(last, cases[i].line, strlen(cases[i].line)) == 0 &&
			   (!cases[i].field || strstr(last, cases[i].field)) &&
			   (!cases[i].absent || !strstr(last, cases[i].absent)),
		   "injection %s%s: %s", cases[i].target, cases[i].extra ? " (child's own)" : "",
		   cases[i].line);
		if (strncmp(last, cases[i].line, strlen(cases[i].line)) != 0)
			diag("the origin got: %s", last);
	}
}

/* --- TLS: an origin with a certificate of its own CA ------------------------------------- */

static struct sockaddr_in tls_addr;
static SSL_CTX *tls_origin_ctx;
static int tls_origin_resumed; /* the last TLS connection to the origin resumed a session */

static int origin_choose(SSL *ssl, const char *sni, char *name, size_t namelen)
{
	snprintf(name, namelen, "%s", sni ? sni : "127.0.0.1");
	return 0;
}

static void *tls_origin_conn(void *arg)
{
	struct stream s = { .fd = (int)(long)arg, .timeout_ms = 5000 };
	char buf[16384], why[256];
	size_t len = 0;
	ssize_t e = 0;

	if (stream_tls_accept(&s, tls_origin_ctx, NULL, why, sizeof(why)) == 0) {
		pthread_mutex_lock(&origin.lock);
		tls_origin_resumed = SSL_session_reused(s.ssl);
		pthread_mutex_unlock(&origin.lock);
		while ((e = message_end(buf, len, 0)) <= 0) {
			ssize_t n = stream_read(&s, buf + len, sizeof(buf) - 1 - len);
			if (n <= 0)
				break;
			len += (size_t)n;
		}
	}
	if (e > 0) {
		char target[4096] = "";
		pthread_mutex_lock(&origin.lock);
		origin.requests++;
		memcpy(origin.last, buf, (size_t)e);
		origin.last[e] = '\0';
		pthread_mutex_unlock(&origin.lock);
		sscanf(buf, "%*s %4095s", target);
		const char *out = ok_body(target);
		stream_write_all(&s, out, strlen(out));
		stream_shutdown_write(&s);
	}
	stream_close(&s);
	return NULL;
}

static void *tls_origin_main(void *arg)
{
	int lfd = (int)(long)arg;
	for (;;) {
		int fd = accept(lfd, NULL, NULL);
		pthread_t t;
		if (fd >= 0 && pthread_create(&t, NULL, tls_origin_conn, (void *)(long)fd) == 0)
			pthread_detach(t);
	}
	return NULL;
}

static void write_pem(struct tls_ca *ca, const char *path)
{
	char *pem = NULL;
	size_t n = 0;
	FILE *f = fopen(path, "w");
	if (!f || tls_ca_pem(ca, &pem, &n) < 0 || fwrite(pem, 1, n, f) != n) {
		printf("Bail out! cannot write %s\n", path);
		exit(1);
	}
	fclose(f);
	free(pem);
}

/* A TLS client to the proxy trusting @ca, for @name; the handshake's result. */
static int tls_client(struct http_proxy *p, struct tls_ca *ca, const char *name,
		      struct stream *s)
{
	SSL_CTX *ctx = NULL;
	char err[256], *pem = NULL;
	size_t n;

	*s = (struct stream){ .fd = client_to(p, &tls_addr, 1), .timeout_ms = 5000 };
	if (s->fd < 0 || tls_client_ctx(&ctx, err, sizeof(err)) < 0 || tls_ca_pem(ca, &pem, &n) < 0)
		return -EIO;
	BIO *b = BIO_new_mem_buf(pem, (int)n);
	X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
	X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), x);
	X509_free(x);
	BIO_free(b);
	free(pem);
	int r = stream_tls_connect(s, ctx, name, err, sizeof(err));
	SSL_CTX_free(ctx);
	return r;
}

static const char *tls_get(struct stream *s, const char *target)
{
	static char buf[8192];
	char req2[1024];
	size_t len = 0;
	ssize_t n;

	snprintf(req2, sizeof(req2), "GET %s HTTP/1.1\r\nHost: tls.test\r\nConnection: close\r\n\r\n",
		 target);
	buf[0] = '\0';
	if (stream_write_all(s, req2, strlen(req2)) < 0)
		return buf;
	while (len < sizeof(buf) - 1 && (n = stream_read(s, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	return buf;
}

static void test_tls(void)
{
	struct tls_ca *proxy_ca = NULL, *origin_ca = NULL;
	char err[256], dir[256], path[300], other[300];
	socklen_t len = sizeof(tls_addr);
	struct stream s;
	pthread_t t;
	size_t n;

	if (tls_ca_generate(&proxy_ca, err, sizeof(err)) < 0 ||
	    tls_ca_generate(&origin_ca, err, sizeof(err)) < 0 ||
	    tls_server_ctx(origin_ca, origin_choose, &tls_origin_ctx, err, sizeof(err)) < 0 ||
	    !tap_mkdtemp(dir, sizeof(dir), "test-http-proxy")) {
		printf("Bail out! TLS setup: %s\n", err);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/origin.pem", dir);
	snprintf(other, sizeof(other), "%s/other.pem", dir);
	write_pem(origin_ca, path);
	write_pem(proxy_ca, other);
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	tls_addr = origin.addr;
	tls_addr.sin_port = 0;
	bind(lfd, (struct sockaddr *)&tls_addr, sizeof(tls_addr));
	listen(lfd, 16);
	getsockname(lfd, (struct sockaddr *)&tls_addr, &len);
	pthread_create(&t, NULL, tls_origin_main, (void *)(long)lfd);
	pthread_detach(t);

	static const char *const allow[] = { "GET tls.test/*", NULL };
	static char tls_name[] = "tls.test";
	struct http_host_addrs tls_host = acl_hosts[0];
	tls_host.name = tls_name;
	struct http_proxy_config cfg = { .ca = proxy_ca, .hosts = &tls_host, .n_hosts = 1 };
	cfg.allow = rules(allow, &n);
	cfg.n_allow = n;
	/* The upstream side trusts the origin's CA only (the host's store stays out). */
	setenv("SSL_CERT_FILE", path, 1);
	setenv("SSL_CERT_DIR", dir, 1);
	struct http_proxy *p = start(&cfg);
	unsigned before = origin_requests();
	is_int(tls_client(p, proxy_ca, "tls.test", &s), 0, "TLS: the proxy's leaf for the SNI name");
	is_str(tls_get(&s, "/tls"), ok_body("/tls"), "TLS: an allowed request reaches the origin");
	is_int(origin_requests(), before + 1, "TLS: the origin saw it, over TLS");
	is_int(tls_origin_resumed, 0, "TLS: the proxy's first connection to the origin: full");
	stream_close(&s);
	/* The next connection resumes the session of the first (verified for tls.test at this
	 * address): no certificate sent or verified again. */
	is_int(tls_client(p, proxy_ca, "tls.test", &s), 0, "TLS: a second connection");
	is_str(tls_get(&s, "/again"), ok_body("/again"), "TLS: the second request is answered");
	is_int(tls_origin_resumed, 1, "TLS: the proxy's second connection resumed the session");
	stream_close(&s);
	ok(tls_client(p, proxy_ca, "127.0.0.1", &s) < 0,
	   "TLS without SNI: refused when no rule names the address");
	stream_close(&s);
	http_proxy_stop(p);

	setenv("SSL_CERT_FILE", other, 1);
	p = start(&cfg);
	is_int(tls_client(p, proxy_ca, "tls.test", &s), 0, "TLS: handshake with the proxy");
	const char *got = tls_get(&s, "/tls");
	ok(strncmp(got, "HTTP/1.1 502 Bad Gateway\r\n", 26) == 0 &&
		   strstr(got, "sandlock: TLS to upstream tls.test: "),
	   "an origin the host does not trust: 502 with the reason");
	if (strncmp(got, "HTTP/1.1 502", 12) != 0)
		diag("got: %s", got);
	stream_close(&s);
	http_proxy_stop(p);

	cfg.ca = NULL;
	p = start(&cfg);
	before = origin_requests();
	ok(tls_client(p, proxy_ca, "tls.test", &s) < 0, "TLS without a CA: the connection is closed");
	is_int(origin_requests(), before, "TLS without a CA: the origin saw nothing");
	stream_close(&s);
	http_proxy_stop(p);
	rules_free(cfg.allow, cfg.n_allow);
	unlink(path);
	unlink(other);
	rmdir(dir);
	tls_ca_free(proxy_ca);
	tls_ca_free(origin_ca);
}

int main(void)
{
	struct http_proxy_config cfg = { 0 };
	size_t n;

	signal(SIGPIPE, SIG_IGN);
	origin_start();
	port = ntohs(origin.addr.sin_port);
	hosts_init();

	cfg.allow = rules(acl_allow, &cfg.n_allow);
	cfg.deny = rules(acl_deny, &n);
	cfg.n_deny = n;
	cfg.hosts = acl_hosts;
	cfg.n_hosts = 2;
	struct http_proxy *p = start(&cfg);
	test_verdicts(p);
	test_paths(p);
	test_smuggling(p);
	test_authority(p);
	test_keepalive(p);
	test_big(p);
	test_table(p);
	http_proxy_stop(p);

	static const char *const open_allow[] = { "* 127.0.0.1/*", "CONNECT 127.0.0.1", NULL };
	struct http_proxy_config ecfg = { .upstream_timeout_ms = 300 };
	ecfg.allow = rules(open_allow, &ecfg.n_allow);
	p = start(&ecfg);
	test_upstream_errors(p);
	http_proxy_stop(p);

	static const char *const auth_rules[] = {
		"GET 127.0.0.1/bearer* bearer tok",
		"GET 127.0.0.1/basic* basic:alice tok",
		"GET 127.0.0.1/hdr-add* header:X-Api-Key tok add-only",
		"GET 127.0.0.1/hdr* header:X-Api-Key tok",
		"GET 127.0.0.1/q-add* query:key tok add-only",
		"GET 127.0.0.1/q* query:key tok",
		NULL,
	};
	static char tok_name[] = "tok", tok_value[] = "s3/cret";
	static struct http_secret tok = { .name = tok_name, .value = tok_value, .len = 7 };
	struct http_proxy_config acfg = { .allow = ecfg.allow, .n_allow = 1, .secrets = &tok,
					  .n_secrets = 1 };
	acfg.auth = auths(auth_rules, &acfg.n_auth);
	p = start(&acfg);
	test_auth(p);
	http_proxy_stop(p);
	auths_free(acfg.auth, acfg.n_auth);
	rules_free(ecfg.allow, ecfg.n_allow);
	rules_free(cfg.allow, cfg.n_allow);
	rules_free(cfg.deny, cfg.n_deny);
	test_tls();
	return done_testing();
}
