/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plan/landlock: ABI probe and ruleset construction. Everything here runs in the parent before
 * fork; the child inherits only the finished ruleset fd.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd-util.h"
#include "landlock.h"
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

static int add_path_rule(int ruleset_fd, const char *field, const char *path, uint64_t handled,
			 int write, struct sandlock_error **reterr)
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
	return 0;
}

int landlock_ruleset_build(const struct sandlock_policy *p, int abi,
			   const uint32_t status[SANDLOCK_PROTECTION_COUNT], int no_net,
			   struct sandlock_error **reterr)
{
	struct sl_landlock_ruleset_attr attr = {
		.handled_access_fs = landlock_fs_handled(abi, status),
	};
	size_t attr_size = sizeof(uint64_t);

	/* ABI 4: TCP bind/connect. With no port rules yet, handling them denies both. Not for
	 * sandlock_confine(), which confines the caller's own process in place. */
	if (!no_net && abi >= 4 && status[SANDLOCK_PROTECTION_NET_TCP] == SANDLOCK_STATUS_ACTIVE) {
		attr.handled_access_net =
			SL_LANDLOCK_ACCESS_NET_BIND_TCP | SL_LANDLOCK_ACCESS_NET_CONNECT_TCP;
		attr_size = 2 * sizeof(uint64_t);
	}
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

	for (size_t i = 0; p->fs_read && p->fs_read[i]; i++) {
		int r = add_path_rule(fd, "fs_read", p->fs_read[i], attr.handled_access_fs, 0,
				      reterr);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; p->fs_write && p->fs_write[i]; i++) {
		int r = add_path_rule(fd, "fs_write", p->fs_write[i], attr.handled_access_fs, 1,
				      reterr);
		if (r < 0)
			return r;
	}
	return TAKE_FD(fd);
}
