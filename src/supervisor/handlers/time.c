/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handlers/time: time_start. The sandbox's wall clock (CLOCK_REALTIME and the clocks that
 * follow it: _COARSE, _ALARM, TAI) is the host's plus a fixed offset, taken when the sandbox
 * starts, so that it reads time_start then and advances at real speed. Monotonic clocks stay
 * real.
 *  - clock_gettime of those clocks, gettimeofday and time are trapped and answered here. Most
 *    programs read the clock through the vDSO without entering the kernel: at the first
 *    set_tid_address or arch_prctl(ARCH_SET_FS) of each program (which glibc's and musl's
 *    start-up make, static or dynamic, before main, and Go's runtime makes the second), the
 *    vDSO's clock_gettime, gettimeofday and time are overwritten in
 *    that process (through /proc/<pid>/mem, which copies the page for it alone) with a real
 *    syscall each, which the filter traps when it reads a wall clock. After execve the new
 *    program's vDSO is patched the same way; a fork inherits the patched copy.
 *  - clock_nanosleep(TIMER_ABSTIME) on a wall clock sleeps here, on a worker, until the host's
 *    time that is the deadline given; timerfd_settime(TFD_TIMER_ABSTIME) of a wall-clock
 *    timerfd is made here on the child's timer with the deadline moved; timer_settime
 *    (TIMER_ABSTIME) of a wall-clock POSIX timer gets its deadline moved in the caller's own
 *    struct, then the kernel's call.
 * None of this confines anything: a program can always read the host's time some other way
 * (a file's mtime, the network). It is for replaying runs.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "fd-util.h"
#include "handlers.h"
#include "macro.h"
#include "net-internal.h"
#include "supervisor/notif.h"
#include "supervisor/supervisor.h"

#define NSEC 1000000000LL

/* The vDSO functions replaced, and what replaces each: mov $nr, %eax; syscall; ret. */
static const struct {
	const char *name;
	int nr;
} vdso_funcs[VTIME_FUNCS] = {
	{ "__vdso_clock_gettime", SYS_clock_gettime },
	{ "__vdso_gettimeofday", SYS_gettimeofday },
	{ "__vdso_time", SYS_time },
};

static void stub(uint8_t out[8], int nr)
{
	out[0] = 0xb8; /* mov $nr, %eax */
	out[1] = (uint8_t)nr;
	out[2] = (uint8_t)(nr >> 8);
	out[3] = out[4] = 0;
	out[5] = 0x0f; /* syscall */
	out[6] = 0x05;
	out[7] = 0xc3; /* ret */
}

/* The offsets of vdso_funcs in the vDSO image (the same in every process of this kernel), from
 * this process's own: its dynamic symbols. 0 for one not there. */
static void vdso_offsets(uintptr_t off[VTIME_FUNCS])
{
	const uint8_t *base = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	memset(off, 0, VTIME_FUNCS * sizeof(*off));
	if (!base)
		return;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(base + eh->e_shoff);
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff);
	uintptr_t load = 0;
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD) {
			load = ph[i].p_vaddr;
			break;
		}
	for (int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_DYNSYM || !sh[i].sh_entsize)
			continue;
		const Elf64_Sym *sym = (const Elf64_Sym *)(base + sh[i].sh_offset);
		const char *str = (const char *)(base + sh[sh[i].sh_link].sh_offset);
		for (size_t k = 0; k < sh[i].sh_size / sh[i].sh_entsize; k++)
			for (int f = 0; f < VTIME_FUNCS; f++)
				if (sym[k].st_value &&
				    strcmp(str + sym[k].st_name, vdso_funcs[f].name) == 0)
					off[f] = sym[k].st_value - load;
	}
}

int vtime_init(struct supervisor *sv, int64_t sec, uint32_t nsec)
{
	struct timespec now;

	if (clock_gettime(CLOCK_REALTIME, &now) < 0)
		return -errno;
	sv->vtime.on = 1;
	sv->vtime.offset_ns = (sec - now.tv_sec) * NSEC + ((int64_t)nsec - now.tv_nsec);
	vdso_offsets(sv->vtime.vdso_off);
	return 0;
}

/* The wall clock @clockid as the sandbox reads it. */
static int vtime_now(struct supervisor *sv, clockid_t clockid, struct timespec *ts)
{
	if (clock_gettime(clockid, ts) < 0)
		return -errno;
	int64_t ns = ts->tv_sec * NSEC + ts->tv_nsec + sv->vtime.offset_ns;
	ts->tv_sec = ns / NSEC;
	ts->tv_nsec = ns % NSEC;
	if (ts->tv_nsec < 0) {
		ts->tv_nsec += NSEC;
		ts->tv_sec--;
	}
	return 0;
}

