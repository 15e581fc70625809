/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plan: policy -> plan. All allocation and every check that can fail happen here, in the
 * parent. The child (launch/) reads the plan and never allocates.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fd-util.h"
#include "landlock.h"
#include "plan.h"
#include "plan-internal.h"
#include "path-util.h"
#include "rlimit-util.h"
#include "cow/cow.h"
#include "policy/schema.h"
#include "seccomp.h"
#include "strv.h"
#include "traps.h"

extern char **environ;

#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

char **plan_build_env(const struct sandlock_policy *p, char *const *environ_)
{
	static const char *const clean_keep[] = { "PATH", "HOME", "USER", "TERM", "LANG" };
	_cleanup_strv_free_ char **env = NULL;

	if (p->clean_env) {
		for (size_t i = 0; i < ELEMENTSOF(clean_keep); i++) {
			const char *v = strv_env_get(environ_, clean_keep[i]);
			if (v && strv_env_set(&env, clean_keep[i], v) < 0)
				return NULL;
		}
	} else if (environ_ && !(env = strv_copy(environ_)))
		return NULL;

	/* gpu_devices [i, ...]: the runtimes number the GPUs they may use from these. */
	if (p->gpu_devices.set && p->gpu_devices.n) {
		char list[4096] = "";
		size_t off = 0;
		for (size_t i = 0; i < p->gpu_devices.n && off < sizeof(list) - 16; i++)
			off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%u",
						i ? "," : "", p->gpu_devices.v[i]);
		/* CUDA numbers GPUs fastest first unless told the bus order, which is the
		 * order of the device nodes. */
		if (strv_env_set(&env, "CUDA_VISIBLE_DEVICES", list) < 0 ||
		    strv_env_set(&env, "CUDA_DEVICE_ORDER", "PCI_BUS_ID") < 0 ||
		    strv_env_set(&env, "ROCR_VISIBLE_DEVICES", list) < 0)
			return NULL;
	}
	for (size_t i = 0; p->env && p->env[i]; i++) {
		const char *eq = strchr(p->env[i], '=');
		_cleanup_free_ char *name = strndup(p->env[i], (size_t)(eq - p->env[i]));
		if (!name || strv_env_set(&env, name, eq + 1) < 0)
			return NULL;
	}
	/* The variable of an env: credential is the supervisor's to read, never the child's,
	 * whatever passed it on above (the policy's env included). */
	for (size_t i = 0; p->credentials && p->credentials[i]; i++) {
		struct credential_spec c;
		char err[8];
		if (credential_spec_parse(p->credentials[i], &c, err, sizeof(err)) < 0)
			return NULL; /* canonical since it was set: only ENOMEM */
		if (c.source == CRED_SOURCE_ENV)
			strv_env_unset(env, c.ref);
		credential_spec_done(&c);
	}
	if (!env)
		env = calloc(1, sizeof(char *));
	return TAKE_PTR(env);
}

char **plan_exec_paths(const char *cmd, const char *path)
{
	_cleanup_strv_free_ char **v = NULL;

	if (strchr(cmd, '/')) {
		if (strv_extend(&v, cmd) < 0)
			return NULL;
		return TAKE_PTR(v);
	}
	if (!path)
		path = DEFAULT_PATH;
	for (const char *p = path;; p++) {
		const char *end = strchrnul(p, ':');
		size_t dlen = (size_t)(end - p);
		char *full = malloc(dlen + strlen(cmd) + 2);
		if (!full)
			return NULL;
		if (dlen == 0) /* an empty element is the current directory */
			strcpy(full, cmd);
		else
			sprintf(full, "%.*s/%s", (int)dlen, p, cmd);
		if (strv_push(&v, full) < 0) {
			free(full);
			return NULL;
		}
		if (!*end)
			break;
		p = end;
	}
	if (!v)
		v = calloc(1, sizeof(char *));
	return TAKE_PTR(v);
}

static char **build_sh_argv(char *const *argv)
{
	size_t n = strv_length(argv);
	char **v = calloc(n + 2, sizeof(char *));

	if (!v)
		return NULL;
	/* v[1] is the candidate path, filled in by the child; it points into exec_paths. */
	v[0] = (char *)"/bin/sh";
	for (size_t i = 1; i < n; i++)
		v[i + 1] = argv[i];
	return v;
}

