/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proxy-acl: the verdict on one request and the choice of its credential. Pure functions over
 * the configuration's rules (http_rule_match): no I/O, no state, so that the request loop and
 * the tests ask the same question the same way.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "http/proxy.h"

static void why_rule(const char *what, const struct http_rule *r, char *why, size_t whylen)
{
	char *text = NULL;

	if (!why || !whylen)
		return;
	if (http_rule_format(r, &text) < 0)
		snprintf(why, whylen, "%s a rule", what);
	else
		snprintf(why, whylen, "%s rule \"%s\"", what, text);
	free(text);
}

int http_acl(const struct http_proxy_config *cfg, const char *method, const char *host,
	     uint16_t port, const char *path, char *why, size_t whylen)
{
	for (size_t i = 0; i < cfg->n_deny; i++) {
		if (http_rule_match(&cfg->deny[i], method, host, port, path)) {
			why_rule("denied by", &cfg->deny[i], why, whylen);
			return 0;
		}
	}
	if (cfg->n_allow == 0)
		return 1;
	for (size_t i = 0; i < cfg->n_allow; i++)
		if (http_rule_match(&cfg->allow[i], method, host, port, path))
			return 1;
	if (why && whylen)
		snprintf(why, whylen, "no allow rule matched");
	return 0;
}

const struct http_auth *http_auth_for(const struct http_proxy_config *cfg, const char *method,
				      const char *host, uint16_t port, const char *path)
{
	for (size_t i = 0; i < cfg->n_auth; i++)
		if (http_rule_match(&cfg->auth[i].rule, method, host, port, path))
			return &cfg->auth[i];
	return NULL;
}
