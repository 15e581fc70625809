/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rules: the small grammars of the policy's string rules (network endpoints, bind ports, HTTP
 * ACL rules, time_start, mount entries, credentials and credential injection), each with a
 * parser, a formatter that prints the canonical text (parse(format(parse(x))) == parse(x), for
 * policy dumps) and, where the rule decides something, a matcher. Pure functions over strings:
 * no syscalls, no globals, no DNS, no I/O; a hostname is kept as a name and resolved elsewhere.
 *
 * Every parser returns 0 or -EINVAL (syntax), -ERANGE (a number or field out of its range) or
 * -ENOMEM. On failure it writes one line into @err (@errlen bytes, NUL-terminated; @err may be
 * NULL) saying what is wrong and quoting the offending part, and leaves *@ret untouched. On
 * success the caller owns what *@ret points to and releases it with the matching *_done().
 * Formatters return 0 or -ENOMEM (-EINVAL for a struct no parser could have produced) and hand
 * the caller a malloc'd string in *@ret.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "basic/parse-util.h"

/* --- network endpoint rules: --net-allow, --net-deny, [network].allow/deny --------------- */

#define NET_PROTO_TCP 0x1u
#define NET_PROTO_UDP 0x2u
#define NET_PROTO_ICMP 0x4u

#define NET_TARGET_ANY 0  /* "*", or an empty target before ":ports" */
#define NET_TARGET_HOST 1 /* a hostname, resolved later; never matched here */
#define NET_TARGET_IP 2	  /* an address or a CIDR */

#define NET_RULE_ALLOW 0
#define NET_RULE_DENY 1 /* literal IPs, CIDRs and "*" only */

#define NET_HOST_MAX 253 /* RFC 1123 name, without the trailing dot */

struct net_rule {
	uint32_t protos;	     /* NET_PROTO_*: no scheme is TCP|UDP */
	int kind;		     /* NET_TARGET_* */
	char host[NET_HOST_MAX + 1]; /* NET_TARGET_HOST: lower case, no trailing dot */
	int family;		     /* NET_TARGET_IP: AF_INET or AF_INET6 */
	uint8_t addr[16]; /* NET_TARGET_IP: as written, host bits kept (4 bytes used for AF_INET) */
	uint8_t prefix;	  /* NET_TARGET_IP: 0..32 or 0..128; 32/128 for a plain address */
	struct port_set ports; /* .all when no port was given, "*", or icmp:// */
};

/* "[scheme://]target[:ports]" (see CLI.md). The scheme is case-insensitive; no whitespace
 * anywhere. Two colons or more outside brackets make an IPv6 literal (all ports), so ports
 * after one need "[v6]:ports"; a CIDR may be bracketed too ("[2001:db8::/32]:443"). An empty
 * target before ports (":443") is "*". A hostname whose last label is numeric ("1.2.3",
 * "0x7f") is refused, as getaddrinfo() would read it as an address. Ports are 1..65535;
 * icmp:// takes none. @mode is NET_RULE_ALLOW or NET_RULE_DENY: a deny rule takes no hostname
 * ("*" and ":ports" are fine). Fills *@ret (owned by the caller: net_rule_done()). */
int net_rule_parse(const char *s, int mode, struct net_rule *ret, char *err, size_t errlen);
/* Frees the port list and zeroes @r; accepts a zeroed rule. */
void net_rule_done(struct net_rule *r);
/* The canonical text: scheme only when not TCP|UDP, "[v6]" only when ports follow, no ":*",
 * "/N" only when N is not the full length. *@ret is malloc'd, owned by the caller. */
int net_rule_format(const struct net_rule *r, char **ret);
/* 1 when @a and @b are the same rule (same fields, same port list in the same order). */
int net_rule_equal(const struct net_rule *a, const struct net_rule *b);
/* 1 when a connection of @proto (one NET_PROTO_* bit) to @addr (4 bytes for AF_INET, 16 for
 * AF_INET6) port @port falls under @r, else 0. IPv4-mapped IPv6 addresses (::ffff:a.b.c.d),
 * in the rule (prefix >= 96) or in the query, count as the IPv4 address; other IPv6 rules,
 * "::/0" included, never match an IPv4 destination. The port is ignored for ICMP. A
 * NET_TARGET_HOST rule never matches: it is resolved to addresses later. */
int net_rule_match(const struct net_rule *r, uint32_t proto, int family, const uint8_t *addr,
		   uint16_t port);

/* A deep copy of @r into *@ret (the caller's: net_rule_done). 0 or -ENOMEM. */
int net_rule_copy(const struct net_rule *r, struct net_rule *ret);
/* The rule "*" parses to (TCP and UDP, any host, every port): what a deny list alone allows
 * around its denials. Owns no memory. */
void net_rule_everything(struct net_rule *ret);

/* @r (a NET_TARGET_HOST rule) for one of its host's addresses: the same protocols and ports,
 * @addr (4 or 16 bytes of @family) as a plain address. *@ret is the caller's (net_rule_done). */
