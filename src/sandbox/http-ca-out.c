/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * http-ca-out: http_ca_out, the active CA's certificate (PEM, never its key) written where the
 * policy says before the command starts, by the caller, so a runtime with a trust list of its
 * own (NODE_EXTRA_CA_CERTS, a Java keystore) can be pointed at it.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "fd-util.h"
#include "plan/plan.h"
#include "sandbox-internal.h"

int sandbox_http_ca_out(const struct plan *plan, const char *label, struct sandlock_error **reterr)
{
	const struct plan_http *h = &plan->http;

	if (!h->ca_out)
		return 0;
	if (!h->ca_pem)
		return error_set(reterr, -EINVAL, "%s: %s: no CA is active", label, h->ca_out);
	_cleanup_close_ int fd = open(h->ca_out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int r = fd < 0 ? negative_errno() : write_full(fd, h->ca_pem, h->ca_pem_len);
	if (r == 0 && close(TAKE_FD(fd)) < 0)
		r = negative_errno();
	if (r < 0)
		return error_set(reterr, r, "%s: %s: %s", label, h->ca_out, strerror(-r));
	return 0;
}
