/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * canon: the canonical text of each rule-like policy entry, so that two spellings of one rule
 * are one entry and a dump loads back equal. Each parses @in with the strict parsers of rules.h
 * and formats the result into @out; on failure it returns -errno and a one-line reason in @err.
 * Pure: no syscalls.
 */
#pragma once

#include <stddef.h>

#define NET_CANON_DENY 1 /* net_deny: literal IPs and CIDRs only */

struct net_rule;
/* With @ret_rule (may be NULL), the rule parsed too (the caller's: net_rule_done). */
int net_rule_canon(const char *in, int deny, char *out, size_t size, struct net_rule *ret_rule,
		   char *err, size_t errlen);
int http_rule_canon(const char *in, char *out, size_t size, char *err, size_t errlen);
int mount_entry_canon(const char *in, char *out, size_t size, char *err, size_t errlen);
int credential_canon(const char *in, char *out, size_t size, char *err, size_t errlen);
int http_auth_canon(const char *in, char *out, size_t size, char *err, size_t errlen);
struct port_set;
/* "8080", "9000-9005", "*"; port 0 only in an allow list (bind(0)). With @ret_set (may be NULL),
 * the ports parsed too (the caller's: port_set_done). */
int bind_ports_canon(const char *in, int allow, char *out, size_t size, struct port_set *ret_set,
		     char *err, size_t errlen);
/* RFC 3339 with an offset, or a Unix time in seconds; out: UTC, "YYYY-MM-DDTHH:MM:SS[.f]Z". */
int time_canon(const char *in, char *out, size_t size, char *err, size_t errlen);