/* num_cpus: the CPUs the sandbox sees; fewer than the host gives, it runs on that many too
 * (the first ones it may use), unless cpu_cores chose them. */
static void plan_num_cpus(const struct sandlock_policy *p, struct plan *plan)
{
	cpu_set_t have;

	plan->num_cpus = (unsigned)p->num_cpus.v;
	if (plan->has_cpus || sched_getaffinity(0, sizeof(have), &have) < 0 ||
	    (unsigned)CPU_COUNT(&have) <= plan->num_cpus)
		return;
	CPU_ZERO(&plan->cpus);
	for (unsigned cpu = 0, n = 0; cpu < CPU_SETSIZE && n < plan->num_cpus; cpu++)
		if (CPU_ISSET(cpu, &have)) {
			CPU_SET(cpu, &plan->cpus);
			n++;
		}
	plan->has_cpus = 1;
}

static int plan_process_knobs(const struct sandlock_policy *p, struct plan *plan,
			      struct sandlock_error **reterr)
{
	/* The supervisor's descriptors come from this process's table: its soft limit is raised
	 * to the hard one (once), and the child gets the caller's own. */
	struct rlimit rl, now;
	int r = rlimit_nofile_raise(&rl);
	if (r < 0 || getrlimit(RLIMIT_NOFILE, &now) < 0)
		return error_set(reterr, r < 0 ? r : negative_errno(), "getrlimit: %s",
				 strerror(r < 0 ? -r : errno));
	plan->has_nofile = rl.rlim_cur != now.rlim_cur || rl.rlim_max != now.rlim_max;
	plan->nofile = rl.rlim_cur;
	plan->nofile_max = rl.rlim_max;
	if (p->max_open_files) {
		/* An upper bound, never a grant: clamp to what the caller holds. */
		plan->has_nofile = 1;
		plan->nofile = plan->nofile_max = MIN(p->max_open_files, rl.rlim_cur);
	}
	plan->no_coredump = p->no_coredump;
	plan->no_huge_pages = p->no_huge_pages;
	plan->no_randomize_memory = p->no_randomize_memory;
	plan->deterministic_dirs = p->deterministic_dirs;
	plan->has_random_seed = p->random_seed.set;
	if (p->time_start) {
#ifndef __x86_64__
		return error_set(reterr, -EOPNOTSUPP,
				 "not supported yet: time_start on this architecture (its vDSO is "
				 "patched for x86_64 only)");
#endif
		char err[128];
		/* Canonical already (schema): it parses. */
		plan->has_time_start = rfc3339_parse(p->time_start, &plan->time_start_sec,
						     &plan->time_start_nsec, err, sizeof(err)) == 0;
	}
	plan->has_ids = p->uid.set && p->gid.set;
	plan->uid = (uint32_t)p->uid.v;
	plan->gid = (uint32_t)p->gid.v;
	plan->random_seed = p->random_seed.v;
	plan->has_cpus = p->has_cpu_cores;
	plan->cpus = p->cpu_cores;
	if (p->max_memory.set)
		plan->max_memory = p->max_memory.v;
	if (p->max_processes.set)
		plan->max_processes = (unsigned)MIN(p->max_processes.v, (uint64_t)UINT32_MAX);
	if (p->max_cpu.set && p->max_cpu.v < 100)
		plan->max_cpu = (unsigned)p->max_cpu.v;
	if (p->num_cpus.set)
		plan_num_cpus(p, plan);
	if (p->cwd && !(plan->cwd = strdup(p->cwd)))
		return -ENOMEM;
	if (p->name && !(plan->name = strdup(p->name)))
		return -ENOMEM;
	plan->control = !p->control_socket_off;
	return 0;
}

/* Append @r to the vector *@v of *@n rules (taking it over). */
int plan_net_rules_push(struct net_rule **v, size_t *n, struct net_rule *r)
{
	struct net_rule *nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (!nv) {
		net_rule_done(r);
		return -ENOMEM;
	}
	nv[(*n)++] = *r;
	*v = nv;
	return 0;
}

/* Whether @text (lines, may be NULL) holds the line @line ("...\n") whole. */
int plan_hosts_has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, line, n) == 0)
			return 1;
	return 0;
}

int plan_hosts_append(char **hosts, const char *entry)
{
	char *all = NULL;

	if (plan_hosts_has_line(*hosts, entry))
		return 0;
	if (asprintf(&all, "%s%s", *hosts ? *hosts : "", entry) < 0)
		return -ENOMEM;
	free(*hosts);
	*hosts = all;
	return 0;
}

