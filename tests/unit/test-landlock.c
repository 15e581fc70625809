/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-landlock: the handled-access masks per ABI and protection status, the rights of read and
 * write grants on directories and files, the protection table and its resolution against an
 * ABI, and the ruleset build against the running kernel (skipped without Landlock).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "landlock-compat.h"
#include "plan/landlock.h"
#include "policy/policy.h"
#include "sandlock.h"
#include "tap.h"

#define A(x) LANDLOCK_ACCESS_FS_##x
#define READ_DIR_RIGHTS (A(EXECUTE) | A(READ_FILE) | A(READ_DIR))
#define READ_FILE_RIGHTS (A(EXECUTE) | A(READ_FILE))

/* Rights that only make sense on a directory: the kernel rejects them on a file with EINVAL. */
#define DIR_ONLY                                                                                   \
	(A(READ_DIR) | A(REMOVE_DIR) | A(REMOVE_FILE) | A(MAKE_CHAR) | A(MAKE_DIR) | A(MAKE_REG) | \
	 A(MAKE_SOCK) | A(MAKE_FIFO) | A(MAKE_BLOCK) | A(MAKE_SYM) | A(REFER))

static void set_all(uint32_t status[SANDLOCK_PROTECTION_COUNT], uint32_t v)
{
	for (uint32_t i = 0; i < SANDLOCK_PROTECTION_COUNT; i++)
		status[i] = v;
}

#define is_mask(got, want, ...)                                                                    \
	do {                                                                                       \
		uint64_t _gm = (got), _wm = (want);                                                \
		if (!ok(_gm == _wm, __VA_ARGS__))                                                  \
			diag("  got 0x%llx, expected 0x%llx (diff 0x%llx)",                        \
			     (unsigned long long)_gm, (unsigned long long)_wm,                     \
			     (unsigned long long)(_gm ^ _wm));                                     \
	} while (0)

static void test_fs_handled(void)
{
	uint32_t st[SANDLOCK_PROTECTION_COUNT];
	const uint64_t abi1 = SL_LANDLOCK_FS_ABI1;

	set_all(st, SANDLOCK_STATUS_ACTIVE);
	is_mask(abi1, (1ULL << 13) - 1, "the ABI 1 rights are bits 0..12");
	is_mask(landlock_fs_handled(1, st), abi1, "ABI 1: the 13 ABI-1 rights");
	is_mask(landlock_fs_handled(2, st), abi1 | A(REFER), "ABI 2: + REFER");
	is_mask(landlock_fs_handled(3, st), abi1 | A(REFER) | A(TRUNCATE), "ABI 3: + TRUNCATE");
	is_mask(landlock_fs_handled(4, st), abi1 | A(REFER) | A(TRUNCATE),
		"ABI 4: no new filesystem right");
	is_mask(landlock_fs_handled(5, st), abi1 | A(REFER) | A(TRUNCATE) | A(IOCTL_DEV),
		"ABI 5: + IOCTL_DEV");
	is_mask(landlock_fs_handled(7, st), abi1 | A(REFER) | A(TRUNCATE) | A(IOCTL_DEV),
		"ABI 7: same as 5");

	const uint64_t all5 = abi1 | A(REFER) | A(TRUNCATE) | A(IOCTL_DEV);
	static const struct {
		uint32_t prot;
		uint64_t right;
		const char *name;
	} drops[] = {
		{ SANDLOCK_PROTECTION_FS_REFER, A(REFER), "FsRefer" },
		{ SANDLOCK_PROTECTION_FS_TRUNCATE, A(TRUNCATE), "FsTruncate" },
		{ SANDLOCK_PROTECTION_FS_IOCTL_DEV, A(IOCTL_DEV), "FsIoctlDev" },
	};
	for (size_t i = 0; i < sizeof(drops) / sizeof(drops[0]); i++) {
		set_all(st, SANDLOCK_STATUS_ACTIVE);
		st[drops[i].prot] = SANDLOCK_STATUS_DISABLED;
		is_mask(landlock_fs_handled(5, st), all5 & ~drops[i].right,
			"ABI 5, %s disabled: exactly its right dropped", drops[i].name);
		st[drops[i].prot] = SANDLOCK_STATUS_DEGRADED;
		is_mask(landlock_fs_handled(5, st), all5 & ~drops[i].right,
			"ABI 5, %s degraded: its right dropped", drops[i].name);
	}
	set_all(st, SANDLOCK_STATUS_ACTIVE);
	st[SANDLOCK_PROTECTION_NET_TCP] = SANDLOCK_STATUS_DISABLED;
	st[SANDLOCK_PROTECTION_SIGNAL_SCOPE] = SANDLOCK_STATUS_DISABLED;
	is_mask(landlock_fs_handled(5, st), all5,
		"ABI 5, non-filesystem protections disabled: filesystem rights unchanged");
	set_all(st, SANDLOCK_STATUS_DISABLED);
	is_mask(landlock_fs_handled(7, st), abi1,
		"every protection disabled: the ABI-1 rights stay");
}

