/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * control-serve: the control socket's requests, answered on the sandbox's event loop. Every
 * descriptor is non-blocking and each request is one short line, so the loop never waits on a
 * client: a partial line waits for the next readiness, and a client that sends too much or is
 * refused (control_peer_refused) is dropped. Requests: {"cmd":"info"}, {"cmd":"policy"},
 * {"cmd":"kill"}.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "control-serve.h"
#include "fd-util.h"
#include "macro.h"
#include "policy/policy.h"
#include "plan/plan.h"
#include "policy/profile.h"

static json_t *info(const struct sandlock_sandbox *sb)
{
	json_t *cmd = json_array(), *ports = json_array();

	for (size_t i = 0; cmd && sb->plan.argv && sb->plan.argv[i]; i++)
		json_array_append_new(cmd, json_string(sb->plan.argv[i]));
	/* The ports it may listen on: net_allow_bind, canonical. */
	for (size_t i = 0;
	     ports && sb->policy && sb->policy->net_allow_bind && sb->policy->net_allow_bind[i];
	     i++)
		json_array_append_new(ports, json_string(sb->policy->net_allow_bind[i]));
	/* port_remap: every port bound, virtual -> real. */
	json_t *map = json_object();
	struct port_map *m = (struct port_map *)&sb->sv.ports;
	size_t n = sb->sv.prepared ? port_map_copy(m, NULL, 0, 0) : 0;
	struct port_pair *pairs = n ? calloc(n, sizeof(*pairs)) : NULL;
	if (pairs) /* a worker may have added pairs meanwhile: those wait for the next ask */
		n = MIN(n, port_map_copy(m, pairs, n, 0));
	else
		n = 0;
	for (size_t i = 0; map && pairs && i < n; i++) {
		char key[8];
		snprintf(key, sizeof(key), "%u", pairs[i].virt);
		json_object_set_new(map, key, json_integer(pairs[i].real));
	}
	free(pairs);
	return json_pack("{s:s, s:i, s:i, s:I, s:s, s:o, s:o, s:o}", "name", sb->name, "pid",
			 sb->pid, "sandlock_pid", (int)getpid(), "started",
			 (json_int_t)sb->control.started, "status",
			 __atomic_load_n(&sb->paused, __ATOMIC_RELAXED) ? "paused" : "running",
			 "cmd", cmd, "ports", ports, "port_map", map);
}

/* The credentials by name only, taken out of the document @p: where a secret comes from is
 * nobody's business but the caller's (the names are what http_auth refers to). */
static json_t *credential_names(json_t *p)
{
	json_t *names = json_array(), *rt = json_object_get(p, "runtime");
	json_t *creds = rt ? json_object_get(rt, "credentials") : NULL;
	size_t i;
	json_t *c;

	json_array_foreach(creds, i, c)
	{
		const char *s = json_string_value(c);
		if (s)
			json_array_append_new(names, json_stringn(s, strcspn(s, "=")));
	}
	if (creds)
		json_object_del(rt, "credentials");
	if (rt && json_object_size(rt) == 0)
		json_object_del(p, "runtime");
	return names;
}

/* The HTTP ports the proxy intercepts, as the plan resolved them (80 by default, 443 with a
 * CA): the effective list, in place of what the policy said. */
static void http_ports(const struct sandlock_sandbox *sb, json_t *p)
{
	const struct plan_http *h = &sb->plan.http;
	json_t *http = json_object_get(p, "http"), *ports = json_array();

	if (!h->active || !h->ports || !h->n_ports || !http || !ports) {
		json_decref(ports);
		return;
	}
	for (size_t i = 0; i < h->n_ports; i++)
		json_array_append_new(ports, json_integer(h->ports[i]));
	json_object_set_new(http, "ports", ports);
}

/* The policy as `sandlock inspect` shows it: the effective one, credentials by name only
 * ("credentials", beside the document). */
static json_t *policy(const struct sandlock_sandbox *sb)
{
	char *text = NULL;

	if (!sb->policy || profile_dump_json(sb->policy, &text) < 0)
		return json_pack("{s:s}", "error", "out of memory");
	json_t *p = json_loads(text, 0, NULL);
	free(text);
	if (!p)
		p = json_object();
	json_t *names = credential_names(p);
	http_ports(sb, p);
	return json_pack("{s:o, s:o}", "policy", p, "credentials", names ? names : json_array());
}

static json_t *kill_all(struct sandlock_sandbox *sb)
{
	json_t *groups = json_array();

	pthread_mutex_lock(&sb->groups.lock);
	for (size_t i = 0; groups && i < sb->groups.n; i++)
		json_array_append_new(groups, json_integer(sb->groups.v[i].pgid));
	pthread_mutex_unlock(&sb->groups.lock);
	sandbox_note_kill(sb);
	int reached = sandbox_signal_all(sb, SIGKILL);
	return json_pack("{s:i, s:o, s:i}", "pid", sb->pid, "groups", groups, "reached",
			 reached < 0 ? 0 : reached);
}

