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
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "fd-util.h"
#include "handlers.h"
#include "macro.h"
#include "supervisor/child.h"
#include "supervisor/supervisor.h"
#include "time.h"

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

static void syscall_code(uint8_t out[8], int nr)
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
	/* time_start lies in years 0000..9999: the difference fits in seconds. */
	int64_t s = sec - now.tv_sec, ns = (int64_t)nsec - now.tv_nsec;
	if (ns < 0) {
		ns += NSEC;
		s--;
	}
	sv->vtime.off_sec = s;
	sv->vtime.off_nsec = ns;
	vdso_offsets(sv->vtime.vdso_off);
	return 0;
}

/* @ts (normalized) moved by the offset (@to_host: back), saturating at the ends of time_t. */
static void shift(struct supervisor *sv, struct timespec *ts, int to_host)
{
	int64_t s = sv->vtime.off_sec, ns = sv->vtime.off_nsec, sec;

	if (to_host) { /* minus the offset, normalized */
		s = -s - (ns != 0);
		ns = ns ? NSEC - ns : 0;
	}
	int64_t nsec = ts->tv_nsec + ns;
	int carry = nsec >= NSEC;
	if (carry)
		nsec -= NSEC;
	if (__builtin_add_overflow((int64_t)ts->tv_sec, s, &sec) ||
	    __builtin_add_overflow(sec, (int64_t)carry, &sec)) {
		sec = s > 0 ? INT64_MAX : INT64_MIN;
		nsec = s > 0 ? NSEC - 1 : 0;
	}
	ts->tv_sec = sec;
	ts->tv_nsec = nsec;
}

/* The wall clock @clockid as the sandbox reads it. */
static int vtime_now(struct supervisor *sv, clockid_t clockid, struct timespec *ts)
{
	if (clock_gettime(clockid, ts) < 0)
		return -errno;
	shift(sv, ts, 0);
	return 0;
}

/* A deadline on the sandbox's wall clock @ts moved to the host's; one that lands before 1970
 * is 1970 (it has passed: what fires at once). */
static void to_host(struct supervisor *sv, struct timespec *ts)
{
	shift(sv, ts, 1);
	if (ts->tv_sec < 0) {
		ts->tv_sec = 0;
		ts->tv_nsec = 0;
	}
}

static int ts_valid(const struct timespec *ts)
{
	return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < NSEC;
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
	uint64_t base = 0;

	(void)proc_auxv((pid_t)req->pid, AT_SYSINFO_EHDR, &base); /* none: nothing patched */
	for (int f = 0; base && f < VTIME_FUNCS; f++) {
		uint8_t want[8], have[8];
		if (!sv->vtime.vdso_off[f])
			continue;
		syscall_code(want, vdso_funcs[f].nr);
		uint64_t at = base + sv->vtime.vdso_off[f];
		if (notif_mem_read(sv->listener, req, at, have, sizeof(have)) == 0 &&
		    memcmp(have, want, sizeof(want)) != 0)
			(void)notif_mem_write(sv->listener, req, at, want, sizeof(want));
	}
	return notif_answer_continue(resp);
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

/* On a worker: wait for the host's deadline on a timerfd, and for @sock (a datagram socket of
 * its own, which the pool shuts down when the sandbox ends), checking every second that the
 * caller still waits (a caller killed meanwhile frees the worker). */
static void sleep_worker(int listener, int sock, void *arg)
{
	struct sleep_job *job = arg;
	_cleanup_close_ int tfd = timerfd_create(job->clockid, TFD_CLOEXEC);
	struct itimerspec its = { .it_value = job->until };

	if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
		its.it_value.tv_nsec = 1; /* zero would disarm it: long past */
	int r = tfd < 0 || timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0 ? -errno : 1;
	while (listener >= 0 && r == 1 && notif_id_valid(listener, job->req.id)) {
		struct pollfd p[2] = { { .fd = tfd, .events = POLLIN },
				       { .fd = sock, .events = POLLIN } };
		int n = poll(p, 2, 1000);
		if (n > 0 && p[0].revents)
			r = 0; /* the deadline */
		else if (n > 0 && p[1].revents)
			r = 2; /* the sandbox ends */
	}
	if (listener >= 0 && r <= 0) {
		struct seccomp_notif_resp resp = { .id = job->req.id };
		if (r < 0)
			notif_answer_errno(&resp, r);
		else
			notif_answer_value(&resp, 0);
		(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp); /* ENOENT: gone */
	}
	free(job);
}

/* clock_nanosleep(wall clock, TIMER_ABSTIME, req, rem): the deadline moved to the host's clock
 * and waited for on a worker. */
int handle_clock_nanosleep(struct supervisor *sv, const struct seccomp_notif *req,
			   struct seccomp_notif_resp *resp)
{
	struct timespec ts;
	clockid_t clockid = (clockid_t)(int)req->data.args[0];

	(void)resp;
	int r = notif_mem_read(sv->listener, req, req->data.args[2], &ts, sizeof(ts));
	if (r < 0)
		return r == NOTIF_GONE ? r : -EFAULT;
	if (!ts_valid(&ts))
		return -EINVAL;
	struct sleep_job *job = malloc(sizeof(*job));
	int sock = job ? socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0) : -1;
	if (sock < 0) {
		free(job);
		return job ? -errno : -ENOMEM;
	}
	to_host(sv, &ts);
	*job = (struct sleep_job){ .req = *req, .clockid = clockid, .until = ts };
	r = supervisor_run_worker(sv, sock, sleep_worker, job);
	if (r < 0) {
		close(sock);
		free(job);
		return r;
	}
	return NOTIF_DEFERRED;
}