/* A deadline on the sandbox's wall clock @ts moved to the host's. */
static void to_host(struct supervisor *sv, struct timespec *ts)
{
	int64_t ns = ts->tv_sec * NSEC + ts->tv_nsec - sv->vtime.offset_ns;
	ts->tv_sec = ns / NSEC;
	ts->tv_nsec = ns % NSEC;
	if (ts->tv_nsec < 0) {
		ts->tv_nsec += NSEC;
		ts->tv_sec--;
	}
}

static int is_wall(long clockid)
{
	return clockid == CLOCK_REALTIME || clockid == CLOCK_REALTIME_COARSE ||
	       clockid == CLOCK_REALTIME_ALARM || clockid == CLOCK_TAI;
}

/* set_tid_address, arch_prctl(ARCH_SET_FS): the program's vDSO clock functions made syscalls,
 * once per address space. CONTINUE: the call itself is the kernel's, unchanged (it only records
 * where the thread's id or its TLS lives), and decides nothing. */
int handle_set_tid_address(struct supervisor *sv, const struct seccomp_notif *req,
			   struct seccomp_notif_resp *resp)
{
	char auxv[4096];
	uint64_t base = 0;

	int fd = -1;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%u/auxv", req->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, auxv, sizeof(auxv)) : -1;
	if (fd >= 0)
		close(fd);
	for (ssize_t off = 0; off + 16 <= n; off += 16) {
		uint64_t key, val;
		memcpy(&key, auxv + off, 8);
		memcpy(&val, auxv + off + 8, 8);
		if (key == AT_SYSINFO_EHDR)
			base = val;
	}
	for (int f = 0; base && f < VTIME_FUNCS; f++) {
		uint8_t want[8], have[8];
		if (!sv->vtime.vdso_off[f])
			continue;
		stub(want, vdso_funcs[f].nr);
		uint64_t at = base + sv->vtime.vdso_off[f];
		if (notif_mem_read(sv->listener, req, at, have, sizeof(have)) == 0 &&
		    memcmp(have, want, sizeof(want)) != 0)
			(void)notif_mem_write(sv->listener, req, at, want, sizeof(want));
	}
	notif_answer_continue(resp);
	return 0;
}

/* clock_gettime of a wall clock (the filter traps only those). */
int handle_clock_gettime(struct supervisor *sv, const struct seccomp_notif *req,
			 struct seccomp_notif_resp *resp)
{
	struct timespec ts;
	int r = vtime_now(sv, (clockid_t)(int)req->data.args[0], &ts);
	if (r == 0)
		r = notif_mem_write(sv->listener, req, req->data.args[1], &ts, sizeof(ts));
	if (r < 0)
		return r == -EACCES || r == -EPERM ? -EFAULT : r;
	notif_answer_value(resp, 0);
	return 0;
}

int handle_gettimeofday(struct supervisor *sv, const struct seccomp_notif *req,
			struct seccomp_notif_resp *resp)
{
	struct timespec ts;
	int r = vtime_now(sv, CLOCK_REALTIME, &ts);
	if (r < 0)
		return r;
	if (req->data.args[0]) {
		struct timeval tv = { .tv_sec = ts.tv_sec, .tv_usec = ts.tv_nsec / 1000 };
		r = notif_mem_write(sv->listener, req, req->data.args[0], &tv, sizeof(tv));
	}
	if (r == 0 && req->data.args[1]) {
		struct timezone tz = { 0 };
		struct timeval ignored;
		(void)gettimeofday(&ignored, &tz); /* the kernel's sys_tz */
		r = notif_mem_write(sv->listener, req, req->data.args[1], &tz, sizeof(tz));
	}
	if (r < 0)
		return r == NOTIF_GONE ? r : -EFAULT;
	notif_answer_value(resp, 0);
	return 0;
}

int handle_time(struct supervisor *sv, const struct seccomp_notif *req,
		struct seccomp_notif_resp *resp)
{
	struct timespec ts;
	int r = vtime_now(sv, CLOCK_REALTIME, &ts);
	if (r < 0)
		return r;
	int64_t t = ts.tv_sec;
	if (req->data.args[0] &&
	    (r = notif_mem_write(sv->listener, req, req->data.args[0], &t, sizeof(t))) < 0)
		return r == NOTIF_GONE ? r : -EFAULT;
	notif_answer_value(resp, t);
	return 0;
}

struct sleep_job {
	struct seccomp_notif req;
	clockid_t clockid;
	struct timespec until; /* the host's */
};

