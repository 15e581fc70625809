/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plan/landlock: ABI probe and ruleset construction. Everything here runs in the parent before
 * fork; the child inherits only the finished ruleset fd.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cow/cow.h"
#include "fd-util.h"
#include "path-util.h"
#include "strv.h"
#include "landlock.h"
#include "policy/rules.h"
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

/* ---- fs_denied: carved out of the grants ---------------------------------------------- */

/* A denied path: its real path (the existing part resolved, the rest as written) and, when it
 * exists, its identity. */
struct denied {
	char *real;
	int exists;
	int internal; /* one of sandlock's own (/proc, the /sys denials): never moved by the
		       * sandbox, so carved out of writable grants too */
	dev_t dev;
	ino_t ino;
};

/* The denied paths, and the identities of the directories above them (what a grant is carved
 * down through, recognized by identity as well as by name). */
struct denied_set {
	struct denied *v;
	size_t n;
	struct stat *above;
	size_t n_above;
};

static void denied_set_done(struct denied_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].real);
	free(s->v);
	free(s->above);
	*s = (struct denied_set){ 0 };
}

/* @path, absolute, with its longest existing prefix resolved (realpath) and the rest appended
 * as written. NULL with errno set: ENOLINK when a component is a symlink that points nowhere
 * (where it points could be created later, beside a granted tree). */
char *landlock_resolve_partly(const char *path)
{
	struct stat st;
	char *real = realpath(path, NULL);
	if (real || errno != ENOENT)
		return real;
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		errno = ENOLINK;
		return NULL;
	}
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	if (!slash || !*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		errno = EINVAL;
		return NULL;
	}
	_cleanup_free_ char *dir = strndup(path, slash == path ? 1 : (size_t)(slash - path));
	_cleanup_free_ char *rdir = dir ? landlock_resolve_partly(dir) : NULL;
	if (!rdir)
		return NULL;
	char *out = NULL;
	if (asprintf(&out, "%s%s%s", rdir, strcmp(rdir, "/") == 0 ? "" : "/", base) < 0) {
		errno = ENOMEM;
		return NULL;
	}
	return out;
}

/* Whether a grant of @p covers @area (its real path is @area or above it), or, with @inside,
 * lies beneath it too. Every grant is resolved: "/proc/", "//proc", "/usr/../proc" and a
 * symlinked directory all name what they reach. A grant that does not resolve grants nothing. */
static int grants_touch(const struct sandlock_policy *p, const char *area, int inside)
{
	for (int w = 0; w < 2; w++)
		for (size_t i = 0;
		     (w ? p->fs_write : p->fs_read) && (w ? p->fs_write : p->fs_read)[i]; i++) {
			_cleanup_free_ char *real =
				realpath((w ? p->fs_write : p->fs_read)[i], NULL);
			if (real && (path_is_beneath(area, real) ||
				     (inside && path_is_beneath(real, area))))
				return 1;
		}
	return 0;
}

/* The first symlink on the way @path is written (@path itself included) that lies in a writable
 * grant of @p, in @found; 1 if there is one. The sandbox could point it elsewhere, and the
 * name denied would then be another file. */
static int symlink_in_write_grant(const struct sandlock_policy *p, const char *path, char *found,
				  size_t size)
{
	char prefix[PATH_MAX];
	size_t len = strlen(path);

	for (size_t i = 1; i <= len && i < sizeof(prefix); i++) {
		struct stat st;
		if (i < len && path[i] != '/')
			continue;
		memcpy(prefix, path, i);
		prefix[i] = '\0';
		if (lstat(prefix, &st) < 0)
			break; /* not there (or not seen: resolving the path says why) */
		char *slash = strrchr(prefix, '/');
		if (!S_ISLNK(st.st_mode) || !slash)
			continue;
		*slash = '\0';
		_cleanup_free_ char *dir = realpath(slash == prefix ? "/" : prefix, NULL);
		*slash = '/';
		if (!dir || (size_t)snprintf(found, size, "%s/%s", strcmp(dir, "/") ? dir : "",
					     slash + 1) >= size)
			continue;
		for (size_t w = 0; p->fs_write && p->fs_write[w]; w++) {
			_cleanup_free_ char *real = realpath(p->fs_write[w], NULL);
			if (real && path_is_beneath(found, real))
				return 1;
		}
	}
	return 0;
}