int net_rule_pinned(const struct net_rule *r, int family, const uint8_t *addr,
		    struct net_rule *ret);

/* What enforcing the rules net_allow @allow and net_deny @deny (@n_allow and @n_deny of them)
 * takes. A deny list alone allows everything else (as "*": TCP and UDP). */
struct net_needs {
	uint32_t sockets;  /* NET_PROTO_UDP, NET_PROTO_ICMP: the datagram sockets that may exist */
	int onbehalf;	   /* connects are made by the supervisor: some rule is not a TCP port rule
			    * to any host (Landlock's CONNECT_TCP), or there is a deny rule */
	int dgram_checked; /* a UDP or ICMP socket may exist and where it sends is restricted: the
			    * supervisor also makes the sends (sendto, sendmsg, sendmmsg) */
};
void net_rules_needs_of(const struct net_rule *allow, size_t n_allow, const struct net_rule *deny,
			size_t n_deny, struct net_needs *ret);
/* The same over rule texts: parses each (-EINVAL when one does not parse, -ENOMEM). */
int net_rules_needs(char *const *allow, char *const *deny, struct net_needs *ret);

/* --- bind ports: --net-allow-bind, --net-deny-bind, [network].allow_bind/deny_bind -------- */

#define NET_BIND_ALLOW 0 /* "*" alone, or ports; 0 authorizes only bind(0) */
#define NET_BIND_DENY 1	 /* ports 1..65535 only */

/* Append the ports of @s ("8080", "9000-9005", "80, 443", "*": parse_ports() syntax) to @set,
 * which may hold the entries parsed before (so a list of strings accumulates, and "*" cannot
 * join ports across entries either). NET_BIND_DENY refuses "*" and port 0. On failure @set is
 * as it was. */
int bind_ports_parse(const char *s, int mode, struct port_set *set, char *err, size_t errlen);
/* "*", "8080,9000-9005", or "" for an empty set. *@ret malloc'd, owned by the caller. */
int bind_ports_format(const struct port_set *set, char **ret);
/* The ports of @s (NET_BIND_ALLOW syntax, not "*"), sorted without duplicates: the first @n go
 * to @ports; returns how many there are (at most 65536) or -errno with @err filled. */
int bind_ports_expand(const char *s, uint16_t *ports, size_t n, char *err, size_t errlen);

/* --- HTTP ACL rules: --http-allow, --http-deny, [http].allow/deny ------------------------- */

#define HTTP_METHOD_MAX 32

#define HTTP_HOST_ANY 0
#define HTTP_HOST_NAME 1
#define HTTP_HOST_IP 2
#define HTTP_HOST_SUFFIX 3 /* "*.example.com": any name under it, not the name itself */

struct http_rule {
	char method[HTTP_METHOD_MAX + 1]; /* upper case, or "*" */
	int host_kind;			  /* HTTP_HOST_* */
	char host[NET_HOST_MAX + 1];	  /* HTTP_HOST_NAME, HTTP_HOST_SUFFIX ("example.com"
					   * for "*.example.com"): lower case, no trailing dot */
	int family;			  /* HTTP_HOST_IP: AF_INET or AF_INET6 */
	uint8_t addr[16];		  /* HTTP_HOST_IP */
	uint16_t port;			  /* 0: any port */
	char *path; /* owned: starts with '/', may hold '*' globs; omitted: slash-star */
};

/* "METHOD host[:port][/path]", two fields separated by spaces or tabs (leading and trailing
 * ones ignored). METHOD: "*" or 1..32 letters, stored upper-cased. host: "*", an RFC 1123 name
 * (as for net rules), "*." and such a name (every subdomain of it, at any depth, but not the
 * name itself), an IPv4 address, "[v6]" or a bare v6 (which takes no port); port 1..65535.
 * path: from the first '/', printable ASCII; omitted, it is every path. Fills *@ret (owned by
 * the caller: http_rule_done()). */
int http_rule_parse(const char *s, struct http_rule *ret, char *err, size_t errlen);
void http_rule_done(struct http_rule *r);
/* "METHOD host[:port]/path", a v6 host always bracketed. *@ret malloc'd, owned by the caller. */
int http_rule_format(const struct http_rule *r, char **ret);
/* 1 when @a and @b are the same rule. */
int http_rule_equal(const struct http_rule *a, const struct http_rule *b);
/* 1 when the request matches @r. @method compares case-insensitively; @host is the request's
 * host without a port ("Example.COM.", "10.0.0.1", "[::1]" or "::1"; a suffix rule matches
 * a name with at least one non-empty label before the suffix); @port its port; @path
 * the request path as the caller normalised it (this matches it literally: percent-decoding,
 * dot segments and whether the query string is part of it are the caller's decisions). */
int http_rule_match(const struct http_rule *r, const char *method, const char *host, uint16_t port,
		    const char *path);
/* 1 when @str matches @pattern, where '*' matches any run of characters, '/' included, and
 * every other byte itself. Iterative, O(strlen(pattern) * strlen(str)) at worst. */