/* The clock of the child's timerfd @fd (from its fdinfo), or of its POSIX timer @timer (fd < 0,
 * from /proc/<pid>/timers, whose blocks start with "ID: <id>" lines). -1: cannot tell. */
static long clock_of(const struct seccomp_notif *req, int fd, int timer)
{
	char name[32], id[32];
	const char *key = fd >= 0 ? "clockid:" : "ClockID:";
	_cleanup_free_ char *buf = NULL;

	if (fd >= 0)
		snprintf(name, sizeof(name), "fdinfo/%d", fd);
	else
		snprintf(name, sizeof(name), "timers");
	if (proc_read_all((pid_t)req->pid, name, &buf, NULL) < 0)
		return -1;
	const char *p = buf;
	if (fd < 0) {
		int k = snprintf(id, sizeof(id), "ID: %d\n", timer);
		for (p = buf; (p = strstr(p, id)) && p != buf && p[-1] != '\n'; p += k)
			; /* a line that starts with it, not "ClockID: ..." */
		if (!p)
			return -1;
		const char *next = strstr(p + k, "\nID: "); /* the next timer's block */
		const char *c = strstr(p, key);
		return c && (!next || c < next) ? strtol(c + strlen(key), NULL, 10) : -1;
	}
	p = strstr(p, key);
	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

/* A deadline at @addr in the child, on the sandbox's wall clock: moved to the host's in place
 * (the kernel reads it from there when the call goes on), once. A struct that still holds what
 * was written there last (the same deadline passed again, as a wait retried in a loop does) is
 * already the host's. -EFAULT, -EINVAL (not a valid time), NOTIF_GONE, or 0. */
static int move_in_place(struct supervisor *sv, const struct seccomp_notif *req, uint64_t addr)
{
	struct timespec ts;
	int r = notif_mem_read(sv->listener, req, addr, &ts, sizeof(ts));
	if (r < 0)
		return r == NOTIF_GONE ? r : -EFAULT;
	for (unsigned i = 0; i < ELEMENTSOF(sv->vtime.moved); i++)
		if (sv->vtime.moved[i].addr == addr &&
		    sv->vtime.moved[i].host.tv_sec == ts.tv_sec &&
		    sv->vtime.moved[i].host.tv_nsec == ts.tv_nsec)
			return 0;
	if (!ts_valid(&ts))
		return -EINVAL; /* as the kernel answers */
	if (!ts.tv_sec && !ts.tv_nsec)
		return 0; /* zero: disarm, not a time */
	to_host(sv, &ts);
	if (!ts.tv_sec && !ts.tv_nsec)
		ts.tv_nsec = 1; /* long past, still armed */
	r = notif_mem_write(sv->listener, req, addr, &ts, sizeof(ts));
	if (r < 0)
		return r == NOTIF_GONE ? r : -EFAULT;
	struct vtime_moved *m = &sv->vtime.moved[sv->vtime.n_moved++ % ELEMENTSOF(sv->vtime.moved)];
	m->addr = addr;
	m->host = ts;
	return 0;
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
		return notif_answer_continue(resp);
	}
	_cleanup_close_ int fd = notif_get_fd(sv->listener, req, n);
	if (fd < 0)
		return fd;
	int r = notif_mem_read(sv->listener, req, req->data.args[2], &its, sizeof(its));
	if (r < 0)
		return r == NOTIF_GONE ? r : -EFAULT;
	if (!ts_valid(&its.it_value) || !ts_valid(&its.it_interval))
		return -EINVAL;
	if (its.it_value.tv_sec || its.it_value.tv_nsec) {
		to_host(sv, &its.it_value);
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1; /* long past, still armed */
	}
	if (timerfd_settime(fd, (int)req->data.args[1], &its, &old) < 0)
		return -errno;
	if (req->data.args[3] &&
	    (r = notif_mem_write(sv->listener, req, req->data.args[3], &old, sizeof(old))) < 0)
		return r == NOTIF_GONE ? r : -EFAULT;
	notif_answer_value(resp, 0);
	return 0;
}

