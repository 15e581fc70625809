/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * judge-args: in logging mode, the calls the seccomp filter's argument rules refuse (a clone
 * with namespace flags, ioctl TIOCSTI, a datagram socket without a rule for it...), handed to
 * the supervisor instead of refused in the kernel (plan.arg_denied, plan/seccomp-args.c):
 * matched against the same comparisons on the registers the kernel copied into the
 * notification (nothing another thread can change), answered with the rule's errno and logged
 * with what it refused and, where a rule of the policy would allow it, the flag that adds it.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "events.h"
#include "judge.h"
#include "notif.h"
#include "supervisor.h"

/* What a refused socket() asked, from its arguments: the reason, the flag where a rule allows
 * it, and for an IP socket its family and the protocol a rule would name. */
static void socket_texts(const struct seccomp_arg_rule *rule, const uint64_t *a, char *reason,
			 size_t size, struct event *ev)
{
	uint64_t family = a[0] & 0xffffffffu, type = a[1] & 0xf, proto = a[2];
	int ip = a[0] >> 32 == 0 && (family == AF_INET || family == AF_INET6);
	const char **hint = &ev->hint;

	if (ip)
		ev->family = (int)family;
	if (rule->err == EAFNOSUPPORT) {
		snprintf(reason, size, "socket family %llu is not available in the sandbox",
			 (unsigned long long)a[0]);
	} else if (rule->err == EPROTONOSUPPORT) {
		snprintf(reason, size,
			 "netlink protocol %llu is not available (only NETLINK_ROUTE)",
			 (unsigned long long)proto);
	} else if (ip && type == SOCK_DGRAM && (proto == 0 || proto == IPPROTO_UDP)) {
		snprintf(reason, size, "no UDP rule");
		*hint = "add --net-allow udp://HOST:PORT";
		ev->protocol = "udp";
	} else if (ip && type == SOCK_DGRAM &&
		   proto == (family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6)) {
		snprintf(reason, size, "no ICMP rule");
		*hint = "add --net-allow icmp://HOST";
		ev->protocol = "icmp";
	} else {
		snprintf(reason, size,
			 "socket type %llu, protocol %llu is not available in the sandbox (TCP, "
			 "and UDP or ICMP with a rule, are)",
			 (unsigned long long)type, (unsigned long long)proto);
	}
}

int judge_arg_denied(struct supervisor *sv, const struct seccomp_notif *req,
		     struct seccomp_notif_resp *resp)
{
	const struct plan *plan = sv->plan;
	const uint64_t *a = (const uint64_t *)req->data.args;
	int nr = (int)req->data.nr;

	if (!plan || !plan->arg_denied.n)
		return NOTIF_NOT_MINE;
	const struct seccomp_arg_rule *rule = seccomp_arg_rule_match(&plan->arg_denied, &req->data);
	if (!rule)
		return NOTIF_NOT_MINE;
	char reason[160];
	int net = nr == SYS_socket || nr == SYS_setsockopt;
	struct event ev = {
		.nr = nr,
		.category = net ? EVENT_NETWORK : EVENT_PROCESS,
		.pid = (pid_t)req->pid,
		.verdict = SANDLOCK_VERDICT_DENY,
		.error = rule->err,
		.reason = reason,
	};
	if (rule->what)
		snprintf(reason, sizeof(reason), "%s is refused in every sandbox", rule->what);
	else
		socket_texts(rule, a, reason, sizeof(reason), &ev);
	/* The answer the filter's rule gives without the log. */
	notif_answer_errno(resp, -rule->err);
	events_emit(sv, &ev);
	return NOTIF_ANSWERED;
}

int judge_arg_denies(const struct supervisor *sv, const struct seccomp_notif *req)
{
	return sv->plan && seccomp_arg_rule_match(&sv->plan->arg_denied, &req->data) != NULL;
}