static void test_grant_rights(void)
{
	uint32_t st[SANDLOCK_PROTECTION_COUNT];

	set_all(st, SANDLOCK_STATUS_ACTIVE);
	for (int abi = 1; abi <= 7; abi++) {
		uint64_t h = landlock_fs_handled(abi, st);

		is_mask(landlock_read_access(h, 1), READ_DIR_RIGHTS,
			"ABI %d: read grant on a dir = execute, read_file, read_dir", abi);
		is_mask(landlock_read_access(h, 0), READ_FILE_RIGHTS,
			"ABI %d: read grant on a file = execute, read_file", abi);
		is_mask(landlock_write_access(h, 1), h,
			"ABI %d: write grant on a dir = everything handled", abi);
		uint64_t wf = landlock_write_access(h, 0);
		is_mask(wf & DIR_ONLY, 0, "ABI %d: write grant on a file has no dir-only right",
			abi);
		is_mask(landlock_read_access(h, 0) & DIR_ONLY, 0,
			"ABI %d: read grant on a file has no dir-only right", abi);
		is_mask(landlock_write_access(h, 1) & ~h, 0,
			"ABI %d: write grant never exceeds what is handled", abi);
	}
	uint64_t h1 = landlock_fs_handled(1, st), h5 = landlock_fs_handled(5, st);
	is_mask(landlock_write_access(h1, 0), A(EXECUTE) | A(WRITE_FILE) | A(READ_FILE),
		"ABI 1: write grant on a file = execute, write_file, read_file");
	is_mask(landlock_write_access(h5, 0),
		A(EXECUTE) | A(WRITE_FILE) | A(READ_FILE) | A(TRUNCATE) | A(IOCTL_DEV),
		"ABI 5: write grant on a file adds truncate and ioctl_dev");
	ok(landlock_write_access(h5, 1) & A(REFER), "ABI 5: write grant on a dir includes refer");
	is_mask(landlock_read_access(A(READ_FILE), 1), A(READ_FILE),
		"read grant is limited to the handled rights");
	is_mask(landlock_read_access(0, 1), 0, "nothing handled: nothing granted");
}

static void test_protection_table(void)
{
	static const struct {
		const char *name, *cli;
		int floor;
	} want[SANDLOCK_PROTECTION_COUNT] = {
		{ "FsRefer", "fs-refer", 2 },
		{ "FsTruncate", "fs-truncate", 3 },
		{ "NetTcp", "net-tcp", 4 },
		{ "FsIoctlDev", "fs-ioctl-dev", 5 },
		{ "SignalScope", "signal-scope", 6 },
		{ "AbstractUnixSocketScope", "abstract-unix-socket-scope", 6 },
	};

	for (uint32_t i = 0; i < SANDLOCK_PROTECTION_COUNT; i++) {
		is_int(sandlock_protection_from_name(want[i].name), i, "from_name(\"%s\") = %u",
		       want[i].name, i);
		is_int(sandlock_protection_from_name(want[i].cli), i, "from_name(\"%s\") = %u",
		       want[i].cli, i);
		is_str(sandlock_protection_name(i), want[i].name, "protection_name(%u)", i);
		is_int(sandlock_protection_abi_floor(i), want[i].floor, "abi_floor(%s) = %d",
		       want[i].name, want[i].floor);
	}
	is_int(sandlock_protection_from_name("fsrefer"), -EINVAL,
	       "from_name(\"fsrefer\") is -EINVAL");
	is_int(sandlock_protection_from_name("FS_REFER"), -EINVAL,
	       "from_name(\"FS_REFER\") is -EINVAL");
	is_int(sandlock_protection_from_name("fs-refer "), -EINVAL,
	       "from_name(\"fs-refer \") is -EINVAL");
	is_int(sandlock_protection_from_name(""), -EINVAL, "from_name(\"\") is -EINVAL");
	is_int(sandlock_protection_from_name(NULL), -EINVAL, "from_name(NULL) is -EINVAL");
	ok(sandlock_protection_name(SANDLOCK_PROTECTION_COUNT) == NULL,
	   "protection_name(COUNT) is NULL");
	is_int(sandlock_protection_abi_floor(SANDLOCK_PROTECTION_COUNT), -EINVAL,
	       "abi_floor(COUNT) is -EINVAL");
	is_int(sandlock_protection_abi_floor(UINT32_MAX), -EINVAL,
	       "abi_floor(UINT32_MAX) is -EINVAL");
	is_int(sandlock_min_landlock_abi(), 6, "min_landlock_abi() is 6");
}