/* Resolve the host of @r once, now, and append one pinned rule per address, and a line per
 * address to the synthetic /etc/hosts the sandbox sees (*@hosts). */
static int net_rule_resolve(const struct net_rule *r, struct plan_net *net, char **hosts,
			    struct sandlock_error **reterr)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;
	size_t added = 0;
	int k;

	k = getaddrinfo(r->host, NULL, &hints, &res);
	if (k != 0)
		return error_set(reterr, -EHOSTUNREACH, "net_allow: %s: cannot resolve: %s",
				 r->host, k == EAI_SYSTEM ? strerror(errno) : gai_strerror(k));
	for (struct addrinfo *a = res; a && k == 0; a = a->ai_next) {
		const void *ip =
			a->ai_family == AF_INET
				? (const void *)&((struct sockaddr_in *)a->ai_addr)->sin_addr
				: (const void *)&((struct sockaddr_in6 *)a->ai_addr)->sin6_addr;
		char text[INET6_ADDRSTRLEN], entry[INET6_ADDRSTRLEN + NET_HOST_MAX + 4],
			*line = NULL;
		struct net_rule pin;
		if ((a->ai_family != AF_INET && a->ai_family != AF_INET6) ||
		    !inet_ntop(a->ai_family, ip, text, sizeof(text)))
			continue;
		added++;
		/* One entry per address and name (the resolver may list one twice). */
		snprintf(entry, sizeof(entry), "%s\t%s\n", text, r->host);
		if (plan_hosts_has_line(*hosts, entry))
			continue;
		k = net_rule_pinned(r, a->ai_family, ip, &pin);
		if (k == 0)
			k = plan_net_rules_push(&net->allow, &net->n_allow, &pin);
		if (k == 0 && asprintf(&line, "%s%s", *hosts ? *hosts : "", entry) < 0)
			k = -ENOMEM;
		if (line) {
			free(*hosts);
			*hosts = line;
		}
	}
	freeaddrinfo(res);
	if (k < 0)
		return error_set(reterr, k, "out of memory");
	return added ? 0
		     : error_set(reterr, -EHOSTUNREACH, "net_allow: %s: no IPv4 or IPv6 address",
				 r->host);
}

/* Copy the policy's rules @rules (@n of them, parsed when set) into @ret; hostnames are resolved
 * and pinned. */
static int net_rules_compile(const struct net_rule *rules, size_t n, struct plan_net *net,
			     struct net_rule **ret, size_t *ret_n, struct sandlock_error **reterr)
{
	for (size_t i = 0; i < n; i++) {
		struct net_rule r;
		if (rules[i].kind == NET_TARGET_HOST) {
			int k = net_rule_resolve(&rules[i], net, &net->hosts, reterr);
			if (k < 0)
				return k;
			continue;
		}
		if (net_rule_copy(&rules[i], &r) < 0 || plan_net_rules_push(ret, ret_n, &r) < 0)
			return error_set(reterr, -ENOMEM, "out of memory");
	}
	return 0;
}

/* The synthetic /etc/hosts: the names the sandbox may resolve, then localhost, the pinned
 * entries first, since a resolver without "multi on" (host.conf) takes the first line for a
 * name; and the identity of the host's own file, which it stands for. */
static int net_hosts_finish(struct plan_net *net, struct sandlock_error **reterr)
{
	char *all = NULL;
	struct stat st;

	if (!net->hosts)
		return 0;
	if (asprintf(&all, "%s%s%s", net->hosts,
		     plan_hosts_has_line(net->hosts, "127.0.0.1\tlocalhost\n")
			     ? ""
			     : "127.0.0.1\tlocalhost\n",
		     plan_hosts_has_line(net->hosts, "::1\tlocalhost\n") ? ""
									 : "::1\tlocalhost\n") < 0)
		return error_set(reterr, -ENOMEM, "out of memory");
	free(net->hosts);
	net->hosts = all;
	if (stat("/etc/hosts", &st) == 0)
		net->hosts_id = (struct file_id){ .dev = st.st_dev, .ino = st.st_ino };
	return 0;
}

/* The connect rules, compiled for every supervised sandbox with rules: even the direct ones
 * are applied by the supervisor, which makes every connect (handlers/net.c). */
