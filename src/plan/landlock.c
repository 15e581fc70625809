/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plan/landlock: the ABI probe, the access masks, and the ruleset a policy gets, put together
 * from the path rules, the carve of the denied paths (landlock-deny.c), sandlock's own carve-outs
 * and devices (landlock-own.c) and the TCP port rules (landlock-ports.c). Everything here runs in
 * the parent before fork; the child inherits only the finished ruleset fd.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd-util.h"
#include "path-util.h"
#include "landlock.h"
#include "landlock-internal.h"
#include "syscall-util.h"

int landlock_abi(void)
{
	static atomic_int cached; /* 0: not probed yet */
	int abi = atomic_load_explicit(&cached, memory_order_relaxed);

	if (abi != 0)
		return abi;
	abi = sys_landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 0)
		abi = -EOPNOTSUPP; /* ENOSYS: not built in; EOPNOTSUPP: disabled at boot */
	/* Tests of an older kernel on a newer one: the ABI may only be lowered (1 and up), so
	 * a strict protection fails to start and a degradable one is named as missing; it can
	 * never claim a protection the kernel lacks. Ignored in a setuid program. */
	const char *e = secure_getenv("SANDLOCK_TEST_LANDLOCK_ABI");
	char *end;
	long lower = e ? strtol(e, &end, 10) : 0;
	if (e && !*end && lower >= 1 && lower < abi)
		abi = (int)lower;
	atomic_store_explicit(&cached, abi, memory_order_relaxed);
	return abi;
}

uint64_t landlock_fs_handled(int abi, const uint32_t status[SANDLOCK_PROTECTION_COUNT])
{
	uint64_t handled = SL_LANDLOCK_FS_ABI1;

	/* ABI 2: REFER. Not handling it does not open anything up: the kernel then denies every
	 * cross-directory link and rename, which is what ABI 1 always did. */
	if (abi >= 2 && status[SANDLOCK_PROTECTION_FS_REFER] == SANDLOCK_STATUS_ACTIVE)
		handled |= LANDLOCK_ACCESS_FS_REFER;
	/* ABI 3: TRUNCATE. Unhandled, truncate(2) and O_TRUNC follow only the write rights. */
	if (abi >= 3 && status[SANDLOCK_PROTECTION_FS_TRUNCATE] == SANDLOCK_STATUS_ACTIVE)
		handled |= LANDLOCK_ACCESS_FS_TRUNCATE;
	/* ABI 5: IOCTL_DEV. Unhandled, ioctl(2) on device files is not restricted. */
	if (abi >= 5 && status[SANDLOCK_PROTECTION_FS_IOCTL_DEV] == SANDLOCK_STATUS_ACTIVE)
		handled |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return handled;
}

uint64_t landlock_read_access(uint64_t handled, int is_dir)
{
	uint64_t a = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE |
		     LANDLOCK_ACCESS_FS_READ_DIR;

	a &= handled;
	return is_dir ? a : a & SL_LANDLOCK_FS_FILE;
}

uint64_t landlock_write_access(uint64_t handled, int is_dir)
{
	/* Everything the ruleset handles: read, write, create, remove, refer, truncate, ioctl on
	 * devices. */
	return is_dir ? handled : handled & SL_LANDLOCK_FS_FILE;
}

int add_path_rule(int ruleset_fd, const char *field, const char *path, uint64_t handled, int write,
		  struct sandlock_error **reterr)
{
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return error_set(reterr, negative_errno(), "%s: %s: %s", field, path,
				 strerror(errno));

	struct stat st;
	if (fstat(fd, &st) < 0)
		return error_set(reterr, negative_errno(), "%s: %s: %s", field, path,
				 strerror(errno));