/* The first file beneath directory @dir with other hard links, in @found; 1 if there is one.
 * (Another name of it could be anywhere beneath a grant.) */
static int find_linked(int dir, char *found, size_t size, const char *name, int depth)
{
	DIR *d = depth < 64 ? fdopendir(dir) : NULL;
	int hit = 0;

	if (!d) {
		close(dir);
		return 0; /* unreadable here: the sandbox cannot read it either */
	}
	for (struct dirent *e; !hit && (e = readdir(d));) {
		struct stat st;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (!S_ISDIR(st.st_mode) && st.st_nlink > 1) {
			snprintf(found, size, "%s/%s", name, e->d_name);
			hit = 1;
		} else if (S_ISDIR(st.st_mode)) {
			char sub[PATH_MAX];
			int fd = openat(dirfd(d), e->d_name,
					O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0 && (size_t)snprintf(sub, sizeof(sub), "%s/%s", name,
							e->d_name) < sizeof(sub))
				hit = find_linked(fd, found, size, sub, depth + 1);
			else if (fd >= 0)
				close(fd);
		}
	}
	closedir(d);
	return hit;
}

/* The paths of /sys no grant reaches: firmware tables, the LSMs' files, the host's network
 * interfaces. */
static const char *const sys_denied[] = { "/sys/firmware", "/sys/kernel/security",
					  "/sys/class/net" };

static int add_internal(struct denied_set *s, const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return 0; /* not there: nothing to carve */
	struct denied *d = &s->v[s->n];
	if (!(d->real = realpath(path, NULL)))
		return errno == ENOMEM ? -ENOMEM : 0;
	d->exists = d->internal = 1;
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	s->n++;
	return 0;
}

/* The directories above @real, by identity, into @s->above. */
static int add_above(struct denied_set *s, const char *real)
{
	_cleanup_free_ char *up = strdup(real);
	struct stat st;

	for (char *slash; up && (slash = strrchr(up, '/'));) {
		if (slash == up)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (stat(up, &st) == 0) {
			struct stat *v = realloc(s->above, (s->n_above + 1) * sizeof(*v));
			if (!v)
				return -ENOMEM;
			s->above = v;
			s->above[s->n_above++] = st;
		}
		if (strcmp(up, "/") == 0)
			break;
	}
	return up ? 0 : -ENOMEM;
}

/* The real path of the per-user store root (cow/store.c) when a grant of @p holds it: every
 * branch there is its supervisor's alone, out of every sandbox's reach (NULL: none holds it).
 * Made first when missing, so that no sandbox makes it (and what lies in it) itself. */
static char *store_root_granted(const struct sandlock_policy *p)
{
	char root[64];

	if (cow_store_root(root, sizeof(root)) < 0)
		return NULL;
	char *real = landlock_resolve_partly(root);
	if (!real || !grants_touch(p, real, 0)) {
		free(real);
		return NULL;
	}
	int fd = cow_store_open(1); /* (another's, or not made: carved all the same) */
	if (fd >= 0)
		close(fd);
	return real;
}

/* The store root, carved out of every grant that holds it: with a supervisor as a user's
 * fs_denied path (what the sandbox makes beside it in a writable grant is the supervisor's,
 * handlers/fs-write.c), without one as sandlock's own paths are (the directories on the way
 * listed only: nothing is made or removed there). */
static int add_store_root(const struct sandlock_policy *p, struct denied_set *s)
{
	_cleanup_free_ char *real = store_root_granted(p);
	struct stat st;

	if (!real)
		return 0;
	struct denied *d = &s->v[s->n];
	d->internal = p->no_supervisor;
	if (stat(real, &st) == 0)
		d->exists = 1, d->dev = st.st_dev, d->ino = st.st_ino;
	d->real = TAKE_PTR(real);
	s->n++;
	return add_above(s, d->real);
}

/* ---- gpu_devices ------------------------------------------------------------------------ */

/* The GPU device nodes present: NVIDIA's per-GPU /dev/nvidiaN, its shared nodes, the DRM nodes
 * (/dev/dri/cardN, renderD(128+N)) and AMD's /dev/kfd. For each, whether gpu_devices exposes
 * it: every one for [], a per-GPU node only when listed, the shared nodes whenever a GPU is. */