/* The call's wall-clock deadline at @addr (when @move) moved in place (move_in_place), then the
 * kernel's call. CONTINUE: the timer or the wait is the caller's own, and whatever the struct
 * holds by the time the kernel reads it only sets when that timer fires or that wait gives up;
 * it reaches nothing else. */
static int moved_then_kernel(struct supervisor *sv, const struct seccomp_notif *req,
			     struct seccomp_notif_resp *resp, int move, uint64_t addr)
{
	int r = move ? move_in_place(sv, req, addr) : 0;
	if (r < 0)
		return r;
	return notif_answer_continue(resp);
}

/* timer_settime(timer, TIMER_ABSTIME, new, old) of a wall-clock POSIX timer. */
int handle_timer_settime(struct supervisor *sv, const struct seccomp_notif *req,
			 struct seccomp_notif_resp *resp)
{
	return moved_then_kernel(sv, req, resp, is_wall(clock_of(req, -1, (int)req->data.args[0])),
				 req->data.args[2] + offsetof(struct itimerspec, it_value));
}

/* futex waits with an absolute deadline on the wall clock (FUTEX_WAIT_BITSET,
 * FUTEX_WAIT_REQUEUE_PI, FUTEX_LOCK_PI2 with FUTEX_CLOCK_REALTIME; FUTEX_LOCK_PI always):
 * pthread_cond_timedwait, sem_timedwait, pthread_mutex_timedlock. */
int handle_futex(struct supervisor *sv, const struct seccomp_notif *req,
		 struct seccomp_notif_resp *resp)
{
	int op = (int)req->data.args[1], cmd = op & 0x7f /* FUTEX_CMD_MASK */;
	int absolute = cmd == 6 /* LOCK_PI */ ||
		       ((op & 256 /* FUTEX_CLOCK_REALTIME */) &&
			(cmd == 9 /* WAIT_BITSET */ || cmd == 11 /* WAIT_REQUEUE_PI */ ||
			 cmd == 13 /* LOCK_PI2 */));
	return moved_then_kernel(sv, req, resp, absolute && req->data.args[3], req->data.args[3]);
}

/* mq_timedsend, mq_timedreceive: their deadline is absolute on CLOCK_REALTIME. */
int handle_mq_timed(struct supervisor *sv, const struct seccomp_notif *req,
		    struct seccomp_notif_resp *resp)
{
	return moved_then_kernel(sv, req, resp, req->data.args[4] != 0, req->data.args[4]);
}