static json_t *answer(struct sandlock_sandbox *sb, const char *line)
{
	json_t *req = json_loads(line, 0, NULL);
	const char *cmd = req ? json_string_value(json_object_get(req, "cmd")) : NULL;
	json_t *ans;

	if (!cmd)
		ans = json_pack("{s:s}", "error", "expected {\"cmd\": ...}");
	else if (strcmp(cmd, "info") == 0)
		ans = info(sb);
	else if (strcmp(cmd, "policy") == 0)
		ans = policy(sb);
	else if (strcmp(cmd, "kill") == 0)
		ans = kill_all(sb);
	else
		ans = json_pack("{s:s}", "error", "unknown command");
	json_decref(req);
	return ans;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void client_drop(struct control *c, int epfd, int slot)
{
	struct control_client *cl = &c->clients[slot];

	(void)epoll_ctl(epfd, EPOLL_CTL_DEL, cl->fd, NULL);
	cl->fd = safe_close(cl->fd);
	cl->len = 0;
}

/* A free slot, or the oldest client's: a client that connects and never sends keeps nobody
 * else out for longer than it takes four more to connect. */
static int client_slot(struct control *c, int epfd)
{
	int oldest = 0;

	for (int i = 0; i < CONTROL_CLIENTS; i++) {
		if (c->clients[i].fd < 0)
			return i;
		if (c->clients[i].serial < c->clients[oldest].serial)
			oldest = i;
	}
	client_drop(c, epfd, oldest);
	return oldest;
}

void control_on_listen(struct sandlock_sandbox *sb, int epfd)
{
	struct control *c = &sb->control;

	for (;;) {
		int fd = accept4(c->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0 && (errno == EINTR || errno == ECONNABORTED))
			continue;
		if (fd < 0 && errno != EAGAIN) {
			/* Out of descriptors or memory: the connection stays queued and the
			 * listener readable, so stop watching it for a while instead of spinning.
			 */
			(void)epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
			c->retry_at = now_ms() + CONTROL_RETRY_MS;
		}
		if (fd < 0)
			return;
		/* Another uid, or one of ours that is confined (a sandbox: Landlock does not cover
		 * connecting to a socket by path): no answer. */
		/* The socket file moved out of its directory: a client may have reached it under
		 * another name, where the path checks for sandboxes do not apply. */
		struct stat st;
		if (fstatat(c->dirfd, "control.sock", &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    st.st_dev != c->sock_dev || st.st_ino != c->sock_ino ||
		    control_peer_refused(fd)) {
			close(fd);
			continue;
		}
		int slot = client_slot(c, epfd);
		struct epoll_event ev = { .events = EPOLLIN,
					  .data.u64 = EV_CLIENT + (uint64_t)slot };
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close(fd);
			continue;
		}
		c->clients[slot] = (struct control_client){ .fd = fd, .serial = ++c->serial };
	}
}

int control_retry(struct sandlock_sandbox *sb, int epfd)
{
	struct control *c = &sb->control;

	if (!c->retry_at)
		return -1;
	int64_t left = c->retry_at - now_ms();
	if (left > 0)
		return (int)left;
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = EV_CONTROL };
	(void)epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev);
	c->retry_at = 0;
	return -1;
}

void control_on_client(struct sandlock_sandbox *sb, int epfd, int slot)
{
	struct control_client *cl = &sb->control.clients[slot];
	ssize_t n = read(cl->fd, cl->buf + cl->len, sizeof(cl->buf) - 1 - cl->len);

	if (n < 0 && errno == EAGAIN)
		return;
	if (n > 0) {
		cl->len += (size_t)n;
		cl->buf[cl->len] = '\0';
		if (!strchr(cl->buf, '\n') && cl->len < sizeof(cl->buf) - 1)
			return; /* the rest of the line comes later */
		json_t *ans = strchr(cl->buf, '\n') ? answer(sb, cl->buf) : NULL;
		char *text = ans ? json_dumps(ans, JSON_COMPACT) : NULL;
		if (text) {
			/* An answer into an empty socket buffer (208 KiB by default), without
			 * waiting: one that does not fit arrives without its newline, which the
			 * client reports as malformed. */
			struct iovec iov[2] = { { text, strlen(text) }, { (void *)"\n", 1 } };
			struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
			(void)!sendmsg(cl->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		}
		free(text);
		json_decref(ans);
	}
	client_drop(&sb->control, epfd, slot);
}