static int gpu_node_exposed(const struct sandlock_policy *p, const char *name, int *is_gpu)
{
	unsigned n;
	char tail;
	int per_gpu = -1;

	*is_gpu = 1;
	if (sscanf(name, "/dev/nvidia%u%c", &n, &tail) == 1 ||
	    sscanf(name, "/dev/dri/card%u%c", &n, &tail) == 1)
		per_gpu = (int)n;
	else if (sscanf(name, "/dev/dri/renderD%u%c", &n, &tail) == 1 && n >= 128)
		per_gpu = (int)n - 128;
	else if (strncmp(name, "/dev/nvidia", 11) != 0 && strcmp(name, "/dev/kfd") != 0 &&
		 strcmp(name, "/dev/dri") != 0)
		*is_gpu = 0;
	if (!*is_gpu || !p->gpu_devices.set)
		return 0;
	if (!p->gpu_devices.n || per_gpu < 0)
		return 1; /* [] exposes all; the shared nodes go with any GPU */
	for (size_t i = 0; i < p->gpu_devices.n; i++)
		if (p->gpu_devices.v[i] == (uint32_t)per_gpu)
			return 1;
	return 0;
}

/* Call @fn for every GPU node present, with whether it is exposed. */
static int gpu_nodes(const struct sandlock_policy *p,
		     int (*fn)(const char *path, int exposed, void *arg), void *arg)
{
	static const char *const dirs[] = { "/dev", "/dev/dri" };
	int r = 0;

	for (size_t d = 0; r == 0 && d < ELEMENTSOF(dirs); d++) {
		DIR *dir = opendir(dirs[d]);
		for (struct dirent *e; r == 0 && dir && (e = readdir(dir));) {
			char path[PATH_MAX];
			int is_gpu;
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dirs[d], e->d_name);
			if (d == 0 && strcmp(e->d_name, "dri") == 0)
				continue; /* its nodes, one by one */
			int exposed = gpu_node_exposed(p, path, &is_gpu);
			if (is_gpu)
				r = fn(path, exposed, arg);
		}
		if (dir)
			closedir(dir);
	}
	return r;
}

static int gpu_collect_cb(const char *path, int exposed, void *arg)
{
	return exposed ? 0 : strv_extend(arg, path);
}

struct gpu_grant {
	int ruleset_fd;
	uint64_t handled;
	struct sandlock_error **reterr;
};

static int gpu_grant_cb(const char *path, int exposed, void *arg)
{
	struct gpu_grant *g = arg;
	return exposed ? add_path_rule(g->ruleset_fd, "gpu_devices", path, g->handled, 1, g->reterr)
		       : 0;
}

static int denied_collect(const struct sandlock_policy *p, int mediate_proc, struct denied_set *s,
			  struct sandlock_error **reterr)
{
	size_t n = 0, user;