static void sleep_worker(int listener, int sock, void *arg)
{
	struct sleep_job *job = arg;

	(void)sock;
	if (listener >= 0 && notif_id_valid(listener, job->req.id)) {
		int r;
		while ((r = clock_nanosleep(job->clockid, TIMER_ABSTIME, &job->until, NULL)) ==
		       EINTR)
			;
		struct seccomp_notif_resp resp = { .id = job->req.id };
		if (r)
			notif_answer_errno(&resp, -r);
		else
			notif_answer_value(&resp, 0);
		(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp); /* ENOENT: gone */
	}
	free(job);
}

/* clock_nanosleep(wall clock, TIMER_ABSTIME, req, rem): the deadline moved to the host's clock
 * and slept on a worker. */
int handle_clock_nanosleep(struct supervisor *sv, const struct seccomp_notif *req,
			   struct seccomp_notif_resp *resp)
{
	struct timespec ts;
	clockid_t clockid = (clockid_t)(int)req->data.args[0];

	(void)resp;
	int r = notif_mem_read(sv->listener, req, req->data.args[2], &ts, sizeof(ts));
	if (r < 0)
		return r == NOTIF_GONE ? r : -EFAULT;
	if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= NSEC)
		return -EINVAL;
	struct sleep_job *job = malloc(sizeof(*job));
	if (!job)
		return -ENOMEM;
	to_host(sv, &ts);
	*job = (struct sleep_job){ .req = *req, .clockid = clockid, .until = ts };
	r = supervisor_run_worker(sv, -1, sleep_worker, job);
	if (r < 0) {
		free(job);
		return r;
	}
	return NOTIF_DEFERRED;
}

/* The clock of the child's timerfd @fd, or of its POSIX timer @timer (fd < 0), from /proc. */
static long clock_of(const struct seccomp_notif *req, int fd, int timer)
{
	char path[64], buf[8192];
	const char *key = fd >= 0 ? "clockid:" : "ClockID:";

	if (fd >= 0)
		snprintf(path, sizeof(path), "/proc/%u/fdinfo/%d", req->pid, fd);
	else
		snprintf(path, sizeof(path), "/proc/%u/timers", req->pid);
	int pfd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = pfd >= 0 ? read(pfd, buf, sizeof(buf) - 1) : -1;
	if (pfd >= 0)
		close(pfd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	const char *p = buf;
	if (fd < 0) { /* "ID: <timer>" starts the timer's lines */
		char id[32];
		snprintf(id, sizeof(id), "ID: %d\n", timer);
		p = strstr(buf, id);
		if (!p)
			return -1;
	}
	p = strstr(p, key);
	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

/* timerfd_settime(fd, TFD_TIMER_ABSTIME, new, old) of a wall-clock timerfd: made here on the
 * child's timer (pidfd_getfd: the same one) with the deadline moved to the host's clock. Of
 * another clock: CONTINUE, the kernel's call as asked, which this handler does not change. */
int handle_timerfd_settime(struct supervisor *sv, const struct seccomp_notif *req,
			   struct seccomp_notif_resp *resp)
{
	struct itimerspec its, old;
	int n = (int)req->data.args[0];

	if (!is_wall(clock_of(req, n, 0))) {
		notif_answer_continue(resp);
		return 0;
	}
	_cleanup_close_ int fd = notif_get_fd(sv->listener, req, n);
	if (fd < 0)
		return fd;
	int r = notif_mem_read(sv->listener, req, req->data.args[2], &its, sizeof(its));
	if (r < 0)
		return r == NOTIF_GONE ? r : -EFAULT;
	if (its.it_value.tv_sec || its.it_value.tv_nsec)
		to_host(sv, &its.it_value);
	if (timerfd_settime(fd, (int)req->data.args[1], &its, &old) < 0)
		return -errno;
	if (req->data.args[3] &&
	    (r = notif_mem_write(sv->listener, req, req->data.args[3], &old, sizeof(old))) < 0)
		return r == NOTIF_GONE ? r : -EFAULT;
	notif_answer_value(resp, 0);
	return 0;
}

/* timer_settime(timer, TIMER_ABSTIME, new, old) of a wall-clock POSIX timer: the deadline in
 * the caller's struct moved to the host's clock, then the kernel's call (CONTINUE: the timer is
 * the caller's own, and whatever the struct holds by then only sets when that timer fires). */
int handle_timer_settime(struct supervisor *sv, const struct seccomp_notif *req,
			 struct seccomp_notif_resp *resp)
{
	struct itimerspec its;

	if (is_wall(clock_of(req, -1, (int)req->data.args[0])) &&
	    notif_mem_read(sv->listener, req, req->data.args[2], &its, sizeof(its)) == 0 &&
	    (its.it_value.tv_sec || its.it_value.tv_nsec)) {
		to_host(sv, &its.it_value);
		(void)notif_mem_write(sv->listener, req, req->data.args[2], &its, sizeof(its));
	}
	notif_answer_continue(resp);
	return 0;
}