static int plan_net_rules(const struct sandlock_policy *p, struct plan_net *net,
			  struct sandlock_error **reterr)
{
	const struct policy_net *rules = &p->net;
	struct net_rule everything;
	int r;

	if (!rules->n_allow && !rules->n_deny)
		return 0;
	/* A deny list alone allows everything else (net_rules_needs_of). */
	net_rule_everything(&everything);
	net->dgram_checked = rules->needs.dgram_checked;
	r = net_rules_compile(rules->n_allow ? rules->allow : &everything,
			      rules->n_allow ? rules->n_allow : 1, net, &net->allow, &net->n_allow,
			      reterr);
	if (r == 0)
		r = net_rules_compile(rules->deny, rules->n_deny, net, &net->deny, &net->n_deny,
				      reterr);
	return r;
}

/* The grants as the supervisor matches them: the real paths of the write grants and of every
 * grant (one that does not resolve grants nothing). */
static int plan_fs_grants(const struct sandlock_policy *p, struct plan_fs *fs)
{
	size_t n = 0;

	fs->write_grants = calloc(strv_length(p->fs_write) + 1, sizeof(char *));
	if (!fs->write_grants)
		return -ENOMEM;
	for (size_t i = 0; p->fs_write && p->fs_write[i]; i++) {
		char *real = realpath(p->fs_write[i], NULL);
		if (real)
			fs->write_grants[n++] = real;
		else if (errno == ENOMEM)
			return -ENOMEM;
	}
	n = 0;
	fs->granted =
		calloc(strv_length(p->fs_read) + strv_length(p->fs_write) + 1, sizeof(char *));
	if (!fs->granted)
		return -ENOMEM;
	for (int w = 0; w < 2; w++)
		for (size_t i = 0;
		     (w ? p->fs_write : p->fs_read) && (w ? p->fs_write : p->fs_read)[i]; i++) {
			char *real = realpath((w ? p->fs_write : p->fs_read)[i], NULL);
			if (real)
				fs->granted[n++] = real;
			else if (errno == ENOMEM)
				return -ENOMEM;
		}
	/* The random devices are every sandbox's to read (random_seed serves them). */
	return landlock_random_devices_granted(p, &fs->granted) < 0 ? -ENOMEM : 0;
}