static void check_resolve(const uint8_t *modes, int abi, int want_r, const uint32_t *want_status,
			  const char *want_msg, const char *name)
{
	struct sandlock_policy p = { 0 };
	uint32_t st[SANDLOCK_PROTECTION_COUNT];
	struct sandlock_error *e = NULL;

	memcpy(p.protection, modes, sizeof(p.protection));
	is_int(policy_resolve_protections(&p, abi, st, &e), want_r, "resolve: %s", name);
	int same = 1;
	for (uint32_t i = 0; i < SANDLOCK_PROTECTION_COUNT; i++)
		if (st[i] != want_status[i]) {
			diag("  status[%u] = %u, expected %u", i, st[i], want_status[i]);
			same = 0;
		}
	ok(same, "  statuses");
	if (want_msg)
		is_str(e ? e->message : NULL, want_msg, "  message");
	else
		ok(e == NULL, "  no error");
	error_free(e);
}

enum {
	S = SANDLOCK_PROTECTION_STRICT,
	D = SANDLOCK_PROTECTION_DEGRADED,
	X = SANDLOCK_PROTECTION_DISABLED
};
enum {
	ACT = SANDLOCK_STATUS_ACTIVE,
	DEG = SANDLOCK_STATUS_DEGRADED,
	DIS = SANDLOCK_STATUS_DISABLED,
	UNA = SANDLOCK_STATUS_UNAVAILABLE
};

static void test_resolve(void)
{
	check_resolve((uint8_t[]){ S, S, S, S, S, S }, 6, 0,
		      (uint32_t[]){ ACT, ACT, ACT, ACT, ACT, ACT }, NULL, "all strict at ABI 6");
	check_resolve((uint8_t[]){ S, S, S, S, S, S }, 7, 0,
		      (uint32_t[]){ ACT, ACT, ACT, ACT, ACT, ACT }, NULL, "all strict at ABI 7");
	check_resolve((uint8_t[]){ S, S, S, S, S, S }, 3, -EOPNOTSUPP,
		      (uint32_t[]){ ACT, ACT, UNA, UNA, UNA, UNA },
		      "protections NetTcp, FsIoctlDev, SignalScope, AbstractUnixSocketScope need "
		      "Landlock ABI 4, 5, 6, 6, this kernel has 3 (allow them to degrade with "
		      "allow_degraded = [\"net-tcp\", \"fs-ioctl-dev\", \"signal-scope\", "
		      "\"abstract-unix-socket-scope\"] or [\"all\"])",
		      "all strict at ABI 3: every missing one is named with its floor");
	check_resolve((uint8_t[]){ S, D, D, D, D, D }, 1, -EOPNOTSUPP,
		      (uint32_t[]){ UNA, DEG, DEG, DEG, DEG, DEG },
		      "protection FsRefer needs Landlock ABI 2, this kernel has 1 (allow it to "
		      "degrade with allow_degraded = [\"fs-refer\"])",
		      "one strict at ABI 1");
	check_resolve((uint8_t[]){ D, D, D, D, D, S }, 5, -EOPNOTSUPP,
		      (uint32_t[]){ ACT, ACT, ACT, ACT, DEG, UNA },
		      "protection AbstractUnixSocketScope needs Landlock ABI 6, this kernel has 5 "
		      "(allow it to degrade with allow_degraded = [\"abstract-unix-socket-scope\"])",
		      "one strict protection above the ABI fails, the degraded ones do not");
	check_resolve((uint8_t[]){ D, D, D, D, D, D }, 1, 0,
		      (uint32_t[]){ DEG, DEG, DEG, DEG, DEG, DEG }, NULL, "all degraded at ABI 1");
	check_resolve((uint8_t[]){ D, D, D, D, D, D }, 4, 0,
		      (uint32_t[]){ ACT, ACT, ACT, DEG, DEG, DEG }, NULL,
		      "degraded at ABI 4: active up to the ABI, degraded above");
	check_resolve((uint8_t[]){ X, X, X, X, X, X }, 7, 0,
		      (uint32_t[]){ DIS, DIS, DIS, DIS, DIS, DIS }, NULL,
		      "disabled stays disabled where the kernel has it");
	check_resolve((uint8_t[]){ X, X, X, X, X, X }, 1, 0,
		      (uint32_t[]){ DIS, DIS, DIS, DIS, DIS, DIS }, NULL,
		      "disabled is no error where the kernel lacks it");
	check_resolve((uint8_t[]){ S, X, S, D, X, D }, 4, 0,
		      (uint32_t[]){ ACT, DIS, ACT, DEG, DIS, DEG }, NULL, "a mix at ABI 4");
}