	int is_dir = S_ISDIR(st.st_mode);
	struct landlock_path_beneath_attr attr = {
		.allowed_access = write ? landlock_write_access(handled, is_dir)
					: landlock_read_access(handled, is_dir),
		.parent_fd = fd,
	};
	if (sys_landlock_add_rule(ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &attr, 0) < 0)
		return error_set(reterr, negative_errno(), "%s: %s: landlock_add_rule: %s", field,
				 path, strerror(errno));
	ll_record_rule(fd, attr.allowed_access);
	return 0;
}

int add_fd_rule(int ruleset_fd, int fd, uint64_t access, const char *field, const char *path,
		struct sandlock_error **reterr)
{
	struct landlock_path_beneath_attr attr = { .allowed_access = access, .parent_fd = fd };

	if (access && sys_landlock_add_rule(ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &attr, 0) < 0)
		return error_set(reterr, negative_errno(), "%s: %s: landlock_add_rule: %s", field,
				 path, strerror(errno));
	ll_record_rule(fd, access);
	return 0;
}

int landlock_ruleset_build(const struct sandlock_policy *p, int abi,
			   const uint32_t status[SANDLOCK_PROTECTION_COUNT], int flags,
			   int *ret_bind_zero, uint8_t **ret_bind_ports, char ***ret_carved,
			   struct sandlock_error **reterr)
{
	int no_net = flags & LANDLOCK_BUILD_NO_NET;
	struct sl_landlock_ruleset_attr attr = {
		.handled_access_fs = landlock_fs_handled(abi, status),
	};
	size_t attr_size = sizeof(uint64_t);

	/* ABI 4: TCP bind/connect, denied but for the ports of net_allow_bind and of the direct
	 * net_allow rules (tcp:// to any host); "*" leaves that access unhandled. Not for
	 * sandlock_confine(), which confines the caller's own process in place. */
	_cleanup_free_ struct tcp_ports *tcp = NULL; /* only when there are port lists */
	int net = !no_net && abi >= 4 &&
		  status[SANDLOCK_PROTECTION_NET_TCP] == SANDLOCK_STATUS_ACTIVE;
	if (net) {
		if (p->net_allow_bind || p->net_deny_bind || p->net_allow) {
			if (!(tcp = calloc(1, sizeof(*tcp))))
				return error_set(reterr, -ENOMEM, "out of memory");
			int r = tcp_ports_collect(p, tcp, reterr);
			if (r < 0)
				return r;
		}
		attr.handled_access_net =
			(tcp && tcp->bind_all ? 0 : SL_LANDLOCK_ACCESS_NET_BIND_TCP) |
			(tcp && tcp->connect_all ? 0 : SL_LANDLOCK_ACCESS_NET_CONNECT_TCP);
		attr_size = 2 * sizeof(uint64_t);
	}
	if (ret_bind_zero) /* whether bind(0) (and so a listen() autobind) is allowed */
		*ret_bind_zero = !net ||
				 !(attr.handled_access_net & SL_LANDLOCK_ACCESS_NET_BIND_TCP) ||
				 (tcp && (tcp->bind[0] & 1));
	/* ABI 6: IPC scoping, so the sandbox can reach neither abstract UNIX sockets nor
	 * processes outside its Landlock domain. */
	if (abi >= 6) {
		if (status[SANDLOCK_PROTECTION_SIGNAL_SCOPE] == SANDLOCK_STATUS_ACTIVE)
			attr.scoped |= SL_LANDLOCK_SCOPE_SIGNAL;
		if (status[SANDLOCK_PROTECTION_ABSTRACT_UNIX_SOCKET_SCOPE] ==
		    SANDLOCK_STATUS_ACTIVE)
			attr.scoped |= SL_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET;
		if (attr.scoped)
			attr_size = sizeof(attr);
	}

	_cleanup_close_ int fd = sys_landlock_create_ruleset(&attr, attr_size, 0);
	if (fd < 0)
		return error_set(reterr, negative_errno(), "landlock_create_ruleset: %s",
				 strerror(errno));