	while (p->fs_deny && p->fs_deny[n])
		n++;
	user = n;
	/* The network interfaces' own directories too (/sys/class/net holds symlinks to them,
	 * under /sys/devices), so that no spelling reaches an interface's address. */
	_cleanup_strv_free_ char **nets = NULL;
	size_t n_nets = 0;
	int sys = grants_touch(p, "/sys", 1); /* else nothing of /sys is granted to carve */
	DIR *cn = sys ? opendir("/sys/class/net") : NULL;
	for (struct dirent *e; cn && (e = readdir(cn));) {
		char path[PATH_MAX];
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/class/net/%s", e->d_name);
		if (strv_extend(&nets, path) < 0) {
			closedir(cn);
			return error_set(reterr, -ENOMEM, "out of memory");
		}
		n_nets++;
	}
	if (cn)
		closedir(cn);
	_cleanup_strv_free_ char **others = NULL;
	size_t n_others = 0;
	if (mediate_proc) {
		FILE *f = fopen("/proc/self/mountinfo", "re");
		char line[4096];
		while (f && fgets(line, sizeof(line), f)) {
			/* "id parent maj:min root mountpoint opts ... - fstype source opts" */
			char mnt[4096], *dash = strstr(line, " - ");
			char fstype[64];
			if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
			    sscanf(dash + 3, "%63s", fstype) != 1)
				continue;
			if ((strcmp(fstype, "proc") == 0 && strcmp(mnt, "/proc") != 0) ||
			    (strcmp(fstype, "sysfs") == 0 && strcmp(mnt, "/sys") != 0)) {
				path_unescape_mount(mnt, strlen(mnt), mnt, sizeof(mnt));
				if (strv_extend(&others, mnt) < 0) {
					fclose(f);
					return error_set(reterr, -ENOMEM, "out of memory");
				}
				n_others++;
			}
		}
		if (f)
			fclose(f);
	}
	/* The GPU nodes gpu_devices does not expose, out of any grant of /dev (collected
	 * first: the room for them is counted from this one listing). */
	_cleanup_strv_free_ char **gpus = NULL;
	int dev = grants_touch(p, "/dev", 1); /* else no GPU node is granted to carve */
	if (dev && gpu_nodes(p, gpu_collect_cb, &gpus) < 0)
		return error_set(reterr, -ENOMEM, "out of memory");
	size_t n_gpu = strv_length(gpus);
	if (!(s->v = calloc(n + ELEMENTSOF(sys_denied) + n_nets + n_others + n_gpu + 3,
			    sizeof(*s->v))))
		return error_set(reterr, -ENOMEM, "out of memory");
	for (size_t i = 0; sys && i < ELEMENTSOF(sys_denied); i++)
		if (add_internal(s, sys_denied[i]) < 0)
			return error_set(reterr, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n_nets; i++)
		if (add_internal(s, nets[i]) < 0)
			return error_set(reterr, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n_gpu; i++)
		if (add_internal(s, gpus[i]) < 0)
			return error_set(reterr, -ENOMEM, "out of memory");
	if (mediate_proc && add_internal(s, "/proc") < 0)
		return error_set(reterr, -ENOMEM, "out of memory");
	/* Another procfs or sysfs mounted elsewhere (a chroot's /proc) would reach the same
	 * files by another path: left out of every grant whole while /proc is served. */
	for (size_t i = 0; mediate_proc && i < n_others; i++)
		if (add_internal(s, others[i]) < 0)
			return error_set(reterr, -ENOMEM, "out of memory");
	if (add_store_root(p, s) < 0)
		return error_set(reterr, -ENOMEM, "out of memory");
	for (size_t i = 0; i < user; i++) {
		const char *path = p->fs_deny[i];
		struct denied *d = &s->v[s->n];
		struct stat st;
		char linked[PATH_MAX];
		if (path[0] != '/')
			return error_set(reterr, -EINVAL, "fs_denied: %s: not an absolute path",
					 path);
		if (symlink_in_write_grant(p, path, linked, sizeof(linked)))
			return error_set(
				reterr, -EINVAL,
				"fs_denied: %s: goes through a symlink in a writable grant "
				"(%s), which the sandbox could point elsewhere (deny where "
				"it points instead)",
				path, linked);
		if (!(d->real = landlock_resolve_partly(path)) && errno == ENOLINK)
			return error_set(
				reterr, -EINVAL,
				"fs_denied: %s: goes through a symlink that points nowhere "
				"(deny where it points instead)",
				path);
		if (!d->real)
			return error_set(reterr, errno == ENOMEM ? -ENOMEM : -EINVAL,
					 "fs_denied: %s: %s", path, strerror(errno));
		s->n++;
		/* The directories above it, by identity. */
		if (add_above(s, d->real) < 0)
			return error_set(reterr, -ENOMEM, "out of memory");
		if (stat(d->real, &st) < 0)
			continue;
		d->exists = 1;
		d->dev = st.st_dev;
		d->ino = st.st_ino;
		/* Another name of a denied file could be anywhere beneath a grant: a scan of every
		 * grant at each start would be needed to carve it out too. */
		if (!S_ISDIR(st.st_mode) && st.st_nlink > 1)
			return error_set(reterr, -EOPNOTSUPP,
					 "not supported yet: fs_denied of a file with other hard "
					 "links (%s has %ju names)",
					 path, (uintmax_t)st.st_nlink);
		int dfd = S_ISDIR(st.st_mode) ? open(d->real, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
					      : -1;
		if (dfd >= 0 && find_linked(dfd, linked, sizeof(linked), d->real, 0))
			return error_set(reterr, -EOPNOTSUPP,
					 "not supported yet: fs_denied of a file with other hard "
					 "links (%s)",
					 linked);
	}
	return 0;
}