static void test_ruleset_build(void)
{
	int abi = landlock_abi();

	if (abi < 0) {
		diag("Landlock unavailable: ruleset builds skipped");
		is_int(abi, -EOPNOTSUPP, "landlock_abi() is -EOPNOTSUPP without Landlock");
		return;
	}
	ok(abi >= 1, "landlock_abi() = %d", abi);
	is_int(landlock_abi(), abi, "landlock_abi() is stable (cached)");

	uint32_t st[SANDLOCK_PROTECTION_COUNT];
	struct sandlock_policy p = { 0 };
	struct sandlock_error *e = NULL;
	for (uint32_t i = 0; i < SANDLOCK_PROTECTION_COUNT; i++)
		p.protection[i] = SANDLOCK_PROTECTION_DEGRADED;
	is_int(policy_resolve_protections(&p, abi, st, NULL), 0, "resolve for the running kernel");

	char dir[] = "/tmp/sl-landlock-XXXXXX";
	if (!ok(mkdtemp(dir) != NULL, "a temp dir"))
		return;
	char file[sizeof(dir) + 8];
	snprintf(file, sizeof(file), "%s/f", dir);
	int fd = open(file, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	close(fd);

	/* Control: existing paths, a dir and a file in each list, build. */
	p.fs_read = (char **)(const char *[]){ dir, file, NULL };
	p.fs_write = (char **)(const char *[]){ dir, file, NULL };
	int r = landlock_ruleset_build(&p, abi, st, 0, NULL, NULL, NULL, &e);
	if (!ok(r >= 0, "ruleset with existing dir and file grants builds (fd %d)", r))
		diag("  %s", e ? e->message : "");
	if (r >= 0) {
		int fl = fcntl(r, F_GETFD);
		ok(fl >= 0 && (fl & FD_CLOEXEC), "  the ruleset fd is O_CLOEXEC");
		close(r);
	}
	error_free(e);
	e = NULL;
	r = landlock_ruleset_build(&p, abi, st, 1, NULL, NULL, NULL, &e);
	ok(r >= 0, "the fs_only ruleset builds too");
	if (r >= 0)
		close(r);
	error_free(e);
	e = NULL;

	char missing[sizeof(dir) + 16], want[256];
	snprintf(missing, sizeof(missing), "%s/missing", dir);
	p.fs_read = (char **)(const char *[]){ dir, missing, NULL };
	p.fs_write = NULL;
	is_int(landlock_ruleset_build(&p, abi, st, 0, NULL, NULL, NULL, &e), -ENOENT,
	       "a missing fs_read path is -ENOENT");
	snprintf(want, sizeof(want), "fs_readable: %s: No such file or directory", missing);
	is_str(e ? e->message : NULL, want, "  the message names the field and the path");
	error_free(e);
	e = NULL;

	p.fs_read = (char **)(const char *[]){ dir, NULL };
	p.fs_write = (char **)(const char *[]){ missing, NULL };
	is_int(landlock_ruleset_build(&p, abi, st, 0, NULL, NULL, NULL, &e), -ENOENT,
	       "a missing fs_write path is -ENOENT");
	snprintf(want, sizeof(want), "fs_writable: %s: No such file or directory", missing);
	is_str(e ? e->message : NULL, want, "  the message names fs_write and the path");
	error_free(e);

	unlink(file);
	rmdir(dir);
}

int main(void)
{
	test_fs_handled();
	test_grant_rights();
	test_protection_table();
	test_resolve();
	test_ruleset_build();
	return done_testing();
}