/* Where control sockets live, which the UNIX socket check never reaches (handlers/net-unix.c). */
static int plan_net_runtime(struct plan_net *net)
{
	char shm[PATH_MAX];

	if (asprintf(&net->runtime_prefix, "%s/sandlock-",
		     realpath("/dev/shm", shm) ? shm : "/dev/shm") < 0) {
		net->runtime_prefix = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* The writable grants holding a denied path, for the supervisor (handlers/fs-write.c): their
 * real paths, the denied paths' and the identities of those that exist. */
static int plan_fs_write(const struct sandlock_policy *p, int proc_served, struct plan_fs *fs)
{
	int n = landlock_write_mediation(p, proc_served, &fs->write_roots, &fs->denied);
	if (n <= 0)
		return n;
	fs->denied_ids = calloc(strv_length(fs->denied), sizeof(*fs->denied_ids));
	if (!fs->denied_ids)
		return -ENOMEM;
	for (size_t i = 0; fs->denied[i]; i++) {
		struct stat st;
		if (stat(fs->denied[i], &st) == 0)
			fs->denied_ids[fs->n_denied_ids++] =
				(struct file_id){ .dev = st.st_dev, .ino = st.st_ino };
	}
	return 0;
}

static void plan_net_done(struct plan_net *net)
{
	free(net->runtime_prefix);
	for (size_t i = 0; i < net->n_allow; i++)
		net_rule_done(&net->allow[i]);
	for (size_t i = 0; i < net->n_deny; i++)
		net_rule_done(&net->deny[i]);
	free(net->allow);
	free(net->deny);
	free(net->hosts);
	free(net->bind_ports);
	*net = (struct plan_net){ 0 };
}

static void plan_fs_done(struct plan_fs *fs)
{
	strv_free(fs->write_grants);
	strv_free(fs->granted);
	strv_free(fs->write_roots);
	strv_free(fs->denied);
	strv_free(fs->carved);
	free(fs->denied_ids);
	plan_ll_done(&fs->ll);
	*fs = (struct plan_fs){ 0 };
}

static int plan_command(const struct sandlock_policy *p, const char *const *argv, struct plan *plan,
			struct sandlock_error **reterr)
{
	if (!argv || !argv[0])
		return error_set(reterr, -EINVAL, "no command to run");
	if (!argv[0][0])
		return error_set(reterr, -ENOENT, "the command name is empty");

	plan->argv = strv_copy((char *const *)argv);
	plan->envp = plan->argv ? plan_build_env(p, environ) : NULL;
	plan->exec_paths =
		plan->envp ? plan_exec_paths(argv[0], strv_env_get(plan->envp, "PATH")) : NULL;
	plan->sh_argv = plan->exec_paths ? build_sh_argv(plan->argv) : NULL;
	if (!plan->sh_argv)
		return error_set(reterr, -ENOMEM, "out of memory");
	return 0;
}

/* What @what asks for is safe only with protection @prot in force. */
static int needs_protection(const uint32_t status[SANDLOCK_PROTECTION_COUNT], uint32_t prot,
			    const char *what, struct sandlock_error **reterr)
{
	if (status[prot] == SANDLOCK_STATUS_ACTIVE)
		return 0;
	return error_set(reterr, -EOPNOTSUPP,
			 "%s the %s protection (Landlock ABI %d), which is %s here", what,
			 protection_table[prot].cli_name, protection_table[prot].abi_floor,
			 status[prot] == SANDLOCK_STATUS_DISABLED ? "disabled" : "unavailable");
}

/* Whether a denied path lies in the workdir, or holds it (by identity: a bind mount of either
 * is the same inode). */
static int workdir_holds_no_denied(const struct sandlock_policy *p, struct sandlock_error **reterr)
{
	_cleanup_free_ char *wd = realpath(p->workdir, NULL);

	for (size_t i = 0; wd && p->fs_deny && p->fs_deny[i]; i++) {
		_cleanup_free_ char *d = realpath(p->fs_deny[i], NULL);
		/* One that does not exist yet: by its name as the kernel would resolve what exists
		 * of it now (a bind mount of the workdir on the way is the workdir) and as it is
		 * spelled (a symlink inside the workdir on the way can be replaced by the run);
		 * one that cannot be resolved (a dangling symlink on the way) is taken as inside.
		 */
		_cleanup_free_ char *n = d ? NULL : landlock_resolve_partly(p->fs_deny[i]);
		const char *spelled = p->fs_deny[i];
		if (path_is_beneath(spelled, wd) || path_is_beneath(spelled, p->workdir) ||
		    path_holds_inode(spelled, wd) ||
		    (d ? path_holds_inode(d, wd) || path_holds_inode(wd, d)
		       : !n || path_holds_inode(n, wd) || path_is_beneath(wd, n)))
			return error_set(
				reterr, -EOPNOTSUPP,
				"not supported yet: fs_denied inside or above the workdir (%s, "
				"workdir %s)",
				p->fs_deny[i], p->workdir);
	}
	return 0;
}

/* A policy_fn's exec argv check trusts that no process of the sandbox writes another's memory
 * through /proc/<pid>/mem, which only Landlock stops: no writable grant may reach /proc (one at
 * /proc, above it or inside it). */
static int policy_fn_proc_unwritable(const struct sandlock_policy *p,
				     struct sandlock_error **reterr)
{
	for (size_t i = 0; p->fs_write && p->fs_write[i]; i++) {
		_cleanup_free_ char *real = realpath(p->fs_write[i], NULL);
		if (real && (path_is_beneath("/proc", real) || path_is_beneath(real, "/proc")))
			return error_set(
				reterr, -EINVAL,
				"policy_fn: the writable grant %s covers /proc, where the "
				"sandbox could rewrite an exec's arguments after the callback "
				"saw them; grant write on narrower paths",
				p->fs_write[i]);
	}
	return 0;
}

int plan_check(const struct sandlock_policy *p, const uint32_t status[SANDLOCK_PROTECTION_COUNT],
	       struct sandlock_error **reterr)
{
	/* Refuse what is wrong, then what cannot be enforced: combinations that make no sense
	 * (first: the user must hear about a mistake before "not yet"), fields not built yet,
	 * fields only the supervisor can enforce under no_supervisor. */
	int r = schema_validate(p, reterr);
	if (r == 0)
		r = schema_check_supported(p, reterr);
	if (r == 0)
		r = policy_check_supervision(p, reterr);
	/* The workdir is granted read only: truncate() by name needs Landlock's truncate right
	 * handled, or the kernel would let the sandbox empty the workdir's files. */
	if (r == 0 && p->workdir && !p->no_supervisor)
		r = needs_protection(status, SANDLOCK_PROTECTION_FS_TRUNCATE, "workdir needs",
				     reterr);
	/* With uid/gid the child is another user in a namespace of its own, with less than the
	 * supervisor, which makes the workdir's calls with its own rights. */
	const char *user = schema_label_of(p, "uid"); /* the CLI's --user sets both */
	if (r == 0 && p->workdir && (p->uid.set || p->gid.set))
		r = error_set(reterr, -EOPNOTSUPP, "not supported yet: workdir with %s",
			      strcmp(user, "uid") == 0 ? "uid/gid" : user);
	/* A denied path is carved out of Landlock's grants, but the workdir's names are opened
	 * by the supervisor (the branch's view), which would open a denied one too. */
	if (r == 0 && p->workdir && !p->no_supervisor)
		r = workdir_holds_no_denied(p, reterr);
	/* The branch's settings act on a workdir's branch: none without one (a profile may
	 * hold them for a workdir given with it, so this is checked here, at spawn). */
	if (r == 0 && !p->workdir && p->max_disk.set)
		r = error_set(reterr, -EINVAL,
			      "max_disk: needs %s (it is the quota of the workdir's branch)",
			      schema_label_of(p, "workdir"));
	if (r == 0 && !p->workdir && p->fs_storage)
		r = error_set(reterr, -EINVAL,
			      "fs_storage: needs %s (it is where the workdir's branch lives)",
			      schema_label_of(p, "workdir"));
	if (r == 0 && !p->workdir && !p->chroot && (p->on_exit || p->on_error))
		r = error_set(reterr, -EINVAL, "%s: needs %s (it acts on its branch)",
			      p->on_exit ? "on_exit" : "on_error", schema_label_of(p, "workdir"));
	/* The on-behalf connect is safe only with Landlock refusing every TCP connect the
	 * supervisor did not make (handlers/net.c): it needs the NetTcp protection in force. */
	if (r == 0 && p->policy_fn && !p->no_supervisor)
		r = policy_fn_proc_unwritable(p, reterr);
	if (r == 0 && policy_net_onbehalf(p))
		r = needs_protection(status, SANDLOCK_PROTECTION_NET_TCP,
				     "net_allow rules to IPs and net_deny need", reterr);
	/* The redirect to the HTTP proxy is such a connect too. */
	if (r == 0 && policy_http_active(p)) {
		char what[128];
		snprintf(what, sizeof(what), "%s rules need",
			 schema_label_of(p, p->http_allow ? "http_allow" : "http_deny"));
		r = needs_protection(status, SANDLOCK_PROTECTION_NET_TCP, what, reterr);
	}
	return r;
}

/* private_tmp: the directory made (cow/tmp.c), granted read and write, the command's TMPDIR
 * unless the policy's env names one (what the user wrote wins); for the supervisor, a writable
 * grant (UNIX sockets and metadata changes there) and, where it makes the calls beneath a
 * writable grant holding the store root (-w /var/tmp), one the kernel decides beneath. */
static int plan_private_tmp(const struct sandlock_policy *p, struct plan *plan,
			    struct sandlock_error **reterr)
{
	if (!(plan->tmp = calloc(1, sizeof(*plan->tmp))))
		return error_set(reterr, -ENOMEM, "out of memory");
	int r = cow_tmp_make(plan->tmp, p->name, reterr);
	if (r < 0) {
		free(plan->tmp);
		plan->tmp = NULL;
		return r;
	}
	r = landlock_add_write(plan->ruleset_fd, plan->abi, plan->status, plan->tmp->path,
			       "private_tmp", reterr);
	if (r < 0)
		return r;
	if ((!strv_env_get(p->env, "TMPDIR") &&
	     strv_env_set(&plan->envp, "TMPDIR", plan->tmp->path) < 0) ||
	    (plan->supervised && strv_extend(&plan->fs.write_grants, plan->tmp->path) < 0) ||
	    (plan->fs.write_roots && strv_extend(&plan->fs.carved, plan->tmp->path) < 0))
		return error_set(reterr, -ENOMEM, "out of memory");
	return 0;
}

/* The network section, and the grants it matches UNIX socket paths against (the fs section's):
 * what the UNIX socket check and the connect and send handlers need. */
static int plan_net(const struct sandlock_policy *p, struct plan *plan,
		    struct sandlock_error **reterr)
{
	struct plan_net *net = &plan->net;

	if (plan_fs_grants(p, &plan->fs) < 0 || plan_net_runtime(net) < 0)
		return error_set(reterr, -ENOMEM, "out of memory");
	net->onbehalf = p->net.needs.onbehalf;
	net->abstract_open = plan->status[SANDLOCK_PROTECTION_ABSTRACT_UNIX_SOCKET_SCOPE] !=
			     SANDLOCK_STATUS_ACTIVE;
	net->tcp_open = plan->status[SANDLOCK_PROTECTION_NET_TCP] != SANDLOCK_STATUS_ACTIVE;
	net->port_remap = p->port_remap;
	int r = plan_net_rules(p, net, reterr);
	/* The HTTP rules add reachability and names to what the net rules made (plan-http.c):
	 * the redirect to the proxy is the supervisor's connect. */
	if (r == 0 && policy_http_active(p)) {
		net->onbehalf = 1;
		r = plan_http_build(p, plan, reterr);
	}
	return r < 0 ? r : net_hosts_finish(net, reterr);
}

/* The Landlock ABI, the protections' status under it, and what spawning refuses. */
static int plan_protections(const struct sandlock_policy *p, struct plan *plan,
			    struct sandlock_error **reterr)
{
	plan->abi = landlock_abi();
	if (plan->abi < 0)
		return error_set(reterr, -EOPNOTSUPP,
				 "Landlock is not available on this kernel (needs Linux 5.13 with "
				 "landlock in the lsm= list)");
	int r = policy_resolve_protections(p, plan->abi, plan->status, reterr);
	if (r < 0)
		return r;
	return plan_check(p, plan->status, reterr);
}

/* The workdir's branch, made before the ruleset: the sandbox reads its upper layer
 * (descriptors of it are installed in the child, and a program may reopen them by name). */
static int plan_branch(const struct sandlock_policy *p, struct plan *plan,
		       struct sandlock_error **reterr)
{
	int r;

	plan->on_exit = p->on_exit ? p->on_exit - 1 : BRANCH_COMMIT;
	plan->on_error = p->on_error ? p->on_error - 1 : BRANCH_ABORT;
	if (!(plan->cow = calloc(1, sizeof(*plan->cow))))
		return error_set(reterr, -ENOMEM, "out of memory");
	r = cow_open(plan->cow, p->workdir, p->fs_storage, p->name,
		     p->max_disk.set ? p->max_disk.v : 0, reterr);
	if (r < 0) {
		cow_done(plan->cow);
		free(plan->cow);
		plan->cow = NULL;
		return r;
	}
	/* The branch is the supervisor's alone: a sandbox that could write there would change
	 * what the supervisor then acts on (and what a commit merges). The store root is carved
	 * out of every grant (landlock.c); another place must lie outside them. */
	int carved = !p->fs_storage || !*p->fs_storage;
	for (size_t i = 0; r == 0 && !carved && p->fs_write && p->fs_write[i]; i++) {
		_cleanup_free_ char *real = realpath(p->fs_write[i], NULL);
		/* By identity: Landlock's rule is on the inode, whatever mount shows it. */
		if (real && path_holds_inode(plan->cow->dir, real))
			r = error_set(reterr, -EINVAL,
				      "fs_storage: %s is inside the writable grant %s: the branch "
				      "must be out of the sandbox's reach (set %s elsewhere)",
				      plan->cow->dir, p->fs_write[i],
				      schema_label_of(p, "fs_storage"));
	}
	return r;
}

/* The Landlock ruleset: the policy's grants, sandlock's carve-outs (/proc and the denied paths
 * the supervisor serves), the port rules, and the branch's upper layer, read only. */
static int plan_ruleset(const struct sandlock_policy *p, struct plan *plan,
			struct sandlock_error **reterr)
{
	int r = landlock_ruleset_build(
		p, plan->abi, plan->status,
		(plan->proc.served ? LANDLOCK_BUILD_MEDIATE_PROC : 0) |
			(plan->fs.write_roots ? LANDLOCK_BUILD_MEDIATE_WRITE : 0),
		&plan->net.bind_zero,
		plan->net.port_remap || plan->events || (p->policy_fn && !p->no_supervisor)
			? &plan->net.bind_ports
			: NULL,
		plan->fs.write_roots ? &plan->fs.carved : NULL, reterr);
	if (r < 0)
		return r;
	plan->ruleset_fd = r;
	if (plan->cow)
		return landlock_add_read(plan->ruleset_fd, plan->abi, plan->status,
					 plan->cow->upper, "fs_storage", reterr);
	return 0;
}

int plan_build(const struct sandlock_policy *p, const char *const *argv, uint32_t events,
	       struct plan *ret, struct sandlock_error **reterr)
{
	return plan_build_with(p, argv, events, NULL, 0, ret, reterr);
}

int plan_build_with(const struct sandlock_policy *p, const char *const *argv, uint32_t events,
		    const int *user_nrs, size_t n_user, struct plan *ret,
		    struct sandlock_error **reterr)
{
	struct plan plan = { .ruleset_fd = -1, .supervised = !p->no_supervisor, .events = events };
	int r;

	r = plan_protections(p, &plan, reterr);
	if (r < 0)
		return r;

	r = plan_command(p, argv, &plan, reterr);
	if (r == 0)
		r = plan_process_knobs(p, &plan, reterr);
	/* Inside a sandbox of sandlock's the flag is refused (EINVAL), elsewhere the bad
	 * descriptor is (EBADF). */
	plan.launch_flag_refused =
		syscall(SYS_sendmsg, -1, NULL, LAUNCH_SENDMSG_FLAG) < 0 && errno == EINVAL;
	plan.listener_by_number = plan.supervised && plan.launch_flag_refused;
	if (r == 0 && plan.supervised)
		r = plan_net(p, &plan, reterr);
	plan.proc.served = plan.supervised && landlock_grants_proc(p);
	if (r == 0 && plan.supervised)
		r = plan_fs_write(p, plan.proc.served, &plan.fs);
	if (r == 0)
		r = plan_seccomp(p, &plan, user_nrs, n_user, reterr);
	if (r == 0 && plan.supervised && p->workdir)
		r = plan_branch(p, &plan, reterr);
	/* Logging mode: the rules the ruleset gets, for the judge (plan.fs.ll); with a policy_fn,
	 * for deny_path's check of the directories an exec goes through
	 * (supervisor/policy-fn-path.c). */
	if (r == 0 && ((plan.needs.events & SANDLOCK_EVENTS_DENIALS) || plan.needs.policy_fn)) {
		plan.fs.ll.active = 1;
		plan.fs.ll.handled = landlock_fs_handled(plan.abi, plan.status);
		r = landlock_record_denied(p, &plan.fs.ll);
		landlock_record(&plan.fs.ll);
	}
	if (r == 0)
		r = plan_ruleset(p, &plan, reterr);
	if (r == 0 && p->private_tmp)
		r = plan_private_tmp(p, &plan, reterr);
	landlock_record(NULL);
	if (r < 0) {
		plan_done(&plan);
		return r == -ENOMEM ? error_set(reterr, r, "out of memory") : r;
	}
	*ret = plan;
	return 0;
}

void plan_done(struct plan *plan)
{
	plan->ruleset_fd = safe_close(plan->ruleset_fd);
	seccomp_program_done(&plan->prog);
	free(plan->sh_argv); /* its strings belong to argv and exec_paths */
	plan->sh_argv = NULL;
	plan->argv = strv_free(plan->argv);
	plan->envp = strv_free(plan->envp);
	plan->exec_paths = strv_free(plan->exec_paths);
	free(plan->cwd);
	plan->cwd = NULL;
	free(plan->name);
	plan->name = NULL;
	cow_tmp_remove(plan->tmp); /* never handed to a sandbox */
	free(plan->tmp);
	plan->tmp = NULL;
	if (plan->cow) { /* never handed to a sandbox: nothing ran in it */
		(void)cow_abort(plan->cow);
		cow_done(plan->cow);
		free(plan->cow);
		plan->cow = NULL;
	}
	plan_http_done(&plan->http);
	plan_net_done(&plan->net);
	plan_fs_done(&plan->fs);
	plan->proc = (struct plan_proc){ 0 };
	free(plan->blocked);
	plan->blocked = NULL;
	plan->blocked_extra = strv_free(plan->blocked_extra);
	seccomp_arg_rules_done(&plan->arg_denied);
	free(plan->builtin_traps);
	plan->builtin_traps = NULL;
	plan->n_builtin_traps = 0;
}