int http_glob_match(const char *pattern, const char *str);

/* --- time_start: RFC 3339 ---------------------------------------------------------------- */

/* "YYYY-MM-DDTHH:MM:SS.fffffffffZ" and its NUL. */
#define RFC3339_BUF_SIZE 31

/* An RFC 3339 date-time with an offset: separator 'T', 't' or ' '; up to 9 fractional digits;
 * offset 'Z', 'z', "+hh:mm" or "-hh:mm". Second 60 (a leap second) is accepted anywhere and
 * counts as the first second of the next minute, as POSIX time has no leap seconds. The
 * instant, in UTC, must lie in the years 0000..9999. *@ret_sec (Unix seconds) and *@ret_nsec
 * are written only on success. */
int rfc3339_parse(const char *s, int64_t *ret_sec, uint32_t *ret_nsec, char *err, size_t errlen);
/* "YYYY-MM-DDTHH:MM:SS[.fffffffff]Z" into @buf (9 fractional digits, only when @nsec is not 0).
 * -ERANGE when the instant is outside the years 0000..9999 or @nsec >= 10^9. */
int rfc3339_format(int64_t sec, uint32_t nsec, char buf[static RFC3339_BUF_SIZE]);

/* --- mount entries: --fs-mount, [filesystem].mount --------------------------------------- */

struct mount_entry {
	char *virt; /* owned; absolute, no ':' */
	char *host; /* owned; absolute, no ':' */
	int ro;
};

/* "VIRTUAL:HOST[:ro|:rw]", default rw; the mode is lower case. Both paths are non-empty and
 * absolute and kept as written (no normalisation, no ${HOME} expansion: the caller's job).
 * Fills *@ret (owned by the caller: mount_entry_done()). */
int mount_entry_parse(const char *s, struct mount_entry *ret, char *err, size_t errlen);
void mount_entry_done(struct mount_entry *m);
/* "VIRTUAL:HOST" or "VIRTUAL:HOST:ro". -EINVAL when a path is not absolute or holds a ':'. */
int mount_entry_format(const struct mount_entry *m, char **ret);

/* --- credentials: --credential NAME=SOURCE ----------------------------------------------- */

#define CRED_SOURCE_ENV 1
#define CRED_SOURCE_FILE 2
#define CRED_SOURCE_FD 3

struct credential_spec {
	char *name; /* owned; [A-Za-z0-9_.-]+ */
	int source; /* CRED_SOURCE_* */
	char *ref;  /* owned; the variable name (env) or the absolute path (file); NULL for fd */
	int fd;	    /* CRED_SOURCE_FD: 0..INT_MAX; -1 otherwise */
};

/* "NAME=env:VAR", "NAME=file:/PATH" or "NAME=fd:N" (split at the first '='; source keywords
 * lower case). VAR is [A-Za-z_][A-Za-z0-9_]*; PATH is absolute, otherwise as written; N is
 * decimal, 0..INT_MAX (-ERANGE above). Fills *@ret (owned by the caller:
 * credential_spec_done()). */
int credential_spec_parse(const char *s, struct credential_spec *ret, char *err, size_t errlen);
void credential_spec_done(struct credential_spec *c);
/* "NAME=env:VAR", "NAME=file:PATH" or "NAME=fd:N". *@ret malloc'd, owned by the caller. */
int credential_spec_format(const struct credential_spec *c, char **ret);

/* --- credential injection: --http-auth --------------------------------------------------- */

#define HTTP_AUTH_BEARER 1
#define HTTP_AUTH_BASIC 2
#define HTTP_AUTH_HEADER 3 /* also "apikey:NAME" */
#define HTTP_AUTH_QUERY 4

struct http_auth {
	struct http_rule rule; /* the METHOD HOST/PATH the credential is attached to */
	int kind;	       /* HTTP_AUTH_* */
	char *param;	       /* owned; the basic user, header name or query parameter; NULL
				  for bearer */
	char *credential;      /* owned; the NAME of a --credential (not checked to exist here) */
	int add_only;	       /* 0: replace (the default) */
};

/* "METHOD HOST/PATH AUTH NAME [replace|add-only]", fields separated by spaces or tabs; the
 * first two are an HTTP rule as http_rule_parse() reads it. AUTH (keyword case-insensitive):
 * "bearer"; "basic:USER", USER without ':' (RFC 7617) or controls; "header:NAME" or its alias
 * "apikey:NAME", NAME an HTTP token; "query:PARAM", PARAM of RFC 3986 unreserved characters.
 * NAME as for credentials. Fills *@ret (owned by the caller: http_auth_done()). */
int http_auth_parse(const char *s, struct http_auth *ret, char *err, size_t errlen);
void http_auth_done(struct http_auth *a);
/* "METHOD host/path AUTH NAME" plus " add-only" when set; apikey is written as header. */
int http_auth_format(const struct http_auth *a, char **ret);
