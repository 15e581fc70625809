/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plan/landlock-deny: fs_denied, carved out of the grants. The denied paths are resolved and
 * checked (a symlink in a writable grant, other hard links), the grants holding one are granted
 * entry by entry beside the way to it, and the writable grants holding one are named for the
 * supervisor, which mediates what is made there (handlers/fs-write.c).
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fd-util.h"
#include "path-util.h"
#include "strv.h"
#include "landlock.h"
#include "landlock-internal.h"
#include "syscall-util.h"

void denied_set_done(struct denied_set *s)
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
int grants_touch(const struct sandlock_policy *p, const char *area, int inside)
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

int denied_collect(const struct sandlock_policy *p, int mediate_proc, struct denied_set *s,
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

int is_denied_inode(const struct denied_set *s, const struct stat *st)
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
int add_grant(int ruleset_fd, const char *field, const char *path, uint64_t handled, int write,
	      int mediate_write, const struct denied_set *deny, char ***carved,
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