static int is_denied_inode(const struct denied_set *s, const struct stat *st)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].exists && s->v[i].dev == st->st_dev && s->v[i].ino == st->st_ino)
			return 1;
	return 0;
}

static int is_above_denied(const struct denied_set *s, const struct stat *st)
{
	for (size_t i = 0; i < s->n_above; i++)
		if (s->above[i].st_dev == st->st_dev && s->above[i].st_ino == st->st_ino)
			return 1;
	return 0;
}

static int add_fd_rule(int ruleset_fd, int fd, uint64_t access, const char *field, const char *path,
		       struct sandlock_error **reterr)
{
	struct landlock_path_beneath_attr attr = { .allowed_access = access, .parent_fd = fd };

	if (access && sys_landlock_add_rule(ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &attr, 0) < 0)
		return error_set(reterr, negative_errno(), "%s: %s: landlock_add_rule: %s", field,
				 path, strerror(errno));
	return 0;
}

/* Grant @dir (a read grant's directory, real path) but the denied paths beneath it: the
 * directory itself may be listed (READ_DIR, which Landlock then allows beneath it too: the
 * names in a denied directory stay listable), and each entry gets the grant's rights, but a
 * denied one, one with a denied path beneath (carved the same way), and a symlink (reached
 * through its target, which decides). Entries are judged on the inode opened, by name and by
 * identity: a bind mount of a denied file beside it, or an entry renamed meanwhile, is the
 * denied inode and is never granted. */
static int carve(int ruleset_fd, const char *field, const char *dir, uint64_t handled, int write,
		 const struct denied_set *deny, int depth, char ***carved,
		 struct sandlock_error **reterr)
{
	if (depth > 64) /* a mount loop: grant nothing further down (fail closed) */
		return 0;
	_cleanup_close_ int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return error_set(reterr, negative_errno(), "%s: %s: %s", field, dir,
				 strerror(errno));
	int r = add_fd_rule(ruleset_fd, dfd, handled & LANDLOCK_ACCESS_FS_READ_DIR, field, dir,
			    reterr);
	DIR *d = r == 0 ? opendir(dir) : NULL;
	if (r == 0 && !d)
		return error_set(reterr, negative_errno(), "%s: %s: %s", field, dir,
				 strerror(errno));
	for (struct dirent *e; r == 0 && (e = readdir(d));) {
		_cleanup_free_ char *path = NULL;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    e->d_type == DT_LNK)
			continue;
		if (asprintf(&path, "%s%s%s", dir, strcmp(dir, "/") == 0 ? "" : "/", e->d_name) <
		    0) {
			r = error_set(reterr, -ENOMEM, "out of memory");
			break;
		}
		int exact = 0, below = 0;
		for (size_t i = 0; i < deny->n; i++) {
			exact |= strcmp(deny->v[i].real, path) == 0;
			below |= path_is_beneath(deny->v[i].real, path) &&
				 strcmp(deny->v[i].real, path) != 0;
		}
		if (exact)
			continue;
		_cleanup_close_ int fd =
			openat(dirfd(d), e->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0)
			continue; /* gone meanwhile: nothing to grant */
		if (S_ISLNK(st.st_mode) || is_denied_inode(deny, &st))
			continue;
		below |= S_ISDIR(st.st_mode) && is_above_denied(deny, &st);
		if (below && S_ISDIR(st.st_mode))
			r = carve(ruleset_fd, field, path, handled, write, deny, depth + 1, carved,
				  reterr);
		else if (!below) {
			r = add_fd_rule(ruleset_fd, fd,
					write ? landlock_write_access(handled, S_ISDIR(st.st_mode))
					      : landlock_read_access(handled, S_ISDIR(st.st_mode)),
					field, path, reterr);
			if (r == 0 && carved && strv_push(carved, TAKE_PTR(path)) < 0)
				r = error_set(reterr, -ENOMEM, "out of memory");
		}
	}
	if (d)
		closedir(d);
	return r;
}

/* A grant of @path (@write: read + write) under the denied paths: as it is when none lies
 * beneath it, nothing when one is the grant or above it (deny wins), carved when one lies
 * beneath it. A user's denied path beneath a write grant is carved only with @mediate_write:
 * the directories on the way to it are then left without rights of their own, and what the
 * sandbox creates, removes and renames there is the supervisor's (handlers/fs-write.c);
 * without a supervisor it is refused. */
