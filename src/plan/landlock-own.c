/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plan/landlock-own: what sandlock carves out of every grant on its own (the /sys denials, the
 * network interfaces, another procfs or sysfs, the store root of the branches), the GPU nodes of
 * gpu_devices, and the devices every program expects.
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

#include "cow/cow.h"
#include "fd-util.h"
#include "path-util.h"
#include "strv.h"
#include "landlock.h"
#include "landlock-internal.h"
#include "syscall-util.h"

/* The paths of /sys no grant reaches: firmware tables, the LSMs' files, the host's network
 * interfaces. */
const char *const sys_denied[SYS_DENIED_N] = { "/sys/firmware", "/sys/kernel/security",
					       "/sys/class/net" };

int add_internal(struct denied_set *s, const char *path)
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
int add_above(struct denied_set *s, const char *real)
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
char *store_root_granted(const struct sandlock_policy *p)
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
int add_store_root(const struct sandlock_policy *p, struct denied_set *s)
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
int gpu_nodes(const struct sandlock_policy *p, int (*fn)(const char *path, int exposed, void *arg),
	      void *arg)
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

int gpu_collect_cb(const char *path, int exposed, void *arg)
{
	return exposed ? 0 : strv_extend(arg, path);
}

int gpu_grant_cb(const char *path, int exposed, void *arg)
{
	struct gpu_grant *g = arg;
	return exposed ? add_path_rule(g->ruleset_fd, "gpu_devices", path, g->handled, 1, g->reterr)
		       : 0;
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
int add_default_devices(int ruleset_fd, uint64_t handled, const struct denied_set *deny,
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