	struct denied_set deny = { 0 };
	int rr = denied_collect(p, flags & LANDLOCK_BUILD_MEDIATE_PROC, &deny, reterr);
	/* A workdir is read and executed by the kernel, written by the supervisor only (in its
	 * branch: handlers/cow.c): a writable grant of it or beneath it gives read there, one
	 * above it is refused. Not for sandlock_confine() (refused: no supervisor). */
	_cleanup_free_ char *workdir =
		p->workdir && !p->no_supervisor ? realpath(p->workdir, NULL) : NULL;
	if (rr == 0 && p->workdir && !p->no_supervisor && !workdir)
		rr = error_set(reterr, negative_errno(), "workdir: %s: %s", p->workdir,
			       strerror(errno));
	if (rr == 0 && workdir)
		rr = add_grant(fd, "workdir", workdir, attr.handled_access_fs, 0, 0, &deny, NULL,
			       reterr);
	for (size_t i = 0; rr == 0 && p->fs_read && p->fs_read[i]; i++)
		rr = add_grant(fd, "fs_readable", p->fs_read[i], attr.handled_access_fs, 0, 0,
			       &deny, NULL, reterr);
	for (size_t i = 0; rr == 0 && p->fs_write && p->fs_write[i]; i++) {
		int write = 1;
		if (workdir) {
			_cleanup_free_ char *real = realpath(p->fs_write[i], NULL);
			/* By identity too: a bind mount of (a parent of) the workdir. */
			write = !(real && (path_is_beneath(real, workdir) ||
					   path_holds_inode(real, workdir)));
			if (write && real && path_holds_inode(workdir, real)) {
				rr = error_set(reterr, -EOPNOTSUPP,
					       "not supported yet: fs_writable %s holding the "
					       "workdir %s (grant its other entries instead)",
					       p->fs_write[i], workdir);
				break;
			}
		}
		rr = add_grant(fd, "fs_writable", p->fs_write[i], attr.handled_access_fs, write,
			       flags & LANDLOCK_BUILD_MEDIATE_WRITE, &deny, ret_carved, reterr);
	}
	if (rr == 0)
		rr = add_default_devices(fd, attr.handled_access_fs, &deny, reterr);
	denied_set_done(&deny);
	if (rr < 0)
		return rr;
	/* gpu_devices: the exposed GPU nodes, read and write (device ioctls included). */
	if (p->gpu_devices.set) {
		struct gpu_grant g = { fd, attr.handled_access_fs, reterr };
		rr = gpu_nodes(p, gpu_grant_cb, &g);
		if (rr < 0)
			return rr;
	}
	if (tcp && tcp->n && attr.handled_access_net) {
		int r = add_port_rules(fd, tcp, attr.handled_access_net, reterr);
		if (r < 0)
			return r;
	}
	if (ret_bind_ports) { /* the ports bind may take, for a supervisor that binds */
		*ret_bind_ports = NULL;
		if (net && (attr.handled_access_net & SL_LANDLOCK_ACCESS_NET_BIND_TCP)) {
			*ret_bind_ports = calloc(1, sizeof(tcp->bind));
			if (!*ret_bind_ports)
				return error_set(reterr, -ENOMEM, "out of memory");
			if (tcp)
				memcpy(*ret_bind_ports, tcp->bind, sizeof(tcp->bind));
		}
	}
	return TAKE_FD(fd);
}

int landlock_add_read(int ruleset_fd, int abi, const uint32_t status[SANDLOCK_PROTECTION_COUNT],
		      const char *path, const char *field, struct sandlock_error **reterr)
{
	return add_path_rule(ruleset_fd, field, path, landlock_fs_handled(abi, status), 0, reterr);
}

int landlock_add_write(int ruleset_fd, int abi, const uint32_t status[SANDLOCK_PROTECTION_COUNT],
		       const char *path, const char *field, struct sandlock_error **reterr)
{
	return add_path_rule(ruleset_fd, field, path, landlock_fs_handled(abi, status), 1, reterr);
}