static int add_grant(int ruleset_fd, const char *field, const char *path, uint64_t handled,
		     int write, int mediate_write, const struct denied_set *deny, char ***carved,
		     struct sandlock_error **reterr)
{
	if (!deny->n)
		return add_path_rule(ruleset_fd, field, path, handled, write, reterr);
	_cleanup_free_ char *real = realpath(path, NULL);
	if (!real)
		return error_set(reterr, negative_errno(), "%s: %s: %s", field, path,
				 strerror(errno));
	/* Only a denied path of the user's inside a writable grant is refused: sandlock's own
	 * (/proc, /sys) cannot be renamed, linked or replaced by the sandbox. */
	const char *inside = NULL, *user_inside = NULL;
	for (size_t i = 0; i < deny->n; i++) {
		if (path_is_beneath(real, deny->v[i].real))
			return 0; /* the grant is (beneath) a denied path: denied */
		if (path_is_beneath(deny->v[i].real, real)) {
			inside = deny->v[i].real;
			if (!deny->v[i].internal)
				user_inside = deny->v[i].real;
		}
	}
	if (!inside) {
		struct stat st;
		if (stat(real, &st) == 0 && is_denied_inode(deny, &st))
			return 0; /* another name of a denied path */
		return add_path_rule(ruleset_fd, field, path, handled, write, reterr);
	}
	if (write && user_inside && !mediate_write)
		return error_set(
			reterr, -EINVAL,
			"fs_denied inside a writable grant needs the supervisor (%s in %s)",
			user_inside, path);
	/* The entries granted one by one beside the way to a user's denied path in a writable
	 * grant: the supervisor leaves what lies beneath them to the kernel (fs-write.c). */
	return carve(ruleset_fd, field, real, handled, write, deny, 0,
		     write && user_inside ? carved : NULL, reterr);
}

/* ---- the devices every program expects ------------------------------------------------ */

/* As bwrap --dev and Docker give them: the memory devices, by their fixed numbers (a node of
 * that name that is another device, or no device, gets nothing). null, zero and full read and
 * write (and truncate: `>/dev/null` opens with O_TRUNC), the random devices read only. No ioctl
 * (IOCTL_DEV): none of these serves one a program needs. */
static const struct default_device {
	const char *path;
	unsigned minor; /* of major 1 */
	int write;
} default_devices[] = {
	{ "/dev/null", 3, 1 },	 { "/dev/zero", 5, 1 },	   { "/dev/full", 7, 1 },
	{ "/dev/random", 8, 0 }, { "/dev/urandom", 9, 0 },
};

int landlock_random_devices_granted(const struct sandlock_policy *p, char ***granted)
{
	static const char *const random[] = { "/dev/random", "/dev/urandom" };

	for (size_t i = 0; i < ELEMENTSOF(random); i++) {
		int denied = 0;
		for (size_t k = 0; !denied && p->fs_deny && p->fs_deny[k]; k++) {
			_cleanup_free_ char *real = landlock_resolve_partly(p->fs_deny[k]);
			if (!real && errno == ENOMEM)
				return -ENOMEM;
			denied = path_is_beneath(random[i], real ? real : p->fs_deny[k]);
		}
		if (!denied && strv_extend(granted, random[i]) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Grant each default device present, unless a denied path (the user's, or above it: /dev) is
 * or holds it, by name or by identity: an explicit fs_denied wins. A node missing (a container
 * without it) is skipped. */
static int add_default_devices(int ruleset_fd, uint64_t handled, const struct denied_set *deny,
			       struct sandlock_error **reterr)
{
	for (size_t i = 0; i < ELEMENTSOF(default_devices); i++) {
		const struct default_device *d = &default_devices[i];
		struct stat st;
		int denied = 0;
		for (size_t k = 0; k < deny->n; k++)
			denied |= path_is_beneath(d->path, deny->v[k].real);
		_cleanup_close_ int fd = denied ? -1 : open(d->path, O_PATH | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode) ||
		    st.st_rdev != makedev(1, d->minor) || is_denied_inode(deny, &st))
			continue;
		uint64_t access = LANDLOCK_ACCESS_FS_READ_FILE;
		if (d->write)
			access |= LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE;
		int r = add_fd_rule(ruleset_fd, fd, access & handled, "default devices", d->path,
				    reterr);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The TCP ports a sandbox may bind and connect to, as two bitmaps (65536 bits each). */
struct tcp_ports {
	int bind_all, connect_all;
	size_t n; /* ports marked */
	uint8_t bind[65536 / 8], connect[65536 / 8];
};

static void ports_mark(struct tcp_ports *t, uint8_t *bits, const struct port_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		for (uint32_t port = set->ranges[i].lo; port <= set->ranges[i].hi; port++) {
			bits[port / 8] |= (uint8_t)(1u << (port % 8));
			t->n++;
		}
}

/* Whether a port of @deny lies in the kernel's ephemeral range (ip_local_port_range); 1 when
 * the range cannot be read (fail closed). */
static int ephemeral_range_hits(const uint8_t *deny)
{
	char buf[64] = "";
	unsigned lo, hi;

	int fd = open("/proc/sys/net/ipv4/ip_local_port_range", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0 || sscanf(buf, "%u %u", &lo, &hi) != 2 || lo > hi || hi > 65535)
		return 1;
	for (unsigned port = lo; port <= hi; port++)
		if ((deny[port / 8] >> (port % 8)) & 1)
			return 1;
	return 0;
}

static int tcp_ports_collect(const struct sandlock_policy *p, struct tcp_ports *t,
			     struct sandlock_error **reterr)
{
	char err[256];
	int r = 0;

	for (size_t i = 0; r == 0 && p->net_allow_bind && p->net_allow_bind[i]; i++) {
		struct port_set set = { 0 };
		r = bind_ports_parse(p->net_allow_bind[i], NET_BIND_ALLOW, &set, err, sizeof(err));
		if (r == 0) {
			t->bind_all |= set.all;
			ports_mark(t, t->bind, &set);
		}
		port_set_done(&set);
	}
	/* net_deny_bind: the allowed set minus the denied ports, so the kernel enforces both and
	 * nothing is trapped. Alone it is a default-allow list: every port (0 included, an
	 * ephemeral bind) but the denied ones. Costs one rule per allowed port (~1 us each). */
	uint8_t deny[65536 / 8] = { 0 };
	int any_deny = 0;
	for (size_t i = 0; r == 0 && p->net_deny_bind && p->net_deny_bind[i]; i++) {
		struct port_set set = { 0 };
		r = bind_ports_parse(p->net_deny_bind[i], NET_BIND_DENY, &set, err, sizeof(err));
		if (r == 0) {
			size_t before = t->n;
			ports_mark(t, deny, &set);
			t->n = before;
			any_deny |= set.n > 0;
		}
		port_set_done(&set);
	}
	if (r == 0 && any_deny) {
		int zero_listed = t->bind[0] & 1;
		if (t->bind_all || !p->net_allow_bind)
			memset(t->bind, 0xff, sizeof(t->bind));
		/* bind(0), and listen() on an unbound socket, take a port of the ephemeral range
		 * (IP_LOCAL_PORT_RANGE narrows it per socket): a denied port in that range could
		 * be had by retrying, so port 0 stays allowed only when none is (or when listed).
		 */
		if (!zero_listed && ephemeral_range_hits(deny))
			t->bind[0] &= (uint8_t)~1u;
		t->bind_all = 0;
		t->n = 0;
		for (size_t i = 0; i < sizeof(t->bind); i++) {
			t->bind[i] &= (uint8_t)~deny[i];
			t->n += (size_t)__builtin_popcount(t->bind[i]);
		}
	}
	/* The direct rules (TCP to any host) are port rules here. A supervised sandbox has
	 * every connect made by the supervisor, which applies them too (handlers/net.c); these
	 * rules bind what it does not make (no supervisor). When some rule needs the
	 * supervisor's matching (net_needs.onbehalf), Landlock allows no TCP connect at all. */
	int onbehalf = p->net.needs.onbehalf;
	for (size_t i = 0; r == 0 && !onbehalf && i < p->net.n_allow; i++) {
		const struct net_rule *rule = &p->net.allow[i];
		/* Not on behalf: the TCP rules are to any host, and a UDP or ICMP rule opens
		 * every destination of its protocol (net_rules_needs_of), nothing for Landlock. */
		if ((rule->protos & NET_PROTO_TCP) && rule->kind != NET_TARGET_ANY)
			r = -EINVAL, snprintf(err, sizeof(err),
					      "net_allow: a rule to a host "
					      "needs the supervisor");
		if (r == 0 && (rule->protos & NET_PROTO_TCP)) {
			t->connect_all |= rule->ports.all;
			ports_mark(t, t->connect, &rule->ports);
		}
	}
	return r < 0 ? error_set(reterr, r, "%s", err) : 0;
}

/* One Landlock rule per allowed port (bind and connect rights together). */
static int add_port_rules(int ruleset_fd, const struct tcp_ports *t, uint64_t handled,
			  struct sandlock_error **reterr)
{
	for (uint32_t port = 0; port < 65536; port++) {
		uint64_t access = 0;
		if ((handled & SL_LANDLOCK_ACCESS_NET_BIND_TCP) &&
		    (t->bind[port / 8] >> (port % 8)) & 1)
			access |= SL_LANDLOCK_ACCESS_NET_BIND_TCP;
		if ((handled & SL_LANDLOCK_ACCESS_NET_CONNECT_TCP) &&
		    (t->connect[port / 8] >> (port % 8)) & 1)
			access |= SL_LANDLOCK_ACCESS_NET_CONNECT_TCP;
		if (!access)
			continue;
		struct sl_landlock_net_port_attr attr = { .allowed_access = access, .port = port };
		if (sys_landlock_add_rule(ruleset_fd, SL_LANDLOCK_RULE_NET_PORT, &attr, 0) < 0)
			return error_set(reterr, negative_errno(),
					 "TCP port %u: landlock_add_rule: %s", port,
					 strerror(errno));
	}
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

int landlock_grants_proc(const struct sandlock_policy *p)
{
	return grants_touch(p, "/proc", 0);
}

int landlock_write_mediation(const struct sandlock_policy *p, int mediate_proc, char ***ret_roots,
			     char ***ret_denied)
{
	_cleanup_strv_free_ char **roots = NULL, **denied = NULL;
	size_t n = 0;

	for (size_t i = 0; p->fs_write && p->fs_deny && p->fs_deny[i]; i++) {
		char *real = landlock_resolve_partly(p->fs_deny[i]);
		if (!real && errno == ENOMEM)
			return -ENOMEM;
		if (real && strv_push(&denied, real) < 0) {
			free(real);
			return -ENOMEM;
		}
	}
	/* The store root, which the supervisor keeps out of the writable grants as a user's
	 * denied path (add_store_root). */
	char *store = p->fs_write && !p->no_supervisor ? store_root_granted(p) : NULL;
	if (store && strv_push(&denied, store) < 0) {
		free(store);
		return -ENOMEM;
	}
	for (size_t i = 0; denied && p->fs_write[i]; i++) {
		_cleanup_free_ char *real = realpath(p->fs_write[i], NULL);
		if (!real) {
			if (errno == ENOMEM)
				return -ENOMEM;
			continue; /* reported by the ruleset build */
		}
		for (size_t j = 0; denied[j]; j++)
			if (path_is_beneath(denied[j], real) && !path_is_beneath(real, denied[j])) {
				if (strv_push(&roots, real) < 0)
					return -ENOMEM;
				real = NULL;
				n++;
				break;
			}
	}
	if (ret_roots)
		*ret_roots = n ? TAKE_PTR(roots) : NULL;
	if (!ret_denied)
		return (int)n;
	*ret_denied = NULL;
	if (!n)
		return 0;
	/* Every path carved out of the grants, sandlock's own too (a GPU node moved beneath a
	 * granted directory would be reached there): the user's are refused by the ruleset
	 * build when they cannot be carved, which reports it. */
	struct denied_set set = { 0 };
	_cleanup_strv_free_ char **all = NULL;
	int r = denied_collect(p, mediate_proc, &set, NULL);
	for (size_t i = 0; r == 0 && i < set.n; i++)
		r = strv_extend(&all, set.v[i].real);
	denied_set_done(&set);
	if (r == -ENOMEM)
		return r;
	*ret_denied = r == 0 && all ? TAKE_PTR(all) : TAKE_PTR(denied);
	return (int)n;
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
